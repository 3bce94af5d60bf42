// Starts `toolcache <args>` (a server command that prints "listening on
// http://HOST:PORT" on stdout) and resolves once it listens: { child, url,
// log(), stop() }. Rejects with the process's stderr if it exits first.
// Shared by the proxy's node tests.
import { spawn } from 'node:child_process';
import { killOnExit } from '../support/kill_on_exit.mjs';

export async function spawnListening(bin, args) {
  const child = killOnExit(spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] }));
  let log = '';
  child.stderr.on('data', (d) => { log += d; });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/\S+)/);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`${args[0]} exited ${code}: ${log}`)));
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await new Promise((r) => child.on('exit', r));
  };
  return { child, url, log: () => log, stop };
}
