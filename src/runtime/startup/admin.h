// The admin routes every HTTP face answers, in one place: GET /metrics
// (Prometheus text), GET /toolcache/stats (the one stats shape,
// src/runtime/stats.h) and GET /dashboard (src/runtime/dashboard.h, with its
// Content-Security-Policy). SendAdmin answers them for the LLM proxy (on its
// own server) and for AdminServer below; each face runs its browser guard
// (src/http/browser_guard.h) first, with its own error shape, before any
// route.
//
// AdminServer: the admin routes of a face without an HTTP server of its own
// (`toolcache mcp`, stdio and --url, with --metrics-listen HOST:PORT): GET
// /metrics (Prometheus text) and GET /toolcache/stats (the one stats shape,
// src/runtime/stats.h), served from the engine's counters on a small HTTP
// server of one loop thread. EnginePrometheus renders those counters with
// the metric registry every HTTP face uses (src/metrics/metrics.h).
//
// Trust: the same browser guard as `serve` and `proxy` (Host allow-list,
// Origin and Sec-Fetch-Site checks; src/http/browser_guard.h); no token, as
// /metrics on the other faces. Listen on loopback (the default host).
//
// Thread-safety: Start and the destructor from one thread; the routes run
// on the server's thread and call `stats` there (ToolCache::Stats is
// thread-safe). The server's thread blocks every signal, so SIGTERM and
// SIGCHLD still reach the face's own signalfd.
//
// Example:
//   Result<std::unique_ptr<runtime::AdminServer>> admin =
//       runtime::AdminServer::Start({.host = "127.0.0.1", .port = 0,
//                                    .face = "mcp", .stats = [&] {
//                                      return cache->Stats(); }});
//   std::cerr << "metrics on " << (*admin)->url() << "/metrics\n";
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "src/http/http.h"
#include "toolcache/status.h"
#include "toolcache/tool_cache.h"

namespace toolcache::runtime {

// The engine's counters as Prometheus text: toolcache_engine_calls_total
// {outcome}, toolcache_engine_bypasses_total{reason},
// toolcache_engine_events_total{what}, toolcache_store_errors_total
// {reason}, toolcache_engine_saved_seconds, toolcache_engine_bytes_served_
// total, toolcache_cache_entries, toolcache_cache_bytes.
std::string EnginePrometheus(const ToolCacheStats& s);

enum class AdminRoute {
  kMetrics,    // GET /metrics
  kStats,      // GET /toolcache/stats
  kDashboard,  // GET /dashboard
};

// What a face's admin routes answer from.
struct AdminRoutes {
  std::function<std::string()> metrics;  // Prometheus text
  std::function<std::string()> stats;    // the stats document (stats.h)
  bool dashboard = false;                // the face serves /dashboard
};

// The admin route at `path` (the method is the face's to check), or
// nullopt; /dashboard only when `dashboard`.
std::optional<AdminRoute> AdminRouteAt(std::string_view path, bool dashboard);

// One admin reply: its headers (content type, `cache-control: no-store`,
// the dashboard's CSP) and body.
struct AdminReply {
  http::Headers headers;
  std::string body;
};

// What `route` answers from `routes`, for a face that sends replies its own
// way (`serve`'s CacheService returns them to its binding). SendAdmin sends
// exactly this.
AdminReply AnswerAdmin(const AdminRoutes& routes, AdminRoute route);

// Answers `route` with 200 from `routes`: text/plain; version=0.0.4 for
// /metrics, application/json for the stats, the dashboard page with
// DashboardCsp(); every reply `cache-control: no-store`. The face's
// browser guard must have passed.
void SendAdmin(const AdminRoutes& routes, AdminRoute route,
               http::Responder& res);

struct AdminOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0: any free port (url() tells which)
  std::string face;   // "mcp": the stats document's "face"
  // The engine's counters now; nullptr: a face without a cache (zeros).
  std::function<ToolCacheStats()> stats;
};

class AdminServer {
 public:
  // Binds and starts serving; UNAVAILABLE when the address cannot be bound.
  [[nodiscard]] static Result<std::unique_ptr<AdminServer>> Start(
      AdminOptions options);
  virtual ~AdminServer() = default;  // stops the server, joins its thread
  // "http://host:port" as bound.
  virtual std::string url() const = 0;
};

}  // namespace toolcache::runtime
