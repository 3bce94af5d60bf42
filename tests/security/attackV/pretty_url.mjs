// `toolcache mcp --url` in front of a Streamable HTTP server that answers
// with pretty-printed JSON (application/json, and SSE with multi-line data):
// the stdio client must get one valid JSON-RPC message per line, on the
// miss and on the hit.
import http from 'node:http';
import { spawn } from 'node:child_process';
const BIN = process.env.TOOLCACHE_BIN ?? '/tmp/s18/atk_tc';
const MODE = process.argv[2] ?? 'json';
let n = 0;
const srv = http.createServer((req, res) => {
  let b = ''; req.on('data', (d) => { b += d; }); req.on('end', () => {
    if (req.method !== 'POST') { res.writeHead(405); res.end(); return; }
    const m = JSON.parse(b);
    if (m.id === undefined) { res.writeHead(202); res.end(); return; }
    let result;
    if (m.method === 'initialize') result = { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'p', version: '1' } };
    else if (m.method === 'tools/list') result = { tools: [{ name: 'get_doc', description: 'Get a document by id', inputSchema: { type: 'object', properties: { id: { type: 'string' } } }, annotations: { readOnlyHint: true, openWorldHint: false } }] };
    else if (m.method === 'tools/call') result = { content: [{ type: 'text', text: `doc ${++n}` }] };
    else result = {};
    const text = JSON.stringify({ jsonrpc: '2.0', id: m.id, result }, null, 2);
    const h = { 'mcp-session-id': 's1' };
    if (MODE === 'sse') { res.writeHead(200, { ...h, 'content-type': 'text/event-stream' }); res.end(text.split('\n').map((l) => `data: ${l}`).join('\n') + '\n\n'); }
    else { res.writeHead(200, { ...h, 'content-type': 'application/json' }); res.end(text); }
  });
});
await new Promise((r) => srv.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${srv.address().port}/mcp`;
const p = spawn('taskset', ['-c', '0', BIN, 'mcp', '--no-get-stream', '--url', url], { stdio: ['pipe', 'pipe', 'inherit'] });
process.on('exit', () => p.kill('SIGKILL'));
let out = '';
p.stdout.on('data', (d) => { out += d; });
const send = (o) => p.stdin.write(JSON.stringify(o) + '\n');
send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } });
await new Promise((r) => setTimeout(r, 500));
send({ jsonrpc: '2.0', method: 'notifications/initialized' });
send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
await new Promise((r) => setTimeout(r, 500));
send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_doc', arguments: { id: 'x' } } });
await new Promise((r) => setTimeout(r, 500));
send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_doc', arguments: { id: 'x' } } });
await new Promise((r) => setTimeout(r, 800));
const lines = out.split('\n').filter((l) => l.trim());
let bad = 0; const ids = [];
for (const l of lines) { try { ids.push(JSON.parse(l).id); } catch { bad++; } }
console.log(MODE, 'lines:', lines.length, 'unparsable:', bad, 'ids:', JSON.stringify(ids));
console.log(lines.slice(-2).map((l) => l.slice(0, 160)).join('\n'));
srv.close();
process.exit(bad || !ids.includes(3) ? 1 : 0);
