// The LLM proxy's principal digests x-api-key, authorization, api-key,
// openai-organization, openai-project only (src/llm/proxy.cc CredentialOf).
// Behind an AI gateway whose stored provider keys are reached with the
// gateway's own header (Cloudflare AI Gateway `cf-aig-authorization`,
// Portkey `x-portkey-api-key` + virtual key, Google `x-goog-api-key`), every
// user is the principal "none": bob's model's call is answered (--serve)
// with alice's recorded result.
// Usage: TOOLCACHE_BIN=... node llm_gateway_header.mjs [HEADER]  (exit 1 while the hole exists)
import http from 'node:http';
import { spawn } from 'node:child_process';
const BIN = process.env.TOOLCACHE_BIN ?? '/tmp/s18/atk_tc';
const HEADER = process.argv[2] ?? 'cf-aig-authorization';
let replies = []; const seen = [];
const up = http.createServer((req, res) => { let t = ''; req.on('data', (d) => { t += d; }); req.on('end', () => {
  seen.push(t);
  const msg = replies.shift() ?? { role: 'assistant', content: 'ok' };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ id: `c${seen.length}`, object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: msg, finish_reason: msg.tool_calls ? 'tool_calls' : 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
}); });
await new Promise((r) => up.listen(0, '127.0.0.1', r));
const p = spawn('taskset', ['-c', '0', BIN, 'proxy', '--listen', '127.0.0.1:0', '--upstream', `http://127.0.0.1:${up.address().port}`, '--serve', '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'inherit'] });
process.on('exit', () => p.kill('SIGKILL'));
const base = await new Promise((r) => { let o = ''; p.stdout.on('data', (d) => { o += d; const m = o.match(/listening on (http:\S+)/); if (m) r(m[1]); }); });
const tools = [{ type: 'function', function: { name: 'get_account_summary', description: 'Get the summary of the account', parameters: { type: 'object', properties: {} } } }];
async function chat(user, messages) {
  const r = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', [HEADER]: `Bearer gw-token-${user}` }, body: JSON.stringify({ model: 'm', messages, tools }) });
  return r.json();
}
const call = (id) => ({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'get_account_summary', arguments: '{}' } }] });
const u = { role: 'user', content: 'summarize my account' };
await chat('alice', [u, call('a1'), { role: 'tool', tool_call_id: 'a1', content: 'ALICE: balance 1,234,567 USD' }]);
replies = [call('b1'), { role: 'assistant', content: 'done' }];
const before = seen.length;
await chat('bob', [u]);
const leaked = seen.slice(before).some((t) => t.includes('ALICE: balance'));
console.log(`${HEADER}: bob's request carried alice's result to the model: ${leaked}`);
if (leaked) { console.log('FAIL: two gateway users are one principal'); process.exit(1); }
console.log('PASS'); process.exit(0);
