// Security group "sse200_body_read" (issue 32, the LLM proxy hop at 200 KB):
// the shared HTTP server now reads a body of known length into storage it
// does not zero first (src/http/uninit_string.h, ResizeForOverwrite), and
// the depth pre-check finds a string's end with a 16-byte compare before
// memchr (src/core/json.cc, CheckLimits). These cases show that
// (1) no byte the client did not send ever reaches the upstream or the
//     parse: a body cut short is never forwarded, bodies arriving in
//     pieces and pipelined behind another request arrive byte for byte;
// (2) the depth verdicts are unchanged at the 16-byte edges: brackets in
//     strings (escaped quotes and backslash runs at every offset) do not
//     count, brackets outside do, and a body over the limit is answered
//     400 before any byte goes upstream (the fake upstream's request log
//     stays as it was).
// Real proxy binary; the provider is tests/llm/fake_upstream.mjs.
import net from 'node:net';
import { BIN, startFakeUpstream, spawnListening } from './lib/common.mjs';

// An Anthropic request of about `size` bytes whose tool result carries
// every byte value a JSON string may hold (so a stale or zero byte in the
// forwarded copy cannot go unnoticed).
function body(size, tag) {
  let filler = '';
  for (let i = 0; filler.length < size; ++i) filler += String.fromCharCode(32 + ((i * 7 + tag) % 90)).replace(/["\\]/, 'q');
  return JSON.stringify({
    model: 'claude-test', max_tokens: 16,
    messages: [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${tag}`, name: 'Read', input: { file_path: `/w/${tag}.txt` } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${tag}`, content: filler.slice(0, size) }] },
    ],
  });
}
const head = (url, b) => `POST /v1/messages HTTP/1.1\r\nhost: ${new URL(url).host}\r\ncontent-type: application/json\r\nx-api-key: sk-sse200\r\nanthropic-version: 2023-06-01\r\ncontent-length: ${Buffer.byteLength(b)}\r\n\r\n`;

// Writes `pieces` (strings or { pause: ms }) on one connection; resolves
// with every byte received until the peer closes or `responses` HTTP
// responses have arrived (counted by status lines) and `idle` ms passed.
function raw(url, pieces, { responses = 1, endAfter = false } = {}) {
  return new Promise((resolve) => {
    const u = new URL(url);
    const s = net.connect(Number(u.port), u.hostname);
    let got = '';
    let timer = null;
    const done = () => { clearTimeout(timer); s.destroy(); resolve(got); };
    s.on('data', (d) => {
      got += d;
      if ((got.match(/HTTP\/1\.1 \d{3}/g) ?? []).length >= responses) {
        clearTimeout(timer);
        timer = setTimeout(done, 150);
      }
    });
    s.on('close', done);
    s.on('error', done);
    s.on('connect', async () => {
      for (const p of pieces) {
        if (typeof p === 'object') await new Promise((r) => setTimeout(r, p.pause));
        else s.write(p);
      }
      if (endAfter) s.end();
      setTimeout(done, 5000);
    });
  });
}

const up = await startFakeUpstream();
const proxy = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', up.url]);
let failed = 0;
const check = (ok, what) => { console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`); if (!ok) ++failed; };
try {
  // (1a) A 200 KB body cut short: the client sends half and goes away.
  {
    const b = body(204800, 1);
    const before = up.requests.length;
    await raw(proxy.url, [head(proxy.url, b), b.slice(0, 100000), { pause: 100 }], { responses: 0, endAfter: true });
    await new Promise((r) => setTimeout(r, 200));
    check(up.requests.length === before, `a 200 KB body cut at 100,000 bytes is never forwarded (upstream saw ${up.requests.length - before} requests)`);
  }
  // (1b) The same body in six pieces with pauses between (the read path
  // that copies what was buffered, then reads the rest into the new
  // storage): forwarded byte for byte.
  {
    const b = body(204800, 2);
    const h = head(proxy.url, b);
    const before = up.requests.length;
    const cuts = [0, 3, 4096, 65536, 131072, 204000, b.length];
    const pieces = [h];
    for (let i = 0; i + 1 < cuts.length; ++i) pieces.push(b.slice(cuts[i], cuts[i + 1]), { pause: 30 });
    const got = await raw(proxy.url, pieces);
    const rec = up.requests[before];
    check(/^HTTP\/1\.1 200/.test(got) && rec?.raw === b, `a 200 KB body in six pieces: HTTP ${got.slice(9, 12)}, forwarded ${rec ? (rec.raw === b ? 'byte for byte' : `DIFFERENT (${rec.bodyBytes} bytes)`) : 'nothing'}`);
  }
  // (1c) Two requests pipelined in one write, the second's head and first
  // body bytes already buffered behind the first: both forwarded intact.
  {
    const b1 = body(70000, 3);
    const b2 = body(150000, 4);
    const before = up.requests.length;
    const got = await raw(proxy.url, [head(proxy.url, b1) + b1 + head(proxy.url, b2) + b2.slice(0, 5000), { pause: 50 }, b2.slice(5000)], { responses: 2 });
    const n = (got.match(/HTTP\/1\.1 200/g) ?? []).length;
    const r1 = up.requests[before];
    const r2 = up.requests[before + 1];
    check(n === 2 && r1?.raw === b1 && r2?.raw === b2, `two pipelined bodies (70 KB, 150 KB): ${n} x 200, forwarded intact: ${r1?.raw === b1} / ${r2?.raw === b2}`);
  }
  // (2) Depth verdicts at the 16-byte edges (limit 512).
  const post = async (text) => {
    const before = up.requests.length;
    const got = await raw(proxy.url, [head(proxy.url, text) + text]);
    return { status: Number(got.slice(9, 12)), forwarded: up.requests.length - before, text: got };
  };
  const msg = (inner) => `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"go"}],"metadata":{"x":${inner}}}`;
  for (let pad = 0; pad < 18; ++pad) {
    for (const slashes of [0, 1, 2, 3]) {
      // 600 brackets inside one string, after `pad` bytes and a run of
      // backslashes (an escaped quote after an odd run): inside, they do
      // not count.
      const esc = '\\'.repeat(slashes);
      const inStr = `"${'a'.repeat(pad)}${esc}${slashes % 2 ? '"' : ''}${'['.repeat(600)}"`;
      const r = await post(msg(inStr));
      const ok = r.status === 200 && r.forwarded === 1;
      if (!ok) check(false, `600 '[' inside a string (pad ${pad}, ${slashes} backslashes): HTTP ${r.status}, forwarded ${r.forwarded}`);
      if (slashes % 2 === 0) {
        // 600 brackets outside, after a string that ends at offset `pad`.
        const deep = `["${'a'.repeat(pad)}${esc}",${'['.repeat(600)}${']'.repeat(600)}]`;
        const d = await post(msg(deep));
        const okd = d.status === 400 && d.forwarded === 0 && /depth/.test(d.text);
        if (!okd) check(false, `600 '[' outside after a string (pad ${pad}, ${slashes} backslashes): HTTP ${d.status}, forwarded ${d.forwarded}`);
        if (!okd) continue;
      }
      if (!ok) continue;
    }
  }
  if (failed === 0) check(true, 'brackets inside strings (escaped quotes, backslash runs at offsets 0-17) forwarded; 600 deep outside answered 400 "depth" with nothing forwarded (108 cases)');
  // The proxy is still there.
  const last = await post(body(1000, 5));
  check(last.status === 200, `a plain request afterwards: HTTP ${last.status}`);
} finally {
  await proxy.stop();
  await up.close();
}
if (failed) {
  console.error(`sse200_body_read: ${failed} case(s) failed`);
  process.exit(1);
}
console.log('sse200_body_read: all cases passed');
