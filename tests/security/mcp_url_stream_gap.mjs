// Security group "mcp_url_stream_gap" (session 18, attackV finding 7):
// `toolcache mcp --url` hears a server's notifications on the GET event
// stream. When the server closes it (the SDK's closeStandaloneSSEStream
// polling pattern, a proxy's idle timeout, a network blip) the proxy
// reopens it after a second, and a notifications/resources/updated sent in
// between was lost: the proxy kept serving the old read after the server
// had announced the change. Now a stream that cannot be resumed by event id
// invalidates the server's entries when the server ends it and again when a fresh one
// opens; one the server resumes (Last-Event-ID, an event store) delivers
// the notification itself.
// Real peers: the official MCP SDK's Streamable HTTP server, with and
// without an event store, from tests/peers/node_modules.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { killOnExit } from '../support/kill_on_exit.mjs';
import { BIN, SRC, caseRunner } from './lib/common.mjs';

const mods = join(SRC, 'tests/peers/node_modules');
const sdk = (rel) => import(pathToFileURL(join(mods, '@modelcontextprotocol/sdk/dist/esm', rel)));
const { McpServer } = await sdk('server/mcp.js');
const { StreamableHTTPServerTransport } = await sdk('server/streamableHttp.js');
const { InMemoryEventStore } = await sdk('examples/shared/inMemoryEventStore.js');
const { z } = await import(pathToFileURL(join(mods, 'zod/index.js')));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A server whose tool get_doc {uri} returns "<uri> v<version>". drop()
// closes its standalone GET stream; change() bumps the version and sends
// notifications/resources/updated.
async function docServer(eventStore) {
  let version = 1;
  let transport = null;
  let server = null;
  const gets = [];
  const srv = http.createServer((req, res) => {
    if (req.method === 'GET') gets.push(req.headers['last-event-id'] ?? '');
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', async () => {
      const parsed = body ? JSON.parse(body) : undefined;
      if (parsed?.method === 'initialize') {
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          ...(eventStore ? { eventStore: new InMemoryEventStore() } : {}),
        });
        server = new McpServer({ name: 'docs', version: '1' }, { capabilities: { resources: { subscribe: true }, tools: {} } });
        server.registerTool('get_doc', { description: 'Get a document by uri', inputSchema: { uri: z.string() },
          annotations: { readOnlyHint: true, openWorldHint: false } },
        async ({ uri }) => ({ content: [{ type: 'text', text: `${uri} v${version}` }] }));
        await server.connect(transport);
      }
      if (!transport) { res.writeHead(400); res.end(); return; }
      await transport.handleRequest(req, res, parsed);
    });
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${srv.address().port}/mcp`,
    gets,
    drop: () => transport.closeStandaloneSSEStream(),
    change: async () => { version += 1; await server.server.sendResourceUpdated({ uri: 'doc://x' }); },
    close: () => srv.close(),
  };
}

// A `toolcache mcp --url` process spoken to line by line.
function proxyTo(url) {
  const p = killOnExit(spawn(BIN, ['mcp', '--url', url, '--log-level', 'info'], { stdio: ['pipe', 'pipe', 'pipe'] }));
  let log = '';
  p.stderr.on('data', (d) => { log += d; });
  let buf = '';
  const got = new Map();
  p.stdout.on('data', (d) => {
    buf += d;
    for (let i; (i = buf.indexOf('\n')) >= 0;) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (line.trim()) { const m = JSON.parse(line); if (m.id !== undefined) got.set(m.id, m); }
    }
  });
  const send = (o) => p.stdin.write(`${JSON.stringify(o)}\n`);
  let next = 10;
  const req = async (method, params) => {
    const id = next++;
    send({ jsonrpc: '2.0', id, method, params });
    for (let i = 0; i < 400 && !got.has(id); i++) await sleep(25);
    assert.ok(got.has(id), `no answer to ${method}; log: ${log}`);
    return got.get(id);
  };
  const read = async () => {
    const m = await req('tools/call', { name: 'get_doc', arguments: { uri: 'doc://x' } });
    return { text: m.result?.content?.[0]?.text, hit: m.result?._meta?.['toolcache/cache']?.hit === true };
  };
  const stop = async () => { p.stdin.end(); await new Promise((r) => p.on('exit', r)); };
  return { send, req, read, stop, log: () => log };
}

async function gapCase(eventStore) {
  const server = await docServer(eventStore);
  const proxy = proxyTo(server.url);
  try {
    await proxy.req('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'gap', version: '1' } });
    proxy.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await proxy.req('tools/list', {});
    for (let i = 0; i < 200 && server.gets.length < 1; i++) await sleep(25);
    assert.ok(server.gets.length >= 1, 'the proxy opened the GET stream');
    await sleep(200);
    assert.equal((await proxy.read()).text, 'doc://x v1');
    const cached = await proxy.read();
    assert.ok(cached.hit, 'the read is cached while nothing changes (control)');
    // 1. The change is announced while the stream is closed: the next read
    //    (before the proxy reconnects) must not be the old answer.
    server.drop();
    await sleep(100);
    await server.change();
    const r1 = await proxy.read();
    console.log(`  eventStore=${eventStore}: read in the gap after the change: ${r1.text} hit=${r1.hit}`);
    assert.equal(r1.text, 'doc://x v2', 'a read after the announced change (stream closed) is fresh');
    // 2. Read in the gap, then the change, then wait for the reconnect:
    //    the entry stored in the gap must not outlive the lost notification.
    for (let i = 0; i < 200 && server.gets.length < 2; i++) await sleep(25);
    await sleep(300);
    server.drop();
    await sleep(100);
    await proxy.read();  // v2, stored in the gap
    await server.change();
    const before = server.gets.length;
    for (let i = 0; i < 200 && server.gets.length <= before; i++) await sleep(25);
    await sleep(300);
    const r2 = await proxy.read();
    console.log(`  eventStore=${eventStore}: read after the reconnect: ${r2.text} hit=${r2.hit}; GETs ${JSON.stringify(server.gets)}`);
    assert.equal(r2.text, 'doc://x v3', 'a read after the reconnect is fresh');
  } finally {
    await proxy.stop();
    server.close();
  }
}

const { step, finish } = caseRunner('mcp_url_stream_gap');
await step('a GET stream without event ids: the gap invalidates', () => gapCase(false));
await step('a GET stream with an event store: resumed or invalidated, never stale', () => gapCase(true));
finish();
