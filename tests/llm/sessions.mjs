// Multi-turn agent sessions for the prompt-cache tests and bench (issue 14):
// an Anthropic SDK client runs a tool loop against the scripted fake
// upstream (through `toolcache proxy`), behaving the way real clients
// break the provider's prompt cache: it reshuffles its tool list, re-
// serialises schemas with another key order, adds an MCP server mid-
// session (flat-sorted among its built-ins), and at chosen turns changes
// the system prompt, model, a tool's schema, tool_choice, thinking,
// edits an earlier message, or waits past the cache TTL.
//
// Use: const r = await runSession({ baseURL, up, scenario });
//      r.turns[i] = { usage, proxyBreak, fakeBreak, fakeLost, injected }
import Anthropic from '@anthropic-ai/sdk';

// Deterministic pseudo-random numbers (mulberry32).
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = 'the tool reads writes searches lists files directories patterns output results lines of a project and returns text with options for limits offsets filters'.split(' ');
function text(seed, chars) {
  const r = rng(seed);
  let s = '';
  while (s.length < chars) s += WORDS[Math.floor(r() * WORDS.length)] + ' ';
  return s.slice(0, chars);
}

function tool(name, seed) {
  return {
    name,
    description: `${name}: ${text(seed, 2400)}`,
    input_schema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: text(seed + 1, 200) },
        limit: { type: 'integer', minimum: 1 },
      },
      required: ['path'],
      additionalProperties: false,
    },
  };
}

export const BUILTINS = ['Bash', 'Edit', 'Glob', 'Grep', 'LS', 'Read', 'WebFetch', 'Write'].map((n, i) => tool(n, 100 + i));
export const MCP_START = [tool('mcp__fs__read_file', 200)];
export const MCP_ADDED = [tool('mcp__git__log', 300), tool('mcp__git__status', 301)];
export const SYSTEM = `You are a coding agent. ${text(7, 10000)}`;

// Every object's keys in reverse order (the same JSON, other bytes).
function reserialised(v) {
  if (Array.isArray(v)) return v.map(reserialised);
  if (v && typeof v === 'object') {
    const o = {};
    for (const k of Object.keys(v).reverse()) o[k] = reserialised(v[k]);
    return o;
  }
  return v;
}

// The fake upstream's script: one Read call per turn, then a final text.
export function script(turns, cache = {}) {
  const t = [];
  for (let i = 0; i < turns - 1; ++i) {
    t.push({ reply: { text: `step ${i}`, toolCalls: [{ id: `toolu_s${i}`, name: 'Read', input: { path: `/w/f${i}.txt` } }] } });
  }
  t.push({ reply: { text: 'finished' } });
  return { turns: t, fallbackText: 'finished', cache };
}

// scenario: {
//   turns: 12, seed: 1,
//   shuffle: bool            tool order reshuffled every turn
//   reserialiseEvery: n      every n-th turn schemas' keys reversed (0: never)
//   mcpAddAt: t              MCP server tools added from turn t (0: never),
//                            flat-sorted (case-insensitive) among built-ins
//   clientBreakpoints: bool  cache_control on the last tool and last block
//   stream: bool             use messages.stream (no per-response headers)
//   inject: {turn: kind}     kind: system | model | schema | tool_choice |
//                            thinking | edit | ttl (wait ttlMs + 300 ms)
//   ttlMs: the fake's TTL (for the ttl injection)
// }
export async function runSession({ baseURL, scenario, apiKey = 'sk-test' }) {
  const sent = [];
  const client = new Anthropic({
    baseURL, apiKey, maxRetries: 0,
    fetch: async (url, init) => { sent.push(init?.body); return fetch(url, init); },
  });
  const r = rng(scenario.seed ?? 1);
  const inject = scenario.inject ?? {};
  const state = { model: 'claude-sonnet-4-5', system: SYSTEM, grep: null, toolChoice: null, thinking: null };
  const messages = [{ role: 'user', content: 'Read the files one by one and summarise them.' }];
  const turns = [];
  for (let t = 0; t < scenario.turns; ++t) {
    const kind = inject[t];
    if (kind === 'system') state.system = `${SYSTEM} Be terse.`;
    if (kind === 'model') state.model = 'claude-opus-4-1';
    if (kind === 'schema') state.grep = 'Searches file contents with ripgrep (updated).';
    if (kind === 'tool_choice') state.toolChoice = { type: 'auto', disable_parallel_tool_use: true };
    if (kind === 'thinking') state.thinking = { type: 'enabled', budget_tokens: 1024 };
    if (kind === 'edit') messages[2].content[0].content = `${messages[2].content[0].content} (edited)`;
    if (kind === 'ttl') await new Promise((res) => setTimeout(res, (scenario.ttlMs ?? 2000) + 300));
    let tools = [...BUILTINS, ...MCP_START, ...(scenario.mcpAddAt && t >= scenario.mcpAddAt ? MCP_ADDED : [])]
      .map((x) => (x.name === 'Grep' && state.grep ? { ...x, description: state.grep } : x));
    if (scenario.shuffle) {
      tools = tools.map((x) => [r(), x]).sort((a, b) => a[0] - b[0]).map((p) => p[1]);
    } else {
      tools = [...tools].sort((a, b) => a.name.toLowerCase().localeCompare(b.name.toLowerCase()));
    }
    if (scenario.reserialiseEvery && t % scenario.reserialiseEvery === scenario.reserialiseEvery - 1) {
      tools = tools.map(reserialised);
    }
    const reqMessages = structuredClone(messages);
    if (scenario.clientBreakpoints) {
      tools = tools.map((x, i) => (i === tools.length - 1 ? { ...x, cache_control: { type: 'ephemeral' } } : x));
      const last = reqMessages[reqMessages.length - 1];
      if (typeof last.content === 'string') last.content = [{ type: 'text', text: last.content }];
      last.content[last.content.length - 1].cache_control = { type: 'ephemeral' };
    }
    const params = { model: state.model, max_tokens: 256, system: state.system, tools, messages: reqMessages };
    if (state.toolChoice) params.tool_choice = state.toolChoice;
    if (state.thinking) params.thinking = state.thinking;
    let msg, headers = null;
    if (scenario.stream) {
      msg = await client.messages.stream(params).finalMessage();
    } else {
      const { data, response } = await client.messages.create(params).withResponse();
      msg = data;
      headers = response.headers;
    }
    turns.push({
      turn: t, injected: kind ?? null, usage: msg.usage, clientBody: sent[sent.length - 1],
      proxyBreak: headers?.get('x-toolcache-prompt-cache-break') ?? null,
      fakeBreak: headers?.get('x-fake-cache-break') ?? null,
      fakeLost: Number(headers?.get('x-fake-cache-lost') ?? 0),
    });
    messages.push({ role: 'assistant', content: msg.content });
    const calls = msg.content.filter((b) => b.type === 'tool_use');
    if (calls.length === 0) break;
    messages.push({ role: 'user', content: calls.map((c, i) => ({ type: 'tool_result', tool_use_id: c.id, content: text(1000 + t * 10 + i, 4000) })) });
  }
  return { turns };
}

// Totals and cost of a session's usage. Prices per million tokens
// (Claude Sonnet 4.5 list prices): input $3, 5-minute cache write $3.75,
// cache read $0.30.
export function totals(turns) {
  const s = { input: 0, creation: 0, read: 0 };
  for (const { usage } of turns) {
    s.input += usage.input_tokens ?? 0;
    s.creation += usage.cache_creation_input_tokens ?? 0;
    s.read += usage.cache_read_input_tokens ?? 0;
  }
  s.cost = (s.input * 3 + s.creation * 3.75 + s.read * 0.3) / 1e6;
  return s;
}
