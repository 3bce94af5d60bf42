#!/usr/bin/env node
// fault_relay.mjs MODE -- <real MCP server command...>
//
// Sits between `toolcache mcp` and a real MCP server (the server's side of
// the proxy) for fuzz/drills/mcp_proxy_drills.mjs. Client->server bytes pass
// unchanged; server->client lines pass unchanged except for the fault MODE:
//
//   garbage      before every response of the server, writes one garbage
//                line (cycling: binary bytes, truncated JSON, prose, a
//                response to an id nobody sent, a bare array, a line of
//                invalid UTF-8, 100 KB of junk); every 4th tools/call
//                response is itself replaced by a truncated one (not JSON,
//                but its id comes first, so the proxy can tell whose it is).
//   close-after=N  after the server's N-th tools/call response, closes its
//                stdout (the proxy's server output ends) while the server
//                keeps running; the relay exits when the proxy closes its
//                stdin.
//
// The real server's pid is written to $FAULT_PID_FILE when set (so a drill
// can kill it mid-call); the relay exits with the server's status and passes
// SIGTERM/SIGINT/SIGHUP on, like tests/peers/tee.js.
import { spawn } from 'node:child_process';
import { closeSync, writeFileSync } from 'node:fs';

const [mode, sep, cmd, ...args] = process.argv.slice(2);
if (!mode || sep !== '--' || !cmd) {
  process.stderr.write('usage: fault_relay.mjs MODE -- <command> [args...]\n');
  process.exit(2);
}
const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });
if (process.env.FAULT_PID_FILE) writeFileSync(process.env.FAULT_PID_FILE, String(child.pid));
process.stdin.pipe(child.stdin);
child.stdin.on('error', () => {});
process.stdout.on('error', () => {});

const GARBAGE = [
  Buffer.from([0x00, 0xff, 0xfe, 0x20, 0x01, 0x80]),
  Buffer.from('{"jsonrpc":"2.0","id":'),
  Buffer.from('this is not JSON at all'),
  Buffer.from('{"jsonrpc":"2.0","id":"never-sent","result":{"content":[]}}'),
  Buffer.from('[]'),
  Buffer.concat([Buffer.from('{"jsonrpc":"2.0","method":"x","params":{"s":"'),
    Buffer.from([0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from('"}}')]),
  Buffer.from('#'.repeat(100000)),
];
let garbageIndex = 0;
let calls = 0;
let closed = false;
const closeAfter = mode.startsWith('close-after=') ? Number(mode.slice(12)) : -1;

function emit(buf) {
  if (!closed) process.stdout.write(Buffer.concat([buf, Buffer.from('\n')]));
}

let pending = Buffer.alloc(0);
child.stdout.on('data', (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  let nl;
  while ((nl = pending.indexOf(0x0a)) >= 0) {
    const line = pending.subarray(0, nl);
    pending = pending.subarray(nl + 1);
    let msg = null;
    try { msg = JSON.parse(line.toString('utf8')); } catch { /* passed on as is */ }
    const isResponse = msg && msg.id !== undefined && (msg.result !== undefined || msg.error !== undefined);
    const isCallResult = isResponse && msg.result && Array.isArray(msg.result.content);
    if (mode === 'garbage' && isResponse) {
      emit(GARBAGE[garbageIndex++ % GARBAGE.length]);
      if (isCallResult && ++calls % 4 === 0) {
        emit(Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":{"content":[{"type":"te`));
        continue;
      }
    }
    emit(line);
    if (closeAfter >= 0 && isCallResult && ++calls === closeAfter) {
      closed = true;
      // process.stdout.end() would not close fd 1; the proxy must see EOF.
      process.stdout.write('', () => closeSync(1));
    }
  }
});
for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  process.on(sig, () => { if (child.exitCode === null && child.signalCode === null) child.kill(sig); });
}
child.on('exit', (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  }
  process.exit(code ?? 1);
});
