// CacheService: the protocol logic of `toolcache serve`, free of sockets.
//
// It turns one HTTP request (method, path, headers, body) into calls of the
// engine (ToolCache: Peek, Record, Begin, Complete, Cancel, Invalidate,
// Stats) and a JSON reply; src/serve/server.cc binds it to src/http. Tests
// drive it directly (service_test.cc), as session.cc is driven for MCP.
//
//   POST /v1/lookup      Peek: {hit, result, ageSeconds} or a miss with its
//                        verdict (observation pair with /v1/record)
//   POST /v1/record      Record: a completed call, its latency and cost
//   POST /v1/begin       Begin: hit | forward (+ticket) | a coalesced wait
//                        answered when the leader completes
//   POST /v1/complete    Complete(ticket): admits, answers the waiters
//   POST /v1/invalidate  Invalidate(server, resource)
//   POST /v1/explain     Peek: cacheable?, reason, TTL, source, detail
//   GET  /v1/stats       the caller's tenant counters
//   GET  /v1/openapi.json, /metrics, /toolcache/stats, / (dashboard)
//
// The operational routes (/metrics, /toolcache/stats) answer the operator
// (the admin token, or anyone when neither an admin token nor tenants are
// configured) the whole view, a tenant its own counts, anyone else 401
// (runtime::CheckAdminAccess, session 19).
//
// Tenancy: with tenants configured every /v1/ request needs
// `Authorization: Bearer <token>`; the tenant's name is the cache scope of
// its calls (a tenant never reads another's entries) and tickets are bound
// to the tenant that began them. Without tenants there is no
// authentication and one global scope.
//
// Invariants: Handle never throws on any input; every reply is JSON with a
// status; a waiting `begin` is answered exactly once (by its leader's
// Completion, its wait timeout, or not at all when its client went away):
// whoever removes the waiter from waiters_ owns the reply.
//
// Thread-safety: every method is thread-safe (a mutex around the waiter and
// ticket tables and the invalidation log; metrics are atomics). Ownership:
// borrows the cache, the clock and the registry.
#ifndef TOOLCACHE_SRC_SERVE_SERVICE_H_
#define TOOLCACHE_SRC_SERVE_SERVICE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "src/http/browser_guard.h"
#include "src/http/http.h"
#include "src/metrics/metrics.h"
#include "toolcache/clock.h"
#include "toolcache/tool_cache.h"

namespace toolcache::serve {

struct Tenant {
  std::string name;
  std::string token;
};

struct ServiceOptions {
  ToolCache* cache = nullptr;             // required
  const Clock* clock = nullptr;           // required
  metrics::Registry* registry = nullptr;  // required
  // Empty: no authentication, global scope.
  std::vector<Tenant> tenants;
  // Longest a coalesced begin waits for its leader. Choice: 30 s, then the
  // caller runs the tool itself (`reason: wait_timeout`).
  double max_wait_seconds = 30;
  // A ticket not completed this long after begin is ended as failed (its
  // waiters run the tool themselves). Choice: 300 s, longer than any tool
  // call worth caching.
  double lease_seconds = 300;
  // Most tickets one tenant may hold open at once. Past it a `begin` that
  // is a miss gets `{action: "forward", reason: "open_ticket_limit"}` with
  // no ticket (the caller runs the tool itself; nothing is cached); hits are
  // still served and writes (COMMAND calls) always get their ticket, since
  // their completion is what invalidates. Choice: 10000 -- far above what a
  // well-behaved client holds (one per call in flight), low enough that a
  // tenant that never completes cannot grow the server without bound.
  size_t max_open_tickets = 10000;
  // The browser-origin defence (src/http/browser_guard.h), for the API,
  // the dashboard and /mcp alike. Browser Origins allowed to call the API
  // ("*" = any); a request with an Origin header not listed, or a
  // cross-site Sec-Fetch-Site, gets 403. Empty: same-host origins only
  // (http://127.0.0.1:*, http://localhost:*).
  std::vector<std::string> allowed_origins;
  // Host names answered besides IP literals, localhost and listen_host
  // ("*" = any): another Host gets 403 (a DNS-rebinding page cannot read
  // the API or the statistics).
  std::vector<std::string> allowed_hosts;
  std::string listen_host = "127.0.0.1";
  // The operator's token for the operational routes (/metrics,
  // /toolcache/stats; runtime::CheckAdminAccess): "" = none. Without it and
  // without tenants those routes are open (the loopback default); with
  // tenants and no admin token nobody reads the whole view, and a tenant's
  // token reads its own counts only.
  std::string admin_token;
};

struct Reply {
  int status = 200;
  std::string content_type = "application/json";
  // When set, every header of the reply (content type included): the admin
  // routes' (runtime::AnswerAdmin, with the dashboard's CSP).
  http::Headers headers;
  std::string body;
};

// What the binding provides for one request.
struct RequestContext {
  // Runs f after `seconds` (on the request's loop). Required for begin.
  std::function<void(double seconds, std::function<void()> f)> after;
  // Registers f to run if the client goes away before the reply.
  std::function<void(std::function<void()> f)> on_gone;
  // Delivers a deferred reply (from any thread).
  std::function<void(Reply)> later;
};

class CacheService {
 public:
  explicit CacheService(ServiceOptions options);

  // Answers `request` now, or returns nullopt and calls context.later
  // exactly once (or never, when context.on_gone's function ran first).
  std::optional<Reply> Handle(const http::Request& request,
                              const RequestContext& context);
  // Whether Handle may use the context of a request for `path` (the target
  // without its query): only begin waits. For any other path a binding may
  // pass an empty context (no std::function built per request).
  static bool NeedsContext(std::string_view path);

  // The operator's JSON (GET /toolcache/stats): totals, bypass reasons,
  // per-tool table, recent invalidations, history, engine statistics.
  std::string StatsJson();
  // Prometheus text (GET /metrics).
  std::string Prometheus();
  // Forgets every waiting begin without answering it (the server is
  // stopping; called while the event loops still exist, since a waiter
  // holds its connection).
  void DropWaiters();
  // Appends one point to the history the dashboard plots (called every few
  // seconds by the binding).
  void Sample();
  // The checks every route shares, for routes outside the service (the MCP
  // endpoint, src/mcp/http_server.h): Host and Origin, then the bearer token
  // when tenants are configured. Returns the tenant ("" without tenants), or
  // nullopt with *status (401, 403) and *message.
  std::optional<std::string> Admit(const http::Request& request, int* status,
                                   std::string* message) const;
  // Extra JSON object text placed under "mcp" in StatsJson (the MCP
  // endpoint's sessions); set once before serving.
  void SetMcpStats(std::function<std::string()> f) {
    mcp_stats_ = std::move(f);
  }

 private:
  struct Waiter {
    std::string tenant;
    std::string server;  // the call, for its outcome's counters
    std::string tool;
    std::function<void(Reply)> later;
  };
  struct Ticket {
    std::string tenant;
    std::string server;
    std::string tool;
  };
  struct InvalidationEvent {
    double unix_seconds = 0;
    std::string tenant;
    std::string server;
    std::string resource;
    std::string cause;  // "api" or "write"
  };
  struct Point {
    double unix_seconds = 0;
    uint64_t calls = 0;
    uint64_t hits = 0;
    double saved_seconds = 0;
    double saved_cost = 0;
  };
  struct Totals {
    uint64_t calls = 0, hits = 0, misses = 0, coalesced = 0, bypasses = 0;
    // Coalesced begins that got no result (leader_failed, wait_timeout,
    // waiter_gone): they ran the tool themselves, or nobody got an answer.
    uint64_t waited_no_result = 0;
    double saved_seconds = 0, saved_cost = 0;
  };

  Reply Lookup(std::string_view tenant, std::string_view body);
  Reply Record(std::string_view tenant, std::string_view body);
  std::optional<Reply> Begin(std::string_view tenant, std::string_view body,
                             const RequestContext& context);
  Reply Complete(std::string_view tenant, std::string_view body);
  Reply Invalidate(std::string_view tenant, std::string_view body);
  Reply Explain(std::string_view tenant, std::string_view body);
  Reply TenantStats(std::string_view tenant);
  // A tenant's view of GET /metrics: its own series only.
  std::string TenantPrometheus(std::string_view tenant);
  // The tenant whose token `token` is, or nullptr (constant time per
  // tenant, every tenant compared).
  const Tenant* TenantOf(std::string_view token) const;

  // Ends `ticket` with its leader's result and answers its waiters
  // (*answered: how many).
  Completion Finish(TicketId ticket, const UpstreamResult& result,
                    std::string_view result_json, size_t* answered);
  void ExpireTicket(TicketId ticket);
  // Whether `tenant` holds max_open_tickets open tickets.
  bool AtTicketLimit(std::string_view tenant);
  // Erases an open ticket and its tenant's count. Requires mu_ held.
  void CloseTicket(std::map<TicketId, Ticket>::iterator it);
  void CountOutcome(std::string_view tenant, std::string_view op,
                    std::string_view server, std::string_view tool,
                    std::string_view outcome, std::string_view bypass_reason,
                    uint64_t bytes);
  void NoteWrite(std::string_view tenant, std::string_view server,
                 const Verdict& verdict);
  // Counts a recorded or completed call: per tool, its latency and cost,
  // and the result's bytes.
  void CountRecorded(std::string_view server, std::string_view tool,
                     const UpstreamResult& r, double cost);
  void LogInvalidation(std::string_view tenant, std::string_view server,
                       std::string_view resource, std::string_view cause);
  Totals ReadTotals() const;

  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const {
      return std::hash<std::string_view>{}(s);
    }
  };
  // The series one request or one call outcome counts into, remembered by
  // label set (service.cc, kMaxRememberedSeries).
  struct RequestSeries {
    metrics::Counter* requests = nullptr;   // requests_ {op, status class}
    metrics::Histogram* latency = nullptr;  // latency_ {op}
  };
  struct OutcomeSeries {
    metrics::Counter* calls = nullptr;         // calls_ {op, outcome}
    metrics::Counter* tenant_calls = nullptr;  // tenant_calls_
    metrics::Counter* tool_calls = nullptr;    // tool_calls_
    // A hit or coalesced outcome only (else null): {server, tool}.
    metrics::Counter* tool_recorded = nullptr;
    metrics::Counter* tool_latency_us = nullptr;
    metrics::Counter* tool_cost_micro = nullptr;
    // Resolved on the first saving (null until then).
    mutable std::atomic<metrics::Counter*> tool_saved_us{nullptr};
  };
  RequestSeries SeriesOf(std::string_view op, int status);
  // `uncached` is filled and returned when too many label sets are
  // remembered already.
  const OutcomeSeries& SeriesOf(std::string_view tenant, std::string_view op,
                                std::string_view server, std::string_view tool,
                                std::string_view outcome,
                                OutcomeSeries* uncached);
  // The series `label` of `family`, remembered in `slot`.
  static metrics::Counter* Resolve(std::atomic<metrics::Counter*>& slot,
                                   metrics::CounterFamily& family,
                                   std::string_view label);

  ServiceOptions options_;
  http::BrowserGuard guard_;  // from options_
  std::function<std::string()> mcp_stats_;
  double started_ = 0;
  metrics::CounterFamily* requests_;
  metrics::CounterFamily* calls_;            // {op, outcome}
  metrics::CounterFamily* tenant_calls_;     // {tenant, outcome}
  metrics::CounterFamily* bypasses_;         // {reason}
  metrics::CounterFamily* tool_calls_;       // {server, tool, outcome}
  metrics::CounterFamily* tool_saved_us_;    // {server, tool}
  metrics::CounterFamily* tool_latency_us_;  // {server, tool}: recorded
  metrics::CounterFamily* tool_cost_micro_;  // {server, tool}: recorded
  metrics::CounterFamily* tool_recorded_;    // {server, tool}
  metrics::CounterFamily* saved_;            // {what}: latency_us, cost_micro
  metrics::CounterFamily* invalidations_;    // {cause}
  metrics::CounterFamily* bytes_;            // {direction}
  metrics::CounterFamily* store_errors_;     // {reason} (synced from engine)
  metrics::CounterFamily* engine_;           // {what} (synced from engine)
  metrics::HistogramFamily* latency_;        // {op}
  std::atomic<metrics::Counter*> bytes_served_{nullptr};       // bytes_
  std::atomic<metrics::Counter*> saved_latency_us_{nullptr};   // saved_
  std::atomic<metrics::Counter*> saved_cost_micros_{nullptr};  // saved_

  // The request series of the routes Handle names (kRouteOps in
  // service.cc), by route and status class (1xx..5xx): resolved on first
  // use and then read without a lock or a key (SeriesOf).
  static constexpr size_t kRouteSlots = 12;
  std::array<std::array<std::atomic<metrics::Counter*>, 5>, kRouteSlots>
      route_requests_{};
  std::array<std::atomic<metrics::Histogram*>, kRouteSlots> route_latency_{};

  // Remembered series (SeriesOf); entries are never erased.
  std::mutex series_mu_;
  std::unordered_map<std::string, RequestSeries, StringHash, std::equal_to<>>
      request_series_;  // GUARDED_BY(series_mu_)
  std::unordered_map<std::string, OutcomeSeries, StringHash, std::equal_to<>>
      outcome_series_;  // GUARDED_BY(series_mu_)

  std::mutex mu_;
  WaiterId next_waiter_ = 1;                                  // GUARDED_BY(mu_)
  std::map<WaiterId, Waiter> waiters_;                        // GUARDED_BY(mu_)
  std::map<TicketId, Ticket> tickets_;                        // GUARDED_BY(mu_)
  std::map<std::string, size_t, std::less<>> open_tickets_;   // GUARDED_BY
  std::deque<InvalidationEvent> invalidations_log_;           // GUARDED_BY(mu_)
  std::deque<Point> history_;                                 // GUARDED_BY(mu_)
  std::map<std::string, uint64_t, std::less<>> engine_seen_;  // GUARDED_BY
};

// The OpenAPI 3.0 document of the /v1/ API (JSON).
std::string_view OpenApiJson();

}  // namespace toolcache::serve

#endif  // TOOLCACHE_SRC_SERVE_SERVICE_H_
