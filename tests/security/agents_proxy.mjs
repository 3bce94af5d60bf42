// Attacks on `toolcache proxy` through a coding agent's traffic (issue 28):
// a client stub that would poison the cache, a shell command that hides a
// write inside a read, an invisible custom tool call, a WebSocket upgrade.
// Each case prints what it saw; the process exits non-zero naming the
// first case that failed. Run by tests/e2e_security.sh.
import { spawn } from 'node:child_process';
import { killOnExit } from '../support/kill_on_exit.mjs';
import net from 'node:net';

import { BIN, startFakeUpstream } from './lib/common.mjs';

const up = await startFakeUpstream();
up.load({ fallbackText: 'ok', turns: [] });
const proxy = killOnExit(spawn(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', up.url, '--serve'],
  { stdio: ['ignore', 'pipe', 'pipe'] }));
let log = '';
proxy.stderr.on('data', (d) => { log += d; });
const base = await new Promise((resolve, reject) => {
  proxy.stdout.on('data', (d) => {
    const m = String(d).match(/listening on (http:\S+)/);
    if (m) resolve(m[1]);
  });
  proxy.on('exit', (c) => reject(new Error(`proxy exited ${c}: ${log}`)));
});

let failed = null;
function check(name, ok, saw) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}: ${saw}`);
  if (!ok && !failed) failed = name;
}

const key = 'sk-ant-security-agents';
async function messages(msgs, headers = {}) {
  const r = await fetch(`${base}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01', ...headers },
    body: JSON.stringify({ model: 'm', max_tokens: 10, messages: msgs,
      tools: [{ name: 'Read', input_schema: { type: 'object' } }, { name: 'Bash', input_schema: { type: 'object' } }] }),
  });
  await r.text();
  return r;
}
const use = (id, name, input) => ({ role: 'assistant', content: [{ type: 'tool_use', id, name, input }] });
const result = (id, content) => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content }] });
// One turn: the model asks for (name, input) with id; the client answers.
async function turn(id, name, input, content) {
  up.load({ fallbackText: 'ok', turns: [{ reply: { text: 'x', toolCalls: [{ id, name, input }] } }] });
  const asked = await messages([{ role: 'user', content: 'go' }]);
  const answered = await messages([{ role: 'user', content: 'go' }, use(id, name, input), result(id, content)]);
  return { wouldHit: Number(asked.headers.get('x-toolcache-would-hit')), recorded: Number(answered.headers.get('x-toolcache-recorded')) };
}
async function stats() {
  const s = await (await fetch(`${base}/toolcache/stats`)).json();
  return (name, labels) => (s.metrics[name]?.series ?? [])
    .filter((x) => Object.entries(labels).every(([k, v]) => x.labels[k] === v))
    .reduce((n, x) => n + x.value, 0);
}

try {
  // 1. A client's "unchanged" stub never replaces the real content.
  const file = { file_path: '/w/secret-plan.txt' };
  await turn('t1', 'Read', file, '     1\tthe real content');
  const stub = await turn('t2', 'Read', file,
    'File unchanged since last read. The content from the earlier Read tool_result in this conversation is still current \u2014 refer to that instead of re-reading.');
  let count = await stats();
  check('client stub is not recorded', stub.wouldHit === 1 && stub.recorded === 0 &&
    count('toolcache_llm_tool_results_total', { tool: 'Read', outcome: 'client_marker' }) === 1 &&
    count('toolcache_llm_tool_results_total', { tool: 'Read', outcome: 'stale' }) === 0,
  `would-hit ${stub.wouldHit}, recorded ${stub.recorded}`);
  // 2. A write hidden in a "read" shell command invalidates.
  const hidden = await turn('t3', 'Bash', { command: 'cat $(rm -rf /w) a.txt' }, 'x');
  const after = await turn('t4', 'Read', file, '     1\tthe real content');
  check('substitution inside cat is a write (invalidates)', after.wouldHit === 0,
    `Read would-hit after the command: ${after.wouldHit} (command recorded ${hidden.recorded})`);
  // 3. A read-only shell command would hit and does not invalidate.
  await turn('t5', 'Bash', { command: 'git status', description: 'Show status' }, 'clean');
  const again = await turn('t6', 'Bash', { command: 'git status', description: 'Check the tree' }, 'clean');
  const read = await turn('t7', 'Read', file, '     1\tthe real content');
  check('read-only shell command would hit, invalidates nothing', again.wouldHit === 1 && read.wouldHit === 1,
    `git status would-hit ${again.wouldHit}, Read would-hit ${read.wouldHit}`);
  // 4. The agent's Read is never served under --serve (the client runs it).
  count = await stats();
  check('client-local Read never served', count('toolcache_llm_served_total', {}) === 0,
    `served ${count('toolcache_llm_served_total', {})}`);
  // 5. A WebSocket upgrade is refused at once with 426; nothing upstream.
  const before = up.requests.length;
  const raw = await new Promise((resolve) => {
    const u = new URL(base);
    const s = net.connect(Number(u.port), u.hostname, () => s.write(
      'GET /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
      'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: Bearer sk-x\r\n\r\n'));
    let data = '';
    s.on('data', (d) => { data += d; });
    s.on('end', () => resolve(data));
    s.on('error', () => resolve(data));
    setTimeout(() => { s.destroy(); resolve(data); }, 3000);
  });
  check('WebSocket upgrade refused with 426, not forwarded',
    /^HTTP\/1\.1 426 /.test(raw) && up.requests.length === before && !/101 Switching/.test(raw),
    raw.split('\r\n')[0]);
  // 6. Another upgrade offer (curl --http2 on http:// sends h2c) is a
  // hop-by-hop offer: dropped, the request forwarded as before.
  const before2 = up.requests.length;
  const raw2 = await new Promise((resolve) => {
    const u = new URL(base);
    const s = net.connect(Number(u.port), u.hostname, () => s.write(
      'GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade, HTTP2-Settings, close\r\n' +
      'Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\nAuthorization: Bearer sk-x\r\n\r\n'));
    let data = '';
    s.on('data', (d) => { data += d; });
    s.on('end', () => resolve(data));
    s.on('error', () => resolve(data));
    setTimeout(() => { s.destroy(); resolve(data); }, 3000);
  });
  check('h2c upgrade offer dropped, request forwarded',
    /^HTTP\/1\.1 /.test(raw2) && !/^HTTP\/1\.1 426 /.test(raw2) && up.requests.length === before2 + 1,
    `${raw2.split('\r\n')[0]}, upstream saw ${up.requests.length - before2}`);
} catch (e) {
  console.log(`FAIL exception: ${e.stack}`);
  failed = failed ?? 'exception';
} finally {
  proxy.kill('SIGTERM');
  await up.close();
}
if (log.includes(key)) { console.log('FAIL credential in log'); failed = failed ?? 'credential in log'; }
if (failed) {
  console.log(`agents_proxy: failed: ${failed}`);
  process.exit(1);
}
console.log('agents_proxy: all cases passed');
