// The proxy's server-side tool loop (docs/PROXY_SERVE.md) driven by the official
// SDKs over multi-turn sessions against the scripted fake upstream (in
// strict-history mode: it rejects what the provider rejects): repeated
// reads are served without reaching the client's tool runner, the
// upstream sees every hidden turn in a valid, prefix-stable history, and a
// proxy restart (SQLite store) mid-conversation loses nothing.
// Run by tests/e2e_proxy_serve.sh with TOOLCACHE_BIN set.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startFakeUpstream } from './fake_upstream.mjs';
import { spawnListening } from './spawn_proxy.mjs';

const BIN = process.env.TOOLCACHE_BIN;
let up;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tc-serve-'));
const config = path.join(tmp, 'toolcache.yaml');
fs.writeFileSync(config, 'tools:\n  Grep: {requestType: INFORMATIONAL}\nproxy:\n  serve: [Read, Grep]\n');

async function startProxy(extra = [], cfg = config) {
  const started = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', up.url, '--config', cfg, ...extra]);
  return started;
}

async function metric(base, name, labels) {
  const s = await (await fetch(`${base}/toolcache/stats`)).json();
  const fam = s.metrics[name];
  if (!fam) return 0;
  let n = 0;
  for (const series of fam.series) {
    if (Object.entries(labels).every(([k, v]) => series.labels[k] === v)) n += series.value ?? series.count ?? 0;
  }
  return n;
}

before(async () => {
  assert.ok(BIN, 'TOOLCACHE_BIN must name the toolcache binary');
  up = await startFakeUpstream();
});
after(async () => {
  await up.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

// Session 16: the client names its workspace (docs/PROXY.md "Whose
// workspace"); a request without one is never served a client tool.
const WORKSPACE = { 'x-toolcache-workspace': 'serve-test-folder' };
const readTool = { name: 'Read', description: 'Reads a file from the local filesystem.',
  input_schema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] } };
const writeTool = { name: 'Write', description: 'Writes a file to the local filesystem.',
  input_schema: { type: 'object', properties: { file_path: { type: 'string' }, content: { type: 'string' } }, required: ['file_path', 'content'] } };
const files = { '/w/a.txt': 'alpha\nbeta\n', '/w/b.txt': 'gamma\n' };
files['/w/big.txt'] = Array.from({ length: 600 }, (_, i) => `row ${i}${i === 321 ? ' NEEDLE' : ''} the quick brown fox jumps\n`).join('');

// A client agent with the Anthropic SDK: sends, runs the tools it is asked
// for (counting them), and keeps its own history as SDK users do.
class AnthropicAgent {
  constructor(base, key = 'sk-ant-serve', workspace = WORKSPACE) {
    this.client = new Anthropic({ apiKey: key, baseURL: base, maxRetries: 0, defaultHeaders: workspace });
    this.messages = [];
    this.ran = [];
    this.responses = [];
  }
  async say(text, { stream = false } = {}) {
    this.messages.push({ role: 'user', content: text });
    for (let i = 0; i < 8; ++i) {
      let msg, headers = null;
      const req = { model: 'claude-test', max_tokens: 100, tools: [readTool, writeTool], messages: this.messages };
      if (stream) {
        msg = await this.client.messages.stream(req).finalMessage();
      } else {
        const { data, response } = await this.client.messages.create(req).withResponse();
        msg = data;
        headers = response.headers;
      }
      this.responses.push({ msg, headers });
      this.messages.push({ role: 'assistant', content: msg.content });
      const uses = msg.content.filter((b) => b.type === 'tool_use');
      if (uses.length === 0) return msg;
      this.messages.push({ role: 'user', content: uses.map((u) => {
        this.ran.push(u.name + ' ' + u.input.file_path);
        if (u.name === 'Write') { files[u.input.file_path] = u.input.content; return { type: 'tool_result', tool_use_id: u.id, content: 'ok' }; }
        return { type: 'tool_result', tool_use_id: u.id, content: files[u.input.file_path] ?? 'missing' };
      }) });
    }
    throw new Error('too many rounds');
  }
}

const read = (id, file = '/w/a.txt') => ({ id, name: 'Read', input: { file_path: file } });

// A Responses SDK user's tool loop: sends `input`, appends the output, runs
// the function calls (reading `files`), until a response has none (at most
// `turns` requests). The last response, its headers, the tools run.
async function responsesLoop(client, tools, input, turns = 5) {
  const ran = [];
  let last, headers;
  for (let i = 0; i < turns; ++i) {
    const { data, response } = await client.responses.create({ model: 'gpt-test', tools, input }).withResponse();
    last = data; headers = response.headers;
    if (!answerCalls(data.output, input, ran)) break;
  }
  return { last, headers, ran };
}

// Appends a Responses `output` to `input`, then a function_call_output for
// each of its function calls (reading `files`); false when it has none.
function answerCalls(output, input, ran) {
  input.push(...output);
  const calls = output.filter((o) => o.type === 'function_call');
  for (const c of calls) {
    ran.push(c.name);
    input.push({ type: 'function_call_output', call_id: c.call_id, output: files[JSON.parse(c.arguments).file_path] });
  }
  return calls.length > 0;
}

// Asserts request j's messages begin with request i's, byte for byte.
function assertPrefixStable(i, j) {
  const a = up.requests[i].raw, b = up.requests[j].raw;
  const cut = a.lastIndexOf(']');  // the end of request i's messages
  const key = a.includes('"messages"') ? '"messages"' : '"input"';
  assert.ok(a.indexOf(key) > 0);
  assert.equal(b.slice(0, a.indexOf(key)), a.slice(0, a.indexOf(key)));
  const mi = a.slice(a.indexOf(key), cut);
  assert.ok(b.includes(mi), `request ${j} does not extend request ${i}'s messages byte for byte`);
}

test('Anthropic, not streamed: a repeated read is served in the proxy, spliced back next turn', async () => {
  up.load({ strictHistory: true, turns: [
    { name: 'read1', reply: { text: 'Reading.', toolCalls: [read('toolu_s1')] } },
    { name: 'read2', reply: { toolCalls: [read('toolu_s2')] } },
    { name: 'read3', reply: { toolCalls: [read('toolu_s3')] } },
    { name: 'end', reply: { text: 'Both reads agree.' } },
    { name: 'next', reply: { text: 'You are welcome.' } },
  ] });
  const proxy = await startProxy();
  try {
    const agent = new AnthropicAgent(proxy.url);
    const final = await agent.say('read a.txt three times');
    assert.equal(final.content[0].text, 'Both reads agree.');
    // The client's tool runner ran the first read only.
    assert.deepEqual(agent.ran, ['Read /w/a.txt']);
    assert.equal(agent.responses.length, 2);
    const h = agent.responses[1].headers;
    assert.equal(h.get('x-toolcache-served-calls'), '2');
    assert.equal(h.get('x-toolcache-hidden-rounds'), '2');
    // The upstream saw every hidden turn, each result paired with its call.
    assert.equal(up.requests.length, 4);
    for (const r of up.requests) assert.equal(r.rejected, undefined);
    const m3 = up.requests[3].body.messages;
    assert.equal(m3.length, 7);
    assert.equal(m3[3].content[0].id, 'toolu_s2');
    assert.equal(m3[4].content[0].tool_use_id, 'toolu_s2');
    assert.equal(m3[4].content[0].content, 'alpha\nbeta\n');
    assert.equal(m3[6].content[0].tool_use_id, 'toolu_s3');
    assertPrefixStable(2, 3);
    // usage: the sum over the upstream calls behind the client's response.
    const u = (i) => up.requests[i].reply.usage;
    assert.equal(final.usage.input_tokens, u(1).input_tokens + u(2).input_tokens + u(3).input_tokens);
    assert.equal(final.usage.output_tokens, u(1).output_tokens + u(2).output_tokens + u(3).output_tokens);
    // The next turn: the hidden turns are spliced back where they belong.
    await agent.say('thanks');
    assert.equal(up.requests.length, 5);
    const m4 = up.requests[4].body.messages;
    assert.equal(up.requests[4].rejected, undefined);
    assert.equal(m4.length, 9);
    assert.equal(m4[7].content[0].text, 'Both reads agree.');
    assertPrefixStable(3, 4);
    assert.equal(await metric(proxy.url, 'toolcache_llm_served_total', { tool: 'Read' }), 2);
    assert.equal(await metric(proxy.url, 'toolcache_llm_splice_total', { outcome: 'spliced' }), 1);
  } finally {
    await proxy.stop();
  }
});

// Session 16 (wsO): one API key, two workspaces (folders or containers) and
// a client that names none: a Read recorded in one is served to none of the
// others; each client runs its own.
test('one key, other workspace or none: a client tool is not served', async () => {
  up.load({ turns: [
    { reply: { toolCalls: [read('toolu_ws1')] } },
    { reply: { text: 'A read it.' } },
    { reply: { toolCalls: [read('toolu_ws2')] } },
    { reply: { text: 'B read it.' } },
    { reply: { toolCalls: [read('toolu_ws3')] } },
    { reply: { text: 'N read it.' } },
  ] });
  const proxy = await startProxy();
  try {
    const a = new AnthropicAgent(proxy.url, 'sk-ant-ws', { 'x-toolcache-workspace': 'folder-a' });
    const b = new AnthropicAgent(proxy.url, 'sk-ant-ws', { 'x-toolcache-workspace': 'folder-b' });
    const none = new AnthropicAgent(proxy.url, 'sk-ant-ws', {});
    assert.equal((await a.say('read a.txt')).content[0].text, 'A read it.');
    assert.equal((await b.say('read a.txt')).content[0].text, 'B read it.');
    assert.equal((await none.say('read a.txt')).content[0].text, 'N read it.');
    for (const agent of [a, b, none]) assert.deepEqual(agent.ran, ['Read /w/a.txt']);
    // The header names the workspace to the proxy only.
    for (const r of up.requests) assert.equal(r.headers['x-toolcache-workspace'], undefined);
    assert.equal(await metric(proxy.url, 'toolcache_llm_served_total', { tool: 'Read' }), 0);
  } finally {
    await proxy.stop();
  }
});

test('a write in the conversation invalidates: the next read goes to the client', async () => {
  up.load({ strictHistory: true, turns: [
    { reply: { toolCalls: [read('toolu_w1', '/w/b.txt')] } },
    { reply: { toolCalls: [{ id: 'toolu_w2', name: 'Write', input: { file_path: '/w/b.txt', content: 'delta\n' } }] } },
    { reply: { toolCalls: [read('toolu_w3', '/w/b.txt')] } },
    { reply: { text: 'b is delta now.' } },
  ] });
  const proxy = await startProxy();
  try {
    const agent = new AnthropicAgent(proxy.url);
    await agent.say('read b, write b, read b');
    assert.deepEqual(agent.ran, ['Read /w/b.txt', 'Write /w/b.txt', 'Read /w/b.txt']);
    // The client's runner answered the second read with the new content.
    assert.equal(up.requests[3].body.messages.at(-1).content[0].content, 'delta\n');
  } finally {
    await proxy.stop();
  }
});

test('a partial turn (one hit, one miss) goes to the client whole', async () => {
  up.load({ strictHistory: true, turns: [
    { reply: { toolCalls: [read('toolu_p1')] } },
    { reply: { toolCalls: [read('toolu_p2'), read('toolu_p3', '/w/c.txt')] } },
    { reply: { text: 'done' } },
  ] });
  const proxy = await startProxy();
  try {
    const agent = new AnthropicAgent(proxy.url, 'sk-ant-partial');
    await agent.say('read a and c');
    assert.deepEqual(agent.ran, ['Read /w/a.txt', 'Read /w/a.txt', 'Read /w/c.txt']);
    for (const r of up.requests) assert.equal(r.rejected, undefined);
  } finally {
    await proxy.stop();
  }
});

test('a proxy restart mid-conversation (SQLite store) loses nothing', async () => {
  const db = path.join(tmp, 'state.db');
  up.load({ strictHistory: true, turns: [
    { reply: { toolCalls: [read('toolu_r1')] } },
    { reply: { toolCalls: [read('toolu_r2')] } },
    { reply: { text: 'Read twice.' } },
    { reply: { toolCalls: [read('toolu_r3')] } },
    { reply: { text: 'Read again, still alpha.' } },
  ] });
  let proxy = await startProxy(['--store', `sqlite:${db}`]);
  const agent = new AnthropicAgent(proxy.url, 'sk-ant-restart');
  try {
    await agent.say('read a twice');
    assert.deepEqual(agent.ran, ['Read /w/a.txt']);
  } finally {
    await proxy.stop();
  }
  proxy = await startProxy(['--store', `sqlite:${db}`]);
  try {
    agent.client = new Anthropic({ apiKey: 'sk-ant-restart', baseURL: proxy.url, maxRetries: 0, defaultHeaders: WORKSPACE });
    await agent.say('and once more');
    // The new process spliced the hidden turn back and served the third
    // read from the entry the first process stored.
    assert.deepEqual(agent.ran, ['Read /w/a.txt']);
    assert.equal(up.requests.length, 5);
    assert.equal(up.requests[3].body.messages.length, 7);
    assertPrefixStable(2, 3);
    assertPrefixStable(3, 4);
    for (const r of up.requests) assert.equal(r.rejected, undefined);
  } finally {
    await proxy.stop();
  }
});

test('state gone: the request is forwarded as sent, never rejected', async () => {
  up.load({ turns: [
    { reply: { toolCalls: [read('toolu_g1')] } },
    { reply: { toolCalls: [read('toolu_g2')] } },
    { reply: { text: 'ok' } },
    { reply: { text: 'still ok' } },
  ] });
  let proxy = await startProxy();
  const agent = new AnthropicAgent(proxy.url, 'sk-ant-gone');
  try {
    await agent.say('read a twice');
  } finally {
    await proxy.stop();
  }
  proxy = await startProxy();  // memory store: the state is gone
  try {
    agent.client = new Anthropic({ apiKey: 'sk-ant-gone', baseURL: proxy.url, maxRetries: 0, defaultHeaders: WORKSPACE });
    const msg = await agent.say('next');
    assert.equal(msg.content[0].text, 'still ok');
    assert.equal(up.requests[3].bodySha256.length, 64);
    assert.equal(up.requests[3].body.messages.length, agent.messages.length - 1);
  } finally {
    await proxy.stop();
  }
});

test('a streamed request after a served turn gets the hidden turns spliced back', async () => {
  up.load({ strictHistory: true, turns: [
    { reply: { toolCalls: [read('toolu_t1')] } },
    { reply: { toolCalls: [read('toolu_t2')] } },
    { reply: { text: 'same' } },
    { reply: { text: 'streamed answer' } },
  ] });
  const proxy = await startProxy();
  try {
    const agent = new AnthropicAgent(proxy.url, 'sk-ant-stream');
    await agent.say('read a twice');
    const msg = await agent.say('and stream now', { stream: true });
    assert.equal(msg.content[0].text, 'streamed answer');
    assert.equal(up.requests[3].rejected, undefined);
    assert.equal(up.requests[3].body.messages.length, 7);
    assertPrefixStable(2, 3);
  } finally {
    await proxy.stop();
  }
});

test('OpenAI Chat Completions, not streamed: served and spliced', async () => {
  up.load({ strictHistory: true, turns: [
    { reply: { toolCalls: [read('call_c1')] } },
    { reply: { toolCalls: [read('call_c2')] } },
    { reply: { text: 'chat: same twice' } },
    { reply: { text: 'chat: bye' } },
  ] });
  const proxy = await startProxy();
  try {
    const client = new OpenAI({ apiKey: 'sk-openai-serve', baseURL: `${proxy.url}/v1`, maxRetries: 0, defaultHeaders: WORKSPACE });
    const tools = [{ type: 'function', function: { name: 'Read', parameters: readTool.input_schema } }];
    const messages = [{ role: 'user', content: 'read a twice' }];
    const ran = [];
    let last, headers;
    for (let i = 0; i < 5; ++i) {
      const { data, response } = await client.chat.completions.create({ model: 'gpt-test', tools, messages }).withResponse();
      last = data; headers = response.headers;
      const m = data.choices[0].message;
      messages.push(m);
      if (!m.tool_calls?.length) break;
      for (const c of m.tool_calls) {
        ran.push(c.function.name);
        messages.push({ role: 'tool', tool_call_id: c.id, content: files[JSON.parse(c.function.arguments).file_path] });
      }
    }
    assert.deepEqual(ran, ['Read']);
    assert.equal(last.choices[0].message.content, 'chat: same twice');
    assert.equal(headers.get('x-toolcache-served-calls'), '1');
    const u = (i) => up.requests[i].reply.usage;
    assert.equal(last.usage.prompt_tokens, u(1).prompt_tokens + u(2).prompt_tokens);
    const m2 = up.requests[2].body.messages;
    assert.equal(m2.length, 5);
    assert.equal(m2[4].role, 'tool');
    assert.equal(m2[4].tool_call_id, 'call_c2');
    assert.equal(m2[4].content, 'alpha\nbeta\n');
    messages.push({ role: 'user', content: 'bye' });
    await client.chat.completions.create({ model: 'gpt-test', tools, messages });
    assert.equal(up.requests[3].rejected, undefined);
    assert.equal(up.requests[3].body.messages.length, 7);
    assertPrefixStable(2, 3);
  } finally {
    await proxy.stop();
  }
});

// Offload tests: a config with serve and offload on, big.txt, its reference,
// and the script's first three turns: the model reads big.txt (call `id1`),
// then calls toolcache_read for the NEEDLE line (`id2`), then answers.
const offloadConfig = path.join(tmp, 'offload.yaml');
fs.writeFileSync(offloadConfig, 'proxy:\n  serve: [Read]\n  offload: true\n  offloadTokens: 2000\n');
const big = files['/w/big.txt'];
const bigRef = 'tc_' + crypto.createHash('sha256').update(big).digest('hex').slice(0, 16);
const needleTurns = (id1, id2) => [
  { reply: { toolCalls: [read(id1, '/w/big.txt')] } },
  { reply: { toolCalls: [{ id: id2, name: 'toolcache_read', input: { ref: bigRef, pattern: 'NEEDLE' } }] } },
  { reply: { text: 'found it on row 321' } },
];

test('offload: an oversized result becomes a preview, toolcache_read is answered in the proxy', async () => {
  up.load({ strictHistory: true, turns: [...needleTurns('toolu_o1', 'toolu_o2'), { reply: { text: 'bye' } }] });
  const proxy = await startProxy([], offloadConfig);
  try {
    const agent = new AnthropicAgent(proxy.url, 'sk-ant-offload');
    const msg = await agent.say('find the needle in big.txt');
    assert.equal(msg.content[0].text, 'found it on row 321');
    // The retrieval call never reached the client.
    assert.deepEqual(agent.ran, ['Read /w/big.txt']);
    // The tool is there from the first request on, last, the same bytes.
    const last = (i) => up.requests[i].body.tools.at(-1);
    assert.equal(last(0).name, 'toolcache_read');
    assert.deepEqual(last(1), last(0));
    // The upstream got the preview, not the 25 KB result.
    const preview = up.requests[1].body.messages[2].content[0].content;
    assert.ok(big.length > 20000);
    assert.ok(preview.length < 3000, `preview of ${preview.length} bytes`);
    assert.ok(preview.includes(bigRef) && preview.startsWith('[toolcache: this tool result was offloaded'));
    assert.ok(up.requests[1].bodyBytes < 6000);
    // The proxy answered the retrieval with the matching line.
    const answer = up.requests[2].body.messages.at(-1).content[0];
    assert.equal(answer.tool_use_id, 'toolu_o2');
    assert.equal(answer.content, '322: row 321 NEEDLE the quick brown fox jumps\n');
    for (const r of up.requests) assert.equal(r.rejected, undefined);
    // The next turn: the same preview bytes (prefix-stable) and the hidden
    // retrieval spliced back.
    await agent.say('thanks');
    assert.equal(up.requests[3].body.messages.length, 7);
    assertPrefixStable(1, 2);
    assertPrefixStable(2, 3);
    assert.equal(await metric(proxy.url, 'toolcache_llm_offload_total', { what: 'offloaded' }), 1);
    // The log says so, once (the later requests reuse the preview).
    assert.equal(proxy.log().match(/anthropic_messages: offloaded 1 oversized tool result\(s\)/g)?.length, 1, proxy.log());
  } finally {
    await proxy.stop();
  }
});

test('offload, OpenAI Responses: the flat tool with strict false, a preview in the output, toolcache_read answered; previous_response_id untouched', async () => {
  up.load({ strictHistory: true, turns: [...needleTurns('call_o1', 'call_o2'),
    { reply: { toolCalls: [read('call_o3', '/w/big.txt')] } },
    { reply: { text: 'read again' } },
  ] });
  const proxy = await startProxy([], offloadConfig);
  try {
    const client = new OpenAI({ apiKey: 'sk-openai-offload', baseURL: `${proxy.url}/v1`, maxRetries: 0, defaultHeaders: WORKSPACE });
    const tools = [{ type: 'function', name: 'Read', parameters: readTool.input_schema, strict: false }];
    const input = [{ role: 'user', content: 'find the needle in big.txt' }];
    const { last, ran } = await responsesLoop(client, tools, input);
    assert.equal(last.output_text, 'found it on row 321');
    // The retrieval call never reached the client.
    assert.deepEqual(ran, ['Read']);
    // The tool: Responses' flat shape, not strict (Responses defaults to
    // strict), last, the same bytes in every request.
    const tool = (i) => up.requests[i].body.tools.at(-1);
    assert.deepEqual(Object.keys(tool(0)).sort(), ['description', 'name', 'parameters', 'strict', 'type']);
    assert.equal(tool(0).name, 'toolcache_read');
    assert.equal(tool(0).strict, false);
    assert.deepEqual(tool(1), tool(0));
    // The upstream got the preview as the output, not the 25 KB result.
    const out = up.requests[1].body.input[2];
    assert.equal(out.type, 'function_call_output');
    assert.ok(out.output.length < 3000 && out.output.includes(bigRef), `output of ${out.output.length} bytes`);
    assert.ok(up.requests[1].bodyBytes < 6000);
    // The proxy answered the retrieval with the matching line.
    const answer = up.requests[2].body.input.at(-1);
    assert.equal(answer.call_id, 'call_o2');
    assert.equal(answer.output, '322: row 321 NEEDLE the quick brown fox jumps\n');
    for (const r of up.requests) assert.equal(r.rejected, undefined);
    assert.equal(await metric(proxy.url, 'toolcache_llm_offload_total', { api: 'openai_responses', what: 'offloaded' }), 1);
    // State the provider holds (previous_response_id): the loop cannot
    // answer toolcache_read there, so nothing is added or offloaded.
    const r4 = await client.responses.create({ model: 'gpt-test', tools, previous_response_id: last.id,
      input: [{ role: 'user', content: 'read it again' }] });
    const c4 = r4.output.find((o) => o.type === 'function_call');
    const r5 = await client.responses.create({ model: 'gpt-test', tools, previous_response_id: r4.id,
      input: [{ type: 'function_call_output', call_id: c4.call_id, output: big }] });
    assert.equal(r5.output_text, 'read again');
    assert.equal(up.requests.length, 5);
    assert.deepEqual(up.requests[3].body.tools, tools);
    assert.deepEqual(up.requests[4].body.tools, tools);
    assert.equal(up.requests[4].body.input[0].output, big);
  } finally {
    await proxy.stop();
  }
});

test('Anthropic, streamed: a repeated read is served inside one well-formed client stream', async () => {
  up.load({ strictHistory: true, turns: [
    { reply: { text: 'Reading.', toolCalls: [read('toolu_x1')] } },
    { reply: { text: 'Again.', toolCalls: [read('toolu_x2')] } },
    { reply: { text: 'Same.' } },
    { reply: { text: 'Bye.' } },
  ] });
  const proxy = await startProxy();
  try {
    const agent = new AnthropicAgent(proxy.url, 'sk-ant-sserve');
    const msg = await agent.say('read a twice, streaming', { stream: true });
    assert.deepEqual(agent.ran, ['Read /w/a.txt']);
    // One message: the text of the hidden round, then the final text; the
    // served tool_use never reached the client.
    assert.deepEqual(msg.content.map((b) => b.text), ['Again.', 'Same.']);
    assert.equal(msg.stop_reason, 'end_turn');
    const u = (i) => up.requests[i].reply.usage;
    assert.equal(msg.usage.input_tokens, u(1).input_tokens + u(2).input_tokens);
    assert.equal(msg.usage.output_tokens, u(1).output_tokens + u(2).output_tokens);
    // The next request gets the hidden turn back and, in place of the
    // client's two-round message, the upstream's own last message.
    await agent.say('bye', { stream: true });
    const m = up.requests[3].body.messages;
    assert.equal(up.requests[3].rejected, undefined);
    assert.equal(m.length, 7);
    assert.equal(m[3].content[1].id, 'toolu_x2');
    assert.deepEqual(m[5].content.map((b) => b.text), ['Same.']);
    assertPrefixStable(2, 3);
    assert.equal(await metric(proxy.url, 'toolcache_llm_served_total', { tool: 'Read' }), 1);
  } finally {
    await proxy.stop();
  }
});

test('OpenAI Chat Completions, streamed: served inside one well-formed client stream', async () => {
  up.load({ strictHistory: true, turns: [
    { reply: { text: 'Reading.', toolCalls: [read('call_k1')] } },
    { reply: { text: 'Again.', toolCalls: [read('call_k2')] } },
    { reply: { text: 'Same.' } },
    { reply: { text: 'Bye.' } },
  ] });
  const proxy = await startProxy();
  try {
    const client = new OpenAI({ apiKey: 'sk-openai-sserve', baseURL: `${proxy.url}/v1`, maxRetries: 0, defaultHeaders: WORKSPACE });
    const tools = [{ type: 'function', function: { name: 'Read', parameters: readTool.input_schema } }];
    const messages = [{ role: 'user', content: 'read a twice, streaming' }];
    const ran = [];
    const streams = [];
    for (let i = 0; i < 5; ++i) {
      const chunks = [];
      const s = await client.chat.completions.create({ model: 'gpt-test', tools, messages, stream: true,
        stream_options: { include_usage: true } });
      for await (const c of s) chunks.push(c);
      streams.push(chunks);
      // Assembled as SDK users do (content concatenated, tool calls by index).
      const m = { role: 'assistant', content: '' };
      for (const c of chunks) for (const ch of c.choices) {
        m.content += ch.delta.content ?? '';
        for (const t of ch.delta.tool_calls ?? []) {
          m.tool_calls ??= [];
          const k = (m.tool_calls[t.index] ??= { id: t.id, type: 'function', function: { name: '', arguments: '' } });
          k.function.name += t.function?.name ?? '';
          k.function.arguments += t.function?.arguments ?? '';
        }
      }
      messages.push(m);
      if (!m.tool_calls?.length) break;
      for (const c of m.tool_calls) {
        ran.push(c.function.name);
        messages.push({ role: 'tool', tool_call_id: c.id, content: files[JSON.parse(c.function.arguments).file_path] });
      }
    }
    assert.deepEqual(ran, ['Read']);
    assert.equal(streams.length, 2);
    const chunks = streams[1];
    // One completion: one id, one role delta, no tool call, one
    // finish_reason, the usage chunk last, summed over the hidden round.
    assert.equal(new Set(chunks.map((c) => c.id)).size, 1);
    assert.equal(chunks.filter((c) => c.choices[0]?.delta.role).length, 1);
    assert.ok(chunks.every((c) => !c.choices[0]?.delta.tool_calls));
    assert.deepEqual(chunks.flatMap((c) => c.choices.map((x) => x.finish_reason)).filter(Boolean), ['stop']);
    assert.equal(messages.at(-1).content, 'Again.Same.');
    const usage = chunks.at(-1).usage;
    assert.equal(chunks.at(-1).choices.length, 0);
    const u = (i) => up.requests[i].reply.usage;
    assert.equal(usage.prompt_tokens, u(1).prompt_tokens + u(2).prompt_tokens);
    assert.equal(usage.completion_tokens, u(1).completion_tokens + u(2).completion_tokens);
    // The upstream saw the hidden turn paired by id.
    const m2 = up.requests[2].body.messages;
    assert.equal(up.requests[2].rejected, undefined);
    assert.equal(m2[3].tool_calls[0].id, 'call_k2');
    assert.equal(m2[4].tool_call_id, 'call_k2');
    assert.equal(m2[4].content, 'alpha\nbeta\n');
    // The next turn (the SDK's stream helper): the hidden turn spliced back
    // and the upstream's own last message in place of the client's.
    messages.push({ role: 'user', content: 'bye' });
    const final = await client.chat.completions.stream({ model: 'gpt-test', tools, messages }).finalChatCompletion();
    assert.equal(final.choices[0].message.content, 'Bye.');
    const m3 = up.requests[3].body.messages;
    assert.equal(up.requests[3].rejected, undefined);
    assert.equal(m3.length, 7);
    assert.equal(m3[5].content, 'Same.');
    assertPrefixStable(2, 3);
    assert.equal(await metric(proxy.url, 'toolcache_llm_served_total', { api: 'openai_chat', tool: 'Read' }), 1);
  } finally {
    await proxy.stop();
  }
});

test('OpenAI Responses, not streamed: served and spliced by call_id; previous_response_id bypasses', async () => {
  up.load({ strictHistory: true, turns: [
    { reply: { toolCalls: [read('call_q1')] } },
    { reply: { toolCalls: [read('call_q2')] } },
    { reply: { text: 'responses: same twice' } },
    { reply: { text: 'responses: bye' } },
    { reply: { toolCalls: [read('call_q3')] } },
    { reply: { text: 'after' } },
  ] });
  const proxy = await startProxy();
  try {
    const client = new OpenAI({ apiKey: 'sk-openai-responses', baseURL: `${proxy.url}/v1`, maxRetries: 0, defaultHeaders: WORKSPACE });
    const tools = [{ type: 'function', name: 'Read', parameters: readTool.input_schema }];
    const input = [{ role: 'user', content: 'read a twice' }];
    const { last, headers, ran } = await responsesLoop(client, tools, input);
    assert.deepEqual(ran, ['Read']);
    assert.equal(last.output_text, 'responses: same twice');
    assert.equal(headers.get('x-toolcache-served-calls'), '1');
    const u = (i) => up.requests[i].reply.usage;
    assert.equal(last.usage.input_tokens, u(1).input_tokens + u(2).input_tokens);
    const in2 = up.requests[2].body.input;
    assert.equal(up.requests[2].rejected, undefined);
    assert.equal(in2.length, 5);
    assert.equal(in2[3].call_id, 'call_q2');
    assert.equal(in2[4].type, 'function_call_output');
    assert.equal(in2[4].call_id, 'call_q2');
    assert.equal(in2[4].output, 'alpha\nbeta\n');
    input.push({ role: 'user', content: 'bye' });
    await client.responses.create({ model: 'gpt-test', tools, input });
    assert.equal(up.requests[3].rejected, undefined);
    assert.equal(up.requests[3].body.input.length, 7);
    assertPrefixStable(2, 3);
    // State held by the provider: the proxy cannot splice into it, so a
    // hit is not served but goes to the client, counted with its reason.
    const r5 = await client.responses.create({ model: 'gpt-test', tools, previous_response_id: last.id,
      input: [{ role: 'user', content: 'read a again' }] });
    assert.equal(r5.output[0].call_id, 'call_q3');
    assert.equal(await metric(proxy.url, 'toolcache_llm_splice_total', { outcome: 'bypass_previous_response_id' }), 1);
    assert.equal(await metric(proxy.url, 'toolcache_llm_served_total', { api: 'openai_responses' }), 1);
  } finally {
    await proxy.stop();
  }
});

test('OpenAI Responses, streamed: served inside one well-formed event stream, spliced next turn', async () => {
  up.load({ strictHistory: true, turns: [
    { reply: { toolCalls: [read('call_r1')] } },
    { reply: { reasoning: 'Check again.', text: 'Again.', toolCalls: [read('call_r2')] } },
    { reply: { text: 'Same.' } },
    { reply: { text: 'Bye.' } },
  ] });
  const proxy = await startProxy();
  try {
    const client = new OpenAI({ apiKey: 'sk-openai-rstream', baseURL: `${proxy.url}/v1`, maxRetries: 0, defaultHeaders: WORKSPACE });
    const tools = [{ type: 'function', name: 'Read', parameters: readTool.input_schema }];
    const input = [{ role: 'user', content: 'read a twice, streaming' }];
    const ran = [];
    const streams = [];
    let final;
    for (let i = 0; i < 5; ++i) {
      // The SDK's stream helper: it rebuilds the response from the events
      // (and throws on an output_index it has no item for).
      const s = client.responses.stream({ model: 'gpt-test', tools, input });
      const events = [];
      s.on('event', (e) => events.push(e));
      final = await s.finalResponse();
      streams.push(events);
      if (!answerCalls(final.output, input, ran)) break;
    }
    // The repeated read was answered in the proxy: the client ran one, the
    // upstream got three requests for the client's two.
    assert.deepEqual(ran, ['Read']);
    assert.equal(streams.length, 2);
    assert.equal(up.requests.length, 3);
    const events = streams[1];
    // One response: dense sequence numbers from 0, one created, one
    // completed (last), dense output indexes, no served call visible.
    assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
    assert.equal(events.filter((e) => e.type === 'response.created').length, 1);
    assert.equal(events.filter((e) => e.type === 'response.completed').length, 1);
    assert.equal(events.at(-1).type, 'response.completed');
    assert.deepEqual(events.filter((e) => e.type === 'response.output_item.added').map((e) => e.output_index), [0, 1, 2]);
    assert.ok(events.every((e) => e.item?.type !== 'function_call'));
    assert.ok(!JSON.stringify(events).includes('call_r2'));
    // The assembled response: round 1's id, every item shown, usage summed.
    assert.equal(final.id, events[0].response.id);
    assert.equal(final.id, up.requests[1].reply.id);
    assert.notEqual(up.requests[2].reply.id, final.id);
    assert.equal(final.model, up.requests[1].reply.model);
    assert.deepEqual(final.output.map((o) => o.type), ['reasoning', 'message', 'message']);
    assert.equal(final.output[0].summary[0].text, 'Check again.');
    assert.equal(final.output.filter((o) => o.type === 'message').map((o) => o.content[0].text).join(''), 'Again.Same.');
    assert.equal(final.status, 'completed');
    const u = (i) => up.requests[i].reply.usage;
    assert.equal(final.usage.input_tokens, u(1).input_tokens + u(2).input_tokens);
    assert.equal(final.usage.output_tokens, u(1).output_tokens + u(2).output_tokens);
    assert.equal(final.usage.total_tokens, u(1).total_tokens + u(2).total_tokens);
    // The hidden round went upstream paired by call_id.
    const in2 = up.requests[2].body.input;
    assert.equal(up.requests[2].rejected, undefined);
    assert.deepEqual(in2.map((x) => x.type ?? x.role), ['user', 'function_call', 'function_call_output',
      'reasoning', 'message', 'function_call', 'function_call_output']);
    assert.equal(in2[5].call_id, 'call_r2');
    assert.equal(in2[6].call_id, 'call_r2');
    assert.equal(in2[6].output, 'alpha\nbeta\n');
    // The next turn (responses.create with stream: true): the client's three
    // items of the response are replaced by the upstream's own five.
    input.push({ role: 'user', content: 'bye' });
    const s4 = await client.responses.create({ model: 'gpt-test', tools, input, stream: true });
    let text = '';
    for await (const e of s4) if (e.type === 'response.output_text.delta') text += e.delta;
    assert.equal(text, 'Bye.');
    assert.equal(up.requests.length, 4);
    const in3 = up.requests[3].body.input;
    assert.equal(up.requests[3].rejected, undefined);
    assert.deepEqual(in3.map((x) => x.type ?? x.role), ['user', 'function_call', 'function_call_output',
      'reasoning', 'message', 'function_call', 'function_call_output', 'message', 'user']);
    assert.equal(in3[7].content[0].text, 'Same.');
    assertPrefixStable(2, 3);
    assert.equal(await metric(proxy.url, 'toolcache_llm_served_total', { api: 'openai_responses', tool: 'Read' }), 1);
    assert.equal(await metric(proxy.url, 'toolcache_llm_splice_total', { api: 'openai_responses', outcome: 'spliced' }), 1);
  } finally {
    await proxy.stop();
  }
});

test('API 2026-10-21: a recorded result with citations is not served to it (the version refuses them in user messages); 2023-06-01 is', async () => {
  const cited = [{ type: 'search_result', source: 'https://x/cited', title: 'cited', content: [{ type: 'text', text: 'cited text',
    citations: [{ type: 'char_location', cited_text: 'c', document_index: 0, start_char_index: 0, end_char_index: 1 }] }] }];
  const history = (id) => [{ role: 'user', content: 'read cited' },
    { role: 'assistant', content: [{ type: 'tool_use', id, name: 'Read', input: { file_path: '/w/cited.txt' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: cited }] }];
  const old = (proxy, body) => fetch(`${proxy.url}/v1/messages`, { method: 'POST', body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-cite', 'anthropic-version': '2023-06-01', ...WORKSPACE } });
  const proxy = await startProxy();
  try {
    // Claude Code / a 0.x SDK (2023-06-01) ran Read and sent the result.
    up.load({ strictHistory: true, turns: [] });
    let r = await old(proxy, { model: 'claude-test', max_tokens: 10, tools: [readTool], messages: history('toolu_c0') });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('x-toolcache-recorded'), '1');
    // A 2023-06-01 request is served the same result in a hidden round.
    up.load({ strictHistory: true, turns: [{ reply: { toolCalls: [read('toolu_c2', '/w/cited.txt')] } }, { reply: { text: 'served' } }] });
    const r2 = await old(proxy, { model: 'claude-test', max_tokens: 10, tools: [readTool], messages: [{ role: 'user', content: 'again' }] });
    assert.equal(r2.status, 200);
    assert.equal((await r2.json()).content[0].text, 'served');
    assert.equal(r2.headers.get('x-toolcache-hidden-rounds'), '1');
    assert.equal(up.requests.length, 2);
    assert.equal(up.requests[1].rejected, undefined);
    assert.equal(up.requests[1].version, '2023-06-01');
    assert.deepEqual(up.requests[1].body.messages.at(-1).content[0].content, cited);
    // The same key with the 1.x SDK (2026-10-21): the read is a hit, but
    // the hidden turn would be refused: the client runs Read itself.
    up.load({ strictHistory: true, turns: [{ reply: { toolCalls: [read('toolu_c1', '/w/cited.txt')] } }, { reply: { text: 'done' } }] });
    const agent = new AnthropicAgent(proxy.url, 'sk-ant-cite');
    files['/w/cited.txt'] = 'cited text';
    const end = await agent.say('read cited');
    assert.equal(end.content[0].text, 'done');
    assert.deepEqual(agent.ran, ['Read /w/cited.txt']);
    assert.equal(agent.responses[0].headers.get('x-toolcache-hidden-rounds'), '0');
    assert.deepEqual(up.requests.map((q) => q.rejected ?? null), [null, null]);  // no 400
    assert.equal(up.requests[0].version, '2026-10-21');
  } finally {
    await proxy.stop();
  }
});

test('OpenAI Responses, streamed: a hidden round answered 500 ends the client stream with an error event', async () => {
  up.load({ strictHistory: true, turns: [
    { reply: { toolCalls: [read('call_x1')] } },
    { reply: { text: 'Again.', toolCalls: [read('call_x2')] } },
    { reply: { status: 500, error: { message: 'upstream broke' } } },
  ] });
  const proxy = await startProxy();
  try {
    const client = new OpenAI({ apiKey: 'sk-openai-rstream-err', baseURL: `${proxy.url}/v1`, maxRetries: 0, defaultHeaders: WORKSPACE });
    const tools = [{ type: 'function', name: 'Read', parameters: readTool.input_schema }];
    const input = [{ role: 'user', content: 'read a twice' }];
    const first = await client.responses.stream({ model: 'gpt-test', tools, input }).finalResponse();
    input.push(...first.output, { type: 'function_call_output', call_id: 'call_x1', output: files['/w/a.txt'] });
    const events = [];
    const s = await client.responses.create({ model: 'gpt-test', tools, input, stream: true });
    // openai 7.x throws the stream's `error` event as an APIError (6.x
    // yielded it as the last event): the event itself is the error's
    // `error`, with the proxy's message and the next sequence number.
    let thrown = null;
    try {
      for await (const e of s) events.push(e);
    } catch (e) {
      thrown = e;
    }
    assert.ok(thrown instanceof OpenAI.APIError, `the stream ended with ${thrown}`);
    assert.equal(thrown.status, undefined);  // a stream event, not an HTTP status
    assert.match(thrown.message, /hidden round with status 500.*upstream broke/s);
    assert.equal(up.requests.length, 3);
    assert.equal(up.requests[2].rejected, undefined);  // the hidden round was valid
    assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
    const last = thrown.error;
    assert.equal(last.type, 'error');
    assert.equal(last.sequence_number, events.length);
    assert.match(last.message, /hidden round with status 500.*upstream broke/s);
    assert.ok(events.some((e) => e.type === 'response.output_text.delta' && e.delta === 'Again.'));
    assert.ok(!events.some((e) => e.type === 'response.completed' || e.item?.type === 'function_call'));
  } finally {
    await proxy.stop();
  }
});

test('OpenAI Chat, streamed: a partial turn (one hit, one miss) reaches the client whole, indexes 0 and 1', async () => {
  up.load({ strictHistory: true, turns: [
    { reply: { toolCalls: [read('call_pp1')] } },
    { reply: { text: 'Both.', toolCalls: [read('call_pp2'), read('call_pp3', '/w/b.txt')] } },
    { reply: { text: 'done' } },
  ] });
  const proxy = await startProxy();
  try {
    const client = new OpenAI({ apiKey: 'sk-openai-partial', baseURL: `${proxy.url}/v1`, maxRetries: 0, defaultHeaders: WORKSPACE });
    const tools = [{ type: 'function', function: { name: 'Read', parameters: readTool.input_schema } }];
    const messages = [{ role: 'user', content: 'read a, then a and b' }];
    const ran = [];
    let indexes;
    for (let i = 0; i < 4; ++i) {
      const s = client.chat.completions.stream({ model: 'gpt-test', tools, messages });
      const seen = [];
      s.on('chunk', (c) => { for (const t of c.choices[0]?.delta.tool_calls ?? []) if (t.id) seen.push(t.index); });
      const m = (await s.finalChatCompletion()).choices[0].message;
      messages.push(m);
      if (!m.tool_calls?.length) break;
      indexes = seen;
      for (const c of m.tool_calls) {
        ran.push(JSON.parse(c.function.arguments).file_path);
        messages.push({ role: 'tool', tool_call_id: c.id, content: files[JSON.parse(c.function.arguments).file_path] });
      }
    }
    assert.deepEqual(ran, ['/w/a.txt', '/w/a.txt', '/w/b.txt']);
    assert.deepEqual(indexes, [0, 1]);
    for (const r of up.requests) assert.equal(r.rejected, undefined);
    assert.equal(await metric(proxy.url, 'toolcache_llm_served_total', { api: 'openai_chat' }), 0);
  } finally {
    await proxy.stop();
  }
});
