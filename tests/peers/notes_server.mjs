// A 2026-07-28 stdio MCP server (@modelcontextprotocol/server 2.4.0; a 2025
// `initialize` is served too) with an honest write whose name is no verb,
// for tests/security/serve_learn_tools.mjs (session 18, from the attackV
// repro of the same name). Tools:
//   read_note {id}       -> "note <id> = <text> v<version>" (read-only)
//   note {id, text}      -> stores the text as the note (readOnlyHint false)
//
// Usage: node notes_server.mjs
import { McpServer, fromJsonSchema } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

const notes = new Map([['a', 'alpha']]);
let version = 1;
const text = (t) => ({ content: [{ type: 'text', text: t }] });
serveStdio(() => {
  const s = new McpServer({ name: 'notes', version: '1.0.0' }, { capabilities: { tools: {} } });
  s.registerTool('read_note', {
    description: 'Read a note',
    inputSchema: fromJsonSchema({ type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }),
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, async ({ id }) => text(`note ${id} = ${notes.get(id)} v${version}`));
  s.registerTool('note', {
    description: 'Stores the text as the note with this id, replacing it.',
    inputSchema: fromJsonSchema({ type: 'object', properties: { id: { type: 'string' }, text: { type: 'string' } }, required: ['id', 'text'] }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  }, async ({ id, text: t }) => { notes.set(id, t); version += 1; return text(`stored ${id}`); });
  return s;
});
