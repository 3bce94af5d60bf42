// tests/security/lib/common.mjs: the preamble every node security group
// repeated (issue 30), like lib/common.sh for the bash groups. Imported by
// a group, never run on its own: tests/e2e_security.sh runs only
// tests/security/*.sh and *.mjs, not this folder.
//
//   import { BIN, SRC, startFakeUpstream, spawnListening } from './lib/common.mjs';
//   const up = await startFakeUpstream();
//   const proxy = await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', up.url]);
//   ... await proxy.stop(); await up.close();
//
// Gives: BIN ($TOOLCACHE_BIN, checked: exit 2 when unset); SRC
// ($TOOLCACHE_SOURCE_DIR, default the tree this file is in); fromSource(rel)
// (a dynamic import of a module under SRC); startFakeUpstream (the fake
// provider, tests/llm/fake_upstream.mjs) and spawnListening (a server
// command started and awaited until it listens, tests/llm/spawn_proxy.mjs);
// recordingUpstream (a provider stand-in whose every answer the group
// writes, for exact replies) and caseRunner (ok/FAIL per case, the exit
// status at the end).
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export { startFakeUpstream } from '../../llm/fake_upstream.mjs';
export { spawnListening } from '../../llm/spawn_proxy.mjs';

export const BIN = process.env.TOOLCACHE_BIN;
export const SRC = process.env.TOOLCACHE_SOURCE_DIR ||
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
if (!BIN) {
  console.error('TOOLCACHE_BIN must point at the built toolcache binary');
  process.exit(2);
}

export const fromSource = (rel) => import(pathToFileURL(path.join(SRC, rel)));

// A provider stand-in on 127.0.0.1: keeps every request as {method, url,
// headers, body} (body parsed when it is JSON, else its text) in
// `requests`, then answers 200 with `answer(request)` (an object is sent as
// JSON, a string as it is).
export async function recordingUpstream(answer) {
  const requests = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d) => { text += d; });
    req.on('end', () => {
      let body = text;
      try { body = JSON.parse(text); } catch { /* not JSON: kept as text */ }
      const request = { method: req.method, url: req.url, headers: req.headers, body };
      requests.push(request);
      const out = answer(request);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(typeof out === 'string' ? out : JSON.stringify(out));
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}`, requests, close: () => server.close() };
}

// A group's cases: `step(name, fn)` runs one and prints "ok" or "FAIL" (a
// failed case does not stop the others); `finish()` prints the summary and
// exits 1 when any case failed.
export function caseRunner(group) {
  let failed = 0;
  return {
    async step(name, fn) {
      try {
        await fn();
        console.log(`ok   ${name}`);
      } catch (e) {
        failed++;
        console.log(`FAIL ${name}: ${e.message}`);
      }
    },
    finish() {
      if (failed) {
        console.error(`${group}: ${failed} case(s) failed`);
        process.exit(1);
      }
      console.log(`${group}: all cases passed`);
    },
  };
}
