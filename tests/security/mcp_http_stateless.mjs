// Attacks on `toolcache serve`'s /mcp/<name> in the stateless MCP era
// (2026-07-28, docs/SERVE.md "The stateless era"): one pooled child per
// (server, tenant) must not let one tenant read another's cached answers or
// steal another client's answer by reusing its JSON-RPC id; header/body
// disagreements must be refused before the child sees them; an Mcp-Name
// carrying a line break must not split a header. The MCP server is the real
// server-filesystem from tests/peers. Each case prints what it saw; the
// process exits non-zero naming the first case that failed. Run by
// tests/e2e_security.sh.
import { spawn } from 'node:child_process';
import { killOnExit } from '../support/kill_on_exit.mjs';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const src = process.env.TOOLCACHE_SOURCE_DIR;
const FS = path.join(src, 'tests/peers/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const TEE = path.join(src, 'tests/peers/tee.js');
const work = mkdtempSync(path.join(tmpdir(), 'toolcache-sec-stateless-'));
const files = path.join(work, 'files');
mkdirSync(files);
const log = path.join(work, 'fs.log');
writeFileSync(log, '');
writeFileSync(path.join(files, 'secret.txt'), 'alice-only');
writeFileSync(path.join(work, 'serve.yaml'), `tools:
  read_text_file: {requestType: INFORMATIONAL, ttlSeconds: 600}
servers:
  fs:
    command: ${JSON.stringify([process.execPath, TEE, log, '--', process.execPath, FS, files])}
serve:
  tenants:
    alice: {token: tok-alice}
    bob: {token: tok-bob}
`);
// The operator's token reads the whole stats (with tenants, session 19).
const ADMIN = 'ops-stateless-admin';
const serve = killOnExit(spawn(process.env.TOOLCACHE_BIN, ['serve', '--listen', '127.0.0.1:0', '--config', path.join(work, 'serve.yaml'), '--log-level', 'error'],
  { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TOOLCACHE_ADMIN_TOKEN: ADMIN } }));
let err = '';
serve.stderr.on('data', (d) => { err += d; });
const base = await new Promise((resolve, reject) => {
  let out = '';
  serve.stdout.on('data', (d) => {
    out += d;
    const m = out.match(/listening on (http:\S+)/);
    if (m) resolve(m[1]);
  });
  serve.on('exit', (c) => reject(new Error(`serve exited ${c}: ${err}`)));
});
const url = `${base}/mcp/fs`;

let failed = null;
function check(name, ok, saw) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}: ${saw}`);
  if (!ok && !failed) failed = name;
}
const V = '2026-07-28';
const META = { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientCapabilities': {} };
const modern = (id, method, params = {}) => ({ jsonrpc: '2.0', id, method, params: { ...params, _meta: META } });
async function post(token, body, extra = {}) {
  const h = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}`,
    'mcp-protocol-version': V, 'mcp-method': body.method };
  const name = body.params?.name ?? body.params?.uri;
  if (name !== undefined) h['mcp-name'] = name;
  const r = await fetch(url, { method: 'POST', headers: { ...h, ...extra }, body: JSON.stringify(body) });
  const raw = await r.text();
  let json = null;
  try { json = JSON.parse(raw); } catch { /* not JSON */ }
  return { status: r.status, raw, json };
}
const calls = () => readFileSync(log, 'utf8').split('\n').filter((l) => l.includes('"method":"tools/call"')).length;
const read = (id) => modern(id, 'tools/call', { name: 'read_text_file', arguments: { path: path.join(files, 'secret.txt') } });

try {
  // Case 1: cache scopes stay per tenant in the pooled children.
  await post('tok-alice', modern(1, 'tools/list'));
  await post('tok-bob', modern(1, 'tools/list'));
  const a1 = await post('tok-alice', read(2));
  const a2 = await post('tok-alice', read(3));
  const before = calls();
  const b1 = await post('tok-bob', read(4));
  const hitA = a2.json?.result?._meta?.['toolcache/cache']?.hit === true;
  const hitB = b1.json?.result?._meta?.['toolcache/cache']?.hit === true;
  check('stateless: a tenant never gets another tenant\'s cached answer', hitA && !hitB && calls() === before + 1,
    `alice 2nd call hit=${hitA}, bob's call hit=${hitB}, server calls for bob's ${calls() - before}`);
  const stats = await (await fetch(`${base}/toolcache/stats`, { headers: { authorization: `Bearer ${ADMIN}` } })).json().catch(() => ({}));
  const pooled = stats?.mcp?.pooledChildrenStarted;
  check('stateless: one pooled child per tenant, not one shared', pooled === undefined || pooled === 2, `pooledChildrenStarted=${pooled}`);

  // Case 2: two clients reusing one id concurrently each get their own answer.
  writeFileSync(path.join(files, 'p.txt'), 'PPP');
  writeFileSync(path.join(files, 'q.txt'), 'QQQ');
  const [p, q] = await Promise.all(['p.txt', 'q.txt'].map((f) =>
    post('tok-alice', modern(77, 'tools/call', { name: 'read_text_file', arguments: { path: path.join(files, f) } }))));
  const pt = p.json?.result?.content?.[0]?.text;
  const qt = q.json?.result?.content?.[0]?.text;
  check('stateless: a reused JSON-RPC id cannot take another client\'s answer', pt === 'PPP' && qt === 'QQQ' && p.json.id === 77 && q.json.id === 77,
    `p=${pt} q=${qt}`);

  // Case 3: Mcp-Name disagreeing with the body is refused before the server sees it.
  const c0 = calls();
  const mm = await post('tok-alice', read(5), { 'mcp-name': 'write_file' });
  check('stateless: Mcp-Name/body mismatch refused (400 -32020), not forwarded', mm.status === 400 && mm.json?.error?.code === -32020 && calls() === c0,
    `${mm.status} ${mm.raw.slice(0, 120)}`);

  // Case 4: a batch smuggling a modern request is refused.
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', authorization: 'Bearer tok-alice' },
    body: JSON.stringify([read(6), read(7)]) });
  const rb = await r.text();
  check('stateless: a batch of 2026-07-28 requests is refused', r.status === 400 && calls() === c0, `${r.status} ${rb.slice(0, 120)}`);

  // Case 5: no token, no pooled child.
  const anon = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', 'mcp-protocol-version': V, 'mcp-method': 'tools/list' },
    body: JSON.stringify(modern(8, 'tools/list')) });
  await anon.text();
  check('stateless: a modern request without the tenant token is refused', anon.status === 401, `${anon.status}`);

  // Case 6: an unknown revision in the body names the supported ones, the request id, and stops there.
  const fut = await post('tok-alice', { ...read(9), params: { ...read(9).params, _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } },
    { 'mcp-protocol-version': '2099-01-01' });
  check('stateless: unknown revision -> 400 -32022 with supported, id kept', fut.status === 400 && fut.json?.error?.code === -32022 && fut.json?.id === 9 &&
    Array.isArray(fut.json?.error?.data?.supported), `${fut.status} ${fut.raw.slice(0, 160)}`);

  // Case 7: a client cannot cancel a pooled request by naming its pooled id.
  const cancel = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', authorization: 'Bearer tok-bob', 'mcp-protocol-version': V },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'tc-1', reason: 'not mine' } }) });
  await cancel.text();
  await new Promise((r) => setTimeout(r, 300));
  const reached = readFileSync(log, 'utf8').includes('notifications/cancelled');
  check('stateless: a client\'s notifications/cancelled never reaches the shared child', cancel.status === 202 && !reached,
    `status ${cancel.status}, reached the server: ${reached}`);
} catch (e) {
  check('no exception', false, e.stack ?? String(e));
} finally {
  serve.kill('SIGTERM');
  await new Promise((r) => serve.on('exit', r));
  rmSync(work, { recursive: true, force: true });
}
if (failed) {
  console.log(`mcp_http_stateless: FAIL (${failed})`);
  process.exit(1);
}
console.log('mcp_http_stateless: all cases passed');
