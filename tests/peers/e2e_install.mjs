// One MCP session through a server that `toolcache wrap` put behind the
// installed toolcache: reads the wrapped mcpServers file, starts the server
// exactly as a client would (its command looked up on PATH, its args, its
// env), and checks the proxy answers the repeat of a read-only call from
// cache with the same content.
//
// Usage: node e2e_install.mjs CONFIG.json SERVER_NAME
// PATH must find the command the file names. Exit code 0 on success.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const [configPath, name] = process.argv.slice(2);
const server = JSON.parse(readFileSync(configPath, 'utf8')).mcpServers[name];
assert.ok(server, `no server ${name} in ${configPath}`);

const client = new Client({ name: 'toolcache-e2e-install', version: '1.0.0' });
const transport = new StdioClientTransport({
  command: server.command,
  args: server.args,
  env: { ...process.env, ...(server.env ?? {}) },
  stderr: 'inherit',
});
const timer = setTimeout(() => {
  console.error('FAIL: session timed out');
  process.exit(1);
}, 30000);
await client.connect(transport);
const tools = await client.listTools();
assert.ok(tools.tools.some((t) => t.name === 'read_graph'), 'read_graph listed');
await client.callTool({
  name: 'create_entities',
  arguments: { entities: [{ name: 'install', entityType: 'test', observations: ['deb'] }] },
});
const first = await client.callTool({ name: 'read_graph', arguments: {} });
const second = await client.callTool({ name: 'read_graph', arguments: {} });
assert.notEqual(first._meta?.['toolcache/cache']?.hit, true, 'first read_graph is a miss');
assert.equal(second._meta?.['toolcache/cache']?.hit, true, 'second read_graph is a hit');
assert.deepEqual(second.content, first.content);
assert.match(JSON.stringify(first.content), /install/);
await client.close();
clearTimeout(timer);
console.log('PASS wrapped session: tools listed, repeat read_graph served from cache');
