// Security group "proxy_workspace_header" (session 17): `x-toolcache-workspace`
// names the client's machine and folder to the LLM proxy (docs/PROXY.md
// "Whose workspace": "not forwarded upstream"). A client sets it on every
// request (Claude Code: ANTHROPIC_CUSTOM_HEADERS), and the proxy dropped it
// only on the three observed routes: count_tokens, /v1/models and every
// other pass-through route sent the local name ("alice-laptop:/home/alice/
// acme-merger") to the provider. Each route here must arrive without it.
// Real proxy binary; the provider is a small upstream that logs headers.
import assert from 'node:assert/strict';

import { BIN, caseRunner, recordingUpstream, spawnListening } from './lib/common.mjs';

const upstream = await recordingUpstream((req) => (req.url.startsWith('/v1/messages') && !req.url.includes('count')
  ? { id: 'msg_1', type: 'message', role: 'assistant', model: 'm',
    content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn',
    usage: { input_tokens: 1, output_tokens: 1 } }
  : '{"input_tokens":3,"data":[]}'));
const seen = upstream.requests;
const proxy = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', upstream.url]);
const name = 'alice-laptop:/home/alice/acme-merger';
const routes = [
  ['POST', '/v1/messages', '{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}'],
  ['POST', '/v1/messages/count_tokens', '{"model":"m","messages":[{"role":"user","content":"hi"}]}'],
  ['GET', '/v1/models', undefined],
];
const { step, finish } = caseRunner('proxy_workspace_header');
try {
  for (const [method, path, body] of routes) {
    await step(`${method} ${path}`, async () => {
      const before = seen.length;
      const r = await fetch(`${proxy.url}${path}`, {
        method, body,
        headers: { 'content-type': 'application/json', 'x-api-key': 'sk-test', 'anthropic-version': '2023-06-01',
          'X-Toolcache-Workspace': name },
      });
      await r.arrayBuffer();
      assert.equal(r.status, 200, `${method} ${path}: status`);
      assert.equal(seen.length, before + 1, `${method} ${path}: forwarded once`);
      assert.equal(seen.at(-1).headers['x-toolcache-workspace'], undefined,
        `${method} ${path}: the workspace name reached the provider`);
    });
  }
} finally {
  await proxy.stop();
  upstream.close();
}
finish();
