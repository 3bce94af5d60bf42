// End-to-end tests of `toolcache serve`'s /mcp/<name> in the stateless MCP
// era (2026-07-28): two serve instances share one sqlite store, requests
// alternate between them as a plain round-robin balancer would, and the
// upstream is a real 2025-era stdio server (server-filesystem, SDK 1.x)
// that toolcache speaks 2025-11-25 to on the modern clients' behalf. The
// 2.4.0 SDK client (@modelcontextprotocol/client, pinned to 2026-07-28)
// and raw POSTs drive it. Server-side calls are counted from tee.js's log
// (what the real server received), never from toolcache's statistics.
//
// Usage: TOOLCACHE_BIN=... node e2e_mcp_http_modern.mjs [test-name-filter]
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { spawn } from 'node:child_process';
import { killOnExit } from '../support/kill_on_exit.mjs';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const BIN = process.env.TOOLCACHE_BIN;
if (!BIN) {
  console.error('TOOLCACHE_BIN is not set');
  process.exit(2);
}
const FS = join(here, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const work = mkdtempSync(join(tmpdir(), 'toolcache-mcp-modern-'));
const dir = join(work, 'files');
const fsLog = join(work, 'fs.log');
writeFileSync(fsLog, '');
mkdirSync(dir);
const V = '2026-07-28';

function yamlList(a) {
  return `[${a.map((x) => JSON.stringify(x)).join(', ')}]`;
}
async function startServe(store, extraYaml = '') {
  const cfg = join(work, `serve-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(cfg, `servers:
  fs:
    command: ${yamlList([process.execPath, join(here, 'tee.js'), fsLog, '--', process.execPath, FS, dir])}
${extraYaml}`);
  // Killed when this script exits, however it exits: a serve left behind
  // holds ctest's output pipe open and the run never ends.
  const proc = killOnExit(spawn(BIN, ['serve', '--listen', '127.0.0.1:0', '--config', cfg, '--store', store, '--log-level', 'warn'],
    { stdio: ['ignore', 'pipe', 'inherit'] }));
  let out = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 10000);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    proc.on('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
  return { url, proc };
}
async function stopServe(s) {
  const exited = new Promise((r) => s.proc.on('exit', r));
  s.proc.kill('SIGTERM');
  await exited;
}
function serverCalls(tool) {
  return readFileSync(fsLog, 'utf8').split('\n').filter((l) => l.trim())
    .map((l) => { try { return JSON.parse(l); } catch { return {}; } })
    .filter((m) => m.method === 'tools/call' && m.params?.name === tool).length;
}
function serverMethods(method) {
  return readFileSync(fsLog, 'utf8').split('\n').filter((l) => l.includes(`"method":"${method}"`)).length;
}
const isHit = (result) => result?._meta?.['toolcache/cache']?.hit === true;
const text = (result) => result.content.map((c) => c.text ?? '').join('');

const ACCEPT = 'application/json, text/event-stream';
const META = { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientCapabilities': {} };
// A modern request with the headers the 2.4.0 client sends.
function modern(id, method, params = {}) {
  return { jsonrpc: '2.0', id, method, params: { ...params, _meta: META } };
}
function headersFor(body) {
  const h = { 'mcp-protocol-version': V, 'mcp-method': body.method };
  const name = body.params?.name ?? body.params?.uri;
  if (name !== undefined) h['mcp-name'] = name;
  return h;
}
async function post(url, body, headers = headersFor(body), accept = ACCEPT) {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, ...headers },
    body: JSON.stringify(body),
  });
  const raw = await r.text();
  let parsed = null;
  if ((r.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const events = raw.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
    parsed = events[events.length - 1];
  } else if (raw) {
    try { parsed = JSON.parse(raw); } catch { parsed = raw; }
  }
  return { status: r.status, headers: r.headers, body: parsed, raw };
}

const tests = [];
const test = (name, fn) => tests.push({ name, fn });
let a;
let b;
const urlA = () => `${a.url}/mcp/fs`;
const urlB = () => `${b.url}/mcp/fs`;

test('server/discover without a session: the 2025 server is described in 2026 terms', async () => {
  const r = await post(urlA(), modern(1, 'server/discover'));
  assert.equal(r.status, 200, r.raw);
  assert.equal(r.headers.get('mcp-session-id'), null, 'no session in the stateless era');
  assert.equal(r.body.id, 1);
  assert.deepEqual(r.body.result.supportedVersions, [V]);
  assert.ok(r.body.result.capabilities.tools, 'the child\'s capabilities');
  assert.equal(r.body.result.resultType, 'complete');
  assert.equal(typeof r.body.result.ttlMs, 'number');
  assert.ok(['public', 'private'].includes(r.body.result.cacheScope));
  assert.equal(serverMethods('initialize'), 1, 'the proxy initialized the 2025 child once');
});

test('round robin over two instances sharing one sqlite store: a hit via the other, a write invalidates on the other', async () => {
  const file = join(dir, 'rr.txt');
  writeFileSync(file, 'one');
  // Each instance learns the tools (as a modern client lists them first).
  for (const u of [urlA(), urlB()]) {
    const l = await post(u, modern(2, 'tools/list'));
    assert.equal(l.status, 200, l.raw);
    assert.ok(l.body.result.tools.some((t) => t.name === 'read_text_file'));
    assert.equal(l.body.result.resultType, 'complete');
    assert.equal(typeof l.body.result.ttlMs, 'number', 'tools/list carries ttlMs');
  }
  const before = serverCalls('read_text_file');
  const read = modern(3, 'tools/call', { name: 'read_text_file', arguments: { path: file } });
  const r1 = await post(urlA(), read);
  assert.equal(r1.status, 200, r1.raw);
  assert.equal(text(r1.body.result), 'one');
  assert.ok(!isHit(r1.body.result));
  const r2 = await post(urlB(), read);
  assert.equal(text(r2.body.result), 'one');
  assert.ok(isHit(r2.body.result), `instance B serves instance A's entry from the store: ${r2.raw}`);
  assert.equal(serverCalls('read_text_file'), before + 1, 'the server was read once');
  // A write through B invalidates what A would serve.
  const w = await post(urlB(), modern(4, 'tools/call', { name: 'write_file', arguments: { path: file, content: 'two' } }));
  assert.equal(w.status, 200, w.raw);
  assert.ok(!w.body.result.isError, w.raw);
  const r3 = await post(urlA(), read);
  assert.equal(text(r3.body.result), 'two', 'A does not serve the stale entry');
  assert.equal(serverCalls('read_text_file'), before + 2);
});

test('requests from several clients with one id each get their own answer', async () => {
  writeFileSync(join(dir, 'x.txt'), 'xx');
  writeFileSync(join(dir, 'y.txt'), 'yy');
  const [x, y] = await Promise.all([
    post(urlA(), modern(9, 'tools/call', { name: 'read_text_file', arguments: { path: join(dir, 'x.txt') } })),
    post(urlA(), modern(9, 'tools/call', { name: 'read_text_file', arguments: { path: join(dir, 'y.txt') } }), undefined, 'application/json'),
  ]);
  assert.equal(x.body.id, 9);
  assert.equal(y.body.id, 9);
  assert.equal(text(x.body.result), 'xx');
  assert.equal(text(y.body.result), 'yy');
  assert.ok((y.headers.get('content-type') ?? '').includes('application/json'));
  const z = await post(urlA(), modern(11, 'tools/call', { name: 'read_text_file', arguments: { path: join(dir, 'x.txt') } }), undefined, 'text/event-stream');
  assert.ok((z.headers.get('content-type') ?? '').includes('text/event-stream'), 'SSE when only that is accepted');
  assert.equal(z.body.id, 11);
  assert.equal(text(z.body.result), 'xx');
});

test('header checks as the SDK server: -32020 on a mismatch, -32022 with the supported revisions, -32602 without envelope', async () => {
  const inits = serverMethods('initialize');
  const call = modern(5, 'tools/call', { name: 'read_text_file', arguments: { path: join(dir, 'x.txt') } });
  let r = await post(urlA(), call, { ...headersFor(call), 'mcp-method': 'tools/list' });
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, -32020, r.raw);
  r = await post(urlA(), call, { ...headersFor(call), 'mcp-name': 'write_file' });
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, -32020, r.raw);
  r = await post(urlA(), call, { 'mcp-protocol-version': V });
  assert.equal(r.body.error.code, -32020, 'Mcp-Method is required');
  r = await post(urlA(), call, { ...headersFor(call), 'mcp-protocol-version': '2099-01-01' });
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, -32020, `the header disagrees with the body: ${r.raw}`);
  assert.equal(r.body.id, 5, 'errors carry the request id');
  const future = { ...call, params: { ...call.params, _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } };
  r = await post(urlA(), future, { ...headersFor(call), 'mcp-protocol-version': '2099-01-01' });
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, -32022, r.raw);
  assert.ok(r.body.error.data.supported.includes(V));
  r = await post(urlA(), modern(8, 'tools/list', {}), { 'mcp-protocol-version': V, 'mcp-method': 'tools/list' });
  assert.equal(r.status, 200, r.raw);
  const noCaps = { jsonrpc: '2.0', id: 8, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': V } } };
  r = await post(urlA(), noCaps, { 'mcp-protocol-version': V, 'mcp-method': 'tools/list' });
  assert.equal(r.body.error.code, -32602, `clientCapabilities is required: ${r.raw}`);
  r = await post(urlA(), modern(9, 'no/such/method'));
  assert.equal(r.status, 404, `method-not-found is HTTP 404: ${r.raw}`);
  assert.equal(r.body.error.code, -32601);
  assert.equal(r.body.id, 9);
  r = await post(urlA(), { jsonrpc: '2.0', id: 6, method: 'tools/list' }, { 'mcp-protocol-version': V, 'mcp-method': 'tools/list' });
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, -32602, r.raw);
  r = await post(urlA(), modern(7, 'initialize', { protocolVersion: V, capabilities: {}, clientInfo: { name: 'x', version: '1' } }));
  assert.equal(r.status, 404);
  assert.equal(r.body.error.code, -32601, 'no initialize in the stateless era');
  r = await post(urlA(), modern(10, 'ping'));
  assert.equal(r.status, 404);
  assert.equal(r.body.error.code, -32601, 'ping is removed');
  assert.equal(serverMethods('initialize'), inits, 'the client\'s initialize never reaches the server');
});

test('the 2.4.0 SDK client pinned to 2026-07-28: discover, list, call, a hit via the other instance', async () => {
  writeFileSync(join(dir, 'sdk.txt'), 'sdk');
  const clients = [];
  for (const u of [urlA(), urlB()]) {
    const client = new Client({ name: 'toolcache-e2e-modern', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: V } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(u)));
    clients.push(client);
  }
  const tools = await clients[0].listTools();
  assert.ok(tools.tools.some((t) => t.name === 'read_text_file'));
  const args = { name: 'read_text_file', arguments: { path: join(dir, 'sdk.txt') } };
  const c1 = await clients[0].callTool(args);
  assert.equal(text(c1), 'sdk');
  await clients[1].listTools();
  const c2 = await clients[1].callTool(args);
  assert.equal(text(c2), 'sdk');
  assert.ok(isHit(c2), 'served from the shared store');
  for (const c of clients) await c.close();
});

test('a server that dies before its handshake answers the waiting request 502, never a hang', async () => {
  const s = await startServe('memory', `  dead:
    command: ${yamlList([process.execPath, '-e', 'setTimeout(() => process.exit(3), 200)'])}
`);
  try {
    const started = Date.now();
    const r = await post(`${s.url}/mcp/dead`, modern(12, 'tools/list'));
    assert.equal(r.status, 502, r.raw);
    assert.equal(r.body.id, 12);
    assert.equal(r.body.error.code, -32000);
    assert.match(r.body.error.message, /status 3/);
    assert.ok(Date.now() - started < 5000, 'answered at once');
  } finally {
    await stopServe(s);
  }
});

test('a 2026 stdio server behind /mcp/<name>: discover forwarded, no initialize upstream, a hit via the other instance', async () => {
  const log = join(work, 'modern-stdio.log');
  writeFileSync(log, '');
  const yaml = `  modern:
    command: ${yamlList([process.execPath, join(here, 'modern_stdio_server.mjs'), log])}
`;
  const store = `sqlite:${join(work, 'modern-store.db')}`;
  const [s1, s2] = [await startServe(store, yaml), await startServe(store, yaml)];
  try {
    const d = await post(`${s1.url}/mcp/modern`, modern(1, 'server/discover'));
    assert.equal(d.status, 200, d.raw);
    assert.ok(d.body.result.supportedVersions.includes(V));
    assert.equal(d.body.result._meta?.['io.modelcontextprotocol/serverInfo']?.name, 'toolcache-modern-stdio-fixture',
      'the server\'s own discover result, forwarded');
    for (const s of [s1, s2]) {
      const l = await post(`${s.url}/mcp/modern`, modern(2, 'tools/list'));
      assert.ok(l.body.result.tools.some((t) => t.name === 'echo'), l.raw);
    }
    const call = modern(3, 'tools/call', { name: 'echo', arguments: { text: 'x' } });
    const c1 = await post(`${s1.url}/mcp/modern`, call);
    const c2 = await post(`${s2.url}/mcp/modern`, call);
    assert.equal(text(c1.body.result), 'echo: x', c1.raw);
    assert.equal(text(c2.body.result), 'echo: x');
    assert.ok(!isHit(c1.body.result) && isHit(c2.body.result), 'a hit via the other instance');
    const lines = readFileSync(log, 'utf8');
    assert.ok(!lines.includes('"method":"initialize"'), 'no initialize sent to a 2026 server');
    assert.equal(lines.split('"method":"tools/call"').length - 1, 1, 'the server ran the call once');
  } finally {
    await stopServe(s1);
    await stopServe(s2);
  }
});

test('the 2025 path is unchanged beside it: initialize gives a session', async () => {
  const r = await fetch(urlA(), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: ACCEPT },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'old', version: '1' } } }),
  });
  assert.equal(r.status, 200);
  assert.ok(r.headers.get('mcp-session-id'), 'a 2025 session id');
  await r.text();
});

// --- runner --------------------------------------------------------------
const store = `sqlite:${join(work, 'store.db')}`;
a = await startServe(store);
b = await startServe(store);
const filter = process.argv[2] ?? '';
let failed = 0;
for (const t of tests.filter((x) => x.name.includes(filter))) {
  const started = Date.now();
  try {
    await Promise.race([t.fn(), new Promise((_, rej) => setTimeout(() => rej(new Error('timeout after 60 s')), 60000))]);
    console.log(`PASS ${t.name} (${Date.now() - started} ms)`);
  } catch (e) {
    failed += 1;
    console.log(`FAIL ${t.name}: ${e.stack ?? e}`);
  }
}
const statsA = await (await fetch(`${a.url}/toolcache/stats`)).json();
await stopServe(a);
await stopServe(b);
rmSync(work, { recursive: true, force: true });
console.log(`instance A mcp stats: ${JSON.stringify(statsA.mcp)}`);
console.log(failed === 0 ? 'all passed' : `${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
