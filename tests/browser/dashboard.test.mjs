// The `toolcache serve` dashboard in a real headless browser (Debian's
// chromium driven by puppeteer-core): the page loads with no console errors
// and no failed request, and the numbers it shows match /toolcache/stats.
// Run by tests/e2e_dashboard.sh with TOOLCACHE_BIN set.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';

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
  server = spawn(BIN, ['serve', '--listen', '127.0.0.1:0', '--config', cfg, '--log-level', 'error'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
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
      chart: document.getElementById('chart').toDataURL().length,
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
  assert.ok(shown.chart > 1000, 'the chart canvas is empty');
  assert.deepEqual(problems, []);
  await page.close();
});
