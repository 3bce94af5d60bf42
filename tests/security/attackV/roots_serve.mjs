// Two MCP clients of one `toolcache serve` tenant (/mcp/fs, 2025-era
// sessions), each with its own roots (the client's boundary the filesystem
// server enforces). Client B's roots exclude A's folder; B's own server
// refuses B's read of A's file, but the cache answers it.
// Usage: TOOLCACHE_BIN=... node roots_serve.mjs  (exit 1 while the hole exists)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BIN = process.env.TOOLCACHE_BIN ?? '/tmp/s18/atk_tc';
const FS = (process.env.TOOLCACHE_SOURCE_DIR ?? '/work/wt/attackV') + '/tests/peers/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js';
const work = mkdtempSync(join(tmpdir(), 'atkV-roots-'));
mkdirSync(join(work, 'a')); mkdirSync(join(work, 'b'));
writeFileSync(join(work, 'a', 'secret.txt'), 'SECRET_OF_A\n');
writeFileSync(join(work, 'b', 'mine.txt'), 'b file\n');
const extra = process.env.EXTRA_YAML ?? '';
writeFileSync(join(work, 'serve.yaml'), `servers:\n  fs:\n    command: ["${process.execPath}", "${FS}", "${work}"]\n${extra}`);
const serve = spawn('taskset', ['-c', '0', BIN, 'serve', '--listen', '127.0.0.1:0', '--config', join(work, 'serve.yaml'), '--log-level', process.env.LOGLEVEL ?? 'warn'], { stdio: ['ignore', 'pipe', 'inherit'] });
process.on('exit', () => serve.kill('SIGKILL'));
const url = await new Promise((res, rej) => {
  let buf = '';
  serve.stdout.on('data', (d) => { buf += d; const m = buf.match(/listening on (http:\/\/\S+)/); if (m) res(m[1]); });
  setTimeout(() => rej(new Error('serve did not start')), 30000);
});
async function client(root, token) {
  const c = new Client({ name: 'atk', version: '1' }, { capabilities: { roots: { listChanged: true } } });
  c.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: `file://${root}`, name: 'r' }] }));
  const headers = token ? { authorization: `Bearer ${token}` } : {};
  await c.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp/fs`), { requestInit: { headers } }));
  return c;
}
const text = (r) => JSON.stringify(r.content ?? r);
const TA = process.env.TOKEN_A, TB = process.env.TOKEN_B;
const A = await client(join(work, 'a'), TA);
const B = await client(join(work, 'b'), TB ?? TA);
await new Promise((r) => setTimeout(r, 3000)); // roots/list answered, past the 2 s settle
const path = join(work, 'a', 'secret.txt');
// B alone first: its own server must refuse (proves the boundary is real).
const b0 = await B.callTool({ name: 'read_text_file', arguments: { path: join(work, 'a', '../a/secret.txt') } });
console.log('B direct (other spelling):', text(b0).slice(0, 160));
const a1 = await A.callTool({ name: 'read_text_file', arguments: { path } });
console.log('A:', text(a1).slice(0, 160));
const a2 = await A.callTool({ name: 'read_text_file', arguments: { path } });
console.log('A again:', JSON.stringify(a2._meta ?? {}));
const b1 = await B.callTool({ name: 'read_text_file', arguments: { path } });
console.log('B:', text(b1).slice(0, 160), JSON.stringify(b1._meta ?? {}));
await A.close(); await B.close();
if (text(b1).includes('SECRET_OF_A')) { console.log('FAIL: B (roots', join(work, 'b'), ') was served A\'s file outside its roots'); process.exit(1); }
console.log('PASS'); process.exit(0);
