// Claude Code 2.1.332 (tests/agent, the native binary; 2.1.328 before session 17) against `toolcache
// serve`'s /mcp/<name> as an HTTP MCP server, in both eras: with
// MCP_PROTOCOL_NEGOTIATION=auto (its default for HTTP servers: it probes
// server/discover and speaks 2026-07-28 when offered) and =legacy (2025
// initialize + Mcp-Session-Id). The model is the scripted fake upstream
// (tests/llm/fake_upstream.mjs); it asks for the same read_text_file twice.
// What the real server-filesystem received is read from tee.js's log.
// ENABLE_TOOL_SEARCH=false: MCP tools are offered to the model directly
// (2.1.328 defers them behind ToolSearch otherwise).
//
// Usage: TOOLCACHE_BIN=... node e2e_claude_mcp_http.mjs
import { spawn } from 'node:child_process';
import { killOnExit } from '../support/kill_on_exit.mjs';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const BIN = process.env.TOOLCACHE_BIN;
const CLAUDE = join(here, '../agent/node_modules/@anthropic-ai/claude-code-linux-x64/claude');
if (!existsSync(CLAUDE)) {
  console.log('SKIP claude-code native binary not installed (tests/agent)');
  process.exit(0);
}
const { startFakeUpstream } = await import(join(here, '../llm/fake_upstream.mjs'));
const FS = join(here, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');

function run(cmd, args, opts, ms) {
  return new Promise((resolve) => {
    const c = killOnExit(spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] }));
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => { stdout += d; });
    c.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => c.kill('SIGKILL'), ms);
    c.on('exit', (status, signal) => { clearTimeout(timer); resolve({ status, signal, stdout, stderr }); });
  });
}

async function once(mode) {
  const work = mkdtempSync(join(tmpdir(), `toolcache-cc-${mode}-`));
  const files = join(work, 'files');
  mkdirSync(files);
  mkdirSync(join(work, 'home'));
  const file = join(files, 'notes.txt');
  writeFileSync(file, 'the cache remembers\n');
  const log = join(work, 'fs.log');
  writeFileSync(log, '');
  writeFileSync(join(work, 'serve.yaml'), `tools:
  read_text_file: {requestType: INFORMATIONAL, ttlSeconds: 600}
servers:
  fs:
    command: ${JSON.stringify([process.execPath, join(here, 'tee.js'), log, '--', process.execPath, FS, files])}
`);
  const serve = killOnExit(spawn(BIN, ['serve', '--listen', '127.0.0.1:0', '--config', join(work, 'serve.yaml'), '--log-level', 'warn'],
    { stdio: ['ignore', 'pipe', 'inherit'] }));
  const base = await new Promise((resolve) => {
    let out = '';
    serve.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\S+)/);
      if (m) resolve(m[1]);
    });
  });
  const up = await startFakeUpstream();
  const tool = 'mcp__fs__read_text_file';
  up.load({ fallbackText: 'ok', turns: [
    { when: { tool }, reply: { text: 'Reading.', toolCalls: [{ id: 'toolu_cc_1', name: tool, input: { path: file } }] } },
    { when: { tool }, reply: { text: 'Again.', toolCalls: [{ id: 'toolu_cc_2', name: tool, input: { path: file } }] } },
    { reply: { text: 'It says: the cache remembers.' } },
  ] });
  writeFileSync(join(work, 'mcp.json'), JSON.stringify({ mcpServers: { fs: { type: 'http', url: `${base}/mcp/fs` } } }));
  try {
    const env = {
      PATH: process.env.PATH, HOME: join(work, 'home'), ANTHROPIC_BASE_URL: up.url,
      ANTHROPIC_API_KEY: 'sk-ant-cc-mcp-test', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1', DISABLE_TELEMETRY: '1', DISABLE_ERROR_REPORTING: '1',
      MCP_PROTOCOL_NEGOTIATION: mode, ENABLE_TOOL_SEARCH: 'false',
    };
    const r = await run(CLAUDE, ['-p', 'Read notes.txt twice with the fs server', '--mcp-config', join(work, 'mcp.json'),
      '--allowedTools', tool, '--output-format', 'json', '--max-turns', '6'], { cwd: work, env }, 120000);
    assert.equal(r.status, 0, `claude exited ${r.status} ${r.signal}: ${r.stderr.slice(0, 500)} ${r.stdout.slice(0, 500)}`);
    const stats = await (await fetch(`${base}/toolcache/stats`)).json();
    const got = readFileSync(log, 'utf8');
    const calls = got.split('"method":"tools/call"').length - 1;
    // The tool results the model saw.
    const results = up.requests.map((q) => JSON.stringify(q.body?.messages?.at(-1) ?? '')).filter((s) => s.includes('tool_result'));
    if (process.env.DEBUG_CC) {
      for (const q of up.requests) console.log('offered:', (q.body?.tools ?? []).map((t) => t.name).filter((n) => n.includes('mcp') || n.includes('Search')).join(','), 'last:', JSON.stringify(q.body?.messages?.at(-1) ?? '').slice(0, 300));
      console.log(r.stdout.slice(0, 600));
    }
    return { stats: stats.mcp, cache: stats.cache, calls, results, initialize: got.split('"method":"initialize"').length - 1 };
  } finally {
    serve.kill('SIGTERM');
    await up.close();
    rmSync(work, { recursive: true, force: true });
  }
}

let failed = 0;
for (const mode of ['auto', 'legacy']) {
  try {
    const r = await once(mode);
    console.log(`${mode}: mcp=${JSON.stringify(r.stats)} cache hits=${r.cache?.hits} server tools/call=${r.calls} upstream initialize=${r.initialize}`);
    assert.equal(r.results.length, 2, 'the model got two tool results');
    assert.ok(r.results.every((s) => s.includes('the cache remembers')), 'both results carry the file');
    if (mode === 'auto') {
      assert.equal(r.calls, 1, 'the server read the file once: the second read was served from the cache');
      assert.equal(r.stats.pooledChildrenStarted, 1, 'Claude Code spoke 2026-07-28: the pooled child served it');
      assert.equal(r.stats.sessionsStarted, 0, 'no 2025 session');
    } else {
      // 2025 era: Claude Code declares roots, server-filesystem asks
      // roots/list right after initialize, and the Session lets calls
      // bypass for its quiet period after a roots change (docs/MCP.md,
      // roots_changing): both reads may reach the server.
      assert.ok(r.calls >= 1 && r.calls <= 2, `server tools/call ${r.calls}`);
      assert.equal(r.stats.sessionsStarted, 1, 'a 2025 session');
      assert.equal(r.stats.pooledChildrenStarted, 0);
    }
    console.log(`PASS Claude Code (${mode}) through /mcp/fs`);
  } catch (e) {
    failed += 1;
    console.log(`FAIL Claude Code (${mode}): ${e.stack ?? e}`);
  }
}
process.exit(failed === 0 ? 0 : 1);
