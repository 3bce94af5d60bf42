// Observer: the observation mode (docs/PROXY.md "Observation") for the LLM API
// face, free of I/O.
//
// The proxy hands it every parsed request and the tool calls of every
// response; it translates them into the engine's observation calls
// (ToolCache::Record and ToolCache::Peek) and never decides cacheability,
// keys or storage itself:
//   request:  each tool result in the newest client turn, paired with its
//             tool call (from the history, or remembered from the response
//             that asked for it when the history does not carry it, e.g.
//             Responses' previous_response_id) -> Record(call, result) with
//             the result normalized to an MCP CallToolResult, is_error
//             honoured, and latency = time since that response ended.
//   response: each tool call the model asks for -> Peek (would it hit?),
//             and remembered (scope, id) -> call for the result to come.
// A result already recorded (a retried request, an older turn) is never
// recorded twice, and a client's own stub or truncation notice
// (ClientMarkerOf) is never recorded at all. Agent shell tools are keyed
// without their cosmetic fields (KeyArguments). The request's tool list teaches
// the cache the tools' descriptions and schemas (LearnTools), once per change.
//
// Tool names: `mcp__<server>__<tool>` is the MCP proxy's <server>/<tool>
// (so both faces build the same key); any other name is a tool of the
// client, server `client_server`.
//
// Thread-safety: thread-safe (one mutex around the pending-call table; the
// cache and the metrics are thread-safe themselves). Ownership: borrows the
// cache, clock and registry, which must outlive it.
//
// Example:
//   Observer obs(cache.get(), &clock, &registry, {});
//   RequestReport rq = obs.OnRequest(parsed, body, scope);
//   ResponseReport rs = obs.OnResponse(parsed.api, response.tool_uses, scope);
//   headers.push_back({"x-toolcache-would-hit", std::to_string(rs.would_hit)});
#ifndef TOOLCACHE_SRC_LLM_OBSERVER_H_
#define TOOLCACHE_SRC_LLM_OBSERVER_H_

#include <cstdint>
#include <list>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "src/llm/agent_tools.h"
#include "src/llm/wire.h"
#include "src/metrics/metrics.h"
#include "toolcache/clock.h"
#include "toolcache/tool_cache.h"

namespace toolcache::llm {

struct ObserverOptions {
  // Server identity of tools that are not `mcp__<server>__<tool>`.
  std::string client_server = "llm";
  // Tool calls seen in responses are remembered this long (for latency and
  // for results whose call is not in the request) ...
  double pending_ttl_seconds = 3600;
  // ... and at most this many (oldest forgotten first). Choice: 65536.
  size_t max_pending = 65536;
  // Teach the cache each request's tool definitions (LearnTools).
  bool learn_tools = true;
};

struct RequestReport {
  uint32_t results = 0;         // tool results in the newest turn
  uint32_t recorded = 0;        // stored now (new pairs)
  uint32_t already_cached = 0;  // an equal result was stored
  uint32_t stale = 0;           // a different result was stored (replaced)
  uint32_t bypassed = 0;        // not cacheable (writes invalidate)
  uint32_t errors = 0;          // is_error results (never stored)
  uint32_t not_admitted = 0;    // cacheable, the policy declined
  uint32_t unpaired = 0;        // no tool call found for the result
  uint32_t duplicates = 0;      // recorded before (retry / older turn)
  // A client's stub or truncation notice in place of the result (Claude
  // Code's "File unchanged since last read", Codex's "Total output
  // lines: ..."; agent_tools.h): never recorded, never stale.
  uint32_t client_markers = 0;
};

struct WouldHit {
  std::string tool;
  std::string key;  // the first 16 hex digits of the key digest
  double age_seconds = 0;
};

struct ResponseReport {
  uint32_t observed_calls = 0;
  uint32_t would_hit = 0;
  std::vector<WouldHit> hits;
};

class Observer {
 public:
  Observer(ToolCache* cache, const Clock* clock, metrics::Registry* registry,
           ObserverOptions options);

  RequestReport OnRequest(const ParsedRequest& request, std::string_view body,
                          const ToolScopes& scope);
  ResponseReport OnResponse(Api api, std::span<const ToolUse> calls,
                            const ToolScopes& scope);

  // (server, tool) of a tool name as the model sees it.
  std::pair<std::string_view, std::string_view> Route(
      std::string_view name) const;

  size_t pending() const;

 private:
  struct Pending {
    std::string name;
    std::string arguments;
    double asked_at = 0;
    bool recorded = false;
    // What was recorded (when recorded): the call's name and arguments as
    // the request gave them and the result's size. A result under the same
    // id that differs in any of them answers another call (an id reused by
    // the provider, in a conversation whose response this process did not
    // see), not a retry.
    std::string recorded_name;
    std::string recorded_arguments;
    size_t recorded_size = 0;
  };
  using PendingList = std::list<std::pair<std::string, Pending>>;

  void LearnTools(const ParsedRequest& request, std::string_view body);
  void ExpireLocked(double now);
  Pending* FindLocked(const std::string& key);
  void RememberLocked(std::string key, Pending p);

  ToolCache* cache_;
  const Clock* clock_;
  ObserverOptions options_;
  metrics::CounterFamily* results_;
  metrics::CounterFamily* calls_;
  metrics::CounterFamily* bypasses_;
  metrics::HistogramFamily* tool_latency_;

  mutable std::mutex mu_;
  // GUARDED_BY(mu_): pending calls by scope + '\0' + id, oldest first.
  PendingList order_;
  std::unordered_map<std::string, PendingList::iterator> by_key_;
  // GUARDED_BY(mu_): hash of the last tool list learned per server.
  std::unordered_map<std::string, uint64_t> learned_;
};

}  // namespace toolcache::llm

#endif  // TOOLCACHE_SRC_LLM_OBSERVER_H_
