// Security group "serve_mcp_pooled_raw" (session 18, attackV finding 6):
// serve's stateless (2026-07-28) /mcp/<name> path gives every client's
// request a pooled id of its own. It did so by parsing the request with a
// JSON library and writing it out again, and the answer the same way
// (RestoreId): a number past 64 bits or double precision reached the server
// altered (`123456789012345678901234567890` became `1.2345678901234568e+29`),
// two calls differing only there shared one cache entry (the second was
// served the first's answer), and an id spelled `1e2`, `-0` or past 64 bits
// came back respelled, so the client could not match its answer. Now only
// the id and the progress token are replaced, in place; everything else
// reaches the server and the client byte for byte.
// Real peers: tests/peers/modern_stdio_server.mjs (SDK 2.4.0) logging every
// line it receives.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BIN, SRC, caseRunner, spawnListening } from './lib/common.mjs';

const work = mkdtempSync(join(tmpdir(), 'toolcache-pooled-raw-'));
const childLog = join(work, 'child.log');
writeFileSync(childLog, '');
writeFileSync(join(work, 'serve.yaml'), `tools:\n  echo: {requestType: INFORMATIONAL, ttlSeconds: 600}\nservers:\n  m:\n    command: ${JSON.stringify(
  [process.execPath, join(SRC, 'tests/peers/modern_stdio_server.mjs'), childLog])}\n`);
const serve = await spawnListening(BIN, ['serve', '--listen', '127.0.0.1:0', '--config', join(work, 'serve.yaml'),
  '--log-level', 'error']);
const V = '2026-07-28';
const META = `{"io.modelcontextprotocol/protocolVersion":"${V}","io.modelcontextprotocol/clientCapabilities":{}}`;
// One tools/call of echo, the body written as text (ids and numbers as
// spelled); the answer's text.
async function call(idText, argsText) {
  const body = `{"jsonrpc":"2.0","id":${idText},"method":"tools/call","params":{"name":"echo","arguments":${argsText},"_meta":${META}}}`;
  const r = await fetch(`${serve.url}/mcp/m`, {
    method: 'POST', body,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
      'mcp-protocol-version': V, 'mcp-method': 'tools/call', 'mcp-name': 'echo' },
  });
  assert.equal(r.status, 200, `status for id ${idText}`);
  return r.text();
}
const childLines = () => readFileSync(childLog, 'utf8').split('\n').filter((l) => l.includes('"tools/call"'));
// Whether `fn`'s call reached the server (a miss) or was answered by the
// cache (the child's log gained no tools/call).
async function reached(fn) {
  const before = childLines().length;
  const text = await fn();
  await new Promise((r) => setTimeout(r, 100));
  return { text, reached: childLines().length > before };
}

const { step, finish } = caseRunner('serve_mcp_pooled_raw');
try {
  await step('the server receives the arguments as the client wrote them', async () => {
    const args = '{"text":"t1","amount":1234567.8912345678912345,"account":123456789012345678901234567890,"z":-0,"e":1e2}';
    await call('1', args);
    const line = childLines().at(-1) ?? '';
    assert.ok(line.includes(`"arguments":${args}`), `the child got: ${line}`);
  });
  await step('two integers past 64 bits that differ are two entries', async () => {
    const a = await reached(() => call('2', '{"text":"t2","account":123456789012345678901234567890}'));
    const b = await reached(() => call('3', '{"text":"t2","account":123456789012345678901234567891}'));
    assert.ok(a.reached, `first: ${a.text}`);
    assert.ok(b.reached, `the second account was served the first's entry: ${b.text}`);
    const c = await reached(() => call('4', '{"text":"t2","account":123456789012345678901234567891}'));
    assert.ok(!c.reached, `the same call again is a hit (control): ${c.text}`);
  });
  const ids = ['1e2', '-0', '12345678901234567890123456789', '1.0', '"\\u0041"', '"x"'];
  for (const [i, id] of ids.entries()) {
    await step(`id ${id} comes back as sent (miss and hit)`, async () => {
      const miss = await reached(() => call(id, `{"text":"id-${i}"}`));
      const again = await reached(() => call(id, `{"text":"id-${i}"}`));
      for (const [what, text] of [['miss', miss.text], ['hit', again.text]]) {
        assert.ok(text.includes(`"id":${id},`) || text.includes(`"id":${id}}`), `${what}: ${text.slice(0, 200)}`);
      }
      assert.ok(miss.reached && !again.reached, 'the repeat is a hit (control)');
    });
  }
} finally {
  await serve.stop();
  rmSync(work, { recursive: true, force: true });
}
finish();
