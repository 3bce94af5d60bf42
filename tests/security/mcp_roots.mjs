// Security group "mcp_roots" (session 18, attackV finding 5): MCP roots are
// the boundary a client puts on its server (server-filesystem replaces its
// allowed folders with the client's roots). Client B's roots exclude A's
// folder: B's own server refuses A's file, so the cache must not answer it
// from A's read. Before: the roots answer only invalidated, and entries
// were shared by every session of a serve tenant (and without tenants) and
// by `toolcache mcp` processes on one store.
// Now: a digest of the client's last roots answer is part of the scope.
// Real peers: the official MCP SDK client and server-filesystem, from
// tests/peers/node_modules.
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { BIN, SRC, caseRunner } from './lib/common.mjs';
import { killOnExit } from '../support/kill_on_exit.mjs';

const mods = join(SRC, 'tests/peers/node_modules');
const sdk = (rel) => import(pathToFileURL(join(mods, '@modelcontextprotocol/sdk/dist/esm', rel)));
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const { ListRootsRequestSchema } = await sdk('types.js');
const FS = join(mods, '@modelcontextprotocol/server-filesystem/dist/index.js');

const work = mkdtempSync(join(tmpdir(), 'toolcache-roots-'));
mkdirSync(join(work, 'a'));
mkdirSync(join(work, 'b'));
writeFileSync(join(work, 'a', 'secret.txt'), 'SECRET_OF_A\n');
writeFileSync(join(work, 'b', 'mine.txt'), 'b file\n');
const secret = join(work, 'a', 'secret.txt');
const text = (r) => JSON.stringify(r.content ?? r);
const settle = () => new Promise((r) => setTimeout(r, 3000));  // past the 2 s roots settle

async function connect(root, transport) {
  const c = new Client({ name: 'roots', version: '1' }, { capabilities: { roots: { listChanged: true } } });
  c.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: `file://${root}`, name: 'r' }] }));
  await c.connect(transport);
  return c;
}

// A reads its file twice (stored); B, whose roots are its own folder, reads
// the same path: it must get its own server's refusal.
async function aThenB(A, B) {
  const a1 = await A.callTool({ name: 'read_text_file', arguments: { path: secret } });
  assert.ok(text(a1).includes('SECRET_OF_A'), `A cannot read its own file: ${text(a1)}`);
  const a2 = await A.callTool({ name: 'read_text_file', arguments: { path: secret } });
  assert.equal(a2._meta?.['toolcache/cache']?.hit, true, 'A\'s read is not cached at all');
  const b1 = await B.callTool({ name: 'read_text_file', arguments: { path: secret } });
  assert.ok(!text(b1).includes('SECRET_OF_A'), `B (roots ${join(work, 'b')}) was served A's file: ${text(b1).slice(0, 120)}`);
}

async function serveCase(extraYaml, token) {
  const dir = mkdtempSync(join(work, 'serve-'));
  writeFileSync(join(dir, 'serve.yaml'), `servers:\n  fs:\n    command: ${JSON.stringify([process.execPath, FS, work])}\n${extraYaml}`);
  const serve = killOnExit(spawn(BIN, ['serve', '--listen', '127.0.0.1:0', '--config', join(dir, 'serve.yaml'), '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'inherit'] }));
  try {
    const url = await new Promise((res, rej) => {
      let buf = '';
      serve.stdout.on('data', (d) => { buf += d; const m = buf.match(/listening on (http:\/\/\S+)/); if (m) res(m[1]); });
      serve.on('exit', (code) => rej(new Error(`serve exited ${code}`)));
    });
    const opts = { requestInit: { headers: token ? { authorization: `Bearer ${token}` } : {} } };
    const A = await connect(join(work, 'a'), new StreamableHTTPClientTransport(new URL(`${url}/mcp/fs`), opts));
    const B = await connect(join(work, 'b'), new StreamableHTTPClientTransport(new URL(`${url}/mcp/fs`), opts));
    await settle();
    try { await aThenB(A, B); } finally { await A.close(); await B.close(); }
  } finally {
    serve.kill('SIGTERM');
  }
}

const t = caseRunner('mcp_roots');
await t.step('serve /mcp/fs: two sessions with other roots (no tenants)', () => serveCase('', ''));
await t.step('serve /mcp/fs: two sessions of one tenant with other roots', () =>
  serveCase('serve:\n  tenants:\n    acme: {token: tok-acme}\n', 'tok-acme'));
await t.step('toolcache mcp: two processes on one store with other roots', async () => {
  const store = `sqlite:${join(work, 'c.db')}`;
  const proc = (root) => connect(root, new StdioClientTransport({ command: BIN, args: ['mcp', '--store', store, '--', process.execPath, FS, work], stderr: 'ignore' }));
  const A = await proc(join(work, 'a'));
  const B = await proc(join(work, 'b'));
  await settle();
  try { await aThenB(A, B); } finally { await A.close(); await B.close(); }
});
t.finish();
process.exit(0);
