// attackK finding 5: a tool result is recorded with the client's
// `cache_control` breakpoints inside its content blocks, and the LLM
// proxy's serve loop puts them back verbatim into a later hidden round.
// The provider allows at most 4 breakpoints per request ("A maximum of 4
// blocks with cache_control may be provided") and TTLs in non-increasing
// order: a request that already has its 4 (or a 5m one before the served
// 1h one) is answered 400 for a breakpoint its client never sent. Under
// `proxy.scope: global` one principal's recorded breakpoints reach another.
//
// Real proxy binary, a provider stand-in (recordingUpstream, Anthropic
// Messages) that checks the provider's breakpoint rules. Exits 1 while the
// hole is open.
//
// Usage: TOOLCACHE_BIN=... node tests/security/attackK/proxy_served_cache_control.mjs
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BIN, recordingUpstream, spawnListening } from '../lib/common.mjs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attackK-cc-'));
const config = path.join(tmp, 'toolcache.yaml');
fs.writeFileSync(config, 'tools:\n  get_doc: {requestType: INFORMATIONAL, ttlSeconds: 600}\nproxy:\n  serve: true\n');

const tool = { name: 'get_doc', description: 'Return a document', input_schema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } };
const use = (id) => ({ type: 'tool_use', id, name: 'get_doc', input: { id: 'spec' } });
const message = (content, stop) => ({ id: 'msg_x', type: 'message', role: 'assistant', model: 'claude-test', content,
  stop_reason: stop, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 } });
const breakpoints = (v) => Array.isArray(v) ? v.reduce((n, x) => n + breakpoints(x), 0)
  : v && typeof v === 'object' ? Object.entries(v).reduce((n, [k, x]) => n + (k === 'cache_control' ? 1 : breakpoints(x)), 0) : 0;
const rejected = [];
const up = await recordingUpstream((req) => {
  const n = breakpoints(req.body);
  if (n > 4) {
    rejected.push(n);
    return { type: 'error', error: { type: 'invalid_request_error', message: `A maximum of 4 blocks with cache_control may be provided. Found ${n}.` } };
  }
  const msgs = req.body.messages ?? [];
  const last = msgs[msgs.length - 1];
  const lastIsQuestion = typeof last?.content === 'string' || last?.content?.some?.((b) => b.type === 'text');
  return lastIsQuestion ? message([use('toolu_2')], 'tool_use') : message([{ type: 'text', text: 'done' }], 'end_turn');
});
const proxy = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', up.url, '--config', config]);
const post = (body) => fetch(`${proxy.url}/v1/messages`, {
  method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-one', 'anthropic-version': '2023-06-01' },
  body: JSON.stringify({ model: 'claude-test', max_tokens: 100, tools: [tool], ...body }),
}).then(async (r) => ({ status: r.status, body: await r.json() }));
const cc = { type: 'ephemeral' };

let failed = false;
try {
  // Turn 1: the client ran get_doc; its framework cached the result's last
  // block (a breakpoint inside the tool_result's content).
  await post({ messages: [
    { role: 'user', content: 'read the spec' },
    { role: 'assistant', content: [use('toolu_1')] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [
      { type: 'text', text: 'spec part 1' }, { type: 'text', text: 'spec part 2', cache_control: cc }] }] },
  ] });
  // A new conversation with the client's own 4 breakpoints (system, tools'
  // last, two messages); the model calls get_doc, which the proxy serves.
  const r = await post({
    system: [{ type: 'text', text: 'You are helpful.', cache_control: cc }],
    tools: [{ ...tool, cache_control: cc }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'earlier question', cache_control: cc }] },
      { role: 'assistant', content: 'earlier answer' },
      { role: 'user', content: [{ type: 'text', text: 'read the spec again', cache_control: cc }] },
    ],
  });
  console.log('client got:', r.status, JSON.stringify(r.body).slice(0, 160));
  if (rejected.length > 0) {
    console.log(`FAIL a hidden round carried ${rejected[0]} breakpoints (the client sent 4)`);
    failed = true;
  } else {
    console.log('ok   served results carry no client breakpoints');
  }
} finally {
  await proxy.stop();
  up.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
