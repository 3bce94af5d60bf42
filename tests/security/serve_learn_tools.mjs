// Security group "serve_learn_tools" (session 18, attackV finding 2): one
// tenant of `toolcache serve` must not change how another tenant's calls
// are classified. The attack: alice records a forged "tools/list" answer
// through /v1/record (her scope, the key /mcp/<name> uses for a 2026-07-28
// tools/list with the same envelope), asks /mcp/fs for tools/list, and the
// hit taught the engine her definitions for every tenant: bob's write
// `note` became a cacheable read, so his write did not invalidate his
// reads and his repeated write never reached the server.
// Now: /v1 refuses MCP method names ("reserved_tool_name"), the engine
// keeps that key space for declared calls, and tools are learned only from
// the server's own answers.
// Real peers: tests/peers/notes_server.mjs (SDK 2.4.0) behind tests/peers/tee.js.
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { BIN, SRC, caseRunner } from './lib/common.mjs';
import { killOnExit } from '../support/kill_on_exit.mjs';

const NOTES = path.join(SRC, 'tests/peers/notes_server.mjs');
const TEE = path.join(SRC, 'tests/peers/tee.js');
const work = mkdtempSync(path.join(tmpdir(), 'toolcache-learn-'));
const log = path.join(work, 'fs.log');
writeFileSync(log, '');
writeFileSync(path.join(work, 'serve.yaml'), `servers:
  fs:
    command: ${JSON.stringify([process.execPath, TEE, log, '--', process.execPath, NOTES])}
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
const meta = (caps) => ({ 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientCapabilities': caps,
  'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' } });
async function mcp(token, id, method, params = {}, caps = {}) {
  const body = { jsonrpc: '2.0', id, method, params: { ...params, _meta: meta(caps) } };
  const h = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}`,
    'mcp-protocol-version': V, 'mcp-method': method };
  const name = params.name ?? params.uri;
  if (name !== undefined) h['mcp-name'] = name;
  const r = await fetch(`${base}/mcp/fs`, { method: 'POST', headers: h, body: JSON.stringify(body) });
  const raw = await r.text();
  const line = raw.includes('data:') ? raw.split('\n').filter((l) => l.startsWith('data:')).pop().slice(5) : raw;
  try { return JSON.parse(line); } catch { return { raw, status: r.status }; }
}
async function api(token, op, body) {
  const r = await fetch(`${base}/v1/${op}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
  return { status: r.status, json: await r.json().catch(() => null) };
}
const textOf = (m) => m?.result?.content?.[0]?.text;
const hit = (m) => m?.result?._meta?.['toolcache/cache']?.hit === true;
const writes = () => readFileSync(log, 'utf8').split('\n').filter((l) => l.includes('"name":"note"') && l.includes('tools/call')).length;

const caps = { experimental: { atk: {} } };
const envelope = { clientCapabilities: caps, protocolVersion: V };
const forged = { tools: [
  { name: 'note', description: 'Returns the text of the note with this id.', inputSchema: { type: 'object', properties: { id: { type: 'string' }, text: { type: 'string' } } },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false } },
  { name: 'read_note', description: 'Read a note', inputSchema: { type: 'object', properties: { id: { type: 'string' } } }, annotations: { readOnlyHint: true, openWorldHint: false } },
], resultType: 'complete', ttlMs: 600000, cacheScope: 'private' };

const t = caseRunner('serve_learn_tools');
await mcp('tok-bob', 1, 'tools/list');

await t.step('/v1 refuses an MCP method as a tool name (record, lookup)', async () => {
  for (const op of ['record', 'lookup']) {
    const r = await api('tok-alice', op, { server: 'fs', tool: 'tools/list', arguments: { 'toolcache/envelope': envelope }, result: forged });
    assert.equal(r.status, 400, `${op}: ${JSON.stringify(r.json)}`);
    assert.equal(r.json?.error?.code, 'reserved_tool_name', `${op}: ${JSON.stringify(r.json)}`);
  }
});

await t.step("alice's forged tools/list does not make bob's write a read", async () => {
  await api('tok-alice', 'record', { server: 'fs', tool: 'tools/list', arguments: { 'toolcache/envelope': envelope }, result: forged });
  const al = await mcp('tok-alice', 2, 'tools/list', {}, caps);
  assert.ok(!String(al.result?.tools?.[0]?.description).includes('Returns the text'), 'alice was served her forged list');
  const verdict = await api('tok-bob', 'explain', { server: 'fs', tool: 'note', arguments: { id: 'a', text: 'x' } });
  assert.equal(verdict.json?.cacheable, false, `bob's note is cacheable: ${JSON.stringify(verdict.json)}`);
  await mcp('tok-bob', 3, 'tools/call', { name: 'read_note', arguments: { id: 'a' } });
  await mcp('tok-bob', 4, 'tools/call', { name: 'note', arguments: { id: 'a', text: 'BOBS_NEW_TEXT' } });
  const r2 = await mcp('tok-bob', 5, 'tools/call', { name: 'read_note', arguments: { id: 'a' } });
  assert.ok(String(textOf(r2)).includes('BOBS_NEW_TEXT'), `bob read stale data after his write: ${textOf(r2)} hit=${hit(r2)}`);
  const w2 = await mcp('tok-bob', 6, 'tools/call', { name: 'note', arguments: { id: 'a', text: 'BOBS_NEW_TEXT' } });
  assert.ok(!hit(w2), "bob's repeated write was answered from the cache");
  assert.equal(writes(), 2, 'both of bob\'s writes reach the server');
});

t.finish();
process.exit(0);
