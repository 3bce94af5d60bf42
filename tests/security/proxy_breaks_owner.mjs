// Security group "proxy_breaks_owner" (session 18): `GET /toolcache/breaks`
// on the LLM proxy listed every principal's prompt-cache breaks to anyone
// who could reach it, with no credential: conversation ids, models, turn
// numbers and the tool names added or removed (what another user's agent is
// doing). Now a caller presenting a key (x-api-key or authorization: Bearer,
// one key in either header) sees only its key's conversations, and a
// caller without one only counts. Real proxy binary; the provider is a small
// upstream whose usage numbers make turn 3 of each conversation a break.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { BIN, caseRunner, recordingUpstream, spawnListening } from './lib/common.mjs';

// Turn 1 writes 20,000 tokens, turn 2 reads them, turn 3 reads none.
const usage = [
  { input_tokens: 10, cache_read_input_tokens: 0, cache_creation_input_tokens: 20000 },
  { input_tokens: 10, cache_read_input_tokens: 20000, cache_creation_input_tokens: 500 },
  { input_tokens: 10, cache_read_input_tokens: 0, cache_creation_input_tokens: 20000 },
];
const upstream = await recordingUpstream((req) => ({
  id: 'msg_1', type: 'message', role: 'assistant', model: req.body.model,
  content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn',
  usage: usage[req.body.messages.length >> 1],
}));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tc-breaks-'));
const cfg = path.join(dir, 'c.yaml');
fs.writeFileSync(cfg, 'promptCache:\n  detectBreaks: true\n');
const proxy = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', upstream.url,
  '--config', cfg, '--no-cache']);

// A three-turn conversation under `key`; turn 3 adds the tool `secretTool`.
async function converse(who, headers) {
  const tool = (name) => ({ name, description: `${name} tool`, input_schema: { type: 'object' } });
  const messages = [{ role: 'user', content: `hello from ${who}` }];
  for (let turn = 0; turn < 3; turn++) {
    const tools = turn === 2 ? [tool('Read'), tool(`${who}SecretTool`)] : [tool('Read')];
    const r = await fetch(`${proxy.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
      body: JSON.stringify({ model: `${who}-model`, max_tokens: 8, tools, messages }),
    });
    assert.equal(r.status, 200, await r.text());
    messages.push({ role: 'assistant', content: 'ok' }, { role: 'user', content: `turn ${turn + 2}` });
  }
}
const breaks = async (headers = {}) => {
  const r = await fetch(`${proxy.url}/toolcache/breaks`, { headers });
  assert.equal(r.status, 200);
  return { text: await r.clone().text(), json: await r.json() };
};

const { step, finish } = caseRunner('proxy_breaks_owner');
try {
  await converse('alice', { 'x-api-key': 'sk-alice' });
  await converse('bob', { authorization: 'Bearer sk-bob' });
  await step('each key sees only its own breaks', async () => {
    const a = await breaks({ 'x-api-key': 'sk-alice' });
    assert.deepEqual(a.json.breaks?.map((b) => b.model), ['alice-model'], a.text);
    assert.doesNotMatch(a.text, /bob/);
    const b = await breaks({ 'x-api-key': 'sk-bob' });
    assert.deepEqual(b.json.breaks?.map((x) => x.model), ['bob-model'], b.text);
    assert.doesNotMatch(b.text, /alice/);
  });
  await step('one key in either header is one principal', async () => {
    const a = await breaks({ authorization: 'Bearer sk-alice' });
    assert.deepEqual(a.json.breaks?.map((b) => b.label), ['tools:added aliceSecretTool'], a.text);
    const b = await breaks({ authorization: 'Bearer sk-bob', 'anthropic-version': '2023-06-01' });
    assert.deepEqual(b.json.breaks?.map((x) => x.label), ['tools:added bobSecretTool'], b.text);
  });
  await step('another key sees no one\'s breaks', async () => {
    const e = await breaks({ 'x-api-key': 'sk-eve' });
    assert.deepEqual(e.json.breaks, [], e.text);
  });
  await step('no key: counts only, no id, model or tool name', async () => {
    const n = await breaks();
    assert.equal(n.json.breaks, undefined, n.text);
    assert.equal(n.json.totalBreaks, 2, n.text);
    assert.doesNotMatch(n.text, /alice|bob|SecretTool|[0-9a-f]{16}/);
  });
} finally {
  await proxy.stop();
  upstream.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
finish();
