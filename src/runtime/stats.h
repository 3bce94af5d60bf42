// One stats snapshot for every face: the engine's counters (ToolCacheStats)
// under "cache" in one spelling, the face's own counters beside them, one
// serialiser. `serve`'s stats route and --stats file, the LLM proxy's
// /v1/stats and --stats file, `mcp --stats FILE` and `mcp --url --stats`
// all write this shape (docs/MCP.md "Statistics" lists it, with the old
// `mcp --stats` names).
//
//   {"face": "mcp" | "serve" | "proxy",
//    "cache": {"entries", "bytes", "calls", "hits", "misses", "coalesced",
//              "bypasses", "bypassesByReason", "peeks", "wouldHits",
//              "recorded", "recordedAlreadyCached", "recordedStale",
//              "admitted", "notAdmitted", "invalidations",
//              "entriesInvalidated", "storeHits", "storeErrors",
//              "savedSeconds", "bytesServed"},
//    ...the face's own members}
//
// "cache" is absent when the face runs without an engine (--no-cache).
//
// Thread-safety: pure functions of their arguments.
//
// Example:
//   runtime::StatsSnapshot snap("mcp", &cache->Stats());
//   snap.face_fields["session"] = {{"clientParseErrors", 0}};
//   WriteFileAtomically(path, runtime::SerializeStats(snap), "stats file");
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "toolcache/tool_cache.h"

namespace toolcache::runtime {

// The keys of "cache", in order; the contract tests check every face
// against this list.
inline constexpr std::string_view kCacheStatsKeys[] = {"entries",
                                                       "bytes",
                                                       "calls",
                                                       "hits",
                                                       "misses",
                                                       "coalesced",
                                                       "bypasses",
                                                       "bypassesByReason",
                                                       "peeks",
                                                       "wouldHits",
                                                       "recorded",
                                                       "recordedAlreadyCached",
                                                       "recordedStale",
                                                       "admitted",
                                                       "notAdmitted",
                                                       "invalidations",
                                                       "entriesInvalidated",
                                                       "storeHits",
                                                       "storeErrors",
                                                       "savedSeconds",
                                                       "bytesServed"};

// The engine's counters in the shape above ("cache").
nlohmann::ordered_json CacheStatsJson(const ToolCacheStats& s);

struct StatsSnapshot {
  StatsSnapshot(std::string face_name, const ToolCacheStats* stats)
      : face(std::move(face_name)) {
    if (stats != nullptr) {
      cache = *stats;
      has_cache = true;
    }
  }
  std::string face;
  bool has_cache = false;
  ToolCacheStats cache;
  // The face's own members, written after "cache" in this order.
  nlohmann::ordered_json face_fields = nlohmann::ordered_json::object();
};

// The snapshot as one JSON document (two-space indent, trailing newline;
// invalid UTF-8 in a reason or tool name is replaced, never thrown on).
std::string SerializeStats(const StatsSnapshot& snapshot);

}  // namespace toolcache::runtime
