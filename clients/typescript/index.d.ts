// Types of @toolcache/client (index.mjs): a thin client for the
// `toolcache serve` cache API.

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export interface Verdict {
  cacheable: boolean;
  reason: string;
  requestType: 'INFORMATIONAL' | 'COMMAND';
  ttlSeconds: number;
  source: string;
  detail: string;
  parameterCategory: string;
}

export type LookupResult =
  | { hit: true; result: Json; ageSeconds: number }
  | { hit: false; cacheable: boolean; reason: string; verdict: Verdict };

export interface RecordResult {
  admitted: boolean;
  alreadyCached: boolean;
  stale: boolean;
  cacheable: boolean;
  reason: string;
  verdict: Verdict;
}

export type BeginResult =
  | { action: 'hit'; result: Json; ageSeconds: number }
  | { action: 'coalesced'; result: Json }
  | { action: 'forward'; ticket: string; cacheable: boolean; reason: string; leaseSeconds: number; verdict: Verdict }
  | { action: 'forward'; ticket?: undefined; reason: 'wait_timeout' | 'leader_failed' | 'open_ticket_limit'; detail: string; cacheable?: false; verdict?: Verdict };

export interface CompleteResult { admitted: boolean; reason: string; waitersAnswered: number }
export interface ExplainResult {
  cacheable: boolean; reason: string; ttlSeconds: number; cached: boolean;
  ageSeconds?: number; valueScore: number | null; verdict: Verdict;
}

export interface CallOptions { user?: string }
export interface ResultOptions { latencySeconds?: number; cost?: number; isError?: boolean }

export class ToolCacheError extends Error {
  status: number;
  code: string;
}

export interface ToolCacheClientOptions {
  /** Bearer token of the tenant (serve.tenants in the server's config). */
  token?: string;
  /** Per-request timeout in milliseconds (default 60000). */
  timeoutMs?: number;
  /** fetch implementation (default globalThis.fetch). */
  fetch?: typeof fetch;
}

export class ToolCacheClient {
  constructor(baseUrl: string, options?: ToolCacheClientOptions);
  lookup(server: string, tool: string, args?: Record<string, Json>, opts?: CallOptions): Promise<LookupResult>;
  record(server: string, tool: string, args: Record<string, Json> | undefined, result: Json,
         opts?: ResultOptions & CallOptions): Promise<RecordResult>;
  begin(server: string, tool: string, args?: Record<string, Json>,
        opts?: CallOptions & { waitSeconds?: number }): Promise<BeginResult>;
  complete(ticket: string, result: Json | undefined, opts?: ResultOptions): Promise<CompleteResult>;
  // Drops every tenant's entries of the server (or resource); entriesDropped
  // counts this tenant's own only (since session 18).
  invalidate(server: string, resource?: string): Promise<{ invalidated: boolean; entriesDropped: number }>;
  explain(server: string, tool: string, args?: Record<string, Json>): Promise<ExplainResult>;
  stats(): Promise<{ tenant: string; calls: Record<string, number> }>;
  /** Runs `fn` unless the cache or an identical call in flight answers. */
  cachedCall<T extends Json>(server: string, tool: string, args: Record<string, Json> | undefined,
                             fn: () => Promise<T> | T, opts?: { cost?: number }): Promise<T>;
}

/**
 * Wraps a function tool's `execute(args, ...rest)` (Vercel AI SDK `tool()`,
 * OpenAI Agents SDK `tool({ execute })`) so that its calls go through the
 * cache: `execute: cacheTool(client, 'weather', 'get_weather', execute)`.
 */
export function cacheTool<A extends Record<string, Json>, R extends Json, Rest extends unknown[]>(
  client: ToolCacheClient, server: string, tool: string,
  execute: (args: A, ...rest: Rest) => Promise<R> | R,
  opts?: { cost?: number }): (args: A, ...rest: Rest) => Promise<R>;
