// `toolcache proxy`'s prompt-cache stage (issue 14) end to end: the
// official SDKs run multi-turn sessions against the scripted fake upstream,
// whose simulated prompt cache follows the provider's rules and reports the
// breaks it suffered. The client reshuffles its tools, re-serialises
// schemas and adds an MCP server mid-session; the proxy runs with the
// stage off (detection only) and on. Run by tests/e2e_prompt_cache.sh with
// TOOLCACHE_BIN set.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { startFakeUpstream } from './fake_upstream.mjs';
import { runSession, script, totals, BUILTINS } from './sessions.mjs';
import { spawnListening } from './spawn_proxy.mjs';

const BIN = process.env.TOOLCACHE_BIN;
const TTL_MS = 1500;
const running = [];

async function startProxy(upstreamUrl, promptCache) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tc-pc-'));
  const cfg = path.join(dir, 'c.yaml');
  const lines = ['promptCache:', ...Object.entries(promptCache).map(([k, v]) => `  ${k}: ${v}`)];
  fs.writeFileSync(cfg, `${lines.join('\n')}\n`);
  const started = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', upstreamUrl, '--config', cfg, '--no-cache']);
  const p = started;
  running.push(p);
  return p;
}

after(async () => {
  for (const p of running) {
    p.child.kill('SIGTERM');
    await new Promise((r) => (p.child.exitCode !== null ? r() : p.child.on('exit', r)));
  }
});

// GET /toolcache/breaks lists the breaks of the key presented (the
// sessions' key, runSession's default).
const OWNER = { headers: { 'x-api-key': 'sk-test' } };
const OFF = { detectBreaks: true, ttlSeconds: TTL_MS / 1000 };
const ON = { ...OFF, stabilizeTools: true, placeCacheControl: true, cacheSystem: true, cacheLastTurn: true };

// A break the detector is asked to find: > 2000 tokens and > 5 % lost.
const significant = (t) => t.fakeBreak && t.fakeLost > 2000 && t.fakeLost > 0.05 * (t.fakeLost + t.usage.cache_read_input_tokens);

// Strips what the stage may change: cache_control, string-vs-block content,
// tool order, duplicate-free tools keyed by name; then compares as JSON.
function normalised(body) {
  const strip = (v) => {
    if (Array.isArray(v)) return v.map(strip);
    if (v && typeof v === 'object') {
      const o = {};
      for (const k of Object.keys(v).sort()) if (k !== 'cache_control') o[k] = strip(v[k]);
      return o;
    }
    return v;
  };
  const b = strip(body);
  if (typeof b.system === 'string') b.system = [{ text: b.system, type: 'text' }];
  for (const m of b.messages) if (typeof m.content === 'string') m.content = [{ text: m.content, type: 'text' }];
  b.tools = [...(b.tools ?? [])].sort((x, y) => (x.name < y.name ? -1 : 1));
  return b;
}

async function session(up, proxy, scenario) {
  up.load(script(scenario.turns, { ttlMs: TTL_MS }));
  return runSession({ baseURL: proxy.url, scenario: { ttlMs: TTL_MS, ...scenario } });
}

const unstable = {
  turns: 9, seed: 7, shuffle: true, reserialiseEvery: 3, mcpAddAt: 5, clientBreakpoints: true,
  inject: { 4: 'system', 7: 'ttl' },
};

test('stabiliser off: reshuffles break the cache; every break is detected and attributed like the provider', async () => {
  const up = await startFakeUpstream();
  const proxy = await startProxy(up.url, OFF);
  const { turns } = await session(up, proxy, unstable);
  assert.equal(turns.length, 9);
  const fake = turns.filter(significant);
  // Shuffles alone break the cache on most turns.
  assert.ok(fake.length >= 5, `fake breaks: ${JSON.stringify(turns.map((t) => t.fakeBreak))}`);
  for (const t of turns) {
    assert.equal(t.proxyBreak, significant(t) ? t.fakeBreak : null, `turn ${t.turn}: proxy ${t.proxyBreak}, fake ${t.fakeBreak} lost ${t.fakeLost}`);
  }
  assert.ok(fake.some((t) => t.fakeBreak.startsWith('tools:')));
  // Off means untouched: the upstream got the client's bytes.
  const received = up.requests.filter((r) => r.api === 'anthropic');
  turns.forEach((t, i) => assert.equal(JSON.stringify(received[i].body), JSON.stringify(JSON.parse(t.clientBody))));
  const breaks = await (await fetch(`${proxy.url}/toolcache/breaks`, OWNER)).json();
  assert.equal(breaks.breaks.length, fake.length);
  assert.match(proxy.log(), /prompt cache break in conversation [0-9a-f]{16} \(turn \d+\): tools:/);
  await up.close();
});

test('stabiliser on: byte-stable tool prefix, equivalent requests, only the unavoidable breaks remain', async () => {
  const up = await startFakeUpstream();
  const off = totals((await session(up, await startProxy(up.url, OFF), unstable)).turns);
  const proxy = await startProxy(up.url, ON);
  const { turns } = await session(up, proxy, unstable);
  const received = up.requests.filter((r) => r.api === 'anthropic');
  assert.equal(received.length, turns.length);
  // Equivalent to what the client sent.
  turns.forEach((t, i) => assert.deepEqual(normalised(received[i].body), normalised(JSON.parse(t.clientBody))));
  // Byte-stable: the built-ins' bytes never change; the whole tool list
  // changes only when the MCP server is added (turn 5).
  // (cache_control aside: the client's marker moves with its shuffle, and it
  // is not part of the cached content.)
  const bare = (tools) => JSON.stringify(tools.map(({ cache_control: _, ...t }) => t));
  const toolBytes = received.map((r) => bare(r.body.tools));
  const builtinBytes = received.map((r) => bare(r.body.tools.slice(0, BUILTINS.length)));
  assert.equal(new Set(builtinBytes).size, 1);
  assert.equal(new Set(toolBytes.slice(0, 5)).size, 1);
  assert.equal(new Set(toolBytes.slice(5)).size, 1);
  assert.deepEqual(received[0].body.tools.map((t) => t.name),
    ['Bash', 'Edit', 'Glob', 'Grep', 'LS', 'Read', 'WebFetch', 'Write', 'mcp__fs__read_file']);
  // The breaks left: the MCP server added, the system edit, the TTL wait.
  const fake = turns.filter(significant).map((t) => `${t.turn} ${t.fakeBreak}`);
  assert.deepEqual(fake, ['4 system', '5 tools:added mcp__git__log', '7 ttl_expired']);
  for (const t of turns) assert.equal(t.proxyBreak, significant(t) ? t.fakeBreak : null, `turn ${t.turn}`);
  // The built-in prefix stayed cached when the MCP server came.
  assert.ok(turns[5].usage.cache_read_input_tokens > 4000, JSON.stringify(turns[5].usage));
  const on = totals(turns);
  assert.ok(on.read > 2 * off.read, `read on ${on.read} vs off ${off.read}`);
  assert.ok(on.cost < off.cost, `cost on ${on.cost} vs off ${off.cost}`);
  const metrics = await (await fetch(`${proxy.url}/metrics`)).text();
  assert.match(metrics, /toolcache_prompt_cache_breaks_total\{cause="system"\} 1/);
  assert.match(metrics, /toolcache_prompt_cache_tools_total\{what="moved"\} [1-9]/);
  assert.match(metrics, /toolcache_prompt_cache_breakpoints_added_total\{where="builtin_tools"\} [1-9]/);
  await up.close();
});

test('every injected change is attributed to its field and tool', async () => {
  const up = await startFakeUpstream();
  const proxy = await startProxy(up.url, ON);
  const inject = { 3: 'schema', 4: 'model', 5: 'tool_choice', 6: 'thinking', 7: 'edit' };
  const { turns } = await session(up, proxy, { turns: 9, seed: 3, shuffle: true, inject });
  const want = { 3: 'tools:schema_changed Grep', 4: 'model', 5: 'tool_choice', 6: 'thinking', 7: 'messages:edited 2' };
  for (const t of turns) {
    assert.equal(t.fakeBreak, want[t.turn] ?? null, `fake, turn ${t.turn}`);
    assert.equal(t.proxyBreak, want[t.turn] ?? null, `proxy, turn ${t.turn}`);
  }
  await up.close();
});

test('streams: the break is in the log and GET /toolcache/breaks', async () => {
  const up = await startFakeUpstream();
  const proxy = await startProxy(up.url, ON);
  await session(up, proxy, { turns: 5, stream: true, inject: { 3: 'system' } });
  const breaks = (await (await fetch(`${proxy.url}/toolcache/breaks`, OWNER)).json()).breaks;
  assert.equal(breaks.length, 1);
  assert.equal(breaks[0].label, 'system');
  assert.equal(breaks[0].turn, 4);
  assert.equal(up.requests.filter((r) => r.cacheBreak).length, 1);
  await up.close();
});

test('OpenAI Chat: a reshuffled function list keeps cached_tokens with the stabiliser', async () => {
  const up = await startFakeUpstream();
  const run = async (config) => {
    const proxy = await startProxy(up.url, config);
    up.load({ turns: [], fallbackText: 'ok' });
    const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
    const fns = BUILTINS.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.input_schema } }));
    const messages = [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'hi' }];
    const cached = [];
    for (let i = 0; i < 4; ++i) {
      const tools = i % 2 ? [...fns].reverse() : fns;
      const r = await client.chat.completions.create({ model: 'gpt-4.1', messages, tools });
      cached.push(r.usage.prompt_tokens_details.cached_tokens);
      messages.push({ role: 'assistant', content: r.choices[0].message.content }, { role: 'user', content: `more ${i}` });
    }
    return cached;
  };
  const off = await run(OFF);
  const on = await run(ON);
  assert.equal(off[1], 0);  // reversed tools: nothing in common
  for (let i = 1; i < 4; ++i) assert.ok(on[i] > 4000, `on: ${on}`);
  await up.close();
});
