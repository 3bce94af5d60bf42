// A second real coding agent through `toolcache proxy` (issue 28): Codex
// CLI (the native binary its npm package ships), offline against the
// scripted fake upstream, configured as a custom Responses provider with
// WebSocket mode on (as OpenAI's own provider is). One session: a shell
// read, the same read again (a would-hit, not served: the shell runs on
// the client), an apply_patch (a custom tool call: observed, a write that
// invalidates), and the read once more (no would-hit, the new content).
// The proxy refuses the WebSocket upgrade with 426, so Codex falls back to
// HTTP at once instead of retrying. Run by tests/e2e_agent.sh.
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
const CODEX = path.join(here, 'node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex');

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

// The proxy, listening: { child, url, log(), stop() } (tests/llm/spawn_proxy.mjs).
function startProxy(upstream, extra = []) {
  return spawnListening(process.env.TOOLCACHE_BIN,
    ['proxy', '--listen', '127.0.0.1:0', '--upstream', upstream, ...extra]);
}

function codexHome(dir, base) {
  fs.mkdirSync(dir, { recursive: true });
  // A custom Responses provider at the proxy (README "Codex CLI").
  fs.writeFileSync(path.join(dir, 'config.toml'), [
    'model = "gpt-5.5"',
    'model_provider = "toolcache"',
    '[model_providers.toolcache]',
    'name = "toolcache"',
    `base_url = "${base}/v1"`,
    'env_key = "TOOLCACHE_TEST_OPENAI_KEY"',
    'wire_api = "responses"',
    'supports_websockets = true',
    '',
  ].join('\n'));
}

async function stats(base) {
  const s = await (await fetch(`${base}/toolcache/stats`)).json();
  return (name, labels) => (s.metrics[name]?.series ?? [])
    .filter((x) => Object.entries(labels).every(([k, v]) => x.labels[k] === v))
    .reduce((n, x) => n + x.value, 0);
}

const skip = !fs.existsSync(CODEX) && 'codex native binary not installed';

test('Codex CLI: shell reads would hit, apply_patch is observed and invalidates, WebSocket falls back at once', { skip }, async () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'toolcache-codex-'));
  const file = path.join(work, 'notes.txt');
  fs.writeFileSync(file, 'the cache remembers\n');
  const up = await startFakeUpstream();
  const patch = '*** Begin Patch\n*** Update File: notes.txt\n@@\n-the cache remembers\n+the cache forgets\n*** End Patch\n';
  up.load({ fallbackText: 'ok', strictHistory: true, turns: [
    { name: 'cat1', when: { tool: 'exec_command' }, reply: { text: 'Reading.', toolCalls: [{ id: 'call_cat_1', name: 'exec_command', input: { cmd: 'cat notes.txt', workdir: work } }] } },
    { name: 'cat2', when: { tool: 'exec_command' }, reply: { text: 'Again.', toolCalls: [{ id: 'call_cat_2', name: 'exec_command', input: { cmd: 'cat notes.txt', workdir: work } }] } },
    { name: 'patch', when: { tool: 'apply_patch' }, reply: { text: 'Patching.', toolCalls: [{ id: 'call_patch', name: 'apply_patch', custom: true, input: patch }] } },
    { name: 'cat3', when: { tool: 'exec_command' }, reply: { text: 'Checking.', toolCalls: [{ id: 'call_cat_3', name: 'exec_command', input: { cmd: 'cat notes.txt', workdir: work } }] } },
    { name: 'end', when: { tool: 'exec_command' }, reply: { text: 'It now says: the cache forgets.' } },
  ] });
  const proxy = await startProxy(up.url, ['--serve']);
  try {
    codexHome(path.join(work, 'home'), proxy.url);
    const env = {
      PATH: process.env.PATH, HOME: path.join(work, 'home'), CODEX_HOME: path.join(work, 'home'),
      TOOLCACHE_TEST_OPENAI_KEY: 'sk-codex-test',
    };
    const r = await run(CODEX, ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox',
      'Read notes.txt twice, change remembers to forgets, read it again'], { cwd: work, env }, 180000);
    assert.equal(r.status, 0, `codex exited ${r.status} ${r.signal}: ${r.stderr}`);
    for (const q of up.requests) assert.equal(q.rejected, undefined, q.rejected);
    assert.equal(fs.readFileSync(file, 'utf8'), 'the cache forgets\n', 'the agent applied its own patch');
    // No upgrade reached the upstream; the proxy refused it with 426 and
    // Codex fell back at once (one attempt, no retries).
    assert.equal(up.requests.filter((q) => q.method === 'GET').length, 0);
    const refused = (proxy.log().match(/protocol upgrade refused/g) ?? []).length;
    assert.ok(refused >= 1 && refused <= 2, `upgrade attempts: ${refused}`);
    assert.ok(up.requests.find((q) => q.turn === 'end'), 'the session reached its last turn');
    const last = up.requests.find((q) => q.turn === 'end').body.input;
    const out = (id) => JSON.stringify(last.find((it) => it.call_id === id && it.type.endsWith('_output'))?.output ?? '');
    assert.match(out('call_cat_1'), /the cache remembers/);
    assert.match(out('call_cat_3'), /the cache forgets/);
    const count = await stats(proxy.url);
    // The repeated `cat` would hit (a read-only command), and was not served.
    assert.equal(count('toolcache_llm_tool_calls_total', { tool: 'exec_command', outcome: 'would_hit' }), 1);
    assert.equal(count('toolcache_llm_served_total', {}), 0);
    // apply_patch (a custom tool call) was observed, as a write.
    assert.equal(count('toolcache_llm_tool_calls_total', { tool: 'apply_patch' }), 1);
    assert.equal(count('toolcache_llm_tool_results_total', { tool: 'apply_patch', outcome: 'bypass' }), 1);
    // After the patch the third `cat` is not a would-hit (invalidated).
    assert.equal(count('toolcache_llm_tool_calls_total', { tool: 'exec_command', outcome: 'miss' }), 2);
    assert.ok(!proxy.log().includes('sk-codex-test'));
  } finally {
    await proxy.stop();
    await up.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
});

// Two sessions with one API key and a change outside the agent between
// them: the second session's `cat` is a would-hit in the cache but runs in
// the client (not served), so it sees the new content and the record
// counts the result as changed; a shell write (`sed -i`) invalidates, so
// the `cat` after it is no would-hit.
test('Codex CLI: two sessions, an external change and a shell write: never a stale file', { skip }, async () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'toolcache-codex-'));
  const file = path.join(work, 'notes.txt');
  fs.writeFileSync(file, 'version one\n');
  const up = await startFakeUpstream();
  const proxy = await startProxy(up.url, ['--serve']);
  const cat = (id) => ({ text: 'Reading.', toolCalls: [{ id, name: 'exec_command', input: { cmd: 'cat notes.txt', workdir: work } }] });
  try {
    codexHome(path.join(work, 'home'), proxy.url);
    const env = {
      PATH: process.env.PATH, HOME: path.join(work, 'home'), CODEX_HOME: path.join(work, 'home'),
      TOOLCACHE_TEST_OPENAI_KEY: 'sk-codex-test-2',
    };
    const codex = () => run(CODEX, ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', 'Read notes.txt'],
      { cwd: work, env }, 180000);
    up.load({ fallbackText: 'ok', strictHistory: true, turns: [
      { name: 's1', when: { tool: 'exec_command' }, reply: cat('call_s1') },
      { name: 's1end', when: { tool: 'exec_command' }, reply: { text: 'version one' } },
    ] });
    const r1 = await codex();
    assert.equal(r1.status, 0, `codex exited ${r1.status}: ${r1.stderr}`);
    fs.writeFileSync(file, 'version two\n');  // outside the agent
    up.load({ fallbackText: 'ok', strictHistory: true, turns: [
      { name: 's2', when: { tool: 'exec_command' }, reply: cat('call_s2') },
      { name: 'sed', when: { tool: 'exec_command' }, reply: { text: 'Editing.', toolCalls: [{ id: 'call_sed', name: 'exec_command', input: { cmd: "sed -i 's/two/three/' notes.txt", workdir: work } }] } },
      { name: 's3', when: { tool: 'exec_command' }, reply: cat('call_s3') },
      { name: 's2end', when: { tool: 'exec_command' }, reply: { text: 'version three' } },
    ] });
    const r2 = await codex();
    assert.equal(r2.status, 0, `codex exited ${r2.status}: ${r2.stderr}`);
    for (const q of up.requests) assert.equal(q.rejected, undefined, q.rejected);
    const last = up.requests.find((q) => q.turn === 's2end').body.input;
    const out = (id) => JSON.stringify(last.find((it) => it.call_id === id && it.type.endsWith('_output'))?.output ?? '');
    assert.match(out('call_s2'), /version two/, 'the client read the changed file itself');
    assert.match(out('call_s3'), /version three/);
    const count = await stats(proxy.url);
    assert.equal(count('toolcache_llm_served_total', {}), 0);
    // s2 would have hit (session 1's entry); s3 did not (the sed wrote).
    assert.equal(count('toolcache_llm_tool_calls_total', { tool: 'exec_command', outcome: 'would_hit' }), 1);
    assert.equal(count('toolcache_llm_tool_results_total', { tool: 'exec_command', outcome: 'bypass' }), 1);
    assert.equal(fs.readFileSync(file, 'utf8'), 'version three\n');
  } finally {
    await proxy.stop();
    await up.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
});
