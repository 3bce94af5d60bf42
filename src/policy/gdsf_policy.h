// GDSF: Greedy-Dual-Size-Frequency (Cherkasova 1998), the classic cost-aware
// eviction policy, with a real per-request miss cost as in Caffeine's
// simulator (GdsfPolicy).
//
// Every cached object p has priority H(p) = L + F(p) * C(p) / S(p): L is the
// cache's inflation clock (the priority of the last evicted object), F the
// number of requests for p since it entered the cache, C the cost of missing
// p and S its size. The victim is the object with the least H; evicting it
// raises L to its H, so objects that stop being requested age out. Every
// miss is admitted.
//
// Two registry rows: "gdsf" takes C = Request::latency (seconds saved per
// hit), "gdsf-cost" takes C = Request::cost (price saved per hit).
//
// Thread-safety: none (see policy.h).
//
// Example:
//   auto p = MakeGdsfPolicy({.capacity_bytes = 1 << 20});
//   CacheCore core({.capacity_bytes = 1 << 20}, std::move(p));
#ifndef TOOLCACHE_SRC_POLICY_GDSF_POLICY_H_
#define TOOLCACHE_SRC_POLICY_GDSF_POLICY_H_

#include <memory>

#include "toolcache/policy.h"

namespace toolcache {

// Which Request field is GDSF's cost C.
enum class GdsfCostSource { kLatency, kPrice };

// GDSF with C = latency (registry row "gdsf"). Knob "cost_source": 0 =
// latency (default), 1 = price.
std::unique_ptr<Policy> MakeGdsfPolicy(const PolicyParams& params);
// GDSF with C = price (registry row "gdsf-cost"). Same knob, default 1.
std::unique_ptr<Policy> MakeGdsfCostPolicy(const PolicyParams& params);
// Direct construction.
std::unique_ptr<Policy> NewGdsfPolicy(GdsfCostSource source);

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_POLICY_GDSF_POLICY_H_
