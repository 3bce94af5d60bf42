// Security group "scope_mcp" (issue 27, item 2): two `toolcache mcp`
// processes with different credentials on one sqlite store must not share
// entries. Bob's call reaches the server; alice's second process still
// shares with alice; sharing across credentials happens only when asked
// for (--share-across-credentials); no credential byte reaches the store.
// Real peers: the official MCP SDK client and server-everything (remote
// over Streamable HTTP, and stdio), from tests/peers/node_modules.
import { spawn } from 'node:child_process';
import { killOnExit } from '../support/kill_on_exit.mjs';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { BIN, SRC } from './lib/common.mjs';
const mods = join(SRC, 'tests/peers/node_modules');
const { Client } = await import(pathToFileURL(join(mods, '@modelcontextprotocol/sdk/dist/esm/client/index.js')));
const { StdioClientTransport } = await import(pathToFileURL(join(mods, '@modelcontextprotocol/sdk/dist/esm/client/stdio.js')));
const EVERYTHING = join(mods, '@modelcontextprotocol/server-everything/dist/index.js');
const FS_SERVER = join(mods, '@modelcontextprotocol/server-filesystem/dist/index.js');
const TEE = join(SRC, 'tests/peers/tee.js');
const work = mkdtempSync(join(tmpdir(), 'toolcache-scope-mcp-'));
const TIMEOUT_MS = 20000;

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}
async function until(pred, what) {
  const t0 = Date.now();
  while (!pred()) {
    if (Date.now() - t0 > TIMEOUT_MS) throw new Error(`timeout: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
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
const posts = (server) => server.out.split('Received MCP POST request').length - 1;
const text = (r) => r.content.map((c) => c.text ?? '').join('');
const isHit = (r) => r._meta?.['toolcache/cache']?.hit === true;

// One proxy process: connect, call echo(message) once, close. Returns
// {hit, text, log}.
async function callOnce(args, env, message, call = { name: 'echo', arguments: { message } }) {
  const client = new Client({ name: 'scope-mcp', version: '1.0.0' }, { capabilities: {} });
  const transport = new StdioClientTransport({
    command: BIN, args: ['mcp', '--log-level', 'debug', ...args], env: { ...process.env, ...env }, stderr: 'pipe',
  });
  let log = '';
  transport.stderr?.on('data', (d) => { log += d.toString(); });
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`${e.message}; toolcache stderr: ${log}`);
  }
  try {
    await client.listTools();
    // server-everything announces tools/list_changed at start; the proxy
    // caches nothing until its own re-listing is in. A second listing is
    // answered after the proxy's (give the notification time to arrive).
    await new Promise((r) => setTimeout(r, 300));
    await client.listTools();
    const r = await client.callTool(call);
    return { hit: isHit(r), text: text(r), log };
  } finally {
    await client.close();
  }
}

// A folder holding one file, and server-filesystem's read of it.
function oneFile(prefix, name, text) {
  const dir = mkdtempSync(join(work, prefix));
  writeFileSync(join(dir, name), text);
  return { dir, read: { name: 'read_text_file', arguments: { path: join(dir, name) } } };
}
// A log for tee.js (what reaches the server) and how many tools/call it holds.
function teeLog(name) {
  const log = join(work, name);
  writeFileSync(log, '');
  const served = () => readFileSync(log, 'utf8').split('\n').filter((l) => l.trim())
    .map((l) => JSON.parse(l)).filter((m) => m.method === 'tools/call').length;
  return { log, served };
}
// `node -e <import> ARG DIR`: server-filesystem reads process.argv.slice(2),
// so ARG reaches the command line without being one of its folders.
const FS_LAUNCH = `import(${JSON.stringify(pathToFileURL(FS_SERVER).href)})`;

const cases = [];
const test = (name, fn) => cases.push({ name, fn });

test('url: bob (another Authorization) reaches the server; a second alice process shares', async () => {
  const port = await freePort();
  const server = await startEverything(port);
  const db = join(work, 'url.db');
  const url = ['--url', `http://127.0.0.1:${port}/mcp`, '--name', 'ev', '--store', `sqlite:${db}`,
    '--header', 'Authorization: Bearer ${SCOPE_TOKEN}'];
  const alice = 'alice-secret-token-4b1d9e77';
  const bob = 'bob-secret-token-0c55aa13';
  try {
    const a1 = await callOnce(url, { SCOPE_TOKEN: alice }, 'private');
    assert.equal(a1.text, 'Echo: private');
    assert.ok(!a1.hit, 'alice first call: a miss');
    const before = posts(server);
    const a2 = await callOnce(url, { SCOPE_TOKEN: alice }, 'private');
    assert.ok(a2.hit, 'alice in a second process: served from the shared store');
    console.log(`  alice#2 hit=${a2.hit} (server POSTs +${posts(server) - before} for the call)`);
    const b0 = posts(server);
    const b = await callOnce(url, { SCOPE_TOKEN: bob }, 'private');
    console.log(`  bob hit=${b.hit}, server saw ${posts(server) - b0} POSTs`);
    assert.ok(!b.hit, "bob is never served alice's entry");
    assert.equal(b.text, 'Echo: private');
    // initialize, initialized, tools/list, tools/call: the call reached it.
    assert.ok(posts(server) - b0 >= 4, `bob's call reached the server (${posts(server) - b0} POSTs)`);
    // A token in the URL's query is a credential too.
    const q0 = posts(server);
    const qa = await callOnce(['--url', `http://127.0.0.1:${port}/mcp?key=alice`, '--name', 'ev', '--store', `sqlite:${db}`], {}, 'q');
    const qb = await callOnce(['--url', `http://127.0.0.1:${port}/mcp?key=bob`, '--name', 'ev', '--store', `sqlite:${db}`], {}, 'q');
    assert.ok(!qa.hit && !qb.hit, `query tokens separate principals (alice hit=${qa.hit}, bob hit=${qb.hit}, POSTs ${posts(server) - q0})`);
    // Opt-in sharing: the operator says every credential sees the same data.
    const shared = [...url, '--share-across-credentials'];
    await callOnce(shared, { SCOPE_TOKEN: alice }, 'public');
    const sb = await callOnce(shared, { SCOPE_TOKEN: bob }, 'public');
    assert.ok(sb.hit, '--share-across-credentials shares');
    // No credential byte in the store or the logs.
    const bytes = readFileSync(db).toString('latin1');
    for (const t of [alice, bob, 'alice-secret', 'bob-secret']) {
      assert.ok(!bytes.includes(t), `the store holds no '${t}'`);
      assert.ok(!a1.log.includes(t) && !b.log.includes(t), `the logs hold no '${t}'`);
    }
  } finally {
    server.child.kill('SIGKILL');
  }
});

test('stdio: servers started with different tokens in their environment do not share', async () => {
  // server-filesystem behind tee.js (which logs what reaches the server).
  const db = join(work, 'stdio.db');
  const { dir, read } = oneFile('files-', 'notes.txt', 'alice private notes');
  const { log, served } = teeLog('server.log');
  const cmd = (...extra) => ['--name', 'fs', '--store', `sqlite:${db}`, ...extra, '--',
    process.execPath, TEE, log, '--', process.execPath, FS_SERVER, dir];
  const as = (token, ...extra) => callOnce(cmd(...extra), { GITHUB_PERSONAL_ACCESS_TOKEN: token }, '', read);
  const a1 = await as('ghp_alice1111');
  assert.ok(!a1.hit, 'alice first call: a miss');
  assert.equal(served(), 1);
  const a2 = await as('ghp_alice1111');
  assert.ok(a2.hit, 'alice again (same token, another process): a hit');
  assert.equal(served(), 1);
  const b = await as('ghp_bob22222');
  console.log(`  stdio: alice#2 hit=${a2.hit}, bob hit=${b.hit}, server calls ${served()}`);
  assert.ok(!b.hit, "bob is never served alice's entry");
  assert.equal(served(), 2, "bob's call reached his server");
  // A variable whose name does not look secret, declared a credential
  // (a wrapped server's env block).
  const org = (v) => callOnce(cmd('--credential-env', 'TEAM_ORG'), { TEAM_ORG: v }, '', read);
  const o1 = await org('acme');
  const o2 = await org('globex');
  assert.ok(!o1.hit && !o2.hit, `declared credential env separates (acme hit=${o1.hit}, globex hit=${o2.hit})`);
  assert.equal(served(), 4);
  // Opt-in sharing.
  await as('ghp_alice1111', '--share-across-credentials');
  const sb = await as('ghp_bob22222', '--share-across-credentials');
  assert.ok(sb.hit, '--share-across-credentials shares');
  const bytes = readFileSync(db).toString('latin1');
  assert.ok(!bytes.includes('ghp_alice1111') && !bytes.includes('ghp_bob22222'), 'no token in the store');
});

test('stdio: a connection string in the environment or on the command line is a credential (session 17)', async () => {
  // Two users' servers under one --name on one store: the credential is in
  // DATABASE_URL (a name that does not look secret) or in an argument
  // (`server postgresql://alice:pw@db/app`). Before, both were one
  // principal and bob was served alice's entry.
  const db = join(work, 'dsn.db');
  const { dir, read } = oneFile('dsn-files-', 'rows.txt', 'alice rows');
  const { log, served } = teeLog('dsn-server.log');
  const cmd = (arg) => ['--name', 'db', '--store', `sqlite:${db}`, '--',
    process.execPath, TEE, log, '--', process.execPath, '-e', FS_LAUNCH, arg, dir];
  const env = (dsn) => callOnce(cmd('plain'), { DATABASE_URL: dsn }, '', read);
  const e1 = await env('postgresql://alice:pw-a@db/app');
  const e2 = await env('postgresql://alice:pw-a@db/app');
  assert.ok(!e1.hit && e2.hit, `the same DATABASE_URL shares (hit=${e2.hit})`);
  const eb = await env('postgresql://bob:pw-b@db/app');
  assert.ok(!eb.hit, "bob's DATABASE_URL is never served alice's entry");
  const argv = (dsn) => callOnce(cmd(dsn), { DATABASE_URL: '' }, '', read);
  const a1 = await argv('postgresql://alice:pw-a@db/app');
  const a2 = await argv('postgresql://alice:pw-a@db/app');
  assert.ok(!a1.hit && a2.hit, `the same command line shares (hit=${a2.hit})`);
  const ab = await argv('postgresql://bob:pw-b@db/app');
  assert.ok(!ab.hit, "bob's connection string on the command line is never served alice's entry");
  assert.equal(served(), 4, 'every miss reached its server');
  const bytes = readFileSync(db).toString('latin1');
  assert.ok(!bytes.includes('pw-a') && !bytes.includes('pw-b'), 'no password in the store');
});

// Session 17: without --name the server is known by its command line,
// which was logged at info level and stored as every entry's server name:
// a connection string or an --api-key value on it reached the log and the
// store in plain text. Now they are redacted there (they still scope).
test('no --name: a secret on the command line reaches neither the log nor the store', async () => {
  const db = join(work, 'noname.db');
  const { dir, read } = oneFile('noname-', 'rows.txt', 'alice rows');
  // sh starts the server with the connection string as its one extra
  // argument (not a folder) and ignores the --api-key it was given too.
  const cmd = (dsn) => ['--store', `sqlite:${db}`, '--', '/bin/sh', '-c', 'exec "$0" -e "$1" "$2" "$3"',
    process.execPath, FS_LAUNCH, dsn, dir, '--api-key=sk-argv-9f3e1c'];
  const a1 = await callOnce(cmd('postgresql://alice:pw-noname-a@db/app'), {}, '', read);
  const a2 = await callOnce(cmd('postgresql://alice:pw-noname-a@db/app'), {}, '', read);
  assert.ok(!a1.hit && a2.hit, `the same command line shares (hit=${a2.hit})`);
  const b1 = await callOnce(cmd('postgresql://bob:pw-noname-b@db/app'), {}, '', read);
  assert.ok(!b1.hit, "bob's command line is never served alice's entry");
  for (const [what, log] of [['alice', a1.log], ['bob', b1.log]]) {
    assert.match(log, /identity='.*postgresql:\/\/<redacted>@db\/app/, `${what}'s log names the server`);
    assert.ok(!/pw-noname|sk-argv-9f3e1c/.test(log), `${what}'s log holds a secret: ${log}`);
  }
  const bytes = readFileSync(db).toString('latin1');
  assert.ok(!/pw-noname|sk-argv-9f3e1c/.test(bytes), 'a secret of the command line is in the store');
});

let failed = 0;
for (const c of cases) {
  try {
    await c.fn();
    console.log(`ok   scope_mcp: ${c.name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL scope_mcp: ${c.name}: ${e.stack || e}`);
  }
}
rmSync(work, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
