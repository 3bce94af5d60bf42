// Security group "scope_conversation" (issue 27, item 3): the LLM proxy's
// saved hidden turns belong to the conversation they continue. Agent A
// (system prompt A) has a Read served in a hidden round and ends with a
// reply; agent B (another system prompt, the same API key) sends the same
// visible messages; B's next request must reach the upstream without A's
// hidden read. Anthropic Messages (same final text) and Chat Completions
// (an upstream that numbers every call call_0). A's own next request still
// gets its hidden turn back (positive control), and `proxy.scope: global`
// does not make conversation state global.
// Real proxy binary; the provider is tests/llm/fake_upstream.mjs.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { BIN, SRC, startFakeUpstream, spawnListening } from './lib/common.mjs';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tc-scope-conv-'));

const readTool = { name: 'Read', description: 'Reads a file.',
  input_schema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] } };
const chatRead = { type: 'function', function: { name: 'Read', description: 'Reads a file.',
  parameters: readTool.input_schema } };
const chatWrite = { type: 'function', function: { name: 'Write', description: 'Writes a file.',
  parameters: { type: 'object', properties: { file_path: { type: 'string' } } } } };
const A_FILE = { file_path: '/w/alice-private.txt' };
const SECRET = 'alice private notes 9d2f';

async function post(base, route, body, key) {
  // One workspace for both agents (Session 16: a client tool is served only
  // to a named or recognised workspace; this case is about conversations).
  const headers = { 'content-type': 'application/json', 'x-toolcache-workspace': 'one-shared-folder' };
  if (route === '/v1/messages') { headers['x-api-key'] = key; headers['anthropic-version'] = '2023-06-01'; } else headers.authorization = `Bearer ${key}`;
  const r = await fetch(base + route, { method: 'POST', headers, body: JSON.stringify(body) });
  const j = await r.json();
  assert.equal(r.status, 200, JSON.stringify(j));
  return j;
}
const mentionsA = (req) => JSON.stringify(req.body).includes(SECRET) || JSON.stringify(req.body).includes('alice-private');

async function withProxy(up, yaml, fn) {
  const cfg = path.join(tmp, `c${Math.random().toString(36).slice(2)}.yaml`);
  fs.writeFileSync(cfg, yaml);
  const proxy = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', up.url, '--config', cfg]);
  try { return await fn(proxy.url); } finally { await proxy.stop(); }
}

const cases = [];
const test = (name, fn) => cases.push({ name, fn });

for (const scopeMode of ['credential', 'global']) {
  test(`anthropic (proxy.scope: ${scopeMode}): B never receives A's hidden read`, async () => {
    const up = await startFakeUpstream();
    try {
      up.load({ turns: [
        { reply: { toolCalls: [{ id: 'toolu_p', name: 'Read', input: A_FILE }] } },  // P1 (priming)
        { reply: { text: 'Primed.' } },                                              // P2
        { reply: { toolCalls: [{ id: 'toolu_a1', name: 'Read', input: A_FILE }] } }, // A1: served
        { reply: { text: 'Done.' } },                                                // A1 hidden round
        { reply: { text: 'Done.' } },                                                // B1
        { reply: { text: 'Bye B.' } },                                               // B2
        { reply: { text: 'Bye A.' } },                                               // A2
      ] });
      await withProxy(up, `proxy:\n  serve: [Read]\n  scope: ${scopeMode}\n`, async (base) => {
        const key = 'sk-ant-same-key';
        const req = (system, messages) => ({ model: 'claude-test', max_tokens: 50, system, tools: [readTool], messages });
        // Priming: the client runs the Read once (the cache records it).
        const p1 = await post(base, '/v1/messages', req('P', [{ role: 'user', content: 'Prime.' }]), key);
        await post(base, '/v1/messages', req('P', [{ role: 'user', content: 'Prime.' },
          { role: 'assistant', content: p1.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_p', content: SECRET }] }]), key);
        // A: the read is served in a hidden round; A sees "Done.".
        const a1 = await post(base, '/v1/messages', req('You are agent A.', [{ role: 'user', content: 'Start.' }]), key);
        assert.equal(a1.content[0].text, 'Done.');
        assert.equal(up.requests.length, 4, 'A1 took a hidden round');
        assert.ok(mentionsA(up.requests[3]), 'the hidden round carried the served read');
        // B: another system prompt, the same visible turns.
        const b1 = await post(base, '/v1/messages', req('You are agent B.', [{ role: 'user', content: 'Start.' }]), key);
        assert.equal(b1.content[0].text, 'Done.');
        await post(base, '/v1/messages', req('You are agent B.', [{ role: 'user', content: 'Start.' },
          { role: 'assistant', content: b1.content }, { role: 'user', content: 'Next.' }]), key);
        const b2 = up.requests[5];
        console.log(`  B2 upstream messages: ${b2.body.messages.length}, mentions A's read: ${mentionsA(b2)}`);
        assert.equal(b2.body.messages.length, 3, "B's request reached the upstream as B sent it");
        assert.ok(!mentionsA(b2), "A's hidden read is not spliced into B");
        // A itself gets its hidden turn back.
        await post(base, '/v1/messages', req('You are agent A.', [{ role: 'user', content: 'Start.' },
          { role: 'assistant', content: a1.content }, { role: 'user', content: 'Next.' }]), key);
        const a2 = up.requests[6];
        assert.equal(a2.body.messages.length, 5, 'A2 has its hidden turn spliced back');
        assert.ok(mentionsA(a2));
        // Another API key with A's exact conversation gets nothing of A's.
        up.load({ turns: [{ reply: { text: 'Bye C.' } }] });
        await post(base, '/v1/messages', req('You are agent A.', [{ role: 'user', content: 'Start.' },
          { role: 'assistant', content: a1.content }, { role: 'user', content: 'Next.' }]), 'sk-ant-other-key');
        const c = up.requests.at(-1);
        assert.equal(c.body.messages.length, 3, "another key's request is forwarded as sent");
        assert.ok(!mentionsA(c), "another key never receives A's hidden turn");
      });
    } finally {
      await up.close();
    }
  });
}

test('chat completions, ids reused (call_0): B never receives A\'s hidden read', async () => {
  const up = await startFakeUpstream();
  try {
    up.load({ turns: [
      { reply: { toolCalls: [{ id: 'call_0', name: 'Read', input: A_FILE }] } },        // P1
      { reply: { text: 'Primed.' } },                                                   // P2
      { reply: { toolCalls: [{ id: 'call_0', name: 'Read', input: A_FILE }] } },        // A1: served
      { reply: { toolCalls: [{ id: 'call_0', name: 'Write', input: { file_path: '/w/x' } }] } },  // A1 hidden round
      { reply: { toolCalls: [{ id: 'call_0', name: 'Write', input: { file_path: '/w/x' } }] } },  // B1
      { reply: { text: 'Bye B.' } },                                                    // B2
    ] });
    await withProxy(up, 'proxy:\n  serve: [Read]\n', async (base) => {
      const key = 'sk-same-key';
      const route = '/v1/chat/completions';
      const req = (messages) => ({ model: 'gpt-test', tools: [chatRead, chatWrite], messages });
      const p1 = await post(base, route, req([{ role: 'user', content: 'Prime.' }]), key);
      await post(base, route, req([{ role: 'user', content: 'Prime.' }, p1.choices[0].message,
        { role: 'tool', tool_call_id: 'call_0', content: SECRET }]), key);
      // The same two messages before "Start." in both conversations: only
      // the system prompts differ.
      const history = (system) => [{ role: 'system', content: system }, { role: 'user', content: 'Hi.' },
        { role: 'assistant', content: 'Hello.' }, { role: 'user', content: 'Start.' }];
      const a1 = await post(base, route, req(history('You are agent A.')), key);
      assert.equal(a1.choices[0].message.tool_calls[0].function.name, 'Write');
      assert.equal(up.requests.length, 4, 'A1 took a hidden round');
      const b1 = await post(base, route, req(history('You are agent B.')), key);
      assert.equal(b1.choices[0].message.tool_calls[0].id, 'call_0');
      await post(base, route, req([...history('You are agent B.'), b1.choices[0].message,
        { role: 'tool', tool_call_id: 'call_0', content: 'ok' }]), key);
      const b2 = up.requests[5];
      console.log(`  B2 upstream messages: ${b2.body.messages.length}, mentions A's read: ${mentionsA(b2)}`);
      assert.equal(b2.body.messages.length, 6, "B's request reached the upstream as B sent it");
      assert.ok(!mentionsA(b2), "A's hidden read is not spliced into B");
    });
  } finally {
    await up.close();
  }
});

let failed = 0;
for (const c of cases) {
  try {
    await c.fn();
    console.log(`ok   scope_conversation: ${c.name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL scope_conversation: ${c.name}: ${e.stack || e}`);
  }
}
fs.rmSync(tmp, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
