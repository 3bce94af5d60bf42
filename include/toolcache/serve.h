// The cache server: `toolcache serve --listen 127.0.0.1:PORT`.
//
// One HTTP/1.1 server (src/http) for the frameworks that run their own
// tools and the operator who watches the cache:
//   POST /v1/lookup | record | begin | complete | invalidate | explain
//   GET  /v1/stats, /v1/openapi.json     the JSON cache API (docs/SERVE.md;
//                                        the OpenAPI document is served by
//                                        /v1/openapi.json,
//                                        src/serve/openapi.cc)
//   GET  /metrics                        Prometheus text
//   GET  /toolcache/stats                JSON statistics (the dashboard's)
//   GET  /                               the dashboard (embedded HTML/JS)
//   POST|GET|DELETE /mcp/<name>          a configured stdio MCP server over
//                                        MCP Streamable HTTP
//                                        (src/mcp/http_server.h)
// Every cache decision is the engine's (ToolCache): the server translates
// JSON into its calls. Tenants (bearer tokens) are cache scopes.
//
// Thread-safety: a CacheServer is driven by Run() (blocking, N loops) and
// stopped by Stop() from any thread; StatsJson() is thread-safe.
// Ownership: borrows the cache (required) and the clock.
//
// Example:
//   ServeOptions o;
//   o.listen_port = 0;
//   o.cache = cache.get();
//   Result<std::unique_ptr<CacheServer>> s = NewCacheServer(o);
//   std::thread t([&] { (*s)->Run(); });  // ... (*s)->Stop(); t.join();
#ifndef TOOLCACHE_SERVE_H_
#define TOOLCACHE_SERVE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "toolcache/status.h"
#include "toolcache/tool_cache.h"

namespace toolcache {

struct ServeTenantToken {
  std::string name;   // the tenant's cache scope
  std::string token;  // its bearer token (non-empty)
};

// A stdio MCP server served at /mcp/<name> (MCP Streamable HTTP).
struct ServeMcpServer {
  std::string name;                  // path segment and cache identity
  std::vector<std::string> command;  // argv (command[0] looked up in PATH)
  // CredentialDigest of what tells this server's process apart
  // (ThisStdioServerCredentials in include/toolcache/scope.h: its secret and
  // data-choosing environment, secret arguments, uid and folder), joined to
  // each tenant's scope as `toolcache mcp --scope <tenant>` joins it; "" =
  // the tenant alone (servers.<name>.shareAcrossCredentials).
  std::string credential;
};

struct ServeOptions {
  std::string listen_host = "127.0.0.1";
  uint16_t listen_port = 8090;  // 0 = any free port
  int threads = 2;              // event loops
  ToolCache* cache = nullptr;   // required
  // Empty: no authentication, one global scope.
  std::vector<ServeTenantToken> tenants;
  double max_wait_seconds = 30;     // a coalesced begin's longest wait
  double lease_seconds = 300;       // a ticket's longest life
  size_t max_open_tickets = 10000;  // per tenant; then misses get no ticket
  // Browser Origins allowed ("*" any); empty: loopback origins only.
  std::vector<std::string> allowed_origins;
  // Host names answered besides IP literals, localhost and the listen
  // address ("*" = any): a server behind a name (serve.allowedHosts).
  std::vector<std::string> allowed_hosts;
  // The operator's token for GET /metrics and GET /toolcache/stats
  // (`Authorization: Bearer <token>`; serve.adminTokenEnv, --admin-token-env,
  // TOOLCACHE_ADMIN_TOKEN). "" = none: those routes are open without
  // tenants (the loopback default) and answer 401 with tenants, where a
  // tenant's token reads its own counts only (docs/SERVE.md).
  std::string admin_token;
  // Seconds between two points of the dashboard's history. Choice: 5 s.
  double sample_seconds = 5;
  // Request bodies larger than this get 413. Choice: 8 MiB.
  uint64_t max_body_bytes = 8ull << 20;
  std::string stats_path;  // RunCacheServer: JSON stats on exit / SIGUSR1
  // MCP servers served at /mcp/<name>, one child process per session
  // (docs/SERVE.md). Choice: at most 32 sessions at once, and a session
  // idle for 30 min is ended.
  std::vector<ServeMcpServer> mcp_servers;
  uint32_t mcp_max_sessions = 32;
  // Sessions one tenant may hold at once (an initialize beyond gets 429).
  // 0 = the default: half of mcp_max_sessions (at least 1) when there are
  // two or more tenants, so one tenant cannot lock the others out, and all
  // of them otherwise.
  uint32_t mcp_max_sessions_per_tenant = 0;
  double mcp_idle_timeout_seconds = 1800;
};

class CacheServer {
 public:
  virtual ~CacheServer() = default;
  virtual uint16_t port() const = 0;
  virtual void Run() = 0;
  virtual void Stop() = 0;
  virtual std::string StatsJson() const = 0;
};

// Binds (so port() is valid on return). INVALID_ARGUMENT without a cache,
// UNAVAILABLE when the address cannot be bound.
Result<std::unique_ptr<CacheServer>> NewCacheServer(
    const ServeOptions& options);

// Runs a server until SIGTERM / SIGINT / SIGHUP (SIGUSR1 writes the stats
// file). `on_listening` gets the bound port. Returns the exit code.
Result<int> RunCacheServer(const ServeOptions& options,
                           const std::function<void(uint16_t)>& on_listening);

}  // namespace toolcache

#endif  // TOOLCACHE_SERVE_H_
