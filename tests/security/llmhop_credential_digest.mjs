// Security group "llmhop_credential_digest" (issue 32, the LLM proxy hop):
// the proxy reuses a credential digest when a request carries exactly the
// previous request's credential bytes (src/core/scope.cc, LastDigest).
// These cases show that reuse never crosses principals: on ONE keep-alive
// connection, requests alternate between credentials that differ in one
// byte (same length), in the header that carries them, or by an added
// header, and each must land in its own scope. Observable through the
// proxy's `x-toolcache-recorded` header: the same tool result recorded
// under a scope for the first time counts 1, again in that scope 0. A
// digest reused across principals would answer 0 for the second principal.
// Real proxy binary; the provider is tests/llm/fake_upstream.mjs.
import assert from 'node:assert/strict';
import http from 'node:http';

import { BIN, SRC, startFakeUpstream, spawnListening } from './lib/common.mjs';

// An Anthropic request whose history holds one Read call and its result.
const body = (n) => JSON.stringify({
  model: 'claude-test', max_tokens: 16,
  tools: [{ name: 'Read', description: 'Reads a file', input_schema: { type: 'object' } }],
  messages: [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${n}`, name: 'Read', input: { file_path: '/w/notes.txt' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${n}`, content: 'the notes, version 1' }] },
  ],
});

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let sockets = new Set();
function post(base, headers, n) {
  const b = body(n);
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}/v1/messages`, {
      method: 'POST', agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(b), 'anthropic-version': '2023-06-01', ...headers },
    }, (res) => {
      sockets.add(res.socket);
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, recorded: res.headers['x-toolcache-recorded'] }));
    });
    req.on('error', reject);
    req.end(b);
  });
}

const up = await startFakeUpstream();
const proxy = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', up.url]);
let failed = 0;
try {
  // [label, headers, recorded expected]
  const steps = [
    ['alice first', { 'x-api-key': 'sk-alice-0001' }, '1'],
    ['alice again (same bytes: the reused digest, same scope)', { 'x-api-key': 'sk-alice-0001' }, '0'],
    ['one byte different, same length', { 'x-api-key': 'sk-alice-0002' }, '1'],
    ['back to alice', { 'x-api-key': 'sk-alice-0001' }, '0'],
    ['a prefix of alice', { 'x-api-key': 'sk-alice-000' }, '1'],
    ['alice\'s bytes in another header', { authorization: 'sk-alice-0001' }, '1'],
    ['alice plus a project header', { 'x-api-key': 'sk-alice-0001', 'openai-project': 'p1' }, '1'],
    ['alice alone once more', { 'x-api-key': 'sk-alice-0001' }, '0'],
    ['no credential', {}, '1'],
  ];
  let n = 0;
  for (const [label, headers, want] of steps) {
    const r = await post(proxy.url, headers, n++);
    const ok = r.status === 200 && r.recorded === want;
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${label}: HTTP ${r.status}, x-toolcache-recorded ${r.recorded} (want ${want})`);
    if (!ok) ++failed;
  }
  // All on one connection: the reuse the cache serves is per connection
  // and loop thread, so this is where a leak between principals would be.
  const one = sockets.size === 1;
  console.log(`${one ? 'ok  ' : 'FAIL'} all ${steps.length} requests on one keep-alive connection (${sockets.size} sockets)`);
  if (!one) ++failed;
  assert.equal(up.requests.length, steps.length);
  // The series the proxy now looks up once and keeps (stage times, the
  // observed counters) still count every request under its own labels.
  const metrics = await (await fetch(`${proxy.url}/metrics`)).text();
  const value = (re) => Number((metrics.match(re) ?? [])[1]);
  const wantRecorded = steps.filter(([, , w]) => w === '1').length;
  for (const [name, re, want] of [
    ['observed results', /toolcache_llm_observed_total\{api="anthropic_messages",what="results"\} (\d+)/, steps.length],
    ['observed recorded', /toolcache_llm_observed_total\{api="anthropic_messages",what="recorded"\} (\d+)/, wantRecorded],
    ['stage upstream_wait', /toolcache_proxy_stage_seconds_count\{api="anthropic_messages",stage="upstream_wait"\} (\d+)/, steps.length],
    ['stage respond', /toolcache_proxy_stage_seconds_count\{api="anthropic_messages",stage="respond"\} (\d+)/, steps.length],
  ]) {
    const got = value(re);
    const ok = got === want;
    console.log(`${ok ? 'ok  ' : 'FAIL'} metrics ${name}: ${got} (want ${want})`);
    if (!ok) ++failed;
  }
} finally {
  agent.destroy();
  await proxy.stop();
  await up.close();
}
if (failed) {
  console.error(`llmhop_credential_digest: ${failed} case(s) failed`);
  process.exit(1);
}
console.log('llmhop_credential_digest: all cases passed');
