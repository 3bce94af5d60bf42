// `toolcache proxy` in operation: a TLS upstream (trusted through --ca-file,
// and refused with the wrong CA), OpenAI `n` > 1 (every choice observed, the
// tool loop steps aside), and SIGTERM draining the requests in flight. Run
// by tests/e2e_proxy_ops.sh with TOOLCACHE_BIN set.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { startFakeUpstream } from './fake_upstream.mjs';
import { spawnListening } from './spawn_proxy.mjs';

const BIN = process.env.TOOLCACHE_BIN;
assert.ok(BIN, 'TOOLCACHE_BIN must name the toolcache binary');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tc-proxy-ops-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const anthropicHeaders = { 'content-type': 'application/json', 'x-api-key': 'sk-ops', 'anthropic-version': '2023-06-01' };
const readTool = { name: 'Read', description: 'Reads a file.', input_schema: { type: 'object', properties: { file_path: { type: 'string' } } } };

async function stats(base) {
  return (await fetch(`${base}/toolcache/stats`)).json();
}
function counter(s, name, labels) {
  let n = 0;
  for (const series of s.metrics[name]?.series ?? []) {
    if (Object.entries(labels).every(([k, v]) => series.labels[k] === v)) n += series.value;
  }
  return n;
}
const exited = (child) => (child.exitCode !== null || child.signalCode !== null
  ? Promise.resolve(child.exitCode)
  : new Promise((r) => child.on('exit', (code) => r(code))));

// A self-signed certificate for 127.0.0.1 (its own CA), made by the openssl
// CLI; `name` tells two apart.
function selfSigned(name) {
  const key = path.join(tmp, `${name}.key`), cert = path.join(tmp, `${name}.pem`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert,
    '-days', '2', '-subj', `/CN=toolcache test ${name}`, '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'],
  { stdio: 'ignore' });
  return { key: fs.readFileSync(key), cert: fs.readFileSync(cert), certPath: cert };
}

// Reads a streamed response as text; `onFirst` runs when its first body
// bytes arrive.
function streamRequest(url, body, onFirst = () => {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: anthropicHeaders }, (res) => {
      let text = '';
      let first = true;
      res.on('data', (d) => {
        text += d;
        if (first) { first = false; onFirst(); }
      });
      res.on('end', () => resolve({ status: res.statusCode, text, complete: res.complete }));
      res.on('error', () => resolve({ status: res.statusCode, text, complete: false }));
      res.on('aborted', () => resolve({ status: res.statusCode, text, complete: false }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

test('TLS upstream: JSON and SSE pass through and are observed; a wrong CA fails cleanly', async () => {
  const ca = selfSigned('upstream');
  const other = selfSigned('other');
  const up = await startFakeUpstream({ tls: { cert: ca.cert, key: ca.key } });
  assert.match(up.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  const proxy = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', up.url, '--ca-file', ca.certPath]);
  try {
    up.load({ turns: [
      { reply: { toolCalls: [{ id: 'toolu_t1', name: 'Read', input: { file_path: '/w/a.txt' } }] } },
      { reply: { toolCalls: [{ id: 'toolu_t2', name: 'Read', input: { file_path: '/w/a.txt' } }] } },
      { reply: { text: 'done' } },
    ] });
    const messages = [{ role: 'user', content: 'read a twice' }];
    const send = (stream) => fetch(`${proxy.url}/v1/messages`, { method: 'POST', headers: anthropicHeaders,
      body: JSON.stringify({ model: 'claude-test', max_tokens: 50, stream, tools: [readTool], messages }) });
    // Round 1, JSON over TLS.
    const r1 = await send(false);
    assert.equal(r1.status, 200);
    const m1 = await r1.json();
    assert.equal(m1.content[0].id, 'toolu_t1');
    assert.equal(r1.headers.get('x-toolcache-observed-calls'), '1');
    assert.equal(r1.headers.get('x-toolcache-would-hit'), '0');
    messages.push({ role: 'assistant', content: m1.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_t1', content: 'alpha' }] });
    // Round 2 streamed: the result is recorded, the same read would hit.
    const before = await stats(proxy.url);
    const r2 = await send(true);
    assert.equal(r2.status, 200);
    assert.equal(r2.headers.get('x-toolcache-recorded'), '1');
    const sse = await r2.text();
    assert.match(sse, /event: message_stop/);
    assert.match(sse, /"id":"toolu_t2"/);
    const s = await stats(proxy.url);
    const wh = (x) => counter(x, 'toolcache_llm_tool_calls_total', { api: 'anthropic_messages', tool: 'Read', outcome: 'would_hit' });
    assert.equal(wh(s) - wh(before), 1, 'the streamed call is observed as a would-hit');
    assert.equal(counter(s, 'toolcache_proxy_streams_total', { api: 'anthropic_messages', outcome: 'complete' }), 1);
    assert.equal(up.requests.length, 2);
    assert.equal(up.requests[1].headers['x-api-key'], 'sk-ops');
  } finally {
    await proxy.stop();
  }
  // The same upstream through a proxy that trusts another CA.
  const wrong = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', up.url, '--ca-file', other.certPath]);
  try {
    const n = up.requests.length;
    const r = await fetch(`${wrong.url}/v1/messages`, { method: 'POST', headers: anthropicHeaders,
      body: JSON.stringify({ model: 'claude-test', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }) });
    assert.equal(r.status, 502);
    const e = await r.json();
    assert.equal(e.type, 'error');
    assert.equal(e.error.type, 'api_error');
    assert.match(e.error.message, /TLS handshake.*certificate verify failed/);
    assert.equal(up.requests.length, n, 'nothing reached the upstream');
    await new Promise((res) => setTimeout(res, 50));
    assert.match(wrong.log(), /upstream failed: .*TLS handshake.*certificate verify failed/);
  } finally {
    await wrong.stop();
    await up.close();
  }
});

// Chat Completions with n > 1: every choice's tool calls are observed,
// streamed and not.
test('n > 1: the tool calls of every choice are observed, streamed and not', async () => {
  const up = await startFakeUpstream();
  const proxy = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', up.url]);
  try {
    const client = new OpenAI({ apiKey: 'sk-n', baseURL: `${proxy.url}/v1` });
    const tools = [{ type: 'function', function: { name: 'Read', parameters: { type: 'object' } } }];
    // The client ran Read(b.txt): its result is recorded by the next request.
    const choices = (tag) => [
      { toolCalls: [{ id: `call_${tag}0`, name: 'Read', input: { file_path: '/w/a.txt' } }] },
      { toolCalls: [{ id: `call_${tag}1`, name: 'Read', input: { file_path: '/w/b.txt' } }] },
    ];
    up.load({ turns: [{ reply: { choices: choices('x') } }, { reply: { choices: choices('y') } }] });
    const messages = [
      { role: 'user', content: 'read b' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_b', type: 'function', function: { name: 'Read', arguments: '{"file_path":"/w/b.txt"}' } }] },
      { role: 'tool', tool_call_id: 'call_b', content: 'bravo' },
    ];
    const { data, response } = await client.chat.completions.create({ model: 'gpt-test', n: 2, tools, messages }).withResponse();
    assert.equal(data.choices.length, 2);
    assert.equal(data.choices[1].message.tool_calls[0].id, 'call_x1');
    assert.equal(response.headers.get('x-toolcache-recorded'), '1');
    assert.equal(response.headers.get('x-toolcache-observed-calls'), '2', 'both choices observed');
    assert.equal(response.headers.get('x-toolcache-would-hit'), '1', 'choice 1 reads the cached b.txt');
    // Streamed: the deltas of both choices interleave (tool_call index 0
    // in each).
    const before = await stats(proxy.url);
    const stream = await client.chat.completions.create({ model: 'gpt-test', n: 2, tools, messages, stream: true });
    const seen = new Map();
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        for (const t of c.delta.tool_calls ?? []) if (t.id) seen.set(c.index, t.id);
      }
    }
    assert.deepEqual([...seen.entries()].sort(), [[0, 'call_y0'], [1, 'call_y1']]);
    const s = await stats(proxy.url);
    const d = (what) => counter(s, 'toolcache_llm_observed_total', { api: 'openai_chat', what })
      - counter(before, 'toolcache_llm_observed_total', { api: 'openai_chat', what });
    assert.equal(d('observed_calls'), 2);
    assert.equal(d('would_hit'), 1);
  } finally {
    await proxy.stop();
    await up.close();
  }
});

test('n > 1 with --serve: passed through, not served (multiple_choices); n = 1 is served', async () => {
  // An MCP tool (runs remotely): `--serve` serves it; the agent's own
  // Read would only be served when named (issue 28).
  const up = await startFakeUpstream();
  const proxy = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', up.url, '--serve']);
  try {
    // Session 16: the client names its workspace (a client tool is served only then).
    const client = new OpenAI({ apiKey: 'sk-serve', baseURL: `${proxy.url}/v1`, defaultHeaders: { 'x-toolcache-workspace': 'ops-test' } });
    const tools = [{ type: 'function', function: { name: 'mcp__fs__read_file', parameters: { type: 'object' } } }];
    const readA = (id) => ({ id, name: 'mcp__fs__read_file', input: { file_path: '/w/a.txt' } });
    const messages = [
      { role: 'user', content: 'read a' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'mcp__fs__read_file', arguments: '{"file_path":"/w/a.txt"}' } }] },
      { role: 'tool', tool_call_id: 'call_a', content: 'alpha' },
    ];
    // n = 2, both choices read the cached a.txt: the client gets both.
    up.load({ turns: [{ reply: { choices: [{ toolCalls: [readA('call_n0')] }, { toolCalls: [readA('call_n1')] }] } }] });
    const two = await client.chat.completions.create({ model: 'gpt-test', n: 2, tools, messages });
    assert.equal(two.choices.length, 2);
    assert.equal(two.choices[0].message.tool_calls[0].id, 'call_n0');
    assert.equal(up.requests.length, 1, 'no hidden round');
    const s = await stats(proxy.url);
    assert.equal(counter(s, 'toolcache_llm_serve_bypass_total', { api: 'openai_chat', reason: 'multiple_choices' }), 1);
    // The control: the same call in a single choice is served in a hidden
    // round (so the bypass above is the choices' doing).
    up.load({ turns: [{ reply: { toolCalls: [readA('call_s')] } }, { reply: { text: 'a is alpha' } }] });
    const one = await client.chat.completions.create({ model: 'gpt-test', tools, messages });
    assert.equal(one.choices[0].message.content, 'a is alpha');
    assert.equal(up.requests.length, 2, 'served: the hidden round went upstream');
  } finally {
    await proxy.stop();
    await up.close();
  }
});

// A slow stream: 8 events 150 ms apart (about 1.2 s).
const slowStream = { turns: [{ reply: { text: 'a slow answer', eventDelayMs: 150 } }] };
const streamBody = { model: 'claude-test', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'slow' }] };

test('SIGTERM drains: new connections refused, the stream in flight completes, exit 0', async () => {
  const up = await startFakeUpstream();
  up.load(slowStream);
  const proxy = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', up.url, '--drain-timeout', '10']);
  try {
    // An idle keep-alive connection does not hold the shutdown back.
    const idle = new http.Agent({ keepAlive: true });
    const ping = await new Promise((resolve, reject) => {
      http.get(`${proxy.url}/toolcache/stats`, { agent: idle }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); }).on('error', reject);
    });
    assert.equal(ping, 200);
    let signalledAt = 0;
    let refused;
    const result = await streamRequest(`${proxy.url}/v1/messages`, streamBody, () => {
      signalledAt = Date.now();
      proxy.child.kill('SIGTERM');
      // Shortly after, the listening socket is closed.
      setTimeout(() => {
        http.get(`${proxy.url}/toolcache/stats`, () => { refused = 'answered'; }).on('error', (e) => { refused = e.code; });
      }, 200);
    });
    assert.equal(result.status, 200);
    assert.ok(result.complete, 'the chunked stream ended properly');
    assert.match(result.text, /event: message_stop/, 'the client got the whole stream');
    assert.ok(Date.now() - signalledAt >= 600, 'the stream outlived the signal');
    const code = await exited(proxy.child);
    assert.equal(code, 0);
    assert.equal(refused, 'ECONNREFUSED');
    assert.match(proxy.log(), /shutting down: no new connections/);
    assert.match(proxy.log(), /every request in flight finished/);
    idle.destroy();
  } finally {
    await proxy.stop();
    await up.close();
  }
});

test('SIGTERM with a short drain timeout: the stream is cut at the timeout, exit 0', async () => {
  const up = await startFakeUpstream();
  up.load({ turns: [{ reply: { text: 'a very slow answer', eventDelayMs: 1000 } }] });
  const proxy = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', up.url, '--drain-timeout', '0.3']);
  try {
    let signalledAt = 0;
    const result = await streamRequest(`${proxy.url}/v1/messages`, streamBody, () => {
      signalledAt = Date.now();
      proxy.child.kill('SIGTERM');
    });
    const code = await exited(proxy.child);
    const took = Date.now() - signalledAt;
    assert.equal(code, 0);
    assert.ok(took < 3000, `exited ${took} ms after SIGTERM`);
    assert.ok(!result.complete || !/message_stop/.test(result.text), 'the stream was cut');
    assert.match(proxy.log(), /drain timeout \(0\.3 s\) passed; closing 1 connection/);
  } finally {
    await proxy.stop();
    await up.close();
  }
});

// Session 17: the proxy's own errors carry the provider's error type for
// their status (Anthropic: 504 is `timeout_error`, not `api_error`) and the
// ErrorResponse's `request_id` (null: no provider request behind it).
test('an upstream that does not answer in time: 504 timeout_error in the Anthropic shape', async () => {
  const up = await startFakeUpstream();
  up.load({ turns: [{ reply: { text: 'too late', delayMs: 3000 } }] });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolcache-timeout-'));
  const cfg = path.join(dir, 'toolcache.yaml');
  fs.writeFileSync(cfg, 'proxy:\n  responseTimeoutSeconds: 0.3\n');
  const proxy = await spawnListening(BIN, ['proxy', '--config', cfg, '--listen', '127.0.0.1:0', '--upstream', up.url]);
  try {
    const r = await fetch(`${proxy.url}/v1/messages`, { method: 'POST', headers: anthropicHeaders,
      body: JSON.stringify({ model: 'claude-test', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }) });
    assert.equal(r.status, 504);
    const e = await r.json();
    assert.deepEqual(Object.keys(e), ['type', 'error', 'request_id']);
    assert.equal(e.type, 'error');
    assert.equal(e.error.type, 'timeout_error');
    assert.equal(e.request_id, null);
    assert.match(e.error.message, /^toolcache proxy: upstream request failed: .*timeout/);
  } finally {
    await proxy.stop();
    await up.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
