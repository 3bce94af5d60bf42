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
// Origin and Sec-Fetch-Site checks; src/http/browser_guard.h), then the
// admin token when one is configured (CheckAdminAccess; session 19).
// Without one, anyone who reaches the port reads the engine's counters:
// listen on loopback (the default host).
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

// Who reads the operational routes (GET /metrics, GET /toolcache/stats and
// the data the dashboard fetches; the dashboard page itself carries no data
// and is answered to anyone past the browser guard). Session 19:
//   - the operator: presents `Authorization: Bearer <admin token>`, or any
//     caller when the face has neither an admin token nor tenants (today's
//     single-user loopback default: no configuration, scraping unchanged);
//   - a tenant (`serve` with tenants): presents its own token, reads its own
//     counts only;
//   - anyone else: 401. With an admin token configured, or tenants without
//     one, an anonymous caller reads nothing (the series name tenants,
//     servers and tools, and count every tenant's calls and invalidations).
enum class AdminViewer : uint8_t { kOperator, kTenant, kNobody };

struct AdminAccess {
  AdminViewer viewer = AdminViewer::kNobody;
  std::string tenant;   // kTenant: whose view
  int status = 401;     // kNobody: the reply's status
  std::string message;  // kNobody: what would let the caller in
};

struct AdminAccessOptions {
  // The operator's token ("": none configured). Compared in constant time.
  std::string_view admin_token;
  // Whether the face has tenants: then a caller without the admin token is
  // never the operator, even with no admin token configured.
  bool tenants = false;
  // The tenant whose token `token` is, or nullopt; nullptr: no tenants.
  std::function<std::optional<std::string>(std::string_view token)> tenant_of;
};

// Who `request` is to the operational routes (see AdminViewer). The face's
// browser guard must have passed (a page cannot send the Authorization
// header cross-origin without a preflight these servers never grant).
AdminAccess CheckAdminAccess(const http::Request& request,
                             const AdminAccessOptions& options);

// The JSON error body of a refused AdminAccess: {"error":{"code":
// "unauthorized","message":...}} (serve's and the admin server's shape).
std::string AdminRefusalJson(const AdminAccess& access);

struct AdminOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0: any free port (url() tells which)
  std::string face;   // "mcp": the stats document's "face"
  // The engine's counters now; nullptr: a face without a cache (zeros).
  std::function<ToolCacheStats()> stats;
  // The operator's token: when set, every route needs `Authorization:
  // Bearer <token>` (CheckAdminAccess); "": open, as before.
  std::string admin_token;
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
