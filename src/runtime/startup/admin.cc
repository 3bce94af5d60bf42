// Invariants: every request passes the browser guard before any route;
// only GET/HEAD /metrics and /toolcache/stats answer 200, anything else a
// JSON 404/405 naming the routes; the server thread never takes a signal.
// Choice: a fresh Registry per scrape, filled from one ToolCacheStats
// snapshot, so the numbers of one scrape are consistent with each other and
// with /toolcache/stats of the same moment (the engine keeps the totals).
#include "src/runtime/startup/admin.h"

#include <pthread.h>
#include <signal.h>

#include <nlohmann/json.hpp>
#include <thread>
#include <utility>

#include "src/http/browser_guard.h"
#include "src/http/http.h"
#include "src/metrics/metrics.h"
#include "src/runtime/dashboard.h"
#include "src/runtime/stats.h"

namespace toolcache::runtime {

std::string EnginePrometheus(const ToolCacheStats& s) {
  metrics::Registry r;
  metrics::CounterFamily& calls = r.Counters(
      "toolcache_engine_calls_total", "Engine calls by outcome", {"outcome"});
  calls.Get({"hit"})->Add(s.hits);
  calls.Get({"miss"})->Add(s.misses);
  calls.Get({"coalesced"})->Add(s.coalesced);
  uint64_t bypassed = 0;
  metrics::CounterFamily& by =
      r.Counters("toolcache_engine_bypasses_total",
                 "Engine calls passed through, by reason", {"reason"});
  for (const auto& [reason, n] : s.bypasses) {
    by.Get({reason})->Add(n);
    bypassed += n;
  }
  calls.Get({"bypass"})->Add(bypassed);
  metrics::CounterFamily& ev =
      r.Counters("toolcache_engine_events_total",
                 "Engine totals: admitted, not_admitted, invalidations, "
                 "entries_invalidated, store_hits, would_hits, recorded",
                 {"what"});
  ev.Get({"admitted"})->Add(s.admitted);
  ev.Get({"not_admitted"})->Add(s.not_admitted);
  ev.Get({"invalidations"})->Add(s.invalidations);
  ev.Get({"entries_invalidated"})->Add(s.entries_invalidated);
  ev.Get({"store_hits"})->Add(s.store_hits);
  ev.Get({"would_hits"})->Add(s.would_hits);
  ev.Get({"recorded"})->Add(s.recorded);
  metrics::CounterFamily& se = r.Counters(
      "toolcache_store_errors_total",
      "Shared store failures outside lookups, by reason (engine)", {"reason"});
  for (const auto& [reason, n] : s.store_errors) se.Get({reason})->Add(n);
  r.Counters("toolcache_engine_bytes_served_total",
             "Result bytes served from the cache", {})
      .Get({})
      ->Add(s.bytes_served);
  const double saved = s.latency_saved_seconds;
  const double entries = static_cast<double>(s.entries);
  const double bytes = static_cast<double>(s.bytes);
  r.Gauge("toolcache_engine_saved_seconds",
          "Upstream latency saved by hits (sum of stored latencies)",
          [saved] { return saved; });
  r.Gauge("toolcache_cache_entries", "Entries cached",
          [entries] { return entries; });
  r.Gauge("toolcache_cache_bytes", "Bytes cached", [bytes] { return bytes; });
  return r.Prometheus();
}

std::optional<AdminRoute> AdminRouteAt(std::string_view path, bool dashboard) {
  if (path == "/metrics") return AdminRoute::kMetrics;
  if (path == "/toolcache/stats") return AdminRoute::kStats;
  if (dashboard && path == "/dashboard") return AdminRoute::kDashboard;
  return std::nullopt;
}

AdminReply AnswerAdmin(const AdminRoutes& routes, AdminRoute route) {
  switch (route) {
    case AdminRoute::kMetrics:
      return {{{"content-type", "text/plain; version=0.0.4"},
               {"cache-control", "no-store"}},
              routes.metrics()};
    case AdminRoute::kStats:
      return {
          {{"content-type", "application/json"}, {"cache-control", "no-store"}},
          routes.stats()};
    case AdminRoute::kDashboard:
      // The page runs its own script and nothing else (dashboard.h).
      return {{{"content-type", "text/html; charset=utf-8"},
               {"content-security-policy", std::string(DashboardCsp())},
               {"cache-control", "no-store"}},
              std::string(DashboardHtml())};
  }
  return {};
}

AdminAccess CheckAdminAccess(const http::Request& request,
                             const AdminAccessOptions& options) {
  const std::string_view token =
      http::BearerToken(request.Header("authorization"));
  AdminAccess a;
  if (!token.empty() && http::TokenEquals(token, options.admin_token)) {
    a.viewer = AdminViewer::kOperator;
    a.status = 200;
    return a;
  }
  if (!token.empty() && options.tenant_of) {
    if (std::optional<std::string> t = options.tenant_of(token)) {
      a.viewer = AdminViewer::kTenant;
      a.tenant = std::move(*t);
      a.status = 200;
      return a;
    }
  }
  if (options.admin_token.empty() && !options.tenants) {
    // Choice: no admin token and no tenants is the single-user loopback
    // default; its /metrics stays open so a scrape needs no configuration.
    a.viewer = AdminViewer::kOperator;
    a.status = 200;
    return a;
  }
  a.message =
      options.admin_token.empty()
          ? "with tenants configured the operational routes need the admin "
            "token ('Authorization: Bearer <admin token>'; set it with "
            "--admin-token-env, the adminTokenEnv key or "
            "TOOLCACHE_ADMIN_TOKEN); a tenant's own token reads its own "
            "counts"
          : "the operational routes need 'Authorization: Bearer <admin "
            "token>'";
  if (!options.admin_token.empty() && options.tenants) {
    a.message += " (or a tenant's own token, for its own counts)";
  }
  return a;
}

std::string AdminRefusalJson(const AdminAccess& access) {
  return nlohmann::json(
             {{"error",
               {{"code", "unauthorized"}, {"message", access.message}}}})
             .dump() +
         "\n";
}

void SendAdmin(const AdminRoutes& routes, AdminRoute route,
               http::Responder& res) {
  AdminReply a = AnswerAdmin(routes, route);
  res.Send(200, std::move(a.headers), std::move(a.body));
}

namespace {

class AdminServerImpl final : public AdminServer {
 public:
  explicit AdminServerImpl(AdminOptions o)
      : options_(std::move(o)),
        guard_(http::BrowserGuardOptions{.listen_host = options_.host,
                                         .config_block = "mcp"}) {}

  Status Start() {
    http::ServerOptions so;
    so.host = options_.host;
    so.port = options_.port;
    so.threads = 1;
    Result<std::unique_ptr<http::Server>> s =
        http::NewServer(so, [this](http::Request req, http::ResponderPtr res) {
          Handle(std::move(req), std::move(res));
        });
    if (!s.ok()) return s.status();
    server_ = std::move(*s);
    thread_ = std::thread([this] {
      sigset_t all;
      sigfillset(&all);
      pthread_sigmask(SIG_BLOCK, &all, nullptr);
      server_->Run();
    });
    return Status();
  }

  ~AdminServerImpl() override {
    if (server_ != nullptr) server_->Stop();
    if (thread_.joinable()) thread_.join();
  }

  std::string url() const override {
    const bool v6 = options_.host.find(':') != std::string::npos;
    return "http://" + (v6 ? "[" + options_.host + "]" : options_.host) + ":" +
           std::to_string(server_->port());
  }

 private:
  void Handle(http::Request req, http::ResponderPtr res) {
    const http::Headers json = {{"content-type", "application/json"}};
    if (http::GuardDecision g = guard_.Check(req, /*records=*/false);
        !g.allowed()) {
      res->Send(
          g.status, json,
          nlohmann::json({{"error", g.code()}, {"message", g.message}}).dump() +
              "\n");
      return;
    }
    const std::optional<AdminRoute> route =
        AdminRouteAt(req.Path(), /*dashboard=*/false);
    if (!route) {
      res->Send(404, json,
                "{\"error\":\"not_found\",\"message\":\"the admin routes are "
                "GET /metrics and GET /toolcache/stats\"}\n");
      return;
    }
    if (req.method != "GET" && req.method != "HEAD") {
      res->Send(
          405, {{"content-type", "application/json"}, {"allow", "GET"}},
          "{\"error\":\"method_not_allowed\",\"message\":\"GET only\"}\n");
      return;
    }
    if (const AdminAccess a =
            CheckAdminAccess(req, {.admin_token = options_.admin_token});
        a.viewer != AdminViewer::kOperator) {
      res->Send(a.status,
                {{"content-type", "application/json"},
                 {"www-authenticate", "Bearer"}},
                AdminRefusalJson(a));
      return;
    }
    const ToolCacheStats s =
        options_.stats ? options_.stats() : ToolCacheStats{};
    SendAdmin(
        {.metrics = [&s] { return EnginePrometheus(s); },
         .stats =
             [&] { return SerializeStats(StatsSnapshot(options_.face, &s)); }},
        *route, *res);
  }

  AdminOptions options_;
  http::BrowserGuard guard_;
  std::unique_ptr<http::Server> server_;
  std::thread thread_;
};

}  // namespace

Result<std::unique_ptr<AdminServer>> AdminServer::Start(AdminOptions options) {
  auto impl = std::make_unique<AdminServerImpl>(std::move(options));
  Status st = impl->Start();
  if (!st.ok()) return st;
  return std::unique_ptr<AdminServer>(std::move(impl));
}

}  // namespace toolcache::runtime
