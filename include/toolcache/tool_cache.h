// ToolCache: the engine's request path (docs/ARCHITECTURE.md) for faces that
// forward calls asynchronously, such as the MCP proxy:
//
//   Begin(call)  normalize -> classify -> scope -> lookup
//                  hit             -> kServe   (answer from the stored result)
//                  identical call in flight -> kWait (single-flight waiter)
//                  otherwise       -> kForward (the face calls upstream)
//   Complete(ticket, upstream result)
//                  -> admit (VAAC by default; error / partial results never)
//                  -> every waiter still waiting, to be answered by the face
//
// A call that is not cacheable is still a kForward with `bypass` set and a
// Verdict naming the reason. A COMMAND call (not read-only) invalidates the
// server's entries when it starts AND when it completes, and detaches every
// flight of that server that started before it, so a read issued after a
// write completed never sees pre-write data (neither from the store nor by
// joining an older flight). Results of flights that overlapped a write are
// answered but not admitted.
//
// Two states make every call of a server bypass (nothing served, nothing
// stored) because the cache cannot know what is a write:
//   * a task-augmented COMMAND call is outstanding (its work goes on after
//     the task handle returns; the face calls Complete when the task reaches
//     a terminal status): bypass reason "task_in_progress";
//   * the server's tool list changed and the face is fetching the new one
//     (ToolsRefreshing .. LearnTools(replace = true)): "tools_refreshing";
//     such calls also count as possible writes (they invalidate at Begin and
//     Complete).
//
// Storage is two-level. The L1 is one in-process ResultCache shard under
// this cache's mutex: the policy (VAAC by default) decides what is admitted
// and kept (more shards would add no concurrency and would split the byte
// budget and the policy's statistics N ways). Under it an optional shared
// Store (SQLite, Redis; docs/STORE.md) holds every admitted result for
// other processes and later runs; a local miss looks there. Store I/O never
// runs under the mutex. Invalidations are published as counter bumps that
// every process checks before serving, from the store or from its L1. A
// store fault passes the call through (bypass reason "store_unavailable",
// "store_timeout", "store_corrupt", ...; a warning once per episode);
// caching resumes by itself when the store works again.
//
// Faces that only observe calls made elsewhere (the LLM API proxy sees the
// client run its own tools) use Peek ("would this be a hit?") and Record
// (a completed call and its result) on the same path: same classifier,
// scopes, keys, policy and invalidation, with no flight.
//
// The face never re-decides cacheability; it translates its protocol into
// ToolCall / UpstreamResult and back.
//
// Thread-safety: every method is thread-safe (one internal mutex around the
// flight table and the L1; shared-store calls run outside it). Ownership:
// the cache owns its L1 and classifier and borrows the Store; ToolCall
// views are borrowed for the call.
//
// Example:
//   auto cache = NewToolCache(config, &clock);
//   CallPlan p = (*cache)->Begin({.server = "fs", .tool = "read_file",
//                                 .arguments_json = R"({"path":"/a"})"}, 1);
//   if (p.action == CallAction::kServe) Reply(*p.result_json);
//   else if (p.action == CallAction::kForward) {
//     ... upstream ...; Completion c = (*cache)->Complete(p.ticket, r);
//   }
#ifndef TOOLCACHE_TOOL_CACHE_H_
#define TOOLCACHE_TOOL_CACHE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "toolcache/clock.h"
#include "toolcache/config.h"
#include "toolcache/status.h"
#include "toolcache/verdict.h"

namespace toolcache {

class FeatureExtractor;  // classifier.h

struct ToolInfo;  // classifier.h
class Store;      // store.h

// Opaque handles chosen by the face (waiters) or the cache (tickets).
using WaiterId = uint64_t;
using TicketId = uint64_t;

struct ToolCall {
  std::string_view server;          // server identity (MCP: --name or command)
  std::string_view scope;           // sharing scope; "" = global
  std::string_view tool;            // tool name
  std::string_view arguments_json;  // raw JSON arguments; "" or null = {}
  bool task_augmented = false;      // MCP `task` parameter: never cached
  // Non-empty: the face cannot let this call share an answer (for example
  // an MCP request whose id the server may not answer or may echo in
  // another spelling, so a coalesced waiter could never be answered). Begin
  // forwards it as a bypass under this statistics name: no hit, no flight,
  // nothing stored; a possible write still invalidates. Default "".
  std::string_view bypass_reason;
  // Caller identity. Always the policy's grouping (request_features.h;
  // "" = the scope). Under `scope: user` (Config::scope) also part of the
  // key's scope: only calls of the same user share entries and flights, and
  // a cacheable call with no user is never served, joined or stored (bypass
  // "user_required"; a COMMAND still invalidates).
  std::string_view user;
  // The protocol declares this request's result cacheable and its server
  // states for how long and for whom (MCP 2026-07-28: tools/list,
  // resources/read, ... carry ttlMs and cacheScope). Begin skips the
  // classifier (verdict reason kDeclaredByServer, INFORMATIONAL), looks the
  // key up in the public scope first (an entry the server declared public:
  // a reserved scope no caller has, so a private entry of scope "" is never
  // public) and then in `scope`; Complete stores the result only as
  // UpstreamResult::declared says: for its TTL, in the public scope when
  // shared, else in `scope`. Invalidation applies as to any entry of
  // `server`. Peek and Record ignore it (no observing face sees such
  // requests). Default false.
  bool declared = false;
  // For a declared call: the group of callers its public entries are shared
  // with ("" = every caller of the cache, the default). `toolcache serve`
  // passes the tenant: each tenant's servers are processes of their own, so
  // one tenant's public answer says nothing of another's. Default "".
  std::string_view public_group;
  // The face's own definition of this tool (borrowed for the call), used
  // instead of the definitions LearnTools taught the cache: the LLM API
  // face keeps what each principal's requests declared, so one principal's
  // declaration never decides another's verdicts. nullptr (the default):
  // the learned definition, or the name alone.
  const ToolInfo* definition = nullptr;
};

// A result's own cacheability (UpstreamResult::declared).
struct DeclaredHints {
  double ttl_seconds = 0;  // <= 0: not stored
  bool shared = false;     // true: the public scope, for every caller
};

enum class CallAction {
  kServe,    // answer now with result_json (a fresh hit)
  kForward,  // call upstream, then Complete(ticket, ...)
  kWait,     // an identical call is in flight; the waiter is answered by
             // the Completion of that flight
};

struct CallPlan {
  CallAction action = CallAction::kForward;
  // kForward without single-flight and admission (verdict.reason says why).
  bool bypass = false;
  // Statistics / log name of the bypass: VerdictReasonName(verdict.reason),
  // or "invalid_arguments" when the arguments have no canonical form.
  std::string bypass_reason;
  Verdict verdict;
  // kServe: the stored raw result JSON, byte-identical to what upstream sent.
  std::shared_ptr<const std::string> result_json;
  double age_seconds = 0;  // kServe: seconds since it was stored
  TicketId ticket = 0;     // kForward
  // kForward of a task-augmented call that may write: until Complete(ticket)
  // every call of the server bypasses ("task_in_progress"). The face should
  // call Complete when the task reaches a terminal status (or is known to be
  // gone), not when the task handle arrives.
  bool task_write = false;
};

struct UpstreamResult {
  std::string_view result_json;  // raw result (empty for an error response)
  bool is_error = false;         // JSON-RPC error or result.isError == true
  bool complete = true;          // false: partial / task handle / streamed
  double latency_seconds = 0;    // measured upstream latency
  // For a ToolCall::declared call: the result's own hints (nullopt: it
  // declared none, so it is not stored). Ignored for other calls.
  std::optional<DeclaredHints> declared;
};

struct Completion {
  // Waiters still waiting (the leader first unless it was cancelled), each
  // to be answered with the upstream result under its own id.
  std::vector<WaiterId> waiters;
  bool admitted = false;
  // Why not admitted when a cacheable call was not stored ("cacheable" when
  // the policy declined or the result was larger than the cache).
  VerdictReason reason = VerdictReason::kCacheable;
};

struct CancelOutcome {
  bool found = false;           // the waiter was waiting on a flight
  bool was_leader = false;      // it was the call sent upstream
  uint32_t others_waiting = 0;  // waiters still waiting on that flight
};

// What Peek found: the cache's decision for a call, made without acting on
// it (the LLM API face's observation mode: "would this call have been a
// hit?").
struct Probe {
  Verdict verdict;
  // Statistics / log name of the reason the call is not cacheable ("" when
  // it is): the same names as CallPlan::bypass_reason.
  std::string bypass_reason;
  // A fresh entry stored under the call's full key, in its scope.
  bool would_hit = false;
  std::shared_ptr<const std::string> result_json;  // when would_hit
  double age_seconds = 0;                          // when would_hit
  // When the entry is in this process's cache: the policy's score of it
  // (Policy::ValueScore; nullopt for recency/frequency policies).
  std::optional<double> value_score;
};

// What Record did with a call the face saw completed elsewhere.
struct RecordOutcome {
  Verdict verdict;
  std::string bypass_reason;  // as in Probe; "" when cacheable
  // An equal result was already stored: the call counts as a (would-be) hit
  // for the policy and nothing is stored again.
  bool already_cached = false;
  // A different result was stored under the key: serving it would have
  // returned stale content. The new result replaces it (if admitted).
  bool stale = false;
  bool admitted = false;  // the result is stored now
  // Why a cacheable call's result was not stored (kErrorResult,
  // kIncompleteResult, kCommand for a write that overlapped, or kCacheable
  // when the policy declined).
  VerdictReason reason = VerdictReason::kCacheable;
};

struct ToolCacheStats {
  uint64_t calls = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;     // cacheable calls forwarded upstream
  uint64_t coalesced = 0;  // cacheable calls that joined an in-flight call
  std::map<std::string, uint64_t, std::less<>> bypasses;  // by reason name
  uint64_t admitted = 0;
  uint64_t not_admitted = 0;
  uint64_t invalidations = 0;  // invalidation events
  uint64_t entries_invalidated = 0;
  // Observation (Peek / Record): calls probed, of them would-hits; calls
  // recorded, of them already cached with an equal / a different result.
  uint64_t peeks = 0;
  uint64_t would_hits = 0;
  uint64_t recorded = 0;
  uint64_t recorded_already_cached = 0;
  uint64_t recorded_stale = 0;
  // Shared store (docs/STORE.md): hits served from the store rather than
  // this process's memory (a result another process or run stored), and
  // store failures outside a call's lookup (writes and invalidations that
  // did not reach the store), by reason ("store_full", ...). A lookup that
  // fails is a bypass, counted in `bypasses` under its reason.
  uint64_t store_hits = 0;
  std::map<std::string, uint64_t, std::less<>> store_errors;
  double latency_saved_seconds = 0;  // sum of stored upstream latency of hits
  uint64_t bytes_served = 0;         // result bytes served from cache
  uint64_t entries = 0;              // now cached
  uint64_t bytes = 0;                // now cached
};

class ToolCache {
 public:
  virtual ~ToolCache() = default;

  // Records the definitions of `server`'s tools (one page of a listing);
  // `replace` first forgets every tool known for the server. Tools not
  // learned are classified from their name alone.
  virtual void LearnTools(std::string_view server,
                          std::span<const ToolInfo> tools, bool replace) = 0;
  // The server's tool list changed: forget its tools and invalidate all of
  // its entries.
  virtual void ToolsChanged(std::string_view server) = 0;
  // The server's tool list changed and the face is fetching the new list:
  // like ToolsChanged, and every call of the server bypasses (reason
  // "tools_refreshing", treated as a possible write) until the next
  // LearnTools(server, ..., replace = true). Default: ToolsChanged only.
  virtual void ToolsRefreshing(std::string_view server) {
    ToolsChanged(server);
  }
  // Starts a call; `waiter` identifies the caller in later Completions.
  virtual CallPlan Begin(const ToolCall& call, WaiterId waiter) = 0;
  // Ends the upstream call of `ticket`. REQUIRES: ticket came from Begin and
  // was not completed before. Unknown tickets return an empty Completion.
  virtual Completion Complete(TicketId ticket,
                              const UpstreamResult& result) = 0;
  // Removes `waiter` from the flight it waits on. When it was the leader and
  // others still wait, the upstream call continues for them; when nobody is
  // left, the flight is detached (identical new calls start a new one).
  virtual CancelOutcome Cancel(WaiterId waiter) = 0;
  // The answer to `ticket`'s call, still in flight, now depends on more than
  // its key (an MCP server asked the client for input while it ran): the
  // flight is detached (no later call joins it), its result will not be
  // stored, and the call is counted in `bypasses` under `reason` (it was
  // counted a miss when it began). Returns the flight's waiters other than
  // its leader, removed from it: the face sends each one's call upstream
  // itself, never answers it with this flight's result. Unknown, completed
  // or already unshared tickets and bypasses: {}. Default: nothing detached
  // or counted, {} (the face still completes the call as incomplete and
  // answers no other waiter with its result).
  virtual std::vector<WaiterId> Unshare(TicketId ticket,
                                        std::string_view reason) {
    (void)ticket;
    (void)reason;
    return {};
  }
  // The face gave up on `ticket`'s call (its client cancelled it and the
  // cancellation went upstream) but the server may still carry it out and
  // never answer (MCP servers send no response to a cancelled request).
  // When the call may write (a COMMAND), the server's entries are
  // invalidated now and every call of the server bypasses
  // ("write_cancelled") until Complete(ticket), which invalidates again: the
  // face completes the ticket when the answer comes or when it stops
  // waiting for one. A read, or an unknown ticket: nothing. Default:
  // nothing.
  virtual void Abandon(TicketId ticket) { (void)ticket; }
  // Invalidates `server`'s entries: all of them when `resource` is empty or
  // the configured invalidation scope is "server"; with scope "resource",
  // those whose resource arguments (path, uri, ...) name `resource` or a path
  // below or above it. Paths are compared after lexical normalization
  // ("/d/../d/y" is "/d/y"), and a file:// URI (`resource` or an argument)
  // stands for its local path; a `resource` that is a URI of another scheme
  // or host cannot be related to arguments and invalidates the whole server.
  // In-flight calls of the server are no longer joinable.
  virtual void Invalidate(std::string_view server,
                          std::string_view resource) = 0;
  // Invalidate, and how many of the entries it dropped from this process's
  // memory were stored under `scope` (a ToolCall::scope: its entries, and
  // under `scope: user` those of its users). The reach is Invalidate's --
  // every scope's entries of the resource go, since a write changes what
  // everyone reads -- only the count is the caller's, so it tells nothing
  // of other scopes' entries. Default: Invalidate, and 0.
  virtual uint64_t InvalidateAs(std::string_view scope, std::string_view server,
                                std::string_view resource) {
    (void)scope;
    Invalidate(server, resource);
    return 0;
  }
  // Observation: what Begin would decide for `call` now, without serving,
  // joining a flight, invalidating or teaching the policy an access. A
  // COMMAND call is reported with its bypass reason and changes nothing
  // (its effect is applied when it is Recorded). Counts `peeks` and
  // `would_hits` only. Default: nothing known.
  virtual Probe Peek(const ToolCall& call) {
    (void)call;
    Probe p;
    p.bypass_reason = "not_supported";
    return p;
  }
  // Observation: a call and its result that the face saw complete without
  // going through Begin (the LLM API face sees the client run its tools).
  // The same path as Begin + Complete of a forwarded call: a COMMAND
  // invalidates what it may have changed; a cacheable call's result is
  // offered to the policy (errors and partial results never), or, when an
  // entry already exists, counts as an access of it (an equal result) or
  // replaces it (a different one: `stale`). Never serves or coalesces.
  // Default: nothing recorded.
  virtual RecordOutcome Record(const ToolCall& call,
                               const UpstreamResult& result) {
    (void)call;
    (void)result;
    RecordOutcome r;
    r.bypass_reason = "not_supported";
    return r;
  }
  virtual ToolCacheStats Stats() const = 0;
};

// The MCP methods whose results the MCP face caches as ToolCall::declared
// calls, with the method as the key's tool (tools/list, prompts/list,
// resources/list, resources/templates/list, resources/read,
// server/discover). Their key space belongs to declared calls: a call that
// is not declared and names one is classified as usual (a COMMAND still
// invalidates) but never served, joined or stored (bypass
// "reserved_tool_name"), so no face but the server's own answer on the MCP
// path can put an entry there or read one (a /v1/record of a forged
// "tools/list", a server tool literally named "resources/read").
bool IsDeclaredMethodName(std::string_view tool);

// Builds the cache from `config` (capacity, policy, TTLs, invalidation,
// classifier layers). `clock` must outlive the cache. `store` (borrowed;
// must outlive the cache) is the shared store under the in-process cache:
// nullptr keeps results in this process only (`store: memory`); otherwise
// admitted results are also written there, looked up there on a local
// miss, and every invalidation is published there (docs/STORE.md). Two
// caches given one store behave like two processes sharing it. Fails with
// INVALID_ARGUMENT "<file>:<line>: ..." when the policy is unknown, not
// usable online (belady, infinite) or given a knob it does not have (the
// message names the closest known name).
Result<std::unique_ptr<ToolCache>> NewToolCache(const Config& config,
                                                const Clock* clock,
                                                Store* store = nullptr);
// The same, with extra classifier layers (classifier.h: they run after the
// annotations and before the heuristic), e.g. the LLM proxy's knowledge of
// coding agents' own tools (src/llm/agent_tools.h).
Result<std::unique_ptr<ToolCache>> NewToolCache(
    const Config& config, const Clock* clock, Store* store,
    std::vector<std::unique_ptr<FeatureExtractor>> extra_layers);

}  // namespace toolcache

#endif  // TOOLCACHE_TOOL_CACHE_H_
