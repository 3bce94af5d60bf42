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
#include "toolcache/config.h"
#include "toolcache/mcp_proxy.h"
#include "toolcache/store.h"
#include "toolcache/tool_cache.h"

namespace toolcache::cli {
namespace {

struct McpArgs {
  std::string config_path;
  std::string name;
  std::string scope;
  std::string stats_path;
  std::string store;
  std::string log_level;
  double grace_seconds = 2.0;
  uint64_t max_line_bytes = uint64_t{64} << 20;
  uint64_t max_buffered_bytes = uint64_t{16} << 20;
  bool no_cache = false;
  std::vector<std::string> command;
};

int Run(const McpArgs& a) {
  // Logs go to stderr only: stdout is the JSON-RPC channel. Choice: "warn"
  // by default so a proxied server's stderr stays readable; bypasses are
  // logged at info (TOOLCACHE_LOG=info or --log-level info).
  SetUpLogging("toolcache", a.log_level, "warn");
  if (a.command.empty()) {
    std::cerr << "toolcache mcp: no server command; usage: toolcache mcp "
                 "[--config FILE] -- <command> [args...]\n";
    return kExitUsage;
  }
  Config config;
  if (!a.config_path.empty()) {
    Result<Config> loaded = LoadConfigFile(a.config_path);
    if (!loaded.ok()) {
      std::cerr << "toolcache mcp: " << loaded.status().message() << "\n";
      return kExitUsage;
    }
    config = std::move(*loaded);
  }
  if (!a.store.empty()) config.store = a.store;
  SystemClock clock;
  std::unique_ptr<Store> store;
  std::unique_ptr<ToolCache> cache;
  if (!a.no_cache && config.store != "memory") {
    // Choice: `memory` is the in-process cache alone (no second copy).
    if (!OpenConfiguredStore("toolcache mcp", config, !a.store.empty(),
                             &store)) {
      return kExitUsage;
    }
  }
  if (!a.no_cache) {
    Result<std::unique_ptr<ToolCache>> made =
        NewToolCache(config, &clock, store.get());
    if (!made.ok()) {
      // The message names the file and line itself ("c.yaml:3: ...").
      std::cerr << "toolcache mcp: " << made.status().message() << "\n";
      return kExitUsage;
    }
    cache = std::move(*made);
  }
  McpProxyOptions o;
  o.command = a.command;
  o.server_name = a.name;
  o.scope = a.scope;
  o.cache = cache.get();
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
      "Run a stdio MCP server behind a transparent caching proxy: "
      "toolcache mcp [options] -- <command> [args...]");
  c.app->add_option("--config", args->config_path, "YAML configuration file")
      ->check(CLI::ExistingFile);
  c.app->add_option(
      "--name", args->name,
      "server identity in cache keys (default: the command line)");
  c.app->add_option("--scope", args->scope,
                    "sharing scope of cached entries (default: global)");
  c.app->add_option(
      "--store", args->store,
      "where results are kept besides this process (overrides the config's "
      "`store`): memory (default), sqlite:PATH, redis://HOST:PORT[/DB]; see "
      "docs/STORE.md");
  c.app->add_option("--stats", args->stats_path,
                    "write JSON statistics to FILE on exit and on SIGUSR1");
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
  c.app
      ->add_option("--max-buffered-bytes", args->max_buffered_bytes,
                   "bytes queued for a peer that is not reading before the "
                   "proxy stops reading its counterpart (default 16 MiB)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 34));
  c.app->add_flag("--no-cache", args->no_cache,
                  "forward everything untouched (no caching)");
  c.app->add_option("command", args->command,
                    "the server command and its arguments (after --)");
  c.run = [args] { return Run(*args); };
  return c;
}

}  // namespace toolcache::cli
