// `toolcache mcp --url` resumes its GET event stream with the Last-Event-ID
// of a POST response stream (src/mcp/http_upstream.cc: one last_event_id_ for
// both). The SDK server then replays that POST stream and maps the GET
// connection to it, so its standalone stream is never connected again:
// notifications/resources/updated is stored, never delivered; the proxy does
// not invalidate get_doc {uri: doc://x} and serves v1 after the change (and
// the client never hears of it).
// Usage: TOOLCACHE_BIN=... node resume_lost.mjs [--no-drop]  (exit 1 while the hole exists)
import { spawn } from 'node:child_process';
import path from 'node:path';
const BIN = process.env.TOOLCACHE_BIN ?? '/tmp/s18/atk_tc';
const here = path.dirname(new URL(import.meta.url).pathname);
const drop = !process.argv.includes('--no-drop');
const gap = process.argv.includes('--gap');
const up = spawn(process.execPath, [path.join(here, 'resumable_server.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] });
process.on('exit', () => up.kill('SIGKILL'));
let upOut = '';
const port = await new Promise((r) => up.stdout.on('data', (d) => { upOut += d; const m = upOut.match(/listening (\d+)/); if (m) r(m[1]); }));
const base = `http://127.0.0.1:${port}`;
const p = spawn('taskset', ['-c', '0', BIN, 'mcp', '--url', `${base}/mcp`, '--log-level', 'info'], { stdio: ['pipe', 'pipe', 'pipe'] });
process.on('exit', () => p.kill('SIGKILL'));
let err = ''; p.stderr.on('data', (d) => { err += d; });
let buf = ''; const got = new Map(); const notes = [];
p.stdout.on('data', (d) => { buf += d; let i; while ((i = buf.indexOf('\n')) >= 0) { const l = buf.slice(0, i); buf = buf.slice(i + 1); if (!l.trim()) continue; const m = JSON.parse(l); if (m.id !== undefined) got.set(m.id, m); else notes.push(m.method); } });
const send = (o) => p.stdin.write(JSON.stringify(o) + '\n');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function req(id, method, params) { send({ jsonrpc: '2.0', id, method, params }); for (let i = 0; i < 100 && !got.has(id); i++) await sleep(50); return got.get(id); }
await req(0, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } });
send({ jsonrpc: '2.0', method: 'notifications/initialized' });
await sleep(500);
await req(1, 'resources/subscribe', { uri: 'doc://x' });
const call = (id) => req(id, 'tools/call', { name: 'get_doc', arguments: { uri: 'doc://x' } });
const text = (m) => m?.result?.content?.[0]?.text;
const hit = (m) => m?.result?._meta?.['toolcache/cache']?.hit === true;
console.log('read 1:', text(await call(2)));
const r3 = await call(3); console.log('read 2:', text(r3), 'hit', hit(r3));
if (drop) { await fetch(`${base}/drop`, { method: 'POST' }); await sleep(gap ? 100 : 2500); }
console.log((await (await fetch(`${base}/change`, { method: 'POST' })).text()).trim());
await sleep(1000);
const r4 = await call(4);
console.log('read after change:', text(r4), 'hit', hit(r4), '| notifications the client got:', JSON.stringify(notes));
console.log(upOut.split('\n').filter((l) => l.startsWith('GET')).join('\n'));
if (hit(r4) || text(r4) !== 'doc://x v2') { console.log('FAIL: the resource update was lost; a stale read was served'); process.exit(1); }
console.log('PASS'); process.exit(0);
