// Added latency per tools/call of `toolcache mcp --url` (stdio client ->
// toolcache -> Streamable HTTP server) vs the official SDK client connecting
// directly to the same server (StreamableHTTPClientTransport). The server is
// server-everything in streamableHttp mode (tests/peers) on 127.0.0.1.
// Usage (after scripts/setup.sh and a build):
//   node bench/mcp_url.mjs [--bin build/apps/toolcache/toolcache] [--rounds 300]
// Method: the two clients are connected once; for each path (miss: a new
// echo message every call; hit: one message repeated after a first call)
// the direct and proxied calls alternate call by call, so machine load hits
// them alike. Reported: median and p90 wall time per call in ms, and added =
// proxied - direct (medians). A hit never reaches the server, so "hit"
// compares a proxied cache hit with a direct round trip to the server.
import { Client } from '../tests/peers/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StdioClientTransport } from '../tests/peers/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';
import { StreamableHTTPClientTransport } from '../tests/peers/node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (n, d) => { const i = args.indexOf(n); return i >= 0 ? args[i + 1] : d; };
const BIN = path.resolve(opt('--bin', path.join(root, 'build/apps/toolcache/toolcache')));
const ROUNDS = Number(opt('--rounds', 300));
const EVERYTHING = path.join(root, 'tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js');

const port = await new Promise((resolve) => {
  const s = createServer();
  s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
});
const server = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
  env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'],
});
await new Promise((resolve, reject) => {
  let err = '';
  server.stderr.on('data', (d) => { err += d; if (err.includes('listening on port')) resolve(); });
  server.on('exit', (c) => reject(new Error(`server exited ${c}: ${err}`)));
});
const url = `http://127.0.0.1:${port}/mcp`;

const direct = new Client({ name: 'bench-direct', version: '1' });
await direct.connect(new StreamableHTTPClientTransport(new URL(url)));
const proxied = new Client({ name: 'bench-proxied', version: '1' });
await proxied.connect(new StdioClientTransport({ command: BIN, args: ['mcp', '--url', url, '--name', 'everything'] }));

// Both learn the tools (the proxy's cache needs their annotations: echo is
// read-only, so cacheable).
await direct.listTools();
await proxied.listTools();

const now = () => Number(process.hrtime.bigint()) / 1e6;
async function timed(client, message, expectHit = null) {
  const t = now();
  const r = await client.callTool({ name: 'echo', arguments: { message } });
  const elapsed = now() - t;
  if (!r.content?.[0]?.text?.includes(message)) throw new Error(`bad answer ${JSON.stringify(r)}`);
  const hit = r._meta?.['toolcache/cache']?.hit === true;
  if (expectHit !== null && hit !== expectHit) throw new Error(`expected hit=${expectHit}: ${JSON.stringify(r)}`);
  return elapsed;
}
const q = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };

// Warm-up (JIT, connections).
for (let i = 0; i < 30; i++) { await timed(direct, `warm-${i}`); await timed(proxied, `warm-${i}`); }
const results = {};
for (const mode of ['miss', 'hit']) {
  const d = [], p = [];
  if (mode === 'hit') await timed(proxied, 'the-hit');
  for (let i = 0; i < ROUNDS; i++) {
    const message = mode === 'miss' ? `miss-${i}` : 'the-hit';
    const hit = mode === 'hit';
    if (i % 2 === 0) { d.push(await timed(direct, message)); p.push(await timed(proxied, message, hit)); }
    else { p.push(await timed(proxied, message, hit)); d.push(await timed(direct, message)); }
  }
  results[mode] = { d, p };
}
console.log(`toolcache mcp --url vs direct SDK StreamableHTTP client, echo on server-everything, ${ROUNDS} calls per path`);
console.log('path   direct p50   p90   | proxied p50   p90   | added p50 (ms)');
for (const [mode, { d, p }] of Object.entries(results)) {
  const f = (x) => x.toFixed(3).padStart(7);
  console.log(`${mode.padEnd(6)} ${f(q(d, 0.5))} ${f(q(d, 0.9))} | ${f(q(p, 0.5))} ${f(q(p, 0.9))} | ${f(q(p, 0.5) - q(d, 0.5))}`);
}
await direct.close();
await proxied.close();
server.kill('SIGKILL');
