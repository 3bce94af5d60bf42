// The one dashboard of every HTTP face (src/runtime/dashboard.h) in a real
// headless browser (Debian's chromium driven by puppeteer-core), on
// `toolcache serve` and on the LLM proxy: the page loads under its CSP with
// no console errors and no failed request, the numbers it shows match
// /toolcache/stats, and the chart has its axis labels, ticks and lines.
// Run by tests/e2e_dashboard.sh with TOOLCACHE_BIN set.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { killOnExit } from '../support/kill_on_exit.mjs';
import { existsSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';
import { startFakeUpstream } from '../llm/fake_upstream.mjs';

const BIN = process.env.TOOLCACHE_BIN;
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
let server, url, browser;

before(async () => {
  assert.ok(BIN, 'TOOLCACHE_BIN must name the toolcache binary');
  assert.ok(existsSync(CHROMIUM), `no browser at ${CHROMIUM} (apt-get install chromium)`);
  const dir = mkdtempSync(join(tmpdir(), 'tc-dash-'));
  const cfg = join(dir, 'serve.yaml');
  writeFileSync(cfg, `
tools:
  get_weather: {requestType: INFORMATIONAL, ttlSeconds: 600}
  search_docs: {requestType: INFORMATIONAL, ttlSeconds: 600}
  set_alarm: {requestType: COMMAND}
`);
  server = killOnExit(spawn(BIN, ['serve', '--listen', '127.0.0.1:0', '--config', cfg, '--log-level', 'error'],
    { stdio: ['ignore', 'pipe', 'pipe'] }));
  url = await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/\S+)/);
      if (m) resolve(m[1]);
    });
    server.on('exit', (code) => reject(new Error(`serve exited ${code}`)));
  });
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
});
after(async () => {
  if (browser) await browser.close();
  server.kill('SIGTERM');
  await new Promise((r) => server.on('exit', r));
});

async function post(path, body) {
  const r = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body) });
  assert.equal(r.status, 200, `${path}: ${await r.clone().text()}`);
  return r.json();
}

async function traffic() {
  for (const city of ['Oslo', 'Rome', 'Lima']) {
    await post('/v1/lookup', { server: 'weather', tool: 'get_weather', arguments: { city } });
    await post('/v1/record', { server: 'weather', tool: 'get_weather', arguments: { city },
      result: { city, tempC: 20 }, latencySeconds: 0.25, cost: 0.01 });
  }
  for (let i = 0; i < 5; ++i) {
    await post('/v1/lookup', { server: 'weather', tool: 'get_weather', arguments: { city: 'Oslo' } });
  }
  const b = await post('/v1/begin', { server: 'docs', tool: 'search_docs', arguments: { q: 'x' } });
  await post('/v1/complete', { ticket: b.ticket, result: { content: ['a'] }, latencySeconds: 1 });
  await post('/v1/begin', { server: 'docs', tool: 'search_docs', arguments: { q: 'x' } });
  await post('/v1/lookup', { server: 'clock', tool: 'set_alarm', arguments: { at: 7 } });
  await post('/v1/record', { server: 'clock', tool: 'set_alarm', arguments: { at: 7 }, result: { ok: true } });
  await post('/v1/invalidate', { server: 'docs', resource: '/tmp/x' });
}

test('the dashboard shows what /toolcache/stats says, with no console errors', async () => {
  await traffic();
  const page = await browser.newPage();
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warn') problems.push(`console ${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()} ${r.url()}`); });
  const resp = await page.goto(url + '/', { waitUntil: 'load' });
  assert.equal(resp.status(), 200);
  await page.waitForSelector('body[data-loaded="1"]', { timeout: 10000 });
  await page.waitForFunction(() => document.querySelectorAll('#chart polyline').length === 2, { timeout: 10000 });
  await page.evaluate(`window.chartOf = ${chartOf.toString()}`);
  const stats = await (await fetch(url + '/toolcache/stats')).json();
  const t = stats.totals;
  assert.equal(t.calls, 11);
  assert.equal(t.hits, 6);
  const shown = await page.evaluate(() => {
    const g = (id) => document.getElementById(id).textContent;
    const rows = (id) => [...document.querySelectorAll(`#${id} tbody tr`)]
      .map((tr) => [...tr.children].map((td) => td.textContent));
    return {
      calls: g('calls'), hits: g('hits'), misses: g('misses'), coalesced: g('coalesced'),
      bypasses: g('bypasses'), hitRatio: g('hitRatio'), savedSeconds: g('savedSeconds'),
      savedCost: g('savedCost'), invalidations: g('invalidations'), entries: g('entries'),
      tools: rows('tools'), bypassReasons: rows('bypassReasons'), invalidationLog: rows('invalidationLog'),
      chart: window.chartOf(),
    };
  });
  assert.equal(shown.calls, String(t.calls));
  assert.equal(shown.hits, String(t.hits));
  assert.equal(shown.misses, String(t.misses));
  assert.equal(shown.coalesced, String(t.coalesced));
  assert.equal(shown.bypasses, String(t.bypasses));
  assert.equal(shown.hitRatio, t.hitRatio.toFixed(3));
  assert.equal(shown.savedSeconds, t.savedSeconds.toFixed(3));
  assert.equal(shown.savedCost, t.savedCost.toFixed(4));
  assert.equal(shown.invalidations, String(t.invalidations));
  assert.equal(shown.entries, String(stats.cache.entries));
  assert.equal(shown.tools.length, stats.tools.length);
  for (const row of stats.tools) {
    const r = shown.tools.find((x) => x[0] === row.server && x[1] === row.tool);
    assert.ok(r, `no row for ${row.server}/${row.tool}`);
    assert.deepEqual(r.slice(2, 7), [row.calls, row.hits, row.misses, row.coalesced, row.bypasses].map(String));
    assert.equal(r[7], String(row.waitedNoResult));
    assert.equal(r[9], row.savedSeconds.toFixed(3));
  }
  assert.deepEqual(Object.fromEntries(shown.bypassReasons.map(([k, v]) => [k, Number(v)])), stats.bypassesByReason);
  assert.equal(shown.invalidationLog.length, stats.recentInvalidations.length);
  assert.deepEqual(shown.invalidationLog.map((r) => r[3]).sort(), ['api', 'write']);
  checkChart(shown.chart);
  assert.equal(resp.headers()['content-security-policy'].startsWith("default-src 'none'; script-src 'sha256-"), true);
  // /dashboard is the same page.
  assert.equal((await fetch(url + '/dashboard')).status, 200);
  assert.deepEqual(problems, []);
  await page.close();
});

// The chart as the browser built it: axis labels, tick texts, line points.
function chartOf() {
  const svg = document.getElementById('chart');
  const t = (id) => svg.querySelector('#' + id)?.textContent ?? '';
  return {
    x: t('xLabel'), yLeft: t('yLeftLabel'), yRight: t('yRightLabel'),
    ticks: [...svg.querySelectorAll('text.tick')].map((e) => e.textContent),
    lines: [...svg.querySelectorAll('polyline')].map((p) => p.getAttribute('points').split(' ').length),
  };
}
function checkChart(c) {
  assert.match(c.x, /time .*hh:mm:ss/);
  assert.match(c.yLeft, /hit ratio \(0–1\)/);
  assert.match(c.yRight, /saved time \(s\)/);
  assert.ok(c.ticks.filter((t) => /^\d\d:\d\d:\d\d$/.test(t)).length >= 2, `time ticks: ${c.ticks}`);
  assert.ok(c.ticks.includes('1.00') && c.ticks.includes('0.00'), `ratio ticks: ${c.ticks}`);
  assert.equal(c.lines.length, 2, 'two lines (hit ratio, saved time)');
  assert.ok(c.lines.every((n) => n >= 2), `points per line: ${c.lines}`);
}

test('the LLM proxy serves the same dashboard: would-hits per tool, breaks, bypasses match its stats', async () => {
  const up = await startFakeUpstream();
  const proxy = killOnExit(spawn(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', up.url, '--log-level', 'error'],
    { stdio: ['ignore', 'pipe', 'pipe'] }));
  try {
    const purl = await new Promise((resolve, reject) => {
      let out = '';
      proxy.stdout.on('data', (d) => { out += d; const m = out.match(/listening on (http:\/\/\S+)/); if (m) resolve(m[1]); });
      proxy.on('exit', (code) => reject(new Error(`proxy exited ${code}`)));
    });
    // A client's tool loop: the model reads one file twice; the second read
    // is a would-hit (the proxy observes, the client runs the tool).
    const readTool = { name: 'Read', description: 'Reads a file from the local filesystem.',
      input_schema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] } };
    up.load({ turns: [
      { name: 'read1', reply: { text: 'Reading.', toolCalls: [{ id: 'toolu_d1', name: 'Read', input: { file_path: '/w/a.txt' } }] } },
      { name: 'read2', reply: { toolCalls: [{ id: 'toolu_d2', name: 'Read', input: { file_path: '/w/a.txt' } }] } },
      { name: 'end', reply: { text: 'Both reads agree.' } },
    ] });
    const messages = [{ role: 'user', content: 'read a.txt twice' }];
    for (let i = 0; i < 5; ++i) {
      const r = await fetch(purl + '/v1/messages', { method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-dash', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'claude-test', max_tokens: 100, tools: [readTool], messages }) });
      assert.equal(r.status, 200, await r.clone().text());
      const msg = await r.json();
      messages.push({ role: 'assistant', content: msg.content });
      const uses = msg.content.filter((b) => b.type === 'tool_use');
      if (uses.length === 0) break;
      messages.push({ role: 'user', content: uses.map((u) => ({ type: 'tool_result', tool_use_id: u.id, content: 'alpha\n' })) });
    }
    const page = await browser.newPage();
    const problems = [];
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warn') problems.push(`console ${m.type()}: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('requestfailed', (r) => problems.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`));
    page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()} ${r.url()}`); });
    const resp = await page.goto(purl + '/dashboard', { waitUntil: 'load' });
    assert.equal(resp.status(), 200);
    assert.ok(resp.headers()['content-security-policy'].includes("connect-src 'self'"));
    await page.waitForSelector('body[data-loaded="1"]', { timeout: 10000 });
    // Two polls, so the live chart has two points.
    await page.waitForFunction(() => document.querySelectorAll('#chart polyline').length === 2, { timeout: 10000 });
    const stats = await (await fetch(purl + '/toolcache/stats')).json();
    assert.equal(stats.face, 'proxy');
    assert.equal(stats.cache.wouldHits, 1);
    const shown = await page.evaluate(`(() => {
      const g = (id) => document.getElementById(id).textContent;
      const rows = (id) => [...document.querySelectorAll('#' + id + ' tbody tr')].map((tr) => [...tr.children].map((td) => td.textContent));
      return { face: g('face'), wouldHits: g('wouldHits'), entries: g('entries'), bypasses: g('bypasses'),
               tools: rows('tools'), bypassReasons: rows('bypassReasons'), breaks: rows('breaks'),
               chart: (${chartOf.toString()})() };
    })()`);
    assert.equal(shown.face, 'proxy');
    assert.equal(shown.wouldHits, String(stats.cache.wouldHits));
    assert.equal(shown.entries, String(stats.cache.entries));
    assert.equal(shown.bypasses, String(stats.cache.bypasses));
    const read = shown.tools.find((r) => r[0] === 'anthropic_messages' && r[1] === 'Read');
    assert.ok(read, `no Read row: ${JSON.stringify(shown.tools)}`);
    assert.equal(read[10], '1', 'one would-hit for Read');
    assert.deepEqual(Object.fromEntries(shown.bypassReasons.map(([k, v]) => [k, Number(v)])), stats.cache.bypassesByReason);
    const breaks = {};
    for (const sr of stats.metrics.toolcache_prompt_cache_breaks_total?.series ?? []) breaks[sr.labels.cause] = (breaks[sr.labels.cause] ?? 0) + sr.value;
    assert.deepEqual(Object.fromEntries(shown.breaks.map(([k, v]) => [k, Number(v)])), breaks);
    checkChart(shown.chart);
    assert.deepEqual(problems, []);
    await page.close();
  } finally {
    proxy.kill('SIGTERM');
    await new Promise((r) => proxy.on('exit', r));
    await up.close();
  }
});

// Session 19: with an admin token the page still loads (it carries no data)
// and reads /toolcache/stats only with the token from its URL fragment,
// which never reaches the server; without it the page says 401 and shows
// no number.
test('with an admin token the dashboard reads its stats only with #token=', async () => {
  const up = await startFakeUpstream();
  const proxy = killOnExit(spawn(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', up.url, '--log-level', 'error'],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TOOLCACHE_ADMIN_TOKEN: 'dash-ops-token' } }));
  try {
    const purl = await new Promise((resolve, reject) => {
      let out = '';
      proxy.stdout.on('data', (d) => { out += d; const m = out.match(/listening on (http:\/\/\S+)/); if (m) resolve(m[1]); });
      proxy.on('exit', (code) => reject(new Error(`proxy exited ${code}`)));
    });
    const open = async (suffix) => {
      const page = await browser.newPage();
      const problems = [];
      const seen = [];
      page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
      // What goes on the wire: the URL without its fragment (puppeteer
      // reports the navigation's with it), the Referer, the header.
      page.on('request', (r) => seen.push({ url: r.url().split('#')[0], referer: r.headers().referer ?? '',
        auth: r.headers().authorization ?? '' }));
      const resp = await page.goto(purl + '/dashboard' + suffix, { waitUntil: 'load' });
      assert.equal(resp.status(), 200);
      return { page, problems, seen };
    };
    const withToken = await open('#token=dash-ops-token');
    await withToken.page.waitForSelector('body[data-loaded="1"]', { timeout: 10000 });
    assert.equal(await withToken.page.$eval('#face', (e) => e.textContent), 'proxy');
    assert.ok(withToken.seen.every((r) => !r.url.includes('dash-ops-token') && !r.referer.includes('dash-ops-token')),
      `the token left in a URL or Referer: ${JSON.stringify(withToken.seen)}`);
    assert.ok(withToken.seen.some((r) => r.url.endsWith('/toolcache/stats') && r.auth === 'Bearer dash-ops-token'));
    assert.deepEqual(withToken.problems, []);
    await withToken.page.close();
    const without = await open('');
    await without.page.waitForFunction(() => /401/.test(document.getElementById('status').textContent), { timeout: 10000 });
    assert.equal(await without.page.evaluate(() => document.body.dataset.loaded), undefined);
    await without.page.close();
  } finally {
    proxy.kill('SIGTERM');
    await new Promise((r) => proxy.on('exit', r));
    await up.close();
  }
});
