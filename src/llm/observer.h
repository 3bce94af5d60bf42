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
//             and remembered (principal, id) -> call for the result to come.
// A result already recorded (a retried request, an older turn) is never
// recorded twice, and a client's own stub or truncation notice
// (ClientMarkerOf) is never recorded at all. Agent shell tools are keyed
// without their cosmetic fields (KeyArguments).
//
// The table of remembered calls (session 19), by principal
// (ToolScopes::principal, the credential's scope). It holds only what the
// provider answered under that credential: the calls of a response
// (OnResponse, called for 2xx answers only), and the calls of results a
// request recorded without an entry (a proxy restart): at once for a
// principal that holds entries (so a retry after a 429 is still recorded
// once), else once the provider accepted that request (OnAccepted, after
// its 2xx head), never on a request's word alone: a made-up key adds
// nothing. When it is full, the principal holding the most entries (the
// new one's counted) gives up its oldest; among equals, the one whose
// oldest entry is oldest. So a principal never loses an entry to another's
// while it holds fewer than max_pending / (principals holding entries),
// and a single principal's flood evicts only its own.
//
// Tool definitions. The tools a request declares are its principal's claim
// (the principal: the request's credential scope, and its workspace when
// known; ToolScopes): they are kept per principal and decide only that
// principal's verdicts (ToolCall::definition), never another's: the cache's
// shared table (ToolCache::LearnTools) is not taught. A request without a
// `tools` list (OpenAI Chat allows it) is judged by its own principal's last
// declared list; a principal that declared none is judged by the name
// alone. The tables are bounded (max_tool_principals principals and
// max_tool_bytes of definitions, least recently used dropped first), so a
// flood of keys exhausts nothing.
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
#include <memory>
#include <mutex>
#include <set>
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
  // ... and at most this many; when full, the oldest entry of the
  // principal holding the most goes first (a fair share each: the table's
  // head comment). Choice: 65536.
  size_t max_pending = 65536;
  // Keep each request's tool definitions for its principal's calls.
  bool learn_tools = true;
  // At most this many principals' tool tables and this many bytes of
  // definitions (names, descriptions, schemas) in all; the least recently
  // used principal's table goes first. Choice: 1024 principals and 64 MiB:
  // a proxy serves a team, not the internet; a principal dropped is judged
  // by tool names until its next request with tools.
  size_t max_tool_principals = 1024;
  size_t max_tool_bytes = 64u << 20;
};

// A result a request recorded whose call the table did not hold (the proxy
// restarted since the response, or the call came from the history alone):
// remembered as recorded, so a retry of the request is not recorded again
// (after a write in between that would store what the write replaced), but
// for a principal holding no entries only once the provider accepts the
// request (Observer::OnAccepted).
struct RecordedCall {
  std::string principal;  // ToolScopes::principal
  std::string id;
  std::string name;
  std::string arguments;
  size_t size = 0;  // the result's bytes as the request gave them
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
  // For OnAccepted, when the provider answers the request 2xx.
  std::vector<RecordedCall> to_remember;
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
  // REQUIRES: the provider answered the request 2xx (a made-up key's
  // request adds nothing to the table).
  ResponseReport OnResponse(Api api, std::span<const ToolUse> calls,
                            const ToolScopes& scope);
  // The provider accepted a request (a 2xx head): remember the calls of
  // the results it recorded without an entry (RequestReport::to_remember),
  // as recorded. An entry that exists by now is left as it is.
  void OnAccepted(std::vector<RecordedCall> calls);

  // (server, tool) of a tool name as the model sees it.
  std::pair<std::string_view, std::string_view> Route(
      std::string_view name) const;
  // The definition of `server`'s `tool` (the key's tool name, KeyCall) as
  // the principal of `scopes` last declared it; nullptr when it declared
  // none. The ToolCall::definition of that principal's calls.
  std::shared_ptr<const ToolInfo> Definition(const ToolScopes& scopes,
                                             std::string_view server,
                                             std::string_view tool) const;

  size_t pending() const;
  // The entries `principal` (ToolScopes::principal) holds, and whether
  // one of them is call `id`'s.
  size_t pending_of(std::string_view principal) const;
  bool remembers(std::string_view principal, std::string_view id) const;
  // Principals whose tool definitions are kept, and their bytes.
  size_t tool_principals() const;
  size_t tool_bytes() const;

 private:
  struct Owner;
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
    // The principal whose share the entry counts in.
    Owner* owner = nullptr;
  };
  using PendingList = std::list<std::pair<std::string, Pending>>;
  // One principal's entries, oldest first, and its place in ranks_.
  struct Owner {
    const std::string* name = nullptr;  // the key in owners_
    std::list<PendingList::iterator> entries;
  };
  struct Slot {
    PendingList::iterator entry;
    std::list<PendingList::iterator>::iterator in_owner;
  };
  // Most entries first, then the oldest entry first, then by name.
  struct Rank {
    size_t count;
    double oldest;
    const std::string* name;
    bool operator<(const Rank& o) const {
      if (count != o.count) return count > o.count;
      if (oldest != o.oldest) return oldest < o.oldest;
      return *name < *o.name;
    }
  };
  // One principal's declared tools: server -> tool -> definition, and the
  // hash of the list each server's definitions came from (relearn only on
  // change).
  struct ToolTable {
    std::unordered_map<
        std::string,
        std::unordered_map<std::string, std::shared_ptr<const ToolInfo>>>
        servers;
    std::unordered_map<std::string, uint64_t> hashes;
    size_t bytes = 0;
  };
  using TableList = std::list<std::pair<std::string, ToolTable>>;

  void LearnTools(const ParsedRequest& request, std::string_view body,
                  const ToolScopes& scopes);
  static std::string PrincipalOf(const ToolScopes& scopes);
  void ExpireLocked(double now);
  Pending* FindLocked(const std::string& key);
  void RememberLocked(std::string key, Pending p, const std::string& principal);
  void EraseLocked(std::unordered_map<std::string, Slot>::iterator it);
  static Rank RankOf(const Owner& o);
  static Pending PendingOf(RecordedCall c, double now);

  ToolCache* cache_;
  const Clock* clock_;
  ObserverOptions options_;
  metrics::CounterFamily* results_;
  metrics::CounterFamily* calls_;
  metrics::CounterFamily* bypasses_;
  metrics::HistogramFamily* tool_latency_;

  mutable std::mutex mu_;
  // GUARDED_BY(mu_): pending calls by principal + '\0' + id, oldest first;
  // each principal's, and the principals by their share.
  PendingList order_;
  std::unordered_map<std::string, Slot> by_key_;
  std::unordered_map<std::string, Owner> owners_;
  std::set<Rank> ranks_;
  // GUARDED_BY(mu_): each principal's declared tools, most recently used
  // first, indexed by principal; tool_bytes_ sums their bytes.
  TableList tables_;
  std::unordered_map<std::string, TableList::iterator> table_of_;
  size_t tool_bytes_ = 0;
};

}  // namespace toolcache::llm

#endif  // TOOLCACHE_SRC_LLM_OBSERVER_H_
