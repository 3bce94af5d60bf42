// attackK finding 4: a stdio server's non-secret environment that selects
// whose data it serves (server-memory's MEMORY_FILE_PATH; likewise
// AWS_PROFILE, KUBECONFIG, HOME, GOOGLE_CLOUD_PROJECT, a *_DIR or *_FILE)
// is not part of `toolcache mcp`'s principal. Two users (or one user's two
// projects) running the same server command on one shared store, neither
// with a secret-looking variable, are one principal: Bob's read_graph is
// answered from Alice's knowledge graph file.
//
// Real peers: @modelcontextprotocol/server-memory (tests/peers), two
// `toolcache mcp` processes on one `--store sqlite:`. Exits 1 while the
// hole is open.
//
// Usage: TOOLCACHE_BIN=... node tests/security/attackK/mcp_env_selects_data.mjs
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = process.env.TOOLCACHE_BIN;
if (!BIN) { console.error('TOOLCACHE_BIN must be set'); process.exit(2); }
const here = dirname(fileURLToPath(import.meta.url));
const MEMORY = join(here, '../../peers/node_modules/@modelcontextprotocol/server-memory/dist/index.js');
const work = mkdtempSync(join(tmpdir(), 'attackK-env-'));
const store = `sqlite:${join(work, 'shared.db')}`;
writeFileSync(join(work, 'alice.jsonl'),
  `${JSON.stringify({ type: 'entity', name: 'alice-bank', entityType: 'secret', observations: ['PIN 4711'] })}\n`);
writeFileSync(join(work, 'bob.jsonl'), '');
const children = [];
process.on('exit', () => {
  for (const c of children) { try { c.kill('SIGKILL'); } catch { /* gone */ } }
  rmSync(work, { recursive: true, force: true });
});

// A clean environment as a user's shell would give: no secret-looking names.
function baseEnv(home) {
  return { PATH: process.env.PATH, HOME: home, USER: home.endsWith('alice') ? 'alice' : 'bob', LANG: 'C.UTF-8' };
}
function start(name) {
  const env = { ...baseEnv(join(work, name)), MEMORY_FILE_PATH: join(work, `${name}.jsonl`) };
  const child = spawn(BIN, ['mcp', '--store', store, '--', process.execPath, MEMORY], { stdio: ['pipe', 'pipe', 'ignore'], env });
  children.push(child);
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
    const t = setTimeout(() => reject(new Error(`no answer to ${method}`)), 20000);
    waiting.set(JSON.stringify(id), (m) => { clearTimeout(t); resolve(m); });
    send({ id, method, params });
  });
  return {
    async init() {
      await request(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
      send({ method: 'notifications/initialized' });
      await request(2, 'tools/list', {});
    },
    readGraph: (id) => request(id, 'tools/call', { name: 'read_graph', arguments: {} }),
    close: () => { child.stdin.end(); return new Promise((r) => child.on('exit', r)); },
  };
}
const text = (m) => m.result?.content?.[0]?.text ?? JSON.stringify(m.result?.structuredContent ?? m.error);
const hit = (m) => m.result?._meta?.['toolcache/cache']?.hit === true;

const alice = start('alice');
await alice.init();
console.log('alice reads her graph:', text(await alice.readGraph(3)).slice(0, 120));
const bob = start('bob');
await bob.init();
const got = await bob.readGraph(3);
console.log('bob reads his (empty) graph:', text(got).slice(0, 120), hit(got) ? '(served from cache)' : '(from his server)');
await alice.close();
await bob.close();
if (hit(got) || /alice-bank/.test(text(got))) {
  console.log('FAIL another user\'s memory file served');
  process.exit(1);
}
console.log('ok   the server\'s data file separates principals');
