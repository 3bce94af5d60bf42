// `toolcache serve --listen 127.0.0.1:PORT [--config F] [--store SPEC]`:
// the cache server (include/toolcache/serve.h). The CLI only parses, merges
// the configuration's `serve:` block with the flags (flags win), opens the
// store, builds the cache and runs the server.
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "apps/toolcache/commands.h"
#include "src/runtime/startup/engine.h"
#include "toolcache/config.h"
#include "toolcache/scope.h"
#include "toolcache/serve.h"
#include "toolcache/store.h"
#include "toolcache/tool_cache.h"

namespace toolcache::cli {
namespace {

struct ServeArgs {
  std::string listen;
  std::string config_path;
  std::string store;
  std::string stats_path;
  std::string log_level;
  std::string admin_token_env;
  int threads = 2;
  uint32_t mcp_max_sessions = 32;
  uint32_t mcp_max_sessions_per_tenant = 0;
  double mcp_idle_timeout_seconds = 1800;
};

int Run(const ServeArgs& a) {
  SetUpLogging("toolcache serve", a.log_level, "info");

  Config config;
  if (!a.config_path.empty()) {
    Result<Config> loaded = LoadConfigFile(a.config_path);
    if (!loaded.ok()) {
      std::cerr << "toolcache serve: " << loaded.status().message() << "\n";
      return kExitUsage;
    }
    config = std::move(*loaded);
  }
  ServeOptions o;
  std::string listen = "127.0.0.1:8090";
  if (config.serve.listen) listen = *config.serve.listen;
  if (!a.listen.empty()) listen = a.listen;
  if (!ParseListenAddress(listen, &o.listen_host, &o.listen_port)) {
    std::cerr << "toolcache serve: --listen must be HOST:PORT, got '" << listen
              << "'\n";
    return kExitUsage;
  }
  for (const ServeTenant& t : config.serve.tenants) {
    ServeTenantToken tt{t.name, t.token};
    if (!t.token_env.empty()) {
      const char* v = std::getenv(t.token_env.c_str());
      if (v == nullptr || *v == '\0') {
        std::cerr << "toolcache serve: " << config.source << ":" << t.line
                  << ": tenant '" << t.name << "': environment variable "
                  << t.token_env << " is unset or empty\n";
        return kExitUsage;
      }
      tt.token = v;
    }
    o.tenants.push_back(std::move(tt));
  }
  if (config.serve.max_wait_seconds) {
    o.max_wait_seconds = *config.serve.max_wait_seconds;
  }
  if (config.serve.lease_seconds) o.lease_seconds = *config.serve.lease_seconds;
  if (config.serve.max_open_tickets) {
    o.max_open_tickets = *config.serve.max_open_tickets;
  }
  if (std::string error;
      !ResolveAdminToken(a.admin_token_env, config.serve.admin_token_env,
                         config.source + ":" +
                             std::to_string(config.serve.admin_token_env_line),
                         &o.admin_token, &error)) {
    std::cerr << "toolcache serve: " << error << "\n";
    return kExitUsage;
  }
  for (const ServeTenantToken& t : o.tenants) {
    // The token decides who reads the whole view: a tenant holding it
    // would be the operator.
    if (!o.admin_token.empty() && t.token == o.admin_token) {
      std::cerr << "toolcache serve: the admin token equals the token of "
                   "tenant '"
                << t.name << "'; the operator needs a token of its own\n";
      return kExitUsage;
    }
  }
  o.allowed_origins = config.serve.allowed_origins;
  o.allowed_hosts = config.serve.allowed_hosts;
  o.threads = a.threads;
  for (const auto& [name, server] : config.servers) {
    if (server.command.empty()) continue;
    // The child's principal, as `toolcache mcp --name <name>` computes it
    // for the same command in this environment (session 19).
    std::string credential;
    if (!server.share_across_credentials) {
      credential = CredentialDigest(
          ThisStdioServerCredentials(server.credential_env, server.command));
    }
    o.mcp_servers.push_back({name, server.command, std::move(credential)});
  }
  o.mcp_max_sessions = a.mcp_max_sessions;
  o.mcp_max_sessions_per_tenant = a.mcp_max_sessions_per_tenant;
  o.mcp_idle_timeout_seconds = a.mcp_idle_timeout_seconds;
  o.stats_path = a.stats_path;
  // One start-up for every face (src/runtime/startup/engine.h).
  SystemClock clock;
  Result<runtime::Engine> engine =
      runtime::OpenEngine(config, &clock, {.store_flag = a.store});
  if (!engine.ok()) {
    std::cerr << "toolcache serve: " << engine.status().message() << "\n";
    return kExitUsage;
  }
  o.cache = engine->cache.get();
  if (o.tenants.empty()) {
    spdlog::warn(
        "no tenants configured (serve.tenants): no authentication, one "
        "global scope");
  } else if (o.admin_token.empty()) {
    spdlog::warn(
        "tenants configured without an admin token: GET /metrics and "
        "/toolcache/stats answer a tenant's token with its own counts and "
        "anyone else 401 (set serve.adminTokenEnv, --admin-token-env or "
        "TOOLCACHE_ADMIN_TOKEN for the whole view)");
  }
  if (o.tenants.empty() && o.admin_token.empty() &&
      !IsLoopbackHost(o.listen_host)) {
    spdlog::warn(
        "listening on {} without an admin token: anyone who reaches this "
        "address reads /metrics and /toolcache/stats (server and tool names, "
        "invalidated resources)",
        o.listen_host);
  }
  Result<int> code = RunCacheServer(o, [&](uint16_t port) {
    // One machine-readable line on stdout: scripts wait for it.
    std::cout << "listening on http://" << o.listen_host << ":" << port
              << std::endl;
  });
  return ExitCodeOf("toolcache serve", code);
}

}  // namespace

Command AddServeCommand(CLI::App& root) {
  auto args = std::make_shared<ServeArgs>();
  Command c;
  c.app = root.add_subcommand(
      "serve",
      "Run the cache server: a JSON cache API under /v1/ for frameworks "
      "that run their own tools, /metrics, /toolcache/stats, a "
      "dashboard at /, and every configured stdio MCP server "
      "(servers.<name>.command) over MCP Streamable HTTP at /mcp/<name>");
  c.app->add_option("--listen", args->listen,
                    "HOST:PORT (default serve.listen or 127.0.0.1:8090; "
                    "port 0 picks a free one, printed on stdout)");
  c.app->add_option("--admin-token-env", args->admin_token_env,
                    "environment variable holding the operator's token: "
                    "GET /metrics and /toolcache/stats then need "
                    "'Authorization: Bearer <token>' (default: "
                    "serve.adminTokenEnv, else TOOLCACHE_ADMIN_TOKEN)");
  c.app->add_option("--config", args->config_path, "YAML configuration file")
      ->check(CLI::ExistingFile);
  c.app->add_option("--store", args->store,
                    "shared store under the cache (overrides the "
                    "configuration's `store`): memory, sqlite:PATH, "
                    "redis://HOST:PORT[/DB]");
  c.app->add_option("--threads", args->threads, "event loops (default 2)")
      ->check(CLI::Range(1, 64));
  c.app
      ->add_option("--mcp-max-sessions", args->mcp_max_sessions,
                   "MCP sessions open at once at /mcp/<name> (default 32; "
                   "each runs its own server process)")
      ->check(CLI::Range(1, 4096));
  c.app
      ->add_option("--mcp-max-sessions-per-tenant",
                   args->mcp_max_sessions_per_tenant,
                   "MCP sessions one tenant may hold at once (default: half "
                   "of --mcp-max-sessions with two or more tenants, else "
                   "all); an initialize beyond gets 429")
      ->check(CLI::Range(1, 4096));
  c.app
      ->add_option("--mcp-idle-timeout", args->mcp_idle_timeout_seconds,
                   "seconds after which an MCP session without requests is "
                   "ended (default 1800)")
      ->check(CLI::Range(1.0, 1e7));
  c.app->add_option("--stats", args->stats_path,
                    "write JSON statistics to FILE on exit and on SIGUSR1");
  c.app
      ->add_option("--log-level", args->log_level,
                   "trace|debug|info|warn|error|off (default: $TOOLCACHE_LOG "
                   "or info)")
      ->check(CLI::IsMember(
          {"trace", "debug", "info", "warn", "error", "critical", "off"}));
  c.run = [args] { return Run(*args); };
  return c;
}

}  // namespace toolcache::cli
