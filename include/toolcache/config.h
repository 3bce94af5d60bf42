// Config: the one configuration model shared by every face (MCP proxy,
// simulator, later the LLM proxy), loaded from YAML.
//
// A Config is a plain value: capacity and policy for the cache, TTL rules,
// the operator's exclusion list (which extends, never shrinks, the built-in
// side-effect list of classifier.h), per-tool features, trust of MCP
// annotations, invalidation and sharing scope, and per-server overrides.
// Every key, its default and its trade-off are documented in docs/CONFIG.md.
//
// Loading never throws: unknown or duplicated keys and bad values come back
// as an INVALID_ARGUMENT Status naming the file, the line and a hint, e.g.
//   config.yaml:7: unknown key 'perTooTtl' (did you mean 'perToolTtl'?)
// The policy name and its knobs are checked against the policy registry by
// CheckPolicyConfig (called where the cache is built), with the same form.
//
// Thread-safety: plain values; copy freely. Ownership: none.
//
// Example:
//   Result<Config> cfg = LoadConfigFile("toolcache.yaml");
//   if (!cfg.ok()) { std::cerr << cfg.status().message() << "\n"; return 2; }
//   Classifier classifier(*cfg);
//   uint64_t bytes = cfg->capacity_bytes;
#ifndef TOOLCACHE_CONFIG_H_
#define TOOLCACHE_CONFIG_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "toolcache/policy.h"
#include "toolcache/status.h"
#include "toolcache/verdict.h"

namespace toolcache {

// What a non-read-only call invalidates (MCP proxy).
enum class InvalidationScope {
  kServer,    // every cached entry of that server (safe default)
  kResource,  // only entries sharing a resource argument (same path, uri...)
};

// Who may share a cached entry.
enum class SharingScope {
  kGlobal,  // every caller of the same server/tool/arguments
  kUser,    // only the same user (tenant) identity
};

// Operator-declared features of one tool. Unset fields fall through to the
// next classification layer (annotations, heuristic).
struct ToolConfig {
  std::optional<RequestType> request_type;
  std::optional<double> ttl_seconds;
  // Argument name used as the paper's parameter category ("" = none).
  std::optional<std::string> parameter_category;
  // Price of one call of the tool (e.g. USD), the policy's cost feature
  // (request_features.h). Unset: 0.
  std::optional<double> cost;
};

using ToolConfigMap = std::map<std::string, ToolConfig, std::less<>>;
using TtlMap = std::map<std::string, double, std::less<>>;

// Overrides for the tools of one named server (the MCP proxy's --name, or the
// server key of a wrapped mcpServers file). Unset fields use the global ones;
// lists extend the global ones.
struct ServerConfig {
  std::optional<bool> trust_annotations;
  // Default TTL for this server's tools; counts as an operator TTL (so it
  // makes read-only open-world tools cacheable).
  std::optional<double> ttl_seconds;
  std::vector<std::string> exclude_tools;
  TtlMap per_tool_ttl;
  ToolConfigMap tools;
  // A remote Streamable HTTP server (`toolcache mcp --name <name>` with no
  // command, docs/MCP.md): its URL and request headers {name, value} in file
  // order; ${VAR} in a value is read from the environment when the proxy
  // starts, so the file need not hold the secret.
  std::optional<std::string> url;
  std::vector<std::pair<std::string, std::string>> headers;
  // `command: [argv...]`: how to start this stdio server. `toolcache serve`
  // serves every server with a command at /mcp/<name> (docs/SERVE.md).
  std::vector<std::string> command;
  // Who may share this server's entries (`scope:`); unset = the global
  // `scope`. `user` for a server whose results depend on who asks.
  std::optional<SharingScope> scope;
  // `shareAcrossCredentials: true`: `toolcache mcp` shares this server's
  // entries between processes whose credentials differ (headers, the URL's
  // query, secret-looking environment variables). Default false: each
  // credential is its own principal (include/toolcache/scope.h).
  bool share_across_credentials = false;
  // `credentialEnv: [NAME...]`: environment variables that are credentials
  // of this stdio server whatever their names (a wrapped server's env
  // block); their values join the principal's digest.
  std::vector<std::string> credential_env;
};

// The LLM API proxy's block (`proxy:`): where it forwards and who shares
// entries. Unset fields keep the defaults of llm_proxy.h; command-line
// flags override them.
struct ProxyConfig {
  // Upstream origins: both providers, or one each.
  std::optional<std::string> upstream;
  std::optional<std::string> anthropic_upstream;
  std::optional<std::string> openai_upstream;
  // "credential" (default: one scope per API key hash) or "global".
  std::optional<std::string> scope;
  // Server identity of the client's own tools (not mcp__<server>__<tool>).
  std::optional<std::string> client_name;
  std::optional<uint64_t> max_body_bytes;
  std::optional<uint64_t> max_depth;
  std::optional<double> response_timeout_seconds;
  std::optional<std::string> ca_file;
  // Seconds requests in flight get to finish on SIGTERM (default 10).
  std::optional<double> drain_timeout_seconds;
  // The server-side tool loop (docs/PROXY_SERVE.md): `serve: true` serves every
  // cacheable tool, `serve: [Read, Grep]` those tools.
  std::optional<bool> serve;
  std::vector<std::string> serve_tools;
  std::optional<uint64_t> serve_max_rounds;
  std::optional<double> conversation_ttl_seconds;
  // Offload oversized tool results (docs/PROXY_SERVE.md "Offload") above this
  // many tokens.
  std::optional<bool> offload;
  std::optional<uint64_t> offload_tokens;
  // The browser-origin defence (src/http/browser_guard.h): Host names and
  // browser Origins answered besides the loopback ones ("*" any).
  std::vector<std::string> allowed_hosts;
  std::vector<std::string> allowed_origins;
  // proxy.credentialHeaders: request headers that join the caller's
  // principal besides those whose name looks like a credential's.
  std::vector<std::string> credential_headers;
  // proxy.adminTokenEnv: the environment variable holding the operator's
  // token for /metrics and /toolcache/stats (docs/CONFIG.md). Unset: the
  // --admin-token-env flag, else TOOLCACHE_ADMIN_TOKEN, else none.
  std::optional<std::string> admin_token_env;
  int32_t admin_token_env_line = 0;  // file line, for errors
  // proxy.credentialQuery: request query parameters that join the caller's
  // principal besides those whose name looks like a credential's.
  std::vector<std::string> credential_query;
};

// The optional LLM feature extractor (`classifier.llm`, docs/CONFIG.md,
// docs/CLASSIFY.md "The LLM feature extractor"): one call per new tool
// definition to an Anthropic Messages or OpenAI Chat Completions endpoint,
// asking for the paper's Table 2 features. Off unless `url` is set.
struct LlmExtractorConfig {
  // The provider's origin ("https://api.anthropic.com", a local fake); the
  // API path is appended ("/v1/messages" or "/v1/chat/completions").
  std::string url;
  // "anthropic" (default) or "openai".
  std::string api = "anthropic";
  std::string model;
  // Environment variable holding the API key ("" = send none).
  std::string api_key_env;
  // false (default): the answer may only make a verdict more conservative
  // (INFORMATIONAL -> COMMAND, a shorter TTL). true: an INFORMATIONAL
  // answer may also outrank the heuristic's weak evidence, as a trusted
  // annotation does (hard vetoes and the learned veto still win).
  bool may_relax = false;
  // A call that has not answered within this long is abandoned: the
  // heuristic's verdict stands. Choice: 10 s (one call per tool, ever).
  double timeout_seconds = 10;
  int32_t line = 0;  // file line, for errors
};

// The classifier's block (`classifier:`).
struct ClassifierConfig {
  std::optional<LlmExtractorConfig> llm;
};

// One tenant of `toolcache serve` (`serve.tenants.<name>`): callers that
// present its bearer token share entries with each other and with no one
// else (the tenant name is the cache scope).
struct ServeTenant {
  std::string name;
  std::string token;      // `token:` (literal), or
  std::string token_env;  // `tokenEnv:` (read when the server starts)
  int32_t line = 0;       // file line, for errors
};

// The cache server's block (`serve:`, `toolcache serve`). Unset fields keep
// the defaults of serve.h; command-line flags override them.
struct ServeConfig {
  std::optional<std::string> listen;  // "HOST:PORT"
  // No tenants: no authentication, one global scope (loopback use).
  std::vector<ServeTenant> tenants;
  // Longest a coalesced `begin` waits for its leader, and how long a
  // `begin` ticket may stay open before the server ends it.
  std::optional<double> max_wait_seconds;
  std::optional<double> lease_seconds;
  // Most tickets one tenant may hold open (serve.maxOpenTickets).
  std::optional<uint64_t> max_open_tickets;
  // Allowed Origin values for browser requests ("*" any).
  std::vector<std::string> allowed_origins;
  // Host names answered besides IP literals, localhost and the listen
  // address ("*" any; DNS-rebinding defence).
  std::vector<std::string> allowed_hosts;
  // serve.adminTokenEnv: the environment variable holding the operator's
  // token for /metrics and /toolcache/stats (docs/CONFIG.md).
  std::optional<std::string> admin_token_env;
  int32_t admin_token_env_line = 0;  // file line, for errors
};

// The LLM API proxy's prompt-cache block (`promptCache:`, issue 14,
// docs/PROMPT_CACHE.md). Unset fields keep the defaults of PromptCacheOptions
// (prompt_cache.h): every switch off.
struct PromptCacheConfig {
  std::optional<bool> stabilize_tools;
  std::optional<bool> place_cache_control;
  std::optional<bool> cache_system;
  std::optional<bool> cache_last_turn;
  std::optional<std::string> ttl;  // "5m" or "1h"
  std::optional<uint64_t> min_cacheable_tokens;
  std::optional<bool> detect_breaks;
  std::optional<uint64_t> break_min_tokens;
  std::optional<double> break_min_fraction;
  std::optional<double> ttl_seconds;
  std::optional<uint64_t> keep_breaks;
  std::optional<uint64_t> max_conversations;
};

struct Config {
  // Cache capacity in bytes (YAML: integer or "64MiB", "500KB", ...); must
  // be > 0 (to forward without caching, run the proxy with --no-cache).
  uint64_t capacity_bytes = 64ull << 20;
  // Maximum number of entries; 0 = unlimited.
  uint64_t max_entries = 0;
  // Policy name from the registry in policy.h (validated where the policy is
  // built; `policy_line` lets that error point at the file line).
  std::string policy = "vaac";
  int32_t policy_line = 0;
  // Policy-specific knobs (e.g. lambda1), passed to PolicyParams::knobs.
  std::map<std::string, double, std::less<>> policy_params;
  // File line of each knob in policy_params (absent: not from a file).
  std::map<std::string, int32_t, std::less<>> policy_param_lines;
  // TTL of a cacheable INFORMATIONAL call when no better source (per-tool
  // setting, server setting, heuristic TTL category) gives one.
  double ttl_seconds = 300;
  // Paper rule (section 5.2): TTL <= this is not cacheable. 0 disables the
  // rule (a TTL of 0 is still never cacheable).
  double min_cacheable_ttl_seconds = 60;
  // Tool names never cached, in addition to the built-in hard list.
  std::vector<std::string> exclude_tools;
  // Per-tool TTL overrides (the seed module's `perToolTtl`).
  TtlMap per_tool_ttl;
  // false: MCP tool annotations are ignored for every server.
  bool trust_annotations = true;
  InvalidationScope invalidation = InvalidationScope::kServer;
  SharingScope scope = SharingScope::kGlobal;
  // Per-tool features (request type, TTL, parameter category).
  ToolConfigMap tools;
  // Per-server overrides, by server name.
  std::map<std::string, ServerConfig, std::less<>> servers;
  // Where results are kept under the in-process cache (store.h, docs/
  // STORE.md): "memory" (the in-process cache alone), "sqlite:PATH" or
  // "redis://HOST:PORT[/DB]", with optional "?param=value" settings.
  // `toolcache mcp --store` overrides it. `store_line`: its file line.
  std::string store = "memory";
  int32_t store_line = 0;
  // The LLM API proxy (`toolcache proxy`).
  ProxyConfig proxy;
  // The cache server (`toolcache serve`).
  ServeConfig serve;
  // Its prompt-cache stage (`promptCache:`).
  PromptCacheConfig prompt_cache;
  // The classifier's optional layers (`classifier:`).
  ClassifierConfig classifier;
  // Where the configuration came from ("<defaults>" or the file name).
  std::string source = "<defaults>";
};

// Parses YAML `text`; `source_name` prefixes error messages
// ("config.yaml:7: ..."). An empty document yields the defaults. A top-level
// `tool-cache:` (or `toolCache:`) wrapper, as in the seed module's example,
// is accepted and unwrapped.
[[nodiscard]] Result<Config> ParseConfig(std::string_view text,
                                         std::string_view source_name);

// Reads and parses the file at `path`. NOT_FOUND if it cannot be read.
[[nodiscard]] Result<Config> LoadConfigFile(const std::string& path);

// Checks config.policy and config.policy_params against the registry rows
// `policies` (Policies() of policy.h): the name must exist (and, with
// `online_only`, be an online policy: belady and infinite are simulator
// limits), every knob must be one the row lists. INVALID_ARGUMENT
// "<source>:<line>: ..." with the closest known name as a hint.
[[nodiscard]] Status CheckPolicyConfig(const Config& config,
                                       std::span<const PolicyInfo> policies,
                                       bool online_only);

// "server" / "resource", "global" / "user" (the YAML spellings).
std::string_view InvalidationScopeName(InvalidationScope scope);
std::string_view SharingScopeName(SharingScope scope);

}  // namespace toolcache

#endif  // TOOLCACHE_CONFIG_H_
