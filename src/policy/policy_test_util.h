// Helpers shared by the per-policy unit tests.
#ifndef TOOLCACHE_SRC_POLICY_POLICY_TEST_UTIL_H_
#define TOOLCACHE_SRC_POLICY_POLICY_TEST_UTIL_H_

#include <cstdint>

#include "toolcache/policy.h"

namespace toolcache {

// Looks `r` up and inserts it on a miss; returns whether it hit.
inline bool Access(CacheCore& core, const Request& r) {
  if (core.Lookup(r) == LookupOutcome::kHit) return true;
  (void)core.Insert(r);
  return false;
}

// Same for a request that carries only an id and a size.
inline bool Access(CacheCore& core, ObjectId id, uint64_t size = 1) {
  return Access(core, Request{.id = id, .size = size});
}

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_POLICY_POLICY_TEST_UTIL_H_
