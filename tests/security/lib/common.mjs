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
// command started and awaited until it listens, tests/llm/spawn_proxy.mjs).
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
