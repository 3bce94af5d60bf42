// @toolcache/client: a thin client for `toolcache serve` (the /v1/ cache
// API; types in index.d.ts). Every cache decision (cacheable? TTL? what a
// write invalidates?) is the server's. A cache that fails never fails the
// call: cachedCall runs the tool anyway.
//
//   import { ToolCacheClient, cacheTool } from '@toolcache/client';
//   const tc = new ToolCacheClient('http://127.0.0.1:8090', { token });
//   const execute = cacheTool(tc, 'weather', 'get_weather',
//                             async ({ city }) => fetchWeather(city));

export class ToolCacheError extends Error {
  constructor(status, code, message) {
    super(`toolcache ${status} ${code}: ${message}`);
    this.name = 'ToolCacheError';
    this.status = status;
    this.code = code;
  }
}

export class ToolCacheClient {
  constructor(baseUrl, options = {}) {
    const u = new URL(baseUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') {
      throw new TypeError(`baseUrl must be http(s)://host[:port], got ${baseUrl}`);
    }
    this.base = baseUrl.replace(/\/+$/, '');
    this.token = options.token;
    this.timeoutMs = options.timeoutMs ?? 60000;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  async #request(method, path, body) {
    const headers = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    const res = await this.fetch(this.base + path, {
      method, headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await res.text();
    let payload;
    try {
      payload = text ? JSON.parse(text) : null;
    } catch {
      throw new ToolCacheError(res.status, 'bad_response', text.slice(0, 200));
    }
    if (!res.ok) {
      const e = payload?.error ?? {};
      throw new ToolCacheError(res.status, e.code ?? 'error', e.message ?? '');
    }
    return payload;
  }

  static #call(server, tool, args, opts = {}) {
    const body = { server, tool, arguments: args ?? {} };
    if (opts.user) body.user = opts.user;
    return body;
  }

  lookup(server, tool, args, opts) {
    return this.#request('POST', '/v1/lookup', ToolCacheClient.#call(server, tool, args, opts));
  }
  record(server, tool, args, result, opts = {}) {
    return this.#request('POST', '/v1/record', {
      ...ToolCacheClient.#call(server, tool, args, opts), result,
      latencySeconds: opts.latencySeconds ?? 0, cost: opts.cost ?? 0, isError: opts.isError ?? false,
    });
  }
  begin(server, tool, args, opts = {}) {
    const body = ToolCacheClient.#call(server, tool, args, opts);
    if (opts.waitSeconds !== undefined) body.waitSeconds = opts.waitSeconds;
    return this.#request('POST', '/v1/begin', body);
  }
  complete(ticket, result, opts = {}) {
    const body = { ticket, latencySeconds: opts.latencySeconds ?? 0, cost: opts.cost ?? 0,
      isError: opts.isError ?? false };
    if (result !== undefined) body.result = result;
    return this.#request('POST', '/v1/complete', body);
  }
  invalidate(server, resource) {
    return this.#request('POST', '/v1/invalidate', resource ? { server, resource } : { server });
  }
  explain(server, tool, args) {
    return this.#request('POST', '/v1/explain', ToolCacheClient.#call(server, tool, args));
  }
  stats() {
    return this.#request('GET', '/v1/stats');
  }

  async cachedCall(server, tool, args, fn, opts = {}) {
    let plan;
    try {
      plan = await this.begin(server, tool, args);
    } catch {
      return fn();  // the cache failed: the call still runs
    }
    if (plan.action === 'hit' || plan.action === 'coalesced') return plan.result;
    const t0 = performance.now();
    let result;
    try {
      result = await fn();
    } catch (err) {
      if (plan.ticket) {
        await this.complete(plan.ticket, undefined, {
          isError: true, latencySeconds: (performance.now() - t0) / 1000,
        }).catch(() => {});
      }
      throw err;
    }
    if (plan.ticket) {
      await this.complete(plan.ticket, result, {
        latencySeconds: (performance.now() - t0) / 1000, cost: opts.cost ?? 0,
      }).catch(() => {});
    }
    return result;
  }
}

export function cacheTool(client, server, tool, execute, opts = {}) {
  return (args, ...rest) => client.cachedCall(server, tool, args, () => execute(args, ...rest), opts);
}
