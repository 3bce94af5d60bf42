// Security group "mcp_era_cache" (MCP 2026-07-28 in `toolcache mcp`): a
// client of the stateless revision controls every request's envelope,
// params and retry state. None of it may get a cached answer the server
// would not have given that request:
//   1. envelope_spoof      a malformed or absent envelope is never answered
//                          from cache: the server's own error comes back;
//   2. capability_split    an answer given to one set of clientCapabilities
//                          is not served to another;
//   3. request_state       a multi round-trip retry (requestState /
//                          inputResponses, attacker-controlled) is never
//                          served, however its state is crafted;
//   4. key_injection       a params member named like the proxy's own key
//                          material cannot steer a lookup to another entry;
//   5. input_required      an interim result is never stored;
//   6. private_scope       a result the server marked private never crosses
//                          --scope on a shared store; a public one does.
// Real peers: the SDK 2.4.0 server (tests/peers/modern_fixture.mjs) behind
// tests/peers/tee.js, which logs what reached the server.
import { spawn } from 'node:child_process';
import { killOnExit } from '../support/kill_on_exit.mjs';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BIN, SRC } from './lib/common.mjs';
const FIXTURE = join(SRC, 'tests/peers/modern_fixture.mjs');
const TEE = join(SRC, 'tests/peers/tee.js');
const work = mkdtempSync(join(tmpdir(), 'toolcache-mcp-era-sec-'));
const TIMEOUT_MS = 20000;
let n = 0;

function proxy(flags = []) {
  const log = join(work, `server-${++n}.log`);
  writeFileSync(log, '');
  const child = killOnExit(spawn(BIN, ['mcp', '--name', 'era-sec', '--log-level', 'info', ...flags, '--', process.execPath, TEE, log, '--',
    process.execPath, FIXTURE], { stdio: ['pipe', 'pipe', 'pipe'] }));
  const p = { child, log, waiting: new Map(), buf: '', err: '', id: 0 };
  child.stderr.on('data', (d) => { p.err += d; });
  child.stdout.on('data', (d) => {
    p.buf += d;
    let nl;
    while ((nl = p.buf.indexOf('\n')) >= 0) {
      const line = p.buf.slice(0, nl);
      p.buf = p.buf.slice(nl + 1);
      if (!line.trim()) continue;
      const m = JSON.parse(line);
      const w = p.waiting.get(JSON.stringify(m.id));
      if (w) { p.waiting.delete(JSON.stringify(m.id)); w(m); }
    }
  });
  p.request = (method, params) => new Promise((resolve, reject) => {
    const id = ++p.id;
    const t = setTimeout(() => reject(new Error(`no answer to ${method}; stderr: ${p.err}`)), TIMEOUT_MS);
    p.waiting.set(JSON.stringify(id), (m) => { clearTimeout(t); resolve(m); });
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  });
  p.close = async () => { child.stdin.end(); await new Promise((r) => child.on('exit', r)); };
  return p;
}
const reached = (p, method, pred = () => true) => readFileSync(p.log, 'utf8').split('\n')
  .filter((l) => l.trim()).map((l) => JSON.parse(l))
  .filter((m) => m.method === method && m.id !== undefined && pred(m)).length;
const hit = (m) => m.result?._meta?.['toolcache/cache']?.hit === true;
const V = 'io.modelcontextprotocol/protocolVersion';
const C = 'io.modelcontextprotocol/clientCapabilities';
const meta = (caps = { roots: {} }) => ({ [V]: '2026-07-28', [C]: caps });
const readNote = (m, extra = {}) => ({ name: 'read_note', arguments: { id: 'a' }, ...extra, ...(m && { _meta: m }) });

const cases = {};

cases.envelope_spoof = async () => {
  const p = proxy();
  try {
    await p.request('tools/call', readNote(meta()));
    assert.ok(hit(await p.request('tools/call', readNote(meta()))), 'setup: the read is not cached');
    const spoofs = {
      'no clientCapabilities': { [V]: '2026-07-28' },
      'clientCapabilities an array': { [V]: '2026-07-28', [C]: [] },
      'clientCapabilities.roots not an object': { [V]: '2026-07-28', [C]: { roots: true } },
      'protocolVersion a number': { [V]: 20260728, [C]: {} },
      'clientInfo without version': { ...meta(), 'io.modelcontextprotocol/clientInfo': { name: 'x' } },
      'logLevel unknown': { ...meta(), 'io.modelcontextprotocol/logLevel': 'verbose' },
      'no _meta at all': null,
    };
    let expected = 1;
    for (const [what, m] of Object.entries(spoofs)) {
      const r = await p.request('tools/call', readNote(m));
      expected += 1;
      assert.ok(!hit(r), `${what}: answered from cache`);
      assert.equal(r.error?.code, -32602, `${what}: not the server's error: ${JSON.stringify(r)}`);
      console.log(`  ${what}: server answered ${r.error.code} ${r.error.message.slice(0, 60)}`);
    }
    assert.equal(reached(p, 'tools/call'), expected, 'a spoofed envelope did not reach the server');
  } finally {
    await p.close();
  }
};

cases.capability_split = async () => {
  const p = proxy();
  try {
    await p.request('tools/call', readNote(meta({ roots: {} })));
    const other = await p.request('tools/call', readNote(meta({ elicitation: {} })));
    assert.ok(!hit(other), 'an answer crossed client capabilities');
    assert.equal(reached(p, 'tools/call'), 2);
    const list = await p.request('resources/read', { uri: 'note://a', _meta: meta({ roots: {} }) });
    assert.ok(!hit(list));
    assert.ok(!hit(await p.request('resources/read', { uri: 'note://a', _meta: meta({ sampling: {} }) })),
      'a resource crossed client capabilities');
  } finally {
    await p.close();
  }
};

cases.request_state = async () => {
  const p = proxy();
  try {
    await p.request('tools/call', readNote(meta()));
    const crafted = [
      { requestState: '{"uri":"note://a"}' },
      { requestState: 'x'.repeat(10000) },
      { inputResponses: { confirm: { action: 'accept' } } },
      { requestState: 'pending-a', inputResponses: {} },
    ];
    for (const extra of crafted) {
      const r = await p.request('tools/call', readNote(meta(), extra));
      assert.ok(!hit(r), `a retry was served from cache: ${JSON.stringify(extra).slice(0, 60)}`);
    }
    const reads = await p.request('resources/read', { uri: 'doc://public', _meta: meta() });
    assert.ok(!hit(reads));
    assert.ok(!hit(await p.request('resources/read', { uri: 'doc://public', requestState: 's', _meta: meta() })),
      'a resources/read retry was served');
    assert.equal(reached(p, 'tools/call'), 1 + crafted.length);
    assert.ok(p.err.includes('multi_round_trip'), 'the bypass reason is not named');
  } finally {
    await p.close();
  }
};

cases.key_injection = async () => {
  const p = proxy();
  try {
    // Client A (roots) has the public document cached.
    await p.request('resources/read', { uri: 'doc://public', _meta: meta({ roots: {} }) });
    assert.ok(hit(await p.request('resources/read', { uri: 'doc://public', _meta: meta({ roots: {} }) })));
    // Client B (no capabilities) names A's key material as a param.
    const injected = {
      uri: 'doc://public',
      'toolcache/envelope': { clientCapabilities: { roots: {} }, protocolVersion: '2026-07-28' },
      _meta: meta({}),
    };
    const r = await p.request('resources/read', injected);
    assert.ok(!hit(r), 'an injected key member steered the lookup');
    assert.equal(reached(p, 'resources/read'), 2);
  } finally {
    await p.close();
  }
};

cases.input_required = async () => {
  const p = proxy();
  try {
    const ask = () => p.request('tools/call', { name: 'confirm_delete', arguments: { id: 'a' }, _meta: meta({ elicitation: {} }) });
    assert.equal((await ask()).result?.resultType, 'input_required');
    const again = await ask();
    assert.equal(again.result?.resultType, 'input_required');
    assert.ok(!hit(again), 'an input_required result was stored');
    assert.equal(reached(p, 'tools/call'), 2);
  } finally {
    await p.close();
  }
};

cases.private_scope = async () => {
  const store = `sqlite:${join(work, 'shared.db')}`;
  const a = proxy(['--scope', 'tenant-a', '--store', store]);
  const b = proxy(['--scope', 'tenant-b', '--store', store]);
  try {
    await a.request('resources/read', { uri: 'note://a', _meta: meta() });
    await a.request('resources/read', { uri: 'doc://public', _meta: meta() });
    assert.ok(hit(await a.request('resources/read', { uri: 'note://a', _meta: meta() })), 'setup: not cached');
    assert.ok(!hit(await b.request('resources/read', { uri: 'note://a', _meta: meta() })),
      'a private result crossed --scope');
    assert.ok(hit(await b.request('resources/read', { uri: 'doc://public', _meta: meta() })),
      'a public result was not shared');
  } finally {
    await a.close();
    await b.close();
  }
};

let failed = 0;
for (const [name, fn] of Object.entries(cases)) {
  try {
    await fn();
    console.log(`ok   mcp_era_cache/${name}`);
  } catch (e) {
    failed += 1;
    console.log(`FAIL mcp_era_cache/${name}: ${e.stack ?? e}`);
  }
}
rmSync(work, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
