// Security group "proxy_served_cache_control" (session 19, attackK finding
// 5): a tool_result whose content blocks carry the client's prompt-cache
// breakpoints (`cache_control`; frameworks that cache "the last block" put
// one there) was recorded with them, and `--serve` put them back verbatim
// into a later hidden round. The provider allows at most 4 breakpoints per
// request and TTLs in non-increasing order (tools, system, messages): a
// request its client made valid went upstream with a 5th (or a served 1h
// breakpoint after the client's 5m ones) and was answered 400; under
// `proxy.scope: global` one key's recorded breakpoints broke another's
// requests. Now the breakpoints are dropped when recorded (NormalizedResult)
// and when served (RenderResult, for entries recorded before).
// Each case checks the control too: the call was served (a hidden round
// carried the recorded text), so the case is not vacuous.
// Real proxy binary; the provider is a stand-in (Anthropic Messages) that
// enforces the provider's two breakpoint rules.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BIN, caseRunner, recordingUpstream, spawnListening } from './lib/common.mjs';

const tool = { name: 'get_doc', description: 'Return a document',
  input_schema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } };
const use = (id) => ({ type: 'tool_use', id, name: 'get_doc', input: { id: 'spec' } });
const message = (content, stop) => ({ id: 'msg_x', type: 'message', role: 'assistant', model: 'claude-test', content,
  stop_reason: stop, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 } });
// The request's breakpoints' TTLs in the provider's order (tools, system,
// messages; depth first).
const ttls = (v, out = []) => {
  if (Array.isArray(v)) v.forEach((x) => ttls(x, out));
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k === 'cache_control') out.push(x?.ttl ?? '5m');
      else ttls(x, out);
    }
  }
  return out;
};
// The provider's rules: at most 4 breakpoints, a 1h one never after a 5m.
const violation = (body) => {
  const t = ttls([body.tools, body.system, body.messages]);
  if (t.length > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${t.length}.`;
  const i = t.indexOf('5m');
  if (i >= 0 && t.slice(i).includes('1h')) return 'a ttl=1h cache_control block must not come after a ttl=5m one';
  return '';
};
const rejected = [];
const upstream = await recordingUpstream((req) => {
  const why = violation(req.body);
  if (why) {
    rejected.push(why);
    return { type: 'error', error: { type: 'invalid_request_error', message: why } };
  }
  const msgs = req.body.messages ?? [];
  const last = msgs[msgs.length - 1];
  const question = typeof last?.content === 'string' || last?.content?.some?.((b) => b.type === 'text');
  return question ? message([use('toolu_2')], 'tool_use') : message([{ type: 'text', text: 'done' }], 'end_turn');
});
const work = mkdtempSync(join(tmpdir(), 'toolcache-served-cc-'));
const cc = { type: 'ephemeral' };

// One proxy per case (`scope` = proxy.scope). `recorded`: the breakpoint
// inside the recorded result's last block, given by key `writer`; then key
// `reader` starts a new conversation with its own breakpoints `own` (each
// its TTL: system, two messages, and the tools' last when a fourth is
// given) and the model calls get_doc, which the proxy serves.
async function servedCase({ scope = 'credential', recorded, writer, reader, own }) {
  const config = join(work, `${scope}.yaml`);
  writeFileSync(config, 'tools:\n  get_doc: {requestType: INFORMATIONAL, ttlSeconds: 600}\n'
    + `proxy:\n  serve: true\n  scope: ${scope}\n`);
  const proxy = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', upstream.url,
    '--config', config]);
  const post = async (key, body) => {
    const r = await fetch(`${proxy.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-test', max_tokens: 100, tools: [tool], ...body }),
    });
    return { status: r.status, body: await r.json() };
  };
  try {
    rejected.length = 0;
    await post(writer, { messages: [
      { role: 'user', content: 'read the spec' },
      { role: 'assistant', content: [use('toolu_1')] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [
        { type: 'text', text: 'spec part 1' }, { type: 'text', text: 'spec part 2', cache_control: recorded }] }] },
    ] });
    const mark = (i) => ({ type: 'ephemeral', ...(own[i] === '1h' ? { ttl: '1h' } : {}) });
    const before = upstream.requests.length;
    const r = await post(reader, {
      system: [{ type: 'text', text: 'You are helpful.', cache_control: mark(0) }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'earlier question', cache_control: mark(1) }] },
        { role: 'assistant', content: 'earlier answer' },
        { role: 'user', content: [{ type: 'text', text: 'read the spec again', cache_control: mark(2) }] },
      ],
      tools: own.length > 3 ? [{ ...tool, cache_control: mark(3) }] : [tool],
    });
    const hidden = upstream.requests.slice(before).map((q) => JSON.stringify(q.body));
    console.log(`  client got ${r.status} ${JSON.stringify(r.body).slice(0, 120)}; upstream rejected: ${JSON.stringify(rejected)}`);
    assert.deepEqual(rejected, [], 'a hidden round broke the provider\'s breakpoint rules');
    assert.ok(hidden.some((q) => q.includes('spec part 2')), 'the call was served (control)');
    assert.ok(!hidden.some((q) => q.includes('"tool_result"') && /tool_result[^]*spec part 2","cache_control/.test(q)),
      'a served result carries the recorded breakpoint');
    assert.equal(r.body.content?.[0]?.text, 'done', 'the client got the model\'s answer');
  } finally {
    await proxy.stop();
  }
}

const { step, finish } = caseRunner('proxy_served_cache_control');
try {
  await step('a recorded breakpoint is not a 5th in a request with its 4', () =>
    servedCase({ recorded: cc, writer: 'sk-ant-one', reader: 'sk-ant-one', own: ['5m', '5m', '5m', '5m'] }));
  await step('scope global: another key\'s recorded 1h breakpoint does not follow its 5m ones', () =>
    servedCase({ scope: 'global', recorded: { type: 'ephemeral', ttl: '1h' }, writer: 'sk-ant-alice',
      reader: 'sk-ant-bob', own: ['5m', '5m', '5m'] }));
} finally {
  upstream.close();
  rmSync(work, { recursive: true, force: true });
}
finish();
