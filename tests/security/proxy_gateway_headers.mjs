// Security group "proxy_gateway_headers" (session 18, attackV finding 3):
// behind an AI gateway that keeps the provider keys itself, the caller
// authenticates with the gateway's own header (Cloudflare AI Gateway
// `cf-aig-authorization`, Portkey `x-portkey-api-key`, Google
// `x-goog-api-key`). The LLM proxy's principal digested five fixed header
// names, so every such caller was the principal "none": bob's model was
// answered (`--serve`, a hidden round) with alice's recorded result. Now
// every header whose name looks like a credential's counts, and
// `proxy.credentialHeaders` names more.
// Session 19 (attackK finding 3): the same behind a gateway that takes the
// key in the query string (Azure API Management's `?subscription-key=`,
// Google's `?key=`, `?api_key=`): the principal digested headers only, so
// every such caller was "none". Now a query parameter whose name looks
// like a credential's counts, and `proxy.credentialQuery` names more; a
// harmless one (Claude Code's `?beta=true`) does not split a principal.
// Each case: alice's request history records her result; bob (another
// token in the same header or parameter) asks and his model calls the same
// tool: it must reach bob (never served from alice's entry); alice asking
// again is served (the control: serving works, the case is not vacuous).
// Real proxy binary; the provider is a stand-in whose answers the case sets.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BIN, caseRunner, recordingUpstream, spawnListening } from './lib/common.mjs';

let replies = [];
const upstream = await recordingUpstream(() => {
  const message = replies.shift() ?? { role: 'assistant', content: 'ok' };
  return {
    id: 'c1', object: 'chat.completion', created: 1, model: 'm',
    choices: [{ index: 0, message, finish_reason: message.tool_calls ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
});
const seen = upstream.requests;
const work = mkdtempSync(join(tmpdir(), 'toolcache-gateway-'));
const tools = [{ type: 'function', function: { name: 'get_account_summary',
  description: 'Get the summary of the account', parameters: { type: 'object', properties: {} } } }];
const call = (id) => ({ role: 'assistant', content: null,
  tool_calls: [{ id, type: 'function', function: { name: 'get_account_summary', arguments: '{}' } }] });
const ask = { role: 'user', content: 'summarize my account' };

// One proxy (`--serve`, memory cache) per case; `header` carries the
// gateway token of `alice` or `bob` (`?param` instead: the query parameter
// `param` carries it). `suffix(user, n)`: more query for that user's n-th
// request (1 = the first).
async function gatewayCase(header, extraArgs = [], suffix = () => '') {
  const proxy = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', upstream.url,
    '--serve', ...extraArgs]);
  const sent = {};
  const chat = async (user, messages) => {
    const n = (sent[user] = (sent[user] ?? 0) + 1);
    const token = `gw-token-${user}-0c55aa13`;
    const query = header.startsWith('?') ? `${header}=${token}${suffix(user, n)}` : suffix(user, n).replace(/^&/, '?');
    const r = await fetch(`${proxy.url}/v1/chat/completions${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json',
        ...(header.startsWith('?') ? {} : { [header]: `Bearer ${token}` }) },
      body: JSON.stringify({ model: 'm', messages, tools }),
    });
    assert.equal(r.status, 200, `${user}: status`);
    return r.json();
  };
  // Whether the model's call in this turn was answered with alice's result
  // by the proxy (a hidden round whose request carries it upstream).
  const servedAlice = async (user) => {
    replies = [call(`${user}-1`), { role: 'assistant', content: 'done' }];
    const before = seen.length;
    await chat(user, [ask]);
    replies = [];
    return seen.slice(before).some((r) => JSON.stringify(r.body).includes('ALICE: balance'));
  };
  try {
    await chat('alice', [ask, call('a1'), { role: 'tool', tool_call_id: 'a1', content: 'ALICE: balance 1,234,567 USD' }]);
    const bob = await servedAlice('bob');
    const alice = await servedAlice('alice');
    console.log(`  ${header}: bob served alice's result=${bob}, alice served her own=${alice}`);
    assert.ok(!bob, `${header}: bob (another gateway token) was served alice's result`);
    assert.ok(alice, `${header}: alice's own result is served to her (control)`);
  } finally {
    await proxy.stop();
  }
}

const { step, finish } = caseRunner('proxy_gateway_headers');
try {
  for (const header of ['cf-aig-authorization', 'x-portkey-api-key', 'x-goog-api-key', 'Helicone-Auth']) {
    await step(`${header} is a credential`, () => gatewayCase(header));
  }
  await step('proxy.credentialHeaders names a header of any name', async () => {
    const config = join(work, 'gateway.yaml');
    writeFileSync(config, 'proxy:\n  credentialHeaders: [X-Gateway-User]\n');
    await gatewayCase('x-gateway-user', ['--config', config]);
  });
  for (const param of ['subscription-key', 'key', 'api_key', 'access_token']) {
    await step(`?${param}= is a credential`, () => gatewayCase(`?${param}`));
  }
  await step('proxy.credentialQuery names a query parameter of any name', async () => {
    const config = join(work, 'gateway-query.yaml');
    writeFileSync(config, 'proxy:\n  credentialQuery: [Tenant]\n');
    await gatewayCase('?tenant', ['--config', config]);
  });
  // Harmless parameters on alice's later requests only (Claude Code's
  // `?beta=true`, Azure OpenAI's `api-version`): she is still alice.
  await step('a harmless parameter does not split a principal', () =>
    gatewayCase('x-api-key', [], (user, n) => (user === 'alice' && n > 1 ? '&beta=true&api-version=2024-10-21' : '')));
} finally {
  upstream.close();
  rmSync(work, { recursive: true, force: true });
}
finish();
