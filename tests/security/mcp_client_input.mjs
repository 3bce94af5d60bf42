// Security group "mcp_client_input" (session 19): a 2025-era server may ask
// the client while a tools/call runs -- elicitation/create (the user
// confirms or types something), sampling/createMessage (the client's LLM
// writes) -- and its answer then depends on what the client answered, not
// only on the call's arguments. Before: such an answer was stored under
// the call's key like any read, so the next identical call was answered
// from the cache without the user being asked: a confirmation never given
// (the user declines the second time and still sees the secret), another
// session's choice (serve, one tenant), another LLM's text.
// Now: a call during which the server asked the client is forwarded and
// answered as usual but never stored nor shared (bypass reason
// server_requested_input), so the client is asked every time.
// Real peers: the official MCP SDK 1.x client and a small SDK server
// (tests/peers/ask_server.mjs), from tests/peers/node_modules.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { killOnExit } from '../support/kill_on_exit.mjs';
import { BIN, SRC, caseRunner } from './lib/common.mjs';

const peers = join(SRC, 'tests/peers');
const sdk = (rel) => import(pathToFileURL(join(peers, 'node_modules/@modelcontextprotocol/sdk/dist/esm', rel)));
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const { StreamableHTTPServerTransport } = await sdk('server/streamableHttp.js');
const { ElicitRequestSchema, CreateMessageRequestSchema } = await sdk('types.js');
const { askServer } = await import(pathToFileURL(join(peers, 'ask_server.mjs')));
const ASK = join(peers, 'ask_server.mjs');
const work = mkdtempSync(join(tmpdir(), 'toolcache-client-input-'));
const text = (r) => r.content?.[0]?.text ?? JSON.stringify(r);
const hit = (r) => r._meta?.['toolcache/cache']?.hit === true;

// A client whose user answers the confirmations from `confirms` in turn
// (true: accept with ok) and whose LLM writes the texts of `writes` in
// turn; `asked` counts the server's requests it got.
async function connect(transport, { confirms = [], writes = [] } = {}) {
  const c = new Client({ name: 'asked', version: '1' }, { capabilities: { elicitation: { form: {} }, sampling: {} } });
  c.asked = 0;
  c.setRequestHandler(ElicitRequestSchema, async () => {
    c.asked++;
    return confirms.shift() ? { action: 'accept', content: { ok: true } } : { action: 'decline' };
  });
  c.setRequestHandler(CreateMessageRequestSchema, async () => {
    c.asked++;
    return { role: 'assistant', model: 'm', content: { type: 'text', text: writes.shift() ?? 'none' } };
  });
  await c.connect(transport);
  return c;
}

// The user confirms once, then declines: the second identical call must
// ask again and show nothing.
async function confirmThenDecline(c) {
  const first = await c.callTool({ name: 'read_secret', arguments: { name: 'x' } });
  assert.equal(text(first), 'secret x = SECRET_x', 'the confirmed call');
  const second = await c.callTool({ name: 'read_secret', arguments: { name: 'x' } });
  assert.ok(!hit(second), `the second call was answered from the cache (user asked ${c.asked} time(s)): ${text(second)}`);
  assert.equal(c.asked, 2, 'the user was not asked the second time');
  assert.equal(text(second), 'secret x: not confirmed', 'a declined confirmation showed the secret');
}

// The client's LLM writes another text the second time: it must be asked.
async function sampleTwice(c) {
  const first = await c.callTool({ name: 'summarize', arguments: { topic: 't' } });
  assert.equal(text(first), 'summary of t: alpha');
  const second = await c.callTool({ name: 'summarize', arguments: { topic: 't' } });
  assert.ok(!hit(second), `the second summary came from the cache: ${text(second)}`);
  assert.equal(text(second), 'summary of t: beta', 'the client\'s LLM was not asked again');
}

const stdioProxy = () => new StdioClientTransport({
  command: BIN, args: ['mcp', '--name', 'ask', '--', process.execPath, ASK], stderr: 'ignore',
});

// A Streamable HTTP server (one SDK session per initialize) running
// askServer, for `toolcache mcp --url`.
async function httpAskServer() {
  const transports = new Map();
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', async () => {
      const parsed = body ? JSON.parse(body) : undefined;
      let t = transports.get(req.headers['mcp-session-id']);
      if (!t && parsed?.method === 'initialize') {
        t = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => transports.set(id, t),
        });
        await askServer().connect(t);
      }
      if (!t) { res.writeHead(400); res.end(); return; }
      await t.handleRequest(req, res, parsed);
    });
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${srv.address().port}/mcp`, close: () => srv.close() };
}

const t = caseRunner('mcp_client_input');
await t.step('toolcache mcp: a declined confirmation is asked, not served', async () => {
  const c = await connect(stdioProxy(), { confirms: [true, false] });
  try { await confirmThenDecline(c); } finally { await c.close(); }
});
await t.step('toolcache mcp: the client\'s LLM writes each summary', async () => {
  const c = await connect(stdioProxy(), { writes: ['alpha', 'beta'] });
  try { await sampleTwice(c); } finally { await c.close(); }
});
await t.step('toolcache mcp --url: a declined confirmation is asked, not served', async () => {
  const up = await httpAskServer();
  const c = await connect(new StdioClientTransport({ command: BIN, args: ['mcp', '--url', up.url], stderr: 'ignore' }),
    { confirms: [true, false] });
  try { await confirmThenDecline(c); } finally { await c.close(); up.close(); }
});
await t.step('serve /mcp/ask: one tenant\'s second session is asked itself', async () => {
  const dir = mkdtempSync(join(work, 'serve-'));
  writeFileSync(join(dir, 'serve.yaml'), `servers:\n  ask:\n    command: ${JSON.stringify([process.execPath, ASK])}\n` +
    'serve:\n  tenants:\n    acme: {token: tok-acme}\n');
  const serve = killOnExit(spawn(BIN, ['serve', '--listen', '127.0.0.1:0', '--config', join(dir, 'serve.yaml'), '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'inherit'] }));
  try {
    const url = await new Promise((res, rej) => {
      let buf = '';
      serve.stdout.on('data', (d) => { buf += d; const m = buf.match(/listening on (http:\/\/\S+)/); if (m) res(m[1]); });
      serve.on('exit', (code) => rej(new Error(`serve exited ${code}`)));
    });
    const opts = { requestInit: { headers: { authorization: 'Bearer tok-acme' } } };
    const A = await connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp/ask`), opts), { confirms: [true] });
    const B = await connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp/ask`), opts), { confirms: [false] });
    try {
      const a = await A.callTool({ name: 'read_secret', arguments: { name: 'x' } });
      assert.equal(text(a), 'secret x = SECRET_x', 'A confirmed');
      const b = await B.callTool({ name: 'read_secret', arguments: { name: 'x' } });
      assert.ok(!hit(b), `B was served A's confirmed answer: ${text(b)}`);
      assert.equal(B.asked, 1, 'B\'s user was never asked');
      assert.equal(text(b), 'secret x: not confirmed', 'B declined and saw the secret');
    } finally { await A.close(); await B.close(); }
  } finally {
    serve.kill('SIGTERM');
  }
});
t.finish();
process.exit(0);
