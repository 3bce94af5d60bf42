// End-to-end tests of `toolcache mcp --url`: the official TypeScript SDK
// client (StdioClientTransport) spawns toolcache, which speaks Streamable
// HTTP to a real remote-capable server from npm (server-everything in
// streamableHttp mode) run on 127.0.0.1 with a free port. Server-side
// traffic is counted from the server's own stdout ("Received MCP POST
// request" per POST), never only from toolcache's statistics.
//
// Usage: TOOLCACHE_BIN=... node e2e_mcp_url.mjs [test-name-filter]
// Exit code 0 when every test passed.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { spawn, spawnSync } from 'node:child_process';
import { killOnExit } from '../support/kill_on_exit.mjs';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const BIN = process.env.TOOLCACHE_BIN;
if (!BIN) {
  console.error('TOOLCACHE_BIN is not set');
  process.exit(2);
}
const EVERYTHING = join(here, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const TIMEOUT_MS = 20000;
const work = mkdtempSync(join(tmpdir(), 'toolcache-e2e-url-'));

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function until(pred, what, ms = TIMEOUT_MS) {
  const started = Date.now();
  while (!pred()) {
    if (Date.now() - started > ms) throw new Error(`timeout: ${what} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// server-everything over Streamable HTTP on `port`; resolves once listening.
async function startEverything(port) {
  const child = killOnExit(spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'],
  }));
  const server = { child, out: '', err: '', exited: false };
  child.stdout.on('data', (d) => { server.out += d.toString(); });
  child.stderr.on('data', (d) => { server.err += d.toString(); });
  child.on('exit', () => { server.exited = true; });
  await until(() => server.err.includes('listening on port') || server.exited, 'server start');
  if (server.exited) throw new Error(`server-everything did not start: ${server.err}`);
  return server;
}
async function stopServer(server, signal = 'SIGKILL') {
  if (server.exited) return;
  server.child.kill(signal);
  await until(() => server.exited, 'server exit');
}
const posts = (server) => server.out.split('Received MCP POST request').length - 1;
// The server's log line and its answer come through two pipes: the answer
// can arrive first (under ASan with the machine loaded, "error call 1
// reached the server: 3 !== 4"). Waits for the line, up to 2 s.
async function reachedServer(server, n) {
  try {
    await until(() => posts(server) >= n, 'the server log', 2000);
  } catch { /* the assertion after says what was counted */ }
}

async function connect(args, { env = {} } = {}) {
  const client = new Client({ name: 'toolcache-e2e-url', version: '1.0.0' }, { capabilities: {} });
  const transport = new StdioClientTransport({
    command: BIN, args: ['mcp', ...args], env: { ...process.env, ...env }, stderr: 'pipe',
  });
  const log = { text: '' };
  transport.stderr?.on('data', (d) => { log.text += d.toString(); });
  try {
    await client.connect(transport);
  } catch (e) {
    await transport.close().catch(() => {});
    throw e;
  }
  return { client, transport, log };
}

const text = (result) => result.content.map((c) => c.text ?? '').join('');
const isHit = (result) => result._meta?.['toolcache/cache']?.hit === true;

async function readStats(proxyPid, file) {
  rmSync(file, { force: true });
  process.kill(proxyPid, 'SIGUSR1');
  await until(() => existsSync(file), 'stats file');
  return JSON.parse(readFileSync(file, 'utf8')).cache;  // src/runtime/stats.h
}

const tests = [];
function test(name, fn) { tests.push({ name, fn }); }

test('cli: bad URL, bad header, unset variable and --url with a command exit 2', async () => {
  const run = (...args) => spawnSync(BIN, ['mcp', ...args], { input: '', encoding: 'utf8', env: { ...process.env, TOOLCACHE_E2E_UNSET: '' } });
  for (const [args, pattern] of [
    [['--url', 'not-a-url'], /not absolute/],
    [['--url', 'ftp://127.0.0.1/mcp'], /http/],
    [['--url', 'http://127.0.0.1:1/mcp', '--header', 'NoColonHere'], /Name: value/],
    [['--url', 'http://127.0.0.1:1/mcp', '--header', 'X-Key: ${TOOLCACHE_E2E_NOT_SET_VAR}'], /TOOLCACHE_E2E_NOT_SET_VAR is not set/],
    [['--url', 'http://127.0.0.1:1/mcp', '--', 'cat'], /either --url or a server command/],
  ]) {
    const r = run(...args);
    assert.equal(r.status, 2, `${args.join(' ')}: status ${r.status} ${r.stderr}`);
    assert.match(r.stderr, pattern, args.join(' '));
  }
});

test('everything over HTTP: initialize, tools/list, repeated echo served from cache, DELETE at the end', async () => {
  const port = await freePort();
  const server = await startEverything(port);
  const stats = join(work, 'stats1.json');
  try {
    const { client, transport, log } = await connect(
      ['--url', `http://127.0.0.1:${port}/mcp`, '--name', 'everything', '--stats', stats,
        '--log-level', 'debug', '--header', 'X-Secret-Token: ${TOOLCACHE_E2E_SECRET}'],
      { env: { TOOLCACHE_E2E_SECRET: 'do-not-log-7f3a9c' } });
    assert.equal(client.getServerVersion()?.name, 'mcp-servers/everything');
    const tools = await client.listTools();
    assert.ok(tools.tools.some((t) => t.name === 'echo'), 'echo listed');
    const first = await client.callTool({ name: 'echo', arguments: { message: 'hello' } });
    assert.equal(text(first), 'Echo: hello');
    assert.ok(!isHit(first), 'first call is a miss');
    const before = posts(server);
    for (let i = 0; i < 3; i++) {
      const again = await client.callTool({ name: 'echo', arguments: { message: 'hello' } });
      assert.equal(text(again), 'Echo: hello');
      assert.ok(isHit(again), `call ${i + 2} is a hit`);
    }
    assert.equal(posts(server), before, 'hits never reach the server');
    const s = await readStats(transport.pid, stats);
    assert.equal(s.hits, 3);
    assert.equal(s.misses, 1);
    // A different argument is a miss that reaches the server.
    const other = await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } });
    assert.match(text(other), /5/);
    await reachedServer(server, before + 1);
    assert.equal(posts(server), before + 1);
    await client.close();
    await until(() => server.out.includes('Received session termination request'), 'DELETE at shutdown');
    assert.ok(!log.text.includes('do-not-log-7f3a9c'), 'header values are never logged');
    assert.match(log.text, /initialized http:\/\/127\.0\.0\.1/, 'debug log was captured');
    // The GET stream for server-initiated messages was opened.
    assert.match(log.text, /opened the GET event stream/);
    assert.ok(server.out.includes('Received MCP GET request'), 'the server saw the GET');
  } finally {
    await stopServer(server);
  }
});

test('everything over HTTP: errors pass as errors and are never cached', async () => {
  const port = await freePort();
  const server = await startEverything(port);
  try {
    const { client } = await connect(['--url', `http://127.0.0.1:${port}/mcp`, '--name', 'everything', '--no-get-stream']);
    await client.listTools();  // the SDK lists tools before a first call otherwise
    for (let i = 0; i < 2; i++) {
      // Invalid arguments: the server answers with an error each time.
      const before = posts(server);
      let failed;
      try {
        const r = await client.callTool({ name: 'echo', arguments: { message: 42 } });
        failed = r.isError === true ? r : null;
        assert.ok(failed, `an error result, got ${JSON.stringify(r)}`);
        assert.ok(!isHit(r), 'an error is never a hit');
      } catch (e) {
        failed = e;  // a JSON-RPC error is fine too
      }
      assert.ok(failed);
      await reachedServer(server, before + 1);
      assert.equal(posts(server), before + 1, `error call ${i + 1} reached the server`);
    }
    await client.close();
    assert.ok(!server.out.includes('Received MCP GET request'), '--no-get-stream opens no GET');
  } finally {
    await stopServer(server);
  }
});

test('everything over HTTP: server killed mid-call gives clean errors; recovery when it comes back', async () => {
  const port = await freePort();
  let server = await startEverything(port);
  try {
    const { client } = await connect(['--url', `http://127.0.0.1:${port}/mcp`, '--name', 'everything', '--timeout', '30']);
    await client.listTools();  // teaches the cache the tools' annotations
    assert.equal(text(await client.callTool({ name: 'echo', arguments: { message: 'a' } })), 'Echo: a');
    // A long call in flight when the server dies.
    const long = client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 10, steps: 10 } })
      .then((r) => { throw new Error(`answered: ${JSON.stringify(r)}`); }, (e) => e);
    await until(() => posts(server) >= 5, 'the long call reached the server');
    await new Promise((r) => setTimeout(r, 300));
    await stopServer(server);
    const e = await long;
    assert.ok(/toolcache/.test(e.message) && e.code === -32000, `in-flight call fails cleanly: ${e.message}`);
    // While the server is down: an error, quickly, not a hang.
    const t0 = Date.now();
    await assert.rejects(client.callTool({ name: 'echo', arguments: { message: 'b' } }),
      (e) => /toolcache/.test(e.message) && /connect|closed/.test(e.message));
    assert.ok(Date.now() - t0 < 5000, 'a dead server answers fast');
    // A cached answer is still served while the server is down.
    assert.ok(isHit(await client.callTool({ name: 'echo', arguments: { message: 'a' } })));
    // The server comes back (a new process: it does not know the session).
    server = await startEverything(port);
    const c = await client.callTool({ name: 'echo', arguments: { message: 'c' } });
    assert.equal(text(c), 'Echo: c');
    assert.ok(!isHit(c));
    assert.equal(text(await client.callTool({ name: 'echo', arguments: { message: 'c' } })), 'Echo: c');
    await client.close();
  } finally {
    await stopServer(server);
  }
});

test('TLS: a self-signed endpoint fails without --ca-file and works with it', async () => {
  const dir = mkdtempSync(join(work, 'tls-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  const gen = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key,
    '-out', cert, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost'], { encoding: 'utf8' });
  assert.equal(gen.status, 0, `openssl: ${gen.stderr}`);
  const port = await freePort();
  const server = await startEverything(port);
  const front = killOnExit(spawn(process.execPath, [join(here, 'tls_front.mjs'), cert, key, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] }));
  try {
    let out = '';
    front.stdout.on('data', (d) => { out += d; });
    await until(() => /listening \d+/.test(out), 'TLS front');
    const url = `https://localhost:${out.match(/listening (\d+)/)[1]}/mcp`;
    // Without the CA: the handshake fails and initialize gets an error.
    await assert.rejects(connect(['--url', url]), /certificate|TLS|handshake/i);
    const { client } = await connect(['--url', url, '--ca-file', cert, '--name', 'tls']);
    await client.listTools();
    assert.equal(text(await client.callTool({ name: 'echo', arguments: { message: 'tls' } })), 'Echo: tls');
    assert.ok(isHit(await client.callTool({ name: 'echo', arguments: { message: 'tls' } })));
    await client.close();
  } finally {
    front.kill('SIGKILL');
    await stopServer(server);
  }
});

test('config: servers.<name>.url and headers are used with --name and no command', async () => {
  const port = await freePort();
  const server = await startEverything(port);
  try {
    const cfg = join(work, 'remote.yaml');
    writeFileSync(cfg, `servers:\n  ev:\n    url: http://127.0.0.1:${port}/mcp\n    headers:\n      X-Token: "\${TOOLCACHE_E2E_TOKEN}"\n`);
    const { client } = await connect(['--config', cfg, '--name', 'ev'], { env: { TOOLCACHE_E2E_TOKEN: 't' } });
    assert.equal(text(await client.callTool({ name: 'echo', arguments: { message: 'cfg' } })), 'Echo: cfg');
    await client.close();
    const r = spawnSync(BIN, ['mcp', '--config', cfg, '--name', 'ev'], { input: '', encoding: 'utf8', env: { ...process.env, TOOLCACHE_E2E_TOKEN: undefined } });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /TOOLCACHE_E2E_TOKEN is not set/);
  } finally {
    await stopServer(server);
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
