// Security group "ops_endpoints" (session 19): what the operational routes
// (GET /metrics, GET /toolcache/stats, the dashboard) show to whom. Before,
// `serve` answered them to anyone who reached the port, tenants configured or
// not: every tenant's name and call counts, every server and tool name, the
// resources each tenant invalidated and the engine's cross-tenant
// entries_invalidated; the LLM proxy's series named the tools every caller's
// model called; no face had an admin token. Now:
//   - no admin token, no tenants (the loopback default): open, as before;
//   - serve with tenants: a tenant's token reads its own counts only, an
//     anonymous caller gets 401 (the whole view needs the admin token);
//   - an admin token (TOOLCACHE_ADMIN_TOKEN, --admin-token-env, the
//     adminTokenEnv key): the whole view for it, 401 for anyone else;
//   - a page in a browser neither reads nor triggers them (the browser guard
//     answers 403 first; a preflight is granted nothing).
// Real serve and proxy binaries; the provider is a small recording upstream.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { BIN, caseRunner, recordingUpstream, spawnListening } from './lib/common.mjs';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tc-ops-'));
const cfg = path.join(dir, 'tenants.yaml');
fs.writeFileSync(cfg, [
  'tools:',
  '  acme_payroll_lookup: {requestType: INFORMATIONAL, ttlSeconds: 600}',
  '  get_doc: {requestType: INFORMATIONAL, ttlSeconds: 600}',
  'serve:',
  '  tenants:',
  '    acme: {token: tok-acme-0123456789}',
  '    globex: {token: tok-globex-0123456789}',
  '',
].join('\n'));
const ADMIN = 'ops-admin-token-0123456789';
const ACME = { authorization: 'Bearer tok-acme-0123456789' };
const GLOBEX = { authorization: 'Bearer tok-globex-0123456789' };
const OPS = { authorization: `Bearer ${ADMIN}` };
// What tenant globex must never learn about tenant acme.
const ACME_SECRETS = /acme|payroll|q3-salaries/i;

// Starts `serve` with `env` merged into this process's environment.
async function startServe(args, env = {}) {
  const saved = { ...process.env };
  delete process.env.TOOLCACHE_ADMIN_TOKEN;
  Object.assign(process.env, env);
  try {
    return await spawnListening(BIN, ['serve', '--listen', '127.0.0.1:0', ...args]);
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
}

async function get(url, headers = {}) {
  const r = await fetch(url, { headers });
  return { status: r.status, text: await r.text() };
}

async function post(url, body, headers) {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  assert.equal(r.status, 200, await r.clone().text());
  return r.json();
}

// Tenant acme looks up, records and invalidates its payroll tool; globex
// makes one call of its own.
async function tenantTraffic(url) {
  const call = { server: 'acme_payroll', tool: 'acme_payroll_lookup', arguments: { id: 7 } };
  await post(`${url}/v1/lookup`, call, ACME);
  await post(`${url}/v1/record`, { ...call, result: { content: [] }, latencySeconds: 0.2 }, ACME);
  await post(`${url}/v1/lookup`, call, ACME);
  await post(`${url}/v1/invalidate`, { server: 'acme_payroll', resource: '/hr/q3-salaries' }, ACME);
  await post(`${url}/v1/lookup`, { server: 'docs', tool: 'get_doc', arguments: { id: 1 } }, GLOBEX);
}

const ROUTES = ['/metrics', '/toolcache/stats'];
const { step, finish } = caseRunner('ops_endpoints');
const stops = [];
try {
  // Tenants, no admin token.
  const serve = await startServe(['--config', cfg]);
  stops.push(serve.stop);
  await tenantTraffic(serve.url);

  await step('serve with tenants: an anonymous caller reads nothing', async () => {
    for (const route of ROUTES) {
      const r = await get(serve.url + route);
      assert.equal(r.status, 401, `${route}: ${r.text.slice(0, 300)}`);
      assert.doesNotMatch(r.text, ACME_SECRETS, route);
      const wrong = await get(serve.url + route, { authorization: 'Bearer nope' });
      assert.equal(wrong.status, 401, route);
    }
  });
  await step('serve with tenants: tenant globex reads its own counts, never acme\'s', async () => {
    for (const route of ROUTES) {
      const r = await get(serve.url + route, GLOBEX);
      assert.equal(r.status, 200, `${route}: ${r.text}`);
      assert.doesNotMatch(r.text, ACME_SECRETS, `${route} shows globex acme's data:\n${r.text}`);
      assert.doesNotMatch(r.text, /entries_invalidated|get_doc/, route);
      assert.match(r.text, /globex/, route);
    }
    const stats = JSON.parse((await get(`${serve.url}/toolcache/stats`, GLOBEX)).text);
    assert.deepEqual(stats, { tenant: 'globex', calls: { miss: 1 } });
  });
  await step('serve with tenants: the dashboard page is served, its data is not', async () => {
    assert.equal((await get(`${serve.url}/dashboard`)).status, 200);
    assert.equal((await get(`${serve.url}/`)).status, 200);
  });
  await step('serve: a browser page neither reads nor triggers them', async () => {
    for (const route of ROUTES) {
      const r = await get(serve.url + route, {
        ...OPS, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' });
      assert.equal(r.status, 403, route);
      const pre = await fetch(serve.url + route, { method: 'OPTIONS', headers: {
        origin: 'https://evil.example', 'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization' } });
      assert.equal(pre.headers.get('access-control-allow-origin'), null, route);
      assert.equal(pre.headers.get('access-control-allow-headers'), null, route);
    }
  });
  await serve.stop();

  // Tenants and an admin token (the environment's default variable).
  const ops = await startServe(['--config', cfg], { TOOLCACHE_ADMIN_TOKEN: ADMIN });
  stops.push(ops.stop);
  await tenantTraffic(ops.url);
  await step('serve with an admin token: the operator reads the whole view', async () => {
    for (const route of ROUTES) {
      const r = await get(ops.url + route, OPS);
      assert.equal(r.status, 200, route);
      assert.match(r.text, /acme_payroll_lookup/, route);
      // Every tenant's: /metrics counts by tenant, the stats list who
      // invalidated what.
      assert.match(r.text, route === '/metrics' ? /tenant="globex"/ : /q3-salaries/, route);
    }
  });
  await step('serve with an admin token: anyone else gets 401 or their own view', async () => {
    for (const route of ROUTES) {
      assert.equal((await get(ops.url + route)).status, 401, route);
      assert.equal((await get(ops.url + route, { authorization: `Bearer ${ADMIN}x` })).status, 401, route);
      const g = await get(ops.url + route, GLOBEX);
      assert.equal(g.status, 200, route);
      assert.doesNotMatch(g.text, ACME_SECRETS, route);
    }
  });
  await ops.stop();

  await step('serve: --admin-token-env names the variable; unset, it refuses to start', async () => {
    const s = await startServe(['--admin-token-env', 'TC_OPS_TEST_TOKEN'], { TC_OPS_TEST_TOKEN: ADMIN });
    stops.push(s.stop);
    assert.equal((await get(`${s.url}/metrics`)).status, 401);
    assert.equal((await get(`${s.url}/metrics`, OPS)).status, 200);
    await s.stop();
    await assert.rejects(startServe(['--admin-token-env', 'TC_OPS_TEST_UNSET']), /TC_OPS_TEST_UNSET/);
  });

  await step('serve: an admin token equal to a tenant\'s is refused at start', async () => {
    await assert.rejects(startServe(['--config', cfg], { TOOLCACHE_ADMIN_TOKEN: 'tok-globex-0123456789' }),
      (e) => /exited 2/.test(e.message) && /tenant 'globex'/.test(e.message) && !/tok-globex/.test(e.message));
  });

  await step('serve, no tenants, no admin token: open as before (loopback default)', async () => {
    const s = await startServe([]);
    stops.push(s.stop);
    await post(`${s.url}/v1/lookup`, { server: 'acme_payroll', tool: 'lookup', arguments: {} }, {});
    const m = await get(`${s.url}/metrics`);
    assert.equal(m.status, 200);
    assert.match(m.text, /toolcache_serve_calls_total/);
    assert.equal((await get(`${s.url}/toolcache/stats`)).status, 200);
    await s.stop();
  });

  // The LLM proxy: its series name the tools every caller's model called.
  const upstream = await recordingUpstream((req) => ({
    id: 'msg_1', type: 'message', role: 'assistant', model: req.body.model,
    content: [{ type: 'tool_use', id: 'toolu_1', name: 'mcp__acme_payroll__get_salary', input: { id: 7 } }],
    stop_reason: 'tool_use', usage: { input_tokens: 10, output_tokens: 5 },
  }));
  const startProxy = async (env) => {
    const saved = process.env.TOOLCACHE_ADMIN_TOKEN;
    if (env) process.env.TOOLCACHE_ADMIN_TOKEN = env; else delete process.env.TOOLCACHE_ADMIN_TOKEN;
    try {
      return await spawnListening(BIN, ['proxy', '--listen', '127.0.0.1:0', '--upstream', upstream.url]);
    } finally {
      if (saved === undefined) delete process.env.TOOLCACHE_ADMIN_TOKEN; else process.env.TOOLCACHE_ADMIN_TOKEN = saved;
    }
  };
  const converse = async (url) => {
    const r = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-acme' },
      body: JSON.stringify({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'pay?' }],
        tools: [{ name: 'mcp__acme_payroll__get_salary', description: 'd', input_schema: { type: 'object' } }] }),
    });
    assert.equal(r.status, 200, await r.text());
  };
  const proxy = await startProxy(ADMIN);
  stops.push(proxy.stop);
  await converse(proxy.url);
  await step('proxy with an admin token: tool names only for the operator', async () => {
    for (const route of ROUTES) {
      const anon = await get(proxy.url + route);
      assert.equal(anon.status, 401, `${route}: ${anon.text.slice(0, 300)}`);
      assert.doesNotMatch(anon.text, ACME_SECRETS, route);
      const other = await get(proxy.url + route, { 'x-api-key': 'sk-acme', authorization: 'Bearer sk-acme' });
      assert.equal(other.status, 401, `${route}: a caller's own API key is not the admin token`);
      const op = await get(proxy.url + route, OPS);
      assert.equal(op.status, 200, route);
      assert.match(op.text, /mcp__acme_payroll__get_salary/, route);
    }
    assert.equal((await get(`${proxy.url}/dashboard`)).status, 200);
  });
  await proxy.stop();
  const open = await startProxy('');
  stops.push(open.stop);
  await converse(open.url);
  await step('proxy without an admin token: open as before (loopback default)', async () => {
    const m = await get(`${open.url}/metrics`);
    assert.equal(m.status, 200);
    assert.match(m.text, /toolcache_proxy_requests_total/);
  });
  await open.stop();
  upstream.close();
} finally {
  for (const stop of stops) await stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
finish();
