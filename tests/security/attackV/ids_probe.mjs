// Probe: JSON-RPC ids of odd spelling through serve's pooled 2026 child
// (miss, hit, coalesced): the client must get its id back byte for byte.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
const BIN = process.env.TOOLCACHE_BIN ?? '/tmp/s18/atk_tc';
const here = path.dirname(new URL(import.meta.url).pathname);
const work = mkdtempSync(path.join(tmpdir(), 'atkV-ids-'));
writeFileSync(path.join(work, 'serve.yaml'), `servers:\n  fs:\n    command: ${JSON.stringify([process.execPath, path.join(here, 'notes_server.mjs')])}\n`);
const serve = spawn('taskset', ['-c', '0', BIN, 'serve', '--listen', '127.0.0.1:0', '--config', path.join(work, 'serve.yaml'), '--log-level', 'error'], { stdio: ['ignore', 'pipe', 'inherit'] });
process.on('exit', () => serve.kill('SIGKILL'));
const base = await new Promise((res) => { let o = ''; serve.stdout.on('data', (d) => { o += d; const m = o.match(/listening on (http:\S+)/); if (m) res(m[1]); }); });
const V = '2026-07-28';
const META = `{"io.modelcontextprotocol/protocolVersion":"${V}","io.modelcontextprotocol/clientCapabilities":{}}`;
async function raw(idText, args = '{"id":"a"}') {
  const body = `{"jsonrpc":"2.0","id":${idText},"method":"tools/call","params":{"name":"read_note","arguments":${args},"_meta":${META}}}`;
  const r = await fetch(`${base}/mcp/fs`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': V, 'mcp-method': 'tools/call', 'mcp-name': 'read_note' }, body });
  return `${r.status} ${(await r.text()).slice(0, 200).replace(/\n/g, '\\n')}`;
}
let bad = 0;
for (const id of ['1', '1.0', '1e2', '-0', '12345678901234567890123456789', '"x"', '"\\u0041"', '"a\\"b"', '1E400', 'null', 'true', '{"a":1}', '[1]', '""']) {
  const miss = await raw(id, `{"id":"a${Math.random()}"}`);
  const a = await raw(id); const b = await raw(id);
  const echo = (s) => s.includes(`"id":${id},`) || s.includes(`"id":${id}}`);
  const ok = echo(miss) && echo(b);
  if (!ok) bad++;
  console.log(ok ? 'ok  ' : 'DIFF', id, '| miss:', miss.slice(0, 90), '| hit:', b.slice(0, 90));
}
process.exit(bad ? 1 : 0);
