// End-to-end tests of `toolcache mcp --url` in the MCP 2026-07-28 era: the
// 2.4.0 SDK client (@modelcontextprotocol/client) spawns toolcache over
// stdio, pinned to 2026-07-28 or in 'auto' mode, and toolcache speaks
// Streamable HTTP to a modern server built on @modelcontextprotocol/server
// 2.4.0 + @modelcontextprotocol/node 2.1.2 (modern_http_server.mjs). What
// the server received (methods and headers) is read from its log, never
// from toolcache's statistics.
//
// Usage: TOOLCACHE_BIN=... node e2e_mcp_url_modern.mjs [test-name-filter]
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { spawn } from 'node:child_process';
import { killOnExit } from '../support/kill_on_exit.mjs';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const BIN = process.env.TOOLCACHE_BIN;
if (!BIN) {
  console.error('TOOLCACHE_BIN is not set');
  process.exit(2);
}
const work = mkdtempSync(join(tmpdir(), 'toolcache-url-modern-'));
const V = '2026-07-28';

async function startServer(log) {
  writeFileSync(log, '');
  const child = killOnExit(spawn(process.execPath, [join(here, 'modern_http_server.mjs'), log], { stdio: ['ignore', 'pipe', 'inherit'] }));
  let out = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 10000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
  return { child, url, log };
}
const received = (server) => readFileSync(server.log, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
const text = (result) => result.content.map((c) => c.text ?? '').join('');
const isHit = (result) => result._meta?.['toolcache/cache']?.hit === true;

async function connect(url, mode) {
  const client = new Client({ name: 'toolcache-e2e-url-modern', version: '1.0.0' }, { versionNegotiation: { mode } });
  const transport = new StdioClientTransport({
    command: BIN, args: ['mcp', '--url', url, '--name', 'modern', '--log-level', 'warn'], stderr: 'pipe',
  });
  const log = { text: '' };
  transport.stderr?.on('data', (d) => { log.text += d.toString(); });
  await client.connect(transport);
  return { client, log };
}

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

test('pinned 2026-07-28: no initialize, no session, Mcp-Method/Mcp-Name sent, a repeated read-only call is a hit', async () => {
  const server = await startServer(join(work, 'pin.log'));
  try {
    const { client } = await connect(server.url, { pin: V });
    const tools = await client.listTools();
    assert.ok(tools.tools.some((t) => t.name === 'echo'));
    const a = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    const b = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    assert.equal(text(a), 'echo: hi');
    assert.equal(text(b), 'echo: hi');
    assert.ok(!isHit(a) && isHit(b), 'the second call is served from the cache');
    await client.close();
    const got = received(server);
    assert.equal(got.filter((m) => m.method === 'initialize').length, 0, 'no initialize in the stateless era');
    assert.equal(got.filter((m) => m.session).length, 0, 'no Mcp-Session-Id');
    const calls = got.filter((m) => m.method === 'tools/call');
    assert.equal(calls.length, 1, 'the server saw one tools/call');
    assert.equal(calls[0].version, V);
    assert.equal(calls[0].mcpMethod, 'tools/call');
    assert.equal(calls[0].mcpName, 'echo');
    for (const m of got.filter((x) => x.method && !x.method.startsWith('notifications/'))) {
      assert.equal(m.mcpMethod, m.method, `Mcp-Method for ${m.method}`);
      assert.equal(m.version, V, `MCP-Protocol-Version for ${m.method}`);
    }
  } finally {
    server.child.kill('SIGTERM');
  }
});

test('auto mode: the client probes server/discover through toolcache and stays modern', async () => {
  const server = await startServer(join(work, 'auto.log'));
  try {
    const { client } = await connect(server.url, 'auto');
    const r = await client.callTool({ name: 'echo', arguments: { text: 'auto' } });
    assert.equal(text(r), 'echo: auto');
    await client.close();
    const got = received(server);
    assert.ok(got.some((m) => m.method === 'server/discover'), 'discover reached the server');
    assert.equal(got.filter((m) => m.method === 'initialize').length, 0);
  } finally {
    server.child.kill('SIGTERM');
  }
});

test('a 2025 client through the same toolcache to the same server still initializes (legacy stateless fallback)', async () => {
  const server = await startServer(join(work, 'legacy.log'));
  try {
    const { client } = await connect(server.url, 'legacy');
    const r = await client.callTool({ name: 'echo', arguments: { text: 'old' } });
    assert.equal(text(r), 'echo: old');
    await client.close();
    assert.ok(received(server).some((m) => m.method === 'initialize'), 'the 2025 handshake');
  } finally {
    server.child.kill('SIGTERM');
  }
});

test('auto mode in front of a 2025 server (server-everything, SDK 1.x): the client falls back to initialize through toolcache', async () => {
  const EVERYTHING = join(here, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
  const net = await import('node:net');
  const port = await new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
  const child = killOnExit(spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] }));
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  try {
    for (let i = 0; i < 200 && !err.includes('listening on port'); i++) await new Promise((r) => setTimeout(r, 25));
    const { client } = await connect(`http://127.0.0.1:${port}/mcp`, 'auto');
    assert.equal(client.getServerVersion()?.name, 'mcp-servers/everything');
    const tools = await client.listTools();
    assert.ok(tools.tools.some((t) => t.name === 'echo'), 'the 2025 session works after the fallback');
    await client.close();
  } finally {
    child.kill('SIGKILL');
  }
});

// --- runner --------------------------------------------------------------
const filter = process.argv[2] ?? '';
let failed = 0;
for (const t of tests.filter((x) => x.name.includes(filter))) {
  const started = Date.now();
  try {
    await Promise.race([t.fn(), new Promise((_, rej) => setTimeout(() => rej(new Error('test timeout')), 60000))]);
    console.log(`PASS ${t.name} (${Date.now() - started} ms)`);
  } catch (e) {
    failed += 1;
    console.log(`FAIL ${t.name}: ${e.stack ?? e}`);
  }
}
rmSync(work, { recursive: true, force: true });
console.log(failed === 0 ? 'all passed' : `${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
