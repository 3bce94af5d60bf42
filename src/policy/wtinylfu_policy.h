// W-TinyLFU (Einziger, Eytan, Friedman, Manes, "Adaptive Software Cache
// Management", Middleware 2018; Caffeine's eviction policy), byte-aware.
//
// New objects enter a small LRU window (1% of the capacity in bytes). Objects
// leaving the window become candidates for the main space, a segmented LRU
// (probation 20% / protected 80% of the main bytes). When the cache must
// evict, the newest candidate that just left the window (or, with none, the
// window's least recent entry) duels the least recent probation entry (the
// main victim): the one with the lower estimated frequency in a count-min
// sketch (frequency_sketch.h) is evicted; ties evict the candidate; a
// winning candidate becomes an ordinary probation entry (Caffeine's
// evictFromMain). A probation hit promotes to protected; protected overflow
// demotes its LRU entry back to probation.
//
// Byte-awareness: the window and protected limits are in bytes (each limit
// may be overshot by the one entry that does not fit), and evictions repeat
// until the incoming object fits, so one large object can evict several
// small ones, each through its own duel.
//
// Knobs: "window_pct" (default 0.01), "protected_pct" (default 0.8, of the
// main space).
//
// Thread-safety: none (see policy.h).
#ifndef TOOLCACHE_SRC_POLICY_WTINYLFU_POLICY_H_
#define TOOLCACHE_SRC_POLICY_WTINYLFU_POLICY_H_

#include <cstdint>
#include <memory>

#include "toolcache/policy.h"

namespace toolcache {

struct WTinyLfuOptions {
  uint64_t capacity_bytes = 0;
  uint64_t capacity_entries = 0;  // 0 = unlimited; sizes the sketch if set
  double window_pct = 0.01;       // share of capacity for the LRU window
  double protected_pct = 0.8;     // share of the main space that is protected
  uint64_t seed = 1;              // for the hash-flooding admission coin
};

// Registry factory (row "w-tinylfu").
std::unique_ptr<Policy> MakeWTinyLfuPolicy(const PolicyParams& params);
std::unique_ptr<Policy> NewWTinyLfuPolicy(const WTinyLfuOptions& options);

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_POLICY_WTINYLFU_POLICY_H_
