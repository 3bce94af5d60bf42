// Added latency as the difference of two distributions' quantiles, with
// bootstrap confidence intervals (session 18, issue 32 item 5), for
// bench/llm_proxy.mjs. Self-test: `node bench/llm_latency_stats.mjs
// --self-test` (ctest e2e_bench_stats).
//
// Why: "a proxy adds X ms at p99" means p99(through the proxy) -
// p99(direct), each quantile over many rounds. The bench's "paired p99"
// (the p99 of path - direct taken round by round) adds the variance of two
// independent stall processes (one in each request of the pair), so on a
// machine that stalls for milliseconds its p99 is the stall size, whatever
// the proxy costs. The quantile difference has no such term, but it is
// noisy at the tail (earlier sessions saw it go negative at 1,000
// rounds), hence the intervals and the many rounds.
//
// Method: rounds are resampled with replacement (the same round indices for
// every path, so a round's paths stay together and the ratios keep their
// correlation); in each resample every path's added quantile and the
// goals' ratios are recomputed; the interval is the resamples' 2.5 % and
// 97.5 % percentiles (the percentile bootstrap). A resample's quantile is
// read from the path's sorted samples weighted by how often each round was
// drawn (O(rounds) per path, no sort per resample); it equals sorting the
// resampled values (the self-test checks that).
//
// Quantile definition (the bench's, kept): the value at index
// min(n - 1, floor(q * n)) of the ascending sort.
//
// Goal cells: "toolcache <= 1.5x nginx" is decided on D = toolcache added
// - 1.5 * nginx added (met when D's interval is below 0, not met when above,
// undecided when it straddles 0), and "Portkey >= 8x toolcache" on
// Portkey added - 8 * toolcache added (met above 0). Choice: the linear
// form stays defined when a resample's nginx or toolcache added quantile
// is <= 0, where the ratio is not; the printed ratio intervals leave out
// such resamples and say how many.

export function quantile(xs, q) {
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

// xorshift32, seeded (the bench's generator): a run is repeatable.
export function makeRng(seed) {
  let x = (seed >>> 0) || 1;
  return () => {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    return x / 4294967296;
  };
}

// One path's samples prepared for weighted quantiles: values ascending and,
// for each, the round it came from.
function prepare(xs) {
  const order = Uint32Array.from(xs.keys()).sort((a, b) => xs[a] - xs[b]);
  return { order, values: Float64Array.from(order, (i) => xs[i]) };
}

// The quantile of the resample that drew round i counts[i] times.
function weightedQuantile(p, counts, n, q) {
  const k = Math.min(n - 1, Math.floor(q * n));
  if (q >= 0.5) {
    // From the top: the value at index k has n - 1 - k values above it.
    const above = n - 1 - k;
    let cum = 0;
    for (let j = p.order.length - 1; j >= 0; --j) {
      cum += counts[p.order[j]];
      if (cum > above) return p.values[j];
    }
  } else {
    let cum = 0;
    for (let j = 0; j < p.order.length; ++j) {
      cum += counts[p.order[j]];
      if (cum > k) return p.values[j];
    }
  }
  return NaN;
}

function interval(xs, level) {
  const finite = xs.filter((x) => Number.isFinite(x));
  if (finite.length === 0) return { lo: NaN, hi: NaN, n: 0 };
  const a = (1 - level) / 2;
  // Interpolation-free percentiles of the resampled statistics.
  const s = Float64Array.from(finite).sort();
  const at = (p) => s[Math.min(s.length - 1, Math.max(0, Math.round(p * (s.length - 1))))];
  return { lo: at(a), hi: at(1 - a), n: finite.length };
}

// Decision of a "stat < 0 is good" (below) or "stat > 0 is good" (above)
// goal from its interval.
function decide(ci, goodBelow) {
  if (!Number.isFinite(ci.lo)) return 'undecided';
  if (goodBelow) return ci.hi < 0 ? 'met' : ci.lo > 0 ? 'not met' : 'undecided';
  return ci.lo > 0 ? 'met' : ci.hi < 0 ? 'not met' : 'undecided';
}

// samples: { direct: [ms per round], toolcache: [...], nginx?: [...],
// portkey?: [...], baseline?: [...] }, every non-empty list one value per
// round (the same rounds). Paths with no samples are left out.
// Returns, per quantile q: the point estimates, each path's added
// quantile with its interval, the ratios and the goal cells.
export function addedQuantiles(samples, {
  quantiles = [0.5, 0.99], resamples = 1000, level = 0.95, seed = 1,
  nginxGoal = 1.5, portkeyGoal = 8,
} = {}) {
  const paths = Object.keys(samples).filter((k) => samples[k]?.length > 0);
  if (!paths.includes('direct')) throw new Error('addedQuantiles: no direct samples');
  const n = samples.direct.length;
  for (const p of paths) {
    if (samples[p].length !== n) throw new Error(`addedQuantiles: ${p} has ${samples[p].length} samples, direct ${n}`);
  }
  const prepared = Object.fromEntries(paths.map((p) => [p, prepare(samples[p])]));
  const added = paths.filter((p) => p !== 'direct');
  const has = (p) => added.includes(p);
  const rng = makeRng(seed);
  // Per quantile, per statistic, the resampled values.
  const boot = quantiles.map(() => ({}));
  const push = (b, key, v) => (b[key] ??= []).push(v);
  const counts = new Uint32Array(n);
  for (let r = 0; r < resamples; ++r) {
    counts.fill(0);
    for (let i = 0; i < n; ++i) counts[Math.floor(rng() * n)] += 1;
    quantiles.forEach((q, qi) => {
      const b = boot[qi];
      const d = weightedQuantile(prepared.direct, counts, n, q);
      const a = {};
      for (const p of added) {
        a[p] = weightedQuantile(prepared[p], counts, n, q) - d;
        push(b, p, a[p]);
      }
      statistics(a, has, nginxGoal, portkeyGoal, (key, v) => push(b, key, v));
    });
  }
  return quantiles.map((q, qi) => {
    const direct = quantile(samples.direct, q);
    const point = {};
    for (const p of added) point[p] = quantile(samples[p], q) - direct;
    const est = {};
    statistics(point, has, nginxGoal, portkeyGoal, (key, v) => { est[key] = v; });
    const ci = Object.fromEntries(Object.entries(boot[qi]).map(([k, xs]) => [k, interval(xs, level)]));
    const out = { q, rounds: n, resamples, level, direct_ms: direct, added_ms: point, estimate: est, ci, cells: {} };
    if (has('toolcache') && has('nginx')) {
      out.cells.toolcache_vs_nginx = { goal: `<= ${nginxGoal}x`, verdict: decide(ci.tc_minus_goal_nginx, true) };
    }
    if (has('toolcache') && has('portkey')) {
      out.cells.portkey_vs_toolcache = { goal: `>= ${portkeyGoal}x`, verdict: decide(ci.pk_minus_goal_tc, false) };
    }
    return out;
  });
}

// The goal statistics of one set of added quantiles (`a`), by key.
function statistics(a, has, nginxGoal, portkeyGoal, emit) {
  const ratio = (x, y) => (y > 0 && x > 0 ? x / y : NaN);
  if (has('toolcache') && has('nginx')) {
    emit('toolcache_over_nginx', ratio(a.toolcache, a.nginx));
    emit('tc_minus_goal_nginx', a.toolcache - nginxGoal * a.nginx);
  }
  if (has('baseline') && has('nginx')) emit('baseline_over_nginx', ratio(a.baseline, a.nginx));
  if (has('toolcache') && has('portkey')) {
    emit('portkey_over_toolcache', ratio(a.portkey, a.toolcache));
    emit('pk_minus_goal_tc', a.portkey - portkeyGoal * a.toolcache);
  }
}

// The paired statistic the bench printed before (kept beside the new one):
// the quantile of path - direct taken round by round.
export function pairedQuantile(path, direct, q) {
  return quantile(path.map((x, i) => x - direct[i]), q);
}

// ------------------------------------------------------------ self-test

function selfTest() {
  let failures = 0;
  const check = (ok, what) => {
    console.log(`${ok ? 'ok' : 'FAIL'} - ${what}`);
    if (!ok) failures += 1;
  };
  const near = (a, b, eps) => Math.abs(a - b) <= eps;

  // 1. The weighted quantile equals sorting the resampled values.
  {
    const rng = makeRng(7);
    let same = true;
    for (let t = 0; t < 200 && same; ++t) {
      const n = 1 + Math.floor(rng() * 60);
      const xs = Array.from({ length: n }, () => Math.floor(rng() * 20) / 4);  // ties
      const counts = new Uint32Array(n);
      const drawn = [];
      for (let i = 0; i < n; ++i) { const j = Math.floor(rng() * n); counts[j] += 1; drawn.push(xs[j]); }
      const p = prepare(xs);
      for (const q of [0, 0.1, 0.5, 0.9, 0.99, 1]) {
        if (weightedQuantile(p, counts, n, q) !== quantile(drawn, q)) same = false;
      }
    }
    check(same, 'weighted quantile == quantile of the resampled values (200 random cases, ties, q 0..1)');
  }

  // 2. Known shifts: path = direct + shift in distribution (independent
  // draws), so added p50 and p99 are the shift; rare large stalls hit every
  // path independently (3 % of requests, 2-5 ms).
  const rng = makeRng(42);
  const n = 20000;
  const draw = (shift) => Array.from({ length: n }, () => {
    const base = 0.3 + 0.05 * (rng() + rng() + rng());  // ~0.375 ms, narrow
    const stall = rng() < 0.03 ? 2 + 3 * rng() : 0;
    return base + shift + stall;
  });
  const samples = { direct: draw(0), toolcache: draw(0.1), nginx: draw(0.08), portkey: draw(2.0) };
  const [p50, p99] = addedQuantiles(samples, { resamples: 300, seed: 3 });
  check(near(p50.added_ms.toolcache, 0.1, 0.005) && near(p50.added_ms.nginx, 0.08, 0.005),
    `p50 added = the shifts (toolcache ${p50.added_ms.toolcache.toFixed(4)}, nginx ${p50.added_ms.nginx.toFixed(4)})`);
  check(p50.ci.toolcache.lo <= 0.1 && 0.1 <= p50.ci.toolcache.hi && p50.ci.toolcache.hi - p50.ci.toolcache.lo < 0.01,
    `p50 interval holds the shift and is narrow ([${p50.ci.toolcache.lo.toFixed(4)}, ${p50.ci.toolcache.hi.toFixed(4)}])`);
  check(p50.cells.toolcache_vs_nginx.verdict === 'met' && p50.cells.portkey_vs_toolcache.verdict === 'met',
    `p50 cells: 0.1/0.08 = 1.25x is met (${p50.cells.toolcache_vs_nginx.verdict}), 2.0/0.1 = 20x is met (${p50.cells.portkey_vs_toolcache.verdict})`);
  // At p99 every path's quantile is inside its own stalls (3 % of 2-5 ms):
  // the difference is small but wide; the paired p99 is the stall size.
  const paired = pairedQuantile(samples.toolcache, samples.direct, 0.99);
  check(paired > 1.5, `paired p99 measures the stalls (${paired.toFixed(3)} ms for a 0.1 ms shift)`);
  check(p99.ci.toolcache.lo <= 0.1 && 0.1 <= p99.ci.toolcache.hi,
    `p99 added: its interval holds the shift ([${p99.ci.toolcache.lo.toFixed(3)}, ${p99.ci.toolcache.hi.toFixed(3)}])`);

  // 3. Without stalls the p99 difference is the shift, and the verdicts
  // follow the interval: 2.0x nginx is not met, 1.5x exactly undecided.
  const calm = (shift) => Array.from({ length: n }, () => 0.3 + 0.05 * (rng() + rng() + rng()) + shift);
  const s2 = { direct: calm(0), toolcache: calm(0.2), nginx: calm(0.1), portkey: calm(1.0) };
  const [c50, c99] = addedQuantiles(s2, { resamples: 300, seed: 5 });
  check(near(c99.added_ms.toolcache, 0.2, 0.01), `calm p99 added = the shift (${c99.added_ms.toolcache.toFixed(4)})`);
  check(c50.cells.toolcache_vs_nginx.verdict === 'not met' && c99.cells.toolcache_vs_nginx.verdict === 'not met',
    `2.0x nginx is not met at p50 and p99 (${c50.cells.toolcache_vs_nginx.verdict}, ${c99.cells.toolcache_vs_nginx.verdict})`);
  check(c50.cells.portkey_vs_toolcache.verdict === 'not met', `5x Portkey is not met (${c50.cells.portkey_vs_toolcache.verdict})`);
  check(c50.ci.toolcache_over_nginx.lo < 2 && 2 < c50.ci.toolcache_over_nginx.hi,
    `ratio interval holds 2.0 ([${c50.ci.toolcache_over_nginx.lo.toFixed(3)}, ${c50.ci.toolcache_over_nginx.hi.toFixed(3)}])`);
  const s3 = { direct: calm(0), toolcache: calm(0.15), nginx: calm(0.1) };
  const [u50] = addedQuantiles(s3, { resamples: 300, seed: 9, quantiles: [0.5] });
  check(u50.cells.toolcache_vs_nginx.verdict === 'undecided', `exactly 1.5x is undecided (${u50.cells.toolcache_vs_nginx.verdict})`);

  // 4. Same seed, same answer; mismatched lengths are refused.
  const again = addedQuantiles(s3, { resamples: 300, seed: 9, quantiles: [0.5] })[0];
  check(again.ci.toolcache.lo === u50.ci.toolcache.lo && again.ci.toolcache.hi === u50.ci.toolcache.hi, 'seeded: repeatable');
  let threw = false;
  try { addedQuantiles({ direct: [1, 2], toolcache: [1] }); } catch { threw = true; }
  check(threw, 'samples of different lengths are refused');

  console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
  return failures === 0;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()) && process.argv.includes('--self-test')) {
  process.exit(selfTest() ? 0 : 1);
}
