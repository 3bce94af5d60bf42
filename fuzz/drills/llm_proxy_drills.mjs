// Fault drills for `toolcache proxy` (the LLM API face), scripted and
// repeatable: the scripted fake provider of tests/llm (and a raw socket
// server for garbage) plays the upstream; plain fetch plays the clients.
//
// Each drill sends requests and sorts every one into
//   answered  200 with a whole, well-formed reply (JSON that parses, or a
//             stream that reaches message_stop), or exactly the bytes the
//             upstream sent (garbage drill);
//   clean     a failure the client can see as one: an HTTP error status
//             with a JSON error body, a refused/reset connection, or a
//             stream cut short before its terminal event;
//   wrong     anything else (a 200 whose JSON does not parse, a body that
//             differs from the upstream's) -- must be 0;
// and checks that the proxy recovers by itself (the next request after the
// fault is answered; time to that answer is reported).
//
// Usage: node fuzz/drills/llm_proxy_drills.mjs --bin BUILD/apps/toolcache/toolcache
// Exits 1 when any request is wrong or the proxy dies or does not recover.
import { spawn } from 'node:child_process';
import net from 'node:net';
import { startFakeUpstream } from '../../tests/llm/fake_upstream.mjs';

const args = process.argv.slice(2);
const bin = args[args.indexOf('--bin') + 1];
if (!bin || args.indexOf('--bin') < 0) {
  console.error('usage: node llm_proxy_drills.mjs --bin TOOLCACHE');
  process.exit(2);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function startProxy(upstreamUrl, extra = []) {
  const child = spawn(bin, ['proxy', '--listen', '127.0.0.1:0', '--upstream', upstreamUrl, ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d) => { log += d; });
  child.exited = new Promise((r) => child.on('exit', (code, sig) => r({ code, sig })));
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/\S+)/);
      if (m) resolve({ child, url: m[1], log: () => log });
    });
    child.on('exit', (code) => reject(new Error(`proxy exited ${code}: ${log}`)));
  });
}

const body = (stream) => JSON.stringify({
  model: 'm', max_tokens: 16, stream,
  messages: [{ role: 'user', content: 'hello' }],
});

// One request; returns 'answered' | 'clean' | 'wrong' and the raw text.
async function call(base, { stream = false, abortAfterFirstChunk = false, expectBytes = null } = {}) {
  const ac = new AbortController();
  let res;
  try {
    res = await fetch(`${base}/v1/messages`, {
      method: 'POST', signal: ac.signal,
      headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
      body: body(stream),
    });
  } catch {
    return { kind: 'clean', why: 'connection failed' };
  }
  let text = '';
  const chunks = [];
  try {
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(Buffer.from(value));
      text = Buffer.concat(chunks).toString('utf8');
      if (abortAfterFirstChunk) {
        ac.abort();
        return { kind: 'clean', why: 'client vanished' };
      }
    }
  } catch {
    // The connection dropped mid-body.
    return { kind: res.status === 200 && !text.includes('message_stop') ? 'clean' : 'wrong', text };
  }
  if (expectBytes !== null) {
    if (Buffer.concat(chunks).equals(expectBytes)) return { kind: 'answered', text };
    if (res.status >= 400 && isJson(text)) return { kind: 'clean', text };
    return { kind: 'wrong', text };
  }
  if (res.status >= 400) return { kind: isJson(text) ? 'clean' : 'wrong', text };
  if (stream) return { kind: text.includes('event: message_stop') ? 'answered' : 'clean', text };
  return { kind: isJson(text) && JSON.parse(text).content ? 'answered' : 'wrong', text };
}
function isJson(t) { try { JSON.parse(t); return true; } catch { return false; } }

const rows = [];
function tally(name, results, extra = '') {
  const n = (k) => results.filter((r) => r.kind === k).length;
  rows.push({ drill: name, sent: results.length, answered: n('answered'), clean: n('clean'), wrong: n('wrong'), extra });
}
// Time until a request through `base` is answered again (recovery).
async function recovery(base, opts = {}) {
  const t0 = Date.now();
  for (let i = 0; i < 100; ++i) {
    const r = await call(base, opts);
    if (r.kind === 'answered') return `recovered in ${Date.now() - t0} ms`;
    await sleep(100);
  }
  return 'NOT RECOVERED';
}

let up = await startFakeUpstream();
const upPort = new URL(up.url).port;
const proxy = await startProxy(up.url);
const base = proxy.url;

// 1. Slow upstream (2 s per reply), 8 concurrent, JSON and streams.
up.load({ turns: Array.from({ length: 8 }, (_, i) => ({ reply: { text: 'slow', delayMs: 2000, eventDelayMs: i % 2 ? 100 : 0 } })) });
tally('slow upstream (2 s)', await Promise.all(Array.from({ length: 8 }, (_, i) => call(base, { stream: i % 2 === 1 }))));

// 2. Upstream errors (500, 429, 529), forwarded as errors.
up.load({ turns: [500, 429, 529, 500].map((status) => ({ reply: { status, error: { type: 'api_error', message: 'boom' } } })) });
tally('upstream 5xx/429', await Promise.all(Array.from({ length: 4 }, () => call(base))));

// 3. Streams cut short by the upstream (connection dropped after 3 events).
up.load({ turns: Array.from({ length: 6 }, () => ({ reply: { text: 'cut', truncateAfterEvents: 3 } })) });
const cut = await Promise.all(Array.from({ length: 6 }, () => call(base, { stream: true })));
up.load({});
tally('upstream closes mid-stream', cut, await recovery(base, { stream: true }));

// 4. Upstream killed mid-call, then back on the same port.
up.load({ turns: Array.from({ length: 6 }, () => ({ reply: { text: 'late', delayMs: 3000 } })) });
const inflight = Array.from({ length: 6 }, () => call(base));
await sleep(500);
await up.close();
const killed = await Promise.all(inflight);
up = await startFakeUpstream({ port: Number(upPort) });
tally('upstream killed mid-call', killed, await recovery(base));

// 5. Clients vanishing mid-stream, then the proxy serves others.
up.load({ turns: Array.from({ length: 6 }, () => ({ reply: { text: 'x'.repeat(50), eventDelayMs: 200 } })) });
const vanished = await Promise.all(Array.from({ length: 6 }, () => call(base, { stream: true, abortAfterFirstChunk: true })));
up.load({});
tally('client vanishes mid-stream', vanished, await recovery(base, { stream: true }));

// 6. Garbage from the upstream: a raw server answering 200 with bytes that
// are not JSON, then one that closes without answering.
const garbage = 'not json {{{\u0000\xff';
let mode = 'garbage';
const raw = net.createServer((sock) => {
  sock.once('data', () => {
    if (mode === 'close') { sock.destroy(); return; }
    const b = Buffer.from(garbage, 'latin1');
    sock.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${b.length}\r\n\r\n`);
    sock.end(b);
  });
});
await new Promise((r) => raw.listen(0, '127.0.0.1', r));
const gproxy = await startProxy(`http://127.0.0.1:${raw.address().port}`);
const garbageResults = await Promise.all(Array.from({ length: 4 }, () =>
  call(gproxy.url, { expectBytes: Buffer.from(garbage, 'latin1') })));
mode = 'close';
const closed = await Promise.all(Array.from({ length: 4 }, () => call(gproxy.url)));
if (process.env.DRILL_DEBUG) console.error(garbageResults[0]);
tally('upstream sends garbage', garbageResults);
tally('upstream closes without reply', closed);
gproxy.child.kill('SIGTERM');
raw.close();

// 7. SIGTERM under load: 10 requests in flight (1.5 s replies).
up.load({ turns: Array.from({ length: 10 }, () => ({ reply: { text: 'bye', delayMs: 1500 } })) });
const load = Array.from({ length: 10 }, () => call(base));
await sleep(300);
const t0 = Date.now();
proxy.child.kill('SIGTERM');
const underLoad = await Promise.all(load);
const exit = await Promise.race([proxy.child.exited, sleep(15000).then(() => ({ code: 'timeout' }))]);
tally('SIGTERM under load', underLoad, `exit ${exit.code ?? exit.sig} after ${Date.now() - t0} ms`);
await up.close();

console.log('drill'.padEnd(32), 'sent', 'answered', 'clean', 'wrong', ' notes');
for (const r of rows) {
  console.log(r.drill.padEnd(32), String(r.sent).padStart(4), String(r.answered).padStart(8),
    String(r.clean).padStart(5), String(r.wrong).padStart(5), ' ' + r.extra);
}
const bad = rows.some((r) => r.wrong > 0 || r.extra.includes('NOT RECOVERED')) || exit.code !== 0;
process.exit(bad ? 1 : 0);
