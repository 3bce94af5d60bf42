// End-to-end tests of `toolcache mcp` across MCP eras (docs/MCP.md,
// "Protocol eras"), with real peers: the SDK 2.4.0 server
// (modern_fixture.mjs, which speaks 2026-07-28 and 2025), the SDK 2.4.0
// client (2026-07-28, or negotiating down), the SDK 1.32.2 client (2025) and
// server-memory (a 2025-era server). Server-side requests are counted from
// tests/peers/tee.js's log, never from toolcache's statistics.
//
// Usage: TOOLCACHE_BIN=... node e2e_mcp_era.mjs [test-name-filter]
// Exit code 0 when every test passed.
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { spawn } from 'node:child_process';
import { killOnExit } from '../support/kill_on_exit.mjs';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const BIN = process.env.TOOLCACHE_BIN;
if (!BIN) {
  console.error('TOOLCACHE_BIN is not set');
  process.exit(2);
}
const FIXTURE = [join(here, 'modern_fixture.mjs')];
const MEMORY = [join(here, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js')];
const TIMEOUT_MS = 20000;
const work = mkdtempSync(join(tmpdir(), 'toolcache-era-'));
let logCounter = 0;

// The proxy command line for `server`; returns {command, args, log}.
function proxied(server, proxyFlags = []) {
  const log = join(work, `server-${++logCounter}.log`);
  writeFileSync(log, '');
  return {
    command: BIN,
    args: ['mcp', '--name', 'era-fixture', ...proxyFlags, '--', process.execPath,
      join(here, 'tee.js'), log, '--', process.execPath, ...server],
    log,
  };
}
function serverLog(log) {
  return readFileSync(log, 'utf8').split('\n').filter((l) => l.trim())
    .map((l) => { try { return JSON.parse(l); } catch { return { unparsable: l }; } });
}
const sent = (log, method, pred = () => true) =>
  serverLog(log).filter((m) => m.method === method && m.id !== undefined && pred(m)).length;
const sentCall = (log, tool) => sent(log, 'tools/call', (m) => m.params?.name === tool);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A raw JSON-RPC client over the proxy's stdio: exact bytes in, parsed
// answers out (the SDK clients always send valid envelopes).
class RawClient {
  constructor(p) {
    this.child = killOnExit(spawn(p.command, p.args, { stdio: ['pipe', 'pipe', 'inherit'] }));
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
        if (w) {
          this.waiting.delete(JSON.stringify(m.id));
          w(m);
        }
      }
    });
  }
  request(id, method, params) {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no answer to ${method} id ${id}`)), TIMEOUT_MS);
      this.waiting.set(JSON.stringify(id), (m) => { clearTimeout(t); resolve(m); });
      this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }
  async close() {
    this.child.stdin.end();
    await new Promise((r) => this.child.on('exit', r));
  }
}

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
};
const env = (extra = {}) => ({ _meta: { ...ENVELOPE }, ...extra });
const hit = (m) => m.result?._meta?.['toolcache/cache']?.hit === true;
const textOf = (m) => m.result?.content?.[0]?.text ?? m.result?.contents?.[0]?.text;

const tests = {};

// The reproduction, over stdio with the real SDK server: a call the
// server rejects for its envelope reaches it and returns its -32602.
tests.envelope_error_reaches_the_server = async () => {
  const p = proxied(FIXTURE);
  const c = new RawClient(p);
  try {
    let id = 0;
    const read = (params) => c.request(++id, 'tools/call', { name: 'read_note', arguments: { id: 'a' }, ...params });
    const first = await read(env());
    assert.equal(textOf(first), 'note a = alpha v1');
    assert.ok(hit(await read(env())), 'the second read is not served from cache');
    const noCaps = await read({ _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } });
    assert.equal(noCaps.error?.code, -32602, JSON.stringify(noCaps));
    assert.match(noCaps.error.message, /Invalid _meta envelope/);
    const bare = await read({});
    assert.equal(bare.error?.code, -32602, JSON.stringify(bare));
    const future = await read({ _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2027-01-01' } });
    assert.ok(future.error !== undefined || !hit(future), 'an unknown revision was served from cache');
    assert.equal(sentCall(p.log, 'read_note'), 4, 'every rejected envelope must reach the server');
  } finally {
    await c.close();
  }
};

// input_required is never stored; a retry with inputResponses/requestState
// is never served.
tests.input_required_never_cached = async () => {
  const p = proxied(FIXTURE);
  const c = new RawClient(p);
  try {
    const ask = (id, extra = {}) => c.request(id, 'tools/call', { name: 'confirm_delete', arguments: { id: 'a' }, ...env(extra) });
    const a = await ask(1);
    assert.equal(a.result?.resultType, 'input_required');
    const b = await ask(2);
    assert.equal(b.result?.resultType, 'input_required');
    assert.ok(!hit(b), 'an input_required result was served from cache');
    const retry = { inputResponses: { confirm: { action: 'accept', content: { ok: true } } }, requestState: a.result.requestState };
    const r1 = await ask(3, retry);
    assert.equal(textOf(r1), 'confirmed a v1', JSON.stringify(r1));
    const r2 = await ask(4, retry);
    assert.ok(!hit(r2), 'a retry was served from cache');
    assert.equal(sentCall(p.log, 'confirm_delete'), 4);
  } finally {
    await c.close();
  }
};

// Lists and resources/read per ttlMs; a write invalidates.
tests.lists_and_reads_follow_the_hints = async () => {
  const p = proxied(FIXTURE);
  const c = new RawClient(p);
  try {
    const l1 = await c.request(1, 'tools/list', env());
    assert.equal(l1.result?.ttlMs, 1500);
    const l2 = await c.request(2, 'tools/list', env());
    assert.ok(hit(l2), 'tools/list within ttlMs was not served from cache');
    assert.equal(l2.id, 2);
    const { _meta: m1, ...rest1 } = l1.result;
    const { _meta: m2, ...rest2 } = l2.result;
    assert.deepEqual(rest2, rest1, 'the cached list differs');
    assert.equal(sent(p.log, 'tools/list'), 1);
    const r1 = await c.request(3, 'resources/read', env({ uri: 'note://a' }));
    assert.equal(textOf(r1), 'alpha v1');
    assert.ok(hit(await c.request(4, 'resources/read', env({ uri: 'note://a' }))));
    assert.ok(hit(await c.request(5, 'prompts/list', env())) === false);
    assert.ok(hit(await c.request(6, 'prompts/list', env())));
    assert.ok(hit(await c.request(7, 'server/discover', env())) === false);
    assert.ok(hit(await c.request(8, 'server/discover', env())));
    // A write drops them.
    await c.request(9, 'tools/call', env({ name: 'write_note', arguments: { id: 'a', text: 'ALPHA' } }));
    const r2 = await c.request(10, 'resources/read', env({ uri: 'note://a' }));
    assert.ok(!hit(r2));
    assert.equal(textOf(r2), 'ALPHA v2');
    assert.equal(sent(p.log, 'resources/read'), 2);
    assert.equal(sent(p.log, 'prompts/list'), 1);
    // After ttlMs the list is fetched again.
    await c.request(11, 'tools/list', env());
    await sleep(1700);
    assert.ok(!hit(await c.request(12, 'tools/list', env())), 'tools/list served after its ttlMs');
    assert.equal(sent(p.log, 'tools/list'), 3);
  } finally {
    await c.close();
  }
};

// After notifications/tools/list_changed the proxy lists the tools itself:
// in the 2026-07-28 era that request must carry the envelope, or the server
// rejects it (-32602) and every call stays uncached (tools_refreshing).
tests.tools_refresh_carries_the_envelope = async () => {
  const p = proxied(FIXTURE);
  const c = new RawClient(p);
  try {
    const changed = new Promise((resolve) => {
      c.child.stdout.on('data', (d) => { if (String(d).includes('notifications/tools/list_changed')) resolve(); });
    });
    c.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'listen', method: 'subscriptions/listen', params: { ...env(), notifications: { toolsListChanged: true } } })}\n`);
    await c.request(1, 'tools/list', env());
    await c.request(2, 'tools/call', env({ name: 'add_tool', arguments: { name: 'extra' } }));
    await changed;
    await sleep(300);  // the proxy's own listing is answered
    const refresh = serverLog(p.log).filter((m) => m.method === 'tools/list' && String(m.id).startsWith('toolcache-refresh-'));
    assert.equal(refresh.length, 1, 'the proxy did not re-list the tools');
    assert.equal(refresh[0].params?._meta?.['io.modelcontextprotocol/protocolVersion'], '2026-07-28');
    await c.request(3, 'tools/call', env({ name: 'extra', arguments: {} }));
    assert.ok(hit(await c.request(4, 'tools/call', env({ name: 'extra', arguments: {} }))),
      'the added read-only tool is not cached after the refresh');
    assert.equal(sentCall(p.log, 'extra'), 1);
  } finally {
    await c.close();
  }
};

// `private` stays in its --scope, `public` is shared by scopes on one store.
tests.private_and_public_across_scopes = async () => {
  const store = `sqlite:${join(work, 'shared.db')}`;
  const pa = proxied(FIXTURE, ['--scope', 'tenant-a', '--store', store]);
  const pb = proxied(FIXTURE, ['--scope', 'tenant-b', '--store', store]);
  const a = new RawClient(pa);
  const b = new RawClient(pb);
  try {
    await a.request(1, 'resources/read', env({ uri: 'note://a' }));
    await a.request(2, 'resources/read', env({ uri: 'doc://public' }));
    await a.request(3, 'resources/list', env());
    const priv = await b.request(1, 'resources/read', env({ uri: 'note://a' }));
    assert.ok(!hit(priv), 'a private resource crossed scopes');
    const pub = await b.request(2, 'resources/read', env({ uri: 'doc://public' }));
    assert.ok(hit(pub), 'a public resource was not shared');
    assert.ok(!hit(await b.request(3, 'resources/list', env())), 'a private list crossed scopes');
    assert.equal(sent(pb.log, 'resources/read', (m) => m.params.uri === 'doc://public'), 0);
    assert.ok(hit(await a.request(4, 'resources/list', env())));
  } finally {
    await a.close();
    await b.close();
  }
};

// The default scope ("": no --scope, no credential) is a scope like any
// other: its private answers stay in it, its public ones are shared. Before,
// a public entry was stored in scope "" as well, so --scope bob was served
// the default scope's private note (attackK finding 1).
tests.private_of_the_default_scope_stays_there = async () => {
  const store = `sqlite:${join(work, 'default-scope.db')}`;
  // A private TTL long enough to outlive the test (the fixture's default is
  // 1.5 s).
  process.env.NOTE_TTL_MS = '60000';
  const pa = proxied(FIXTURE, ['--store', store]);
  const pb = proxied(FIXTURE, ['--scope', 'bob', '--store', store]);
  const a = new RawClient(pa);
  const b = new RawClient(pb);
  delete process.env.NOTE_TTL_MS;
  try {
    await a.request(1, 'tools/call', env({ name: 'write_note', arguments: { id: 'a', text: 'alice-secret' } }));
    const mine = await a.request(2, 'resources/read', env({ uri: 'note://a' }));
    assert.match(textOf(mine), /alice-secret/);
    await a.request(3, 'resources/read', env({ uri: 'doc://public' }));
    assert.ok(hit(await a.request(4, 'resources/read', env({ uri: 'note://a' }))),
      'the default scope is not served its own private note');
    const theirs = await b.request(1, 'resources/read', env({ uri: 'note://a' }));
    assert.ok(!hit(theirs), 'a private note of the default scope was served to --scope bob');
    assert.doesNotMatch(textOf(theirs), /alice-secret/);
    assert.equal(sent(pb.log, 'resources/read', (m) => m.params.uri === 'note://a'), 1);
    const pub = await b.request(2, 'resources/read', env({ uri: 'doc://public' }));
    assert.ok(hit(pub), 'a public resource of the default scope was not shared');
    assert.equal(sent(pb.log, 'resources/read', (m) => m.params.uri === 'doc://public'), 0);
  } finally {
    await a.close();
    await b.close();
  }
};

// A public answer is shared by the processes of one principal only (revK,
// session 19): a stdio server started with another data-choosing variable
// is another instance with other data, whatever it declares public.
tests.public_stays_with_the_server_instance = async () => {
  const store = `sqlite:${join(work, 'public-instance.db')}`;
  const pa = proxied(FIXTURE, ['--store', store]);
  const pb = proxied(FIXTURE, ['--store', store]);
  const pc = proxied(FIXTURE, ['--scope', 'carol', '--store', store]);
  const a = new RawClient(pa);
  // The variable is read when the proxy starts (the spawn).
  process.env.NOTES_DIR = join(work, 'other-notes');
  const b = new RawClient(pb);
  delete process.env.NOTES_DIR;
  const c = new RawClient(pc);
  try {
    await a.request(1, 'resources/read', env({ uri: 'doc://public' }));
    const other = await b.request(1, 'resources/read', env({ uri: 'doc://public' }));
    assert.ok(!hit(other), "another instance's public answer was served");
    assert.equal(sent(pb.log, 'resources/read', (m) => m.params.uri === 'doc://public'), 1);
    // The same instance under another --scope still shares it.
    assert.ok(hit(await c.request(1, 'resources/read', env({ uri: 'doc://public' }))),
      'a public answer was not shared within its principal');
  } finally {
    await a.close();
    await b.close();
    await c.close();
  }
};

// The SDK 2.4.0 client, pinned to 2026-07-28, through the proxy.
tests.sdk2_client_modern = async () => {
  const p = proxied(FIXTURE);
  const client = new Client({ name: 'era-e2e', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new StdioClientTransport({ command: p.command, args: p.args }));
  try {
    const t1 = await client.listTools({}, { cacheMode: 'bypass' });
    assert.ok(t1.tools.some((t) => t.name === 'read_note'));
    await client.listTools({}, { cacheMode: 'bypass' });
    assert.equal(sent(p.log, 'tools/list'), 1, 'tools/list within ttlMs reached the server');
    const r1 = await client.callTool({ name: 'read_note', arguments: { id: 'b' } });
    const r2 = await client.callTool({ name: 'read_note', arguments: { id: 'b' } });
    assert.equal(r1.content[0].text, 'note b = beta v1');
    assert.equal(r2.content[0].text, r1.content[0].text);
    assert.equal(sentCall(p.log, 'read_note'), 1, 'a repeated read reached the server');
    await client.callTool({ name: 'write_note', arguments: { id: 'b', text: 'BETA' } });
    const r3 = await client.callTool({ name: 'read_note', arguments: { id: 'b' } });
    assert.equal(r3.content[0].text, 'note b = BETA v2');
    const d1 = await client.readResource({ uri: 'doc://public' }, { cacheMode: 'bypass' });
    const d2 = await client.readResource({ uri: 'doc://public' }, { cacheMode: 'bypass' });
    assert.equal(d2.contents[0].text, d1.contents[0].text);
    assert.equal(sent(p.log, 'resources/read'), 1);
    assert.equal(sent(p.log, 'initialize'), 0, 'a modern client initialized');
  } finally {
    await client.close();
  }
};

// A 2025-era client (SDK 1.32.2) through the proxy to the SDK 2.4.0 server,
// which serves it in the 2025 era: tools/call cached as before, lists not.
tests.sdk1_client_to_modern_server = async () => {
  const p = proxied(FIXTURE);
  const client = new LegacyClient({ name: 'era-e2e-legacy', version: '1.0.0' });
  await client.connect(new LegacyTransport({ command: p.command, args: p.args }));
  try {
    await client.listTools();
    await client.listTools();
    assert.equal(sent(p.log, 'tools/list'), 2, 'a 2025-era list was cached');
    const r1 = await client.callTool({ name: 'read_note', arguments: { id: 'a' } });
    const r2 = await client.callTool({ name: 'read_note', arguments: { id: 'a' } });
    assert.equal(r1.content[0].text, 'note a = alpha v1');
    assert.equal(r2.content[0].text, r1.content[0].text);
    assert.equal(sentCall(p.log, 'read_note'), 1, 'a repeated 2025-era read reached the server');
    assert.equal(sent(p.log, 'initialize'), 1);
  } finally {
    await client.close();
  }
};

// The SDK 2.4.0 client negotiating (auto) to a 2025-era server
// (server-memory): it falls back to initialize through the proxy.
tests.sdk2_client_to_legacy_server = async () => {
  const p = proxied(MEMORY);
  const client = new Client({ name: 'era-e2e-auto', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto', probe: { timeoutMs: 3000 } } });
  await client.connect(new StdioClientTransport({ command: p.command, args: p.args }));
  try {
    const tools = await client.listTools();
    assert.ok(tools.tools.some((t) => t.name === 'read_graph'));
    await client.callTool({ name: 'read_graph', arguments: {} });
    await client.callTool({ name: 'read_graph', arguments: {} });
    assert.equal(sentCall(p.log, 'read_graph'), 1, 'a repeated read reached the 2025-era server');
    assert.equal(sent(p.log, 'initialize'), 1);
  } finally {
    await client.close();
  }
};

// Claude Code 2.1.332 (tests/agent; 2.1.328 before session 17) bundles the 2026-07-28 SDK client: with
// the fixture behind `toolcache mcp`, scripted by the fake upstream to call
// read_note twice, the second call is served by the proxy. The era it
// negotiated is read from the server's log (server/discover vs initialize).
const CLAUDE = join(here, '../agent/node_modules/@anthropic-ai/claude-code-linux-x64/claude');
tests.claude_code_through_the_proxy = async () => {
  if (!existsSync(CLAUDE)) {
    console.log('skip claude_code_through_the_proxy: Claude Code not installed (tests/agent)');
    return;
  }
  const { startFakeUpstream } = await import('../llm/fake_upstream.mjs');
  const p = proxied(FIXTURE);
  const home = join(work, 'claude-home');
  mkdirSync(home, { recursive: true });
  const config = join(work, 'mcp.json');
  writeFileSync(config, JSON.stringify({ mcpServers: { fixture: { command: p.command, args: p.args } } }));
  const up = await startFakeUpstream();
  const tool = 'mcp__fixture__read_note';
  up.load({ fallbackText: 'ok', turns: [
    { when: { tool }, reply: { text: 'Reading.', toolCalls: [{ id: 'toolu_era_1', name: tool, input: { id: 'a' } }] } },
    { when: { tool }, reply: { text: 'Again.', toolCalls: [{ id: 'toolu_era_2', name: tool, input: { id: 'a' } }] } },
    { when: { tool }, reply: { text: 'It says alpha.' } },
  ] });
  try {
    const r = await new Promise((resolve) => {
      const c = killOnExit(spawn(CLAUDE, ['-p', 'Read note a twice', '--mcp-config', config, '--strict-mcp-config',
        '--allowedTools', tool, '--output-format', 'json', '--max-turns', '6'], {
        cwd: work,
        env: {
          PATH: process.env.PATH, HOME: home, ANTHROPIC_BASE_URL: up.url,
          ANTHROPIC_API_KEY: 'sk-ant-era-test', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', ENABLE_TOOL_SEARCH: 'false',
          DISABLE_AUTOUPDATER: '1', DISABLE_TELEMETRY: '1', DISABLE_ERROR_REPORTING: '1',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      }));
      let stdout = '', stderr = '';
      c.stdout.on('data', (d) => { stdout += d; });
      c.stderr.on('data', (d) => { stderr += d; });
      const timer = setTimeout(() => c.kill('SIGKILL'), 120000);
      c.on('exit', (status) => { clearTimeout(timer); resolve({ status, stdout, stderr }); });
    });
    assert.equal(r.status, 0, `claude exited ${r.status}: ${r.stderr}`);
    const results = up.requests.filter((q) => JSON.stringify(q.body?.messages?.at(-1) ?? '').includes('tool_result'));
    if (results.length !== 2) {
      console.log(readFileSync(p.log, 'utf8').slice(0, 3000));
      console.log(JSON.stringify(up.requests.map((q) => (q.body?.tools ?? []).map((t) => t.name))).slice(0, 2000));
      console.log(r.stdout.slice(0, 2000), r.stderr.slice(0, 2000));
    }
    assert.equal(results.length, 2, 'Claude Code did not run the MCP tool twice');
    for (const q of results) assert.match(JSON.stringify(q.body.messages.at(-1)), /note a = alpha v1/);
    const era = sent(p.log, 'server/discover') > 0 && sent(p.log, 'initialize') === 0 ? '2026-07-28' : '2025';
    console.log(`     Claude Code spoke the ${era} era (server/discover ${sent(p.log, 'server/discover')}, initialize ${sent(p.log, 'initialize')})`);
    assert.equal(sentCall(p.log, 'read_note'), 1, 'the second read reached the server');
  } finally {
    await up.close();
  }
};

const filter = process.argv[2] ?? '';
let failed = 0;
for (const [name, fn] of Object.entries(tests)) {
  if (!name.includes(filter)) continue;
  try {
    await fn();
    console.log(`ok   ${name}`);
  } catch (e) {
    failed += 1;
    console.log(`FAIL ${name}: ${e.stack ?? e}`);
  }
}
rmSync(work, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
