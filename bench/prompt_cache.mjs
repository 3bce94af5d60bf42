// Prompt-cache replay benchmark (issue 14): multi-turn agent sessions
// (tests/llm/sessions.mjs, the official Anthropic SDK) through
// `toolcache proxy` against the fake upstream's simulated prompt cache,
// with the prompt-cache stage off (detection only), `stab` (stabilizeTools
// only) and on (stabilizeTools, placeCacheControl, cacheSystem,
// cacheLastTurn). Two clients:
//   unstable: sets cache_control on its last tool and last message, but
//             reshuffles its tools every turn, re-serialises schemas every
//             3rd turn and flat-sorts an MCP server added mid-session;
//   plain:    sets no cache_control at all (stable, flat-sorted tools).
// Each session also injects unavoidable changes (system edit, a tool's
// schema, TTL expiry, tool_choice, an edit to an earlier message).
// Reported per client and mode: prompt tokens read from cache / written /
// uncached, the cost at Sonnet 4.5 list prices, the breaks the fake
// upstream suffered (> 2000 tokens and > 5 % lost), how many were
// avoidable (not at an injected change or the MCP addition), and the
// detector's precision, recall and attribution accuracy against the fake's
// own account of each break (field and tool).
// Usage (after scripts/setup.sh and a build):
//   node bench/prompt_cache.mjs [--bin build/apps/toolcache/toolcache]
//        [--seeds 3] [--turns 16]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { startFakeUpstream } = await import(path.join(root, 'tests/llm/fake_upstream.mjs'));
const { runSession, script, totals } = await import(path.join(root, 'tests/llm/sessions.mjs'));
const args = process.argv.slice(2);
const opt = (n, d) => { const i = args.indexOf(n); return i >= 0 ? args[i + 1] : d; };
const BIN = path.resolve(opt('--bin', path.join(root, 'build/apps/toolcache/toolcache')));
const SEEDS = Number(opt('--seeds', 3));
const TURNS = Number(opt('--turns', 16));
const TTL_MS = 1500;

async function startProxy(upstreamUrl, promptCache) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tc-pcb-'));
  const cfg = path.join(dir, 'c.yaml');
  fs.writeFileSync(cfg, `promptCache:\n${Object.entries(promptCache).map(([k, v]) => `  ${k}: ${v}`).join('\n')}\n`);
  const child = spawn(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', upstreamUrl, '--config', cfg, '--no-cache', '--log-level', 'error'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/\S+)/);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`proxy exited ${code}`)));
  });
  return { child, url };
}

const OFF = { detectBreaks: true, ttlSeconds: TTL_MS / 1000 };
const STABILIZE = { ...OFF, stabilizeTools: true };
const ON = { ...STABILIZE, placeCacheControl: true, cacheSystem: true, cacheLastTurn: true };
const INJECT = { 4: 'system', 8: 'schema', 10: 'ttl', 12: 'tool_choice', 14: 'edit' };
const MCP_AT = 6;
const CLIENTS = {
  unstable: { shuffle: true, reserialiseEvery: 3, mcpAddAt: MCP_AT, clientBreakpoints: true },
  plain: { shuffle: false, mcpAddAt: MCP_AT, clientBreakpoints: false },
};

const significant = (t) => t.fakeBreak && t.fakeLost > 2000 && t.fakeLost > 0.05 * (t.fakeLost + t.usage.cache_read_input_tokens);

const up = await startFakeUpstream();
const rows = [];
const mismatches = [];
for (const [client, behaviour] of Object.entries(CLIENTS)) {
  for (const [mode, config] of [['off', OFF], ['stab', STABILIZE], ['on', ON]]) {
    const proxy = await startProxy(up.url, config);
    const acc = { input: 0, creation: 0, read: 0, cost: 0, fake: 0, avoidable: 0, detected: 0, hits: 0, right: 0 };
    for (let seed = 1; seed <= SEEDS; ++seed) {
      up.load(script(TURNS, { ttlMs: TTL_MS }));
      const { turns } = await runSession({ baseURL: proxy.url, scenario: { turns: TURNS, seed, ttlMs: TTL_MS, inject: INJECT, ...behaviour } });
      const s = totals(turns);
      for (const k of ['input', 'creation', 'read', 'cost']) acc[k] += s[k];
      for (const t of turns) {
        const fake = significant(t);
        if (fake) {
          ++acc.fake;
          if (!INJECT[t.turn] && t.turn !== MCP_AT) ++acc.avoidable;
        }
        if (t.proxyBreak) ++acc.detected;
        if (Boolean(fake) !== Boolean(t.proxyBreak) || (fake && t.proxyBreak !== t.fakeBreak)) {
          mismatches.push(`${client}/${mode} seed ${seed} turn ${t.turn}: fake ${t.fakeBreak} (lost ${t.fakeLost}, read ${t.usage.cache_read_input_tokens}), proxy ${t.proxyBreak}`);
        }
        if (fake && t.proxyBreak) {
          ++acc.hits;
          if (t.proxyBreak === t.fakeBreak) ++acc.right;
        }
      }
    }
    proxy.child.kill('SIGTERM');
    await new Promise((r) => proxy.child.on('exit', r));
    rows.push({ client, mode, ...acc });
  }
}
await up.close();

const pct = (a, b) => (b === 0 ? 'n/a' : `${((100 * a) / b).toFixed(1)} %`);
console.log(`prompt-cache replay: ${SEEDS} seeds x ${TURNS} turns per client and mode (Anthropic SDK, non-streamed)`);
console.log('client    mode  cache_read  cache_write  uncached     cost $   fake breaks  avoidable  detected  precision  recall   attributed');
for (const r of rows) {
  console.log(`${r.client.padEnd(9)} ${r.mode.padEnd(4)} ${String(r.read).padStart(11)} ${String(r.creation).padStart(12)} ${String(r.input).padStart(9)} ${r.cost.toFixed(4).padStart(10)} ${String(r.fake).padStart(12)} ${String(r.avoidable).padStart(10)} ${String(r.detected).padStart(9)} ${pct(r.hits, r.detected).padStart(10)} ${pct(r.hits, r.fake).padStart(7)} ${pct(r.right, r.hits).padStart(12)}`);
}
for (const m of mismatches) console.log(`mismatch: ${m}`);
for (const client of Object.keys(CLIENTS)) {
  const off = rows.find((r) => r.client === client && r.mode === 'off');
  const on = rows.find((r) => r.client === client && r.mode === 'on');
  const stab = rows.find((r) => r.client === client && r.mode === 'stab');
  console.log(`${client}: cache-read tokens off ${off.read} -> stab ${stab.read} -> on ${on.read}; cost on/off = ${(on.cost / off.cost).toFixed(3)}; avoidable breaks off ${off.avoidable} -> stab ${stab.avoidable} -> on ${on.avoidable}`);
}
