// A modern (MCP 2026-07-28) Streamable HTTP server for the `toolcache mcp
// --url` tests, built on @modelcontextprotocol/server 2.4.0 and
// @modelcontextprotocol/node 2.1.2 with createMcpHandler (its default
// `legacy: 'stateless'` also answers 2025-era clients). Tools:
//   echo {text}   -> "echo: <text>" (read-only; counted)
//   bump {}       -> increments a counter (a write)
// Every POST's method and headers are appended to the log file as one JSON
// line, so the tests see what the server received.
//
// Usage: node modern_http_server.mjs LOG_FILE   (prints "listening on URL")
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createServer } from 'node:http';
import { appendFileSync } from 'node:fs';
import * as z from 'zod';

const log = process.argv[2];
let bumps = 0;
function factory() {
  const server = new McpServer({ name: 'toolcache-modern-fixture', version: '1.0.0' });
  server.registerTool('echo', {
    description: 'Echoes its text',
    inputSchema: z.object({ text: z.string() }),
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, async ({ text }) => ({ content: [{ type: 'text', text: `echo: ${text}` }] }));
  server.registerTool('bump', {
    description: 'Increments a counter',
    inputSchema: z.object({}),
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  }, async () => {
    bumps += 1;
    return { content: [{ type: 'text', text: `bumps: ${bumps}` }] };
  });
  return server;
}
const handler = toNodeHandler(createMcpHandler(factory));
const http = createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = Buffer.concat(chunks).toString('utf8');
  let method = null;
  try { method = JSON.parse(body).method ?? null; } catch { /* not JSON */ }
  if (log) {
    appendFileSync(log, JSON.stringify({
      http: req.method, method, body,
      version: req.headers['mcp-protocol-version'] ?? null,
      mcpMethod: req.headers['mcp-method'] ?? null,
      mcpName: req.headers['mcp-name'] ?? null,
      session: req.headers['mcp-session-id'] ?? null,
    }) + '\n');
  }
  await handler(req, res, body ? JSON.parse(body) : undefined);
});
http.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${http.address().port}/mcp`);
});
process.on('SIGTERM', () => process.exit(0));
