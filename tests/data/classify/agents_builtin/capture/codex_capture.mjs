// Usage: node codex_capture.mjs OUT.json CODEX_BINARY "CLIENT VERSION"
// Runs Codex CLI (Apache-2.0) once against the project's fake upstream (a
// custom Responses provider, no network, no credentials) and stores the
// function tools of its first request: name, description, parameters.
// Custom (freeform) tools such as apply_patch carry a grammar, not a JSON
// schema; they are stored with an empty object schema and their description.
import { spawn } from 'node:child_process';
import fs from 'node:fs'; import os from 'node:os'; import path from 'node:path';
const { startFakeUpstream } = await import(new URL('../../../../llm/fake_upstream.mjs', import.meta.url));
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'codex-cap-'));
const home = path.join(work, 'home'); fs.mkdirSync(home);
const up = await startFakeUpstream(); up.load({ fallbackText: 'ok', turns: [] });
fs.writeFileSync(path.join(home, 'config.toml'), ['model = "gpt-5.5"', 'model_provider = "fake"', '[model_providers.fake]',
  'name = "fake"', `base_url = "${up.url}/v1"`, 'env_key = "FAKE_KEY"', 'wire_api = "responses"', ''].join('\n'));
const c = spawn(process.argv[3], ['exec', '--skip-git-repo-check', 'say ok'],
  { cwd: work, env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: home, FAKE_KEY: 'sk-x' }, stdio: ['ignore', 'pipe', 'pipe'] });
let err = ''; c.stderr.on('data', d => err += d);
const timer = setTimeout(() => c.kill('SIGKILL'), 120000);
await new Promise(r => c.on('exit', r)); clearTimeout(timer);
const withTools = up.requests.filter(q => q.body?.tools?.length);
console.error('requests', up.requests.length, 'with tools', withTools.length, err.slice(-300));
const tools = withTools[0].body.tools.map(t => ({ name: t.name ?? t.type, description: t.description ?? '',
  inputSchema: t.parameters ?? { type: 'object', properties: {} }, ...(t.type !== 'function' ? { note: 'type ' + t.type } : {}) }));
fs.writeFileSync(process.argv[2], JSON.stringify({ serverInfo: { name: 'codex-cli', version: process.argv[4] }, tools }, null, 1) + '\n');
console.log(tools.map(t => t.name).join(' '));
up.close(); process.exit(0);
