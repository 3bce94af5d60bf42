// A stdio MCP server on the official SDK 2.4.0 (@modelcontextprotocol/server),
// which speaks both MCP 2026-07-28 (per-request envelope, server/discover,
// ttlMs/cacheScope, input_required) and the 2025 era (initialize), chosen by
// the client's first message (serveStdio). Written for toolcache's era tests
// (tests/peers/e2e_mcp_era.mjs):
//   tools     read_note {id}    read-only, closed world: "note <id> = <text>"
//             write_note {id, text}  a write
//             confirm_delete {id}    multi round-trip: input_required (an
//                               elicitation and a requestState) until the
//                               retry carries the answer
//             add_tool {name}   registers a read-only tool <name>: the SDK
//                               announces notifications/tools/list_changed
//   resources note://a          private, ttlMs NOTE_TTL_MS (default 1500)
//             doc://public      public, ttlMs 60000
//   prompts   greet
//   hints     tools/list public 1500 ms, prompts/list public 60 s,
//             resources/list private 60 s, server/discover public 60 s
// Every answer names the note's version, so a test can tell a cached answer
// from a fresh one; requests are counted by tests/peers/tee.js.
//
// Usage: node modern_fixture.mjs
import { McpServer, fromJsonSchema, inputRequired } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

const NOTE_TTL_MS = Number(process.env.NOTE_TTL_MS ?? 1500);
const notes = new Map([['a', 'alpha'], ['b', 'beta']]);
let version = 1;
const text = (t) => ({ content: [{ type: 'text', text: t }] });

function build() {
  const server = new McpServer(
    { name: 'toolcache-modern-fixture', version: '1.0.0' },
    {
      capabilities: { tools: {}, resources: {}, prompts: {} },
      cacheHints: {
        'tools/list': { ttlMs: 1500, cacheScope: 'public' },
        'prompts/list': { ttlMs: 60000, cacheScope: 'public' },
        'resources/list': { ttlMs: 60000, cacheScope: 'private' },
        'server/discover': { ttlMs: 60000, cacheScope: 'public' },
      },
    },
  );
  server.registerTool('read_note', {
    description: 'Read a note',
    inputSchema: fromJsonSchema({
      type: 'object', properties: { id: { type: 'string' } }, required: ['id'],
    }),
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, async ({ id }) => text(`note ${id} = ${notes.get(id) ?? '(none)'} v${version}`));
  server.registerTool('write_note', {
    description: 'Write a note',
    inputSchema: fromJsonSchema({
      type: 'object',
      properties: { id: { type: 'string' }, text: { type: 'string' } },
      required: ['id', 'text'],
    }),
    annotations: { readOnlyHint: false, destructiveHint: false },
  }, async ({ id, text: t }) => {
    notes.set(id, t);
    version += 1;
    return text(`wrote ${id}`);
  });
  server.registerTool('confirm_delete', {
    description: 'Delete a note after confirmation',
    inputSchema: fromJsonSchema({
      type: 'object', properties: { id: { type: 'string' } }, required: ['id'],
    }),
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, async ({ id }, ctx) => {
    const answer = ctx.mcpReq.inputResponses?.confirm;
    if (answer === undefined) {
      return inputRequired({
        inputRequests: {
          confirm: inputRequired.elicit({
            message: `Delete ${id}?`,
            requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
          }),
        },
        requestState: `pending-${id}`,
      });
    }
    return text(`confirmed ${id} v${version}`);
  });
  server.registerTool('add_tool', {
    description: 'Add a tool named by the argument (announces tools/list_changed)',
    inputSchema: fromJsonSchema({
      type: 'object', properties: { name: { type: 'string' } }, required: ['name'],
    }),
    annotations: { readOnlyHint: false },
  }, async ({ name }) => {
    server.registerTool(name, {
      description: 'An added read',
      annotations: { readOnlyHint: true, openWorldHint: false },
    }, async () => text(`${name} v${version}`));
    return text(`added ${name}`);
  });
  server.registerResource('note-a', 'note://a', {
    mimeType: 'text/plain', cacheHint: { ttlMs: NOTE_TTL_MS, cacheScope: 'private' },
  }, async (uri) => ({
    contents: [{ uri: uri.href, text: `${notes.get('a')} v${version}` }],
  }));
  server.registerResource('doc-public', 'doc://public', {
    mimeType: 'text/plain', cacheHint: { ttlMs: 60000, cacheScope: 'public' },
  }, async (uri) => ({ contents: [{ uri: uri.href, text: `public v${version}` }] }));
  server.registerPrompt('greet', { description: 'Greet' }, async () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'hello' } }],
  }));
  return server;
}

serveStdio(() => build());
