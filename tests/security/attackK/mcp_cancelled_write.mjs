// attackK finding 2: a write the client cancels is never invalidated after
// it lands. `toolcache mcp` drops the server's entries when a write starts
// and again when its answer arrives; an MCP server sends no answer to a
// cancelled request (SDK Protocol: "if aborted, no response") although the
// write goes on. A read that ran while the write was in flight stored the
// pre-write value, and after the cancelled write lands it is served, as a
// hit, until its TTL: the write was silently skipped for the cache.
//
// Real peers: the SDK 1.32.2 server (slow_write_server.mjs here), one
// `toolcache mcp`. Exits 1 while the hole is open.
//
// Usage: TOOLCACHE_BIN=... node tests/security/attackK/mcp_cancelled_write.mjs
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = process.env.TOOLCACHE_BIN;
if (!BIN) { console.error('TOOLCACHE_BIN must be set'); process.exit(2); }
const here = dirname(fileURLToPath(import.meta.url));
const child = spawn(BIN, ['mcp', '--name', 'slow-notes', '--', process.execPath, join(here, 'slow_write_server.mjs')],
  { stdio: ['pipe', 'pipe', 'ignore'], env: { ...process.env, WRITE_DELAY_MS: '400' } });
process.on('exit', () => { try { child.kill('SIGKILL'); } catch { /* gone */ } });
const waiting = new Map();
let buf = '';
child.stdout.on('data', (d) => {
  buf += d;
  let nl;
  while ((nl = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    if (!line.trim()) continue;
    const m = JSON.parse(line);
    const w = waiting.get(JSON.stringify(m.id));
    if (w) { waiting.delete(JSON.stringify(m.id)); w(m); }
  }
});
const send = (m) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`);
const request = (id, method, params) => new Promise((resolve, reject) => {
  const t = setTimeout(() => reject(new Error(`no answer to ${method} ${id}`)), 15000);
  waiting.set(JSON.stringify(id), (m) => { clearTimeout(t); resolve(m); });
  send({ id, method, params });
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (m) => m.result?.content?.[0]?.text;
const hit = (m) => m.result?._meta?.['toolcache/cache']?.hit === true;
const read = (id) => request(id, 'tools/call', { name: 'read_note', arguments: { id: 'a' } });

await request(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
send({ method: 'notifications/initialized' });
console.log('read before:', text(await read(2)));
// The write starts (400 ms to land); a read runs meanwhile; the user then
// cancels the write (Esc in the agent), which still lands in the server.
send({ id: 3, method: 'tools/call', params: { name: 'write_note', arguments: { id: 'a', text: 'v2' } } });
await sleep(50);
console.log('read during the write:', text(await read(4)));
send({ method: 'notifications/cancelled', params: { requestId: 3, reason: 'user pressed Esc' } });
await sleep(800);  // the write has landed in the server
const after = await read(5);
console.log('read after the write landed:', text(after), hit(after) ? '(served from cache)' : '(from the server)');
child.stdin.end();
if (!/v2/.test(text(after) ?? '')) {
  console.log('FAIL a cancelled write that landed left its pre-write read cached');
  process.exit(1);
}
console.log('ok   the write that landed is seen');
process.exit(0);
