// Two `toolcache mcp` processes, the same filesystem server command, one
// SQLite store (two agents of one user on one machine: e.g. an IDE and a
// sandboxed agent whose client narrows the server with MCP roots). Client B's
// roots exclude A's folder; B's server refuses the read, the cache answers it.
// Usage: TOOLCACHE_BIN=... node roots_stdio.mjs  (exit 1 while the hole exists)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BIN = process.env.TOOLCACHE_BIN ?? '/tmp/s18/atk_tc';
const FS = (process.env.TOOLCACHE_SOURCE_DIR ?? '/work/wt/attackV') + '/tests/peers/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js';
const work = mkdtempSync(join(tmpdir(), 'atkV-rootsio-'));
mkdirSync(join(work, 'a')); mkdirSync(join(work, 'b'));
writeFileSync(join(work, 'a', 'secret.txt'), 'SECRET_OF_A\n');
const store = `sqlite:${join(work, 'c.db')}`;
async function client(root) {
  const c = new Client({ name: 'atk', version: '1' }, { capabilities: { roots: { listChanged: true } } });
  c.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: `file://${root}`, name: 'r' }] }));
  await c.connect(new StdioClientTransport({ command: 'taskset', args: ['-c', '0', BIN, 'mcp', '--store', store, '--', process.execPath, FS, work], stderr: 'ignore' }));
  return c;
}
const text = (r) => JSON.stringify(r.content ?? r);
const A = await client(join(work, 'a'));
const B = await client(join(work, 'b'));
await new Promise((r) => setTimeout(r, 3000));
const path = join(work, 'a', 'secret.txt');
const b0 = await B.callTool({ name: 'read_text_file', arguments: { path: join(work, 'b', '../a/secret.txt') } });
console.log('B, its own server:', text(b0).slice(0, 140));
console.log('A:', text(await A.callTool({ name: 'read_text_file', arguments: { path } })).slice(0, 80));
const b1 = await B.callTool({ name: 'read_text_file', arguments: { path } });
console.log('B:', text(b1).slice(0, 80), JSON.stringify(b1._meta ?? {}));
await A.close(); await B.close();
if (text(b1).includes('SECRET_OF_A')) { console.log('FAIL: B was served a file outside its roots'); process.exit(1); }
console.log('PASS'); process.exit(0);
