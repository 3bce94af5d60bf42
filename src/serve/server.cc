// The cache server (include/toolcache/serve.h): binds CacheService to the
// HTTP layer. Every request is handled on its connection's loop; a deferred
// reply (a coalesced begin) is posted back to that loop.
//
// Invariants: the service outlives the HTTP server (declared first, so
// destroyed last); timers still pending when the loops stop are dropped
// with their loops, never run.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "src/http/http.h"
#include "src/mcp/http_server.h"
#include "src/metrics/metrics.h"
#include "src/serve/service.h"
#include "toolcache/serve.h"

namespace toolcache {
namespace {

void SendReply(http::Responder& res, serve::Reply r) {
  if (!r.headers.empty()) {  // an admin route's, CSP included
    res.Send(r.status, std::move(r.headers), std::move(r.body));
    return;
  }
  // Choice: built in place, the content type moved in (an initializer
  // list copies every string: two more allocations per reply).
  http::Headers headers;
  headers.reserve(2);
  headers.push_back({"content-type", std::move(r.content_type)});
  headers.push_back({"cache-control", "no-store"});
  res.Send(r.status, std::move(headers), std::move(r.body));
}

class CacheServerImpl final : public CacheServer {
 public:
  explicit CacheServerImpl(const ServeOptions& o) : options_(o) {
    serve::ServiceOptions so;
    so.cache = o.cache;
    so.clock = &clock_;
    so.registry = &registry_;
    for (const ServeTenantToken& t : o.tenants) {
      so.tenants.push_back({t.name, t.token});
    }
    so.max_wait_seconds = o.max_wait_seconds;
    so.lease_seconds = o.lease_seconds;
    so.max_open_tickets = o.max_open_tickets;
    so.allowed_origins = o.allowed_origins;
    so.allowed_hosts = o.allowed_hosts;
    so.listen_host = o.listen_host;
    so.admin_token = o.admin_token;
    service_ = std::make_unique<serve::CacheService>(std::move(so));
    if (!o.mcp_servers.empty()) {
      mcp_http::McpHttpOptions mo;
      mo.cache = o.cache;
      mo.clock = &clock_;
      for (const ServeMcpServer& m : o.mcp_servers) {
        mo.servers.push_back({m.name, m.command, m.credential});
      }
      mo.max_sessions = o.mcp_max_sessions;
      mo.max_sessions_per_tenant = o.mcp_max_sessions_per_tenant;
      if (mo.max_sessions_per_tenant == 0 && o.tenants.size() > 1) {
        // Choice: half, so a second tenant always finds room.
        mo.max_sessions_per_tenant =
            std::max<uint32_t>(1, o.mcp_max_sessions / 2);
      }
      mo.idle_timeout_seconds = o.mcp_idle_timeout_seconds;
      serve::CacheService* svc = service_.get();
      mo.admit = [svc](const http::Request& r, mcp_http::McpGate* g) {
        return svc->Admit(r, &g->status, &g->message);
      };
      mcp_ = std::make_unique<mcp_http::McpHttp>(std::move(mo));
      mcp_http::McpHttp* mcp = mcp_.get();
      service_->SetMcpStats([mcp] { return mcp->StatsJson(); });
    }
  }

  Status Init() {
    http::ServerOptions so;
    so.host = options_.listen_host;
    so.port = options_.listen_port;
    so.threads = options_.threads;
    so.max_body_bytes = options_.max_body_bytes;
    so.on_bad_request = [](int status, std::string_view reason,
                           const http::Request& partial, http::Responder& out) {
      if (mcp_http::McpHttp::Matches(partial.Path())) {
        // MCP clients read JSON-RPC errors.
        out.Send(status, {{"content-type", "application/json"}},
                 std::string("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":"
                             "{\"code\":-32600,\"message\":\"") +
                     (status == 413 ? "Payload Too Large: body over the limit"
                                    : "Bad Request: malformed HTTP request") +
                     "\"}}");
        return;
      }
      out.Send(status, {{"content-type", "application/json"}},
               "{\"error\":{\"code\":\"bad_request\",\"message\":\"" +
                   std::string(status == 413 ? "body too large"
                                             : "malformed request") +
                   "\"}}");
      (void)reason;
    };
    serve::CacheService* svc = service_.get();
    mcp_http::McpHttp* mcp = mcp_.get();
    Result<std::unique_ptr<http::Server>> server = http::NewServer(
        so, [svc, mcp](http::Request req, http::ResponderPtr res) {
          if (mcp != nullptr && mcp_http::McpHttp::Matches(req.Path())) {
            mcp->Handle(req, res);
            return;
          }
          serve::RequestContext ctx;
          // Choice: only begin uses the context; other requests skip
          // building its three functions (two allocations per request).
          if (serve::CacheService::NeedsContext(req.Path())) {
            http::Loop* loop = res->loop();
            ctx.after = [loop](double s, std::function<void()> f) {
              (void)http::RunAfter(loop, s, std::move(f));
            };
            std::weak_ptr<http::Responder> weak = res;
            ctx.on_gone = [weak](std::function<void()> f) {
              if (auto r = weak.lock()) r->OnClientGone(std::move(f));
            };
            ctx.later = [loop, res](serve::Reply r) {
              http::Post(loop, [res, r = std::move(r)]() mutable {
                SendReply(*res, std::move(r));
              });
            };
          }
          std::optional<serve::Reply> now = svc->Handle(req, ctx);
          if (now) SendReply(*res, std::move(*now));
        });
    if (!server.ok()) return server.status();
    server_ = std::move(*server);
    return Status::Ok();
  }

  ~CacheServerImpl() override {
    // A waiter holds its connection, which must go before its loop does;
    // so does an MCP session's exchange.
    if (mcp_) mcp_->Shutdown();
    service_->DropWaiters();
    server_.reset();
  }

  uint16_t port() const override { return server_->port(); }

  void Run() override {
    std::thread sampler([this] {
      std::unique_lock<std::mutex> lock(mu_);
      double last_sample = clock_.NowSeconds();
      service_->Sample();
      while (!stopping_) {
        // Choice: MCP sessions are swept every second (idle ones ended,
        // ended ones reaped); the history is sampled every sample_seconds.
        cv_.wait_for(lock, std::chrono::seconds(1));
        if (stopping_) break;
        if (mcp_) mcp_->Sweep();
        if (clock_.NowSeconds() - last_sample >= options_.sample_seconds) {
          service_->Sample();
          last_sample = clock_.NowSeconds();
        }
      }
    });
    server_->Run();
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    sampler.join();
  }

  void Stop() override { server_->Stop(); }
  std::string StatsJson() const override { return service_->StatsJson(); }

 private:
  ServeOptions options_;
  SystemClock clock_;
  metrics::Registry registry_;
  std::unique_ptr<serve::CacheService> service_;
  std::unique_ptr<mcp_http::McpHttp> mcp_;  // null without MCP servers
  std::unique_ptr<http::Server> server_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // GUARDED_BY(mu_)
};

}  // namespace

Result<std::unique_ptr<CacheServer>> NewCacheServer(
    const ServeOptions& options) {
  if (options.cache == nullptr) return InvalidArgument("serve: no cache");
  for (size_t i = 0; i < options.tenants.size(); ++i) {
    const ServeTenantToken& t = options.tenants[i];
    if (t.name.empty() || t.token.empty()) {
      return InvalidArgument("serve: tenant '" + t.name +
                             "' needs a name and a non-empty token");
    }
    // The token decides the tenant: two with one token would silently be
    // the last one (issue 27.12). The token itself is never printed.
    for (size_t j = 0; j < i; ++j) {
      if (options.tenants[j].token == t.token) {
        return InvalidArgument("serve: tenants '" + options.tenants[j].name +
                               "' and '" + t.name +
                               "' have the same token; each tenant needs "
                               "its own");
      }
    }
  }
  auto s = std::make_unique<CacheServerImpl>(options);
  Status st = s->Init();
  if (!st.ok()) return st;
  return std::unique_ptr<CacheServer>(std::move(s));
}

Result<int> RunCacheServer(const ServeOptions& options,
                           const std::function<void(uint16_t)>& on_listening) {
  // Signals go to one waiting thread, never to the event loops.
  http::BlockServerSignals();
  Result<std::unique_ptr<CacheServer>> server = NewCacheServer(options);
  if (!server.ok()) return server.status();
  CacheServer* p = server->get();
  if (on_listening) on_listening(p->port());
  http::ServeUntilSignal([p] { p->Run(); }, [p] { p->Stop(); },
                         [p] { return p->StatsJson(); }, options.stats_path);
  return 0;
}

}  // namespace toolcache
