#!/usr/bin/env node
// tee.js LOG -- <server command...>
//
// Wraps a real MCP server for the end-to-end tests: everything the proxy
// sends to the server is appended to LOG (one JSON-RPC line per line) before
// it reaches the server, so a test counts what really arrived at the server
// side instead of trusting toolcache's own statistics. The server's stdout
// goes straight to ours; its pid is written to LOG.pid (so a test can kill
// the real server mid-call); when it exits, tee exits with its status.
// SIGTERM/SIGINT/SIGHUP sent to tee (the proxy's shutdown) are passed on to
// the server, so a server that outlives its stdin EOF (e.g. one with a task
// still running) is stopped too instead of being orphaned.
//
// TEE_DELAY=<method>:<ms> holds every request of that method for <ms>
// before the server gets it (it is logged at once), so a test can act while
// such a request is known to be in flight.
import { spawn } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';

const [log, sep, cmd, ...args] = process.argv.slice(2);
if (!log || sep !== '--' || !cmd) {
  process.stderr.write('usage: tee.js LOG -- <command> [args...]\n');
  process.exit(2);
}
const child = spawn(cmd, args, { stdio: ['pipe', 'inherit', 'inherit'] });
writeFileSync(`${log}.pid`, String(child.pid));
const [delayMethod, delayMs] = (process.env.TEE_DELAY ?? '').split(':');
let held = 0;  // delayed lines not yet written
let ended = false;
function delayed(line) {
  if (!delayMethod) return false;
  try {
    const m = JSON.parse(line);
    return m.method === delayMethod && m.id !== undefined;
  } catch {
    return false;
  }
}
let pending = '';
process.stdin.on('data', (chunk) => {
  pending += chunk.toString('utf8');
  let nl;
  while ((nl = pending.indexOf('\n')) >= 0) {
    const line = pending.slice(0, nl + 1);
    pending = pending.slice(nl + 1);
    appendFileSync(log, line);
    if (delayed(line)) {
      held += 1;
      setTimeout(() => {
        child.stdin.write(line);
        held -= 1;
        if (ended && held === 0) child.stdin.end();
      }, Number(delayMs));
    } else {
      child.stdin.write(line);
    }
  }
});
process.stdin.on('end', () => {
  if (pending) {
    appendFileSync(log, pending + '\n');
    child.stdin.write(pending);
  }
  ended = true;
  if (held === 0) child.stdin.end();
});
child.stdin.on('error', () => {});
for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  process.on(sig, () => { if (child.exitCode === null && child.signalCode === null) child.kill(sig); });
}
child.on('exit', (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);  // die of it, as the server did
    process.kill(process.pid, signal);
  }
  process.exit(code ?? 1);
});
