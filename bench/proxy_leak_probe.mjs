// Does `toolcache proxy` keep anything per failed request? N rounds of each
// failure (a client leaving while backpressure pauses the upstream call, a
// client leaving while the upstream hangs mid-body, an upstream dropping
// mid-body, a plain answer) on a pass-through route, then optionally
// INFLIGHT streams left in flight, then SIGTERM with a DRAIN s drain
// (default 5); on an ASan build LeakSanitizer's summary (the proxy's
// stderr) says what stayed behind. Session 16, docs/SECURITY.md.
//
//   ASAN_OPTIONS=detect_leaks=1 TOOLCACHE_BIN=build-asan/apps/toolcache/toolcache \
//     node bench/proxy_leak_probe.mjs 15 all
//   DRAIN=0.2 INFLIGHT=4 TOOLCACHE_BIN=... node bench/proxy_leak_probe.mjs 0 none
import http from 'node:http';
import net from 'node:net';
import { spawn } from 'node:child_process';
const BIN = process.env.TOOLCACHE_BIN;
const N = Number(process.argv[2] ?? 5);
const only = process.argv[3] ?? 'all';
const big = Buffer.alloc(65536, 'x');
const up = http.createServer((req, res) => {
  const mode = req.url.split('/')[2];
  if (mode === 'cut') {  // a head and some body, then the connection drops
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '1000000' });
    res.write(big, () => setTimeout(() => res.socket.destroy(), 50));
  } else if (mode === 'flood') {  // more than the client reads
    res.writeHead(200, { 'content-type': 'text/plain' });
    const pump = () => { while (res.write(big)) {} };
    res.on('drain', pump); pump();
    req.on('close', () => res.destroy());
  } else if (mode === 'hang') {  // head, then nothing
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('x');
    req.on('close', () => res.destroy());
  } else {
    res.end('ok');
  }
});
await new Promise((r) => up.listen(0, '127.0.0.1', r));
const upUrl = `http://127.0.0.1:${up.address().port}`;
const proxy = spawn(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', upUrl, '--drain-timeout', process.env.DRAIN ?? '5', '--log-level', 'warn'],
  { stdio: ['ignore', 'pipe', 'pipe'] });
let err = '';
proxy.stderr.on('data', (d) => { err += d; });
const port = await new Promise((resolve) => {
  let out = '';
  proxy.stdout.on('data', (d) => { out += d; const m = /listening on http:\/\/[^:]+:(\d+)/.exec(out); if (m) resolve(Number(m[1])); });
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// A raw client: sends GET, reads `readBytes` (0 = none) then closes (or not).
function client(path, { readFirst = false, closeAfterMs = 300, pauseReading = false } = {}) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.write(`GET ${path} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n\r\n`);
    });
    if (pauseReading) s.pause();
    else s.on('data', () => {});
    s.on('error', () => {});
    s.on('close', resolve);
    setTimeout(() => s.destroy(), closeAfterMs);
  });
}
const scen = {
  // the client leaves while the upstream floods (the proxy pauses the call)
  slowgone: () => client('/x/flood', { pauseReading: true, closeAfterMs: 400 }),
  // the client leaves while the upstream hangs mid-body
  gone: () => client('/x/hang', { closeAfterMs: 200 }),
  // the upstream drops mid-body
  cut: () => client('/x/cut', { closeAfterMs: 400 }),
  ok: () => client('/x/ok', { closeAfterMs: 100 }),
};
for (const [name, f] of Object.entries(scen)) {
  if (only !== 'all' && only !== name) continue;
  for (let i = 0; i < N; ++i) await f();
}
await sleep(500);
const inflight = Number(process.env.INFLIGHT ?? 0);
const held = [];
for (let i = 0; i < inflight; ++i) {
  const s = net.connect(port, '127.0.0.1', () => s.write(`GET /x/hang HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n\r\n`));
  s.on('data', () => {}); s.on('error', () => {});
  held.push(s);
}
await sleep(300);
const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
console.log(metrics.split('\n').filter((l) => /errors_total|inflight|in_flight|open_conn/i.test(l) && !l.startsWith('#')).join('\n'));
proxy.kill('SIGTERM');
const code = await new Promise((r) => proxy.on('exit', (c, s) => r(c ?? s)));
up.close();
const m = /SUMMARY: AddressSanitizer: (\d+) byte\(s\) leaked in (\d+) allocation/.exec(err);
console.log(`N=${N} ${only}: exit ${code}; leaked ${m ? m[1] + ' bytes in ' + m[2] + ' allocations' : 'nothing'}`);
if (process.env.SHOW) console.log(err.slice(0, 20000));
for (const h of held) h.destroy();
process.exit(0);
