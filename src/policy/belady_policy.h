// Belady's MIN (Belady 1966), the offline limit for hit ratio: evict the
// cached object whose next request is farthest in the future, and do not
// cache an object that is never requested again or whose next request is
// farther than every cached object's (MIN with bypass).
//
// It needs Request::next_access (the index of the next request for the same
// id; kNoNextAccess if none) and, for TTL and invalidation awareness,
// Request::next_access_time and Request::dies_at, which the simulator fills
// in; registry kind kOffline.
//
// With unit sizes and no TTL this is optimal for hit ratio. With variable
// sizes it is the classic heuristic, NOT size-optimal (the size-aware limit
// is sim::SolveOptimum). With TTLs, a request after its entry expired is a
// forced (compulsory-like) miss, and an entry invalidated (its session ran a
// COMMAND) before its next use cannot serve it: such a next use counts as
// "never", so the entry is the first victim and a newcomer in that state is
// not admitted.
//
// Thread-safety: none (see policy.h).
#ifndef TOOLCACHE_SRC_POLICY_BELADY_POLICY_H_
#define TOOLCACHE_SRC_POLICY_BELADY_POLICY_H_

#include <memory>

#include "toolcache/policy.h"

namespace toolcache {

// Registry factory (row "belady").
std::unique_ptr<Policy> MakeBeladyPolicy(const PolicyParams& params);

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_POLICY_BELADY_POLICY_H_
