// Added latency of `toolcache proxy` vs a direct connection to the fake
// upstream, vs nginx (Debian's, a plain reverse proxy with upstream
// keep-alive: the anchor for what one extra hop costs) and vs the Portkey AI
// gateway (@portkey-ai/gateway, bench/peers) as the peer anchor; then
// throughput at 64 connections with wrk and the proxy's RSS. Usage (after
// scripts/setup.sh and a build):
//   node bench/llm_proxy.mjs [--bin build/apps/toolcache/toolcache]
//        [--baseline-bin OTHER] [--rounds 400] [--wrk-seconds 10] [--sizes 2048,204800]
//        [--no-wrk] [--no-portkey] [--no-nginx] [--stages] [--upstream fake|static]
//        [--order shuffle|alternate] [--seed N] [--congestion reno]
//        [--rounds-at SIZE:N,...] [--resamples 1000]
// --upstream static (sse200): every path talks to bench/llm_static_upstream.mjs,
// which answers with the fake upstream's own reply bytes for each block
// (captured once per block, direct from the fake) and parses and keeps
// nothing, so its own p99 is small and steady and the added p99s can be
// read; the fake (the default) builds every reply from the parsed request,
// as a provider would. The observation counters of both toolcache
// proxies are printed (toolcache_llm_observed_total, streams) so a run
// shows they move alike with either upstream.
// --baseline-bin adds a second toolcache proxy (another build, e.g. the
// binary before a change) as one more path in the same alternation, so a
// before/after comparison shares the machine's load; its rows show
// baseline/nginx next to toolcache/nginx.
// --congestion NAME (session 16) re-runs the bench in a private network
// namespace (`unshare -n`, as root; `unshare -rn` otherwise, where nginx
// cannot switch to its worker user and is left out) whose loopback TCP uses
// congestion control NAME; the machine's own setting is untouched. Why:
// with bbr (this machine's default) every TCP connection paces its
// segments at its own bandwidth estimate, also on lo, so a 200 KB write
// (four 64 KiB segments) is spread over a time that differs from
// connection to connection and stays for the connection's life: the added
// p50 at 200 KB then moved by +-0.1 ms between two runs of one binary, and
// between two proxies running the same binary in one run. reno does not
// pace. The congestion control in effect is printed (tcp_congestion_control).
// Pin it to one core for the issue-32 figures: `taskset -c 1 node ...`
// (every process inherits the mask). The summary table gives, per size and
// mode, the added p50 and p99 of each path (path quantile - direct
// quantile; "p99 paired" = the p99 over the rounds of path - direct in the
// same round) and the ratios the goals name: toolcache / nginx (goal <= 1.5)
// and portkey / toolcache (goal >= 8).
// Session 18: the added latency as the difference of the distributions'
// quantiles, p(path) - p(direct) at p50 and p99, with a 95 % bootstrap
// interval (rounds resampled, --resamples times, seeded by --seed) for each
// path's added time and for the ratios toolcache / nginx and Portkey /
// toolcache, and the goal cells decided from them (met / not met /
// undecided when the interval straddles the goal): the second table, and
// `qdiff` in each JSON row (bench/llm_latency_stats.mjs says why and how).
// The paired p99 above stays as it was; it measures the machine's stalls.
// --rounds-at 2048:10000,204800:3000 sets the rounds per body size (others
// take --rounds). Portkey's streamed requests fail (its own HTTP 500,
// session 12): its SSE cells have no Portkey anchor and say so.
// --stages runs the proxy at --log-level debug and prints, per block, the
// medians of its per-request stage times (its "stages (ms)" log lines).
// Method: one keep-alive client; for each body size and mode (JSON or SSE)
// the paths are measured request by request in an order shuffled anew each
// round (--order shuffle, the default; seeded, --seed), so machine load hits
// them alike and every path follows every path (itself included) equally
// often. --order alternate is the order used up to session 15 (forward,
// then reversed): there the list's first and last paths (direct, and
// Portkey or else nginx) run twice in a row at every round boundary and
// every other path always has the same two predecessors (nginx follows
// Portkey in half its rounds, toolcache never), and with every process on
// one core a request's time depends on what ran just before it (session
// 16: each path's p50 split by its predecessor is in the JSON output,
// `<path>_p50_after`); medians and p90 of wall time per request,
// and added = path - direct (medians). The fake upstream runs in its own
// process. The proxy's own time (parse + observe, from its histograms) is
// printed too, with where its time goes per stage (upload, handle,
// upstream write/wait/body, respond; toolcache_proxy_stage_seconds) and the
// CPU time the proxy process used per request (utime + stime from
// /proc/PID/stat over each block, divided by the requests it carried).
import http from 'node:http';
import net from 'node:net';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { congestionControl, nginxConf, reexecWithCongestion, requestBody, startProcess } from './llm_bench_common.mjs';
import { addedQuantiles } from './llm_latency_stats.mjs';

reexecWithCongestion();
const congestion = congestionControl();

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (n, d) => { const i = args.indexOf(n); return i >= 0 ? args[i + 1] : d; };
const BIN = path.resolve(opt('--bin', path.join(root, 'build/apps/toolcache/toolcache')));
const BASE = opt('--baseline-bin') ? path.resolve(opt('--baseline-bin')) : null;
const ROUNDS = Number(opt('--rounds', 400));
const ROUNDS_AT = Object.fromEntries((opt('--rounds-at', '') || '').split(',').filter(Boolean)
  .map((x) => x.split(':').map(Number)));
const roundsFor = (size) => ROUNDS_AT[size] ?? ROUNDS;
const RESAMPLES = Number(opt('--resamples', 1000));
const SEED = Number(opt('--seed', 1));
if (args.includes('--help')) {
  console.log(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\nimport ')[0].replace(/^\/\/ ?/gm, ''));
  process.exit(0);
}
const WRK_SECONDS = Number(opt('--wrk-seconds', 10));
const SIZES = opt('--sizes', '2048,204800').split(',').map(Number);
const NO_WRK = args.includes('--no-wrk');
const NO_PORTKEY = args.includes('--no-portkey');
const NO_NGINX = args.includes('--no-nginx');
const STAGES = args.includes('--stages');
const UPSTREAM = opt('--upstream', 'fake');
const ORDER = opt('--order', 'shuffle');
if (!['shuffle', 'alternate'].includes(ORDER)) throw new Error(`--order shuffle|alternate, not ${ORDER}`);
// xorshift32, seeded: the same --seed gives the same orders.
let rng = (Number(opt('--seed', 1)) >>> 0) || 1;
const rand = () => { rng ^= rng << 13; rng >>>= 0; rng ^= rng >>> 17; rng ^= rng << 5; rng >>>= 0; return rng / 4294967296; };
const shuffled = (xs) => { const a = [...xs]; for (let i = a.length - 1; i > 0; --i) { const j = Math.floor(rand() * (i + 1)); [a[i], a[j]] = [a[j], a[i]]; } return a; };
if (!['fake', 'static'].includes(UPSTREAM)) throw new Error(`--upstream fake|static, not ${UPSTREAM}`);
const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
// utime + stime of a process, in ms.
function cpuMs(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(rest[11]) + Number(rest[12])) * TICK_MS;
}
const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
function post(url, headers, body) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
      let n = 0;
      let text = '';
      res.on('data', (d) => { n += d.length; if (text.length < 300) text += d; });
      res.on('end', () => resolve({ ms: Number(process.hrtime.bigint() - t0) / 1e6, status: res.statusCode, bytes: n, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}


// nginx as a plain reverse proxy to `upUrl`, in its own temporary prefix:
// one worker (toolcache's proxy runs its loop on one thread too), upstream
// keep-alive, bodies buffered in memory (toolcache reads the whole request
// too), responses streamed (proxy_buffering off, as SSE needs).
async function startNginx(upUrl) {
  const bin = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => fs.existsSync(p));
  if (!bin) return null;
  const dir = fs.mkdtempSync('/tmp/tc-nginx-');
  const port = 19000 + Math.floor(Math.random() * 1000);
  const up = new URL(upUrl);
  fs.writeFileSync(path.join(dir, 'nginx.conf'), nginxConf(dir, port, up));
  const child = spawn(bin, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.output = '';
  child.stderr.on('data', (d) => { child.output += d; });
  for (let i = 0; i < 100; ++i) {
    const ok = await new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => { s.destroy(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (ok) return { child, url: `http://127.0.0.1:${port}` };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  console.error(`nginx did not start: ${child.output}`);
  return null;
}

const quant = (xs, q) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))]; };

async function main() {
  const fake = await startProcess('node', [path.join(root, 'tests/llm/fake_upstream.mjs')], /(http:\/\/127\.0\.0\.1:\d+)/);
  const stat = UPSTREAM === 'static'
    ? await startProcess('node', [path.join(root, 'bench/llm_static_upstream.mjs')], /(http:\/\/127\.0\.0\.1:\d+)/)
    : null;
  const upUrl = stat ? stat.match[1] : fake.match[1];
  const proxy = await startProcess(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', upUrl, '--log-level', STAGES ? 'debug' : 'warn'], /listening on (http:\S+)/);
  const pxUrl = proxy.match[1];
  const baseline = BASE
    ? await startProcess(BASE, ['proxy', '--listen', '127.0.0.1:0', '--upstream', upUrl, '--log-level', 'warn'], /listening on (http:\S+)/)
    : null;
  const pkPort = 18000 + Math.floor(Math.random() * 1000);
  const pkMain = path.join(root, 'bench/peers/node_modules/@portkey-ai/gateway/build/start-server.js');
  let portkey = null;
  if (fs.existsSync(pkMain) && !NO_PORTKEY) {
    portkey = await startProcess('node', [pkMain, `--port=${pkPort}`], /Gateway is running/);
  }
  const nginx = NO_NGINX ? null : await startNginx(upUrl);
  const targets = [
    { name: 'direct', url: `${upUrl}/v1/messages`, headers: {} },
    { name: 'toolcache', url: `${pxUrl}/v1/messages`, headers: {} },
  ];
  if (baseline) targets.push({ name: 'baseline', url: `${baseline.match[1]}/v1/messages`, headers: {} });
  if (nginx) targets.push({ name: 'nginx', url: `${nginx.url}/v1/messages`, headers: {} });
  if (portkey) {
    targets.push({ name: 'portkey', url: `http://127.0.0.1:${pkPort}/v1/messages`,
      headers: { 'x-portkey-provider': 'anthropic', 'x-portkey-custom-host': `${upUrl}/v1` } });
  }
  const common = { 'x-api-key': 'sk-bench', 'anthropic-version': '2023-06-01' };
  const results = [];
  const loadBefore = loadavg();
  for (const size of SIZES) {
    for (const stream of [false, true]) {
      const b = requestBody(size, stream);
      if (stat) {
        // This block's reply, as the fake upstream gives it, loaded into
        // the static upstream (one request direct to the fake).
        const got = await new Promise((resolve, reject) => {
          const req = http.request(`${fake.match[1]}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(b), ...common } }, (res) => {
            const parts = [];
            res.on('data', (d) => parts.push(d));
            res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(parts) }));
          });
          req.on('error', reject);
          req.end(b);
        });
        if (got.status !== 200) throw new Error(`fake upstream: HTTP ${got.status}`);
        const keep = Object.fromEntries(Object.entries(got.headers).filter(([k]) => !['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date'].includes(k)));
        const r = await fetch(`${upUrl}/__canned/${stream ? 'sse' : 'json'}`, { method: 'POST', headers: { 'x-canned-headers': JSON.stringify(keep) }, body: got.body });
        if (r.status !== 204) throw new Error(`static upstream: HTTP ${r.status}`);
      }
      const times = Object.fromEntries(targets.map((t) => [t.name, []]));
      // The same requests keyed by the path that ran just before each.
      const after = Object.fromEntries(targets.map((t) => [t.name, {}]));
      let prev = null;
      const cpu0 = cpuMs(proxy.child.pid);
      const log0 = proxy.child.output.length;
      const rounds = roundsFor(size);
      const blockStart = Date.now();
      for (let r = 0; r < rounds + 20; ++r) {
        const order = ORDER === 'shuffle' ? shuffled(targets) : r % 2 ? [...targets].reverse() : targets;
        for (const t of order) {
          if (t.failed?.[`${size}/${stream}`]) continue;
          const res = await post(t.url, { ...common, ...t.headers }, b);
          if (res.status !== 200) {
            if (t.name !== 'portkey') throw new Error(`${t.name}: HTTP ${res.status} (${size} B, stream ${stream}): ${res.text}`);
            // Recorded, not fatal: the anchor's own failure is a result.
            t.failed = { ...t.failed, [`${size}/${stream}`]: `HTTP ${res.status}: ${res.text}` };
            console.error(`portkey failed (${size} B, stream ${stream}): HTTP ${res.status} ${res.text}`);
            continue;
          }
          if (r >= 20) {  // 20 warm-up rounds
            times[t.name].push(res.ms);
            (after[t.name][prev] ??= []).push(res.ms);
          }
          prev = t.name;
        }
      }
      const proxyCpuMs = cpuMs(proxy.child.pid) - cpu0;
      let stageMedians;
      if (STAGES) {
        await new Promise((r) => setTimeout(r, 200));  // the log pipe catches up
        const names = ['upload', 'handle', 'upstream_write', 'upstream_wait', 'upstream_body'];
        const rows = [...proxy.child.output.slice(log0).matchAll(/stages \(ms\): upload ([\d.]+), handle ([\d.]+), upstream_write ([\d.]+), upstream_wait ([\d.]+), upstream_body ([\d.]+)/g)]
          .slice(20).map((m) => m.slice(1).map(Number));
        stageMedians = Object.fromEntries(names.map((n, i) => [n, +quant(rows.map((r) => r[i]), 0.5).toFixed(3)]));
        stageMedians.requests = rows.length;
      }
      const ok = targets.filter((t) => times[t.name].length > 0);
      const med = Object.fromEntries(ok.map((t) => [t.name, quant(times[t.name], 0.5)]));
      const row = { bytes: b.length, stream, rounds, block_seconds: +((Date.now() - blockStart) / 1e3).toFixed(1), load_after_block: loadavg(), proxy_cpu_ms_per_request: +(proxyCpuMs / (rounds + 20)).toFixed(3) };
      if (stageMedians) row.proxy_stage_p50_ms = stageMedians;
      for (const t of ok) {
        row[`${t.name}_p50_ms`] = +med[t.name].toFixed(3);
        row[`${t.name}_p90_ms`] = +quant(times[t.name], 0.9).toFixed(3);
        row[`${t.name}_p99_ms`] = +quant(times[t.name], 0.99).toFixed(3);
        row[`${t.name}_p50_after`] = Object.fromEntries(Object.entries(after[t.name])
          .map(([p, xs]) => [p, { p50_ms: +quant(xs, 0.5).toFixed(3), n: xs.length }]));
        if (t.name !== 'direct') {
          row[`${t.name}_added_ms`] = +(med[t.name] - med.direct).toFixed(3);
          row[`${t.name}_added_p99_ms`] = +(row[`${t.name}_p99_ms`] - row.direct_p99_ms).toFixed(3);
          // Paired: the path's time minus the direct time of the same
          // round (the two ran back to back), then the quantile. A stall
          // of the machine during one direct request no longer lowers
          // every path's p99 (the quantile difference above can go
          // negative on a loaded machine); a stall during a path's own
          // request still counts against it.
          if (times[t.name].length === times.direct.length) {
            const d = times[t.name].map((x, i) => x - times.direct[i]);
            row[`${t.name}_paired_added_p50_ms`] = +quant(d, 0.5).toFixed(3);
            row[`${t.name}_paired_added_p99_ms`] = +quant(d, 0.99).toFixed(3);
          }
        }
      }
      // The quantile differences with bootstrap intervals (session 18):
      // only paths that answered every round (Portkey's SSE fails).
      const full = Object.fromEntries(ok.filter((t) => times[t.name].length === times.direct.length)
        .map((t) => [t.name, times[t.name]]));
      row.qdiff = addedQuantiles(full, { resamples: RESAMPLES, seed: SEED });
      if (targets.some((t) => t.name === 'portkey') && !full.portkey) {
        row.portkey_missing = targets.find((t) => t.name === 'portkey').failed?.[`${size}/${stream}`] ?? 'no samples';
      }
      results.push(row);
    }
  }
  const stats = await (await fetch(`${pxUrl}/toolcache/stats`)).json();
  // What each toolcache proxy observed (the same with either upstream).
  const observedOf = (st) => Object.fromEntries(['toolcache_proxy_requests_total', 'toolcache_proxy_streams_total', 'toolcache_llm_observed_total']
    .map((m) => [m, (st.metrics[m]?.series ?? []).map((x) => ({ ...x.labels, value: x.value }))]));
  const observed = { toolcache: observedOf(stats) };
  if (baseline) observed.baseline = observedOf(await (await fetch(`${baseline.match[1]}/toolcache/stats`)).json());
  const overhead = stats.metrics.toolcache_proxy_overhead_seconds.series;
  const hist = (series) => series.map((s) => ({ ...s.labels, p50_ms: +(s.p50 * 1e3).toFixed(3), p99_ms: +(s.p99 * 1e3).toFixed(3), count: s.count }));
  const stages = stats.metrics.toolcache_proxy_stage_seconds?.series ?? [];
  console.log(JSON.stringify({ rounds: ROUNDS, upstream: UPSTREAM, order: ORDER, tcp_congestion_control: congestion, observed, load_before: loadBefore, load_after: loadavg(), results,
    proxy_own_time: hist(overhead), proxy_stages_all_sizes: hist(stages) }, null, 1));
  // Added time per path and quantile, and the goals' ratios (a ratio of
  // added times; '-' when a path did not run or added nothing measurable).
  const ratio = (a, b) => (a === undefined || b === undefined || a <= 0.001 || b <= 0.001 ? '-' : (a / b).toFixed(2) + 'x');
  const bcol = baseline ? ' baseline added | baseline/nginx |' : '';
  console.log(`\n| request | mode | q | direct | toolcache added | nginx added | portkey added | toolcache/nginx (goal <= 1.5) | portkey/toolcache (goal >= 8) |${bcol} proxy CPU/request |`);
  console.log(`|---|---|---|---|---|---|---|---|---|${baseline ? '---|---|' : ''}---|`);
  // "p99" = p99(path) - p99(direct); "p99 paired" = p99 of (path - direct)
  // over the rounds, each pair run back to back (see the row fields).
  for (const r of results) {
    for (const [q, sfx] of [['p50', ''], ['p99', '_p99'], ['p99 paired', '_paired_p99']]) {
      const add = (n) => (sfx === '_paired_p99' ? r[`${n}_paired_added_p99_ms`] : r[`${n}_added${sfx}_ms`]);
      const dq = sfx === '' ? 'p50' : 'p99';
      const b = baseline ? ` ${add('baseline')} ms | ${ratio(add('baseline'), add('nginx'))} |` : '';
      console.log(`| ${(r.bytes / 1024).toFixed(0)} KB | ${r.stream ? 'SSE' : 'JSON'} | ${q} | ${r[`direct_${dq}_ms`]} ms | ${add('toolcache')} ms | ${add('nginx') ?? '-'} ms | ${add('portkey') ?? '-'} ms | ${ratio(add('toolcache'), add('nginx'))} | ${ratio(add('portkey'), add('toolcache'))} |${b} ${r.proxy_cpu_ms_per_request} ms |`);
    }
  }
  printQuantileTable(results);
  if (NO_WRK) {
    nginx?.child.kill('SIGTERM');
    baseline?.child.kill('SIGTERM');
    proxy.child.kill('SIGTERM');
    fake.child.kill('SIGTERM');
    stat?.child.kill('SIGTERM');
    portkey?.child.kill('SIGTERM');
    agent.destroy();
    return;
  }

  // Throughput at 64 connections (wrk), direct vs through the proxy, and
  // the proxy's peak RSS.
  const lua = path.join(fs.mkdtempSync('/tmp/tc-wrk-'), 'post.lua');
  fs.writeFileSync(path.join(path.dirname(lua), 'body.json'), requestBody(2048, false));
  fs.writeFileSync(lua, `wrk.method = "POST"\nlocal f = io.open("${path.join(path.dirname(lua), 'body.json')}")\nwrk.body = f:read("*a")\nf:close()\nwrk.headers["content-type"] = "application/json"\nwrk.headers["x-api-key"] = "sk-bench"\n`);
  const wrk = (url) => {
    const out = execFileSync('wrk', ['-t2', '-c64', `-d${WRK_SECONDS}s`, '--latency', '-s', lua, url], { encoding: 'utf8' });
    const rps = Number(out.match(/Requests\/sec:\s+([\d.]+)/)[1]);
    const p50 = out.match(/50%\s+(\S+)/)[1];
    const p99 = out.match(/99%\s+(\S+)/)[1];
    const errors = out.match(/Non-2xx or 3xx responses: (\d+)/)?.[1] ?? '0';
    return { rps, p50, p99, errors };
  };
  const direct = wrk(`${upUrl}/v1/messages`);
  const through = wrk(`${pxUrl}/v1/messages`);
  const viaNginx = nginx ? wrk(`${nginx.url}/v1/messages`) : null;
  const status = fs.readFileSync(`/proc/${proxy.child.pid}/status`, 'utf8');
  const kb = (k) => Number(status.match(new RegExp(`${k}:\\s+(\\d+)`))[1]);
  console.log(`\nwrk -t2 -c64 -d${WRK_SECONDS}s, 2 KB Anthropic requests:`);
  console.log(`  direct to the ${UPSTREAM} upstream: ${direct.rps} req/s (p50 ${direct.p50}, p99 ${direct.p99}, non-2xx ${direct.errors})`);
  console.log(`  through toolcache proxy:     ${through.rps} req/s (p50 ${through.p50}, p99 ${through.p99}, non-2xx ${through.errors})`);
  if (viaNginx) console.log(`  through nginx:               ${viaNginx.rps} req/s (p50 ${viaNginx.p50}, p99 ${viaNginx.p99}, non-2xx ${viaNginx.errors})`);
  console.log(`  proxy RSS now ${(kb('VmRSS') / 1024).toFixed(1)} MiB, peak ${(kb('VmHWM') / 1024).toFixed(1)} MiB`);

  nginx?.child.kill('SIGTERM');
  baseline?.child.kill('SIGTERM');
  proxy.child.kill('SIGTERM');
  fake.child.kill('SIGTERM');
  stat?.child.kill('SIGTERM');
  portkey?.child.kill('SIGTERM');
  agent.destroy();
}

// The second table: added latency = p(path) - p(direct), with intervals.
function printQuantileTable(results) {
  const level = results[0]?.qdiff?.[0]?.level ?? 0.95;
  const f = (x) => (Number.isFinite(x) ? x.toFixed(3) : '-');
  const fr = (x) => (Number.isFinite(x) ? x.toFixed(2) : '-');
  const withCi = (est, ci, fmt, unit) => (ci === undefined ? '-' : `${Number.isFinite(est) ? fmt(est) + unit : '-'} [${fmt(ci.lo)}, ${fmt(ci.hi)}]`);
  const cells = [];
  console.log(`\nAdded latency = quantile(path) - quantile(direct), ${(level * 100).toFixed(0)} % bootstrap intervals (${RESAMPLES} resamples of the rounds, seed ${SEED}); ms and x:`);
  const bcol = results.some((r) => r.qdiff?.[0]?.added_ms.baseline !== undefined);
  console.log(`| request | mode | q | rounds | direct | toolcache added | nginx added | portkey added | toolcache/nginx | goal <= 1.5x | portkey/toolcache | goal >= 8x |${bcol ? ' baseline added | baseline/nginx |' : ''} load after |`);
  console.log(`|---|---|---|---|---|---|---|---|---|---|---|---|${bcol ? '---|---|' : ''}---|`);
  for (const r of results) {
    for (const s of r.qdiff ?? []) {
      const q = s.q === 0.5 ? 'p50' : `p${Math.round(s.q * 100)}`;
      const add = (p) => withCi(s.added_ms[p], s.ci[p], f, '');
      const tn = s.cells.toolcache_vs_nginx?.verdict ?? '-';
      const pk = s.cells.portkey_vs_toolcache?.verdict ?? (r.portkey_missing ? 'no anchor (Portkey failed)' : '-');
      // A ratio is undefined in a resample whose added times are <= 0:
      // those are left out of its interval (the verdict does not use it).
      const skipped = (k) => (s.ci[k] && s.ci[k].n < s.resamples ? ` (${s.resamples - s.ci[k].n} resamples <= 0 left out)` : '');
      const req = `${(r.bytes / 1024).toFixed(0)} KB`;
      const mode = r.stream ? 'SSE' : 'JSON';
      const b = bcol ? ` ${add('baseline')} | ${withCi(s.estimate.baseline_over_nginx, s.ci.baseline_over_nginx, fr, 'x')}${skipped('baseline_over_nginx')} |` : '';
      console.log(`| ${req} | ${mode} | ${q} | ${s.rounds} | ${f(s.direct_ms)} | ${add('toolcache')} | ${add('nginx')} | ${r.portkey_missing ? 'failed' : add('portkey')} | ${withCi(s.estimate.toolcache_over_nginx, s.ci.toolcache_over_nginx, fr, 'x')}${skipped('toolcache_over_nginx')} | ${tn} | ${withCi(s.estimate.portkey_over_toolcache, s.ci.portkey_over_toolcache, fr, 'x')}${skipped('portkey_over_toolcache')} | ${pk} |${b} ${r.load_after_block} |`);
      if (s.cells.toolcache_vs_nginx) cells.push(`${req} ${mode} ${q} toolcache <= 1.5x nginx: ${tn}`);
      if (s.cells.portkey_vs_toolcache) cells.push(`${req} ${mode} ${q} Portkey >= 8x toolcache: ${pk}`);
      else if (r.portkey_missing) cells.push(`${req} ${mode} ${q} Portkey >= 8x toolcache: no anchor (Portkey's own failure: ${String(r.portkey_missing).slice(0, 60)})`);
    }
  }
  console.log('\nGoal cells (decided on toolcache - 1.5 x nginx and Portkey - 8 x toolcache: met when the interval is on the goal\'s side of 0, undecided when it straddles 0):');
  for (const c of cells) console.log(`  ${c}`);
}

main().catch((e) => { console.error(e); process.exit(1); });
