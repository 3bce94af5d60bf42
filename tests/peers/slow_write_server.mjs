// A stdio MCP server on the official SDK 1.32.2: read_note {id}
// (read-only) and write_note {id, text}, whose write lands WRITE_DELAY_MS
// (default 300) after the call arrives, as a slow API's does. Like every
// SDK server, it sends no answer to a request the client cancelled
// (notifications/cancelled), though the write still happens. Used by
// e2e_mcp.mjs ("cancelled write"; from the attackK repro of finding 2).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const delay = Number(process.env.WRITE_DELAY_MS ?? 300);
const notes = new Map([['a', 'v1']]);
const server = new McpServer({ name: 'slow-notes', version: '1.0.0' });
server.registerTool('read_note', {
  description: 'Read a note',
  inputSchema: { id: z.string() },
  annotations: { readOnlyHint: true, openWorldHint: false },
}, async ({ id }) => ({ content: [{ type: 'text', text: `note ${id} = ${notes.get(id) ?? '(none)'}` }] }));
server.registerTool('write_note', {
  description: 'Write a note',
  inputSchema: { id: z.string(), text: z.string() },
  annotations: { readOnlyHint: false, destructiveHint: true },
}, async ({ id, text }) => {
  await new Promise((r) => setTimeout(r, delay));
  notes.set(id, text);
  return { content: [{ type: 'text', text: `wrote ${id}` }] };
});
await server.connect(new StdioServerTransport());
