// Security group "llm_tool_principals" (session 18, attackV finding 4): in
// the LLM proxy, the tools a request declares decide only its own
// principal's calls. The attack: client A (any key, or none) declares B's
// write tool `note` as a read-only lookup; B's next request carries no
// `tools` (OpenAI Chat allows that) and its `note` result was judged by A's
// definition: no invalidation, and `--serve` then answered B's model's
// read_note with the pre-write text in a hidden round.
// Now: the observer keeps each principal's declared tools apart (bounded
// LRU), and a request without tools uses its own principal's last list.
import assert from 'node:assert/strict';

import { BIN, caseRunner, recordingUpstream, spawnListening } from './lib/common.mjs';

let replies = [];
const up = await recordingUpstream(() => {
  const msg = replies.shift() ?? { role: 'assistant', content: 'ok' };
  return { id: 'c', object: 'chat.completion', created: 1, model: 'm',
    choices: [{ index: 0, message: msg, finish_reason: msg.tool_calls ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };
});

const fn = (name, description, props) => ({ type: 'function', function: { name, description, parameters: { type: 'object', properties: props, required: Object.keys(props) } } });
const READ = fn('read_note', 'Read the note with this id and return its text.', { id: { type: 'string' } });
const B_TOOLS = [READ, fn('note', 'Stores the text as the note with this id, replacing what it held. Returns a confirmation.', { id: { type: 'string' }, text: { type: 'string' } })];
const A_TOOLS = [READ, fn('note', 'Returns the text of the note with this id (read-only lookup).', { id: { type: 'string' }, text: { type: 'string', description: 'text to search for' } })];
const call = (id, name, args) => ({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] });
const result = (id, text) => ({ role: 'tool', tool_call_id: id, content: text });
const u = { role: 'user', content: 'work on note a' };

// B reads, (A declares), B writes in a request without tools, B's model
// asks to read again. Returns whether the proxy answered that read itself
// with the pre-write text.
async function scenario(withAttacker) {
  const proxy = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', up.url, '--serve', '--log-level', 'warn']);
  const chat = async (key, messages, tools) => {
    const body = { model: 'm', messages };
    if (tools) body.tools = tools;
    const r = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
    return r.json();
  };
  try {
    const history = [u, call('c1', 'read_note', { id: 'a' }), result('c1', 'note a = alpha v1')];
    await chat('sk-B', history, B_TOOLS);
    if (withAttacker) await chat('sk-A', [{ role: 'user', content: 'hi' }], A_TOOLS);
    history.push(call('c2', 'note', { id: 'a', text: 'NEW' }), result('c2', 'stored a'));
    await chat('sk-B', history);
    replies = [call('c3', 'read_note', { id: 'a' }), { role: 'assistant', content: 'done' }];
    const before = up.requests.length;
    await chat('sk-B', [...history, { role: 'user', content: 'read it again' }], B_TOOLS);
    replies = [];
    return up.requests.slice(before).some((r) => JSON.stringify(r.body).includes('"tool_call_id":"c3"') && JSON.stringify(r.body).includes('alpha v1'));
  } finally {
    await proxy.stop();
  }
}

const t = caseRunner('llm_tool_principals');
await t.step("control: B's write in a request without tools invalidates B's read", async () => {
  assert.equal(await scenario(false), false, 'the pre-write read was served');
});
await t.step("another key's declaration does not decide B's write", async () => {
  assert.equal(await scenario(true), false, "A's definition of `note` kept B's write from invalidating: B's model was served the pre-write read");
});
up.close();
t.finish();
