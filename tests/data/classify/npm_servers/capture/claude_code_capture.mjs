// Usage: node claude_code_capture.mjs RAW.json CLAUDE_CLI_JS "CLIENT VERSION"
// Runs Claude Code once against the project's fake upstream and stores the
// tools it sends. RAW.json holds Claude Code's own (proprietary) texts: keep
// it outside the repository and store only `node claude_code_reduce.js RAW.json
// OUT.json ...` (names, property names and types, our own descriptions).
import { spawn } from 'node:child_process';
import fs from 'node:fs'; import os from 'node:os'; import path from 'node:path';
const { startFakeUpstream } = await import(new URL('../../../../llm/fake_upstream.mjs', import.meta.url));
const CLAUDE = process.argv[3];
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'cc-cap-')); fs.mkdirSync(path.join(work, 'home'));
const up = await startFakeUpstream(); up.load({ fallbackText: 'ok', turns: [] });
const env = { PATH: process.env.PATH, HOME: path.join(work, 'home'), ANTHROPIC_BASE_URL: up.url, ANTHROPIC_API_KEY: 'sk-ant-x',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1', DISABLE_TELEMETRY: '1', DISABLE_ERROR_REPORTING: "1", ENABLE_TOOL_SEARCH: "false" };
const c = spawn(process.execPath, [CLAUDE, '-p', 'say ok', '--output-format', 'json', '--max-turns', '2'], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
let err=''; c.stderr.on('data', d => err += d);
await new Promise(r => c.on('exit', r));
const withTools = up.requests.filter(q => q.body?.tools?.length);
console.error('requests', up.requests.length, 'with tools', withTools.length, err.slice(-500));
const tools = withTools[0].body.tools;
fs.writeFileSync(process.argv[2], JSON.stringify({ client: process.argv[4], tools }, null, 1));
console.log(tools.map(t => t.name).join(' '));
up.close(); process.exit(0);
