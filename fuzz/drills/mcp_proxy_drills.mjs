// Fault drills for `toolcache mcp` (the MCP stdio proxy), scripted and
// repeatable, against the real npm server-everything (tests/peers): the
// server killed mid-call, slow, sending garbage, closing its output early;
// the client vanishing mid-call; SIGTERM under load. A raw line-level
// client (so every id and every line the client receives is seen) plays
// the MCP client; fault_relay.mjs injects the server-side faults.
//
// Each request is sorted into
//   answered  exactly one response under its id, with the result the real
//             server gives for it (echo: "Echo: <message>", the long
//             operation: its duration), or, for a request whose response the
//             fault replaced, ...
//   clean     exactly one JSON-RPC error under its id (code and message), or
//             no answer because the client itself went away (client drill),
//             or a request written after the proxy stopped reading (server
//             gone, SIGTERM) that fails as the proxy exits and the
//             connection closes;
//   wrong     anything else: a result that is not the request's, a second
//             answer, a line the client cannot parse, no answer at all from
//             a proxy that exited -- must be 0;
// and the proxy's recovery is timed: for faults a session survives (slow,
// garbage) the next request's answer; for faults that end the server
// (killed, closed, SIGTERM, client gone) the time from the fault until
// every request is settled and the proxy and its server have exited (an
// MCP stdio proxy lives as long as its server; the client starts a new
// one, which then answers: timed too).
//
// Usage: node fuzz/drills/mcp_proxy_drills.mjs --bin TOOLCACHE [--scale N]
// (--scale multiplies the request counts; 1 is the CI size). Exits 1 when
// any request is wrong or a proxy does not exit by itself.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const opt = (name, def) => (argv.indexOf(name) >= 0 ? argv[argv.indexOf(name) + 1] : def);
const BIN = opt('--bin');
const SCALE = Number(opt('--scale', '1'));
if (!BIN) {
  console.error('usage: node mcp_proxy_drills.mjs --bin TOOLCACHE [--scale N]');
  process.exit(2);
}
const EVERYTHING = join(here, '../../tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js');
if (!existsSync(EVERYTHING)) {
  console.error(`missing ${EVERYTHING}: run scripts/setup.sh`);
  process.exit(2);
}
const work = mkdtempSync(join(tmpdir(), 'toolcache-mcp-drills-'));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let sessions = 0;

function alive(pid) {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

// One `toolcache mcp` in front of server-everything behind fault_relay.mjs
// (mode 'none' relays unchanged). Returns a raw line-level session.
function startSession(mode = 'none', proxyFlags = []) {
  const pidFile = join(work, `server-${++sessions}.pid`);
  const child = spawn(BIN, ['mcp', '--name', 'everything', ...proxyFlags, '--',
    process.execPath, join(here, 'fault_relay.mjs'), mode, '--', process.execPath, EVERYTHING, 'stdio'],
  { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, FAULT_PID_FILE: pidFile } });
  const s = {
    child, pidFile, answers: new Map(), unparsable: 0, stderr: '', started: Date.now(),
    waiters: [],
  };
  child.stderr.on('data', (d) => { s.stderr += d; });
  child.stdin.on('error', () => {});
  let buf = Buffer.alloc(0);
  child.stdout.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    let nl;
    while ((nl = buf.indexOf(0x0a)) >= 0) {
      const line = buf.subarray(0, nl).toString('utf8');
      buf = buf.subarray(nl + 1);
      if (!line.trim()) continue;
      let m;
      try { m = JSON.parse(line); } catch { s.unparsable += 1; continue; }
      if (m.id !== undefined && (m.result !== undefined || m.error !== undefined)) {
        const key = JSON.stringify(m.id);
        if (!s.answers.has(key)) s.answers.set(key, []);
        s.answers.get(key).push({ m, at: Date.now() });
      }
      for (const w of [...s.waiters]) if (w.pred()) { s.waiters.splice(s.waiters.indexOf(w), 1); w.resolve(); }
    }
  });
  s.exited = new Promise((r) => child.on('exit', (code, signal) => { s.exitedAt = Date.now(); r({ code, signal }); }));
  s.exited.then(() => { for (const w of s.waiters) w.resolve(); s.waiters.length = 0; });
  s.send = (obj) => { if (child.stdin.writable) child.stdin.write(JSON.stringify(obj) + '\n'); };
  s.until = (pred, ms) => new Promise((resolve) => {
    if (pred()) { resolve(); return; }
    const w = { pred, resolve };
    s.waiters.push(w);
    setTimeout(() => { const i = s.waiters.indexOf(w); if (i >= 0) { s.waiters.splice(i, 1); resolve(); } }, ms);
  });
  s.answered = (id) => s.answers.has(JSON.stringify(id));
  s.serverPid = () => (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : 0);
  return s;
}

async function initialize(s) {
  s.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'drill', version: '1' } } });
  await s.until(() => s.answered('init'), 20000);
  if (!s.answered('init')) throw new Error(`no initialize answer: ${s.stderr}`);
  s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  s.send({ jsonrpc: '2.0', id: 'list', method: 'tools/list', params: {} });
  await s.until(() => s.answered('list'), 20000);
  if (!s.answered('list')) throw new Error(`no tools/list answer: ${s.stderr}`);
}

let nextId = 1;
// A request and the text its correct result has.
function echo(s, tag) {
  const id = nextId++;
  const message = `${tag}-${id}-${Math.random().toString(36).slice(2)}`;
  s.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message } } });
  return { id, want: `Echo: ${message}`, sentAt: Date.now() };
}
function slow(s, seconds) {
  const id = nextId++;
  s.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: seconds, steps: 2 } } });
  return { id, want: `Duration: ${seconds} seconds`, sentAt: Date.now() };
}

// Sorts requests into answered / clean / wrong (see the header).
function judge(s, reqs, { allowUnanswered = false, lines = true } = {}) {
  const r = { sent: reqs.length, answered: 0, clean: 0, wrong: 0, why: [] };
  for (const q of reqs) {
    const got = s.answers.get(JSON.stringify(q.id)) ?? [];
    if (got.length === 0) {
      if (allowUnanswered) r.clean += 1;
      else { r.wrong += 1; r.why.push(`${q.id}: no answer`); }
      continue;
    }
    if (got.length > 1) { r.wrong += 1; r.why.push(`${q.id}: ${got.length} answers`); continue; }
    const { m } = got[0];
    if (m.error) {
      if (Number.isInteger(m.error.code) && typeof m.error.message === 'string' && m.error.message) r.clean += 1;
      else { r.wrong += 1; r.why.push(`${q.id}: bad error ${JSON.stringify(m.error)}`); }
      continue;
    }
    const text = (m.result?.content ?? []).map((c) => c.text ?? '').join('');
    if (text.includes(q.want)) r.answered += 1;
    else { r.wrong += 1; r.why.push(`${q.id}: wanted ${q.want}, got ${JSON.stringify(m.result).slice(0, 200)}`); }
  }
  if (lines && s.unparsable) { r.wrong += s.unparsable; r.why.push(`${s.unparsable} unparsable lines to the client`); }
  return r;
}

// Time for a fresh proxy (what the client starts next) to answer a call.
async function freshAnswerMs() {
  const t0 = Date.now();
  const s = startSession();
  await initialize(s);
  const q = echo(s, 'fresh');
  await s.until(() => s.answered(q.id), 20000);
  const ok = judge(s, [q]).answered === 1;
  s.child.stdin.end();
  await s.exited;
  return ok ? Date.now() - t0 : -1;
}

const results = [];
let failed = 0;
function report(drill, r, notes, extraFail = '') {
  results.push({ drill, ...r, notes });
  if (r.wrong || extraFail) {
    failed += 1;
    console.error(`FAIL ${drill}: ${extraFail} ${r.why.slice(0, 5).join('; ')}`);
  }
}

async function drillSlow() {
  const s = startSession();
  await initialize(s);
  const n = 4 * SCALE;
  const reqs = [];
  const fast = [];
  for (let i = 0; i < n; i++) {
    reqs.push(slow(s, 2 + i / 100));
    const f = echo(s, 'fast');
    fast.push(f);
    reqs.push(f);
  }
  await s.until(() => fast.every((q) => s.answered(q.id)), 10000);
  const fastMs = Math.max(...fast.map((q) => (s.answers.get(JSON.stringify(q.id))?.[0]?.at ?? Infinity) - q.sentAt));
  await s.until(() => reqs.every((q) => s.answered(q.id)), 30000);
  const t0 = Date.now();
  const after = echo(s, 'after');
  reqs.push(after);
  await s.until(() => s.answered(after.id), 10000);
  const rec = Date.now() - t0;
  s.child.stdin.end();
  const exit = await s.exited;
  const r = judge(s, reqs);
  report('slow server (2 s calls + fast calls)', r,
    `fast calls answered within ${fastMs} ms while ${n} slow ones ran; next call ${rec} ms; exit ${exit.code}`,
    exit.code !== 0 ? `exit ${JSON.stringify(exit)}` : '');
}

async function drillKilled() {
  const s = startSession();
  await initialize(s);
  const reqs = [];
  for (let i = 0; i < 3 * SCALE; i++) reqs.push(slow(s, 5 + i / 100));
  const done = [];
  for (let i = 0; i < 3 * SCALE; i++) done.push(echo(s, 'before'));
  await s.until(() => done.every((q) => s.answered(q.id)), 10000);
  await sleep(300);
  const t0 = Date.now();
  process.kill(s.serverPid(), 'SIGKILL');
  const exit = await Promise.race([s.exited, sleep(10000).then(() => null)]);
  const settled = Math.max(...reqs.map((q) => s.answers.get(JSON.stringify(q.id))?.[0]?.at ?? Infinity)) - t0;
  const r = judge(s, [...done, ...reqs]);
  const fresh = await freshAnswerMs();
  const msg = s.answers.get(JSON.stringify(reqs[0].id))?.[0]?.m?.error?.message ?? '';
  report('server killed (SIGKILL) mid-call', r,
    `in-flight failed ${settled} ms after the kill ("${msg}"); proxy exit ${exit ? `${exit.code} after ${s.exitedAt - t0} ms` : 'NONE'}; fresh proxy answers in ${fresh} ms`,
    !exit ? 'proxy did not exit' : (exit.code !== 137 ? `exit ${JSON.stringify(exit)}` : ''));
}

async function drillGarbage() {
  const s = startSession('garbage');
  await initialize(s);
  const reqs = [];
  for (let i = 0; i < 12 * SCALE; i++) {
    reqs.push(echo(s, 'g'));
    if (i % 3 === 0) await sleep(5);
  }
  await s.until(() => reqs.every((q) => s.answered(q.id)), 20000);
  const t0 = Date.now();
  const after = echo(s, 'after');
  await s.until(() => s.answered(after.id), 10000);
  const rec = Date.now() - t0;
  // Every 4th call's response was replaced by a truncated line: those must
  // fail cleanly (-32603), every other call must be answered.
  const r = judge(s, [...reqs, after]);
  const replaced = Math.floor((reqs.length + 1) / 4);
  s.child.stdin.end();
  const exit = await s.exited;
  report('server sends garbage lines', r,
    `${reqs.length + 1} garbage lines interleaved, ${replaced} responses truncated; next call ${rec} ms; exit ${exit.code}`,
    (r.clean !== replaced ? `expected ${replaced} clean failures, got ${r.clean}` : '')
      + (exit.code !== 0 ? ` exit ${JSON.stringify(exit)}` : ''));
}

async function drillClosesEarly() {
  const n = 4 * SCALE;
  const s = startSession(`close-after=${n}`);
  await initialize(s);
  const reqs = [];
  for (let i = 0; i < n; i++) reqs.push(echo(s, 'c'));
  await s.until(() => reqs.every((q) => s.answered(q.id)), 10000);
  // The server's output is closed now; these are in flight, unanswerable.
  const t0 = Date.now();
  const late = [];
  for (let i = 0; i < n; i++) late.push(slow(s, 3));
  const exit = await Promise.race([s.exited, sleep(15000).then(() => null)]);
  // A request the proxy read before it saw the end of the server's output
  // gets -32000; one sent after that is never read (the proxy stops reading
  // its client when the server is gone) and fails as the connection closes
  // when the proxy exits (the SDK rejects it with ConnectionClosed).
  const r = judge(s, reqs);
  const rl = judge(s, late, { allowUnanswered: exit !== null, lines: false });
  for (const k of ['sent', 'answered', 'clean', 'wrong']) r[k] += rl[k];
  r.why.push(...rl.why);
  const errored = late.filter((q) => s.answered(q.id)).length;
  const pid = s.serverPid();
  await sleep(100);
  report('server closes its output early', r,
    `${n} answered, then output closed; of the ${n} sent after it ${errored} got -32000, ${n - errored} the closed connection; proxy exit ${exit ? `${exit.code} after ${s.exitedAt - t0} ms` : 'NONE'}; server ${alive(pid) ? 'STILL RUNNING' : 'stopped'}`,
    !exit ? 'proxy did not exit' : (alive(pid) ? 'server left running' : ''));
}

async function drillClientVanishes() {
  const s = startSession();
  await initialize(s);
  const reqs = [];
  for (let i = 0; i < 3 * SCALE; i++) reqs.push(slow(s, 4));
  for (let i = 0; i < 3 * SCALE; i++) reqs.push(echo(s, 'v'));
  await sleep(300);
  const pid = s.serverPid();
  const t0 = Date.now();
  // The client goes away: both of its pipes close at once.
  s.child.stdin.destroy();
  s.child.stdout.destroy();
  const exit = await Promise.race([s.exited, sleep(15000).then(() => null)]);
  for (let i = 0; i < 50 && alive(pid); i++) await sleep(100);
  const r = judge(s, reqs, { allowUnanswered: true });
  const fresh = await freshAnswerMs();
  report('client vanishes mid-call', r,
    `proxy exit ${exit ? `${exit.code ?? exit.signal} after ${s.exitedAt - t0} ms` : 'NONE'}; server ${alive(pid) ? 'STILL RUNNING' : 'stopped'}; fresh proxy answers in ${fresh} ms`,
    !exit ? 'proxy did not exit' : (alive(pid) ? 'server left running' : ''));
}

async function drillSigterm() {
  const s = startSession();
  await initialize(s);
  const reqs = [];
  for (let i = 0; i < 5 * SCALE; i++) reqs.push(slow(s, 3));
  let stop = false;
  const pump = (async () => {
    while (!stop) { reqs.push(echo(s, 'load')); await sleep(2); }
  })();
  await sleep(400);
  const pid = s.serverPid();
  const t0 = Date.now();
  s.child.kill('SIGTERM');
  await sleep(50);
  stop = true;
  await pump;
  const exit = await Promise.race([s.exited, sleep(15000).then(() => null)]);
  await sleep(100);
  // Requests written after the proxy stopped reading cannot be answered by
  // it; those sent before the signal must all be settled.
  const before = reqs.filter((q) => q.sentAt < t0);
  const r = judge(s, before);
  const afterSignal = reqs.length - before.length;
  const fresh = await freshAnswerMs();
  report('SIGTERM under load', r,
    `${afterSignal} more sent after the signal (not counted); proxy exit ${exit ? `${exit.code ?? exit.signal} after ${s.exitedAt - t0} ms` : 'NONE'}; server ${alive(pid) ? 'STILL RUNNING' : 'stopped'}; fresh proxy answers in ${fresh} ms`,
    !exit ? 'proxy did not exit' : (alive(pid) ? 'server left running' : ''));
}

const drills = [drillSlow, drillKilled, drillGarbage, drillClosesEarly, drillClientVanishes, drillSigterm];
const filter = opt('--only', '');
for (const d of drills.filter((x) => x.name.toLowerCase().includes(filter.toLowerCase()))) {
  try {
    await d();
  } catch (e) {
    failed += 1;
    console.error(`FAIL ${d.name}: ${e.stack ?? e}`);
  }
}
console.log(`${'drill'.padEnd(40)} sent answered clean wrong  notes`);
for (const r of results) {
  console.log(`${r.drill.padEnd(40)} ${String(r.sent).padStart(4)} ${String(r.answered).padStart(8)} `
    + `${String(r.clean).padStart(5)} ${String(r.wrong).padStart(5)}  ${r.notes}`);
}
rmSync(work, { recursive: true, force: true });
console.log(failed ? `${failed} drill(s) failed` : 'all drills passed');
process.exit(failed ? 1 : 0);
