// A stdio MCP server exposing what the @modelcontextprotocol/conformance
// suite's server scenarios (v0.1.16) call: tools test_*, resources test://*,
// prompts test_*, logging/setLevel, completion/complete. toolcache serve
// fronts it at /mcp/fixture (tests/e2e_mcp_conformance.sh), so the suite
// runs against toolcache's Streamable HTTP endpoint, not against an SDK
// server. Written for toolcache from the scenario descriptions (the suite's
// examples/servers/typescript/everything-server.ts is an HTTP server on the
// high-level McpServer; this one is stdio on the low-level Server, with plain
// JSON Schemas).
//
// Usage: node conformance_fixture.mjs
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

// A 1x1 PNG and a minimal WAV (the suite only checks type and mimeType).
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const EMPTY = { type: 'object', properties: {} };

const server = new Server(
  { name: 'toolcache-conformance-fixture', version: '1.0.0' },
  {
    capabilities: {
      tools: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      logging: {},
      completions: {},
    },
  },
);

const text = (t) => ({ content: [{ type: 'text', text: t }] });
const subscriptions = new Set();

async function elicit(params) {
  try {
    const r = await server.request({ method: 'elicitation/create', params }, ElicitResultSchema);
    return text(`Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
  } catch (e) {
    return text(`Elicitation not supported or error: ${e.message}`);
  }
}

// name -> [description, inputSchema, handler(args, extra)]
const TOOLS = {
  test_simple_text: ['Tests simple text content response', EMPTY,
    async () => text('This is a simple text response for testing.')],
  test_image_content: ['Tests image content response', EMPTY,
    async () => ({ content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] })],
  test_audio_content: ['Tests audio content response', EMPTY,
    async () => ({ content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] })],
  test_embedded_resource: ['Tests embedded resource content response', EMPTY,
    async () => ({
      content: [{
        type: 'resource',
        resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
      }],
    })],
  test_multiple_content_types: ['Tests response with multiple content types (text, image, resource)', EMPTY,
    async () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: PNG, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: JSON.stringify({ test: 'data', value: 123 }) },
        },
      ],
    })],
  test_tool_with_logging: ['Tests tool that emits log messages during execution', EMPTY,
    async (_a, extra) => {
      for (const data of ['Tool execution started', 'Tool processing data', 'Tool execution completed']) {
        await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data } });
        await sleep(50);
      }
      return text('Tool with logging executed successfully');
    }],
  test_tool_with_progress: ['Tests tool that reports progress notifications', EMPTY,
    async (_a, extra) => {
      const progressToken = extra._meta?.progressToken ?? 0;
      for (const progress of [0, 50, 100]) {
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress, total: 100, message: `Completed step ${progress} of 100` },
        });
        await sleep(50);
      }
      return text(String(progressToken));
    }],
  test_error_handling: ['Tests error response handling', EMPTY,
    async () => ({ isError: true, content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }] })],
  test_sampling: ['Tests server-initiated sampling (LLM completion request)',
    { type: 'object', properties: { prompt: { type: 'string', description: 'The prompt to send to the LLM' } }, required: ['prompt'] },
    async (a) => {
      try {
        const r = await server.request({
          method: 'sampling/createMessage',
          params: { messages: [{ role: 'user', content: { type: 'text', text: a.prompt } }], maxTokens: 100 },
        }, CreateMessageResultSchema);
        return text(`LLM response: ${r.content?.text ?? 'No response'}`);
      } catch (e) {
        return text(`Sampling not supported or error: ${e.message}`);
      }
    }],
  test_elicitation: ['Tests server-initiated elicitation (user input request)',
    { type: 'object', properties: { message: { type: 'string', description: 'The message to show the user' } }, required: ['message'] },
    async (a) => elicit({
      message: a.message,
      requestedSchema: { type: 'object', properties: { response: { type: 'string', description: "User's response" } }, required: ['response'] },
    })],
  test_elicitation_sep1034_defaults: ['Tests elicitation with default values per SEP-1034', EMPTY,
    async () => elicit({
      message: 'Please review and update the form fields with defaults',
      requestedSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'User name', default: 'John Doe' },
          age: { type: 'integer', description: 'User age', default: 30 },
          score: { type: 'number', description: 'User score', default: 95.5 },
          status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
          verified: { type: 'boolean', description: 'Verification status', default: true },
        },
        required: [],
      },
    })],
  test_elicitation_sep1330_enums: ['Tests elicitation with enum schema improvements per SEP-1330', EMPTY,
    async () => elicit({
      message: 'Please select options from the enum fields',
      requestedSchema: {
        type: 'object',
        properties: {
          untitledSingle: { type: 'string', description: 'Select one option', enum: ['option1', 'option2', 'option3'] },
          titledSingle: {
            type: 'string', description: 'Select one option with titles',
            oneOf: [{ const: 'value1', title: 'First Option' }, { const: 'value2', title: 'Second Option' }, { const: 'value3', title: 'Third Option' }],
          },
          legacyEnum: {
            type: 'string', description: 'Select one option (legacy)', enum: ['opt1', 'opt2', 'opt3'],
            enumNames: ['Option One', 'Option Two', 'Option Three'],
          },
          untitledMulti: {
            type: 'array', description: 'Select multiple options', minItems: 1, maxItems: 3,
            items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
          },
          titledMulti: {
            type: 'array', description: 'Select multiple options with titles', minItems: 1, maxItems: 3,
            items: { anyOf: [{ const: 'value1', title: 'First Choice' }, { const: 'value2', title: 'Second Choice' }, { const: 'value3', title: 'Third Choice' }] },
          },
        },
        required: [],
      },
    })],
  json_schema_2020_12_tool: ['Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)',
    {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
      properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
      additionalProperties: false,
    },
    async (a) => text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(a)}`)],
};

server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: Object.entries(TOOLS).map(([name, [description, inputSchema]]) => ({ name, description, inputSchema })),
}));
server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
  const tool = TOOLS[req.params.name];
  if (!tool) return { isError: true, content: [{ type: 'text', text: `Unknown tool: ${req.params.name}` }] };
  return tool[2](req.params.arguments ?? {}, { ...extra, _meta: req.params._meta });
});

const RESOURCES = {
  'test://static-text': ['static-text', 'text/plain', { text: 'This is the content of the static text resource.' }],
  'test://static-binary': ['static-binary', 'image/png', { blob: PNG }],
  'test://watched-resource': ['watched-resource', 'text/plain', { text: 'Watched resource content' }],
};
server.setRequestHandler(ListResourcesRequestSchema, async () => ({
  resources: Object.entries(RESOURCES).map(([uri, [name, mimeType]]) => ({ uri, name, mimeType })),
}));
server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
  resourceTemplates: [{ uriTemplate: 'test://template/{id}/data', name: 'template', mimeType: 'application/json' }],
}));
server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
  const { uri } = req.params;
  const r = RESOURCES[uri];
  if (r) return { contents: [{ uri, mimeType: r[1], ...r[2] }] };
  const m = /^test:\/\/template\/([^/]+)\/data$/.exec(uri);
  if (m) {
    return {
      contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ id: m[1], templateTest: true, data: `Data for ID: ${m[1]}` }) }],
    };
  }
  throw new Error(`Resource not found: ${uri}`);
});
server.setRequestHandler(SubscribeRequestSchema, async (req) => {
  subscriptions.add(req.params.uri);
  return {};
});
server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
  subscriptions.delete(req.params.uri);
  return {};
});

const IMAGE_MSG = { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } };
const PROMPTS = {
  test_simple_prompt: [[], () => [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
    'A simple prompt without arguments'],
  test_prompt_with_arguments: [
    [{ name: 'arg1', description: 'First test argument', required: true }, { name: 'arg2', description: 'Second test argument', required: true }],
    (a) => [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${a.arg1}', arg2='${a.arg2}'` } }],
    'A prompt with required arguments'],
  test_prompt_with_embedded_resource: [
    [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
    (a) => [
      { role: 'user', content: { type: 'resource', resource: { uri: a.resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
      { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
    ], 'A prompt that includes an embedded resource'],
  test_prompt_with_image: [[], () => [IMAGE_MSG, { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } }],
    'A prompt that includes image content'],
};
server.setRequestHandler(ListPromptsRequestSchema, async () => ({
  prompts: Object.entries(PROMPTS).map(([name, [args, , description]]) => ({ name, description, arguments: args })),
}));
server.setRequestHandler(GetPromptRequestSchema, async (req) => {
  const p = PROMPTS[req.params.name];
  if (!p) throw new Error(`Unknown prompt: ${req.params.name}`);
  return { messages: p[1](req.params.arguments ?? {}) };
});
server.setRequestHandler(SetLevelRequestSchema, async () => ({}));
server.setRequestHandler(CompleteRequestSchema, async () => ({ completion: { values: [], total: 0, hasMore: false } }));

await server.connect(new StdioServerTransport());
