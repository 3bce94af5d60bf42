// A Streamable HTTP MCP server on SDK 1.32.2 with resumability (an event
// store, as the SDK's examples run it). Tool get_doc {uri} returns the doc's
// text. Side channel (plain HTTP on the same port):
//   POST /drop    closes the standalone GET stream (the SDK's polling pattern)
//   POST /change  changes doc://x and sends notifications/resources/updated
// Every GET's Last-Event-ID is printed. Prints "listening PORT".
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { z } from 'zod';
let version = 1;
let transport = null, server = null;
function build() {
  const s = new McpServer({ name: 'resumable', version: '1' }, { capabilities: { resources: { subscribe: true }, tools: {} } });
  s.registerTool('get_doc', { description: 'Get a document by uri', inputSchema: { uri: z.string() }, annotations: { readOnlyHint: true, openWorldHint: false } },
    async ({ uri }) => ({ content: [{ type: 'text', text: `${uri} v${version}` }] }));
  s.registerResource('x', 'doc://x', { mimeType: 'text/plain' }, async (u) => ({ contents: [{ uri: u.href, text: `v${version}` }] }));
  return s;
}
const srv = http.createServer(async (req, res) => {
  if (req.url === '/drop') { transport?.closeStandaloneSSEStream(); res.end('dropped\n'); return; }
  if (req.url === '/change') {
    version += 1;
    await server.server.sendResourceUpdated({ uri: 'doc://x' });
    res.end(`changed to v${version}\n`); return;
  }
  if (req.method === 'GET') console.log(`GET last-event-id=${req.headers['last-event-id'] ?? '(none)'}`);
  let body = '';
  req.on('data', (d) => { body += d; });
  req.on('end', async () => {
    const parsed = body ? JSON.parse(body) : undefined;
    if (parsed?.method === 'initialize') {
      transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), eventStore: new InMemoryEventStore() });
      server = build();
      await server.connect(transport);
    }
    if (!transport) { res.writeHead(400); res.end(); return; }
    await transport.handleRequest(req, res, parsed);
  });
});
srv.listen(0, '127.0.0.1', () => console.log(`listening ${srv.address().port}`));
