// Usage: node capture.mjs OUT.json -- CMD ARGS...   (env: extra vars via EXTRA_ENV json)
// Starts an MCP server over stdio, sends initialize + tools/list (following
// nextCursor), writes {"tools":[...]} to OUT.json.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
const out = process.argv[2];
const cmd = process.argv.slice(4);
const env = { ...process.env, ...(process.env.EXTRA_ENV ? JSON.parse(process.env.EXTRA_ENV) : {}) };
const child = spawn(cmd[0], cmd.slice(1), { env, stdio: ['pipe', 'pipe', 'pipe'] });
let buf = '';
let stderr = '';
const pending = new Map();
let nextId = 1;
child.stderr.on('data', d => { stderr += d; });
child.stdout.on('data', d => {
  buf += d;
  let i;
  while ((i = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, i).trim(); buf = buf.slice(i + 1);
    if (!line) continue;
    let m; try { m = JSON.parse(line); } catch { continue; }
    if (m.id !== undefined && pending.has(m.id)) { pending.get(m.id)(m); pending.delete(m.id); }
  }
});
function req(method, params) {
  const id = nextId++;
  child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
  return new Promise(res => pending.set(id, res));
}
const timer = setTimeout(() => { console.error('TIMEOUT\n' + stderr.slice(-2000)); child.kill('SIGKILL'); process.exit(1); }, 60000);
child.on('exit', c => { console.error('server exited ' + c + '\n' + stderr.slice(-2000)); process.exit(1); });
const init = await req('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'toolcache-capture', version: '1' } });
if (init.error) { console.error('init error', JSON.stringify(init.error)); process.exit(1); }
child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
let tools = []; let cursor;
do {
  const r = await req('tools/list', cursor ? { cursor } : {});
  if (r.error) { console.error('tools/list error', JSON.stringify(r.error)); process.exit(1); }
  tools = tools.concat(r.result.tools); cursor = r.result.nextCursor;
} while (cursor);
fs.writeFileSync(out, JSON.stringify({ serverInfo: init.result.serverInfo, tools }, null, 1));
console.log(`${tools.length} tools, server ${JSON.stringify(init.result.serverInfo)}`);
clearTimeout(timer);
child.removeAllListeners('exit');
child.kill('SIGKILL');
process.exit(0);
