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
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
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

// Session 18 (attackV finding 1): hosted MCP servers put the account's
// secret in the URL's path (Zapier's /api/mcp/s/<secret>/mcp, Pipedream's
// /<uuid>/<app>). The scope took the headers and the query only: alice and
// bob under one --name on one store shared entries (bob was served
// alice's data), and without --name the identity (logged, and stored as
// every entry's server name) was the URL with its secret.
// A Streamable HTTP server (JSON answers) whose answer names whose secret
// is in the path it was asked on (SECRET-ALICE-... -> "data of ALICE", never
// the secret itself); `calls` counts the tools/call it answered.
// A store's bytes, its write-ahead log included when there is one.
function storeBytes(db) {
  let bytes = readFileSync(db).toString('latin1');
  try { bytes += readFileSync(`${db}-wal`).toString('latin1'); } catch { /* none */ }
  return bytes;
}
async function pathSecretServer() {
  const seen = { calls: 0 };
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      if (req.method !== 'POST') { res.writeHead(405); res.end(); return; }
      const who = (req.url.match(/\/s\/([^/]+)\/mcp/) ?? [])[1] ?? 'nobody';
      const m = JSON.parse(body);
      if (m.id === undefined) { res.writeHead(202); res.end(); return; }
      let result = {};
      if (m.method === 'initialize') {
        result = { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'paths', version: '1' } };
      } else if (m.method === 'tools/list') {
        result = { tools: [{ name: 'get_document', description: 'Get the document with this id',
          inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true, openWorldHint: false } }] };
      } else if (m.method === 'tools/call') {
        seen.calls++;
        result = { content: [{ type: 'text', text: `data of ${who.split('-')[1] ?? 'nobody'}` }] };
      }
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': `sess-${seen.calls}` });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
    });
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${srv.address().port}`, seen, close: () => srv.close() };
}

test('url: a secret in the URL path is a credential, and is never logged nor stored (session 18)', async () => {
  const server = await pathSecretServer();
  const alice = 'SECRET-ALICE-7f3a';
  const bob = 'SECRET-BOB-91c2';
  const doc = { name: 'get_document', arguments: {} };
  const url = (secret) => `${server.base}/api/mcp/s/${secret}/mcp`;
  try {
    const db = join(work, 'urlpath.db');
    const named = (secret, ...extra) =>
      callOnce(['--no-get-stream', '--name', 'svc', '--store', `sqlite:${db}`, ...extra, '--url', url(secret)], {}, '', doc);
    const a1 = await named(alice);
    assert.equal(a1.text, 'data of ALICE');
    const a2 = await named(alice);
    assert.ok(!a1.hit && a2.hit, `alice again (same URL, another process) shares (hit=${a2.hit})`);
    const b = await named(bob);
    console.log(`  url path: alice#2 hit=${a2.hit}, bob hit=${b.hit}, server calls ${server.seen.calls}`);
    assert.ok(!b.hit, "bob (his own secret path) is never served alice's entry");
    assert.equal(b.text, 'data of BOB');
    assert.equal(server.seen.calls, 2, "bob's call reached the server");
    // Opt-in sharing still shares.
    await named(alice, '--share-across-credentials');
    const sb = await named(bob, '--share-across-credentials');
    assert.ok(sb.hit, '--share-across-credentials shares');
    // Without --name the identity is the URL with its secret redacted.
    const db2 = join(work, 'urlpath-noname.db');
    const n1 = await callOnce(['--no-get-stream', '--store', `sqlite:${db2}`, '--url', url(alice)], {}, '', doc);
    const n2 = await callOnce(['--no-get-stream', '--store', `sqlite:${db2}`, '--url', url(bob)], {}, '', doc);
    assert.ok(!n2.hit, "without --name, bob is never served alice's entry either");
    assert.match(n1.log, /proxying http:\/\/127\.0\.0\.1:\d+\/api\/mcp\/s\/<redacted>/, 'the log names the server');
    for (const [what, log] of [['alice', a1.log], ['bob', b.log], ['alice without --name', n1.log], ['bob without --name', n2.log]]) {
      assert.ok(!log.includes('SECRET-'), `${what}'s log holds the path secret: ${log}`);
    }
    for (const f of [db, db2]) assert.ok(!storeBytes(f).includes('SECRET-'), `the path secret is in the store ${f}`);
  } finally {
    server.close();
  }
});

test('stdio: a secret in the path of a URL on the command line is a credential (session 18)', async () => {
  // mcp-remote style: the server is given its account's URL. Here the URL
  // reaches the command line as `node -e <import> URL DIR` (FS_LAUNCH).
  const db = join(work, 'argv-url.db');
  const { dir, read } = oneFile('argv-url-', 'doc.txt', 'alice document');
  const { log, served } = teeLog('argv-url-server.log');
  const cmd = (secret, ...name) => [...name, '--store', `sqlite:${db}`, '--',
    process.execPath, TEE, log, '--', process.execPath, '-e', FS_LAUNCH,
    `https://mcp.example.com/api/mcp/s/${secret}/mcp`, dir];
  const a1 = await callOnce(cmd('SECRET-ALICE-7f3a', '--name', 'svc'), {}, '', read);
  const a2 = await callOnce(cmd('SECRET-ALICE-7f3a', '--name', 'svc'), {}, '', read);
  assert.ok(!a1.hit && a2.hit, `the same command line shares (hit=${a2.hit})`);
  const b = await callOnce(cmd('SECRET-BOB-91c2', '--name', 'svc'), {}, '', read);
  console.log(`  argv url: alice#2 hit=${a2.hit}, bob hit=${b.hit}, server calls ${served()}`);
  assert.ok(!b.hit, "bob's URL on the command line is never served alice's entry");
  assert.equal(served(), 2, "bob's call reached his server");
  // Without --name: the identity holds the URL, its secret redacted.
  const n = await callOnce(cmd('SECRET-CAROL-55d0'), {}, '', read);
  assert.match(n.log, /identity='.*https:\/\/mcp\.example\.com\/api\/mcp\/s\/<redacted>/, 'the log names the server');
  for (const l of [a1.log, b.log, n.log]) assert.ok(!l.includes('SECRET-'), `a log holds the path secret: ${l}`);
  assert.ok(!storeBytes(db).includes('SECRET-'), 'the path secret is in the store');
});

// Session 19 (attackK finding 4): a stdio server's plain, non-secret
// environment chooses whose data it reads (server-memory's
// MEMORY_FILE_PATH; AWS_PROFILE, KUBECONFIG, HOME alike). Two users with
// clean environments differing only there were one principal: bob's
// read_graph was answered from alice's memory file. One user's sessions
// (whatever their terminal or Claude Code session variables) still share;
// another project's file or folder does not; --share-across-credentials
// still shares on purpose.
const MEMORY = join(mods, '@modelcontextprotocol/server-memory/dist/index.js');
async function readGraph(db, env, { args = [], cwd } = {}) {
  const client = new Client({ name: 'scope-mcp-env', version: '1.0.0' }, { capabilities: {} });
  const transport = new StdioClientTransport({
    // Absolute: the case starts one process in another folder.
    command: resolve(BIN), args: ['mcp', '--log-level', 'debug', '--store', `sqlite:${db}`, ...args, '--', process.execPath, MEMORY],
    env: { PATH: process.env.PATH, LANG: 'C.UTF-8', ...env }, stderr: 'pipe', cwd,
  });
  let log = '';
  transport.stderr?.on('data', (d) => { log += d.toString(); });
  await client.connect(transport);
  try {
    // The proxy caches a tool once it has seen the server's listing.
    await client.listTools();
    const r = await client.callTool({ name: 'read_graph', arguments: {} });
    return { hit: isHit(r), text: text(r), log };
  } finally {
    await client.close();
  }
}
test('stdio: a data-choosing variable, the OS user and the folder separate principals', async () => {
  const db = join(work, 'env.db');
  const home = (who) => join(work, `home-${who}`);
  writeFileSync(join(work, 'alice.jsonl'),
    `${JSON.stringify({ type: 'entity', name: 'alice-bank', entityType: 'secret', observations: ['PIN 4711'] })}\n`);
  writeFileSync(join(work, 'alice-other.jsonl'), '');
  writeFileSync(join(work, 'bob.jsonl'), '');
  const user = (who, file = who) => ({ HOME: home(who), USER: who, LOGNAME: who, MEMORY_FILE_PATH: join(work, `${file}.jsonl`) });
  const a1 = await readGraph(db, { ...user('alice'), TERM_SESSION_ID: 'w0t0p0:1', SHLVL: '1' });
  assert.match(a1.text, /alice-bank/, 'alice reads her graph');
  assert.ok(!a1.hit, 'alice first call: a miss');
  const b = await readGraph(db, user('bob'));
  console.log(`  bob hit=${b.hit}: ${b.text.replace(/\s+/g, ' ').slice(0, 60)}`);
  assert.ok(!b.hit && !/alice-bank/.test(b.text), "bob is never served alice's memory file");
  // The same user in another terminal: shares.
  const a2 = await readGraph(db, { ...user('alice'), TERM_SESSION_ID: 'w1t0p0:2', SHLVL: '3', OLDPWD: '/tmp' });
  assert.ok(a2.hit, "alice's session in another terminal is served from the shared store");
  // And in a Claude Code session (its per-session id and messaging token
  // looked secret: every session was its own principal before session 19).
  const c = await readGraph(db, { ...user('alice'), CLAUDE_CODE_SESSION_ID: '6986f739-f146', CLAUDE_CODE_MESSAGING_TOKEN: '4e998810b3a9' });
  assert.ok(c.hit, "alice's Claude Code session shares with her other sessions");
  // Her other project: another data file, or the same config in another folder.
  const other = await readGraph(db, user('alice', 'alice-other'));
  assert.ok(!other.hit && !/alice-bank/.test(other.text), "another data file is never served alice's graph");
  const folder = join(work, 'project-b');
  mkdirSync(folder, { recursive: true });
  const moved = await readGraph(db, user('alice'), { cwd: folder });
  assert.ok(!moved.hit, 'the same configuration in another folder is another principal');
  // Names, never values, in the debug log.
  assert.match(a1.log, /principal from: .*MEMORY_FILE_PATH/, 'the debug log names the variables');
  for (const l of [a1.log, b.log, c.log]) assert.ok(!l.includes('alice.jsonl') && !l.includes('4e998810b3a9'), 'a value reached the log');
  // The opt-out still shares across users.
  const share = { args: ['--share-across-credentials'] };
  await readGraph(db, user('alice'), share);
  const sb = await readGraph(db, user('bob'), share);
  assert.ok(sb.hit, '--share-across-credentials shares on purpose');
});

// The same principal for `serve`'s children (servers.<name>.command): two
// `serve` processes of two users on one store, the server's data file
// chosen by serve's environment, do not share; the same user's next serve
// does.
const { StreamableHTTPClientTransport } = await import(pathToFileURL(join(mods, '@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js')));
test('serve: a child\'s data-choosing environment and user separate principals (session 19)', async () => {
  const { spawnListening } = await import('./lib/common.mjs');
  const db = join(work, 'serve-env.db');
  const config = join(work, 'serve-env.yaml');
  writeFileSync(config, `servers:\n  memory:\n    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(MEMORY)}]\n`);
  writeFileSync(join(work, 'serve-alice.jsonl'),
    `${JSON.stringify({ type: 'entity', name: 'alice-serve-bank', entityType: 'secret', observations: ['PIN 1234'] })}\n`);
  writeFileSync(join(work, 'serve-bob.jsonl'), '');
  const read = async (who) => {
    const serve = await spawnListening('/usr/bin/env', ['-i', `PATH=${process.env.PATH}`, `HOME=${join(work, `home-${who}`)}`,
      `USER=${who}`, `MEMORY_FILE_PATH=${join(work, `serve-${who}.jsonl`)}`,
      BIN, 'serve', '--listen', '127.0.0.1:0', '--config', config, '--store', `sqlite:${db}`, '--log-level', 'error']);
    const client = new Client({ name: 'scope-serve-env', version: '1.0.0' }, { capabilities: {} });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${serve.url}/mcp/memory`)));
      await client.listTools();
      const r = await client.callTool({ name: 'read_graph', arguments: {} });
      return { hit: isHit(r), text: text(r) };
    } finally {
      await client.close().catch(() => {});
      await serve.stop();
    }
  };
  const a1 = await read('alice');
  assert.match(a1.text, /alice-serve-bank/, 'alice reads her graph');
  const b = await read('bob');
  console.log(`  serve: bob hit=${b.hit}: ${b.text.replace(/\s+/g, ' ').slice(0, 60)}`);
  assert.ok(!b.hit && !/alice-serve-bank/.test(b.text), "bob's serve is never served alice's memory file");
  const a2 = await read('alice');
  assert.ok(a2.hit, "alice's next serve shares her entries");
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
