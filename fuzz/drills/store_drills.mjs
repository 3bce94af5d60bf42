// Store fault drills for `toolcache mcp --store`, scripted and repeatable,
// with real components: several proxies in front of the real npm
// server-filesystem, driven concurrently by the official SDK client.
//
//   redis   a real redis-server (own port) is killed with SIGKILL under load
//           and restarted empty on the same port;
//   sqlite  the SQLite file lives on a 1 MiB tmpfs (mounted here; needs
//           root) that a filler file brings to full under load (ENOSPC, not
//           the store's own max_bytes), then the filler is removed.
//
// Every answer is checked against the files themselves: each file has one
// writer (a loop that writes "<file> v<N>" with N increasing), so a read that
// started after version N's write was answered must return N or later, and
// one that ended before N's write started cannot return N. A read outside
// that window is *wrong* (must be 0); an error result or JSON-RPC error is
// *failed cleanly* (store faults should cost hits, never calls: expected 0).
// Recovery time: from the store's return (Redis restarted, space freed)
// until a proxy serves a result from the store again (its statistics'
// `storeHits` grow; read through SIGUSR1). The SQLite drill also requires
// store hits from 2 S to 4 S after that, once the store could have refilled
// the disk.
//
// Usage: node fuzz/drills/store_drills.mjs --bin TOOLCACHE [--seconds S]
//          [--only redis|sqlite]
// (S: seconds of load in each phase; 1 is the CI size). Exits 1 when any
// answer is wrong or the store does not come back by itself.
import { Client } from '../../tests/peers/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StdioClientTransport } from '../../tests/peers/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statfsSync, writeFileSync,
} from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const opt = (name, def) => (argv.indexOf(name) >= 0 ? argv[argv.indexOf(name) + 1] : def);
const BIN = opt('--bin');
const SECONDS = Number(opt('--seconds', '1'));
const ONLY = opt('--only', '');
if (!BIN) {
  console.error('usage: node store_drills.mjs --bin TOOLCACHE [--seconds S] [--only redis|sqlite]');
  process.exit(2);
}
const PEERS = join(here, '../../tests/peers');
const FS_SERVER = join(PEERS, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const REDIS = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => existsSync(p));
const work = mkdtempSync(join(tmpdir(), 'toolcache-store-drills-'));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let counter = 0;

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
async function startRedis(port) {
  const child = spawn(REDIS, ['--port', String(port), '--bind', '127.0.0.1', '--save', '',
    '--appendonly', 'no', '--dir', work, '--logfile', join(work, `redis-${port}.log`)], { stdio: 'ignore' });
  for (let i = 0; i < 200; i++) {
    if (await ping(port)) return child;
    await sleep(25);
  }
  child.kill('SIGKILL');
  throw new Error('redis-server did not start');
}
const killHard = (child) => new Promise((resolve) => { child.once('exit', resolve); child.kill('SIGKILL'); });

// One `toolcache mcp --store STORE` in front of server-filesystem on `dir`.
async function proxy(dir, store) {
  const stats = join(work, `stats-${++counter}.json`);
  const client = new Client({ name: 'toolcache-store-drills', version: '1.0.0' }, { capabilities: {} });
  const transport = new StdioClientTransport({
    command: BIN,
    args: ['mcp', '--name', 'fs', '--store', store, '--stats', stats, '--', process.execPath, FS_SERVER, dir],
    env: { ...process.env }, stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr += d; });
  await client.connect(transport);
  await client.listTools();
  const p = {
    client, stats, stderr: () => stderr, pid: transport.pid,
    // Current statistics (SIGUSR1 writes the file).
    async readStats() {
      rmSync(stats, { force: true });
      process.kill(transport.pid, 'SIGUSR1');
      for (let i = 0; i < 100 && !existsSync(stats); i++) await sleep(10);
      try { return JSON.parse(readFileSync(stats, 'utf8')).cache; } catch { return null; }  // src/runtime/stats.h
    },
    async close() {
      await client.close();
      for (let i = 0; i < 200 && !existsSync(stats); i++) await sleep(25);
      try { return JSON.parse(readFileSync(stats, 'utf8')).cache; } catch { return null; }  // src/runtime/stats.h
    },
  };
  return p;
}

// The load: every proxy reads every file concurrently; one loop per file
// writes it. Returns controls and the tally.
function load(proxies, dir, files, { writeEveryMs = 150, readers = 2, pad = 0 } = {}) {
  const t = { sent: 0, answered: 0, clean: 0, wrong: 0, why: [], stop: false };
  const hist = new Map();  // file -> [{v, started, done}]
  const padding = 'x'.repeat(pad);
  for (const f of files) {
    hist.set(f, [{ v: 0, started: 0, done: 0 }]);
    writeFileSync(join(dir, f), `${f} v0\n${padding}`);
  }
  const callOk = async (p, name, args) => {
    t.sent += 1;
    try {
      const r = await p.client.callTool({ name, arguments: args }, undefined, { timeout: 20000 });
      if (r.isError) { t.clean += 1; return null; }
      return r.content?.[0]?.text ?? '';
    } catch (e) {
      t.clean += 1;
      t.why.push(`${name}: ${e.message}`);
      return null;
    }
  };
  const loops = [];
  for (const f of files) {
    const writer = proxies[files.indexOf(f) % proxies.length];
    loops.push((async () => {
      for (let v = 1; !t.stop; v++) {
        const h = { v, started: performance.now(), done: Infinity };
        hist.get(f).push(h);
        const got = await callOk(writer, 'write_file', { path: join(dir, f), content: `${f} v${v}\n${padding}` });
        if (got !== null) t.answered += 1;
        h.done = performance.now();
        await sleep(writeEveryMs);
      }
    })());
  }
  for (const p of proxies) {
    for (let k = 0; k < readers; k++) {
      loops.push((async () => {
        for (let i = k; !t.stop; i++) {
          const f = files[i % files.length];
          const start = performance.now();
          const got = await callOk(p, 'read_text_file', { path: join(dir, f) });
          const end = performance.now();
          if (got === null) continue;
          const m = /^(\S+) v(\d+)\n/.exec(got);
          const v = m && m[1] === f ? Number(m[2]) : -1;
          const hs = hist.get(f);
          const low = Math.max(...hs.filter((h) => h.done < start).map((h) => h.v));
          const high = Math.max(...hs.filter((h) => h.started < end).map((h) => h.v));
          if (v >= low && v <= high) t.answered += 1;
          else {
            t.wrong += 1;
            const w = proxies.indexOf(proxies[files.indexOf(f) % proxies.length]);
            t.why.push(`${f}: proxy ${proxies.indexOf(p)} (writer: proxy ${w}) got v${v}, allowed v${low}..v${high}`);
          }
        }
      })());
    }
  }
  t.done = () => { t.stop = true; return Promise.all(loops); };
  return t;
}

async function waitStoreHits(proxies, above, ms) {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    for (const [i, p] of proxies.entries()) {
      const s = await p.readStats();
      if (s && s.storeHits > above[i]) return Date.now() - t0;
    }
    await sleep(20);
  }
  return -1;
}

const results = [];
let failed = 0;

async function drillRedis() {
  if (!REDIS) throw new Error('redis-server not found: run scripts/setup.sh');
  const port = await freePort();
  let redis = await startRedis(port);
  const dir = join(work, 'redis-fs');
  mkdirSync(dir);
  const files = ['a.txt', 'b.txt', 'c.txt', 'd.txt'];
  const store = `redis://127.0.0.1:${port}/0?timeout_ms=100`;
  const proxies = [];
  try {
    for (let i = 0; i < 3; i++) proxies.push(await proxy(dir, store));
    const t = load(proxies, dir, files, { writeEveryMs: 400 });
    await sleep(1000 * SECONDS);
    const warm = (await Promise.all(proxies.map((p) => p.readStats()))).map((s) => s?.storeHits ?? 0);
    const sentAtKill = t.sent;
    await killHard(redis);
    redis = null;
    await sleep(1000 * SECONDS);
    const sentDown = t.sent - sentAtKill;
    const before = (await Promise.all(proxies.map((p) => p.readStats()))).map((s) => s?.storeHits ?? 0);
    redis = await startRedis(port);
    const recovery = await waitStoreHits(proxies, before, 15000);
    await sleep(1000 * SECONDS);
    await t.done();
    const stats = [];
    for (const p of proxies) stats.push(await p.close());
    const down = stats.reduce((n, s) => n + (s?.bypassesByReason?.store_unavailable ?? 0)
      + (s?.bypassesByReason?.store_timeout ?? 0), 0);
    const errors = {};
    for (const s of stats) for (const [k, v] of Object.entries(s?.storeErrors ?? {})) errors[k] = (errors[k] ?? 0) + v;
    results.push({
      drill: 'redis killed (SIGKILL) and restarted', ...t,
      notes: `3 proxies x (4 writers + 6 readers); ${sentDown} calls while down, ${down} bypassed `
        + `(store_unavailable/timeout); store errors ${JSON.stringify(errors)}; store hits before kill `
        + `${warm.reduce((a, b) => a + b, 0)}; store hits again ${recovery} ms after the restart`,
    });
    if (t.wrong || recovery < 0 || warm.every((h) => h === 0)) {
      failed += 1;
      console.error(`FAIL redis: wrong=${t.wrong} recovery=${recovery} warm=${warm} ${t.why.slice(0, 5).join('; ')}`);
    }
  } finally {
    if (redis) await killHard(redis);
  }
}

async function drillSqliteFull() {
  const mnt = join(work, 'tmpfs');
  mkdirSync(mnt);
  const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mnt], { encoding: 'utf8' });
  if (m.status !== 0) {
    results.push({ drill: 'sqlite disk full', sent: 0, answered: 0, clean: 0, wrong: 0, why: [],
      notes: `SKIPPED: cannot mount a 1 MiB tmpfs (${(m.stderr || '').trim()}; needs root)` });
    return;
  }
  const proxies = [];
  try {
    const dir = join(work, 'sqlite-fs');
    mkdirSync(dir);
    const files = Array.from({ length: 4 }, (_, i) => `f${i}.txt`);
    const store = `sqlite:${join(mnt, 'results.db')}`;
    for (let i = 0; i < 2; i++) proxies.push(await proxy(dir, store));
    // Fill the file system but ~160 KiB with a filler file.
    const free = () => { const s = statfsSync(mnt); return s.bavail * s.bsize; };
    writeFileSync(join(mnt, 'filler'), Buffer.alloc(Math.max(0, free() - 160 * 1024)));
    // 24 KiB results: the store fills within a few dozen writes.
    const t = load(proxies, dir, files, { writeEveryMs: 400, pad: 24 * 1024 });
    const full = async () => {
      for (let i = 0; i < 200; i++) {
        const e = (await Promise.all(proxies.map((p) => p.readStats()))).reduce((n, s) => n
          + Object.values(s?.storeErrors ?? {}).reduce((a, b) => a + b, 0), 0);
        if (e > 0) return true;
        await sleep(50);
      }
      return false;
    };
    const sawFull = await full();
    await sleep(1000 * SECONDS);
    const freeAtFull = free();
    const before = (await Promise.all(proxies.map((p) => p.readStats()))).map((s) => s?.storeHits ?? 0);
    rmSync(join(mnt, 'filler'));
    const recovery = await waitStoreHits(proxies, before, 15000);
    // Still serving once the store has had time to refill the disk: store
    // hits must go on in a later window (a store that grew straight back
    // into the freed space filled the disk again within half a second and
    // stayed full).
    const hits = async () => (await Promise.all(proxies.map((p) => p.readStats())))
      .reduce((n, s) => n + (s?.storeHits ?? 0), 0);
    await sleep(2000 * SECONDS);
    const h1 = await hits();
    await sleep(2000 * SECONDS);
    const later = (await hits()) - h1;
    const freeAtEnd = free();
    await t.done();
    const stats = [];
    for (const p of proxies) stats.push(await p.close());
    proxies.length = 0;
    const errors = {};
    for (const s of stats) for (const [k, v] of Object.entries(s?.storeErrors ?? {})) errors[k] = (errors[k] ?? 0) + v;
    const bypass = {};
    for (const s of stats) for (const [k, v] of Object.entries(s?.bypassesByReason ?? {})) bypass[k] = (bypass[k] ?? 0) + v;
    const check = spawnSync('python3', ['-c',
      'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("pragma integrity_check").fetchone()[0])',
      join(mnt, 'results.db')], { encoding: 'utf8' });
    const integrity = (check.stdout || check.stderr).trim();
    results.push({
      drill: 'sqlite disk full (1 MiB tmpfs)', ...t,
      notes: `2 proxies x (4 writers + 4 readers), 24 KiB results; store errors ${JSON.stringify(errors)}, `
        + `bypasses ${JSON.stringify(bypass)}; ${freeAtFull} bytes free when full; store hits again ${recovery} ms `
        + `after space was freed, ${later} in the ${2 * SECONDS} s from ${2 * SECONDS} s later (${freeAtEnd} bytes free then); `
        + `integrity_check: ${integrity}`,
    });
    if (t.wrong || !sawFull || recovery < 0 || later <= 0 || integrity !== 'ok') {
      failed += 1;
      console.error(`FAIL sqlite: wrong=${t.wrong} full=${sawFull} recovery=${recovery} later=${later} `
        + `integrity=${integrity} ${t.why.slice(0, 5).join('; ')}`);
    }
  } finally {
    for (const p of proxies) await p.client.close().catch(() => {});
    spawnSync('umount', [mnt]);
  }
}

for (const [name, fn] of [['redis', drillRedis], ['sqlite', drillSqliteFull]]) {
  if (ONLY && ONLY !== name) continue;
  try {
    await fn();
  } catch (e) {
    failed += 1;
    console.error(`FAIL ${name}: ${e.stack ?? e}`);
  }
}
console.log(`${'drill'.padEnd(40)} sent answered clean wrong  notes`);
for (const r of results) {
  console.log(`${r.drill.padEnd(40)} ${String(r.sent).padStart(4)} ${String(r.answered).padStart(8)} `
    + `${String(r.clean).padStart(5)} ${String(r.wrong).padStart(5)}  ${r.notes}`);
}
rmSync(work, { recursive: true, force: true });
console.log(failed ? `${failed} drill(s) failed` : 'all drills passed');
process.exit(failed ? 1 : 0);
