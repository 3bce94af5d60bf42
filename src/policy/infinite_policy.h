// Infinite cache: the limit where only compulsory misses (first request of
// an object) and TTL-forced misses (a request after the entry expired)
// remain. Admits every object and never chooses to evict while capacity
// lasts; the simulator runs it with unbounded capacity (registry kind
// kUnbounded). Given a finite capacity anyway it degrades to FIFO, so it
// still honours the Policy contract.
//
// Thread-safety: none (see policy.h).
#ifndef TOOLCACHE_SRC_POLICY_INFINITE_POLICY_H_
#define TOOLCACHE_SRC_POLICY_INFINITE_POLICY_H_

#include <memory>

#include "toolcache/policy.h"

namespace toolcache {

// Registry factory (row "infinite").
std::unique_ptr<Policy> MakeInfinitePolicy(const PolicyParams& params);

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_POLICY_INFINITE_POLICY_H_
