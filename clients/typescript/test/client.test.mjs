// @toolcache/client against a running `toolcache serve` (TOOLCACHE_BIN),
// run by tests/e2e_serve.sh: node --test clients/typescript/test/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ToolCacheClient, ToolCacheError, cacheTool } from '../index.mjs';

const BIN = process.env.TOOLCACHE_BIN;
let server, url;

before(async () => {
  assert.ok(BIN, 'TOOLCACHE_BIN must name the toolcache binary');
  const dir = mkdtempSync(join(tmpdir(), 'tc-ts-'));
  const cfg = join(dir, 'serve.yaml');
  writeFileSync(cfg, `
tools:
  get_weather: {requestType: INFORMATIONAL, ttlSeconds: 600}
  book_flight: {requestType: COMMAND}
serve:
  tenants:
    alice: {token: alice-secret}
    bob: {token: bob-secret}
`);
  server = spawn(BIN, ['serve', '--listen', '127.0.0.1:0', '--config', cfg, '--log-level', 'warn'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  server.stderr.on('data', (d) => { log += d; });
  url = await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/\S+)/);
      if (m) resolve(m[1]);
    });
    server.on('exit', (code) => reject(new Error(`serve exited ${code}: ${log}`)));
  });
});
after(async () => {
  server.kill('SIGTERM');
  await new Promise((r) => server.on('exit', r));
});

test('a wrapped function tool runs once, then the cache answers', async () => {
  const tc = new ToolCacheClient(url, { token: 'alice-secret' });
  let runs = 0;
  const execute = cacheTool(tc, 'weather', 'get_weather', async ({ city }) => {
    runs += 1;
    return { city, tempC: 21 };
  });
  assert.deepEqual(await execute({ city: 'Oslo' }), { city: 'Oslo', tempC: 21 });
  assert.deepEqual(await execute({ city: 'Oslo' }), { city: 'Oslo', tempC: 21 });
  assert.equal(runs, 1);
  const l = await tc.lookup('weather', 'get_weather', { city: 'Oslo' });
  assert.equal(l.hit, true);
});

test('concurrent identical calls are coalesced into one run', async () => {
  const tc = new ToolCacheClient(url, { token: 'alice-secret' });
  let runs = 0;
  let release;
  const gate = new Promise((r) => { release = r; });
  const execute = cacheTool(tc, 'weather', 'get_weather', async () => {
    runs += 1;
    await gate;
    return { n: 1 };
  });
  const all = Promise.all([1, 2, 3, 4].map(() => execute({ city: 'Rome' })));
  await new Promise((r) => setTimeout(r, 300));
  release();
  assert.deepEqual(await all, [{ n: 1 }, { n: 1 }, { n: 1 }, { n: 1 }]);
  assert.equal(runs, 1);
});

test('tenants are isolated; bad tokens are 401', async () => {
  const alice = new ToolCacheClient(url, { token: 'alice-secret' });
  const bob = new ToolCacheClient(url, { token: 'bob-secret' });
  await alice.record('weather', 'get_weather', { city: 'Lima' }, { t: 'alice' }, { latencySeconds: 0.1 });
  assert.equal((await alice.lookup('weather', 'get_weather', { city: 'Lima' })).hit, true);
  assert.equal((await bob.lookup('weather', 'get_weather', { city: 'Lima' })).hit, false);
  await assert.rejects(new ToolCacheClient(url, { token: 'nope' }).stats(),
    (e) => e instanceof ToolCacheError && e.status === 401);
});

test('a write is never cached and invalidates; explain says why', async () => {
  const tc = new ToolCacheClient(url, { token: 'bob-secret' });
  await tc.record('air', 'get_weather', { city: 'Kyiv' }, { t: 1 });
  assert.equal((await tc.lookup('air', 'get_weather', { city: 'Kyiv' })).hit, true);
  const ex = await tc.explain('air', 'book_flight', { to: 'Kyiv' });
  assert.equal(ex.cacheable, false);
  assert.equal(ex.reason, 'command');
  let runs = 0;
  const book = cacheTool(tc, 'air', 'book_flight', async () => { runs += 1; return 'booked'; });
  await book({ to: 'Kyiv' });
  await book({ to: 'Kyiv' });
  assert.equal(runs, 2);
  assert.equal((await tc.lookup('air', 'get_weather', { city: 'Kyiv' })).hit, false);
});

test('a failing tool propagates its error and is not cached', async () => {
  const tc = new ToolCacheClient(url, { token: 'alice-secret' });
  const execute = cacheTool(tc, 'weather', 'get_weather', async () => { throw new Error('down'); });
  await assert.rejects(execute({ city: 'Nowhere' }), /down/);
  assert.equal((await tc.lookup('weather', 'get_weather', { city: 'Nowhere' })).hit, false);
});

test('an unreachable cache never fails the call', async () => {
  const tc = new ToolCacheClient('http://127.0.0.1:1', { timeoutMs: 2000 });
  assert.equal(await tc.cachedCall('w', 'get_weather', {}, () => 42), 42);
});
