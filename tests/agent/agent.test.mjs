// A real coding agent through `toolcache proxy`: Claude Code (the native
// binary its npm package ships) runs offline against the scripted fake
// upstream at ANTHROPIC_BASE_URL, in a multi-turn session in which the
// model reads the same file twice. The agent runs its Read tool itself;
// the proxy must record the first result and report the second read as a
// would-hit. Run by tests/e2e_agent.sh with TOOLCACHE_BIN set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { killOnExit } from '../support/kill_on_exit.mjs';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeUpstream } from '../llm/fake_upstream.mjs';
import { spawnListening } from '../llm/spawn_proxy.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLAUDE = path.join(here, 'node_modules/@anthropic-ai/claude-code-linux-x64/claude');

// Claude Code's environment offline: its home, the proxy as its API, a key,
// and nothing sent anywhere else.
const claudeEnv = (home, baseURL, apiKey) => ({
  PATH: process.env.PATH, HOME: home, ANTHROPIC_BASE_URL: baseURL,
  ANTHROPIC_API_KEY: apiKey, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_AUTOUPDATER: '1', DISABLE_TELEMETRY: '1', DISABLE_ERROR_REPORTING: '1',
});

function run(cmd, args, opts, ms) {
  return new Promise((resolve) => {
    const c = killOnExit(spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] }));
    let stdout = '', stderr = '';
    c.stdout.on('data', (d) => { stdout += d; });
    c.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => c.kill('SIGKILL'), ms);
    c.on('exit', (status, signal) => { clearTimeout(timer); resolve({ status, signal, stdout, stderr }); });
  });
}

test('Claude Code reads a file twice: the second read would hit', { skip: !fs.existsSync(CLAUDE) && 'claude-code native binary not installed' }, async () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'toolcache-agent-'));
  const file = path.join(work, 'notes.txt');
  fs.writeFileSync(file, 'the cache remembers\n');
  fs.mkdirSync(path.join(work, 'home'));
  const up = await startFakeUpstream();
  up.load({ fallbackText: 'ok', turns: [
    { when: { tool: 'Read' }, reply: { text: 'Reading it.', toolCalls: [{ id: 'toolu_agent_1', name: 'Read', input: { file_path: file } }] } },
    { when: { tool: 'Read' }, reply: { text: 'Once more.', toolCalls: [{ id: 'toolu_agent_2', name: 'Read', input: { file_path: file } }] } },
    { when: { tool: 'Read' }, reply: { text: 'It says: the cache remembers.' } },
  ] });
  const proxy = await spawnListening(process.env.TOOLCACHE_BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', up.url]);
  try {
    const base = proxy.url;
    const env = claudeEnv(path.join(work, 'home'), base, 'sk-ant-agent-test');
    const r = await run(CLAUDE, ['-p', 'Read notes.txt twice and tell me what it says', '--allowedTools', 'Read',
      '--output-format', 'json', '--max-turns', '6'], { cwd: work, env }, 120000);
    assert.equal(r.status, 0, `claude exited ${r.status} ${r.signal}: ${r.stderr}`);
    assert.match(JSON.parse(r.stdout).result, /the cache remembers/);
    // The agent ran Read itself: the upstream saw both results.
    const withResults = up.requests.filter((q) => JSON.stringify(q.body?.messages?.at(-1) ?? '').includes('tool_result'));
    assert.equal(withResults.length, 2);
    assert.match(JSON.stringify(withResults[0].body.messages.at(-1)), /the cache remembers/);
    const stats = await (await fetch(`${base}/toolcache/stats`)).json();
    const count = (name, labels) => (stats.metrics[name]?.series ?? [])
      .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
      .reduce((n, s) => n + s.value, 0);
    assert.equal(count('toolcache_llm_tool_calls_total', { tool: 'Read', outcome: 'miss' }), 1);
    assert.equal(count('toolcache_llm_tool_calls_total', { tool: 'Read', outcome: 'would_hit' }), 1);
    assert.equal(count('toolcache_llm_tool_results_total', { tool: 'Read', outcome: 'recorded' }), 1);
    assert.match(proxy.log(), /1 would hit: Read key [0-9a-f]{16}/);
    assert.ok(!proxy.log().includes('sk-ant-agent-test'));
  } finally {
    await proxy.stop();
    await up.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
});

// Issue 28: with `--serve`, Claude Code's own tools are observed, never
// served. Session 1 reads the file; session 2 (same API key) reads it
// again (a would-hit the proxy does NOT serve: the client runs its Read, so
// its read-before-edit rule holds), edits it, and reads it again: the
// third read sees the edit, and the stub Claude Code may send for an
// unchanged file is never recorded.
test('Claude Code with --serve: its Read is observed not served; read, edit, read works across sessions', { skip: !fs.existsSync(CLAUDE) && 'claude-code native binary not installed' }, async () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'toolcache-agent-'));
  const file = path.join(work, 'notes.txt');
  fs.writeFileSync(file, 'the cache remembers\n');
  fs.mkdirSync(path.join(work, 'home'));
  const up = await startFakeUpstream();
  const proxy = await spawnListening(process.env.TOOLCACHE_BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', up.url, '--serve']);
  try {
    const base = proxy.url;
    const env = claudeEnv(path.join(work, 'home'), base, 'sk-ant-agent-policy');
    // Session 1: one read.
    up.load({ fallbackText: 'ok', turns: [
      { when: { tool: 'Read' }, reply: { text: 'Reading it.', toolCalls: [{ id: 'toolu_pol_1', name: 'Read', input: { file_path: file } }] } },
      { when: { tool: 'Read' }, reply: { text: 'It says: the cache remembers.' } },
    ] });
    const r1 = await run(CLAUDE, ['-p', 'Read notes.txt', '--allowedTools', 'Read',
      '--output-format', 'json', '--max-turns', '4'], { cwd: work, env }, 120000);
    assert.equal(r1.status, 0, `claude exited ${r1.status} ${r1.signal}: ${r1.stderr}`);
    // Session 2: read (would hit), edit, read again.
    up.load({ fallbackText: 'ok', turns: [
      { when: { tool: 'Read' }, reply: { text: 'Reading it.', toolCalls: [{ id: 'toolu_pol_2', name: 'Read', input: { file_path: file } }] } },
      { when: { tool: 'Edit' }, reply: { text: 'Editing.', toolCalls: [{ id: 'toolu_pol_3', name: 'Edit', input: { file_path: file, old_string: 'remembers', new_string: 'forgets' } }] } },
      { when: { tool: 'Read' }, reply: { text: 'Checking.', toolCalls: [{ id: 'toolu_pol_4', name: 'Read', input: { file_path: file } }] } },
      { when: { tool: 'Read' }, reply: { text: 'Done: the cache forgets.' } },
    ] });
    const before = up.requests.length;
    const r2 = await run(CLAUDE, ['-p', 'Read notes.txt, change remembers to forgets, read it again', '--allowedTools', 'Read,Edit',
      '--output-format', 'json', '--max-turns', '8'], { cwd: work, env }, 120000);
    assert.equal(r2.status, 0, `claude exited ${r2.status} ${r2.signal}: ${r2.stderr}`);
    // The client ran the Edit successfully (it had read the file itself).
    assert.equal(fs.readFileSync(file, 'utf8'), 'the cache forgets\n');
    const session2 = up.requests.slice(before);
    const resultOf = (id) => session2.map((q) => (q.body?.messages ?? []).flatMap((m) => (Array.isArray(m.content) ? m.content : [])))
      .flat().find((b) => b.type === 'tool_result' && b.tool_use_id === id);
    assert.ok(resultOf('toolu_pol_2'), 'the agent answered its own Read');
    assert.doesNotMatch(JSON.stringify(resultOf('toolu_pol_3') ?? ''), /has not been read yet/);
    assert.match(JSON.stringify(resultOf('toolu_pol_4')), /forgets/);
    // Observed: the repeated read would have hit; nothing was served.
    assert.doesNotMatch(proxy.log(), /served \d+ tool call/);
    const stats = await (await fetch(`${base}/toolcache/stats`)).json();
    const count = (name, labels) => (stats.metrics[name]?.series ?? [])
      .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
      .reduce((n, s) => n + s.value, 0);
    assert.equal(count('toolcache_llm_tool_calls_total', { tool: 'Read', outcome: 'would_hit' }), 1);
    assert.equal(count('toolcache_llm_served_total', {}), 0);
    assert.equal(count('toolcache_llm_tool_results_total', { tool: 'Read', outcome: 'stale' }), 0);
  } finally {
    await proxy.stop();
    await up.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
});

// Session 17: Claude Code 2.1.328+ sends built-in tools the agent table
// does not name (ListAgents, CronList, WebFetch, ToolSearch, ...). They run
// on the client like Read: `--serve` must not answer them. Before, a
// cacheable one was served from the proxy under the API key alone: a
// repeated ToolSearch ("fetches full schema definitions for deferred tools
// so they can be called") was answered with the definitions while the
// agent never loaded the tools, and with another machine's tool list.
test('Claude Code with --serve: a built-in tool the table does not name is not served', { skip: !fs.existsSync(CLAUDE) && 'claude-code native binary not installed' }, async () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'toolcache-agent-'));
  fs.mkdirSync(path.join(work, 'home'));
  const up = await startFakeUpstream();
  up.load({ fallbackText: 'ok', turns: [
    { when: { tool: 'ToolSearch' }, reply: { text: 'Loading Glob.', toolCalls: [{ id: 'toolu_ts_1', name: 'ToolSearch', input: { query: 'select:Glob' } }] } },
    { when: { tool: 'ToolSearch' }, reply: { text: 'Again.', toolCalls: [{ id: 'toolu_ts_2', name: 'ToolSearch', input: { query: 'select:Glob' } }] } },
    { when: { tool: 'ToolSearch' }, reply: { text: 'Glob is loaded.' } },
  ] });
  const proxy = await spawnListening(process.env.TOOLCACHE_BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', up.url, '--serve']);
  try {
    const env = claudeEnv(path.join(work, 'home'), proxy.url, 'sk-ant-agent-builtins');
    const r = await run(CLAUDE, ['-p', 'Load the Glob tool twice', '--allowedTools', 'ToolSearch',
      '--output-format', 'json', '--max-turns', '6'], { cwd: work, env }, 120000);
    assert.equal(r.status, 0, `claude exited ${r.status} ${r.signal}: ${r.stderr}`);
    const tools = (up.requests.find((q) => q.body?.tools)?.body.tools ?? []).map((t) => t.name);
    assert.ok(tools.includes('ToolSearch'), `Claude Code sent no ToolSearch: ${tools}`);
    // The agent answered both calls itself: each id's result came from a
    // request of the agent, none from a hidden round of the proxy.
    const fromAgent = (id) => up.requests.filter((q) => JSON.stringify(q.body?.messages?.at(-1) ?? '').includes(id));
    assert.equal(fromAgent('toolu_ts_1').length, 1);
    assert.equal(fromAgent('toolu_ts_2').length, 1);
    assert.doesNotMatch(proxy.log(), /served \d+ tool call/);
    const stats = await (await fetch(`${proxy.url}/toolcache/stats`)).json();
    const served = (stats.metrics.toolcache_llm_served_total?.series ?? []).reduce((n, s) => n + s.value, 0);
    assert.equal(served, 0);
  } finally {
    await proxy.stop();
    await up.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
});

// Serving the agent's own Read is an operator's opt-in (`serve: [Read]`).
test('Claude Code with serve: [Read]: the second read is answered inside the proxy', { skip: !fs.existsSync(CLAUDE) && 'claude-code native binary not installed' }, async () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'toolcache-agent-'));
  const file = path.join(work, 'notes.txt');
  fs.writeFileSync(file, 'the cache remembers\n');
  fs.mkdirSync(path.join(work, 'home'));
  const up = await startFakeUpstream();
  up.load({ fallbackText: 'ok', strictHistory: true, turns: [
    { name: 'read1', when: { tool: 'Read' }, reply: { text: 'Reading it.', toolCalls: [{ id: 'toolu_serve_1', name: 'Read', input: { file_path: file } }] } },
    { name: 'read2', when: { tool: 'Read' }, reply: { text: 'Once more.', toolCalls: [{ id: 'toolu_serve_2', name: 'Read', input: { file_path: file } }] } },
    { name: 'end', when: { tool: 'Read' }, reply: { text: 'It says: the cache remembers.' } },
  ] });
  const cfg = path.join(work, 'toolcache.yaml');
  fs.writeFileSync(cfg, 'proxy:\n  serve: [Read]\n');
  const proxy = await spawnListening(process.env.TOOLCACHE_BIN, ['proxy', '--config', cfg, '--listen', '127.0.0.1:0', '--upstream', up.url]);
  try {
    const base = proxy.url;
    const env = claudeEnv(path.join(work, 'home'), base, 'sk-ant-agent-serve');
    const r = await run(CLAUDE, ['-p', 'Read notes.txt twice and tell me what it says', '--allowedTools', 'Read',
      '--output-format', 'json', '--max-turns', '6'], { cwd: work, env }, 120000);
    assert.equal(r.status, 0, `claude exited ${r.status} ${r.signal}: ${r.stderr}`);
    assert.match(JSON.parse(r.stdout).result, /the cache remembers/);
    for (const q of up.requests) assert.equal(q.rejected, undefined, q.rejected);
    // The upstream saw both results; the second was the proxy's, in a
    // hidden round that followed the first read's request directly.
    const last = up.requests.find((q) => q.turn === 'end').body.messages;
    const results = last.flatMap((m) => (Array.isArray(m.content) ? m.content : []))
      .filter((b) => b.type === 'tool_result');
    assert.deepEqual(results.map((b) => b.tool_use_id), ['toolu_serve_1', 'toolu_serve_2']);
    assert.match(proxy.log(), /served 1 tool call\(s\) in 1 hidden round/);
    // The agent sent only one tool result itself: no client request ends
    // with the second read's result.
    const fromAgent = up.requests.filter((q) => JSON.stringify(q.body?.messages?.at(-1) ?? '').includes('toolu_serve_2'));
    assert.equal(fromAgent.length, 1);  // the proxy's hidden round
  } finally {
    await proxy.stop();
    await up.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
});

// Session 16 (wsO): one API key, one folder path, two installations (two
// containers sharing a key and `/workspace`): a Read recorded by one is
// never served to the other, which reads its own file; the first
// installation, back in the same folder, is served as before.
test('Claude Code with serve: [Read]: another installation under the same key reads its own file', { skip: !fs.existsSync(CLAUDE) && 'claude-code native binary not installed' }, async () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'toolcache-agent-'));
  const file = path.join(work, 'notes.txt');
  fs.writeFileSync(file, 'written in container A\n');
  fs.mkdirSync(path.join(work, 'homeA'));
  fs.mkdirSync(path.join(work, 'homeB'));
  const up = await startFakeUpstream();
  const cfg = path.join(work, 'toolcache.yaml');
  fs.writeFileSync(cfg, 'proxy:\n  serve: [Read]\n');
  const proxy = await spawnListening(process.env.TOOLCACHE_BIN, ['proxy', '--config', cfg, '--listen', '127.0.0.1:0', '--upstream', up.url]);
  try {
    const base = proxy.url;
    const envOf = (home) => claudeEnv(path.join(work, home), base, 'sk-ant-agent-shared');
    const session = async (home, id) => {
      up.load({ fallbackText: 'ok', turns: [
        { when: { tool: 'Read' }, reply: { text: 'Reading it.', toolCalls: [{ id, name: 'Read', input: { file_path: file } }] } },
        { when: { tool: 'Read' }, reply: { text: 'Read.' } },
      ] });
      const before = up.requests.length;
      const r = await run(CLAUDE, ['-p', 'Read notes.txt', '--allowedTools', 'Read',
        '--output-format', 'json', '--max-turns', '4'], { cwd: work, env: envOf(home) }, 120000);
      assert.equal(r.status, 0, `claude exited ${r.status} ${r.signal}: ${r.stderr}`);
      const result = up.requests.slice(before)
        .flatMap((q) => (q.body?.messages ?? []).flatMap((m) => (Array.isArray(m.content) ? m.content : [])))
        .find((b) => b.type === 'tool_result' && b.tool_use_id === id);
      return JSON.stringify(result ?? '');
    };
    assert.match(await session('homeA', 'toolu_ws_1'), /container A/);
    fs.writeFileSync(file, 'written in container B\n');
    // Without the workspace in the scope, B was answered A's bytes.
    assert.match(await session('homeB', 'toolu_ws_2'), /container B/);
    assert.doesNotMatch(proxy.log(), /served \d+ tool call/);
    assert.doesNotMatch(proxy.log(), /client workspace unknown/);
    // A again, same folder: its own entry is served (the documented
    // stale-file cost of `serve: [Read]`).
    assert.match(await session('homeA', 'toolu_ws_3'), /container A/);
    assert.match(proxy.log(), /served 1 tool call\(s\) in 1 hidden round/);
  } finally {
    await proxy.stop();
    await up.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
});

// The prompt-cache stage (issue 14) on a real agent's traffic: Claude Code
// still completes, every request keeps <= 4 breakpoints, the tool list the
// upstream sees is byte-identical on every main-loop turn, and neither the
// fake upstream's simulated cache nor the proxy's detector sees a break.
test('Claude Code with promptCache on: stable tool bytes, no cache break', { skip: !fs.existsSync(CLAUDE) && 'claude-code native binary not installed' }, async () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'toolcache-agent-pc-'));
  const file = path.join(work, 'notes.txt');
  fs.writeFileSync(file, 'warm caches are cheap\n');
  fs.mkdirSync(path.join(work, 'home'));
  const cfg = path.join(work, 'toolcache.yaml');
  fs.writeFileSync(cfg, 'promptCache:\n  stabilizeTools: true\n  placeCacheControl: true\n  cacheSystem: true\n  cacheLastTurn: true\n  detectBreaks: true\n');
  const up = await startFakeUpstream();
  up.load({ fallbackText: 'ok', turns: [
    { when: { tool: 'Read' }, reply: { text: 'Reading it.', toolCalls: [{ id: 'toolu_pc_1', name: 'Read', input: { file_path: file } }] } },
    { when: { tool: 'Read' }, reply: { text: 'Once more.', toolCalls: [{ id: 'toolu_pc_2', name: 'Read', input: { file_path: file } }] } },
    { when: { tool: 'Read' }, reply: { text: 'It says: warm caches are cheap.' } },
  ] });
  const proxy = await spawnListening(process.env.TOOLCACHE_BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', up.url, '--config', cfg]);
  try {
    const base = proxy.url;
    const env = claudeEnv(path.join(work, 'home'), base, 'sk-ant-agent-test');
    const r = await run(CLAUDE, ['-p', 'Read notes.txt twice and tell me what it says', '--allowedTools', 'Read',
      '--output-format', 'json', '--max-turns', '6'], { cwd: work, env }, 120000);
    assert.equal(r.status, 0, `claude exited ${r.status} ${r.signal}: ${r.stderr}\n${proxy.log()}`);
    assert.match(JSON.parse(r.stdout).result, /warm caches are cheap/);
    const count = (v) => (Array.isArray(v) ? v.reduce((n, x) => n + count(x), 0)
      : v && typeof v === 'object' ? Object.entries(v).reduce((n, [k, x]) => n + (k === 'cache_control' ? 1 : count(x)), 0) : 0);
    const main = up.requests.filter((q) => (q.body?.tools ?? []).some((t) => t.name === 'Read'));
    assert.equal(main.length, 3);
    for (const q of up.requests.filter((x) => x.body)) assert.ok(count(q.body) <= 4, `${count(q.body)} breakpoints`);
    const strip = (t) => { const { cache_control: _, ...rest } = t; return rest; };
    assert.equal(new Set(main.map((q) => JSON.stringify(q.body.tools.map(strip)))).size, 1);
    const names = main[0].body.tools.map((t) => t.name);
    const mcp = names.findIndex((n) => n.startsWith('mcp__'));
    const builtins = mcp < 0 ? names : names.slice(0, mcp);
    assert.deepEqual(builtins, [...builtins].sort());
    assert.deepEqual(main.map((q) => q.cacheBreak), [null, null, null]);
    assert.ok(main[2].reply.usage.cache_read_input_tokens > 0, JSON.stringify(main[2].reply.usage));
    const breaks = await (await fetch(`${base}/toolcache/breaks`, { headers: { 'x-api-key': 'sk-ant-agent-test' } })).json();
    assert.deepEqual(breaks.breaks, []);
  } finally {
    await proxy.stop();
    await up.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
});
