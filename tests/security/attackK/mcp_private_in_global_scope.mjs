// attackK finding 1: a `private` MCP answer stored by a process whose scope
// is the global one ("": `toolcache mcp` with no --scope and no credential,
// the default) is served to every other scope on the store (--scope bob, a
// credentialed `mcp --url`, a serve tenant), because a declared call first
// looks up the global scope and a private entry written from "" is stored
// there exactly like a public one.
//
// Real peers: the SDK 2.4.0 server (tests/peers/modern_fixture.mjs), two
// `toolcache mcp` processes on one `--store sqlite:`. Exits 1 while the
// hole is open.
//
// Usage: TOOLCACHE_BIN=... node tests/security/attackK/mcp_private_in_global_scope.mjs
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = process.env.TOOLCACHE_BIN;
if (!BIN) { console.error('TOOLCACHE_BIN must be set'); process.exit(2); }
const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, '../../peers/modern_fixture.mjs');
const work = mkdtempSync(join(tmpdir(), 'attackK-priv-'));
const store = `sqlite:${join(work, 'shared.db')}`;
const children = [];
process.on('exit', () => { for (const c of children) { try { c.kill('SIGKILL'); } catch { /* gone */ } } rmSync(work, { recursive: true, force: true }); });

class Raw {
  constructor(flags) {
    this.child = spawn(BIN, ['mcp', '--name', 'notes', '--store', store, ...flags, '--', process.execPath, FIXTURE],
      { stdio: ['pipe', 'pipe', 'ignore'], env: { ...process.env, NOTE_TTL_MS: '60000' } });
    children.push(this.child);
    this.waiting = new Map();
    this.buf = '';
    this.child.stdout.on('data', (d) => {
      this.buf += d;
      let nl;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        if (!line.trim()) continue;
        const m = JSON.parse(line);
        const w = this.waiting.get(JSON.stringify(m.id));
        if (w) { this.waiting.delete(JSON.stringify(m.id)); w(m); }
      }
    });
  }
  request(id, method, params) {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no answer to ${method}`)), 20000);
      this.waiting.set(JSON.stringify(id), (m) => { clearTimeout(t); resolve(m); });
      this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }
  close() { this.child.stdin.end(); return new Promise((r) => this.child.on('exit', r)); }
}
const env = (extra = {}) => ({
  _meta: {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  },
  ...extra,
});
const hit = (m) => m.result?._meta?.['toolcache/cache']?.hit === true;
const text = (m) => m.result?.contents?.[0]?.text ?? m.result?.content?.[0]?.text;

// Alice: the default scope. Her server's note a is her own secret.
const alice = new Raw([]);
await alice.request(1, 'tools/call', env({ name: 'write_note', arguments: { id: 'a', text: 'alice-secret' } }));
const mine = await alice.request(2, 'resources/read', env({ uri: 'note://a' }));
console.log('alice reads (private, ttl 60 s):', text(mine));
// Bob: his own --scope, his own server (whose note a is "alpha").
const bob = new Raw(['--scope', 'bob']);
const got = await bob.request(1, 'resources/read', env({ uri: 'note://a' }));
console.log('bob reads:', text(got), hit(got) ? '(served from cache)' : '(from his server)');
await alice.close();
await bob.close();
if (hit(got) || /alice-secret/.test(text(got) ?? '')) {
  console.log('FAIL private resource of the default scope served to --scope bob');
  process.exit(1);
}
console.log('ok   a private answer stays in the default scope');
