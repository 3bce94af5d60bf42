// End-to-end tests of `toolcache serve`'s MCP endpoint (/mcp/<name>, MCP
// Streamable HTTP): the official SDK client's StreamableHTTPClientTransport
// talks to real stdio servers from npm (server-filesystem,
// server-everything) that toolcache serve starts per session. Server-side
// calls are counted from tee.js's log (what the real server received),
// never from toolcache's statistics; hits are also checked in
// /toolcache/stats and in the result's _meta["toolcache/cache"].
//
// Usage: TOOLCACHE_BIN=... node e2e_mcp_http_serve.mjs [test-name-filter]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { spawn, spawnSync } from 'node:child_process';
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
const EVERYTHING = join(here, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const work = mkdtempSync(join(tmpdir(), 'toolcache-mcp-http-'));
const dir = join(work, 'files');
const fsLog = join(work, 'fs.log');
const evLog = join(work, 'everything.log');
writeFileSync(fsLog, '');
writeFileSync(evLog, '');
mkdirSync(dir);

function yamlList(a) {
  return `[${a.map((x) => JSON.stringify(x)).join(', ')}]`;
}
// Starts `toolcache serve` with the two servers; resolves {url, proc}.
async function startServe(extraArgs = [], extraYaml = '') {
  const cfg = join(work, `serve-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(cfg, `servers:
  fs:
    command: ${yamlList([process.execPath, join(here, 'tee.js'), fsLog, '--', process.execPath, FS, dir])}
  everything:
    command: ${yamlList([process.execPath, join(here, 'tee.js'), evLog, '--', process.execPath, EVERYTHING, 'stdio'])}
${extraYaml}`);
  const proc = killOnExit(spawn(BIN, ['serve', '--listen', '127.0.0.1:0', '--config', cfg, '--log-level', 'warn', ...extraArgs],
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

function serverLog(log) {
  return readFileSync(log, 'utf8').split('\n').filter((l) => l.trim())
    .map((l) => { try { return JSON.parse(l); } catch { return { unparsable: l }; } });
}
function serverCalls(log, tool) {
  return serverLog(log).filter((m) => m.method === 'tools/call' && m.params?.name === tool).length;
}
function text(result) {
  return result.content.map((c) => c.text ?? '').join('');
}
function isHit(result) {
  return result._meta?.['toolcache/cache']?.hit === true;
}
async function connect(url, name, { capabilities = {}, setup } = {}) {
  const client = new Client({ name: 'toolcache-e2e-http', version: '1.0.0' }, { capabilities });
  if (setup) setup(client);
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp/${name}`));
  await client.connect(transport);
  return { client, transport };
}
async function stats(url) {
  return (await fetch(`${url}/toolcache/stats`)).json();
}
const ACCEPT = 'application/json, text/event-stream';
// A raw POST; returns {status, headers, body (parsed JSON, or SSE events' data)}.
async function post(url, body, headers = {}) {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers },
    body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
  const raw = await r.text();
  let parsed = null;
  if ((r.headers.get('content-type') ?? '').includes('text/event-stream')) {
    parsed = raw.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
  } else if (raw) {
    try { parsed = JSON.parse(raw); } catch { parsed = raw; }
  }
  return { status: r.status, headers: r.headers, body: parsed, raw };
}
const INIT = (id = 1, version = '2025-06-18') => ({
  jsonrpc: '2.0', id, method: 'initialize',
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
// A raw session: initialize + initialized; returns its id.
async function rawSession(url, version = '2025-06-18') {
  const r = await post(url, INIT(1, version));
  assert.equal(r.status, 200, r.raw);
  const sid = r.headers.get('mcp-session-id');
  assert.ok(sid, 'initialize answered with Mcp-Session-Id');
  const n = await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' },
    { 'mcp-session-id': sid, 'mcp-protocol-version': version });
  assert.equal(n.status, 202);
  return sid;
}

const tests = [];
const test = (name, fn) => tests.push({ name, fn });
let serve;

test('sdk: initialize, tools/list, repeated tools/call served from cache, a write invalidates', async () => {
  const file = join(dir, 'a.txt');
  writeFileSync(file, 'version one');
  const { client, transport } = await connect(serve.url, 'fs');
  assert.ok(transport.sessionId, 'the SDK holds a session id');
  const tools = await client.listTools();
  assert.ok(tools.tools.some((t) => t.name === 'read_text_file'));
  const before = (await stats(serve.url)).cache.hits;
  const r1 = await client.callTool({ name: 'read_text_file', arguments: { path: file } });
  const r2 = await client.callTool({ name: 'read_text_file', arguments: { path: file } });
  assert.equal(text(r1), 'version one');
  assert.equal(text(r2), 'version one');
  assert.ok(!isHit(r1) && isHit(r2), 'the second call is a hit');
  assert.equal(serverCalls(fsLog, 'read_text_file'), 1, 'the server saw one read');
  const s = await stats(serve.url);
  assert.equal(s.cache.hits, before + 1, 'the hit is counted in /toolcache/stats');
  assert.ok(s.mcp.servers.fs.sessionsOpen >= 1);
  await client.callTool({ name: 'write_file', arguments: { path: file, content: 'version two' } });
  const r3 = await client.callTool({ name: 'read_text_file', arguments: { path: file } });
  assert.equal(text(r3), 'version two', 'the write invalidated the cached read');
  assert.equal(serverCalls(fsLog, 'read_text_file'), 2);
  await transport.terminateSession();
  await client.close();
});

test('sessions: each has its own server process; ending one leaves the other', async () => {
  const file = join(dir, 'b.txt');
  writeFileSync(file, 'bee');
  const inits = () => serverLog(fsLog).filter((m) => m.method === 'initialize').length;
  const i0 = inits();
  const a = await connect(serve.url, 'fs');
  const b = await connect(serve.url, 'fs');
  assert.notEqual(a.transport.sessionId, b.transport.sessionId);
  assert.equal(inits(), i0 + 2, 'two server processes were initialized');
  const calls0 = serverCalls(fsLog, 'read_text_file');
  const [ra, rb] = await Promise.all([
    a.client.callTool({ name: 'read_text_file', arguments: { path: file } }),
    b.client.callTool({ name: 'read_text_file', arguments: { path: file } }),
  ]);
  assert.equal(text(ra), 'bee');
  assert.equal(text(rb), 'bee');
  // One scope (no tenants): the sessions share entries and flights, so the
  // server read once (the other session joined the flight, or hit).
  assert.equal(serverCalls(fsLog, 'read_text_file') - calls0, 1);
  const aid = a.transport.sessionId;
  await a.transport.terminateSession();
  await a.client.close();
  const gone = await post(`${serve.url}/mcp/fs`, { jsonrpc: '2.0', id: 9, method: 'tools/list' },
    { 'mcp-session-id': aid, 'mcp-protocol-version': '2025-06-18' });
  assert.equal(gone.status, 404, 'an ended session is unknown');
  const still = await b.client.listTools();
  assert.ok(still.tools.length > 0, 'the other session still works');
  // A session of one server is unknown at another.
  const other = await post(`${serve.url}/mcp/everything`, { jsonrpc: '2.0', id: 9, method: 'tools/list' },
    { 'mcp-session-id': b.transport.sessionId, 'mcp-protocol-version': '2025-06-18' });
  assert.equal(other.status, 404);
  await b.transport.terminateSession();
  await b.client.close();
});

test('everything: notifications during a call and server requests reach the SDK client', async () => {
  let asked = 0;
  const { client, transport } = await connect(serve.url, 'everything', {
    capabilities: { roots: { listChanged: true } },
    setup: (c) => c.setRequestHandler(ListRootsRequestSchema, async () => {
      asked += 1;
      return { roots: [{ uri: 'file:///toolcache-http-root', name: 'r' }] };
    }),
  });
  await client.listTools();
  const progress = [];
  await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.6, steps: 3 } },
    undefined, { onprogress: (p) => progress.push(p) });
  assert.ok(progress.length >= 2, `got ${progress.length} progress notifications`);
  const r = await client.callTool({ name: 'get-roots-list', arguments: {} });
  assert.ok(asked >= 1, 'roots/list reached the client');
  assert.ok(text(r).includes('file:///toolcache-http-root'), text(r));
  await transport.terminateSession();
  await client.close();
});

test('raw: JSON or SSE per Accept; notifications get 202; batches only before 2025-06-18', async () => {
  const url = `${serve.url}/mcp/fs`;
  const sid = await rawSession(url);
  const h = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
  const json = await post(url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { ...h, accept: 'application/json' });
  assert.equal(json.status, 200);
  assert.match(json.headers.get('content-type'), /application\/json/);
  assert.equal(json.body.id, 2);
  assert.ok(json.body.result.tools.length > 0);
  const sse = await post(url, { jsonrpc: '2.0', id: 'x', method: 'ping' }, h);
  assert.match(sse.headers.get('content-type'), /text\/event-stream/);
  assert.deepEqual(sse.body.map((m) => m.id), ['x']);
  const batch = await post(url, [{ jsonrpc: '2.0', id: 3, method: 'ping' }], h);
  assert.equal(batch.status, 400);
  assert.equal(batch.body.error.code, -32600);
  // A 2025-03-26 session takes a batch and answers it as an array.
  const old = await rawSession(url, '2025-03-26');
  const ho = { 'mcp-session-id': old, 'mcp-protocol-version': '2025-03-26', accept: 'application/json' };
  const b2 = await post(url, [{ jsonrpc: '2.0', id: 4, method: 'ping' },
    { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'z', progress: 1 } },
    { jsonrpc: '2.0', id: 5, method: 'tools/list' }], ho);
  assert.equal(b2.status, 200, b2.raw);
  assert.deepEqual(b2.body.map((m) => m.id).sort(), [4, 5]);
  // A 2025-06-18 client's GET opens the stream; a second one conflicts.
  const ctl = new AbortController();
  const g = await fetch(url, { headers: { ...h, accept: 'text/event-stream' }, signal: ctl.signal });
  assert.equal(g.status, 200);
  assert.match(g.headers.get('content-type'), /text\/event-stream/);
  const g2 = await fetch(url, { headers: { ...h, accept: 'text/event-stream' } });
  assert.equal(g2.status, 409);
  ctl.abort();
  for (const s of [sid, old]) {
    const d = await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': s } });
    assert.equal(d.status, 200);
  }
});

test('bad input: parse error, missing/unknown session, Origin, protocol version, size', async () => {
  const url = `${serve.url}/mcp/fs`;
  const sid = await rawSession(url);
  const h = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
  const bad = await post(url, '{"jsonrpc":"2.0","id":1,"method":', h);
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, -32700, 'malformed JSON is a JSON-RPC parse error');
  const missing = await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-protocol-version': '2025-06-18' });
  assert.equal(missing.status, 400, 'no Mcp-Session-Id');
  const unknown = await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { ...h, 'mcp-session-id': 'nope' });
  assert.equal(unknown.status, 404);
  const origin = await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { ...h, origin: 'https://evil.example' });
  assert.equal(origin.status, 403, 'a foreign Origin is refused');
  const local = await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { ...h, origin: 'http://localhost:3000' });
  assert.equal(local.status, 200, 'a loopback Origin is allowed');
  const version = await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { ...h, 'mcp-protocol-version': '1999-01-01' });
  assert.equal(version.status, 400, 'an unknown protocol version is refused');
  const other = await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { ...h, 'mcp-protocol-version': '2025-03-26' });
  assert.equal(other.status, 200, 'another known version is accepted (as the reference server does)');
  const otherBatch = await post(url, [{ jsonrpc: '2.0', id: 1, method: 'ping' }], { ...h, 'mcp-protocol-version': '2025-03-26' });
  assert.equal(otherBatch.status, 400, 'but the negotiated 2025-06-18 still has no batches');
  // The server answers 413 from the Content-Length and closes: curl reads
  // that answer while still sending (fetch may see only the closed socket).
  const big = join(work, 'big.json');
  writeFileSync(big, Buffer.alloc(9 << 20, 0x20));
  const huge = spawnSync('curl', ['-s', '-o', join(work, 'big.out'), '-w', '%{http_code}', '-X', 'POST',
    '-H', 'content-type: application/json', '-H', `accept: ${ACCEPT}`, '-H', `mcp-session-id: ${sid}`,
    '--data-binary', `@${big}`, url], { encoding: 'utf8' });
  assert.equal(huge.stdout, '413', `curl: ${huge.stdout} ${huge.stderr}`);
  assert.equal(JSON.parse(readFileSync(join(work, 'big.out'), 'utf8')).error.code, -32600);
  const noServer = await post(`${serve.url}/mcp/nope`, INIT());
  assert.equal(noServer.status, 404);
  const put = await fetch(url, { method: 'PUT', headers: h });
  assert.equal(put.status, 405);
  const notJson = await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { ...h, 'content-type': 'text/plain' });
  assert.equal(notJson.status, 415);
  // The session survived all that.
  const ok = await post(url, { jsonrpc: '2.0', id: 7, method: 'ping' }, h);
  assert.equal(ok.status, 200);
  await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': sid } });
});

test('limits: max sessions (503) and idle timeout (404 after)', async () => {
  const s = await startServe(['--mcp-max-sessions', '2', '--mcp-idle-timeout', '3']);
  try {
    const url = `${s.url}/mcp/fs`;
    const a = await rawSession(url);
    await rawSession(url);
    const third = await post(url, INIT());
    assert.equal(third.status, 503);
    assert.match(third.body.error.message, /2 MCP sessions are open/);
    assert.equal((await stats(s.url)).mcp.sessionsRejected, 1);
    await new Promise((r) => setTimeout(r, 7000));
    const expired = await post(url, { jsonrpc: '2.0', id: 2, method: 'ping' },
      { 'mcp-session-id': a, 'mcp-protocol-version': '2025-06-18' });
    assert.equal(expired.status, 404, 'an idle session ended');
    const st = await stats(s.url);
    assert.equal(st.mcp.sessionsExpired, 2);
    assert.equal(st.mcp.sessionsOpen, 0);
    assert.equal((await post(url, INIT())).status, 200, 'room for new sessions again');
  } finally {
    await stopServe(s);
  }
});

test('tenants: a session is bound to its token, and tenants do not share entries', async () => {
  const s = await startServe([], 'serve:\n  tenants:\n    alice: {token: a-secret}\n    bob: {token: b-secret}\n');
  try {
    const url = `${s.url}/mcp/fs`;
    assert.equal((await post(url, INIT())).status, 401);
    const file = join(dir, 't.txt');
    writeFileSync(file, 'tenant');
    const open = async (token) => {
      const client = new Client({ name: 't', version: '1' }, { capabilities: {} });
      const transport = new StreamableHTTPClientTransport(new URL(url),
        { requestInit: { headers: { authorization: `Bearer ${token}` } } });
      await client.connect(transport);
      return { client, transport };
    };
    const alice = await open('a-secret');
    const bob = await open('b-secret');
    const c0 = serverCalls(fsLog, 'read_text_file');
    await alice.client.callTool({ name: 'read_text_file', arguments: { path: file } });
    const hitA = await alice.client.callTool({ name: 'read_text_file', arguments: { path: file } });
    const missB = await bob.client.callTool({ name: 'read_text_file', arguments: { path: file } });
    assert.ok(isHit(hitA));
    assert.ok(!isHit(missB), 'bob does not read alice\'s entry');
    assert.equal(serverCalls(fsLog, 'read_text_file') - c0, 2);
    const stolen = await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, {
      'mcp-session-id': alice.transport.sessionId, 'mcp-protocol-version': '2025-06-18', authorization: 'Bearer b-secret',
    });
    assert.equal(stolen.status, 404, 'another tenant cannot use a session');
    await alice.transport.terminateSession();
    await bob.transport.terminateSession();
    await alice.client.close();
    await bob.client.close();
  } finally {
    await stopServe(s);
  }
});

// --- runner --------------------------------------------------------------
serve = await startServe();
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
const final = await stats(serve.url);
await stopServe(serve);
rmSync(work, { recursive: true, force: true });
console.log(`mcp stats at the end: ${JSON.stringify(final.mcp)}`);
console.log(failed === 0 ? 'all passed' : `${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
