// attackK finding 3: the LLM proxy's principal ignores the request's query
// string. A gateway that authenticates by a query parameter (Azure API
// Management's `?subscription-key=`, Google's `?key=`) sees two keys; the
// proxy sees one principal (`none`), so with `serve: true` one key's tool
// results are answered to the other's model, and their conversation state,
// offloaded results and prompt-cache bookkeeping are one. The same hole
// was fixed for `mcp --url` in session 18 (the URL's path and query are
// digested); the LLM proxy forwards the query untouched but never keys it.
//
// Real proxy binary, a provider stand-in (recordingUpstream, the Chat
// Completions wire format). Exits 1 while the hole is open.
//
// Usage: TOOLCACHE_BIN=... node tests/security/attackK/proxy_query_credential.mjs
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BIN, recordingUpstream, spawnListening } from '../lib/common.mjs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attackK-query-'));
const config = path.join(tmp, 'toolcache.yaml');
fs.writeFileSync(config, 'tools:\n  get_account: {requestType: INFORMATIONAL, ttlSeconds: 600}\nproxy:\n  serve: true\n');

const tool = { type: 'function', function: { name: 'get_account', description: 'Return the account record',
  parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } } };
const call = { id: 'call_1', type: 'function', function: { name: 'get_account', arguments: '{"id":"me"}' } };
const completion = (message, finish) => ({ id: 'chatcmpl-x', object: 'chat.completion', created: 1, model: 'gpt-test',
  choices: [{ index: 0, message, finish_reason: finish }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
// The model asks for get_account whenever the last message is the user's.
const up = await recordingUpstream((req) => {
  const msgs = req.body.messages ?? [];
  const last = msgs[msgs.length - 1];
  if (last?.role === 'user') return completion({ role: 'assistant', content: null, tool_calls: [call] }, 'tool_calls');
  return completion({ role: 'assistant', content: 'done' }, 'stop');
});
const proxy = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', up.url, '--config', config]);
const post = (key, messages) => fetch(`${proxy.url}/v1/chat/completions?subscription-key=${key}`, {
  method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'gpt-test', tools: [tool], messages }),
}).then((r) => r.json());

let failed = false;
try {
  // Alice (subscription key KA) ran get_account and reports its result.
  const ask = { role: 'user', content: 'show my account' };
  await post('KA-alice', [ask, { role: 'assistant', content: null, tool_calls: [call] },
    { role: 'tool', tool_call_id: 'call_1', content: 'account of alice: IBAN DE00 1234 secret' }]);
  // Bob (key KB) asks; the model calls get_account.
  const before = up.requests.length;
  const answer = await post('KB-bob', [ask]);
  const hidden = up.requests.slice(before).map((r) => JSON.stringify(r.body)).join('\n');
  const leaked = hidden.includes('account of alice');
  console.log('bob got:', JSON.stringify(answer.choices?.[0]?.message),
    leaked ? '(the proxy answered his model with alice\'s result)' : '');
  if (leaked) {
    console.log('FAIL another query key\'s tool result served');
    failed = true;
  } else {
    console.log('ok   query-string keys are separate principals');
  }
} finally {
  await proxy.stop();
  up.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
