// A stdio MCP server on the official SDK 1.32.2 (tests/peers/node_modules):
// read_note {id} (read-only) and write_note {id, text}, whose write lands
// WRITE_DELAY_MS (default 300) after the call arrives, as a slow API's
// does. Like every SDK server, it sends no answer to a request the client
// cancelled (notifications/cancelled), though the write still happens.
// Used by tests/security/attackK/mcp_cancelled_write.mjs.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const peers = join(dirname(fileURLToPath(import.meta.url)), '../../peers/');
const require = createRequire(peers);
const { McpServer } = await import(require.resolve('@modelcontextprotocol/sdk/server/mcp.js'));
const { StdioServerTransport } = await import(require.resolve('@modelcontextprotocol/sdk/server/stdio.js'));
const { z } = await import(require.resolve('zod'));

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
