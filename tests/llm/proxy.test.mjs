// `toolcache proxy` driven by the official SDKs (@anthropic-ai/sdk, openai)
// against the scripted fake upstream: multi-turn tool use, streaming and
// not, errors, truncation, pass-through. Run by tests/e2e_proxy.sh with
// TOOLCACHE_BIN set: node --test tests/llm/proxy.test.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startFakeUpstream } from './fake_upstream.mjs';
import { spawnListening } from './spawn_proxy.mjs';

const BIN = process.env.TOOLCACHE_BIN;
let up, proxy, base;

async function startProxy(upstreamUrl, extra = []) {
  const started = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', upstreamUrl, ...extra]);
  return started;
}

async function stats() {
  return (await fetch(`${base}/toolcache/stats`)).json();
}
function counter(s, name, labels) {
  const fam = s.metrics[name];
  if (!fam) return 0;
  let n = 0;
  for (const series of fam.series) {
    if (Object.entries(labels).every(([k, v]) => series.labels[k] === v)) n += series.value;
  }
  return n;
}

before(async () => {
  assert.ok(BIN, 'TOOLCACHE_BIN must name the toolcache binary');
  up = await startFakeUpstream();
  proxy = await startProxy(up.url);
  base = proxy.url;
});
after(async () => {
  proxy.child.kill('SIGTERM');
  await new Promise((r) => proxy.child.on('exit', r));
  await up.close();
});

const readTool = { name: 'Read', description: 'Reads a file from the local filesystem.',
  input_schema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] } };
const files = { '/w/a.txt': 'alpha\nbeta\n' };

// Runs the client's tool loop with the Anthropic SDK until the model stops.
async function anthropicLoop(client, stream) {
  const messages = [{ role: 'user', content: 'read a.txt twice' }];
  const seen = [];
  for (let i = 0; i < 5; ++i) {
    let msg, headers;
    if (stream) {
      const s = client.messages.stream({ model: 'claude-test', max_tokens: 100, tools: [readTool], messages });
      msg = await s.finalMessage();
      headers = null;
    } else {
      const { data, response } = await client.messages
        .create({ model: 'claude-test', max_tokens: 100, tools: [readTool], messages })
        .withResponse();
      msg = data;
      headers = response.headers;
    }
    seen.push({ msg, headers });
    messages.push({ role: 'assistant', content: msg.content });
    const uses = msg.content.filter((b) => b.type === 'tool_use');
    if (uses.length === 0) break;
    messages.push({ role: 'user', content: uses.map((u) => ({ type: 'tool_result', tool_use_id: u.id, content: files[u.input.file_path] ?? 'missing' })) });
  }
  return seen;
}

const twoReads = (prefix) => ({
  turns: [
    { name: 'read1', reply: { text: 'Reading.', toolCalls: [{ id: `${prefix}_1`, name: 'Read', input: { file_path: '/w/a.txt' } }] } },
    { name: 'read2', reply: { toolCalls: [{ id: `${prefix}_2`, name: 'Read', input: { file_path: '/w/a.txt' } }] } },
    { name: 'end', reply: { text: 'Both reads agree.' } },
  ],
});

test('Anthropic SDK, not streamed: the second read of a file would hit', async () => {
  up.load(twoReads('toolu_ns'));
  const client = new Anthropic({ apiKey: 'sk-ant-test-1', baseURL: base, maxRetries: 0 });
  const seen = await anthropicLoop(client, false);
  assert.equal(seen.length, 3);
  assert.equal(seen[0].headers.get('x-toolcache-observed-calls'), '1');
  assert.equal(seen[0].headers.get('x-toolcache-would-hit'), '0');
  assert.equal(seen[1].headers.get('x-toolcache-recorded'), '1');
  assert.equal(seen[1].headers.get('x-toolcache-would-hit'), '1');
  assert.equal(seen[2].msg.content[0].text, 'Both reads agree.');
  // The upstream saw each request byte for byte and the credential intact,
  // in the form the SDK sent it (1.x: `authorization: Bearer`, API version
  // 2026-10-21; 0.x sent `x-api-key` and 2023-06-01, covered below).
  assert.equal(up.requests.length, 3);
  for (const r of up.requests) {
    assert.equal(r.headers.authorization, 'Bearer sk-ant-test-1');
    assert.equal(r.headers['x-api-key'], undefined);
    assert.equal(r.version, '2026-10-21');
    assert.equal(r.credential, 'sk-ant-test-1');
  }
  assert.equal(up.requests[2].body.messages.length, 5);
});

// The 0.x SDKs' and Claude Code's wire form, sent raw: `x-api-key` and
// anthropic-version 2023-06-01 reach the upstream intact, with the body.
async function rawAnthropic(headers, body) {
  const r = await fetch(`${base}/v1/messages`, { method: 'POST',
    headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: r.status, headers: r.headers, json: await r.json() };
}

test('old wire form (x-api-key, 2023-06-01) reaches the upstream intact and is observed', async () => {
  up.load({ turns: [{ reply: { toolCalls: [{ id: 'toolu_old', name: 'Read', input: { file_path: '/w/old.txt' } }] } }] });
  const body = { model: 'm', max_tokens: 10, temperature: 0, tools: [readTool], messages: [{ role: 'user', content: 'x' }] };
  const r = await rawAnthropic({ 'x-api-key': 'sk-ant-old-1', 'anthropic-version': '2023-06-01' }, body);
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('x-toolcache-observed-calls'), '1');
  assert.equal(r.json.content[0].name, 'Read');
  const seen = up.requests.at(-1);
  assert.equal(seen.headers['x-api-key'], 'sk-ant-old-1');
  assert.equal(seen.headers.authorization, undefined);
  assert.equal(seen.version, '2023-06-01');
  assert.equal(seen.raw, JSON.stringify(body));
});

test('API 2026-10-21: what the version rejects comes back as the upstream said it, 2023-06-01 unchanged', async () => {
  const client = new Anthropic({ apiKey: 'sk-ant-test-1', baseURL: base, maxRetries: 0 });
  const cases = [
    [{ temperature: 1.0 }, /^temperature: Extra inputs are not permitted$/],
    [{ top_p: 0.99 }, /^top_p: /],
    [{ top_k: 5 }, /^top_k: /],
    [{ messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'd' } }] },
      { role: 'user', content: 'b' }] }, /^messages\.1\.content\.0: document/],
    [{ messages: [{ role: 'user', content: [{ type: 'text', text: 't', citations: [{ type: 'char_location', cited_text: 'x', document_index: 0,
      start_char_index: 0, end_char_index: 1 }] }] }] }, /^messages\.0\.content\.0\.citations: /],
  ];
  for (const [extra, message] of cases) {
    up.load({ turns: [] });
    const params = { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }], ...extra };
    await assert.rejects(client.messages.create(params), (e) => {
      assert.equal(e.status, 400);
      assert.equal(e.error.type, 'error');
      assert.equal(e.error.error.type, 'invalid_request_error');
      assert.match(e.error.error.message, message);
      return true;
    });
    assert.match(up.requests.at(-1).rejected, message);
    // The same body with the old version is accepted.
    const r = await rawAnthropic({ 'x-api-key': 'sk-ant-old-1', 'anthropic-version': '2023-06-01' }, params);
    assert.equal(r.status, 200, JSON.stringify(extra));
  }
});

test('Anthropic SDK, streamed: events relayed, tool calls observed at message_stop', async () => {
  up.load(twoReads('toolu_st'));
  const before = await stats();
  const client = new Anthropic({ apiKey: 'sk-ant-test-2', baseURL: base, maxRetries: 0 });
  const seen = await anthropicLoop(client, true);
  assert.equal(seen.length, 3);
  assert.deepEqual(seen[1].msg.content[0].input, { file_path: '/w/a.txt' });
  const after = await stats();
  const wh = (s) => counter(s, 'toolcache_llm_tool_calls_total', { api: 'anthropic_messages', tool: 'Read', outcome: 'would_hit' });
  assert.equal(wh(after) - wh(before), 1);
  const complete = (s) => counter(s, 'toolcache_proxy_streams_total', { api: 'anthropic_messages', outcome: 'complete' });
  assert.equal(complete(after) - complete(before), 3);
});

test('API keys do not share entries', async () => {
  // sk-ant-test-1 recorded Read /w/a.txt above (sent as authorization:
  // Bearer by the 1.x SDK). The same key would hit; another key would not.
  const ask = async (apiKey, id) => {
    up.load({ turns: [{ reply: { toolCalls: [{ id, name: 'Read', input: { file_path: '/w/a.txt' } }] } }] });
    const client = new Anthropic({ apiKey, baseURL: base, maxRetries: 0 });
    const { response } = await client.messages
      .create({ model: 'm', max_tokens: 10, tools: [readTool], messages: [{ role: 'user', content: 'x' }] })
      .withResponse();
    assert.equal(up.requests.at(-1).headers.authorization, `Bearer ${apiKey}`);
    return response.headers.get('x-toolcache-would-hit');
  };
  assert.equal(await ask('sk-ant-test-1', 'toolu_k1'), '1');
  assert.equal(await ask('sk-ant-someone-else', 'toolu_k2'), '0');
});

test('one key in either header (x-api-key from Claude Code and the 0.x SDKs, Bearer from 1.x) is one principal', async () => {
  const result = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_pk0', content: 'pk contents' }] };
  const history = [{ role: 'user', content: 'read pk' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_pk0', name: 'Read', input: { file_path: '/w/pk.txt' } }] }, result];
  // Recorded from the old wire form, key sk-ant-pk-1.
  up.load({ turns: [] });
  let r = await rawAnthropic({ 'x-api-key': 'sk-ant-pk-1', 'anthropic-version': '2023-06-01' },
    { model: 'm', max_tokens: 5, tools: [readTool], messages: history });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('x-toolcache-recorded'), '1');
  const ask = async (headers) => {
    up.load({ turns: [{ reply: { toolCalls: [{ id: 'toolu_pk1', name: 'Read', input: { file_path: '/w/pk.txt' } }] } }] });
    const x = await rawAnthropic(headers, { model: 'm', max_tokens: 5, tools: [readTool], messages: [{ role: 'user', content: 'again' }] });
    return x.headers.get('x-toolcache-would-hit');
  };
  // The same key from the 1.x SDK (authorization: Bearer, 2026-10-21).
  up.load({ turns: [{ reply: { toolCalls: [{ id: 'toolu_pk2', name: 'Read', input: { file_path: '/w/pk.txt' } }] } }] });
  const client = new Anthropic({ apiKey: 'sk-ant-pk-1', baseURL: base, maxRetries: 0 });
  const { response } = await client.messages
    .create({ model: 'm', max_tokens: 5, tools: [readTool], messages: [{ role: 'user', content: 'again' }] }).withResponse();
  assert.equal(up.requests.at(-1).headers.authorization, 'Bearer sk-ant-pk-1');
  assert.equal(response.headers.get('x-toolcache-would-hit'), '1');
  assert.equal(await ask({ authorization: 'bearer sk-ant-pk-1', 'anthropic-version': '2026-10-21' }), '1');
  // Other keys, the key without the Bearer scheme, and a second header
  // beside it (the API then authenticates with x-api-key) are not it.
  assert.equal(await ask({ authorization: 'Bearer sk-ant-pk-2', 'anthropic-version': '2026-10-21' }), '0');
  assert.equal(await ask({ authorization: 'sk-ant-pk-1', 'anthropic-version': '2026-10-21' }), '0');
  assert.equal(await ask({ 'x-api-key': 'sk-ant-pk-2', authorization: 'Bearer sk-ant-pk-1', 'anthropic-version': '2026-10-21' }), '0');
  assert.equal(await ask({ 'x-api-key': 'sk-ant-pk-1', authorization: 'Bearer sk-ant-pk-1', 'anthropic-version': '2026-10-21' }), '0');
  // OpenAI's Bearer is its own: the same bytes on the Chat route are not
  // the Anthropic key's principal.
  up.load({ turns: [{ reply: { toolCalls: [{ id: 'call_pk', name: 'Read', input: { file_path: '/w/pk.txt' } }] } }] });
  const oa = new OpenAI({ apiKey: 'sk-ant-pk-1', baseURL: `${base}/v1`, maxRetries: 0 });
  const chat = await oa.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }],
    tools: [{ type: 'function', function: { name: 'Read', parameters: readTool.input_schema } }] }).withResponse();
  assert.equal(chat.response.headers.get('x-toolcache-would-hit'), '0');
});

test('OpenAI Chat Completions, streamed and not, with tool messages', async () => {
  const weather = { type: 'function', function: { name: 'get_weather', description: 'Get the current weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } } } } };
  const client = new OpenAI({ apiKey: 'sk-oa-test', baseURL: `${base}/v1`, maxRetries: 0 });
  for (const stream of [false, true]) {
    up.load({ turns: [
      { reply: { toolCalls: [{ id: `call_${stream}_1`, name: 'lookup_docs', input: { topic: `caching-${stream}` } }] } },
      { reply: { toolCalls: [{ id: `call_${stream}_2`, name: 'lookup_docs', input: { topic: `caching-${stream}` } }] } },
      { reply: { text: 'ok' } },
    ] });
    const tools = [weather, { type: 'function', function: { name: 'lookup_docs', description: 'Look up documentation pages',
      parameters: { type: 'object', properties: { topic: { type: 'string' } } } } }];
    const messages = [{ role: 'user', content: 'docs please' }];
    const hits = [];
    for (let i = 0; i < 3; ++i) {
      let message;
      if (stream) {
        const s = client.chat.completions.stream({ model: 'gpt-test', messages, tools, stream_options: { include_usage: true } });
        message = (await s.finalChatCompletion()).choices[0].message;
        hits.push(null);
      } else {
        const { data, response } = await client.chat.completions.create({ model: 'gpt-test', messages, tools }).withResponse();
        message = data.choices[0].message;
        hits.push(response.headers.get('x-toolcache-would-hit'));
      }
      messages.push(message);
      for (const c of message.tool_calls ?? []) {
        messages.push({ role: 'tool', tool_call_id: c.id, content: `docs about ${JSON.parse(c.function.arguments).topic}` });
      }
      if (!message.tool_calls?.length) break;
    }
    assert.equal(messages.at(-1).content, 'ok');
    if (!stream) assert.deepEqual(hits, ['0', '1', '0']);
  }
  const s = await stats();
  assert.equal(counter(s, 'toolcache_llm_tool_calls_total', { api: 'openai_chat', tool: 'lookup_docs', outcome: 'would_hit' }), 2, 'one per round');
});

test('OpenAI Responses, streamed, function_call items and previous_response_id', async () => {
  up.load({ turns: [
    { reply: { toolCalls: [{ id: 'call_r1', name: 'lookup_docs', input: { topic: 'ttl' } }] } },
    { reply: { toolCalls: [{ id: 'call_r2', name: 'lookup_docs', input: { topic: 'ttl' } }] } },
    { reply: { text: 'fine' } },
  ] });
  const client = new OpenAI({ apiKey: 'sk-oa-resp', baseURL: `${base}/v1`, maxRetries: 0 });
  const tools = [{ type: 'function', name: 'lookup_docs', description: 'Look up documentation pages',
    parameters: { type: 'object', properties: { topic: { type: 'string' } } }, strict: false }];
  const before = await stats();
  let input = 'explain ttl';
  let previous;
  for (let i = 0; i < 3; ++i) {
    const s = client.responses.stream({ model: 'gpt-test', input, tools, previous_response_id: previous });
    const r = await s.finalResponse();
    previous = r.id;
    const calls = r.output.filter((o) => o.type === 'function_call');
    if (calls.length === 0) {
      assert.equal(r.output[0].content[0].text, 'fine');
      break;
    }
    // Only the outputs travel; the proxy pairs them with the calls it saw.
    input = calls.map((c) => ({ type: 'function_call_output', call_id: c.call_id, output: 'ttl docs' }));
  }
  const after = await stats();
  const d = (s, outcome) => counter(s, 'toolcache_llm_tool_calls_total', { api: 'openai_responses', outcome });
  assert.equal(d(after, 'would_hit') - d(before, 'would_hit'), 1);
  const rec = (s) => counter(s, 'toolcache_llm_tool_results_total', { api: 'openai_responses', outcome: 'recorded' });
  assert.equal(rec(after) - rec(before), 1);
});

test('upstream errors pass through with status, shape and retry-after', async () => {
  up.load({ turns: [{ reply: { status: 429, retryAfter: 7, error: { type: 'rate_limit_error', message: 'slow down' } } }] });
  const client = new Anthropic({ apiKey: 'k', baseURL: base, maxRetries: 0 });
  await assert.rejects(
    client.messages.create({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }),
    (e) => {
      assert.equal(e.status, 429);
      assert.equal(e.headers.get('retry-after'), '7');
      assert.equal(e.error.error.type, 'rate_limit_error');
      return true;
    });
});

test('malformed, wrong-typed and too-deep bodies get the provider error shape', async () => {
  const post = (path, body) => fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'k' }, body });
  const before = up.requests.length;
  let r = await post('/v1/messages', '{"model": "m", "messages": [');
  assert.equal(r.status, 400);
  let j = await r.json();
  assert.equal(j.type, 'error');
  assert.equal(j.error.type, 'invalid_request_error');
  r = await post('/v1/chat/completions', '{"model": "m", "messages": {"role": "user"}}');
  assert.equal(r.status, 400);
  j = await r.json();
  assert.equal(j.error.type, 'invalid_request_error');
  assert.match(j.error.message, /messages/);
  r = await post('/v1/responses', `{"model":"m","input":${'['.repeat(1000)}${']'.repeat(1000)}}`);
  assert.equal(r.status, 400);
  assert.match((await r.json()).error.message, /depth/);
  assert.equal(up.requests.length, before, 'nothing unreadable reached the upstream');
});

test('a truncated stream reaches the client as an error and is never observed', async () => {
  up.load({ turns: [{ reply: { toolCalls: [{ id: 'toolu_cut', name: 'Read', input: { file_path: '/w/a.txt' } }] , truncateAfterEvents: 4 } }] });
  const before = await stats();
  const client = new Anthropic({ apiKey: 'sk-ant-test-1', baseURL: base, maxRetries: 0 });
  await assert.rejects(async () => {
    const s = client.messages.stream({ model: 'm', max_tokens: 5, tools: [readTool], messages: [{ role: 'user', content: 'x' }] });
    await s.finalMessage();
  });
  // The proxy sees the end asynchronously; give it a moment.
  await new Promise((r) => setTimeout(r, 200));
  const after = await stats();
  const t = (s) => counter(s, 'toolcache_proxy_streams_total', { api: 'anthropic_messages', outcome: 'truncated' });
  assert.equal(t(after) - t(before), 1);
  const peeks = (s) => s.cache.peeks;
  assert.equal(peeks(after), peeks(before));
});

test('unknown endpoints are forwarded untouched', async () => {
  const body = 'raw bytes \u00e9 not json';
  const r = await fetch(`${base}/v1/files/abc?limit=2&x=%20y`, { method: 'PUT', headers: { 'x-custom': 'kept' }, body });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('x-fake-echo'), '1');
  const j = await r.json();
  assert.deepEqual(j.echo, { method: 'PUT', path: '/v1/files/abc', query: '?limit=2&x=%20y',
    bodySha256: crypto.createHash('sha256').update(body).digest('hex') });
  assert.equal(up.requests.at(-1).headers['x-custom'], 'kept');
});

test('upstream down: 502 in the provider shape, no hang', async () => {
  const dead = await startFakeUpstream();
  const deadUrl = dead.url;
  await dead.close();
  const p = await startProxy(deadUrl);
  try {
    const client = new OpenAI({ apiKey: 'k', baseURL: `${p.url}/v1`, maxRetries: 0 });
    await assert.rejects(client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
      (e) => { assert.equal(e.status, 502); assert.equal(e.error.type, 'server_error'); return true; });
  } finally {
    p.child.kill('SIGTERM');
    await new Promise((r) => p.child.on('exit', r));
  }
});

test('metrics are Prometheus text and credentials never appear in them', async () => {
  const text = await (await fetch(`${base}/metrics`)).text();
  assert.match(text, /# TYPE toolcache_llm_tool_calls_total counter/);
  assert.match(text, /toolcache_proxy_overhead_seconds_bucket\{api="anthropic_messages",phase="request",le="0.001"\}/);
  assert.ok(!text.includes('sk-ant-test'));
  assert.ok(!proxy.log().includes('sk-ant-test'));
  assert.ok(!(JSON.stringify(await stats())).includes('sk-ant-test'));
});
