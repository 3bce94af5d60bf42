// Security group "codex_namespace" (session 17): Codex CLI declares each of
// its MCP servers' tools inside a Responses `namespace` tool
// ({"type":"namespace","name":"mcp__fs","tools":[...]}) and its calls name
// the namespace apart from the tool:
// {"type":"function_call","namespace":"mcp__fs","name":"read_text_file"}.
// The proxy read the bare name, so a call of the client's own MCP server
// (a stdio filesystem server in the client's container) was not known to
// run on the client: with `--serve` it was recorded and served under the
// API key alone, and container B, same key, got container A's `.env` in a
// hidden round (the session 16 case, for Codex's MCP tools); and two
// namespaces' tools of one name shared entries. Real proxy binary; the
// provider is a small upstream here that answers Responses JSON, so each
// case controls the exact output items.
import assert from 'node:assert/strict';

import { BIN, caseRunner, recordingUpstream, spawnListening } from './lib/common.mjs';

let replies = [];
const upstream = await recordingUpstream(() => {
  const output = replies.shift() ?? [{
    type: 'message', id: 'msg', role: 'assistant', status: 'completed',
    content: [{ type: 'output_text', text: 'done', annotations: [] }],
  }];
  return {
    id: `resp_${upstream.requests.length}`, object: 'response', created_at: 1, status: 'completed',
    model: 'gpt-5.5', output, usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
  };
});
const { requests } = upstream;
const proxy = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', upstream.url, '--serve']);

const fsTools = (ns) => ({
  type: 'namespace', name: ns, description: 'MCP server tools',
  tools: [{ type: 'function', name: 'read_text_file', description: 'Read the complete contents of a file as text.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }],
});
const call = (id, ns, path = '/workspace/.env') => ({
  type: 'function_call', id: `fc_${id}`, call_id: id, namespace: ns, name: 'read_text_file',
  arguments: JSON.stringify({ path }), status: 'completed',
});
async function post(workspace, input, ns = 'mcp__fs') {
  const r = await fetch(`${proxy.url}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-team-key', 'x-toolcache-workspace': workspace },
    body: JSON.stringify({ model: 'gpt-5.5', input, tools: [fsTools(ns)] }),
  });
  return { status: r.status, recorded: r.headers.get('x-toolcache-recorded'), body: await r.json() };
}
// Upstream requests after `from` that carry `text` (a hidden round's result).
const carried = (from, text) => requests.slice(from).filter((r) => JSON.stringify(r.body.input).includes(text)).length;

const { step, finish } = caseRunner('codex_namespace');

try {
  await step('container A records its MCP read', async () => {
    const r = await post('container-A', [{ role: 'user', content: 'read .env' },
      call('a1', 'mcp__fs'), { type: 'function_call_output', call_id: 'a1', output: 'SECRET_OF_A=1' }]);
    assert.equal(r.status, 200);
    assert.equal(r.recorded, '1');
  });
  await step('container B, same key: the read goes to B, A\'s result is never sent', async () => {
    const from = requests.length;
    replies = [[call('b1', 'mcp__fs')]];
    const r = await post('container-B', [{ role: 'user', content: 'read .env' }]);
    assert.equal(r.status, 200);
    assert.equal(carried(from, 'SECRET_OF_A'), 0, 'B\'s hidden round carried A\'s file');
    assert.equal(r.body.output[0]?.type, 'function_call', 'B\'s client was not asked to run its read');
    assert.equal(r.body.output[0]?.call_id, 'b1');
  });
  await step('another namespace, same tool name and arguments, same container: not A\'s entry', async () => {
    const from = requests.length;
    replies = [[call('a2', 'mcp__backup')]];
    const r = await post('container-A', [{ role: 'user', content: 'read .env from the backup' }], 'mcp__backup');
    assert.equal(r.status, 200);
    assert.equal(carried(from, 'SECRET_OF_A'), 0, 'mcp__backup\'s read was answered with mcp__fs\'s result');
    assert.equal(r.body.output[0]?.call_id, 'a2');
  });
  await step('container A again: its own read is served (the namespaced tool is still cached)', async () => {
    const from = requests.length;
    replies = [[call('a3', 'mcp__fs')]];
    const r = await post('container-A', [{ role: 'user', content: 'read .env again' }]);
    assert.equal(r.status, 200);
    assert.equal(carried(from, 'SECRET_OF_A'), 1, 'A\'s own read was not served from A\'s entry');
    assert.equal(r.body.output[0]?.type, 'message');
  });
} finally {
  await proxy.stop();
  upstream.close();
}
finish();
