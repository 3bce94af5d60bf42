// ReplayThroughEngine (engine_replay.h).
//
// Invariants:
// - Every decision is the ToolCache's: this file translates records into
//   ToolCalls and upstream results and counts what came back; it decides
//   nothing about cacheability, keys, TTLs or invalidation itself.
// - The key and scope reported per record come from the same preparation
//   stage the ToolCache runs (CallPreparer), with the same Config.
// - Time never goes backwards: a record without a clock starts when the
//   previous call ended (as PrepareTrace does), and an earlier time stamp
//   is read as "now".
#include "src/sim/engine_replay.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "src/cache/prepare.h"
#include "toolcache/clock.h"
#include "toolcache/tool_cache.h"

namespace toolcache::sim {

Result<EngineReplayMetrics> ReplayThroughEngine(
    const Trace& trace, const Config& config,
    const EngineReplayOptions& options) {
  ManualClock clock(0);
  Result<std::unique_ptr<ToolCache>> made = NewToolCache(config, &clock);
  if (!made.ok()) return made.status();
  ToolCache& cache = **made;
  const cache_internal::CallPreparer prep(config);

  EngineReplayMetrics m;
  std::unordered_set<std::string> seen_keys;
  double now = 0;
  double prev_latency = 0;
  for (size_t i = 0; i < trace.records.size(); ++i) {
    const TraceRecord& r = trace.records[i];
    // Choice: a record without a clock starts when the previous call ended.
    const double t = std::isfinite(r.time) ? r.time : now + prev_latency;
    if (t > now) {
      clock.Advance(t - now);
      now = t;
    }
    prev_latency = r.latency;

    const ToolCall call{.server = r.server.empty()
                                      ? std::string_view(options.server)
                                      : std::string_view(r.server),
                        .scope = r.tenant,
                        .tool = r.tool,
                        .arguments_json = r.arguments,
                        .user = r.user.empty() ? r.session : r.user};
    const ToolCacheStats before = cache.Stats();
    EngineDecision d;
    const cache_internal::PreparedCall p = prep.Prepare(call, nullptr);
    if (p.key) {
      d.key_hex = p.key->DigestHex();
      d.key_scope = p.key->scope;
    }
    CallPlan plan = cache.Begin(call, /*waiter=*/i + 1);
    d.cacheable = plan.verdict.cacheable;
    d.reason = plan.verdict.reason;
    d.bypass_reason = plan.bypass_reason;
    ++m.requests;
    // The result the server gave: its digest, as a JSON string.
    const std::string result = nlohmann::json(r.result_digest).dump();
    if (plan.action == CallAction::kServe) {
      d.hit = true;
      d.stale = !r.result_digest.empty() && *plan.result_json != result;
    } else {
      Completion c =
          cache.Complete(plan.ticket, {.result_json = result,
                                       .is_error = r.error,
                                       .complete = true,
                                       .latency_seconds = r.latency});
      d.admitted = c.admitted;
    }
    if (plan.bypass) {
      ++m.bypasses;
      ++m.bypass_reasons[plan.bypass_reason];
    } else if (!d.hit) {
      ++m.misses;
    }
    if (!plan.bypass && !d.key_hex.empty() &&
        !seen_keys.insert(d.key_hex).second) {
      ++m.repeats;
    }
    const ToolCacheStats after = cache.Stats();
    d.invalidations = after.invalidations - before.invalidations;
    d.entries_invalidated =
        after.entries_invalidated - before.entries_invalidated;
    m.hits += d.hit;
    m.stale_served += d.stale;
    m.admitted += d.admitted;
    m.invalidations += d.invalidations;
    m.entries_invalidated += d.entries_invalidated;
    if (options.keep_decisions) m.decisions.push_back(std::move(d));
  }
  return m;
}

}  // namespace toolcache::sim
