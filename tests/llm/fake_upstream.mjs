// A scripted fake LLM provider: the one component of the LLM proxy's tests
// that cannot be real. It speaks the Anthropic Messages, OpenAI Chat
// Completions and OpenAI Responses wire formats (JSON and SSE, event order,
// indexes, message_stop / [DONE] / response.completed), the providers'
// error shapes with status codes and retry-after, usage, and a simulated
// prompt cache (see promptCache below). Its script format is documented in
// tests/llm/README.md.
//
// Use: import { startFakeUpstream } from './fake_upstream.mjs';
//      const up = await startFakeUpstream();  // up.url, up.load(script),
//      up.requests (what it received), up.close()
// Or:  node fake_upstream.mjs [--port N] [--script FILE]  (prints its URL)
import http from 'node:http';
import https from 'node:https';
import crypto from 'node:crypto';
import fs from 'node:fs';

const sha256 = (b) => crypto.createHash('sha256').update(b).digest('hex');

// ------------------------------------------------------------ prompt cache
// Anthropic (the documented rules of its prompt-caching page):
// the prefix is tools (deferred ones excluded) -> system -> messages, per
// model; tool_choice and thinking are part of the messages' prefix (a
// change invalidates the messages cache only). A breakpoint is a block
// with cache_control: its prefix is written when it has at least
// minTokens, and read at the breakpoint or at any of the 20 block
// boundaries before it (the lookback). TTL 5 min, or 1 h with ttl "1h".
// OpenAI: automatic, prompts of >= 1024 tokens, hits in 128-token steps of
// the longest previously seen prefix. Tokens are estimated as
// ceil(bytes / 4) of each block's JSON.
//
// Break accounting (Anthropic): per conversation (the first message), a
// request that reads less than the previous request left cached reports a
// break, attributed to the first block where the two prefixes differ
// ("model", "tools:added|removed|moved|schema_changed NAME", "system",
// "tool_choice", "thinking", "messages:edited I") or "ttl_expired".
export class PromptCache {
  constructor({ now = () => Date.now(), minTokens = 1024, ttlMs = null, lookback = 20 } = {}) {
    this.now = now;
    this.minTokens = minTokens;
    this.ttlMs = ttlMs;  // overrides both TTLs (tests of expiry)
    this.lookback = lookback;
    this.entries = new Map();  // prefix hash -> { tokens, expires }
    this.conversations = new Map();  // first message -> previous request
    this.breaks = [];
  }
  static tokens(v) {
    return Math.ceil(Buffer.byteLength(JSON.stringify(v)) / 4);
  }
  static strip(v) {
    if (Array.isArray(v)) return v.map(PromptCache.strip);
    if (v && typeof v === 'object') {
      const o = {};
      for (const [k, x] of Object.entries(v)) if (k !== 'cache_control') o[k] = PromptCache.strip(x);
      return o;
    }
    return v;
  }
  // The prefix as labelled blocks: {kind, name?, index?, block}.
  static blocks(body) {
    const out = [];
    for (const t of body.tools ?? []) {
      if (t.defer_loading === true) continue;  // not in the prefix
      out.push({ kind: 'tools', name: t.name ?? t.type, block: t });
    }
    const sys = typeof body.system === 'string'
      ? [{ type: 'text', text: body.system }] : (body.system ?? []);
    for (const b of sys) out.push({ kind: 'system', block: b });
    out.push({ kind: 'settings', block: { tool_choice: body.tool_choice ?? null, thinking: body.thinking ?? null } });
    (body.messages ?? []).forEach((m, index) => {
      const content = typeof m.content === 'string'
        ? [{ type: 'text', text: m.content }] : (m.content ?? []);
      for (const b of content) out.push({ kind: 'messages', index, block: { role: m.role, ...b } });
    });
    return out;
  }
  ttlOf(cc) {
    return this.ttlMs ?? (cc.ttl === '1h' ? 3600e3 : 300e3);
  }
  anthropic(body) {
    const blocks = PromptCache.blocks(body);
    const hash = crypto.createHash('sha256');
    hash.update(`model:${body.model ?? ''}`);
    let tokens = 0;
    const keys = [], cum = [], breakpoints = [];
    blocks.forEach((b, i) => {
      const { cache_control: cc, ...rest } = b.block;
      const stripped = b.kind === 'settings' ? rest : PromptCache.strip(rest);
      hash.update(JSON.stringify(stripped));
      tokens += b.kind === 'settings' ? 0 : PromptCache.tokens(stripped);
      keys.push(hash.copy().digest('hex'));
      cum.push(tokens);
      if (cc) breakpoints.push({ i, key: keys[i], tokens, ttl: this.ttlOf(cc) });
    });
    const total = tokens;
    const live = (k) => { const e = this.entries.get(k); return e && e.expires > this.now(); };
    let read = 0;
    for (const bp of breakpoints) {
      for (let j = bp.i; j >= 0 && j >= bp.i - this.lookback; --j) {
        if (live(keys[j])) { read = Math.max(read, cum[j]); break; }
      }
    }
    let created = 0;
    let cachedAfter = read;
    for (const bp of breakpoints) {
      if (bp.tokens < this.minTokens) continue;
      if (!live(bp.key) && bp.tokens > read) created = Math.max(created, bp.tokens - read);
      this.entries.set(bp.key, { tokens: bp.tokens, expires: this.now() + bp.ttl });
      cachedAfter = Math.max(cachedAfter, bp.tokens);
    }
    const cacheBreak = this.account(body, blocks, keys, read, cachedAfter);
    return {
      usage: { input_tokens: Math.max(1, total - read - created), cache_read_input_tokens: read, cache_creation_input_tokens: created },
      cacheBreak,
    };
  }
  // Compares with the conversation's previous request; returns the break
  // this request suffered (null when it read what was left cached).
  account(body, blocks, keys, read, cachedAfter) {
    const msgs = body.messages ?? [];
    const first = msgs[0];
    const asBlocks = (c) => (typeof c === 'string' ? [{ type: 'text', text: c }] : c);
    const conv = JSON.stringify([body.tools ? 1 : 0, first ? PromptCache.strip({ ...first, content: asBlocks(first.content) }) : null]);
    const prev = this.conversations.get(conv);
    const sigs = blocks.map((b) => ({ kind: b.kind, name: b.name, index: b.index,
      sig: JSON.stringify(b.kind === 'settings' ? b.block : PromptCache.strip(b.block)) }));
    this.conversations.set(conv, { model: body.model, sigs, cachedAfter, at: this.now(), messages: msgs.length });
    if (!prev || read >= prev.cachedAfter) return null;
    const gapMs = this.now() - prev.at;
    let label;
    if (prev.model !== body.model) {
      label = 'model';
    } else if (this.unchangedThrough(prev, sigs, prev.cachedAfter)) {
      // What was cached is still a prefix: only time (or the lookback
      // window) explains the loss.
      label = gapMs > (this.ttlMs ?? 300e3) ? 'ttl_expired' : 'lookback';
    } else {
      let k = 0;
      while (k < prev.sigs.length && k < sigs.length && prev.sigs[k].sig === sigs[k].sig) ++k;
      const a = prev.sigs[k], b = sigs[k];
      if (a?.kind === 'tools' || b?.kind === 'tools') {
        const pa = new Set(prev.sigs.filter((x) => x.kind === 'tools').map((x) => x.name));
        const pb = new Set(sigs.filter((x) => x.kind === 'tools').map((x) => x.name));
        if (b?.kind === 'tools' && !pa.has(b.name)) label = `tools:added ${b.name}`;
        else if (a?.kind === 'tools' && !pb.has(a.name)) label = `tools:removed ${a.name}`;
        else if (a?.kind === 'tools' && b?.kind === 'tools' && a.name === b.name) label = `tools:schema_changed ${b.name}`;
        else label = `tools:moved ${(b?.kind === 'tools' ? b : a).name}`;
      } else if ((a ?? b).kind === 'system' || (b ?? a).kind === 'system') {
        label = 'system';
      } else if (a?.kind === 'settings' && b?.kind === 'settings') {
        const pa = JSON.parse(a.sig), pb = JSON.parse(b.sig);
        label = JSON.stringify(pa.tool_choice) !== JSON.stringify(pb.tool_choice) ? 'tool_choice' : 'thinking';
      } else if (a && b && a.index === b.index) {
        label = `messages:edited ${b.index}`;
      } else if (msgs.length < prev.messages) {
        label = `messages:removed ${prev.messages - msgs.length}`;
      } else {
        label = `messages:edited ${(a ?? b).index}`;
      }
    }
    const br = { label, lostTokens: prev.cachedAfter - read, expected: prev.cachedAfter, read, gapMs };
    this.breaks.push(br);
    return br;
  }
  // True when the first `tokens` worth of the previous prefix is unchanged.
  unchangedThrough(prev, sigs, tokens) {
    let t = 0;
    for (let i = 0; i < prev.sigs.length; ++i) {
      if (t >= tokens) return true;
      if (i >= sigs.length || prev.sigs[i].sig !== sigs[i].sig) return false;
      if (prev.sigs[i].kind !== 'settings') t += Math.ceil(Buffer.byteLength(prev.sigs[i].sig) / 4);
    }
    return true;
  }
  openai(body) {
    const text = JSON.stringify([body.tools ?? [], body.instructions ?? '', body.messages ?? body.input ?? []]);
    const total = Math.ceil(Buffer.byteLength(text) / 4);
    let cached = 0;
    if (total >= 1024) {
      for (let t = 1024; t <= total; t += 128) {
        const key = 'oa:' + sha256(text.slice(0, t * 4));
        const e = this.entries.get(key);
        if (e && e.expires > this.now()) cached = t;
        this.entries.set(key, { tokens: t, expires: this.now() + 300e3 });
      }
    }
    return { prompt_tokens: total, cached_tokens: cached };
  }
}

// ------------------------------------------------------------ formats
function apiOf(method, path) {
  if (method !== 'POST') return null;
  if (path === '/v1/messages') return 'anthropic';
  if (path === '/v1/chat/completions') return 'chat';
  if (path === '/v1/responses') return 'responses';
  return null;
}

function errorBody(api, status, err) {
  const type = err?.type ?? (status === 429 ? 'rate_limit_error' : status >= 500 ? 'api_error' : 'invalid_request_error');
  const message = err?.message ?? `scripted error ${status}`;
  if (api === 'anthropic') return { type: 'error', error: { type, message } };
  return { error: { message, type, param: null, code: err?.code ?? null } };
}

let seq = 0;
const nextId = (p) => `${p}${(++seq).toString().padStart(6, '0')}`;

function anthropicMessage(body, reply, usage) {
  const content = [];
  if (reply.text) content.push({ type: 'text', text: reply.text });
  for (const c of reply.toolCalls ?? []) {
    content.push({ type: 'tool_use', id: c.id ?? nextId('toolu_'), name: c.name, input: c.input ?? {} });
  }
  return {
    id: nextId('msg_'), type: 'message', role: 'assistant', model: body.model ?? 'fake',
    content, stop_reason: (reply.toolCalls?.length ? 'tool_use' : 'end_turn'), stop_sequence: null,
    usage: { ...usage, output_tokens: 5 },
  };
}

function anthropicEvents(msg) {
  const ev = [];
  const start = { ...msg, content: [], stop_reason: null, usage: { ...msg.usage, output_tokens: 1 } };
  ev.push(['message_start', { type: 'message_start', message: start }]);
  msg.content.forEach((b, index) => {
    if (b.type === 'text') {
      ev.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }]);
      ev.push(['ping', { type: 'ping' }]);
      const half = Math.ceil(b.text.length / 2);
      for (const part of [b.text.slice(0, half), b.text.slice(half)]) {
        if (part) ev.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: part } }]);
      }
    } else {
      ev.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } }]);
      const json = JSON.stringify(b.input);
      const third = Math.ceil(json.length / 3);
      for (let i = 0; i < json.length; i += third) {
        ev.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json.slice(i, i + third) } }]);
      }
    }
    ev.push(['content_block_stop', { type: 'content_block_stop', index }]);
  });
  ev.push(['message_delta', { type: 'message_delta', delta: { stop_reason: msg.stop_reason, stop_sequence: null }, usage: { output_tokens: msg.usage.output_tokens } }]);
  ev.push(['message_stop', { type: 'message_stop' }]);
  return ev.map(([e, d]) => `event: ${e}\ndata: ${JSON.stringify(d)}\n\n`);
}

// `reply.choices` (Chat only): several choices, as with the request's `n`;
// each is {text, toolCalls} like a reply. Default: the reply itself.
function chatCompletion(body, reply, usage) {
  const choiceOf = (r, index) => {
    const tool_calls = (r.toolCalls ?? []).map((c) => ({
      id: c.id ?? nextId('call_'), type: 'function', function: { name: c.name, arguments: JSON.stringify(c.input ?? {}) },
    }));
    return { index, message: { role: 'assistant', content: r.text ?? null, ...(tool_calls.length ? { tool_calls } : {}), refusal: null },
      logprobs: null, finish_reason: tool_calls.length ? 'tool_calls' : 'stop' };
  };
  return {
    id: nextId('chatcmpl-'), object: 'chat.completion', created: 1700000000, model: body.model ?? 'fake',
    choices: (reply.choices ?? [reply]).map(choiceOf),
    usage: { prompt_tokens: usage.prompt_tokens, completion_tokens: 5, total_tokens: usage.prompt_tokens + 5,
      prompt_tokens_details: { cached_tokens: usage.cached_tokens } },
  };
}

// Chunks per choice, interleaved round-robin across choices (as the API
// interleaves the choices of `n` > 1).
function chatEvents(c, includeUsage) {
  const base = { id: c.id, object: 'chat.completion.chunk', created: c.created, model: c.model };
  const perChoice = c.choices.map((ch) => {
    const chunk = (delta, finish = null) => ({ ...base, choices: [{ index: ch.index, delta, logprobs: null, finish_reason: finish }] });
    const out = [chunk({ role: 'assistant', content: '' })];
    const m = ch.message;
    if (m.content) out.push(chunk({ content: m.content }));
    (m.tool_calls ?? []).forEach((t, index) => {
      out.push(chunk({ tool_calls: [{ index, id: t.id, type: 'function', function: { name: t.function.name, arguments: '' } }] }));
      const a = t.function.arguments;
      const half = Math.ceil(a.length / 2);
      out.push(chunk({ tool_calls: [{ index, function: { arguments: a.slice(0, half) } }] }));
      out.push(chunk({ tool_calls: [{ index, function: { arguments: a.slice(half) } }] }));
    });
    out.push(chunk({}, ch.finish_reason));
    return out;
  });
  const out = [];
  for (let i = 0; perChoice.some((l) => i < l.length); ++i) {
    for (const l of perChoice) if (i < l.length) out.push(l[i]);
  }
  if (includeUsage) out.push({ ...base, choices: [], usage: c.usage });
  return out.map((d) => `data: ${JSON.stringify(d)}\n\n`).concat(['data: [DONE]\n\n']);
}

function response(body, reply, usage) {
  const output = [];
  if (reply.reasoning) {
    output.push({ type: 'reasoning', id: nextId('rs_'), summary: [{ type: 'summary_text', text: reply.reasoning }] });
  }
  if (reply.text) {
    output.push({ type: 'message', id: nextId('msg_'), status: 'completed', role: 'assistant',
      content: [{ type: 'output_text', text: reply.text, annotations: [] }] });
  }
  for (const c of reply.toolCalls ?? []) {
    // `custom: true`: a custom (freeform) tool call, `input` a string
    // (Codex's apply_patch).
    if (c.custom) {
      output.push({ type: 'custom_tool_call', id: nextId('ctc_'), status: 'completed', call_id: c.id ?? nextId('call_'),
        name: c.name, input: c.input });
      continue;
    }
    output.push({ type: 'function_call', id: nextId('fc_'), call_id: c.id ?? nextId('call_'), name: c.name,
      arguments: JSON.stringify(c.input ?? {}), status: 'completed' });
  }
  return {
    id: nextId('resp_'), object: 'response', created_at: 1700000000, status: 'completed', model: body.model ?? 'fake',
    output, usage: { input_tokens: usage.prompt_tokens, input_tokens_details: { cached_tokens: usage.cached_tokens },
      output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: usage.prompt_tokens + 5 },
  };
}

function responseEvents(r) {
  let sequence_number = 0;
  const ev = [];
  const push = (type, d) => ev.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence_number++, ...d })}\n\n`);
  const shell = { ...r, status: 'in_progress', output: [] };
  push('response.created', { response: shell });
  push('response.in_progress', { response: shell });
  r.output.forEach((item, output_index) => {
    if (item.type === 'reasoning') {
      const part = item.summary[0];
      push('response.output_item.added', { output_index, item: { ...item, summary: [] } });
      push('response.reasoning_summary_part.added', { output_index, item_id: item.id, summary_index: 0, part: { type: 'summary_text', text: '' } });
      push('response.reasoning_summary_text.delta', { output_index, item_id: item.id, summary_index: 0, delta: part.text });
      push('response.reasoning_summary_text.done', { output_index, item_id: item.id, summary_index: 0, text: part.text });
      push('response.reasoning_summary_part.done', { output_index, item_id: item.id, summary_index: 0, part });
    } else if (item.type === 'custom_tool_call') {
      push('response.output_item.added', { output_index, item: { ...item, input: '', status: 'in_progress' } });
      push('response.custom_tool_call_input.delta', { output_index, item_id: item.id, delta: item.input });
      push('response.custom_tool_call_input.done', { output_index, item_id: item.id, input: item.input });
    } else if (item.type === 'function_call') {
      push('response.output_item.added', { output_index, item: { ...item, arguments: '', status: 'in_progress' } });
      push('response.function_call_arguments.delta', { output_index, item_id: item.id, delta: item.arguments });
      push('response.function_call_arguments.done', { output_index, item_id: item.id, arguments: item.arguments });
    } else {
      const text = item.content[0].text;
      push('response.output_item.added', { output_index, item: { ...item, content: [], status: 'in_progress' } });
      push('response.content_part.added', { output_index, item_id: item.id, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
      push('response.output_text.delta', { output_index, item_id: item.id, content_index: 0, delta: text });
      push('response.output_text.done', { output_index, item_id: item.id, content_index: 0, text });
      push('response.content_part.done', { output_index, item_id: item.id, content_index: 0, part: item.content[0] });
    }
    push('response.output_item.done', { output_index, item });
  });
  push('response.completed', { response: r });
  return ev;
}

// ------------------------------------------------------------ versions
// Anthropic API versions (the request's `anthropic-version`). 2026-10-21
// (docs: api/versioning, api/migration-2026-10-21) rejects with 400, in the
// Messages API and token counting, what 2023-06-01 accepts:
// - `temperature`, `top_p` or `top_k` (removed, even at their defaults:
//   "<name>: Extra inputs are not permitted");
// - a `document` block directly in an assistant message (documents nested in
//   other blocks, e.g. web fetch results, stay accepted);
// - a `text` block with a non-empty `citations` array in a user message,
//   directly or inside a `search_result` block (Choice: also a
//   search_result inside a tool_result, which is in the user message).
// Responses, stream events, usage and error bodies are the same in both
// versions; any other version value is answered as 2023-06-01.
export const ANTHROPIC_VERSION_NEW = '2026-10-21';
export function versionError(body, version) {
  if (version !== ANTHROPIC_VERSION_NEW || !body || typeof body !== 'object') return '';
  for (const k of ['temperature', 'top_p', 'top_k']) if (k in body) return `${k}: Extra inputs are not permitted`;
  const cited = (b) => b?.type === 'text' && Array.isArray(b.citations) && b.citations.length > 0;
  const citedIn = (blocks, at) => {
    for (let j = 0; j < blocks.length; ++j) {
      const b = blocks[j];
      if (cited(b)) return `${at}.${j}`;
      if (b?.type === 'search_result' && Array.isArray(b.content)) {
        const k = b.content.findIndex(cited);
        if (k >= 0) return `${at}.${j}.content.${k}`;
      }
      if (b?.type === 'tool_result' && Array.isArray(b.content)) {
        for (let k = 0; k < b.content.length; ++k) {
          const r = b.content[k];
          const n = r?.type === 'search_result' && Array.isArray(r.content) ? r.content.findIndex(cited) : -1;
          if (n >= 0) return `${at}.${j}.content.${k}.content.${n}`;
        }
      }
    }
    return '';
  };
  const msgs = Array.isArray(body.messages) ? body.messages : [];
  for (let i = 0; i < msgs.length; ++i) {
    const blocks = Array.isArray(msgs[i]?.content) ? msgs[i].content : [];
    if (msgs[i].role === 'assistant') {
      const j = blocks.findIndex((b) => b?.type === 'document');
      if (j >= 0) return `messages.${i}.content.${j}: document blocks are not accepted in assistant messages; send documents in user messages`;
    } else if (msgs[i].role === 'user') {
      const at = citedIn(blocks, `messages.${i}.content`);
      if (at) return `${at}.citations: citations are not accepted on text blocks in user messages`;
    }
  }
  return '';
}

// The credential the provider authenticates a request with: Anthropic
// takes `x-api-key` when both it and `authorization` are sent.
function credentialOf(api, headers) {
  const bearer = /^Bearer (.+)$/i.exec(headers.authorization ?? '')?.[1] ?? null;
  if (api === 'anthropic') return headers['x-api-key'] ?? bearer;
  return bearer ?? headers['api-key'] ?? null;
}

// ------------------------------------------------------------ server
// The provider's pairing rule (Anthropic: each tool_use answered by a
// tool_result in the next user message; Chat: each tool_call answered by a
// tool message before the next assistant or user message; Responses: each
// function_call answered by a later function_call_output). "" = valid.
export function historyError(api, body) {
  const msgs = body.messages ?? [];
  if (api === 'anthropic') {
    for (let i = 0; i < msgs.length; ++i) {
      const m = msgs[i];
      const blocks = Array.isArray(m.content) ? m.content : [];
      const uses = blocks.filter((b) => b.type === 'tool_use').map((b) => b.id);
      const results = blocks.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id);
      if (m.role === 'user' && results.length) {
        const prev = msgs[i - 1];
        const asked = (Array.isArray(prev?.content) ? prev.content : []).filter((b) => b.type === 'tool_use').map((b) => b.id);
        for (const r of results) if (!asked.includes(r)) return `messages.${i}: tool_result ${r} answers no tool_use of the previous message`;
      }
      if (m.role === 'assistant' && uses.length) {
        const next = msgs[i + 1];
        if (!next) continue;  // the newest turn may be a prefill
        const answered = (Array.isArray(next.content) ? next.content : []).filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id);
        for (const u of uses) if (!answered.includes(u)) return `messages.${i}: tool_use ${u} has no tool_result in the next message`;
      }
      if (i > 0 && m.role === msgs[i - 1].role) return `messages.${i}: roles must alternate`;
    }
  } else if (api === 'chat') {
    for (let i = 0; i < msgs.length; ++i) {
      const m = msgs[i];
      if (m.role === 'assistant' && m.tool_calls?.length) {
        const ids = m.tool_calls.map((c) => c.id);
        let j = i + 1;
        const got = [];
        while (j < msgs.length && msgs[j].role === 'tool') got.push(msgs[j++].tool_call_id);
        for (const id of ids) if (!got.includes(id)) return `messages.${i}: tool_call ${id} has no tool message`;
      }
      if (m.role === 'tool') {
        let k = i - 1;
        while (k >= 0 && msgs[k].role === 'tool') --k;
        if (!(msgs[k]?.tool_calls ?? []).some((c) => c.id === m.tool_call_id)) return `messages.${i}: tool message ${m.tool_call_id} answers no call`;
      }
    }
  } else if (api === 'responses' && Array.isArray(body.input) && !body.previous_response_id) {
    // Each function_call item answered by a function_call_output with its
    // call_id later in the input; each output answers an earlier call.
    const calls = new Map();
    const isCall = (t) => t === 'function_call' || t === 'custom_tool_call';
    body.input.forEach((it, i) => { if (isCall(it.type)) calls.set(it.call_id, i); });
    const answered = new Set();
    for (let i = 0; i < body.input.length; ++i) {
      const it = body.input[i];
      if (it.type !== 'function_call_output' && it.type !== 'custom_tool_call_output') continue;
      if (!(calls.get(it.call_id) < i)) return `input.${i}: function_call_output ${it.call_id} answers no earlier function_call`;
      answered.add(it.call_id);
    }
    for (const [id, i] of calls) if (!answered.has(id)) return `input.${i}: function_call ${id} has no function_call_output`;
  }
  return '';
}

// `tls`: {cert, key} (PEM) serves HTTPS instead of HTTP.
export async function startFakeUpstream({ port = 0, script = null, tls = null } = {}) {
  const state = { turns: [], requests: [], cache: new PromptCache(), fallbackText: 'done' };
  const load = (s) => {
    state.turns = [...(s?.turns ?? [])];
    state.fallbackText = s?.fallbackText ?? 'done';
    state.strictHistory = s?.strictHistory ?? false;
    state.requests.length = 0;
    // `cache`: {minTokens, ttlMs, lookback} for the simulated prompt cache
    // (a fresh, empty one per script).
    state.cache = new PromptCache(s?.cache ?? {});
  };
  if (script) load(script);

  const handler = async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url, 'http://x');
    if (url.pathname === '/_fake/script' && req.method === 'POST') {
      load(JSON.parse(raw.toString()));
      res.writeHead(204).end();
      return;
    }
    if (url.pathname === '/_fake/breaks') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(state.cache.breaks));
      return;
    }
    if (url.pathname === '/_fake/requests') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(state.requests));
      return;
    }
    const api = apiOf(req.method, url.pathname);
    const version = req.headers['anthropic-version'] ?? null;
    const record = { method: req.method, path: url.pathname, query: url.search, headers: req.headers,
      bodySha256: sha256(raw), bodyBytes: raw.length, api, raw: raw.toString(), version,
      credential: credentialOf(api ?? (version ? 'anthropic' : 'openai'), req.headers) };
    state.requests.push(record);
    // Token counting follows the Messages API's version rules.
    if (req.method === 'POST' && url.pathname === '/v1/messages/count_tokens') {
      let bad = '';
      try { bad = versionError(JSON.parse(raw.toString()), version); } catch { bad = 'invalid JSON'; }
      if (bad) {
        record.rejected = bad;
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify(errorBody('anthropic', 400, { message: bad })));
        return;
      }
    }
    if (!api) {
      // Any other endpoint: echo what arrived so tests can check pass-through.
      res.writeHead(200, { 'content-type': 'application/json', 'x-fake-echo': '1' });
      res.end(JSON.stringify({ object: 'list', data: [], echo: { method: req.method, path: url.pathname, query: url.search, bodySha256: record.bodySha256 } }));
      return;
    }
    let body;
    try {
      body = JSON.parse(raw.toString());
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify(errorBody(api, 400, { message: 'invalid JSON' })));
      return;
    }
    record.body = body;
    // What the request's API version rejects (versionError), and with
    // `strictHistory` what the provider rejects: a tool call not answered by
    // the next message, or a result answering no call.
    const bad = (api === 'anthropic' ? versionError(body, version) : '') ||
      (state.strictHistory ? historyError(api, body) : null);
    if (bad) {
      record.rejected = bad;
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify(errorBody(api, 400, { message: bad })));
      return;
    }
    // A turn with `when.tool` is taken only by a request that offers that
    // tool (agents send side requests, e.g. titles, without tools).
    const offers = (name) => (body.tools ?? []).some((t) => (t.name ?? t.function?.name) === name);
    const next = state.turns[0];
    const fits = next && (!next.when?.tool || offers(next.when.tool));
    const turn = (fits ? state.turns.shift() : null) ?? { reply: { text: state.fallbackText } };
    record.turn = turn.name ?? null;
    const reply = turn.reply ?? {};
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (reply.status && reply.status >= 400) {
      const headers = { 'content-type': 'application/json', 'request-id': nextId('req_') };
      if (reply.retryAfter !== undefined) headers['retry-after'] = String(reply.retryAfter);
      res.writeHead(reply.status, headers).end(JSON.stringify(errorBody(api, reply.status, reply.error)));
      return;
    }
    let payload, events;
    const extra = {};
    if (api === 'anthropic') {
      const { usage, cacheBreak } = state.cache.anthropic(body);
      record.cacheBreak = cacheBreak;
      if (cacheBreak) {
        extra['x-fake-cache-break'] = cacheBreak.label;
        extra['x-fake-cache-lost'] = String(cacheBreak.lostTokens);
      }
      payload = anthropicMessage(body, reply, usage);
      events = () => anthropicEvents(payload);
    } else if (api === 'chat') {
      payload = chatCompletion(body, reply, state.cache.openai(body));
      events = () => chatEvents(payload, body.stream_options?.include_usage);
    } else {
      payload = response(body, reply, state.cache.openai(body));
      events = () => responseEvents(payload);
    }
    record.reply = payload;
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': nextId('req_'), ...extra });
      res.end(JSON.stringify(payload));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...extra });
    const list = events();
    const cut = reply.truncateAfterEvents ?? list.length;
    for (let i = 0; i < Math.min(cut, list.length); ++i) {
      await new Promise((r) => res.write(list[i], r));
      if (reply.eventDelayMs) await new Promise((r) => setTimeout(r, reply.eventDelayMs));
    }
    if (cut < list.length) {
      res.socket.destroy();  // a truncated stream: the connection drops
      return;
    }
    res.end();
  };
  const server = tls ? https.createServer({ cert: tls.cert, key: tls.key }, handler) : http.createServer(handler);
  server.keepAliveTimeout = 30000;
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  const url = `${tls ? 'https' : 'http'}://127.0.0.1:${server.address().port}`;
  return {
    url, server, state, load, requests: state.requests,
    close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const opt = (n) => { const i = args.indexOf(n); return i >= 0 ? args[i + 1] : undefined; };
  const script = opt('--script') ? JSON.parse(fs.readFileSync(opt('--script'), 'utf8')) : null;
  const up = await startFakeUpstream({ port: Number(opt('--port') ?? 0), script });
  console.log(up.url);
}
