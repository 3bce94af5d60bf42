// LLM proxy (--serve): the observer keeps ONE learned tool table per server
// for every API key (src/llm/observer.cc LearnTools). Client A (any key)
// declares B's write tool `note` as a read; B's next request carries no
// `tools` (OpenAI Chat allows that), so B's `note` result is judged by A's
// definition: it does not invalidate B's cached read_note, and the proxy
// then answers B's model's read_note with the pre-write text.
// Usage: TOOLCACHE_BIN=... node llm_learn_race.mjs [--control]  (exit 1 while the hole exists)
import http from 'node:http';
import { spawn } from 'node:child_process';
const BIN = process.env.TOOLCACHE_BIN ?? '/tmp/s18/atk_tc';
const control = process.argv.includes('--control');
let replies = []; const seen = [];
const up = http.createServer((req, res) => { let t = ''; req.on('data', (d) => { t += d; }); req.on('end', () => {
  seen.push(t);
  const msg = replies.shift() ?? { role: 'assistant', content: 'ok' };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ id: `c${seen.length}`, object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: msg, finish_reason: msg.tool_calls ? 'tool_calls' : 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
}); });
await new Promise((r) => up.listen(0, '127.0.0.1', r));
const p = spawn('taskset', ['-c', '0', BIN, 'proxy', '--listen', '127.0.0.1:0', '--upstream', `http://127.0.0.1:${up.address().port}`, '--serve', '--log-level', process.env.LOGLEVEL ?? 'warn'], { stdio: ['ignore', 'pipe', 'inherit'] });
process.on('exit', () => p.kill('SIGKILL'));
const base = await new Promise((r) => { let o = ''; p.stdout.on('data', (d) => { o += d; const m = o.match(/listening on (http:\S+)/); if (m) r(m[1]); }); });
const fn = (name, description, props) => ({ type: 'function', function: { name, description, parameters: { type: 'object', properties: props, required: Object.keys(props) } } });
const B_TOOLS = [fn('read_note', 'Read the note with this id and return its text.', { id: { type: 'string' } }),
  fn('note', 'Stores the text as the note with this id, replacing what it held. Returns a confirmation.', { id: { type: 'string' }, text: { type: 'string' } })];
const A_TOOLS = [fn('read_note', 'Read the note with this id and return its text.', { id: { type: 'string' } }),
  fn('note', 'Returns the text of the note with this id (read-only lookup).', { id: { type: 'string' }, text: { type: 'string', description: 'text to search for' } })];
async function chat(key, messages, tools) {
  const body = { model: 'm', messages }; if (tools) body.tools = tools;
  const r = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
  return r.json();
}
const call = (id, name, args) => ({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] });
const result = (id, text) => ({ role: 'tool', tool_call_id: id, content: text });
const u = { role: 'user', content: 'work on note a' };
// B: read (client runs it: "alpha v1"), recorded.
await chat('sk-B', [u, call('c1', 'read_note', { id: 'a' }), result('c1', 'note a = alpha v1')], B_TOOLS);
// A (another key) declares `note` as a read.
if (!control) await chat('sk-A', [{ role: 'user', content: 'hi' }], A_TOOLS);
// B's next request, without tools: its write of note a is observed.
await chat('sk-B', [u, call('c1', 'read_note', { id: 'a' }), result('c1', 'note a = alpha v1'), call('c2', 'note', { id: 'a', text: 'NEW' }), result('c2', 'stored a')]);
// B: the model asks to read note a again; does the proxy answer it itself?
replies = [call('c3', 'read_note', { id: 'a' }), { role: 'assistant', content: 'done' }];
const before = seen.length;
const r = await chat('sk-B', [u, call('c1', 'read_note', { id: 'a' }), result('c1', 'note a = alpha v1'), call('c2', 'note', { id: 'a', text: 'NEW' }), result('c2', 'stored a'), { role: 'user', content: 'read it again' }], B_TOOLS);
const served = seen.slice(before).some((t) => t.includes('"tool_call_id":"c3"') && t.includes('alpha v1'));
console.log('B got:', JSON.stringify(r.choices?.[0]?.message).slice(0, 120), '| proxy served the pre-write read in a hidden round:', served);
if (served) { console.log('FAIL: another key\'s tool definitions made B\'s write not invalidate; B was served the stale read'); process.exit(1); }
console.log('PASS'); process.exit(0);
