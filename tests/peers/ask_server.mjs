// A 2025-era MCP server (@modelcontextprotocol/sdk 1.x) whose tools ask the
// client while a call runs, for tests/security/mcp_client_input.mjs
// (session 19). Both tools are declared read-only, so a cache would keep
// their answers; each answer depends on what the client answered:
//   read_secret {name} -> elicitation/create "Show secret <name>?": the
//                         secret when the user accepts with ok=true, else
//                         "not confirmed"
//   summarize {topic}  -> sampling/createMessage: the client's LLM's text
// The server's requests go on the call's own stream (relatedRequestId), as
// the SDK's own tool callbacks send them.
//
// Usage: node ask_server.mjs (stdio); or import { askServer } and connect
// it to another transport.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const text = (t) => ({ content: [{ type: 'text', text: t }] });
const readOnly = { readOnlyHint: true, openWorldHint: false };

export function askServer() {
  const s = new McpServer({ name: 'ask', version: '1.0.0' }, { capabilities: { tools: {} } });
  s.registerTool('read_secret', {
    description: 'Read a secret once the user confirms',
    inputSchema: { name: z.string() },
    annotations: readOnly,
  }, async ({ name }, extra) => {
    const r = await s.server.elicitInput({
      message: `Show secret ${name}?`,
      requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
    }, { relatedRequestId: extra.requestId });
    const ok = r.action === 'accept' && r.content?.ok === true;
    return text(ok ? `secret ${name} = SECRET_${name}` : `secret ${name}: not confirmed`);
  });
  s.registerTool('summarize', {
    description: 'Summarize a topic',
    inputSchema: { topic: z.string() },
    annotations: readOnly,
  }, async ({ topic }, extra) => {
    const r = await s.server.createMessage({
      messages: [{ role: 'user', content: { type: 'text', text: `Summarize ${topic}` } }],
      maxTokens: 50,
    }, { relatedRequestId: extra.requestId });
    return text(`summary of ${topic}: ${r.content?.text ?? ''}`);
  });
  return s;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await askServer().connect(new StdioServerTransport());
}
