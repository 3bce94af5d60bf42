// Helpers shared by the per-policy unit tests.
#ifndef TOOLCACHE_SRC_POLICY_POLICY_TEST_UTIL_H_
#define TOOLCACHE_SRC_POLICY_POLICY_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
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

// Drives two caches with the same random requests and checks after each
// one that they decided the same: hit or miss, admitted or not, the same
// slot, the same entries removed in the same order (evictions, expiries,
// erasures). For a policy rewritten to decide the same (e.g. a lazy heap
// against the eager one). `requests` requests over ids 0..399 (skewed:
// id = 400 u^2), sizes 1-40 bytes, latencies and costs that vary from one
// request of an id to the next (so an entry's value falls as well as
// rises), one in four with a TTL, time advancing, 3 % erasures.
// `same_state(step, id)` compares the policies' own state after each step.
inline void ExpectSameDecisions(
    CacheCore& a, CacheCore& b, uint32_t seed, int requests,
    const std::function<void(int, ObjectId)>& same_state) {
  using Removal = std::tuple<Slot, ObjectId, RemovalCause>;
  std::vector<Removal> removed_a, removed_b;
  a.SetRemovalListener([&removed_a](Slot s, ObjectId id, RemovalCause c) {
    removed_a.emplace_back(s, id, c);
  });
  b.SetRemovalListener([&removed_b](Slot s, ObjectId id, RemovalCause c) {
    removed_b.emplace_back(s, id, c);
  });
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  double now = 0;
  for (int step = 0; step < requests; ++step) {
    const double u = unit(rng);
    Request r;
    r.id = static_cast<ObjectId>(400 * u * u);
    r.tool = 1 + static_cast<uint32_t>(r.id % 3);
    r.size = 1 + static_cast<uint64_t>(unit(rng) * 40);
    r.latency = unit(rng) < 0.1 ? 0 : std::exp(4 * unit(rng) - 2);
    r.cost = unit(rng) < 0.5 ? 0 : unit(rng) * 0.01;
    if (unit(rng) < 0.25) r.ttl = 50 + unit(rng) * 500;
    now += unit(rng);
    r.now = now;
    r.index = static_cast<uint64_t>(step);
    if (unit(rng) < 0.03) {
      ASSERT_EQ(a.Erase(r.id), b.Erase(r.id)) << "step " << step;
    } else {
      const LookupOutcome la = a.Lookup(r);
      ASSERT_EQ(la, b.Lookup(r)) << "step " << step;
      if (la != LookupOutcome::kHit) {
        ASSERT_EQ(a.Insert(r), b.Insert(r)) << "step " << step;
      }
    }
    ASSERT_EQ(removed_a, removed_b) << "step " << step;
    ASSERT_EQ(a.Find(r.id), b.Find(r.id)) << "step " << step;
    ASSERT_EQ(a.view().entry_count(), b.view().entry_count());
    same_state(step, r.id);
    if (::testing::Test::HasFatalFailure()) return;
  }
  // Enough evictions for the comparison to mean something.
  EXPECT_GT(a.evictions(), static_cast<uint64_t>(requests / 10));
}

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_POLICY_POLICY_TEST_UTIL_H_
