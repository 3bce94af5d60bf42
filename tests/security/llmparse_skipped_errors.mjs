// Security group "llmparse_skipped_errors" (issue 32, parseF: the request
// walk's cost at 200 KB). llm::ParseRequest now reads a string without a
// backslash (a role, a type, an id, a name, a Responses call's arguments,
// previous_response_id) as a view into the body instead of decoding it
// with get_string(). These cases show the parse still refuses what it
// refused: a string the walk reads followed by something that is not a
// comma or a closing bracket ("a":"b":"c", a missing comma), or holding a
// bad escape, is answered 400 in the API's error shape and the fake
// upstream's request log stays as it was; an escaped id is still decoded
// (forwarded, 200). Without the fix's consumption of the value
// (get_raw_json_string after the view; a value left unconsumed is skipped
// by simdjson On Demand, and the skip does not check what follows it) the
// "a":"b":"c" bodies were forwarded.
// Real proxy binary; the provider is tests/llm/fake_upstream.mjs.
import { BIN, startFakeUpstream, spawnListening } from './lib/common.mjs';

const PATHS = { anthropic: '/v1/messages', chat: '/v1/chat/completions', responses: '/v1/responses' };
const filler = 'lorem ipsum dolor sit amet, '.repeat(80);

// Valid bodies (as text, so that errors can be planted by replacing one
// exact substring) with a long tool result, so the request is not tiny.
const BODIES = {
  anthropic: `{"model":"claude-test","max_tokens":16,"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/a.txt"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"${filler}"}]}]}`,
  chat: `{"model":"gpt-test","messages":[{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"Read","arguments":"{\\"file_path\\":\\"/a.txt\\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"${filler}"}]}`,
  responses: `{"model":"gpt-test","previous_response_id":"resp_1","input":[{"type":"function_call","call_id":"call_1","name":"Read","arguments":"{}"},{"type":"function_call_output","call_id":"call_1","output":"${filler}"}]}`,
};

// [api, what, exact substring, replacement, expected status]
const CASES = [
  ['anthropic', 'role followed by ":x"', '"role":"assistant"', '"role":"assistant":"x"', 400],
  ['anthropic', 'tool_use id followed by ":x"', '"id":"toolu_1"', '"id":"toolu_1":"x"', 400],
  ['anthropic', 'tool_use name, missing comma', '"name":"Read",', '"name":"Read" ', 400],
  ['anthropic', 'tool_result id followed by ":x"', '"tool_use_id":"toolu_1"', '"tool_use_id":"toolu_1":"x"', 400],
  ['anthropic', 'block type followed by ":x"', '"type":"tool_result"', '"type":"tool_result":"x"', 400],
  ['anthropic', 'bad escape in a tool_use id', '"id":"toolu_1"', '"id":"toolu\\l1"', 400],
  ['anthropic', 'escaped id (\\u005f), decoded', '"id":"toolu_1"', '"id":"toolu\\u005f1"', 200],
  ['chat', 'tool_call_id followed by ":x"', '"tool_call_id":"call_1"', '"tool_call_id":"call_1":"x"', 400],
  ['chat', 'role followed by ":x"', '"role":"tool"', '"role":"tool":"x"', 400],
  ['chat', 'bad escape in a tool_call_id', '"tool_call_id":"call_1"', '"tool_call_id":"call\\q1"', 400],
  ['responses', 'previous_response_id followed by ":x"', '"previous_response_id":"resp_1"', '"previous_response_id":"resp_1":"x"', 400],
  ['responses', 'call_id followed by ":x"', '"type":"function_call","call_id":"call_1"', '"type":"function_call","call_id":"call_1":"x"', 400],
  ['responses', 'arguments followed by ":x"', '"arguments":"{}"', '"arguments":"{}":"x"', 400],
  ['responses', 'item type followed by ":x"', '"type":"function_call_output"', '"type":"function_call_output":"x"', 400],
  ['responses', 'bad escape in a name', '"name":"Read"', '"name":"Re\\xad"', 400],
];

// Whole bodies: a string the walk reads as a view is an object's last
// member, followed by ':"x"' and closers of the wrong kind (']' for '}'):
// the counts balance, so simdjson's skip of an unconsumed value passed
// them (these were forwarded before the fix consumed the value).
const LAST_MEMBER = [
  ['anthropic', 'a message\'s role, last', '{"model":"claude-test","max_tokens":16,"messages":[{"content":"go","role":"user":"x"]}]}'],
  ['anthropic', 'model, last', '{"max_tokens":16,"messages":[{"role":"user","content":"go"}],"model":"claude-test":"x"]}'],
  ['anthropic', 'a tool_use name, last', '{"model":"claude-test","max_tokens":16,"messages":[{"role":"assistant","content":[{"type":"tool_use","input":{},"id":"t1","name":"Read":"x"]}]}]}'],
  ['chat', 'a role, last', '{"model":"gpt-test","messages":[{"content":"go","role":"user":"x"]}]}'],
  ['chat', 'a tool_call_id, last', '{"model":"gpt-test","messages":[{"role":"tool","content":"r","tool_call_id":"c1":"x"]}]}'],
  ['responses', 'a call_id, last', '{"model":"gpt-test","input":[{"type":"function_call","name":"R","arguments":"{}","call_id":"c":"x"]}]}'],
  ['responses', 'previous_response_id, last', '{"model":"gpt-test","input":"go","previous_response_id":"resp_1":"x"]}'],
  ['responses', 'arguments, last', '{"model":"gpt-test","input":[{"type":"function_call","name":"R","call_id":"c","arguments":"{}":"x"]}]}'],
  // session 14: scalars the walk reads as spans (Reader::Raw) were only
  // peeked at; these five were forwarded (the upstream answered 400).
  ['anthropic', 'a message\'s text content, last', '{"model":"claude-test","max_tokens":16,"messages":[{"role":"user","content":"go":"x"]}]}'],
  ['anthropic', 'system, last', '{"model":"claude-test","max_tokens":16,"messages":[{"role":"user","content":"go"}],"system":"s":"x"]}'],
  ['anthropic', 'a tool_result\'s content, last', '{"model":"claude-test","max_tokens":16,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"r":"x"]}]}]}'],
  ['chat', 'a message\'s content, last', '{"model":"gpt-test","messages":[{"role":"user","content":"go":"x"]}]}'],
  ['responses', 'a function_call_output\'s output, last', '{"model":"gpt-test","input":[{"type":"function_call_output","call_id":"c","output":"o":"x"]}]}'],
];

const up = await startFakeUpstream();
const proxy = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', up.url]);
let failed = 0;
const check = (ok, what) => { console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`); if (!ok) ++failed; };
const post = async (api, text) => {
  const before = up.requests.length;
  const res = await fetch(proxy.url + PATHS[api], {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-llmparse', authorization: 'Bearer sk-llmparse', 'anthropic-version': '2023-06-01' },
    body: text,
  });
  const out = await res.text();
  return { status: res.status, text: out, forwarded: up.requests.length - before, raw: up.requests[before]?.raw };
};
try {
  for (const api of Object.keys(BODIES)) {
    const r = await post(api, BODIES[api]);
    check(r.status === 200 && r.forwarded === 1 && r.raw === BODIES[api], `${api}: the valid body: HTTP ${r.status}, forwarded ${r.forwarded}${r.raw === BODIES[api] ? ' byte for byte' : ''}`);
  }
  for (const [api, what, from, to, want] of CASES) {
    if (!BODIES[api].includes(from)) throw new Error(`case ${what}: ${from} not in the ${api} body`);
    const text = BODIES[api].replace(from, to);
    const r = await post(api, text);
    const shape = want === 400 ? /"error"/.test(r.text) && r.forwarded === 0 : r.forwarded === 1 && r.raw === text;
    check(r.status === want && shape, `${api}: ${what}: HTTP ${r.status} (want ${want}), forwarded ${r.forwarded}${want === 400 ? `, ${r.text.slice(0, 120)}` : ''}`);
  }
  for (const [api, what, text] of LAST_MEMBER) {
    const r = await post(api, text);
    check(r.status === 400 && /"error"/.test(r.text) && r.forwarded === 0, `${api}: ${what}, then ':"x"' and ']' for '}': HTTP ${r.status} (want 400), forwarded ${r.forwarded}, ${r.text.slice(0, 120)}`);
  }
  const last = await post('anthropic', BODIES.anthropic);
  check(last.status === 200, `a valid request afterwards: HTTP ${last.status}`);
} finally {
  await proxy.stop();
  await up.close();
}
if (failed) {
  console.error(`llmparse_skipped_errors: ${failed} case(s) failed`);
  process.exit(1);
}
console.log('llmparse_skipped_errors: all cases passed');
