// Security group "serve_public_per_tenant" (session 19, from attackK's
// "Noticed" note): `toolcache serve` starts each tenant's servers as
// processes of their own, so one tenant's server state is not another's. An
// answer a server declares public (MCP 2026-07-28 cacheScope "public") is
// shared among the tenant's own sessions, never with another tenant, whose
// own server process would have answered differently. Before, alice's
// public doc://public (her server's state after her write) was served to
// bob as a hit.
// Real peers: tests/peers/modern_fixture.mjs (SDK 2.4.0) behind
// tests/peers/tee.js.
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { BIN, SRC, caseRunner } from './lib/common.mjs';
import { killOnExit } from '../support/kill_on_exit.mjs';

const FIXTURE = path.join(SRC, 'tests/peers/modern_fixture.mjs');
const TEE = path.join(SRC, 'tests/peers/tee.js');
const work = mkdtempSync(path.join(tmpdir(), 'toolcache-public-'));
const log = path.join(work, 'notes.log');
writeFileSync(log, '');
writeFileSync(path.join(work, 'serve.yaml'), `servers:
  notes:
    command: ${JSON.stringify([process.execPath, TEE, log, '--', process.execPath, FIXTURE])}
serve:
  tenants:
    alice: {token: tok-alice}
    bob: {token: tok-bob}
`);
const serve = killOnExit(spawn(BIN, ['serve', '--listen', '127.0.0.1:0', '--config', path.join(work, 'serve.yaml'), '--log-level', 'error'],
  { stdio: ['ignore', 'pipe', 'inherit'] }));
const base = await new Promise((res, rej) => {
  let out = '';
  serve.stdout.on('data', (d) => { out += d; const m = out.match(/listening on (http:\S+)/); if (m) res(m[1]); });
  serve.on('exit', (code) => rej(new Error(`serve exited ${code}`)));
  setTimeout(() => rej(new Error('serve did not start')), 30000);
});

const V = '2026-07-28';
const meta = { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' } };
async function mcp(token, id, method, params = {}) {
  const body = { jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } };
  const h = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}`,
    'mcp-protocol-version': V, 'mcp-method': method };
  const name = params.name ?? params.uri;
  if (name !== undefined) h['mcp-name'] = name;
  const r = await fetch(`${base}/mcp/notes`, { method: 'POST', headers: h, body: JSON.stringify(body) });
  const raw = await r.text();
  const line = raw.includes('data:') ? raw.split('\n').filter((l) => l.startsWith('data:')).pop().slice(5) : raw;
  try { return JSON.parse(line); } catch { return { raw, status: r.status }; }
}
const textOf = (m) => m?.result?.contents?.[0]?.text;
const hit = (m) => m?.result?._meta?.['toolcache/cache']?.hit === true;
const reads = () => readFileSync(log, 'utf8').split('\n')
  .filter((l) => l.includes('"resources/read"') && l.includes('doc://public')).length;

const t = caseRunner('serve_public_per_tenant');

await t.step("a public answer of alice's server is shared with alice, not with bob", async () => {
  // Alice's write changes her server process's state (its version).
  const w = await mcp('tok-alice', 1, 'tools/call', { name: 'write_note', arguments: { id: 'a', text: 'x' } });
  assert.ok(w.result, `write: ${JSON.stringify(w)}`);
  const mine = await mcp('tok-alice', 2, 'resources/read', { uri: 'doc://public' });
  assert.equal(textOf(mine), 'public v2', JSON.stringify(mine));
  const again = await mcp('tok-alice', 3, 'resources/read', { uri: 'doc://public' });
  assert.ok(hit(again), 'public is not shared within the tenant');
  const before = reads();
  const theirs = await mcp('tok-bob', 1, 'resources/read', { uri: 'doc://public' });
  assert.ok(!hit(theirs), `bob was served alice's public answer: ${textOf(theirs)}`);
  assert.equal(textOf(theirs), 'public v1', "bob's own server answers");
  assert.equal(reads(), before + 1);
  assert.ok(hit(await mcp('tok-bob', 2, 'resources/read', { uri: 'doc://public' })));
});

t.finish();
process.exit(0);
