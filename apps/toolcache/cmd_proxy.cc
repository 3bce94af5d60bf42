// `toolcache proxy --listen 127.0.0.1:PORT [--upstream URL] [--config F]`:
// the LLM API face (include/toolcache/llm_proxy.h). The CLI only parses,
// merges the configuration's `proxy:` block with the flags (flags win),
// builds the cache and runs the proxy.
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "apps/toolcache/commands.h"
#include "src/runtime/startup/engine.h"
#include "toolcache/classifier.h"
#include "toolcache/config.h"
#include "toolcache/llm_proxy.h"
#include "toolcache/store.h"
#include "toolcache/tool_cache.h"

namespace toolcache::cli {
namespace {

struct ProxyArgs {
  std::string listen = "127.0.0.1:8080";
  std::string config_path;
  std::string upstream;
  std::string anthropic_upstream;
  std::string openai_upstream;
  std::string scope;
  std::string client_name;
  std::string stats_path;
  std::string log_level;
  std::string ca_file;
  std::string store;
  std::string admin_token_env;
  int threads = 2;
  double drain_timeout = -1;  // unset: the config's, else 10 s
  bool no_cache = false;
  bool serve = false;
  bool offload = false;
};

int Run(const ProxyArgs& a) {
  // Choice: "info" by default: one line per request with tool traffic says
  // what was observed (never a credential or a payload).
  SetUpLogging("toolcache proxy", a.log_level, "info");
  Config config;
  if (!a.config_path.empty()) {
    Result<Config> loaded = LoadConfigFile(a.config_path);
    if (!loaded.ok()) {
      std::cerr << "toolcache proxy: " << loaded.status().message() << "\n";
      return kExitUsage;
    }
    config = std::move(*loaded);
  }
  LlmProxyOptions o;
  if (!ParseListenAddress(a.listen, &o.listen_host, &o.listen_port)) {
    std::cerr << "toolcache proxy: --listen must be HOST:PORT, got '"
              << a.listen << "'\n";
    return kExitUsage;
  }
  const ProxyConfig& pc = config.proxy;
  if (pc.upstream) o.anthropic_upstream = o.openai_upstream = *pc.upstream;
  if (pc.anthropic_upstream) o.anthropic_upstream = *pc.anthropic_upstream;
  if (pc.openai_upstream) o.openai_upstream = *pc.openai_upstream;
  if (pc.scope) {
    o.scope = *pc.scope == "global" ? CredentialScope::kGlobal
                                    : CredentialScope::kCredential;
  }
  if (pc.client_name) o.client_server = *pc.client_name;
  if (pc.max_body_bytes) o.max_body_bytes = *pc.max_body_bytes;
  if (pc.max_depth) o.max_depth = static_cast<uint32_t>(*pc.max_depth);
  if (pc.response_timeout_seconds) {
    o.response_timeout_seconds = *pc.response_timeout_seconds;
  }
  if (pc.ca_file) o.ca_file = *pc.ca_file;
  o.allowed_hosts = pc.allowed_hosts;
  o.allowed_origins = pc.allowed_origins;
  o.credential_headers = pc.credential_headers;
  o.credential_query = pc.credential_query;
  if (pc.drain_timeout_seconds) {
    o.drain_timeout_seconds = *pc.drain_timeout_seconds;
  }
  if (pc.serve) o.serve.all_tools = *pc.serve;
  o.serve.tools = pc.serve_tools;
  if (pc.serve_max_rounds) {
    o.serve.max_rounds = static_cast<uint32_t>(*pc.serve_max_rounds);
  }
  if (pc.conversation_ttl_seconds) {
    o.serve.state_ttl_seconds = *pc.conversation_ttl_seconds;
  }
  if (a.serve) o.serve.all_tools = true;
  if (pc.offload) o.serve.offload = *pc.offload;
  if (pc.offload_tokens) o.serve.offload_tokens = *pc.offload_tokens;
  if (a.offload) o.serve.offload = true;
  const PromptCacheConfig& pcc = config.prompt_cache;
  PromptCacheOptions& po = o.prompt_cache;
  po.stabilize_tools = pcc.stabilize_tools.value_or(po.stabilize_tools);
  po.place_cache_control =
      pcc.place_cache_control.value_or(po.place_cache_control);
  po.cache_system = pcc.cache_system.value_or(po.cache_system);
  po.cache_last_turn = pcc.cache_last_turn.value_or(po.cache_last_turn);
  po.detect_breaks = pcc.detect_breaks.value_or(po.detect_breaks);
  if (pcc.ttl) po.ttl = *pcc.ttl == "1h" ? "1h" : "";
  po.min_cacheable_tokens =
      pcc.min_cacheable_tokens.value_or(po.min_cacheable_tokens);
  if (pcc.break_min_tokens) {
    po.break_min_tokens = static_cast<int64_t>(*pcc.break_min_tokens);
  }
  po.break_min_fraction =
      pcc.break_min_fraction.value_or(po.break_min_fraction);
  po.ttl_seconds = pcc.ttl_seconds.value_or(po.ttl_seconds);
  if (pcc.keep_breaks) po.keep_breaks = static_cast<uint32_t>(*pcc.keep_breaks);
  if (pcc.max_conversations) {
    po.max_conversations = static_cast<uint32_t>(*pcc.max_conversations);
  }
  if (!a.upstream.empty())
    o.anthropic_upstream = o.openai_upstream = a.upstream;
  if (!a.anthropic_upstream.empty())
    o.anthropic_upstream = a.anthropic_upstream;
  if (!a.openai_upstream.empty()) o.openai_upstream = a.openai_upstream;
  if (!a.scope.empty()) {
    o.scope = a.scope == "global" ? CredentialScope::kGlobal
                                  : CredentialScope::kCredential;
  }
  if (!a.client_name.empty()) o.client_server = a.client_name;
  if (!a.ca_file.empty()) o.ca_file = a.ca_file;
  if (a.drain_timeout >= 0) o.drain_timeout_seconds = a.drain_timeout;
  o.threads = a.threads;
  o.stats_path = a.stats_path;
  if (std::string error; !ResolveAdminToken(
          a.admin_token_env, pc.admin_token_env,
          config.source + ":" + std::to_string(pc.admin_token_env_line),
          &o.admin_token, &error)) {
    std::cerr << "toolcache proxy: " << error << "\n";
    return kExitUsage;
  }
  if (o.admin_token.empty() && !IsLoopbackHost(o.listen_host)) {
    spdlog::warn(
        "listening on {} without an admin token: anyone who reaches this "
        "address reads /metrics and /toolcache/stats, which name the tools "
        "every caller's model called (set proxy.adminTokenEnv, "
        "--admin-token-env or TOOLCACHE_ADMIN_TOKEN)",
        o.listen_host);
  }
  // One start-up for every face (src/runtime/startup/engine.h); the store
  // holds the cache's results and the tool loop's conversation state.
  SystemClock clock;
  runtime::EngineOptions eo{.store_flag = a.store, .no_cache = a.no_cache};
  eo.extra_layers.push_back(NewAgentToolLayer(o.client_server));
  Result<runtime::Engine> engine =
      runtime::OpenEngine(config, &clock, std::move(eo));
  if (!engine.ok()) {
    std::cerr << "toolcache proxy: " << engine.status().message() << "\n";
    return kExitUsage;
  }
  o.store = engine->store.get();
  o.cache = engine->cache.get();
  Result<int> code = RunLlmProxy(o, [&](uint16_t port) {
    // One machine-readable line on stdout: scripts wait for it.
    std::cout << "listening on http://" << o.listen_host << ":" << port
              << std::endl;
    spdlog::info(
        "anthropic upstream {}, openai upstream {}, scope {}",
        o.anthropic_upstream, o.openai_upstream,
        o.scope == CredentialScope::kGlobal ? "global" : "per credential");
  });
  return ExitCodeOf("toolcache proxy", code);
}

}  // namespace

Command AddProxyCommand(CLI::App& root) {
  auto args = std::make_shared<ProxyArgs>();
  Command c;
  c.app = root.add_subcommand(
      "proxy",
      "Run the LLM API proxy (Anthropic Messages, OpenAI Chat Completions "
      "and Responses) that observes every tool call: point "
      "ANTHROPIC_BASE_URL / the OpenAI base URL at it");
  c.app->add_option("--listen", args->listen,
                    "HOST:PORT to listen on (default 127.0.0.1:8080; port 0 "
                    "picks a free one, printed on stdout)");
  c.app->add_option("--config", args->config_path, "YAML configuration file")
      ->check(CLI::ExistingFile);
  c.app->add_option("--admin-token-env", args->admin_token_env,
                    "environment variable holding the operator's token: "
                    "GET /metrics and /toolcache/stats then need "
                    "'Authorization: Bearer <token>' (default: "
                    "proxy.adminTokenEnv, else TOOLCACHE_ADMIN_TOKEN, else "
                    "open)");
  c.app->add_option("--upstream", args->upstream,
                    "upstream origin for both providers (e.g. "
                    "http://127.0.0.1:9000)");
  c.app->add_option("--anthropic-upstream", args->anthropic_upstream,
                    "upstream for Anthropic routes (default "
                    "https://api.anthropic.com)");
  c.app->add_option("--openai-upstream", args->openai_upstream,
                    "upstream for OpenAI routes (default "
                    "https://api.openai.com)");
  c.app
      ->add_option("--scope", args->scope,
                   "credential (default: entries per API key) | global")
      ->check(CLI::IsMember({"credential", "global"}));
  c.app->add_option("--client-name", args->client_name,
                    "server identity of the client's own tools (default "
                    "llm)");
  c.app
      ->add_option("--ca-file", args->ca_file,
                   "extra CA bundle (PEM) for TLS upstreams")
      ->check(CLI::ExistingFile);
  c.app
      ->add_option("--drain-timeout", args->drain_timeout,
                   "seconds requests in flight get to finish on SIGTERM "
                   "before the proxy exits (default 10)")
      ->check(CLI::NonNegativeNumber);
  c.app->add_option("--threads", args->threads, "event loops (default 2)")
      ->check(CLI::Range(1, 64));
  c.app->add_option("--stats", args->stats_path,
                    "write JSON statistics to FILE on exit and on SIGUSR1");
  c.app
      ->add_option("--log-level", args->log_level,
                   "trace|debug|info|warn|error|off (default: $TOOLCACHE_LOG "
                   "or info)")
      ->check(CLI::IsMember(
          {"trace", "debug", "info", "warn", "error", "critical", "off"}));
  c.app->add_option(
      "--store", args->store,
      "where results and conversation state are kept besides this process "
      "(overrides the config's `store`): memory (default), sqlite:PATH, "
      "redis://HOST:PORT[/DB]; see docs/STORE.md");
  c.app->add_flag("--serve", args->serve,
                  "answer tool calls that are fresh cache hits in the proxy "
                  "(the config's `proxy.serve`; docs/PROXY_SERVE.md)");
  c.app->add_flag("--offload", args->offload,
                  "replace oversized tool results by previews and answer "
                  "toolcache_read (the config's `proxy.offload`)");
  c.app->add_flag("--no-cache", args->no_cache,
                  "forward everything, observe nothing");
  c.run = [args] { return Run(*args); };
  return c;
}

}  // namespace toolcache::cli
