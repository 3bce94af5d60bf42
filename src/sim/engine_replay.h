// EngineReplay: a tool-call trace replayed through the engine's own request
// path -- a real ToolCache (the one `toolcache mcp`, `proxy` and `serve`
// run) built from a Config, on a manual clock that follows the trace's time
// -- so what the simulator reports for a configuration (`sim --config`) is
// what that configuration does: the same classifier, keys, scopes, TTLs,
// policy and `invalidation` mode, decided by the same preparation stage
// (src/cache/prepare.h).
//
// Per record, in order: Begin(call) at the record's time;
//   kServe    -> a hit; stale when the trace's result digest differs from
//                the one stored (an answer the server no longer gives);
//   kForward  -> Complete(ticket, the record's result: its digest, its
//                error flag): the engine admits or invalidates as it would.
// The record's ground-truth request type and TTL are NOT used: the engine's
// classifier decides, as in production (a trace's own cacheability is what
// the fast replay of replay.h measures).
//
// Translation of a record into a ToolCall (docs/SIM.md):
//   server = the record's `server`, else EngineReplayOptions::server (one
//            server for every record without one); scope = the record's
//            tenant; user = the record's user, else its session; tool and
//            arguments as given.
//
// Thread-safety: a function; each call owns its ToolCache and clock.
//
// Example:
//   Result<EngineReplayMetrics> m = ReplayThroughEngine(trace, config, {});
//   if (m.ok()) std::cout << m->hits << " hits, " << m->stale_served;
#ifndef TOOLCACHE_SRC_SIM_ENGINE_REPLAY_H_
#define TOOLCACHE_SRC_SIM_ENGINE_REPLAY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "toolcache/config.h"
#include "toolcache/status.h"
#include "toolcache/trace.h"
#include "toolcache/verdict.h"

namespace toolcache::sim {

struct EngineReplayOptions {
  // Choice: the server identity of a record without one (older traces
  // have none); a `servers.<name>` block of the Config applies under it.
  std::string server = "trace";
  // Keep one EngineDecision per record (the agreement test reads them).
  bool keep_decisions = false;
};

// What the engine decided for one record.
struct EngineDecision {
  bool cacheable = false;  // the verdict before the lookup
  VerdictReason reason = VerdictReason::kCacheable;
  std::string bypass_reason;   // CallPlan::bypass_reason ("" = none)
  std::string key_hex;         // the full key's digest ("" = no key)
  std::string key_scope;       // the key's scope
  bool hit = false;            // served from the cache
  bool stale = false;          // served, and the trace's digest differs
  bool admitted = false;       // the result was stored
  uint64_t invalidations = 0;  // invalidation events this record caused
  uint64_t entries_invalidated = 0;
};

struct EngineReplayMetrics {
  uint64_t requests = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;    // cacheable calls forwarded
  uint64_t bypasses = 0;  // not cacheable (any reason)
  std::map<std::string, uint64_t, std::less<>> bypass_reasons;
  // Cacheable calls whose full key was seen before (an unbounded cache with
  // no invalidation would serve them all): the repeats there are to keep.
  uint64_t repeats = 0;
  uint64_t stale_served = 0;  // hits whose digest differs from the trace
  uint64_t admitted = 0;
  uint64_t invalidations = 0;  // invalidation events
  uint64_t entries_invalidated = 0;
  std::vector<EngineDecision> decisions;  // with keep_decisions
};

// Replays `trace` through NewToolCache(config). Errors: the Config is not
// usable online (its policy, capacity), or a record's time goes backwards
// by more than the replay can follow (INVALID_ARGUMENT naming the record).
Result<EngineReplayMetrics> ReplayThroughEngine(
    const Trace& trace, const Config& config,
    const EngineReplayOptions& options);

}  // namespace toolcache::sim

#endif  // TOOLCACHE_SRC_SIM_ENGINE_REPLAY_H_
