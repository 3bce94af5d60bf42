// Security group "llm_retry_flood" (session 19): the LLM proxy's observer
// keeps one bounded table (65,536 entries) of the calls a response asked
// for, by principal and call id. A Responses request that continues with
// `previous_response_id` carries only the call's output; it is paired with
// its call through that table alone. The attack: after the victim's model
// asked for a write, a flood of requests carrying tool results (each
// remembered as "recorded", under made-up keys the provider rejects), or
// one valid key's responses asking for many calls, pushed the victim's call
// out. The victim's result was then "unpaired": the write's invalidation
// was skipped and `--serve` answered the victim's next read with the
// pre-write text in a hidden round.
// Now: only what the provider answered 2xx enters the table, and a full
// table evicts from the principal holding the most (src/llm/observer.h).
import assert from 'node:assert/strict';
import http from 'node:http';

import { BIN, caseRunner, spawnListening } from './lib/common.mjs';

const TABLE = 65536;
const VALID = new Set(['sk-victim', 'sk-flooder']);
const PER_REQUEST = 1040;
const REQUESTS = Math.ceil((TABLE + 64) / PER_REQUEST);

// The provider: 401 for a key it does not know; Responses and Chat answers
// from `replies` (Chat) or the one write call (Responses, no
// previous_response_id); the flooder's Chat requests get PER_REQUEST calls.
let replies = [];
const requests = [];
let floods = 0;
const toolCalls = (n) => Array.from({ length: n }, (_, i) => ({ id: `call_g${floods}_${i}`, type: 'function', function: { name: 'lookup_thing', arguments: JSON.stringify({ n: i }) } }));
const chatAnswer = (msg) => ({ id: 'c', object: 'chat.completion', created: 1, model: 'm',
  choices: [{ index: 0, message: msg, finish_reason: msg.tool_calls ? 'tool_calls' : 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
const server = http.createServer((req, res) => {
  let text = '';
  req.on('data', (d) => { text += d; });
  req.on('end', () => {
    const key = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    const body = JSON.parse(text);
    requests.push({ url: req.url, key, body });
    const send = (status, out) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(out));
    };
    if (!VALID.has(key)) {
      return send(401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } });
    }
    if (req.url.startsWith('/v1/responses')) {
      const output = body.previous_response_id
        ? [{ type: 'message', id: 'msg_2', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'done', annotations: [] }] }]
        : [{ type: 'function_call', id: 'fc_1', call_id: 'call_w', name: 'note', arguments: JSON.stringify({ id: 'a', text: 'NEW' }), status: 'completed' }];
      return send(200, { id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model: 'm', output,
        usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } });
    }
    if (key === 'sk-flooder') {
      floods++;
      return send(200, chatAnswer({ role: 'assistant', content: null, tool_calls: toolCalls(PER_REQUEST) }));
    }
    return send(200, chatAnswer(replies.shift() ?? { role: 'assistant', content: 'ok' }));
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const upstream = `http://127.0.0.1:${server.address().port}`;

const fn = (name, description, props) => ({ type: 'function', function: { name, description, parameters: { type: 'object', properties: props, required: Object.keys(props) } } });
const TOOLS = [fn('read_note', 'Read the note with this id and return its text.', { id: { type: 'string' } }),
  fn('note', 'Stores the text as the note with this id, replacing what it held. Returns a confirmation.', { id: { type: 'string' }, text: { type: 'string' } })];
const call = (id, name, args) => ({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] });
const result = (id, text) => ({ role: 'tool', tool_call_id: id, content: text });
const u = { role: 'user', content: 'work on note a' };

// A request whose newest turn answers PER_REQUEST calls from its own history
// (a client's stand-in text: never recorded in the cache, so the flood
// cannot evict the victim's cached read from the cache itself).
function floodBody(tag) {
  const calls = Array.from({ length: PER_REQUEST }, (_, i) => ({ id: `call_${tag}_${i}`, type: 'function', function: { name: 'read_note', arguments: JSON.stringify({ id: `f${i}` }) } }));
  return { model: 'm', messages: [{ role: 'user', content: 'go' }, { role: 'assistant', content: null, tool_calls: calls },
    ...calls.map((c) => result(c.id, 'Output too large'))] };
}

// The victim reads note a, its model asks (Responses) to write it, the
// flood, the victim continues with previous_response_id and the write's
// output, then its model asks to read note a again. Returns whether the
// proxy answered that read itself with the pre-write text.
async function scenario(flood) {
  const proxy = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', upstream, '--serve', '--log-level', 'warn']);
  const post = async (key, route, body) => {
    const r = await fetch(`${proxy.url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
    await r.arrayBuffer();
    return r.status;
  };
  try {
    const history = [u, call('c1', 'read_note', { id: 'a' }), result('c1', 'note a = alpha v1')];
    assert.equal(await post('sk-victim', '/v1/chat/completions', { model: 'm', messages: history, tools: TOOLS }), 200);
    assert.equal(await post('sk-victim', '/v1/responses', { model: 'm', input: 'write NEW into note a' }), 200);
    await flood(post);
    assert.equal(await post('sk-victim', '/v1/responses', { model: 'm', previous_response_id: 'resp_1',
      input: [{ type: 'function_call_output', call_id: 'call_w', output: 'stored a' }] }), 200);
    replies = [call('c3', 'read_note', { id: 'a' }), { role: 'assistant', content: 'done' }];
    const before = requests.length;
    assert.equal(await post('sk-victim', '/v1/chat/completions', { model: 'm', messages: [...history, { role: 'user', content: 'read it again' }], tools: TOOLS }), 200);
    replies = [];
    return requests.slice(before).some((r) => JSON.stringify(r.body).includes('"tool_call_id":"c3"') && JSON.stringify(r.body).includes('alpha v1'));
  } finally {
    await proxy.stop();
  }
}

const t = caseRunner('llm_retry_flood');
await t.step("control: the victim's write, continued with previous_response_id, invalidates its read", async () => {
  assert.equal(await scenario(async () => {}), false, 'the pre-write read was served');
});
await t.step(`${REQUESTS} made-up keys' requests (${PER_REQUEST} results each, all refused 401) do not push out the victim's call`, async () => {
  assert.equal(await scenario(async (post) => {
    for (let k = 0; k < REQUESTS; k++) assert.equal(await post(`sk-made-up-${k}`, '/v1/chat/completions', floodBody(k)), 401);
  }), false, "the write's call was pushed out of the table: its invalidation was skipped and the pre-write read was served");
});
await t.step(`one valid key's ${REQUESTS} responses (${PER_REQUEST} calls each) do not push out the victim's call`, async () => {
  assert.equal(await scenario(async (post) => {
    for (let k = 0; k < REQUESTS; k++) assert.equal(await post('sk-flooder', '/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: `go ${k}` }] }), 200);
  }), false, "another key's calls pushed the write's call out: its invalidation was skipped and the pre-write read was served");
});
server.close();
t.finish();
