// End-to-end tests of `toolcache mcp --store`: real processes sharing a real
// redis-server (started here on a free port) or one SQLite file, in front of
// the real npm filesystem server, driven by the official SDK client. Upstream
// calls are counted from tee.js's log, never from toolcache's statistics.
//
// Usage: TOOLCACHE_BIN=... node e2e_store.mjs [test-name-filter]
// Prints MEASURE lines (the figures docs/STORE.md quotes); exit 0 when every
// test passed.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { spawn } from 'node:child_process';
import { killOnExit } from '../support/kill_on_exit.mjs';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const BIN = process.env.TOOLCACHE_BIN;
if (!BIN) {
  console.error('TOOLCACHE_BIN is not set');
  process.exit(2);
}
const FS_SERVER = join(here, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const REDIS = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => existsSync(p));
const work = mkdtempSync(join(tmpdir(), 'toolcache-e2e-store-'));
let counter = 0;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function ping(port) {
  return new Promise((resolve) => {
    const c = net.connect(port, '127.0.0.1');
    let data = '';
    c.on('connect', () => c.write('PING\r\n'));
    c.on('data', (d) => { data += d; if (data.includes('\r\n')) { c.destroy(); resolve(data.startsWith('+PONG')); } });
    c.on('error', () => resolve(false));
    setTimeout(() => { c.destroy(); resolve(false); }, 1000);
  });
}

// A redis-server of our own (no persistence) on `port`.
async function startRedis(port) {
  assert.ok(REDIS, 'redis-server not found: run scripts/setup.sh');
  const child = killOnExit(spawn(REDIS, ['--port', String(port), '--bind', '127.0.0.1', '--save', '',
    '--appendonly', 'no', '--dir', work, '--logfile', join(work, `redis-${port}.log`)],
  { stdio: 'ignore' }));
  for (let i = 0; i < 200; i++) {
    if (await ping(port)) return child;
    await sleep(25);
  }
  child.kill('SIGKILL');
  throw new Error('redis-server did not start');
}
function killHard(child) {
  return new Promise((resolve) => { child.once('exit', resolve); child.kill('SIGKILL'); });
}

// One `toolcache mcp` process in front of server-filesystem for `dir`; every
// process uses --name fs so they share keys.
async function proxy(dir, store) {
  const n = ++counter;
  const log = join(work, `server-${n}.log`);
  const stats = join(work, `stats-${n}.json`);
  writeFileSync(log, '');
  const client = new Client({ name: 'toolcache-e2e-store', version: '1.0.0' }, { capabilities: {} });
  const transport = new StdioClientTransport({
    command: BIN,
    args: ['mcp', '--name', 'fs', '--store', store, '--stats', stats, '--',
      process.execPath, join(here, 'tee.js'), log, '--', process.execPath, FS_SERVER, dir],
    env: { ...process.env }, stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr += d; });
  await client.connect(transport);
  await client.listTools();
  return {
    client,
    log,
    stats,
    stderr: () => stderr,
    upstream: (tool) => readFileSync(log, 'utf8').split('\n').filter((l) => l.trim())
      .map((l) => JSON.parse(l)).filter((m) => m.method === 'tools/call' && m.params?.name === tool).length,
    read: async (path) => {
      const r = await client.callTool({ name: 'read_text_file', arguments: { path } });
      assert.ok(!r.isError, JSON.stringify(r));
      return r.content?.[0]?.text;
    },
    write: async (path, content) => {
      const r = await client.callTool({ name: 'write_file', arguments: { path, content } });
      assert.ok(!r.isError, JSON.stringify(r));
    },
    close: async () => {
      await client.close();
      for (let i = 0; i < 200 && !existsSync(stats); i++) await sleep(25);
      return JSON.parse(readFileSync(stats, 'utf8')).cache;  // src/runtime/stats.h
    },
  };
}

const tests = [];
function test(name, fn) { tests.push({ name, fn }); }

test('redis: the second process\'s first repeated call is a hit; a write through one invalidates for both', async () => {
  const port = await freePort();
  const redis = await startRedis(port);
  try {
    const dir = mkdtempSync(join(work, 'fs-'));
    const file = join(dir, 'a.txt');
    writeFileSync(file, 'version one');
    const store = `redis://127.0.0.1:${port}/0`;
    const a = await proxy(dir, store);
    const b = await proxy(dir, store);
    assert.equal(await a.read(file), 'version one');
    assert.equal(a.upstream('read_text_file'), 1);
    assert.equal(await b.read(file), 'version one');
    assert.equal(b.upstream('read_text_file'), 0, 'B\'s first call was not a hit');
    assert.equal(await b.read(file), 'version one');
    assert.equal(b.upstream('read_text_file'), 0);
    await a.write(file, 'version two');
    assert.equal(await b.read(file), 'version two', 'B served the pre-write result');
    assert.equal(b.upstream('read_text_file'), 1);
    assert.equal(await a.read(file), 'version two');
    assert.equal(a.upstream('read_text_file'), 1, 'A did not get B\'s fresh result');
    const sa = await a.close();
    const sb = await b.close();
    assert.equal(sb.storeHits, 1);
    assert.equal(sa.storeHits, 1);
    console.log(`MEASURE two-processes: B first repeated call hit=${b.upstream('read_text_file') === 1}; `
      + `A hits=${sa.hits} storeHits=${sa.storeHits}; B hits=${sb.hits} storeHits=${sb.storeHits}`);
  } finally {
    await killHard(redis);
  }
});

test('redis: killed mid-run and restarted: every answer correct, bypasses counted by reason, hits resume', async () => {
  const port = await freePort();
  let redis = await startRedis(port);
  const dir = mkdtempSync(join(work, 'fs-'));
  const files = [join(dir, 'x.txt'), join(dir, 'y.txt')];
  const expected = new Map();
  let version = 0;
  for (const f of files) { expected.set(f, `v${++version}`); writeFileSync(f, expected.get(f)); }
  const store = `redis://127.0.0.1:${port}/0?timeout_ms=100`;
  const a = await proxy(dir, store);
  const b = await proxy(dir, store);
  let answers = 0;
  let wrong = 0;
  const check = async (p, f) => {
    const got = await p.read(f);
    answers += 1;
    if (got !== expected.get(f)) wrong += 1;
  };
  const round = async (i) => {
    for (const f of files) {
      await check(a, f);
      await check(b, f);
    }
    if (i % 3 === 2) {
      const f = files[i % files.length];
      expected.set(f, `v${++version}`);
      await (i % 2 ? a : b).write(f, expected.get(f));
    }
  };
  try {
    for (let i = 0; i < 6; i++) await round(i);
    const upBefore = a.upstream('read_text_file') + b.upstream('read_text_file');
    await killHard(redis);
    redis = null;
    for (let i = 6; i < 12; i++) await round(i);
    const upDown = a.upstream('read_text_file') + b.upstream('read_text_file') - upBefore;
    redis = await startRedis(port);
    // Hits resume by themselves: after the breaker's backoff (at most 2 s),
    // a repeated read in one process is served without reaching its server.
    let resumed = false;
    const t0 = Date.now();
    for (let i = 12; i < 200 && !resumed; i++) {
      await round(i);
      await check(b, files[0]);
      const before = b.upstream('read_text_file');
      await check(b, files[0]);
      resumed = b.upstream('read_text_file') === before;
      if (!resumed) await sleep(100);
    }
    const resumeMs = Date.now() - t0;
    const sa = await a.close();
    const sb = await b.close();
    assert.equal(wrong, 0, `${wrong} wrong answers of ${answers}`);
    assert.ok(resumed, 'hits did not resume after Redis came back');
    const down = (s) => s.bypassesByReason.store_unavailable ?? 0;
    assert.ok(down(sa) > 0 && down(sb) > 0, JSON.stringify([sa.bypassesByReason, sb.bypassesByReason]));
    assert.equal(upDown, 6 * 2 * files.length, 'while Redis was down every read went upstream');
    assert.ok(/store redis:\/\/127\.0\.0\.1:\d+\/0: store_unavailable/.test(a.stderr()), a.stderr());
    const warnings = (a.stderr().match(/store_unavailable/g) ?? []).length;
    console.log(`MEASURE redis-outage: answers=${answers} wrong=${wrong} reads-upstream-while-down=${upDown} `
      + `A.bypasses=${JSON.stringify(sa.bypassesByReason)} B.bypasses=${JSON.stringify(sb.bypassesByReason)} `
      + `A.storeErrors=${JSON.stringify(sa.storeErrors)} warnings-in-A-log=${warnings} `
      + `hits-resumed-after=${resumeMs}ms A.hits=${sa.hits} B.hits=${sb.hits}`);
  } finally {
    if (redis) await killHard(redis);
  }
});

test('sqlite: a restarted proxy\'s first repeated call is a hit', async () => {
  const dir = mkdtempSync(join(work, 'fs-'));
  const file = join(dir, 'a.txt');
  writeFileSync(file, 'persisted');
  const store = `sqlite:${join(work, 'results.db')}`;
  const first = await proxy(dir, store);
  assert.equal(await first.read(file), 'persisted');
  assert.equal(first.upstream('read_text_file'), 1);
  await first.close();
  const second = await proxy(dir, store);
  assert.equal(await second.read(file), 'persisted');
  assert.equal(second.upstream('read_text_file'), 0, 'the restarted proxy went upstream');
  await second.write(file, 'changed');
  assert.equal(await second.read(file), 'changed');
  const s = await second.close();
  assert.equal(s.storeHits, 1);
  // The write is remembered across restarts too.
  const third = await proxy(dir, store);
  assert.equal(await third.read(file), 'changed');
  assert.equal(third.upstream('read_text_file'), 0);
  await third.close();
  console.log(`MEASURE sqlite-restart: first repeated call after restart hit=${second.upstream('read_text_file') === 1}`);
});

// --- runner --------------------------------------------------------------
const filter = process.argv[2] ?? '';
let failed = 0;
for (const t of tests.filter((x) => x.name.includes(filter))) {
  const started = Date.now();
  try {
    await Promise.race([t.fn(), sleep(90000).then(() => { throw new Error('timeout after 90 s'); })]);
    console.log(`PASS ${t.name} (${Date.now() - started} ms)`);
  } catch (e) {
    failed += 1;
    console.log(`FAIL ${t.name}: ${e.stack ?? e}`);
  }
}
rmSync(work, { recursive: true, force: true });
console.log(failed === 0 ? 'all passed' : `${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
