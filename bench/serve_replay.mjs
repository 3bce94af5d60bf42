// The paper's Table 4, end to end through `toolcache proxy`: recorded agent
// sessions (a trace in the project's JSONL format, e.g. from `toolcache
// trace convert`) are replayed turn by turn. The fake upstream plays the
// model (one tool call per turn, in the trace's order, with a fixed model
// latency); an Anthropic SDK client plays the agent and runs each tool with
// its recorded latency, returning a deterministic result of the recorded
// size. Each session runs twice through a fresh proxy per mode:
// observe-only and `--serve`; the cache fills across sessions as in the
// trace. Reported: end-to-end time per mode, calls served, wrong results
// (a served result differing from what the tool would return: must be 0),
// prefix breaks (an upstream request that does not extend the previous one
// of its session byte for byte: must be 0), and bytes sent upstream with
// `--offload` on vs off.
// Usage (after a build and npm ci in tests/llm):
//   build/apps/toolcache/toolcache trace convert --from llmcompiler \
//     tests/data/traces/llmcompiler/movie_recommendations_formatted.json -o /tmp/movie.jsonl
//   node bench/serve_replay.mjs --trace /tmp/movie.jsonl [--sessions 40]
//        [--model-ms 100] [--tool-scale 1] [--max-calls 12]
//        [--min-result-bytes 0] [--bin build/apps/toolcache/toolcache]
//        [--sessions all] [--modes observe,serve,offload] [--parallel]
// --parallel: a run of consecutive calls to the same tool is one model turn
// with parallel tool calls (LLMCompiler's plans issue a question's
// independent searches at once); the client runs a turn's calls
// concurrently. Without it, one call per turn (ReAct-style).
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const llmDir = path.join(root, 'tests/llm');
const { startFakeUpstream } = await import(path.join(llmDir, 'fake_upstream.mjs'));
const { default: Anthropic } = await import(path.join(llmDir, 'node_modules/@anthropic-ai/sdk/index.js'));

const args = process.argv.slice(2);
const opt = (n, d) => { const i = args.indexOf(n); return i >= 0 ? args[i + 1] : d; };
const BIN = path.resolve(opt('--bin', path.join(root, 'build/apps/toolcache/toolcache')));
const TRACE = opt('--trace');
const SESSIONS = opt('--sessions', '40') === 'all' ? Infinity : Number(opt('--sessions', 40));
const MODES = opt('--modes', 'observe,serve,offload').split(',');
const PARALLEL = args.includes('--parallel');
const MODEL_MS = Number(opt('--model-ms', 100));
const TOOL_SCALE = Number(opt('--tool-scale', 1));
const MAX_CALLS = Number(opt('--max-calls', 12));
// Results at least this large (bytes): to see offload on a trace whose
// recorded results are small.
const MIN_RESULT = Number(opt('--min-result-bytes', 0));
if (!TRACE) throw new Error('--trace FILE is required');

// Sessions in trace order, each its calls in order.
const sessions = new Map();
for (const line of fs.readFileSync(TRACE, 'utf8').split('\n')) {
  if (!line.trim()) continue;
  const r = JSON.parse(line);
  const s = r.session ?? 'default';
  if (!sessions.has(s)) sessions.set(s, []);
  sessions.get(s).push(r);
}
const picked = [...sessions.values()].slice(0, SESSIONS).map((calls) => calls.slice(0, MAX_CALLS));
const toolNames = [...new Set(picked.flat().map((r) => r.tool))];
const canon = (v) => (v && typeof v === 'object' && !Array.isArray(v)
  ? `{${Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + canon(v[k])).join(',')}}`
  : Array.isArray(v) ? `[${v.map(canon).join(',')}]` : JSON.stringify(v));
// The tool's answer: deterministic in (tool, arguments), of the recorded size.
function resultOf(tool, input, size) {
  const seed = crypto.createHash('sha256').update(tool + canon(input)).digest('hex');
  const n = Math.max(16, MIN_RESULT, Number(size) || 64);
  let s = `${tool} result ${seed}\n`;
  while (s.length < n) s += `${seed.slice(0, 60)} line ${s.length}\n`;
  return s.slice(0, n);
}

async function startProxy(upUrl, extra, config) {
  const child = spawn(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', upUrl, '--config', config,
    '--log-level', 'warn', ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d) => { log += d; });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => { out += d; const m = out.match(/listening on (http:\S+)/); if (m) resolve(m[1]); });
    child.on('exit', (c) => reject(new Error(`proxy exited ${c}: ${log}`)));
  });
  return { child, url, stop: () => new Promise((r) => { child.on('exit', r); child.kill('SIGTERM'); }) };
}

async function runMode(mode) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tc-replay-'));
  const config = path.join(tmp, 'c.yaml');
  fs.writeFileSync(config, `ttlSeconds: 86400\ntools:\n${toolNames.map((t) => `  ${JSON.stringify(t)}: {requestType: INFORMATIONAL}`).join('\n')}\n`);
  const up = await startFakeUpstream();
  const extra = mode === 'observe' ? [] : mode === 'serve' ? ['--serve'] : ['--serve', '--offload'];
  const proxy = await startProxy(up.url, extra, config);
  const client = new Anthropic({ apiKey: 'sk-replay', baseURL: proxy.url, maxRetries: 0 });
  const tools = toolNames.map((name) => ({ name, description: `the ${name} tool`, input_schema: { type: 'object' } }));
  let ms = 0, clientCalls = 0, wrong = 0, breaks = 0, bytesUp = 0, upstreamCalls = 0;
  // Turns the client ran: `repeat` = every call repeats an earlier one
  // (servable had it been cached), `partial` = some do, some do not.
  let clientTurns = 0, repeatTurns = 0, partialTurns = 0, partialRepeatCalls = 0;
  const seen = new Set();
  for (const [si, calls] of picked.entries()) {
    // Turns: lists of call indexes.
    const groups = [];
    calls.forEach((r, i) => {
      const g = groups.at(-1);
      if (PARALLEL && g && calls[g[0]].tool === r.tool) g.push(i); else groups.push([i]);
    });
    up.load({ strictHistory: true, turns: [
      ...groups.map((g) => ({ reply: { delayMs: MODEL_MS, toolCalls: g.map((i) => ({ id: `toolu_${si}_${i}`, name: calls[i].tool, input: calls[i].arguments ?? {} })) } })),
      { reply: { delayMs: MODEL_MS, text: 'session done' } },
    ] });
    const messages = [{ role: 'user', content: `session ${si}` }];
    const t0 = performance.now();
    for (let round = 0; round < calls.length + 2; ++round) {
      const msg = await client.messages.create({ model: 'replay', max_tokens: 100, tools, messages });
      messages.push({ role: 'assistant', content: msg.content });
      const uses = msg.content.filter((b) => b.type === 'tool_use');
      if (!uses.length) break;
      ++clientTurns;
      const repeats = uses.filter((u) => seen.has(u.name + canon(u.input))).length;
      if (repeats === uses.length) ++repeatTurns;
      else if (repeats > 0) { ++partialTurns; partialRepeatCalls += repeats; }
      for (const u of uses) seen.add(u.name + canon(u.input));
      // The client runs a turn's calls concurrently.
      const results = await Promise.all(uses.map(async (u) => {
        const rec = calls[Number(u.id.split('_')[2])];
        await new Promise((r) => setTimeout(r, (rec.latency ?? 0.05) * 1000 * TOOL_SCALE));
        ++clientCalls;
        return { type: 'tool_result', tool_use_id: u.id, content: resultOf(u.name, u.input, rec.result_size) };
      }));
      messages.push({ role: 'user', content: results });
    }
    ms += performance.now() - t0;
    // Every result the upstream saw equals the tool's own answer, and each
    // request extends the previous one of the session byte for byte.
    let prev = null;
    for (const q of up.requests) {
      ++upstreamCalls;
      bytesUp += q.bodyBytes;
      if (q.rejected) ++breaks;
      const uses = new Map();
      for (const m of q.body.messages) for (const b of Array.isArray(m.content) ? m.content : []) {
        if (b.type === 'tool_use') uses.set(b.id, b);
        if (b.type === 'tool_result') {
          const u = uses.get(b.tool_use_id);
          const rec = calls[Number(b.tool_use_id.split('_')[2])];
          const text = typeof b.content === 'string' ? b.content : b.content.map((x) => x.text).join('');
          if (mode !== 'offload' && text !== resultOf(u.name, u.input, rec.result_size)) ++wrong;
        }
      }
      if (prev) {
        const a = prev.raw;
        const mi = a.slice(a.indexOf('"messages"'), a.lastIndexOf(']'));
        if (!q.raw.includes(mi)) ++breaks;
      }
      prev = q;
    }
  }
  const stats = await (await fetch(`${proxy.url}/toolcache/stats`)).json();
  const served = (stats.metrics.toolcache_llm_served_total?.series ?? []).reduce((n, s) => n + s.value, 0);
  await proxy.stop();
  await up.close();
  fs.rmSync(tmp, { recursive: true, force: true });
  return { mode, ms, clientCalls, served, wrong, breaks, bytesUp, upstreamCalls, clientTurns, repeatTurns, partialTurns, partialRepeatCalls };
}

const total = picked.reduce((n, c) => n + c.length, 0);
console.log(`trace ${path.basename(TRACE)}: ${picked.length} sessions, ${total} calls, model ${MODEL_MS} ms, tool latency x${TOOL_SCALE}` +
  (MIN_RESULT ? `, results >= ${MIN_RESULT} bytes` : '') + (PARALLEL ? ', parallel calls per turn' : ', one call per turn'));
const rows = [];
for (const mode of MODES) rows.push(await runMode(mode));
console.log('| mode | end-to-end | vs first | client tool calls | served | wrong | prefix breaks | upstream calls | bytes sent upstream | client turns (all repeats / partly) |');
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(`| ${r.mode} | ${(r.ms / 1000).toFixed(2)} s | ${(100 * (r.ms / rows[0].ms - 1)).toFixed(1)} % | ${r.clientCalls} | ${r.served} | ${r.wrong} | ${r.breaks} | ${r.upstreamCalls} | ${r.bytesUp} | ${r.clientTurns} (${r.repeatTurns} / ${r.partialTurns}, ${r.partialRepeatCalls} calls) |`);
}
