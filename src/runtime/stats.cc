// Invariants: every key of kCacheStatsKeys is written, in that order, for
// every snapshot with an engine (zeros and empty objects included), so a
// reader never has to tell "absent" from "none yet"; face members never
// overwrite "face" or "cache".
// Choice: the spelling of `serve`'s stats ("entries", "storeErrors") won;
// `mcp --stats` and the LLM proxy's "cachedEntries", "cachedBytes",
// "storeErrorsByReason", "upstreamLatencySavedSeconds" and
// "bytesServedFromCache" are renamed (docs/MCP.md lists old -> new).
#include "src/runtime/stats.h"

namespace toolcache::runtime {

nlohmann::ordered_json CacheStatsJson(const ToolCacheStats& s) {
  nlohmann::ordered_json j;
  j["entries"] = s.entries;
  j["bytes"] = s.bytes;
  j["calls"] = s.calls;
  j["hits"] = s.hits;
  j["misses"] = s.misses;
  j["coalesced"] = s.coalesced;
  uint64_t bypass_total = 0;
  nlohmann::ordered_json by = nlohmann::ordered_json::object();
  for (const auto& [reason, n] : s.bypasses) {
    by[reason] = n;
    bypass_total += n;
  }
  j["bypasses"] = bypass_total;
  j["bypassesByReason"] = by;
  j["peeks"] = s.peeks;
  j["wouldHits"] = s.would_hits;
  j["recorded"] = s.recorded;
  j["recordedAlreadyCached"] = s.recorded_already_cached;
  j["recordedStale"] = s.recorded_stale;
  j["admitted"] = s.admitted;
  j["notAdmitted"] = s.not_admitted;
  j["invalidations"] = s.invalidations;
  j["entriesInvalidated"] = s.entries_invalidated;
  j["storeHits"] = s.store_hits;
  nlohmann::ordered_json se = nlohmann::ordered_json::object();
  for (const auto& [reason, n] : s.store_errors) se[reason] = n;
  j["storeErrors"] = se;
  j["savedSeconds"] = s.latency_saved_seconds;
  j["bytesServed"] = s.bytes_served;
  return j;
}

std::string SerializeStats(const StatsSnapshot& snapshot) {
  nlohmann::ordered_json j;
  j["face"] = snapshot.face;
  if (snapshot.has_cache) j["cache"] = CacheStatsJson(snapshot.cache);
  for (const auto& [k, v] : snapshot.face_fields.items()) {
    if (k == "face" || k == "cache") continue;
    j[k] = v;
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace toolcache::runtime
