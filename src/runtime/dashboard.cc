// The dashboard page (dashboard.h): head, inline style, body, inline
// script. The CSP pins the style and the script by their SHA-256, so the
// page runs nothing else even if a stats value carried markup (values are
// set with textContent, never innerHTML).
// Invariants: kStyle and kScript are exactly the bytes between their tags
// (the hashes are of those bytes); the page loads no URL but its own
// /toolcache/stats.
// Choice (session 19): with an admin token configured the page is opened as
// /dashboard#token=<admin token>; the fragment never leaves the browser (not
// sent to the server, not in a Referer) and the script sends it as
// `Authorization: Bearer` on its same-origin stats fetch.
// Choice: SVG drawn by the page's JS (not canvas) so axis labels and ticks
// are DOM text a browser test can read.
#include "src/runtime/dashboard.h"

#include <string>

#include "src/core/sha256.h"

namespace toolcache::runtime {
namespace {

constexpr std::string_view kHead = R"HTML(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>toolcache</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<style>)HTML";

constexpr std::string_view kStyle =
    R"CSS(body{font:14px system-ui,sans-serif;margin:1.5em;color:#222;background:#fafafa}
h1{font-size:1.3em;margin:0 0 .6em} h2{font-size:1.05em;margin:1.2em 0 .4em}
.cards{display:flex;flex-wrap:wrap;gap:.8em}
.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.6em .9em;min-width:8em}
.card .v{font-size:1.5em;font-weight:600} .card .k{color:#666;font-size:.85em}
table{border-collapse:collapse;background:#fff} td,th{border:1px solid #ddd;padding:.25em .6em;text-align:right}
th{background:#f0f0f0} td:first-child,td:nth-child(2),th:first-child,th:nth-child(2){text-align:left}
#chart{background:#fff;border:1px solid #ddd;border-radius:6px}
#chart .plot{fill:none;stroke:#bbb} #chart .grid{stroke:#eee}
#chart .tick{font-size:11px;fill:#555} #chart .axis{font-size:12px;fill:#222}
#chart polyline{fill:none;stroke-width:2} #chart polyline.hit{stroke:#1a7f37} #chart polyline.saved{stroke:#0550ae}
#chart text.hit{fill:#1a7f37} #chart text.saved{fill:#0550ae}
#status{color:#666;font-size:.85em}
)CSS";

constexpr std::string_view kBody = R"HTML(</style>
</head>
<body>
<h1>toolcache <span id="face">…</span> <span id="status">loading…</span></h1>
<div class="cards">
 <div class="card"><div class="v" id="calls">-</div><div class="k">calls</div></div>
 <div class="card"><div class="v" id="hits">-</div><div class="k">hits (served from cache)</div></div>
 <div class="card"><div class="v" id="wouldHits">-</div><div class="k">would-hits (observed)</div></div>
 <div class="card"><div class="v" id="misses">-</div><div class="k">misses</div></div>
 <div class="card"><div class="v" id="coalesced">-</div><div class="k">coalesced</div></div>
 <div class="card"><div class="v" id="bypasses">-</div><div class="k">bypasses</div></div>
 <div class="card"><div class="v" id="waitedNoResult">-</div><div class="k">waited, no result</div></div>
 <div class="card"><div class="v" id="hitRatio">-</div><div class="k">hit ratio</div></div>
 <div class="card"><div class="v" id="savedSeconds">-</div><div class="k">saved time (s)</div></div>
 <div class="card"><div class="v" id="savedCost">-</div><div class="k">saved cost ($)</div></div>
 <div class="card"><div class="v" id="tokensRead">-</div><div class="k">prompt tokens read from the provider cache</div></div>
 <div class="card"><div class="v" id="tokensLost">-</div><div class="k">cache-read tokens lost to breaks</div></div>
 <div class="card"><div class="v" id="entries">-</div><div class="k">entries cached</div></div>
 <div class="card"><div class="v" id="invalidations">-</div><div class="k">invalidations</div></div>
</div>
<h2>Hit ratio and saved time over time</h2>
<svg id="chart" viewBox="0 0 760 240" width="760" height="240" role="img" aria-label="hit ratio and saved time over time"></svg>
<h2>Per tool</h2>
<table id="tools"><thead><tr><th>server</th><th>tool</th><th>calls</th><th>hits</th><th>misses</th><th>coalesced</th><th>bypasses</th><th>waited, no result</th><th>hit ratio</th><th>saved (s)</th><th>would-hits</th></tr></thead><tbody></tbody></table>
<h2>Bypass reasons</h2>
<table id="bypassReasons"><thead><tr><th>reason</th><th>calls</th></tr></thead><tbody></tbody></table>
<h2>Prompt-cache breaks</h2>
<table id="breaks"><thead><tr><th>cause</th><th>breaks</th><th>cache-read tokens lost</th></tr></thead><tbody></tbody></table>
<h2>Recent invalidations</h2>
<table id="invalidationLog"><thead><tr><th>time</th><th>server</th><th>resource</th><th>cause</th><th>tenant</th></tr></thead><tbody></tbody></table>
<script>)HTML";

constexpr std::string_view kScript = R"JS("use strict";
const live = [];
const SVG = "http://www.w3.org/2000/svg";
function text(id, v) { document.getElementById(id).textContent = v; }
function fmt(x, d) { return Number(x).toFixed(d); }
function cell(tr, v) { const td = document.createElement("td"); td.textContent = v; tr.appendChild(td); }
function fill(id, rows) {
  const tb = document.querySelector("#" + id + " tbody");
  tb.replaceChildren();
  for (const r of rows) { const tr = document.createElement("tr"); for (const v of r) cell(tr, v); tb.appendChild(tr); }
}
function series(s, name) { return (s.metrics && s.metrics[name] && s.metrics[name].series) || []; }
function byLabel(s, name, label) {
  const out = {};
  for (const x of series(s, name)) { const k = x.labels[label]; out[k] = (out[k] || 0) + x.value; }
  return out;
}
// One view of any face's stats document (src/runtime/stats.h).
function view(s) {
  const c = s.cache || {};
  const v = {face: s.face || "?", entries: c.entries ?? 0, wouldHits: c.wouldHits ?? 0,
             bypassesByReason: c.bypassesByReason || {}, invalidationLog: [], history: [], tools: []};
  if (s.face === "serve") {
    const t = s.totals;
    Object.assign(v, {calls: t.calls, hits: t.hits, misses: t.misses, coalesced: t.coalesced,
      bypasses: t.bypasses, waitedNoResult: t.waitedNoResult, hitRatio: t.hitRatio,
      savedSeconds: t.savedSeconds, savedCost: fmt(t.savedCost, 4), invalidations: t.invalidations,
      bypassesByReason: s.bypassesByReason, history: s.history});
    v.tools = s.tools.map(x => ({...x, wouldHits: 0}));
    v.invalidationLog = s.recentInvalidations;
  } else {
    const calls = (c.calls ?? 0) + (c.peeks ?? 0);
    Object.assign(v, {calls, hits: c.hits ?? 0, misses: c.misses ?? 0, coalesced: c.coalesced ?? 0,
      bypasses: c.bypasses ?? 0, waitedNoResult: 0,
      hitRatio: calls ? ((c.hits ?? 0) + (c.coalesced ?? 0) + (c.wouldHits ?? 0)) / calls : 0,
      savedSeconds: c.savedSeconds ?? 0, savedCost: "n/a", invalidations: c.invalidations ?? 0});
    const rows = {};
    const row = (api, tool) => rows[api + "\u0000" + tool] ??= {server: api, tool, calls: 0, hits: 0,
      wouldHits: 0, misses: 0, coalesced: 0, bypasses: 0, waitedNoResult: 0, savedSeconds: 0};
    for (const x of series(s, "toolcache_llm_tool_calls_total")) {
      const r = row(x.labels.api, x.labels.tool);
      r.calls += x.value;
      if (x.labels.outcome === "would_hit") r.wouldHits += x.value;
      else if (x.labels.outcome === "miss") r.misses += x.value;
      else r.bypasses += x.value;
    }
    for (const x of series(s, "toolcache_llm_served_total")) row(x.labels.api, x.labels.tool).hits += x.value;
    v.tools = Object.values(rows);
  }
  const tokens = byLabel(s, "toolcache_prompt_cache_tokens_total", "what");
  const lost = byLabel(s, "toolcache_prompt_cache_break_tokens_total", "cause");
  v.tokensRead = tokens.read ?? 0;
  v.tokensLost = Object.values(lost).reduce((a, b) => a + b, 0);
  const breaks = byLabel(s, "toolcache_prompt_cache_breaks_total", "cause");
  v.breaks = Object.keys(breaks).sort().map(k => [k, breaks[k], lost[k] ?? 0]);
  return v;
}
function el(parent, name, attrs, content) {
  const e = document.createElementNS(SVG, name);
  for (const [k, val] of Object.entries(attrs)) e.setAttribute(k, val);
  if (content !== undefined) e.textContent = content;
  parent.appendChild(e);
  return e;
}
function clock(t) { return new Date(t * 1000).toLocaleTimeString([], {hour12: false}); }
// Hit ratio (left axis, 0-1) and saved time (right axis, seconds) against
// wall-clock time (bottom axis), with ticks and labelled units.
function draw(points) {
  const svg = document.getElementById("chart");
  svg.replaceChildren();
  const W = 760, H = 240, L = 56, R = 64, T = 14, B = 44;
  const w = W - L - R, h = H - T - B;
  el(svg, "rect", {x: L, y: T, width: w, height: h, class: "plot"});
  const t0 = points.length ? points[0].time : Date.now() / 1000;
  const t1 = points.length > 1 ? points[points.length - 1].time : t0 + 1;
  const maxSaved = Math.max(1e-9, ...points.map(p => p.savedSeconds));
  const X = t => L + w * (t - t0) / Math.max(1e-9, t1 - t0);
  const Y = f => T + h * (1 - f);
  for (let i = 0; i <= 4; ++i) {
    const f = i / 4, y = Y(f);
    el(svg, "line", {x1: L, x2: L + w, y1: y, y2: y, class: "grid"});
    el(svg, "text", {x: L - 6, y: y + 4, "text-anchor": "end", class: "tick"}, fmt(f, 2));
    el(svg, "text", {x: L + w + 6, y: y + 4, class: "tick"}, fmt(maxSaved * f, maxSaved < 1 ? 3 : 1));
  }
  for (let i = 0; i <= 4; ++i) {
    const t = t0 + (t1 - t0) * i / 4;
    el(svg, "text", {x: X(t), y: T + h + 16, "text-anchor": "middle", class: "tick"}, clock(t));
  }
  el(svg, "text", {x: L + w / 2, y: H - 6, "text-anchor": "middle", class: "axis", id: "xLabel"}, "time (local clock, hh:mm:ss)");
  el(svg, "text", {x: 14, y: T + h / 2, "text-anchor": "middle", class: "axis hit", id: "yLeftLabel",
                   transform: `rotate(-90 14 ${T + h / 2})`}, "hit ratio (0–1)");
  el(svg, "text", {x: W - 10, y: T + h / 2, "text-anchor": "middle", class: "axis saved", id: "yRightLabel",
                   transform: `rotate(90 ${W - 10} ${T + h / 2})`}, "saved time (s)");
  if (points.length < 2) {
    el(svg, "text", {x: L + 10, y: T + 20, class: "tick"}, "collecting points…");
    return;
  }
  const line = (cls, f) => el(svg, "polyline", {class: cls,
    points: points.map(p => `${fmt(X(p.time), 1)},${fmt(Y(f(p)), 1)}`).join(" ")});
  line("hit", p => p.calls ? Math.min(1, p.hits / p.calls) : 0);
  line("saved", p => p.savedSeconds / maxSaved);
}
const adminToken = new URLSearchParams(location.hash.slice(1)).get("token");
async function refresh() {
  try {
    const r = await fetch("/toolcache/stats", {cache: "no-store",
      headers: adminToken ? {authorization: "Bearer " + adminToken} : {}});
    if (r.status === 401) throw new Error("HTTP 401: open this page as /dashboard#token=<admin token>");
    if (!r.ok) throw new Error("HTTP " + r.status);
    const v = view(await r.json());
    text("face", v.face);
    text("calls", v.calls); text("hits", v.hits); text("wouldHits", v.wouldHits); text("misses", v.misses);
    text("coalesced", v.coalesced); text("bypasses", v.bypasses);
    text("waitedNoResult", v.waitedNoResult);
    text("hitRatio", fmt(v.hitRatio, 3)); text("savedSeconds", fmt(v.savedSeconds, 3));
    text("savedCost", v.savedCost); text("entries", v.entries);
    text("invalidations", v.invalidations);
    text("tokensRead", v.tokensRead); text("tokensLost", v.tokensLost);
    fill("tools", v.tools.map(x => [x.server, x.tool, x.calls, x.hits, x.misses, x.coalesced, x.bypasses, x.waitedNoResult,
      fmt(x.calls ? (x.hits + x.coalesced + x.wouldHits) / x.calls : 0, 3), fmt(x.savedSeconds, 3), x.wouldHits]));
    fill("bypassReasons", Object.entries(v.bypassesByReason));
    fill("breaks", v.breaks);
    fill("invalidationLog", v.invalidationLog.map(e => [new Date(e.time * 1000).toISOString(), e.server, e.resource, e.cause, e.tenant]));
    live.push({time: Date.now() / 1000, calls: v.calls, hits: v.hits + v.coalesced + v.wouldHits, savedSeconds: v.savedSeconds});
    while (live.length > 600) live.shift();
    const hist = v.history.filter(p => !live.length || p.time < live[0].time);
    draw(hist.concat(live));
    text("status", "updated " + new Date().toLocaleTimeString([], {hour12: false}));
    document.body.dataset.loaded = "1";
  } catch (e) {
    text("status", "stats unavailable: " + e.message);
  }
}
refresh();
setInterval(refresh, 2000);
)JS";

constexpr std::string_view kTail = R"HTML(</script>
</body>
</html>
)HTML";

std::string Base64(const Sha256Digest& d) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < d.size(); i += 3) {
    const uint32_t v = (d[i] << 16) | (d[i + 1] << 8) | d[i + 2];
    for (int s : {18, 12, 6, 0}) out += kAlphabet[(v >> s) & 63];
  }
  // 32 bytes: two left over, one '=' of padding.
  const uint32_t v = (d[i] << 16) | (d[i + 1] << 8);
  for (int s : {18, 12, 6}) out += kAlphabet[(v >> s) & 63];
  out += '=';
  return out;
}

}  // namespace

std::string_view DashboardHtml() {
  static const std::string page = std::string(kHead) + std::string(kStyle) +
                                  std::string(kBody) + std::string(kScript) +
                                  std::string(kTail);
  return page;
}

std::string_view DashboardCsp() {
  static const std::string csp =
      "default-src 'none'; script-src 'sha256-" +
      Base64(ComputeSha256(kScript)) + "'; style-src 'sha256-" +
      Base64(ComputeSha256(kStyle)) +
      "'; connect-src 'self'; img-src data:; base-uri 'none'; "
      "form-action 'none'; frame-ancestors 'none'";
  return csp;
}

}  // namespace toolcache::runtime
