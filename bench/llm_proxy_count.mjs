// Counts, not times: what one request through an LLM proxy hop costs in
// instructions (callgrind) and system calls (strace -c -f), for toolcache
// and for nginx (the same reverse-proxy set-up as bench/llm_proxy.mjs) in
// one go, so the two columns come from the same requests on the same
// machine. Counts do not depend on machine load, so this decides on a
// shared machine where wall times cannot. Usage (after a build):
//   node bench/llm_proxy_count.mjs [--bin build/apps/toolcache/toolcache]
//        [--baseline-bin OTHER] [--requests 300] [--sizes 2048,204800]
//        [--modes sse,json] [--tool strace|callgrind|ctxsw|faults|cpu|both|all]
//        [--no-nginx] [--nginx-bin PATH] [--congestion reno]
//        [--upstream fake|static] [--whole-process] [--history read|bash]
// (--upstream static, hopR: the proxies talk to bench/llm_static_upstream.mjs
// loaded with the fake upstream's own reply, as bench/llm_proxy.mjs
// --upstream static does, so the counts come from the wall-clock bench's
// set-up. --whole-process: callgrind counts every thread of toolcache from
// the end of the warm-up on, as it does for nginx, instead of the server
// loop only. --history bash: the conversation's calls are Claude Code
// `Bash` commands instead of `Read`s, so the Bash `cd` rule's scan of the
// history is counted.)
// (--congestion: as in bench/llm_proxy.mjs, loopback TCP without bbr's
// pacing, in a private network namespace; the rows name the congestion
// control in effect.)
// (--nginx-bin: an nginx outside /usr/sbin, /usr/bin, e.g. one unpacked
// with `apt-get download nginx && dpkg -x nginx_*.deb DIR`.)
// For each proxy, size and mode: a fresh fake upstream and a fresh proxy
// under the tool, 20 warm-up requests outside the counted window (strace
// is attached after them; callgrind's collection is switched on after them
// with callgrind_control), then --requests requests over one keep-alive
// connection. Prints syscalls per request by name (the calls the kernel
// was asked for, summed over threads) and instructions per request (the
// whole process for nginx; the server loop thread for toolcache, so its
// start-up is not counted). ctxsw: the proxy's context switches per
// request (voluntary = it went to sleep waiting for I/O, i.e. wake-ups;
// from /proc/PID/task/*/status, nothing attached, so the timing is the
// real one: strace slows the proxy and changes how bytes batch up).
// cpu (hopR): the proxy's CPU time per request (perf stat task-clock,
// every thread, user and kernel; attached after the warm-up). faults: the
// proxy's page faults (minor, major) and CPU time (user,
// system) per request, from /proc/PID/stat, nothing attached: the kernel
// work callgrind does not see (memory mapped and unmapped per request).
import http from 'node:http';
import net from 'node:net';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { congestionControl, nginxConf, reexecWithCongestion, requestBody, startProcess } from './llm_bench_common.mjs';

reexecWithCongestion();

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (n, d) => { const i = args.indexOf(n); return i >= 0 ? args[i + 1] : d; };
const BIN = path.resolve(opt('--bin', path.join(root, 'build/apps/toolcache/toolcache')));
const BASE = opt('--baseline-bin') ? path.resolve(opt('--baseline-bin')) : null;
const REQUESTS = Number(opt('--requests', 300));
const SIZES = opt('--sizes', '2048,204800').split(',').map(Number);
const MODES = opt('--modes', 'sse,json').split(',');
const TOOL = opt('--tool', 'both');
const HISTORY = opt('--history', 'read');
const NO_NGINX = args.includes('--no-nginx');
const NGINX_BIN = opt('--nginx-bin') ? path.resolve(opt('--nginx-bin')) : null;
const UPSTREAM = opt('--upstream', 'fake');
if (!['fake', 'static'].includes(UPSTREAM)) throw new Error(`--upstream fake|static, not ${UPSTREAM}`);
const WHOLE = args.includes('--whole-process');
const WARMUP = 20;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const waitExit = (child) => new Promise((r) => (child.exitCode !== null ? r() : child.on('exit', r)));

async function waitPort(port) {
  for (let i = 0; i < 400; ++i) {
    const ok = await new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => { s.destroy(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    await sleep(50);
  }
  throw new Error(`nothing listens on ${port}`);
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
// keep: also resolve with the reply's headers and bytes.
function post(url, body, keep = false) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent: keep ? undefined : agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-api-key': 'sk-bench', 'anthropic-version': '2023-06-01' } }, (res) => {
      let n = 0;
      const parts = [];
      res.on('data', (d) => { n += d.length; if (keep) parts.push(d); });
      res.on('end', () => resolve({ status: res.statusCode, bytes: n, headers: res.headers, body: Buffer.concat(parts) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}



// Starts `which` ('toolcache' | 'baseline' | 'nginx') in front of upUrl;
// returns { pid, url, child }.
async function startProxy(which, upUrl, tool, outFile) {
  const port = 20000 + Math.floor(Math.random() * 20000);
  let argv;
  if (which === 'nginx') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tc-nginx-'));
    fs.writeFileSync(path.join(dir, 'nginx.conf'), nginxConf(dir, port, new URL(upUrl), { singleProcess: true }));
    const bin = NGINX_BIN ?? ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => fs.existsSync(p));
    if (!bin) throw new Error('no nginx: install it, pass --nginx-bin PATH or --no-nginx');
    argv = [bin, '-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')];
  } else {
    argv = [which === 'baseline' ? BASE : BIN, 'proxy', '--listen', `127.0.0.1:${port}`, '--upstream', upUrl, '--log-level', 'warn'];
  }
  if (tool === 'callgrind') {
    // toolcache: only its server loop (ServerImpl::Run) is counted; nginx:
    // the whole process, instrumented from the end of the warm-up on.
    const which_ = which === 'nginx' || WHOLE ? ['--instr-atstart=no'] : ['--collect-atstart=no', '--toggle-collect=*ServerImpl::Run*'];
    argv = ['valgrind', '--tool=callgrind', `--callgrind-out-file=${outFile}`, ...which_, ...argv];
  }
  const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
  child.err = '';
  child.stderr.on('data', (d) => { child.err += d; });
  await waitPort(port);
  return { child, url: `http://127.0.0.1:${port}` };
}

// Syscall counts by name from `strace -c` output.
function parseStrace(text) {
  const out = {};
  for (const line of text.split('\n')) {
    const m = line.match(/^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$/);
    if (m && m[2] !== 'total') out[m[2]] = Number(m[1]);
  }
  return out;
}

// Page faults and CPU time of the whole process `pid` (every thread):
// minflt, majflt, utime, stime (/proc/PID/stat fields 10, 12, 14, 15).
const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
function faults(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return { minflt: Number(rest[7]), majflt: Number(rest[9]), user_ms: Number(rest[11]) * TICK_MS, sys_ms: Number(rest[12]) * TICK_MS };
}

// Voluntary and involuntary context switches of every thread of `pid`.
function switches(pid) {
  let v = 0, nv = 0;
  for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
    const st = fs.readFileSync(`/proc/${pid}/task/${t}/status`, 'utf8');
    v += Number(st.match(/^voluntary_ctxt_switches:\s+(\d+)/m)[1]);
    nv += Number(st.match(/^nonvoluntary_ctxt_switches:\s+(\d+)/m)[1]);
  }
  return { v, nv };
}

function parseCallgrind(file) {
  const text = fs.readFileSync(file, 'utf8');
  const m = text.match(/^summary:\s+(\d+)/m) ?? text.match(/^totals:\s+(\d+)/m);
  return m ? Number(m[1]) : NaN;
}

async function measure(which, size, mode, tool) {
  const stream = mode === 'sse';
  const fake = await startProcess('node', [path.join(root, 'tests/llm/fake_upstream.mjs')], /(http:\/\/127\.0\.0\.1:\d+)/);
  let upUrl = fake.match[1];
  let stat = null;
  if (UPSTREAM === 'static') {
    // The fake's own reply to this body, loaded into the static upstream.
    stat = await startProcess('node', [path.join(root, 'bench/llm_static_upstream.mjs')], /(http:\/\/127\.0\.0\.1:\d+)/);
    const got = await post(`${upUrl}/v1/messages`, requestBody(size, stream, HISTORY), true);
    const keep = Object.fromEntries(Object.entries(got.headers).filter(([k]) => !['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date'].includes(k)));
    const r = await fetch(`${stat.match[1]}/__canned/${stream ? 'sse' : 'json'}`, { method: 'POST', headers: { 'x-canned-headers': JSON.stringify(keep) }, body: got.body });
    if (r.status !== 204) throw new Error(`static upstream: HTTP ${r.status}`);
    upUrl = stat.match[1];
  }
  // A name no other run shares: helpers in other PID namespaces share /tmp,
  // and the dump is found by this prefix (a same-named file of another run
  // was read once: its binary's counts reported as this one's).
  const outFile = path.join(os.tmpdir(), `tc-count-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}-${which}-${size}-${mode}.cg`);
  const px = await startProxy(which, upUrl, tool, outFile);
  const url = `${px.url}/v1/messages`;
  const b = requestBody(size, stream, HISTORY);
  for (let i = 0; i < WARMUP; ++i) {
    const r = await post(url, b);
    if (r.status !== 200) throw new Error(`${which}: HTTP ${r.status}`);
  }
  let strace = null;
  let straceErr = '';
  if (tool === 'strace') {
    strace = spawn('strace', ['-c', '-f', '-p', String(px.child.pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
    strace.stderr.on('data', (d) => { straceErr += d; });
    await sleep(500);  // attached to every thread
  } else if (tool === 'cpu') {
    // perf stat's task-clock over the counted requests: the proxy's CPU
    // time (every thread, user and kernel) at nanosecond resolution.
    strace = spawn('perf', ['stat', '-x', ',', '-e', 'task-clock', '-p', String(px.child.pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
    strace.stderr.on('data', (d) => { straceErr += d; });
    await sleep(500);
  } else if (tool === 'ctxsw') {
    strace = switches(px.child.pid);
  } else if (tool === 'faults') {
    strace = faults(px.child.pid);
  } else if (which === 'nginx' || WHOLE) {
    execFileSync('callgrind_control', ['-i', 'on', String(px.child.pid)], { stdio: 'ignore' });
  } else {
    execFileSync('callgrind_control', ['-z', String(px.child.pid)], { stdio: 'ignore' });
  }
  let bytes = 0;
  for (let i = 0; i < REQUESTS; ++i) {
    const r = await post(url, b);
    if (r.status !== 200) throw new Error(`${which}: HTTP ${r.status}`);
    bytes = r.bytes;
  }
  const row = { proxy: which, size, mode, requests: REQUESTS, response_bytes: bytes, tcp_congestion_control: congestionControl() };
  if (tool === 'ctxsw') {
    const end = switches(px.child.pid);
    row.wakeups_per_request = +((end.v - strace.v) / REQUESTS).toFixed(2);
    row.preempted_per_request = +((end.nv - strace.nv) / REQUESTS).toFixed(2);
  } else if (tool === 'faults') {
    const end = faults(px.child.pid);
    row.minor_faults_per_request = +((end.minflt - strace.minflt) / REQUESTS).toFixed(2);
    row.major_faults_per_request = +((end.majflt - strace.majflt) / REQUESTS).toFixed(2);
    row.user_ms_per_request = +((end.user_ms - strace.user_ms) / REQUESTS).toFixed(4);
    row.sys_ms_per_request = +((end.sys_ms - strace.sys_ms) / REQUESTS).toFixed(4);
  } else if (tool === 'cpu') {
    strace.kill('SIGINT');
    await waitExit(strace);
    const m = straceErr.match(/^([\d.]+),msec,task-clock/m);
    row.cpu_ms_per_request = m ? +(Number(m[1]) / REQUESTS).toFixed(4) : NaN;
  } else if (tool === 'strace') {
    strace.kill('SIGINT');
    await waitExit(strace);
    const calls = parseStrace(straceErr);
    row.syscalls_per_request = Object.fromEntries(Object.entries(calls)
      .map(([k, v]) => [k, +(v / REQUESTS).toFixed(2)]).filter(([, v]) => v >= 0.01)
      .sort((a, b) => b[1] - a[1]));
    row.syscalls_total_per_request = +(Object.values(calls).reduce((a, c) => a + c, 0) / REQUESTS).toFixed(2);
  } else {
    execFileSync('callgrind_control', ['-d', String(px.child.pid)], { stdio: 'ignore' });
    await sleep(300);
    // The dump written by -d: outFile.N (the highest N).
    const dumps = fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith(path.basename(outFile) + '.'))
      .map((f) => path.join(os.tmpdir(), f)).sort((a, c) => fs.statSync(a).mtimeMs - fs.statSync(c).mtimeMs);
    const file = dumps.length ? dumps[dumps.length - 1] : outFile;
    row.instructions_per_request = Math.round(parseCallgrind(file) / REQUESTS);
    row.callgrind_file = file;
  }
  agent.destroy();
  px.child.kill('SIGTERM');
  await Promise.race([waitExit(px.child), sleep(5000)]);
  if (px.child.exitCode === null) px.child.kill('SIGKILL');
  fake.child.kill('SIGTERM');
  await waitExit(fake.child);
  if (stat) {
    stat.child.kill('SIGTERM');
    await waitExit(stat.child);
  }
  row.upstream = UPSTREAM;
  if (WHOLE && which !== 'nginx') row.whole_process = true;
  return row;
}

async function main() {
  const proxies = ['toolcache'];
  if (BASE) proxies.push('baseline');
  if (!NO_NGINX) proxies.push('nginx');
  const tools = TOOL === 'both' ? ['strace', 'callgrind'] : TOOL === 'all' ? ['ctxsw', 'faults', 'strace', 'callgrind'] : [TOOL];
  const rows = [];
  for (const tool of tools) {
    for (const size of SIZES) {
      for (const mode of MODES) {
        for (const which of proxies) {
          const row = await measure(which, size, mode, tool);
          console.log(JSON.stringify(row));
          rows.push({ tool, ...row });
        }
      }
    }
  }
  console.log('\n| request | mode | proxy | wake-ups / request | page faults / request (CPU ms user+sys) | syscalls / request | instructions / request |');
  console.log('|---|---|---|---|---|---|---|');
  for (const size of SIZES) {
    for (const mode of MODES) {
      for (const which of proxies) {
        const s = rows.find((r) => r.tool === 'strace' && r.size === size && r.mode === mode && r.proxy === which);
        const c = rows.find((r) => r.tool === 'callgrind' && r.size === size && r.mode === mode && r.proxy === which);
        const w = rows.find((r) => r.tool === 'ctxsw' && r.size === size && r.mode === mode && r.proxy === which);
        const f = rows.find((r) => r.tool === 'faults' && r.size === size && r.mode === mode && r.proxy === which);
        const fc = f ? `${f.minor_faults_per_request + f.major_faults_per_request} (${f.user_ms_per_request}+${f.sys_ms_per_request})` : '-';
        const sc = s ? `${s.syscalls_total_per_request} (${Object.entries(s.syscalls_per_request).slice(0, 6).map(([k, v]) => `${k} ${v}`).join(', ')})` : '-';
        console.log(`| ${(size / 1024).toFixed(0)} KB | ${mode.toUpperCase()} | ${which} | ${w ? w.wakeups_per_request : '-'} | ${fc} | ${sc} | ${c ? c.instructions_per_request.toLocaleString('en-US') : '-'} |`);
      }
    }
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
