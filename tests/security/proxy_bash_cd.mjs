// Security group "proxy_bash_cd" (session 19): Claude Code's Bash keeps its
// working directory from call to call, so after a call that moves it
// `cat main.py` reads another file than the same text read before. Session
// 18 stopped keying such reads after a `cd`; the moves its scanner did not
// see (a sourced script, a case branch, a JSON-escaped or quote-split cd,
// a cd after a here-document holding a parenthesis) let sub/main.py be
// recorded over the root's entry and counted as its would-hit. Real proxy
// binary; the fake provider asks for the calls.
import { spawn } from 'node:child_process';

import { killOnExit } from '../support/kill_on_exit.mjs';
import { BIN, caseRunner, startFakeUpstream } from './lib/common.mjs';

const up = await startFakeUpstream();
up.load({ fallbackText: 'ok', turns: [] });
const proxy = killOnExit(spawn(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', up.url],
  { stdio: ['ignore', 'pipe', 'pipe'] }));
let log = '';
proxy.stderr.on('data', (d) => { log += d; });
const base = await new Promise((resolve, reject) => {
  proxy.stdout.on('data', (d) => {
    const m = String(d).match(/listening on (http:\S+)/);
    if (m) resolve(m[1]);
  });
  proxy.on('exit', (c) => reject(new Error(`proxy exited ${c}: ${log}`)));
});

// Each case its own key: its own keyspace, so the cases do not share entries.
async function messages(key, msgs) {
  const r = await fetch(`${base}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'm', max_tokens: 10, messages: msgs,
      tools: [{ name: 'Bash', input_schema: { type: 'object' } }] }),
  });
  await r.text();
  return {
    wouldHit: Number(r.headers.get('x-toolcache-would-hit') ?? 0),
    recorded: Number(r.headers.get('x-toolcache-recorded') ?? 0),
  };
}
const use = (id, command) => ({ role: 'assistant', content: [{ type: 'tool_use', id, name: 'Bash', input: { command } }] });
const result = (id, content) => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content }] });
const ask = (id, command) => up.load({ fallbackText: 'ok', turns: [{ reply: { text: 'x', toolCalls: [{ id, name: 'Bash', input: { command } }] } }] });

const cat = 'cat main.py';
const { step, finish } = caseRunner('proxy_bash_cd');
try {
  const movers = [
    ['a sourced script', '. ./sub.env'],
    ['source', 'source ./sub.env'],
    ['a case branch', 'case x in x) cd sub;; esac'],
    ['a quote-split cd', "c''d sub"],
    ['a line continuation', 'c\\\nd sub'],
    ['a cd after a here-document holding a parenthesis', 'cat <<EOF\n(\nEOF\ncd sub'],
    ['a redirection before cd', '2>/dev/null cd sub'],
    ['a function that cds', 'f() { cd sub; }; f'],
    ['a computed command word', 'x=cd; $x sub'],
  ];
  let n = 0;
  for (const [name, mover] of movers) {
    await step(`after ${name} (${JSON.stringify(mover)}), sub's main.py is neither a hit nor recorded`, async () => {
      const key = `sk-ant-bash-cd-${n++}`;
      const start = [{ role: 'user', content: 'go' }];
      const root = [...start, use('t1', cat), result('t1', 'root main')];
      ask('t1', cat);
      await messages(key, start);
      const first = await messages(key, root);
      if (first.recorded !== 1) throw new Error(`the root's main.py was not recorded (${first.recorded})`);
      const moved = [...root, use('t2', mover), result('t2', '')];
      ask('t3', cat);
      const asked = await messages(key, moved);
      const answered = await messages(key, [...moved, use('t3', cat), result('t3', 'sub main')]);
      if (asked.wouldHit !== 0 || answered.recorded !== 0) {
        throw new Error(`would-hit ${asked.wouldHit}, recorded ${answered.recorded} (want 0, 0)`);
      }
    });
  }
  await step('a JSON-escaped cd (\\u0063d) in the raw body moves too', async () => {
    const key = 'sk-ant-bash-cd-escaped';
    const root = [{ role: 'user', content: 'go' }, use('t1', cat), result('t1', 'root main')];
    await messages(key, root);
    const raw = JSON.stringify([...root, use('t2', 'CD_HERE sub'), result('t2', ''),
      use('t3', cat), result('t3', 'sub main')]).replace('CD_HERE', '\\u0063d');
    const r = await fetch(`${base}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01' },
      body: `{"model":"m","max_tokens":10,"tools":[{"name":"Bash","input_schema":{"type":"object"}}],"messages":${raw}}`,
    });
    await r.text();
    const recorded = Number(r.headers.get('x-toolcache-recorded') ?? 0);
    if (r.status !== 200 || recorded !== 0) throw new Error(`status ${r.status}, recorded ${recorded} (want 0)`);
  });
  // Read-only commands that name cd without running it (a write would
  // invalidate the entry and prove nothing).
  await step('no move: git -C, a quoted cd, an expansion as an argument', async () => {
    const key = 'sk-ant-bash-cd-none';
    const start = [{ role: 'user', content: 'go' }];
    const root = [...start, use('t1', cat), result('t1', 'root main')];
    await messages(key, root);
    const stay = [...root,
      use('t2', 'git -C sub log --oneline'), result('t2', ''),
      use('t3', "grep -n 'cd sub' notes.txt"), result('t3', ''),
      use('t4', 'echo $HOME'), result('t4', '')];
    ask('t5', cat);
    const asked = await messages(key, stay);
    if (asked.wouldHit !== 1) throw new Error(`would-hit ${asked.wouldHit} (want 1)`);
  });
} finally {
  proxy.kill('SIGTERM');
  await up.close();
}
finish();
