// The LLM API proxy: `toolcache proxy --listen 127.0.0.1:PORT`.
//
// An HTTP/1.1 gateway that clients reach by changing one base URL
// (ANTHROPIC_BASE_URL, the OpenAI SDK's baseURL). It forwards every request
// to the provider untouched (streams relayed event by event as they
// arrive) and observes every tool call on the way (docs/PROXY.md "Observation":
// the observation mode): the tool results a request carries are recorded into
// the cache, and each tool call a response asks for is checked for a would-hit,
// all through the engine (ToolCache::Record / Peek). Routes:
//   POST /v1/messages              Anthropic Messages (observed)
//   POST /v1/chat/completions      OpenAI Chat Completions (observed)
//   POST /v1/responses             OpenAI Responses (observed)
//   GET  /metrics                  Prometheus text
//   GET  /toolcache/stats          JSON statistics
//   GET  /toolcache/breaks         prompt-cache breaks (prompt_cache.h)
//   anything else                  forwarded untouched (method, path,
//                                  query, headers, body) to the upstream
//                                  of its provider
// Per request it reports x-toolcache-observed-calls, x-toolcache-would-hit
// and x-toolcache-recorded response headers (streams: recorded only; the
// rest is in the log and the statistics). Credentials (x-api-key,
// Authorization) are forwarded and never logged or stored: the cache scope
// is a hash of them unless the configuration shares entries globally.
//
// With `serve` enabled (issue 13, docs/PROXY_SERVE.md) the proxy answers tool
// calls that are fresh cache hits itself, in hidden upstream rounds, and
// splices those rounds back into the client's later requests.
//
// Thread-safety: an LlmProxy is driven by Run() (blocking, N loops) and
// stopped by Stop() from any thread; StatsJson() is thread-safe.
// Ownership: borrows the cache (nullptr = forward only, observe nothing)
// and the store.
//
// Example:
//   LlmProxyOptions o;
//   o.listen_port = 8080;
//   o.anthropic_upstream = "https://api.anthropic.com";
//   o.cache = cache.get();
//   Result<std::unique_ptr<LlmProxy>> p = NewLlmProxy(o);
//   std::thread t([&] { (*p)->Run(); });   // ... (*p)->Stop(); t.join();
#ifndef TOOLCACHE_LLM_PROXY_H_
#define TOOLCACHE_LLM_PROXY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "toolcache/prompt_cache.h"
#include "toolcache/status.h"
#include "toolcache/tool_cache.h"

namespace toolcache {

// Who may share an entry recorded through the LLM proxy.
enum class CredentialScope {
  kCredential,  // one scope per API key (a hash of it): the default
  kGlobal,      // every client (needed to share entries with `toolcache mcp`)
};

class Store;  // store.h

// The server-side tool loop (docs/PROXY_SERVE.md). Off unless all_tools or
// tools.
struct LlmServeOptions {
  // `serve: true`: every cacheable tool that does not run on the client's
  // own machine (MCP tools, declared tools, web search with an operator
  // TTL). Coding agents' local tools (Read, Bash, Edit, apply_patch,
  // exec_command ...) are observed but never served unless named below
  // (issue 28; docs/PROXY_SERVE.md "What is served").
  bool all_tools = false;
  // `serve: [Read, Grep]`: tools served by name, local ones included.
  std::vector<std::string> tools;
  // Upstream calls per client request (the first + hidden rounds).
  uint32_t max_rounds = 8;
  // Conversation state (the hidden turns) lives this long in the store.
  double state_ttl_seconds = 7 * 86400.0;
  // Offload (docs/PROXY_SERVE.md "Offload"): results above offload_tokens
  // (bytes / 4) in the newest turn become previews; the proxy adds and answers
  // toolcache_read.
  bool offload = false;
  uint64_t offload_tokens = 2000;
  bool enabled() const { return all_tools || !tools.empty(); }
};

struct LlmProxyOptions {
  std::string listen_host = "127.0.0.1";
  uint16_t listen_port = 0;  // 0 = any free port (see LlmProxy::port)
  // The browser-origin defence (src/http/browser_guard.h): Host names
  // answered besides IP literals, localhost and the listen address ("*" =
  // any), and browser Origins allowed (empty: the loopback origins; "*" =
  // any). Requests from other hosts or cross-site pages get 403 in the
  // provider's error shape; observed POSTs need a JSON Content-Type (415).
  std::vector<std::string> allowed_hosts;
  std::vector<std::string> allowed_origins;
  // Upstream origins (http or https, with an optional path prefix).
  std::string anthropic_upstream = "https://api.anthropic.com";
  std::string openai_upstream = "https://api.openai.com";
  // The cache (borrowed); nullptr forwards everything and observes nothing.
  ToolCache* cache = nullptr;
  CredentialScope scope = CredentialScope::kCredential;
  // Request headers that join the caller's principal besides those whose
  // name looks like a credential's (LooksLikeCredentialHeader in scope.h),
  // any case: a gateway's own header with an unusual name. Default none.
  // A header named here that varies per request makes every request its
  // own principal (no sharing, no conversation state across requests).
  std::vector<std::string> credential_headers;
  // The operator's token for GET /metrics and GET /toolcache/stats
  // (`Authorization: Bearer <token>`; proxy.adminTokenEnv,
  // --admin-token-env, TOOLCACHE_ADMIN_TOKEN): their series name the tools
  // every caller's model called. "" = none: open to anyone who reaches the
  // port, as before (listen on loopback).
  std::string admin_token;
  // Query parameters that join the caller's principal besides those whose
  // name looks like a credential's (LooksLikeCredentialQuery in scope.h:
  // `key`, `subscription-key`, `api_key`, ...), any case: a gateway that
  // authenticates by a parameter of another name. Default none. The same
  // trade-off as credential_headers.
  std::vector<std::string> credential_query;
  // Server identity of tools that are not `mcp__<server>__<tool>`.
  std::string client_server = "llm";
  // Event loops (threads). Choice: 2, the machine's cores.
  int threads = 2;
  // Requests larger than this get 413 in the provider's error shape.
  uint64_t max_body_bytes = 32ull << 20;
  // JSON nesting deeper than this gets 400 in the provider's error shape.
  uint32_t max_depth = 512;
  // Non-streamed responses up to this size are read whole (to report
  // would-hits in headers); larger ones are relayed unobserved.
  uint64_t max_buffered_response_bytes = 64ull << 20;
  // Upstream timeouts: connect, first response byte, between body reads.
  double connect_timeout_seconds = 10;
  double response_timeout_seconds = 600;
  double idle_timeout_seconds = 600;
  // Extra CA bundle (PEM) for TLS upstreams.
  std::string ca_file;
  // JSON statistics written here on exit and on SIGUSR1 ("" = never).
  std::string stats_path;
  // On SIGTERM / SIGINT / SIGHUP the proxy stops accepting and lets the
  // requests in flight (streams included) finish for up to this long, then
  // exits. Choice: 10 s, longer than most non-thinking turns; a longer
  // value holds a deploy back, a shorter one cuts more streams.
  double drain_timeout_seconds = 10;
  LlmServeOptions serve;
  // Conversation state of the tool loop (borrowed); nullptr = in memory.
  Store* store = nullptr;
  // Prompt-cache engineering (issue 14, docs/PROMPT_CACHE.md): every switch
  // off by default; with one on, observed requests go through a
  // PromptCache (rewritten bodies are sent instead of the client's).
  PromptCacheOptions prompt_cache;
};

class LlmProxy {
 public:
  virtual ~LlmProxy() = default;
  virtual uint16_t port() const = 0;
  // Serves until Stop().
  virtual void Run() = 0;
  virtual void Stop() = 0;
  // Stops accepting, waits until every request in flight has been answered
  // or `timeout_seconds` passed, then Stop(). Blocks; call it from another
  // thread than Run()'s. True when everything in flight finished.
  virtual bool DrainAndStop(double /*timeout_seconds*/) {
    Stop();
    return false;
  }
  // The `GET /toolcache/stats` document.
  virtual std::string StatsJson() const = 0;
};

class FeatureExtractor;  // classifier.h

// The classifier layer that knows coding agents' own tools (Claude Code,
// Codex CLI, Gemini CLI, OpenCode) as tools of `client_server`: reads are
// INFORMATIONAL, edits COMMAND, shell commands by a conservative read-only
// recogniser (cat, ls, grep, git log ... read; anything else writes). Pass
// it to NewToolCache for the proxy's cache.
std::unique_ptr<FeatureExtractor> NewAgentToolLayer(std::string client_server);

// Binds the listening socket. INVALID_ARGUMENT for a bad upstream URL or CA
// file, UNAVAILABLE when the address cannot be bound.
Result<std::unique_ptr<LlmProxy>> NewLlmProxy(const LlmProxyOptions& options);

// NewLlmProxy + Run until SIGTERM / SIGINT / SIGHUP, which drain (see
// drain_timeout_seconds) (SIGUSR1 writes the statistics file). `on_listening`
// is called with the bound port first. Returns the process exit code.
Result<int> RunLlmProxy(const LlmProxyOptions& options,
                        const std::function<void(uint16_t)>& on_listening);

}  // namespace toolcache

#endif  // TOOLCACHE_LLM_PROXY_H_
