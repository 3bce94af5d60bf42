// End-to-end tests of `toolcache mcp` with real peers: the official
// TypeScript SDK client drives `toolcache mcp -- node tee.js LOG -- <server>`
// for server-memory, server-filesystem and server-everything. Server-side
// calls are counted from tee.js's log, never from toolcache's statistics.
//
// Usage: TOOLCACHE_BIN=... node e2e_mcp.mjs [test-name-filter]
// Exit code 0 when every test passed.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CreateMessageRequestSchema,
  EmptyResultSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { spawn, spawnSync } from 'node:child_process';
import { killOnExit } from '../support/kill_on_exit.mjs';
import assert from 'node:assert/strict';
import {
  chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const BIN = process.env.TOOLCACHE_BIN;
if (!BIN) {
  console.error('TOOLCACHE_BIN is not set');
  process.exit(2);
}
const SERVERS = {
  memory: [join(here, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js')],
  filesystem: [join(here, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js')],
  everything: [join(here, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
  slowWrite: [join(here, 'slow_write_server.mjs')],
};
const TIMEOUT_MS = 20000;

const work = mkdtempSync(join(tmpdir(), 'toolcache-e2e-'));
let logCounter = 0;

// The proxy command line for `server` with its extra args; returns
// {command, args, log, env}.
function proxied(server, extra = [], proxyFlags = []) {
  const log = join(work, `server-${++logCounter}.log`);
  writeFileSync(log, '');
  return {
    command: BIN,
    args: ['mcp', ...proxyFlags, '--', process.execPath, join(here, 'tee.js'), log, '--',
      process.execPath, ...SERVERS[server], ...extra],
    log,
  };
}

// Client->server messages the real server received.
function serverLog(log) {
  return readFileSync(log, 'utf8').split('\n').filter((l) => l.trim())
    .map((l) => { try { return JSON.parse(l); } catch { return { unparsable: l }; } });
}
function serverCalls(log, tool) {
  return serverLog(log).filter((m) => m.method === 'tools/call' && m.params?.name === tool).length;
}
// The proxy's own tools/list requests (sent after notifications/tools/list_changed).
function refreshRequests(log) {
  return serverLog(log).filter((m) => m.method === 'tools/list' && String(m.id).startsWith('toolcache-refresh-'));
}
async function until(pred, what, ms = TIMEOUT_MS) {
  const started = Date.now();
  while (!pred()) {
    if (Date.now() - started > ms) throw new Error(`timeout: ${what} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function connect(p, { capabilities = {}, env = {}, setup } = {}) {
  const client = new Client({ name: 'toolcache-e2e', version: '1.0.0' }, { capabilities });
  if (setup) setup(client);
  const transport = new StdioClientTransport({
    command: p.command, args: p.args, env: { ...process.env, ...env }, stderr: 'inherit',
  });
  await client.connect(transport);
  return { client, transport };
}

function text(result) {
  return result.content.map((c) => c.text ?? '').join('');
}

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timeout: ${what} after ${ms} ms`)), ms);
    }),
  ]);
}

// A raw line-level session with the proxy (for malformed lines, unknown
// protocol versions, concurrent identical calls).
function rawSession(p, env = {}) {
  const child = killOnExit(spawn(p.command, p.args, { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, ...env } }));
  const messages = [];
  const waiters = [];
  let buf = '';
  child.stdout.on('data', (d) => {
    buf += d.toString('utf8');
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (!line.trim()) continue;
      let m;
      try { m = JSON.parse(line); } catch { m = { unparsable: line }; }
      messages.push(m);
      for (const w of [...waiters]) {
        if (w.pred(m)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(m);
        }
      }
    }
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return {
    child,
    messages,
    exited,
    send(obj) {
      if (Buffer.isBuffer(obj)) child.stdin.write(Buffer.concat([obj, Buffer.from('\n')]));
      else child.stdin.write((typeof obj === 'string' ? obj : JSON.stringify(obj)) + '\n');
    },
    // Several messages in one write (one read on the proxy's side).
    sendAll(objs) { child.stdin.write(objs.map((o) => JSON.stringify(o) + '\n').join('')); },
    wait(pred, what) {
      const found = messages.find(pred);
      if (found) return Promise.resolve(found);
      return withTimeout(new Promise((resolve) => waiters.push({ pred, resolve })), TIMEOUT_MS, what);
    },
    async initialize(version = '2025-06-18') {
      this.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
      const r = await this.wait((m) => m.id === 'init', 'initialize');
      this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      return r;
    },
    close() { child.stdin.end(); return exited; },
  };
}

// Raw bytes to the proxy in one write.
function child_write(s, text) { s.child.stdin.write(text); }

const tests = [];
function test(name, fn) { tests.push({ name, fn }); }

// --- server-memory -------------------------------------------------------
test('memory: repeated read_graph reaches the server once; hit is marked in _meta only', async () => {
  const p = proxied('memory');
  const { client } = await connect(p, { env: { MEMORY_FILE_PATH: join(work, 'mem1.jsonl') } });
  await client.listTools();
  const a = await client.callTool({ name: 'read_graph', arguments: {} });
  const b = await client.callTool({ name: 'read_graph', arguments: {} });
  assert.equal(serverCalls(p.log, 'read_graph'), 1);
  assert.deepEqual(b.content, a.content);
  assert.equal(b._meta?.['toolcache/cache']?.hit, true);
  assert.equal(a._meta?.['toolcache/cache'], undefined);
  assert.ok(!JSON.stringify(b.content).includes('toolcache'));
  await client.close();
});

test('memory: create_entities invalidates; read_graph then shows the entity', async () => {
  const p = proxied('memory');
  const { client } = await connect(p, { env: { MEMORY_FILE_PATH: join(work, 'mem2.jsonl') } });
  await client.listTools();
  const before = await client.callTool({ name: 'read_graph', arguments: {} });
  assert.ok(!text(before).includes('toolcache_entity'));
  await client.callTool({ name: 'read_graph', arguments: {} });
  assert.equal(serverCalls(p.log, 'read_graph'), 1);
  await client.callTool({
    name: 'create_entities',
    arguments: { entities: [{ name: 'toolcache_entity', entityType: 'test', observations: ['made by e2e'] }] },
  });
  const after = await client.callTool({ name: 'read_graph', arguments: {} });
  assert.ok(text(after).includes('toolcache_entity'), text(after));
  assert.equal(serverCalls(p.log, 'read_graph'), 2);
  assert.equal(serverCalls(p.log, 'create_entities'), 1);
  await client.close();
});

// --- server-filesystem ---------------------------------------------------
test('filesystem: repeated read reaches the server once; a write is seen by the next read', async () => {
  const dir = mkdtempSync(join(work, 'fs-'));
  const file = join(dir, 'a.txt');
  writeFileSync(file, 'version one');
  const p = proxied('filesystem', [dir]);
  const { client } = await connect(p);
  await client.listTools();
  const r1 = await client.callTool({ name: 'read_text_file', arguments: { path: file } });
  const r2 = await client.callTool({ name: 'read_text_file', arguments: { path: file } });
  assert.equal(text(r1), 'version one');
  assert.equal(text(r2), 'version one');
  assert.equal(serverCalls(p.log, 'read_text_file'), 1);
  // Same arguments in another key order and with _meta: same entry.
  await client.callTool({ name: 'read_text_file', arguments: { path: file }, _meta: { progressToken: 'p1' } });
  assert.equal(serverCalls(p.log, 'read_text_file'), 1);
  const w = await client.callTool({ name: 'write_file', arguments: { path: file, content: 'version two' } });
  assert.ok(!w.isError, text(w));
  const r3 = await client.callTool({ name: 'read_text_file', arguments: { path: file } });
  assert.equal(text(r3), 'version two');
  assert.equal(serverCalls(p.log, 'read_text_file'), 2);
  await client.close();
});

test('filesystem: isError results are not cached', async () => {
  const dir = mkdtempSync(join(work, 'fs-'));
  const p = proxied('filesystem', [dir]);
  const { client } = await connect(p);
  await client.listTools();
  const missing = join(dir, 'missing.txt');
  const e1 = await client.callTool({ name: 'read_text_file', arguments: { path: missing } });
  const e2 = await client.callTool({ name: 'read_text_file', arguments: { path: missing } });
  assert.equal(e1.isError, true);
  assert.equal(e2.isError, true);
  assert.equal(serverCalls(p.log, 'read_text_file'), 2);
  await client.close();
});

test('filesystem: identical concurrent calls make one upstream call, each id answered', async () => {
  const dir = mkdtempSync(join(work, 'fs-'));
  const file = join(dir, 'b.txt');
  writeFileSync(file, 'shared');
  const p = proxied('filesystem', [dir]);
  const s = rawSession(p);
  await s.initialize();
  s.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  await s.wait((m) => m.id === 1, 'tools/list');
  const call = (id) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'read_text_file', arguments: { path: file } } });
  // One write: the proxy reads all three before the server can answer, so
  // the second and third join the first call's flight.
  s.sendAll([call(10), call('eleven'), call(12)]);
  const replies = await Promise.all([10, 'eleven', 12].map((id) => s.wait((m) => m.id === id, `reply ${id}`)));
  for (const r of replies) {
    assert.equal(r.result.content[0].text, 'shared');
    // Answered by the single flight, not served from the store.
    assert.equal(r.result._meta?.['toolcache/cache'], undefined, JSON.stringify(r));
  }
  assert.equal(serverCalls(p.log, 'read_text_file'), 1);
  // The result was stored: a later call is a hit (so the three above were
  // coalesced, not three misses of an uncacheable tool).
  s.send(call(13));
  const hit = await s.wait((m) => m.id === 13, 'reply 13');
  assert.equal(hit.result._meta?.['toolcache/cache']?.hit, true);
  assert.equal(serverCalls(p.log, 'read_text_file'), 1);
  await s.close();
});

test('filesystem: a result over --max-line-bytes is streamed through, and identical calls still get answers', async () => {
  const dir = mkdtempSync(join(work, 'fs-'));
  const file = join(dir, 'big.txt');
  const body = 'z'.repeat(5000);
  writeFileSync(file, body);
  const p = proxied('filesystem', [dir], ['--max-line-bytes', '2048']);
  const s = rawSession(p);
  await s.initialize();
  s.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  await s.wait((m) => m.id === 1, 'tools/list');
  const call = (id) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'read_text_file', arguments: { path: file } } });
  s.send(call(2));
  assert.equal((await s.wait((m) => m.id === 2, 'big reply 2')).result.content[0].text, body);
  // Not cached (it was never parsed), and the flight is over: an identical
  // call gets its own answer instead of waiting forever.
  s.send(call(3));
  assert.equal((await s.wait((m) => m.id === 3, 'big reply 3')).result.content[0].text, body);
  // Coalesced waiters of an over-long answer are re-sent upstream.
  s.sendAll([call(4), call(5), call(6)]);
  for (const id of [4, 5, 6]) {
    assert.equal((await s.wait((m) => m.id === id, `big reply ${id}`)).result.content[0].text, body);
  }
  assert.equal(serverCalls(p.log, 'read_text_file'), 5);
  s.send({ jsonrpc: '2.0', id: 7, method: 'ping' });
  await s.wait((m) => m.id === 7, 'ping');
  await s.close();
  // Every id was answered exactly once (no late duplicate error on exit).
  for (const id of [2, 3, 4, 5, 6]) assert.equal(s.messages.filter((m) => m.id === id).length, 1, `id ${id}`);
});

// --- server-everything ---------------------------------------------------
test('everything: roots/list reaches the client and its answer reaches the server', async () => {
  const p = proxied('everything');
  let asked = 0;
  const { client } = await connect(p, {
    capabilities: { roots: { listChanged: true } },
    setup: (c) => c.setRequestHandler(ListRootsRequestSchema, async () => {
      asked += 1;
      return { roots: [{ uri: 'file:///toolcache-root', name: 'tc-root' }] };
    }),
  });
  const tools = await client.listTools();
  assert.ok(tools.tools.some((t) => t.name === 'get-roots-list'));
  const r = await withTimeout(client.callTool({ name: 'get-roots-list', arguments: {} }), TIMEOUT_MS, 'get-roots-list');
  assert.ok(asked >= 1);
  assert.ok(text(r).includes('file:///toolcache-root'), text(r));
  const answered = serverLog(p.log).filter((m) => m.result?.roots?.[0]?.uri === 'file:///toolcache-root');
  assert.ok(answered.length >= 1, 'the client answer reached the server');
  await client.close();
});

test('everything: sampling/createMessage reaches the client and its answer the server', async () => {
  const p = proxied('everything');
  let sampled = 0;
  const { client } = await connect(p, {
    capabilities: { sampling: {} },
    setup: (c) => c.setRequestHandler(CreateMessageRequestSchema, async () => {
      sampled += 1;
      return { role: 'assistant', model: 'e2e-model', content: { type: 'text', text: 'sampled-by-e2e' } };
    }),
  });
  await client.listTools();
  const r = await withTimeout(client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hi', maxTokens: 5 } }), TIMEOUT_MS, 'sampling');
  assert.equal(sampled, 1);
  assert.ok(text(r).includes('sampled-by-e2e'), text(r));
  await client.close();
});

test('everything: progress notifications pass through', async () => {
  const p = proxied('everything');
  const { client } = await connect(p);
  await client.listTools();
  const progress = [];
  await withTimeout(client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.6, steps: 3 } },
    undefined, { onprogress: (pr) => progress.push(pr) }), TIMEOUT_MS, 'long running');
  assert.ok(progress.length >= 2, `got ${progress.length} progress notifications`);
  await client.close();
});

test('everything: repeated echo is served from cache; unknown method passes to the server', async () => {
  const p = proxied('everything');
  const errors = [];
  const { client } = await connect(p);
  client.onerror = (e) => errors.push(e);
  await client.listTools();
  // server-everything announces notifications/tools/list_changed at start:
  // the proxy lists the tools itself (its replies never reach the client)
  // and caches nothing until the new list is in. A second listing is
  // answered after the proxy's, so the refresh is over by then.
  await until(() => refreshRequests(p.log).length >= 1, 'the proxy refreshing the tool list');
  await client.listTools();
  const a = await client.callTool({ name: 'echo', arguments: { message: 'hello' } });
  const b = await client.callTool({ name: 'echo', arguments: { message: 'hello' } });
  assert.deepEqual(b.content, a.content);
  assert.equal(serverCalls(p.log, 'echo'), 1);
  await assert.rejects(client.request({ method: 'toolcache/e2e-unknown', params: { x: 1 } }, EmptyResultSchema),
    (e) => e.code === -32601);
  assert.equal(serverLog(p.log).filter((m) => m.method === 'toolcache/e2e-unknown').length, 1);
  assert.deepEqual(errors, [], 'no reply to the proxy\'s own requests reached the client');
  await client.close();
});

test('everything: while a task-augmented write runs, nothing is cached; after it ends, caching resumes', async () => {
  const p = proxied('everything');
  const s = rawSession(p);
  await s.initialize('2025-11-25');
  await until(() => refreshRequests(p.log).length >= 1, 'the proxy refreshing the tool list');
  s.send({ jsonrpc: '2.0', id: 'tl', method: 'tools/list' });
  await s.wait((m) => m.id === 'tl', 'tools/list');
  const echo = (id) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message: 'during' } } });
  // simulate-research-query: readOnlyHint false, taskSupport required; its
  // work (about 4 s) goes on after the task handle returns.
  s.send({ jsonrpc: '2.0', id: 'task', method: 'tools/call', params: { name: 'simulate-research-query', arguments: { topic: 'caching' }, task: { ttl: 60000 } } });
  const handle = await s.wait((m) => m.id === 'task', 'task handle');
  const taskId = handle.result?.task?.taskId;
  assert.ok(taskId, JSON.stringify(handle));
  assert.notEqual(handle.result.task.status, 'completed');
  for (const id of ['e1', 'e2']) {
    s.send(echo(id));
    const r = await s.wait((m) => m.id === id, id);
    assert.equal(r.result._meta?.['toolcache/cache'], undefined, 'not served from cache while the task runs');
  }
  assert.equal(serverCalls(p.log, 'echo'), 2);
  // Poll as a client does, until the task is terminal.
  let status = 'working';
  for (let i = 0; status !== 'completed' && i < 100; i++) {
    await new Promise((r) => setTimeout(r, 200));
    s.send({ jsonrpc: '2.0', id: `get${i}`, method: 'tasks/get', params: { taskId } });
    status = (await s.wait((m) => m.id === `get${i}`, 'tasks/get')).result?.status;
  }
  assert.equal(status, 'completed');
  for (const id of ['e3', 'e4']) {
    s.send(echo(id));
    await s.wait((m) => m.id === id, id);
  }
  assert.equal(serverCalls(p.log, 'echo'), 3, 'cached again once the task ended');
  assert.equal(s.messages.find((m) => m.id === 'e4').result._meta?.['toolcache/cache']?.hit, true);
  await s.close();
});

test('everything: malformed client line gets -32700 and the session continues; unknown protocol messages pass', async () => {
  const p = proxied('everything');
  const s = rawSession(p);
  await s.initialize();
  s.send('this is { not json');
  const err = await s.wait((m) => m.error?.code === -32700, 'parse error');
  assert.equal(err.id, null);
  // Invalid UTF-8 never reaches the server; the request is answered under
  // its own id.
  s.send(Buffer.from('{"jsonrpc":"2.0","id":"u8","method":"tools/call","params":{"name":"echo","arguments":{"message":"bad \xff\xfe"}}}', 'latin1'));
  const u8 = await s.wait((m) => m.id === 'u8', 'invalid UTF-8 reply');
  assert.equal(u8.error?.code, -32700);
  assert.match(u8.error.message, /invalid UTF-8/);
  assert.ok(!readFileSync(p.log, 'utf8').includes('"u8"'), 'not forwarded');
  // Unknown fields, odd spacing and _meta reach the server byte for byte
  // (this server drops messages with unknown top-level fields silently).
  const odd = '{"jsonrpc":"2.0",  "id":"odd","method":"x/unknown","params":{"_meta":{"x/y":1.0}},"extra":[1, 2]}';
  s.send(odd);
  // A probe of a protocol version the proxy does not know passes through.
  s.send({ jsonrpc: '2.0', id: 'probe', method: 'server/discover', params: {} });
  const probe = await s.wait((m) => m.id === 'probe', 'server/discover reply');
  assert.equal(probe.error?.code, -32601, 'the server itself answered');
  const lines = readFileSync(p.log, 'utf8').split('\n');
  assert.ok(lines.includes(odd), 'forwarded byte for byte');
  s.send({ jsonrpc: '2.0', id: 5, method: 'ping' });
  const pong = await s.wait((m) => m.id === 5, 'ping');
  assert.deepEqual(pong.result, {});
  await s.close();
});

test('everything: killing the server mid-call gives the client an error naming the signal, and the proxy exits 137', async () => {
  const p = proxied('everything');
  const s = rawSession(p);
  await s.initialize();
  s.send({ jsonrpc: '2.0', id: 'tl', method: 'tools/list' });
  await s.wait((m) => m.id === 'tl', 'tools/list');
  s.send({ jsonrpc: '2.0', id: 'long', method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 30, steps: 30 } } });
  await until(() => serverCalls(p.log, 'trigger-long-running-operation') === 1, 'the call reaching the server');
  const pid = Number(readFileSync(`${p.log}.pid`, 'utf8'));
  process.kill(pid, 'SIGKILL');
  const started = Date.now();
  const reply = await s.wait((m) => m.id === 'long', 'reply after kill');
  assert.ok(Date.now() - started < 10000);
  assert.equal(reply.error?.code, -32000);
  // The cause is named (a direct connection would only see a closed pipe).
  assert.match(reply.error.message, /killed by signal 9/);
  // The proxy ends with the server's status: 128 + SIGKILL.
  const exit = await withTimeout(s.exited, 10000, 'proxy exit');
  assert.equal(exit.code, 137);
  assert.equal(s.messages.filter((m) => m.id === 'long').length, 1);
});

test('cli: configuration errors name the file line and exit 2', async () => {
  const dir = mkdtempSync(join(work, 'cfg-'));
  const cases = [
    ['capacityBytes: 1MiB\npolicy: vaacc\n', /cfg\.yaml:2: unknown policy 'vaacc' \(did you mean 'vaac'\?\)/],
    ['policy: vaac\npolicyParams:\n  lamda1: 1\n', /cfg\.yaml:3: policy 'vaac' has no knob 'lamda1' \(did you mean 'lambda1'\?\)/],
    ['ttlSeconds: 60\nttlSeconds: 600\n', /cfg\.yaml:2: duplicate key 'ttlSeconds' \(first given on line 1/],
    ['capacityBytes: 0\n', /cfg\.yaml:1: 'capacityBytes' must be > 0/],
  ];
  for (const [yaml, expected] of cases) {
    const cfg = join(dir, 'cfg.yaml');
    writeFileSync(cfg, yaml);
    const r = spawnSync(BIN, ['mcp', '--config', cfg, '--', 'cat'], { encoding: 'utf8', input: '' });
    assert.equal(r.status, 2, yaml);
    assert.match(r.stderr, expected);
  }
});

test('wrap: the rewritten file and its backups keep a 0600 mode', async () => {
  const dir = mkdtempSync(join(work, 'wrap-'));
  const file = join(dir, 'claude_desktop_config.json');
  writeFileSync(file, JSON.stringify({ mcpServers: { gh: { command: 'gh-mcp', env: { GITHUB_TOKEN: 'secret' } } } }));
  chmodSync(file, 0o600);
  const mode = (f) => statSync(f).mode & 0o777;
  const run = (...args) => spawnSync(BIN, ['wrap', ...args, file], { encoding: 'utf8' });
  const w = run();
  assert.equal(w.status, 0, w.stderr);
  assert.equal(mode(file), 0o600);
  assert.equal(mode(`${file}.bak`), 0o600);
  assert.equal(JSON.parse(readFileSync(file, 'utf8')).mcpServers.gh.args[0], 'mcp');
  const u = run('--unwrap');
  assert.equal(u.status, 0, u.stderr);
  assert.equal(mode(file), 0o600);
  assert.equal(mode(`${file}.bak.1`), 0o600);
  assert.equal(JSON.parse(readFileSync(file, 'utf8')).mcpServers.gh.command, 'gh-mcp');
  // A group-readable file stays exactly that.
  chmodSync(file, 0o640);
  assert.equal(run().status, 0);
  assert.equal(mode(file), 0o640);
  assert.equal(mode(`${file}.bak.2`), 0o640);
});

test('stats: --stats FILE reports hits and bypass reasons on SIGUSR1 and on exit', async () => {
  const dir = mkdtempSync(join(work, 'fs-'));
  const file = join(dir, 'c.txt');
  writeFileSync(file, 'stats');
  const stats = join(work, 'stats.json');
  const p = proxied('filesystem', [dir], ['--stats', stats]);
  const { client, transport } = await connect(p);
  await client.listTools();
  await client.callTool({ name: 'read_text_file', arguments: { path: file } });
  await client.callTool({ name: 'read_text_file', arguments: { path: file } });
  // SIGUSR1 writes the statistics while the session runs.
  process.kill(transport.pid, 'SIGUSR1');
  for (let i = 0; i < 100 && !existsSync(stats); i++) await new Promise((r) => setTimeout(r, 50));
  // The one stats shape (src/runtime/stats.h): the engine under "cache".
  const live = JSON.parse(readFileSync(stats, 'utf8')).cache;
  assert.equal(live.calls, 2);
  assert.equal(live.hits, 1);
  rmSync(stats);
  await client.callTool({ name: 'write_file', arguments: { path: file, content: 'x' } });
  await client.close();
  for (let i = 0; i < 100 && !existsSync(stats); i++) await new Promise((r) => setTimeout(r, 50));
  const whole = JSON.parse(readFileSync(stats, 'utf8'));
  assert.equal(whole.face, 'mcp');
  assert.deepEqual(Object.keys(whole.session), ['clientParseErrors', 'serverParseErrors', 'failedOnServerExit']);
  const s = whole.cache;
  assert.equal(s.calls, 3);
  assert.equal(s.hits, 1);
  assert.equal(s.misses, 1);
  assert.equal(s.bypasses, 1);
  assert.ok(Object.keys(s.bypassesByReason).length === 1);
  assert.ok(s.bytesServed > 0);
  assert.ok(s.savedSeconds > 0);
});

// --- issue 10: no false hits, no hangs, nothing stale or revoked --------
test('filesystem: a call with an id the server drops or echoes differently never holds up an identical call', async () => {
  const dir = mkdtempSync(join(work, 'fs-'));
  const p = proxied('filesystem', [dir]);
  const s = rawSession(p);
  await s.initialize();
  s.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  await s.wait((m) => m.id === 1, 'tools/list');
  // The TypeScript SDK drops requests whose id is not a string or a safe
  // integer (zod's int()), and any envelope with unknown members: none of
  // these is ever answered, so nobody may wait on them.
  const odd = ['1.5', 'null', 'true', '9007199254740993', '{"x":1}', '2.0'];
  for (const [i, id] of odd.entries()) {
    const file = join(dir, `odd${i}.txt`);
    writeFileSync(file, `content ${i}`);
    const args = JSON.stringify({ name: 'read_text_file', arguments: { path: file } });
    // Both in one write: the second would join the first's flight.
    child_write(s, `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${args}}\n`
      + `{"jsonrpc":"2.0","id":"plain${i}","method":"tools/call","params":${args}}\n`);
    const r = await s.wait((m) => m.id === `plain${i}`, `plain${i} after id ${id}`);
    assert.equal(r.result.content[0].text, `content ${i}`);
  }
  // The odd calls reached the server as sent (and were never answered).
  assert.equal(serverCalls(p.log, 'read_text_file'), 2 * odd.length);
  await s.close();
});

test('everything: a client id equal to the proxy\'s own refresh id gets its own answer', async () => {
  // tee holds tools/list requests (the proxy's refresh) for a moment, so the
  // client's ping with the same id is sent while the refresh is in flight.
  const p = proxied('everything');
  const s = rawSession(p, { TEE_DELAY: 'tools/list:700' });
  await s.initialize();
  await until(() => refreshRequests(p.log).length >= 1, 'the proxy refreshing the tool list');
  const ownId = refreshRequests(p.log)[0].id;
  s.send({ jsonrpc: '2.0', id: ownId, method: 'ping' });
  const pong = await s.wait((m) => m.id === ownId, 'the client\'s ping');
  assert.deepEqual(pong.result, {}, JSON.stringify(pong));
  // The refresh got the tool list (not the ping's {}): echo is cached again.
  const echo = (id) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } });
  await new Promise((r) => setTimeout(r, 900));
  for (const id of ['e1', 'e2']) {
    s.send(echo(id));
    await s.wait((m) => m.id === id, id);
  }
  assert.equal(serverCalls(p.log, 'echo'), 1, 'cached after the refresh');
  assert.equal(s.messages.filter((m) => m.id === ownId).length, 1, 'one answer under that id');
  await s.close();
});

test('filesystem: with invalidation: resource, a write through a relative path drops the cached read of the absolute one', async () => {
  const dir = mkdtempSync(join(work, 'fs-'));
  const file = join(dir, 'a.txt');
  writeFileSync(file, 'before');
  const cfg = join(work, 'resource-scope.yaml');
  writeFileSync(cfg, 'invalidation: resource\n');
  const p = proxied('filesystem', [dir], ['--config', cfg]);
  const { client } = await connect(p);
  await client.listTools();
  const read = () => client.callTool({ name: 'read_text_file', arguments: { path: file } });
  assert.equal(text(await read()), 'before');
  assert.equal(text(await read()), 'before');
  assert.equal(serverCalls(p.log, 'read_text_file'), 1);
  // server-filesystem resolves a.txt against its allowed folder.
  const w = await client.callTool({ name: 'write_file', arguments: { path: 'a.txt', content: 'after' } });
  assert.ok(!w.isError, text(w));
  assert.equal(readFileSync(file, 'utf8'), 'after', 'the server wrote the absolute file');
  assert.equal(text(await read()), 'after');
  assert.equal(serverCalls(p.log, 'read_text_file'), 2);
  await client.close();
});

test('filesystem: after the client drops a root, a file under it is no longer served from cache', async () => {
  const keep = mkdtempSync(join(work, 'root-keep-'));
  const drop = mkdtempSync(join(work, 'root-drop-'));
  const file = join(drop, 'secret.txt');
  writeFileSync(file, 'old root content');
  let roots = [keep, drop];
  const p = proxied('filesystem', [keep, drop]);
  const { client } = await connect(p, {
    capabilities: { roots: { listChanged: true } },
    setup: (c) => c.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: roots.map((d) => ({ uri: `file://${d}`, name: d })),
    })),
  });
  await client.listTools();
  const read = () => client.callTool({ name: 'read_text_file', arguments: { path: file } });
  const allowed = async () => text(await client.callTool({ name: 'list_allowed_directories', arguments: {} }));
  // The server asks for the roots after initialization; once it has them
  // (and the proxy's settle time after a roots answer passed), reads cache.
  const rootsAnswers = () => serverLog(p.log).filter((m) => m.result?.roots).length;
  await until(() => rootsAnswers() === 1, 'the first roots/list answer');
  await new Promise((r) => setTimeout(r, 2200));
  assert.equal(text(await read()), 'old root content');
  assert.equal(text(await read()), 'old root content');
  assert.equal(serverCalls(p.log, 'read_text_file'), 1, 'cached');
  // The client drops the second root; the server asks for the roots again
  // and applies them (within milliseconds of the answer).
  roots = [keep];
  await client.sendRootsListChanged();
  await until(() => rootsAnswers() === 2, 'the second roots/list answer');
  await new Promise((r) => setTimeout(r, 300));
  const denied = await read();
  assert.equal(denied.isError, true, `served: ${text(denied)}`);
  assert.match(text(denied), /Access denied/);
  assert.equal(serverCalls(p.log, 'read_text_file'), 2);
  // Once settled, the new answers are what gets cached.
  await new Promise((r) => setTimeout(r, 2000));
  assert.ok(!(await allowed()).includes(drop));
  assert.ok(!(await allowed()).includes(drop));
  assert.equal(serverCalls(p.log, 'list_allowed_directories'), 1);
  await client.close();
});

// --- a cancelled write (slow_write_server.mjs) ----------------------------
// An SDK server never answers a request the client cancelled, yet the write
// goes on and lands. A read that ran while it was in flight must not be
// served after it landed (before, the proxy waited for the answer forever,
// never invalidated again, and served the pre-write read; attackK finding 2).
test('cancelled write: the read that raced it is not served after it lands', async () => {
  const p = proxied('slowWrite', [], ['--name', 'slow-notes']);
  const s = rawSession(p, { WRITE_DELAY_MS: '400' });
  await s.initialize();
  const read = (id) => {
    s.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'read_note', arguments: { id: 'a' } } });
    return s.wait((m) => m.id === id, `read ${id}`);
  };
  assert.equal(text((await read(2)).result), 'note a = v1');
  s.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'write_note', arguments: { id: 'a', text: 'v2' } } });
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(text((await read(4)).result), 'note a = v1', 'the write landed too early for this test');
  s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3, reason: 'user pressed Esc' } });
  await until(() => serverLog(p.log).some((m) => m.method === 'notifications/cancelled'),
    'the cancellation reaching the server');
  await new Promise((r) => setTimeout(r, 800));  // the write has landed
  const after = await read(5);
  assert.equal(text(after.result), 'note a = v2', 'the read that raced the cancelled write was served');
  assert.equal(after.result._meta?.['toolcache/cache'], undefined);
  assert.equal(serverCalls(p.log, 'read_note'), 3);
  assert.ok(!s.messages.some((m) => m.id === 3), 'the cancelled write was answered');
  await s.close();
});

// --- runner --------------------------------------------------------------
const filter = process.argv[2] ?? '';
let failed = 0;
for (const t of tests.filter((x) => x.name.includes(filter))) {
  const started = Date.now();
  try {
    await withTimeout(t.fn(), 60000, t.name);
    console.log(`PASS ${t.name} (${Date.now() - started} ms)`);
  } catch (e) {
    failed += 1;
    console.log(`FAIL ${t.name}: ${e.stack ?? e}`);
  }
}
rmSync(work, { recursive: true, force: true });
console.log(failed === 0 ? 'all passed' : `${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
