// `toolcache mcp --url` where the credential is in the URL's path (Zapier's
// .../api/mcp/s/<secret>/mcp, Pipedream's /<uuid>/<app>): the scope digests
// headers and the query, not the path (src/mcp/url_proxy.cc UrlScope).
// Case 1: alice and bob run `--name svc` on one SQLite store: bob is served
//         alice's answer (her secret path, her account's data).
// Case 2: without --name the identity is scheme://host/path, secret included:
//         logged at info and stored in plain text as every entry's server name.
// Usage: TOOLCACHE_BIN=... node url_path_secret.mjs  (exit 1 while either holds)
import http from 'node:http';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
const BIN = process.env.TOOLCACHE_BIN ?? '/tmp/s18/atk_tc';
const work = mkdtempSync(path.join(tmpdir(), 'atkV-urlpath-'));
const srv = http.createServer((req, res) => {
  let b = ''; req.on('data', (d) => { b += d; }); req.on('end', () => {
    const who = (req.url.match(/\/s\/([^/]+)\/mcp/) ?? [])[1] ?? 'nobody';
    if (req.method !== 'POST') { res.writeHead(405); res.end(); return; }
    const m = JSON.parse(b);
    if (m.id === undefined) { res.writeHead(202); res.end(); return; }
    let result = {};
    if (m.method === 'initialize') result = { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'p', version: '1' } };
    else if (m.method === 'tools/list') result = { tools: [{ name: 'get_document', description: 'Get the document with this id', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true, openWorldHint: false } }] };
    else if (m.method === 'tools/call') result = { content: [{ type: 'text', text: `data of ${who === 'SECRET-ALICE-7f3a' ? 'ALICE' : who === 'SECRET-BOB-91c2' ? 'BOB' : who}` }] };
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's-' + who });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
  });
});
await new Promise((r) => srv.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${srv.address().port}`;
writeFileSync(path.join(work, 'c.yaml'), '{}\n');  // no operator TTL: the classifier's own verdict
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function run(secret, extra, db) {
  const p = spawn('taskset', ['-c', '0', BIN, 'mcp', '--no-get-stream', '--log-level', 'info', '--store', `sqlite:${db}`, '--config', path.join(work, 'c.yaml'), ...extra, '--url', `${base}/api/mcp/s/${secret}/mcp`], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '', err = '';
  p.stdout.on('data', (d) => { out += d; }); p.stderr.on('data', (d) => { err += d; });
  const send = (o) => p.stdin.write(JSON.stringify(o) + '\n');
  send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } });
  await sleep(400); send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send({ jsonrpc: '2.0', id: 1, method: 'tools/list' }); await sleep(400);
  send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_document', arguments: {} } }); await sleep(600);
  p.stdin.end(); await new Promise((r) => p.on('exit', r));
  const line = out.split('\n').find((l) => l.includes('"id":2')) ?? '';
  return { line, err };
}
let failed = false;
const db1 = path.join(work, 'named.db');
const a = await run('SECRET-ALICE-7f3a', ['--name', 'svc'], db1);
const a2 = await run('SECRET-ALICE-7f3a', ['--name', 'svc'], db1);
console.log('alice again (control):', a2.line.slice(0, 160));
const b = await run('SECRET-BOB-91c2', ['--name', 'svc'], db1);
console.log('alice:', a.line.slice(0, 140));
console.log('bob:  ', b.line.slice(0, 140));
if (b.line.includes('ALICE')) { console.log('FAIL case 1: bob (his own secret URL) was served alice\'s data'); failed = true; }
const db2 = path.join(work, 'unnamed.db');
const c = await run('SECRET-ALICE-7f3a', [], db2);
const logged = c.err.split('\n').filter((l) => l.includes('SECRET-ALICE'));
let stored = false;
for (const f of [db2, db2 + '-wal']) { try { if (readFileSync(f).includes('SECRET-ALICE-7f3a')) stored = true; } catch { /* absent */ } }
console.log('log lines with the secret:', logged.length, logged[0]?.slice(0, 140) ?? '');
console.log('secret in the store file:', stored);
if (logged.length || stored) { console.log('FAIL case 2: the path secret reached the log / the store'); failed = true; }
// Case 3: the same URL as a stdio server's argument (mcp-remote style):
// SecretArguments takes user information and secret-named query values, not
// a path token, so two --name svc processes with different secret URLs share.
async function stdio(secret, db) {
  const p = spawn('taskset', ['-c', '0', BIN, 'mcp', '--name', 'svc', '--store', `sqlite:${db}`, '--', process.execPath,
    path.join(path.dirname(new URL(import.meta.url).pathname), 'notes_server.mjs'), `https://mcp.example.com/api/mcp/s/${secret}/mcp`], { stdio: ['pipe', 'pipe', 'ignore'] });
  let out = ''; p.stdout.on('data', (d) => { out += d; });
  const send = (o) => p.stdin.write(JSON.stringify(o) + '\n');
  send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } });
  await sleep(800); send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send({ jsonrpc: '2.0', id: 1, method: 'tools/list' }); await sleep(400);
  send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read_note', arguments: { id: 'a' } } }); await sleep(600);
  p.stdin.end(); await new Promise((r) => p.on('exit', r));
  return out.split('\n').find((l) => l.includes('"id":2')) ?? '';
}
const db3 = path.join(work, 'stdio.db');
await stdio('SECRET-ALICE-7f3a', db3);
const s2 = await stdio('SECRET-BOB-91c2', db3);
console.log('stdio bob:', s2.slice(0, 120));
if (s2.includes('"hit":true')) { console.log('FAIL case 3: a stdio server with another secret URL on its command line shared alice\'s entry'); failed = true; }
srv.close();
process.exit(failed ? 1 : 0);
