// A modern (MCP 2026-07-28) stdio server for the /mcp/<name> tests, built on
// @modelcontextprotocol/server 2.4.0's serveStdio (the era is chosen by the
// opening message; a 2025 `initialize` is served too). Tools:
//   echo {text} -> "echo: <text>" (read-only, closed world; counted)
// Every line received on stdin is appended to the log file.
//
// Usage: node modern_stdio_server.mjs LOG_FILE
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { appendFileSync } from 'node:fs';
import * as z from 'zod';

const log = process.argv[2];
if (log) {
  process.stdin.on('data', (d) => appendFileSync(log, d));
}
serveStdio(() => {
  const server = new McpServer({ name: 'toolcache-modern-stdio-fixture', version: '1.0.0' });
  server.registerTool('echo', {
    description: 'Echoes its text',
    inputSchema: z.object({ text: z.string() }),
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, async ({ text }) => ({ content: [{ type: 'text', text: `echo: ${text}` }] }));
  return server;
});
