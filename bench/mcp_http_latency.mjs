// Added latency of `toolcache serve`'s MCP endpoint (/mcp/<name>, MCP
// Streamable HTTP) per tools/call, against a direct stdio connection to the
// same server (server-everything's `echo`, from tests/peers), and against
// the stdio proxy `toolcache mcp` for reference. Sequential calls, one
// client, raw JSON-RPC on every side (no SDK client in the timed loop, so
// the numbers are the transports' and toolcache's):
//   miss: every call has new arguments (forwarded to the server)
//   hit:  the same arguments each time (served from the cache; the direct
//         connection has no cache, so its "hit" row is another miss)
// Reported per mode: median and p99 in microseconds, and the median added
// to the direct connection's median.
//
// Usage (after a build and npm ci in tests/peers):
//   node bench/mcp_http_latency.mjs [--calls 2000] [--bin build/apps/toolcache/toolcache]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (n, d) => { const i = args.indexOf(n); return i >= 0 ? args[i + 1] : d; };
const BIN = path.resolve(opt('--bin', path.join(root, 'build/apps/toolcache/toolcache')));
const CALLS = Number(opt('--calls', 2000));
const SERVER = [process.execPath,
  path.join(root, 'tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'];
const INIT = {
  jsonrpc: '2.0', id: 0, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
};

function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { p50: q(0.5), p99: q(0.99) };
}
const now = () => Number(process.hrtime.bigint()) / 1000;  // microseconds

// A raw stdio JSON-RPC connection: send(obj) resolves with the answer.
function stdioConn(argv) {
  const child = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'ignore'] });
  const waiting = new Map();
  let buf = '';
  child.stdout.on('data', (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const m = JSON.parse(line);
      if (m.id !== undefined && waiting.has(m.id) && (m.result || m.error)) {
        waiting.get(m.id)(m);
        waiting.delete(m.id);
      }
    }
  });
  return {
    send(obj) {
      return new Promise((resolve) => {
        if (obj.id !== undefined) waiting.set(obj.id, resolve);
        child.stdin.write(`${JSON.stringify(obj)}\n`);
        if (obj.id === undefined) resolve();
      });
    },
    close() { child.stdin.end(); child.kill(); },
  };
}

// A raw Streamable HTTP connection to url (JSON or SSE responses).
async function httpConn(url, accept) {
  let sid = null;
  const send = async (obj) => {
    const headers = { 'content-type': 'application/json', accept };
    if (sid) {
      headers['mcp-session-id'] = sid;
      headers['mcp-protocol-version'] = '2025-06-18';
    }
    const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify(obj) });
    sid ??= r.headers.get('mcp-session-id');
    const body = await r.text();
    if (!body) return null;
    if (accept.includes('event-stream')) {
      const data = body.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
      return data.find((m) => m.id === obj.id);
    }
    return JSON.parse(body);
  };
  return {
    send,
    close: () => fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': sid } }),
  };
}

async function handshake(c) {
  await c.send(INIT);
  await c.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  await c.send({ jsonrpc: '2.0', id: 'l', method: 'tools/list' });
  // server-everything announces list_changed at start: the proxies list the
  // tools again and cache nothing until then; a second listing waits it out.
  await new Promise((r) => setTimeout(r, 300));
  await c.send({ jsonrpc: '2.0', id: 'l2', method: 'tools/list' });
}

async function measure(c, label) {
  await handshake(c);
  const call = (id, message) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message } } });
  let id = 1;
  // Warm-up (JIT, connections), then the timed loops.
  for (let i = 0; i < 200; i++) await c.send(call(id++, `warm ${label} ${i}`));
  const miss = [];
  for (let i = 0; i < CALLS; i++) {
    const t = now();
    const r = await c.send(call(id++, `miss ${label} ${i}`));
    miss.push(now() - t);
    if (!r?.result) throw new Error(`${label}: no result: ${JSON.stringify(r)}`);
  }
  const hit = [];
  let hits = 0;
  await c.send(call(id++, `same ${label}`));
  for (let i = 0; i < CALLS; i++) {
    const t = now();
    const r = await c.send(call(id++, `same ${label}`));
    hit.push(now() - t);
    if (r?.result?._meta?.['toolcache/cache']?.hit) hits++;
  }
  return { miss: stats(miss), hit: stats(hit), hits };
}

async function startServe(work) {
  const cfg = path.join(work, 'serve.yaml');
  fs.writeFileSync(cfg, `servers:\n  everything:\n    command: ${JSON.stringify(SERVER)}\n`);
  const proc = spawn(BIN, ['serve', '--listen', '127.0.0.1:0', '--config', cfg, '--log-level', 'error'],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const url = await new Promise((resolve, reject) => {
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    proc.on('exit', (code) => reject(new Error(`serve exited ${code}`)));
  });
  return { url, proc };
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'toolcache-bench-mcp-http-'));
const rows = [];
{
  const c = stdioConn(SERVER);
  rows.push(['direct stdio', await measure(c, 'direct')]);
  c.close();
}
{
  const c = stdioConn([BIN, 'mcp', '--name', 'everything', '--', ...SERVER]);
  rows.push(['toolcache mcp (stdio)', await measure(c, 'proxy')]);
  c.close();
}
const serve = await startServe(work);
for (const [label, accept] of [['/mcp (JSON)', 'application/json'],
  ['/mcp (SSE)', 'application/json, text/event-stream']]) {
  const c = await httpConn(`${serve.url}/mcp/everything`, accept);
  rows.push([label, await measure(c, label)]);
  await c.close();
}
serve.proc.kill('SIGTERM');
fs.rmSync(work, { recursive: true, force: true });

const base = rows[0][1];
console.log(`tools/call latency, ${CALLS} sequential calls per row, microseconds (node ${process.version}, ${os.cpus().length} cores)`);
console.log('mode                    miss p50  miss p99  +p50 vs direct   hit p50  hit p99  +p50 vs direct miss  hits');
for (const [label, r] of rows) {
  const f = (v) => String(Math.round(v)).padStart(8);
  console.log(`${label.padEnd(22)} ${f(r.miss.p50)}  ${f(r.miss.p99)}  ${f(r.miss.p50 - base.miss.p50)}         ${f(r.hit.p50)} ${f(r.hit.p99)}  ${f(r.hit.p50 - base.miss.p50)}            ${r.hits}`);
}
