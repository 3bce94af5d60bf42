// The dashboard page served at GET /: one self-contained HTML document
// (inline CSS and JS, no external assets, no CDN). It polls
// /toolcache/stats every 2 s and draws the totals, the hit ratio and saved
// time over time (server-side history plus points seen live), the per-tool
// table, bypass reasons and recent invalidations. Element ids are part of
// the contract of tests/browser/dashboard.test.mjs.
#include "src/serve/service.h"

namespace toolcache::serve {

std::string_view DashboardHtml() {
  static constexpr std::string_view kHtml = R"HTML(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>toolcache</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<style>
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222;background:#fafafa}
h1{font-size:1.3em;margin:0 0 .6em} h2{font-size:1.05em;margin:1.2em 0 .4em}
.cards{display:flex;flex-wrap:wrap;gap:.8em}
.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.6em .9em;min-width:8em}
.card .v{font-size:1.5em;font-weight:600} .card .k{color:#666;font-size:.85em}
table{border-collapse:collapse;background:#fff} td,th{border:1px solid #ddd;padding:.25em .6em;text-align:right}
th{background:#f0f0f0} td:first-child,td:nth-child(2),th:first-child,th:nth-child(2){text-align:left}
canvas{background:#fff;border:1px solid #ddd;border-radius:6px}
#status{color:#666;font-size:.85em}
</style>
</head>
<body>
<h1>toolcache serve <span id="status">loading…</span></h1>
<div class="cards">
 <div class="card"><div class="v" id="calls">-</div><div class="k">calls</div></div>
 <div class="card"><div class="v" id="hits">-</div><div class="k">hits</div></div>
 <div class="card"><div class="v" id="misses">-</div><div class="k">misses</div></div>
 <div class="card"><div class="v" id="coalesced">-</div><div class="k">coalesced</div></div>
 <div class="card"><div class="v" id="bypasses">-</div><div class="k">bypasses</div></div>
 <div class="card"><div class="v" id="waitedNoResult">-</div><div class="k">waited, no result</div></div>
 <div class="card"><div class="v" id="hitRatio">-</div><div class="k">hit ratio</div></div>
 <div class="card"><div class="v" id="savedSeconds">-</div><div class="k">saved time (s)</div></div>
 <div class="card"><div class="v" id="savedCost">-</div><div class="k">saved cost</div></div>
 <div class="card"><div class="v" id="entries">-</div><div class="k">entries cached</div></div>
 <div class="card"><div class="v" id="invalidations">-</div><div class="k">invalidations</div></div>
</div>
<h2>Hit ratio and saved time over time</h2>
<canvas id="chart" width="760" height="200"></canvas>
<h2>Per tool</h2>
<table id="tools"><thead><tr><th>server</th><th>tool</th><th>calls</th><th>hits</th><th>misses</th><th>coalesced</th><th>bypasses</th><th>waited, no result</th><th>hit ratio</th><th>saved (s)</th></tr></thead><tbody></tbody></table>
<h2>Bypass reasons</h2>
<table id="bypassReasons"><thead><tr><th>reason</th><th>calls</th></tr></thead><tbody></tbody></table>
<h2>Recent invalidations</h2>
<table id="invalidationLog"><thead><tr><th>time</th><th>server</th><th>resource</th><th>cause</th><th>tenant</th></tr></thead><tbody></tbody></table>
<script>
"use strict";
const live = [];
function text(id, v) { document.getElementById(id).textContent = v; }
function fmt(x, d) { return Number(x).toFixed(d); }
function cell(tr, v) { const td = document.createElement("td"); td.textContent = v; tr.appendChild(td); }
function fill(id, rows) {
  const tb = document.querySelector("#" + id + " tbody");
  tb.replaceChildren();
  for (const r of rows) { const tr = document.createElement("tr"); for (const v of r) cell(tr, v); tb.appendChild(tr); }
}
function draw(points) {
  const c = document.getElementById("chart"), g = c.getContext("2d");
  g.clearRect(0, 0, c.width, c.height);
  if (points.length < 2) { g.fillStyle = "#888"; g.fillText("collecting points…", 10, 20); return; }
  const t0 = points[0].time, t1 = points[points.length - 1].time || t0 + 1;
  const maxSaved = Math.max(1e-9, ...points.map(p => p.savedSeconds));
  const X = t => 40 + (c.width - 60) * (t - t0) / Math.max(1e-9, t1 - t0);
  const line = (color, y) => { g.strokeStyle = color; g.beginPath();
    points.forEach((p, i) => { const yy = y(p); i ? g.lineTo(X(p.time), yy) : g.moveTo(X(p.time), yy); }); g.stroke(); };
  const H = c.height - 30;
  line("#1a7f37", p => 10 + H * (1 - (p.calls ? p.hits / p.calls : 0)));
  line("#0550ae", p => 10 + H * (1 - p.savedSeconds / maxSaved));
  g.fillStyle = "#1a7f37"; g.fillText("hit ratio (0..1)", 45, c.height - 5);
  g.fillStyle = "#0550ae"; g.fillText("saved s (max " + fmt(maxSaved, 3) + ")", 200, c.height - 5);
}
async function refresh() {
  try {
    const r = await fetch("/toolcache/stats", {cache: "no-store"});
    if (!r.ok) throw new Error("HTTP " + r.status);
    const s = await r.json();
    const t = s.totals;
    text("calls", t.calls); text("hits", t.hits); text("misses", t.misses);
    text("coalesced", t.coalesced); text("bypasses", t.bypasses);
    text("waitedNoResult", t.waitedNoResult);
    text("hitRatio", fmt(t.hitRatio, 3)); text("savedSeconds", fmt(t.savedSeconds, 3));
    text("savedCost", fmt(t.savedCost, 4)); text("entries", s.cache.entries);
    text("invalidations", t.invalidations);
    fill("tools", s.tools.map(x => [x.server, x.tool, x.calls, x.hits, x.misses, x.coalesced, x.bypasses, x.waitedNoResult,
      fmt(x.calls ? (x.hits + x.coalesced) / x.calls : 0, 3), fmt(x.savedSeconds, 3)]));
    fill("bypassReasons", Object.entries(s.bypassesByReason));
    fill("invalidationLog", s.recentInvalidations.map(e => [new Date(e.time * 1000).toISOString(), e.server, e.resource, e.cause, e.tenant]));
    live.push({time: Date.now() / 1000, calls: t.calls, hits: t.hits + t.coalesced, savedSeconds: t.savedSeconds});
    while (live.length > 600) live.shift();
    const hist = s.history.filter(p => !live.length || p.time < live[0].time);
    draw(hist.concat(live));
    text("status", "updated " + new Date().toLocaleTimeString());
    document.body.dataset.loaded = "1";
  } catch (e) {
    text("status", "stats unavailable: " + e.message);
  }
}
refresh();
setInterval(refresh, 2000);
</script>
</body>
</html>
)HTML";
  return kHtml;
}

}  // namespace toolcache::serve
