// `toolcache mcp [--config FILE] [--name NAME] [--store SPEC] [--stats FILE]
// -- <command...>`:
// a caching proxy in front of any stdio MCP server. The CLI only parses,
// builds the cache and runs the proxy (include/toolcache/mcp_proxy.h).
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "apps/toolcache/commands.h"
#include "src/runtime/startup/admin.h"
#include "src/runtime/startup/engine.h"
#include "toolcache/config.h"
#include "toolcache/mcp_proxy.h"
#include "toolcache/mcp_url_proxy.h"
#include "toolcache/store.h"
#include "toolcache/tool_cache.h"

namespace toolcache::cli {
namespace {

struct McpArgs {
  std::string config_path;
  std::string name;
  std::string scope;
  std::string stats_path;
  std::string metrics_listen;
  std::string admin_token_env;
  std::string store;
  std::string log_level;
  double grace_seconds = 2.0;
  uint64_t max_line_bytes = uint64_t{64} << 20;
  uint64_t max_buffered_bytes = uint64_t{16} << 20;
  bool no_cache = false;
  bool share_across_credentials = false;
  std::vector<std::string> credential_env;
  std::vector<std::string> command;
  // A remote Streamable HTTP server instead of a command.
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string ca_file;
  double timeout_seconds = 300;
  bool no_get_stream = false;
  // Options given that only one kind of server uses (named in errors).
  std::string stdio_only_given;  // e.g. "--max-buffered-bytes"
  std::string url_only_given;    // e.g. "--header"
};

// `--header 'Name: value'` -> {name, value}; exit-2 message on error.
bool SplitHeaders(const std::vector<std::string>& in,
                  std::vector<std::pair<std::string, std::string>>* out) {
  for (const std::string& h : in) {
    size_t colon = h.find(':');
    if (colon == std::string::npos || colon == 0) {
      std::cerr << "toolcache mcp: --header must be 'Name: value'\n";
      return false;
    }
    std::string value = h.substr(colon + 1);
    size_t start = value.find_first_not_of(" \t");
    value = start == std::string::npos ? "" : value.substr(start);
    out->emplace_back(h.substr(0, colon), value);
  }
  return true;
}

int Run(const McpArgs& a) {
  // Logs go to stderr only: stdout is the JSON-RPC channel. Choice: "warn"
  // by default so a proxied server's stderr stays readable; bypasses are
  // logged at info (TOOLCACHE_LOG=info or --log-level info).
  SetUpLogging("toolcache", a.log_level, "warn");
  Config config;
  if (!a.config_path.empty()) {
    Result<Config> loaded = LoadConfigFile(a.config_path);
    if (!loaded.ok()) {
      std::cerr << "toolcache mcp: " << loaded.status().message() << "\n";
      return kExitUsage;
    }
    config = std::move(*loaded);
  }
  // A remote server: --url, or the config's servers.<--name>.url.
  std::string url = a.url;
  std::vector<std::pair<std::string, std::string>> headers;
  if (url.empty() && a.command.empty() && !a.name.empty()) {
    auto it = config.servers.find(a.name);
    if (it != config.servers.end() && it->second.url) {
      url = *it->second.url;
      headers = it->second.headers;
    }
  }
  if (!url.empty() && !a.command.empty()) {
    std::cerr << "toolcache mcp: give either --url or a server command, not "
                 "both\n";
    return kExitUsage;
  }
  if (url.empty() && a.command.empty()) {
    std::cerr << "toolcache mcp: no server command; usage: toolcache mcp "
                 "[--config FILE] -- <command> [args...], or toolcache mcp "
                 "--url URL\n";
    return kExitUsage;
  }
  // An option the chosen kind of server ignores is a mistake worth naming,
  // not something to drop silently.
  if (!url.empty() && !a.stdio_only_given.empty()) {
    std::cerr << "toolcache mcp: " << a.stdio_only_given
              << " applies to a stdio server, not to --url\n";
    return kExitUsage;
  }
  if (url.empty() && !a.url_only_given.empty()) {
    std::cerr << "toolcache mcp: " << a.url_only_given
              << " applies only with --url\n";
    return kExitUsage;
  }
  if (!SplitHeaders(a.headers, &headers)) return kExitUsage;
  // Who shares entries (include/toolcache/scope.h): per credential unless
  // the flag or the server's config says otherwise.
  bool share = a.share_across_credentials;
  std::vector<std::string> credential_env = a.credential_env;
  if (auto it = config.servers.find(a.name);
      !a.name.empty() && it != config.servers.end()) {
    share = share || it->second.share_across_credentials;
    credential_env.insert(credential_env.end(),
                          it->second.credential_env.begin(),
                          it->second.credential_env.end());
  }
  // One start-up for every face (src/runtime/startup/engine.h).
  // Choice: `memory` is the in-process cache alone (no second copy).
  SystemClock clock;
  Result<runtime::Engine> engine = runtime::OpenEngine(
      config, &clock, {.store_flag = a.store, .no_cache = a.no_cache});
  if (!engine.ok()) {
    // The message names the file and line itself ("c.yaml:3: ...").
    std::cerr << "toolcache mcp: " << engine.status().message() << "\n";
    return kExitUsage;
  }
  ToolCache* cache = engine->cache.get();
  // --metrics-listen: the admin routes of the HTTP faces, for this one
  // (src/runtime/startup/admin.h). The URL goes to stderr: stdout is the
  // MCP stream.
  std::unique_ptr<runtime::AdminServer> admin;
  if (!a.metrics_listen.empty()) {
    runtime::AdminOptions ao;
    if (!ParseListenAddress(a.metrics_listen, &ao.host, &ao.port)) {
      std::cerr << "toolcache mcp: --metrics-listen: expected HOST:PORT, got '"
                << a.metrics_listen << "'\n";
      return kExitUsage;
    }
    ao.face = "mcp";
    if (std::string error; !ResolveAdminToken(a.admin_token_env, std::nullopt,
                                              "", &ao.admin_token, &error)) {
      std::cerr << "toolcache mcp: " << error << "\n";
      return kExitUsage;
    }
    if (cache != nullptr) ao.stats = [cache] { return cache->Stats(); };
    Result<std::unique_ptr<runtime::AdminServer>> started =
        runtime::AdminServer::Start(std::move(ao));
    if (!started.ok()) {
      std::cerr << "toolcache mcp: --metrics-listen: "
                << started.status().message() << "\n";
      return kExitFailure;
    }
    admin = std::move(*started);
    std::cerr << "toolcache mcp: metrics on " << admin->url() << "/metrics"
              << std::endl;
  }
  if (!url.empty()) {
    McpUrlProxyOptions u;
    u.url = url;
    u.headers = std::move(headers);
    u.server_name = a.name;
    u.scope = a.scope;
    u.share_across_credentials = share;
    u.cache = cache;
    u.stats_path = a.stats_path;
    u.ca_file = a.ca_file;
    u.timeout_seconds = a.timeout_seconds;
    u.grace_seconds = a.grace_seconds;
    u.max_line_bytes = a.max_line_bytes;
    u.get_stream = !a.no_get_stream;
    return ExitCodeOf("toolcache mcp", RunMcpUrlProxy(u));
  }
  McpProxyOptions o;
  o.command = a.command;
  o.server_name = a.name;
  o.scope = a.scope;
  o.share_across_credentials = share;
  o.credential_env = std::move(credential_env);
  o.cache = cache;
  o.stats_path = a.stats_path;
  o.grace_seconds = a.grace_seconds;
  o.max_line_bytes = a.max_line_bytes;
  o.max_buffered_bytes = a.max_buffered_bytes;
  Result<int> code = RunMcpProxy(o);
  return ExitCodeOf("toolcache mcp", code);
}

}  // namespace

Command AddMcpCommand(CLI::App& root) {
  auto args = std::make_shared<McpArgs>();
  Command c;
  c.app = root.add_subcommand(
      "mcp",
      "Run an MCP server behind a transparent caching proxy: "
      "toolcache mcp [options] -- <command> [args...] (a stdio server), or "
      "toolcache mcp [options] --url URL (a remote Streamable HTTP server)");
  c.app->add_option("--config", args->config_path, "YAML configuration file")
      ->check(CLI::ExistingFile);
  c.app->add_option(
      "--name", args->name,
      "server identity in cache keys (default: the command line)");
  c.app->add_option(
      "--scope", args->scope,
      "sharing scope of cached entries (default: global, narrowed to the "
      "server's credentials unless --share-across-credentials)");
  c.app->add_option(
      "--store", args->store,
      "where results are kept besides this process (overrides the config's "
      "`store`): memory (default), sqlite:PATH, redis://HOST:PORT[/DB]; see "
      "docs/STORE.md");
  c.app->add_option("--stats", args->stats_path,
                    "write JSON statistics to FILE on exit and on SIGUSR1");
  c.app->add_option("--metrics-listen", args->metrics_listen,
                    "serve GET /metrics (Prometheus) and GET /toolcache/stats "
                    "on HOST:PORT (default host 127.0.0.1; off by default)");
  c.app->add_option("--admin-token-env", args->admin_token_env,
                    "environment variable holding the operator's token for "
                    "--metrics-listen: its routes then need 'Authorization: "
                    "Bearer <token>' (default: TOOLCACHE_ADMIN_TOKEN, else "
                    "open)");
  c.app
      ->add_option("--log-level", args->log_level,
                   "trace|debug|info|warn|error|off (default: $TOOLCACHE_LOG "
                   "or warn)")
      ->check(CLI::IsMember(
          {"trace", "debug", "info", "warn", "error", "critical", "off"}));
  c.app
      ->add_option("--grace", args->grace_seconds,
                   "seconds before SIGTERM, then SIGKILL, on shutdown")
      ->check(CLI::Range(0.0, 3600.0));
  c.app
      ->add_option("--max-line-bytes", args->max_line_bytes,
                   "longest message parsed in either direction (default 64 "
                   "MiB): a longer client message is rejected, a longer "
                   "server message streamed through uncached")
      ->check(CLI::Range(uint64_t{1024}, uint64_t{1} << 34));
  CLI::Option* max_buffered =
      c.app
          ->add_option("--max-buffered-bytes", args->max_buffered_bytes,
                       "bytes queued for a peer that is not reading before the "
                       "proxy stops reading its counterpart (default 16 MiB)")
          ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 34));
  c.app->add_option("--url", args->url,
                    "a remote MCP server's Streamable HTTP endpoint "
                    "(http:// or https://) instead of a command; see "
                    "docs/MCP.md");
  CLI::Option* header = c.app->add_option(
      "--header", args->headers,
      "with --url: a request header 'Name: value' (repeatable; "
      "${VAR} in the value is read from the environment; values "
      "are never logged)");
  CLI::Option* ca_file =
      c.app
          ->add_option("--ca-file", args->ca_file,
                       "with --url: extra CA bundle (PEM) trusted besides the "
                       "system's")
          ->check(CLI::ExistingFile);
  CLI::Option* timeout =
      c.app
          ->add_option(
              "--timeout", args->timeout_seconds,
              "with --url: seconds to wait for a response to start and "
              "between its pieces (default 300)")
          ->check(CLI::Range(0.001, 86400.0));
  CLI::Option* no_get_stream =
      c.app->add_flag("--no-get-stream", args->no_get_stream,
                      "with --url: do not open the GET event stream for "
                      "server-initiated messages");
  c.app->add_flag(
      "--share-across-credentials", args->share_across_credentials,
      "share cached entries with proxies whose server credentials differ "
      "(--header values, the URL's path and query, secret-looking "
      "environment variables and arguments); default: one scope per "
      "credential (docs/MCP.md)");
  CLI::Option* credential_env = c.app->add_option(
      "--credential-env", args->credential_env,
      "a stdio server's environment variable that is a credential whatever "
      "its name (repeatable; e.g. a wrapped server's env block)");
  // One name per occurrence, so `--credential-env X -- cmd` ends here.
  credential_env->allow_extra_args(false);
  c.app->add_flag("--no-cache", args->no_cache,
                  "forward everything untouched (no caching)");
  c.app->add_option("command", args->command,
                    "the server command and its arguments (after --)");
  c.run = [args, max_buffered, credential_env, header, ca_file, timeout,
           no_get_stream] {
    if (max_buffered->count() > 0)
      args->stdio_only_given = "--max-buffered-bytes";
    if (credential_env->count() > 0)
      args->stdio_only_given = "--credential-env";
    for (CLI::Option* o : {header, ca_file, timeout, no_get_stream}) {
      if (o->count() > 0) {
        args->url_only_given = o->get_name();
        break;
      }
    }
    return Run(*args);
  };
  return c;
}

}  // namespace toolcache::cli
