// Security group "serve_state_workspace" (session 17): with `--serve` the
// LLM proxy stores a served request's hidden turns (the tool calls it
// answered and their results) and splices them back into the
// conversation's next request, keyed by the API, the scope and the whole
// prefix they continue plus the visible assistant message that follows
// them (docs/PROXY_SERVE.md "History splicing"). The scope was the API key
// alone. Two containers under one key (a CI fleet: same prompt, same
// folder, same tools) have byte-identical prefixes, and a short final
// answer ("Done.") is the same text in both: container A's next request
// was spliced container B's hidden turn, B's `/workspace/.env` read from
// B's workspace, and A's model read B's secret. The hidden turns hold the
// results of client tools, which belong to the client's workspace
// (session 16). Real proxy binary; the provider is a scripted upstream
// here (Anthropic Messages JSON), so each reply is exact.
import assert from 'node:assert/strict';

import { BIN, caseRunner, recordingUpstream, spawnListening } from './lib/common.mjs';

let replies = [];
const upstream = await recordingUpstream(() => {
  const content = replies.shift() ?? [{ type: 'text', text: 'ok' }];
  return {
    id: `msg_${upstream.requests.length}`, type: 'message', role: 'assistant', model: 'claude-test', content,
    stop_reason: content.some((c) => c.type === 'tool_use') ? 'tool_use' : 'end_turn', stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5 },
  };
});
// The request bodies the provider got.
const sentSince = (from) => JSON.stringify(upstream.requests.slice(from).map((q) => q.body));
const proxy = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', upstream.url, '--serve']);

const tools = [{ name: 'mcp__fs__read_text_file', description: 'Read the complete contents of a file as text.',
  input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }];
const read = (id) => ({ type: 'tool_use', id, name: 'mcp__fs__read_text_file', input: { path: '/workspace/.env' } });
const done = [{ type: 'text', text: 'Done.' }];
async function post(workspace, messages) {
  const r = await fetch(`${proxy.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-fleet-key', 'anthropic-version': '2023-06-01',
      'x-toolcache-workspace': workspace },
    body: JSON.stringify({ model: 'claude-test', max_tokens: 64, system: 'You are a CI agent in /workspace.', tools, messages }),
  });
  assert.equal(r.status, 200);
  return r.json();
}
const ask = { role: 'user', content: 'check the environment file' };

const { step, finish } = caseRunner('serve_state_workspace');
try {
  // Container B reads its .env (its client runs the read: recorded in B).
  replies = [[read('toolu_b1')], done];
  const b1 = await post('container-B', [ask]);
  assert.equal(b1.content[0].type, 'tool_use');
  await post('container-B', [ask, { role: 'assistant', content: b1.content },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_b1', content: 'SECRET_OF_B=1' }] }]);
  // A new conversation in B: the same read is served from B's entry in a
  // hidden round; the client sees "Done." (its hidden turns are stored).
  replies = [[read('toolu_b2')], done];
  const b3 = await post('container-B', [ask]);
  assert.equal(b3.content[0].text, 'Done.');
  assert.ok(sentSince(upstream.requests.length - 1).includes('SECRET_OF_B'), 'B\'s read was served in B (the setup)');
  // Container A, same key, same prompt: the model answers "Done." at once;
  // A's next request continues that history.
  replies = [done, [{ type: 'text', text: 'ok' }]];
  const a1 = await post('container-A', [ask]);
  assert.equal(a1.content[0].text, 'Done.');
  const from = upstream.requests.length;
  await post('container-A', [ask, { role: 'assistant', content: a1.content }, { role: 'user', content: 'and now?' }]);
  await step('another workspace\'s hidden turns are never spliced', async () => {
    assert.ok(!sentSince(from).includes('SECRET_OF_B'), 'container A\'s request was spliced container B\'s hidden turn (B\'s .env)');
  });
  // B's own conversation still gets its hidden turns back.
  const fromB = upstream.requests.length;
  replies = [[{ type: 'text', text: 'ok' }]];
  await post('container-B', [ask, { role: 'assistant', content: b3.content }, { role: 'user', content: 'and now?' }]);
  await step('the workspace\'s own hidden turns are spliced', async () => {
    assert.ok(sentSince(fromB).includes('SECRET_OF_B'), 'B\'s own hidden turn was not spliced back');
  });
} finally {
  await proxy.stop();
  upstream.close();
}
finish();
