// The offline optimum: hand-solvable instances, bound relations (LP >= ILP,
// infinite capacity = all intervals, optimum >= every policy), TTL and
// cacheability rules, bad input.
#include "src/sim/optimum.h"

#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "toolcache/policy.h"

namespace toolcache::sim {
namespace {

Request R(ObjectId id, uint64_t size, double latency, double now,
          double ttl = kNoExpiry, double cost = 0) {
  Request r;
  r.id = id;
  r.size = size;
  r.latency = latency;
  r.cost = cost;
  r.now = now;
  r.ttl = ttl;
  return r;
}

std::vector<uint8_t> AllCacheable(size_t n) {
  return std::vector<uint8_t>(n, 1);
}

TEST(SolveOptimum, PicksTheMoreValuableOfTwoOverlappingIntervals) {
  // A and B (6 bytes each) overlap at t = 1; 10 bytes hold only one.
  const std::vector<Request> reqs = {R(1, 6, 5, 0), R(2, 6, 3, 1),
                                     R(1, 6, 5, 2), R(2, 6, 3, 3)};
  Result<OptimumResult> r =
      SolveOptimum(reqs, AllCacheable(4), 10, OptimumObjective::kLatency);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->exact);
  EXPECT_EQ(r->method, "ilp");
  EXPECT_DOUBLE_EQ(r->saved_latency, 5.0);
  EXPECT_EQ(r->hits, 1u);
  EXPECT_EQ(r->intervals, 2u);
  // With 12 bytes both fit.
  r = SolveOptimum(reqs, AllCacheable(4), 12, OptimumObjective::kLatency);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->saved_latency, 8.0);
  EXPECT_EQ(r->hits, 2u);
}

TEST(SolveOptimum, CostObjectiveChoosesByPriceNotLatency) {
  const std::vector<Request> reqs = {
      R(1, 6, 5, 0, kNoExpiry, 0.001), R(2, 6, 1, 1, kNoExpiry, 0.01),
      R(1, 6, 5, 2, kNoExpiry, 0.001), R(2, 6, 1, 3, kNoExpiry, 0.01)};
  Result<OptimumResult> r =
      SolveOptimum(reqs, AllCacheable(4), 10, OptimumObjective::kCost);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->saved_cost, 0.01);
  EXPECT_DOUBLE_EQ(r->saved_latency, 1.0);  // what that solution saves
}

TEST(SolveOptimum, KnapsackExactBeatsGreedyBySize) {
  // Three overlapping intervals of 5, 5 and 8 bytes, capacity 10: the two
  // 5s (value 3 + 3) beat the 8 (value 5).
  const std::vector<Request> reqs = {R(1, 5, 3, 0), R(2, 5, 3, 1),
                                     R(3, 8, 5, 2), R(1, 5, 3, 3),
                                     R(2, 5, 3, 4), R(3, 8, 5, 5)};
  Result<OptimumResult> r =
      SolveOptimum(reqs, AllCacheable(6), 10, OptimumObjective::kLatency);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->exact);
  EXPECT_DOUBLE_EQ(r->saved_latency, 6.0);
}

TEST(SolveOptimum, LpRelaxationBoundsTheIntegerOptimumFromAbove) {
  // Three 6-byte intervals overlapping, capacity 10: ILP keeps one (1 hit);
  // the LP may keep 10/6 of them.
  const std::vector<Request> reqs = {R(1, 6, 1, 0), R(2, 6, 1, 1),
                                     R(3, 6, 1, 2), R(1, 6, 1, 3),
                                     R(2, 6, 1, 4), R(3, 6, 1, 5)};
  Result<OptimumResult> ilp =
      SolveOptimum(reqs, AllCacheable(6), 10, OptimumObjective::kHits);
  Result<OptimumResult> lp =
      SolveOptimum(reqs, AllCacheable(6), 10, OptimumObjective::kHits,
                   {.max_exact_requests = 0});
  ASSERT_TRUE(ilp.ok() && lp.ok());
  EXPECT_TRUE(ilp->exact);
  EXPECT_FALSE(lp->exact);
  EXPECT_EQ(lp->method, "lp-relaxation");
  EXPECT_DOUBLE_EQ(ilp->objective, 1.0);
  EXPECT_NEAR(lp->objective, 10.0 / 6.0, 1e-9);
  EXPECT_EQ(lp->hits, 1u);  // floor of the fractional bound
}

std::vector<Request> RandomTrace(uint64_t n, uint64_t ids, uint64_t seed,
                                 bool with_ttl) {
  std::mt19937_64 rng(seed);
  std::vector<Request> t;
  double now = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const ObjectId id = rng() % ids;
    now += 1 + static_cast<double>(rng() % 3);
    // Per-object features, so an object's size and TTL never change.
    std::mt19937_64 obj(id + 7);
    const uint64_t size = 1 + obj() % 50;
    const double latency = 0.1 * static_cast<double>(1 + obj() % 20);
    const double cost = 0.001 * static_cast<double>(obj() % 5);
    const double ttl =
        with_ttl ? 20.0 + static_cast<double>(obj() % 100) : kNoExpiry;
    t.push_back(R(id, size, latency, now, ttl, cost));
    t.back().index = i;
  }
  return t;
}

TEST(SolveOptimum, LpBoundIsAtLeastIlpOnRandomTraces) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const std::vector<Request> reqs = RandomTrace(300, 40, seed, true);
    const auto flags = AllCacheable(reqs.size());
    // An hour: the test needs the exact optimum, and the limit is wall
    // clock (a loaded or sanitizer build must not turn it into a bound).
    Result<OptimumResult> ilp =
        SolveOptimum(reqs, flags, 200, OptimumObjective::kLatency,
                     {.time_limit_seconds = 3600});
    Result<OptimumResult> lp =
        SolveOptimum(reqs, flags, 200, OptimumObjective::kLatency,
                     {.max_exact_requests = 0});
    ASSERT_TRUE(ilp.ok() && lp.ok());
    EXPECT_TRUE(ilp->exact) << ilp->method;
    EXPECT_GE(lp->objective, ilp->objective - 1e-9) << "seed " << seed;
  }
}

TEST(SolveOptimum, InfiniteCapacityTakesEveryInterval) {
  const std::vector<Request> reqs = RandomTrace(2000, 300, 9, false);
  // Without TTL every repeat request is an interval.
  std::vector<uint8_t> seen(300, 0);
  uint64_t repeats = 0;
  double repeat_latency = 0;
  for (const Request& r : reqs) {
    if (seen[r.id]) {
      ++repeats;
      repeat_latency += r.latency;
    }
    seen[r.id] = 1;
  }
  Result<OptimumResult> r =
      SolveOptimum(reqs, AllCacheable(reqs.size()), kUnlimitedBytes,
                   OptimumObjective::kHits);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->exact);
  EXPECT_EQ(r->method, "all-intervals-fit");
  EXPECT_EQ(r->hits, repeats);
  EXPECT_EQ(r->intervals, repeats);
  EXPECT_NEAR(r->saved_latency, repeat_latency, 1e-6);
}

TEST(SolveOptimum, TtlDropsIntervalsMeasuredFromTheirStart) {
  // ttl 10: t=5 is fresh (5 < 0+10); t=20 is not fresh measured from the
  // interval start 5 (20 >= 15); t=24 is fresh again from 20 (24 < 30).
  const std::vector<Request> reqs = {R(1, 1, 1, 0, 10), R(1, 1, 1, 5, 10),
                                     R(1, 1, 1, 20, 10), R(1, 1, 1, 24, 10)};
  Result<OptimumResult> r =
      SolveOptimum(reqs, AllCacheable(4), 100, OptimumObjective::kHits);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->intervals, 2u);
  EXPECT_EQ(r->hits, 2u);
}

TEST(SolveOptimum, ChainOfHitsKeepsItsFirstFetchTime) {
  // ttl 10, requests at 0, 5, 9, 12: each interval alone is fresh from its
  // start, but hits at 5, 9 and 12 would need the fetch at 0 to live until
  // 12 >= 10. A real cache: miss 0, hit 5, hit 9, miss 12 (expired).
  const std::vector<Request> reqs = {R(1, 1, 1, 0, 10), R(1, 1, 1, 5, 10),
                                     R(1, 1, 1, 9, 10), R(1, 1, 1, 12, 10)};
  Result<OptimumResult> r = SolveOptimum(reqs, AllCacheable(4), kUnlimitedBytes,
                                         OptimumObjective::kHits);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->exact);
  EXPECT_EQ(r->intervals, 3u);
  EXPECT_EQ(r->hits, 2u);
  // The LP path honours the chain rule too.
  r = SolveOptimum(reqs, AllCacheable(4), kUnlimitedBytes,
                   OptimumObjective::kHits, {.max_exact_requests = 0});
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->objective, 2.0, 1e-9);
}

TEST(SolveOptimum, InfiniteCapacityOptimumEqualsTheInfiniteCacheWithTtl) {
  const std::vector<Request> reqs = RandomTrace(1500, 100, 11, true);
  CacheCore core({.capacity_bytes = kUnlimitedBytes},
                 std::move(*MakePolicy("infinite", {})));
  double saved = 0;
  for (const Request& q : reqs) {
    if (core.Lookup(q) == LookupOutcome::kHit) {
      saved += q.latency;
    } else {
      (void)core.Insert(q);
    }
  }
  Result<OptimumResult> r =
      SolveOptimum(reqs, AllCacheable(reqs.size()), kUnlimitedBytes,
                   OptimumObjective::kLatency);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->exact) << r->method;
  EXPECT_NEAR(r->saved_latency, saved, 1e-6);
}

TEST(SolveOptimum, NonCacheableRequestsNeitherStartNorEndIntervals) {
  const std::vector<Request> reqs = {R(1, 1, 1, 0), R(1, 1, 7, 1),
                                     R(1, 1, 2, 2)};
  const std::vector<uint8_t> flags = {1, 0, 1};
  Result<OptimumResult> r =
      SolveOptimum(reqs, flags, 100, OptimumObjective::kLatency);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->hits, 1u);
  EXPECT_DOUBLE_EQ(r->saved_latency, 2.0);
}

TEST(SolveOptimum, ObjectLargerThanTheCacheNeverHits) {
  const std::vector<Request> reqs = {R(1, 11, 1, 0), R(1, 11, 1, 1)};
  Result<OptimumResult> r =
      SolveOptimum(reqs, AllCacheable(2), 10, OptimumObjective::kHits);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->hits, 0u);
  EXPECT_EQ(r->intervals, 0u);
}

TEST(SolveOptimum, BoundsEveryRegisteredPolicy) {
  const std::vector<Request> trace = RandomTrace(1500, 120, 4, true);
  const auto flags = AllCacheable(trace.size());
  for (const uint64_t capacity : {100u, 400u, 1500u}) {
    Result<OptimumResult> opt_lat =
        SolveOptimum(trace, flags, capacity, OptimumObjective::kLatency);
    Result<OptimumResult> opt_cost =
        SolveOptimum(trace, flags, capacity, OptimumObjective::kCost);
    Result<OptimumResult> opt_hits =
        SolveOptimum(trace, flags, capacity, OptimumObjective::kHits);
    ASSERT_TRUE(opt_lat.ok() && opt_cost.ok() && opt_hits.ok());
    ASSERT_TRUE(opt_lat->exact) << opt_lat->method;
    // next_access for Belady.
    std::vector<Request> reqs = trace;
    std::vector<uint64_t> next(120, kNoNextAccess);
    for (uint64_t i = reqs.size(); i-- > 0;) {
      reqs[i].next_access = next[reqs[i].id];
      next[reqs[i].id] = i;
    }
    for (const PolicyInfo& info : Policies()) {
      if (info.kind == PolicyKind::kUnbounded) continue;
      Result<std::unique_ptr<Policy>> p =
          MakePolicy(info.name, {.capacity_bytes = capacity});
      ASSERT_TRUE(p.ok());
      CacheCore core({.capacity_bytes = capacity}, std::move(*p));
      double lat = 0, cost = 0;
      uint64_t hits = 0;
      for (const Request& r : reqs) {
        if (core.Lookup(r) == LookupOutcome::kHit) {
          lat += r.latency;
          cost += r.cost;
          ++hits;
        } else {
          (void)core.Insert(r);
        }
      }
      EXPECT_LE(lat, opt_lat->saved_latency + 1e-9)
          << info.name << " at " << capacity;
      EXPECT_LE(cost, opt_cost->saved_cost + 1e-12)
          << info.name << " at " << capacity;
      EXPECT_LE(hits, opt_hits->hits) << info.name << " at " << capacity;
    }
  }
}

TEST(SolveOptimum, AnErrorResultCannotStartARunButCanBeServedInsideOne) {
  // x at 0 (ok), 1 (error result), 2 (ok): a cache keeps 0's entry and
  // serves 1 and 2 (2 hits). If 0 is the error instead, nothing is
  // inserted at 0; 1 inserts and 2 hits (1 hit).
  const std::vector<Request> reqs = {R(1, 1, 1, 0), R(1, 1, 1, 1),
                                     R(1, 1, 1, 2)};
  constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
  const std::vector<uint64_t> error_at_1 = {kNever, 2, kNever};
  const std::vector<uint64_t> error_at_0 = {1, kNever, kNever};
  for (const uint64_t max_exact : {5000u, 0u}) {
    Result<OptimumResult> r =
        SolveOptimum(reqs, AllCacheable(3), 100, OptimumObjective::kHits,
                     {.max_exact_requests = max_exact, .dies_at = error_at_1});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_NEAR(r->objective, 2.0, 1e-9) << max_exact;
    r = SolveOptimum(reqs, AllCacheable(3), 100, OptimumObjective::kHits,
                     {.max_exact_requests = max_exact, .dies_at = error_at_0});
    ASSERT_TRUE(r.ok());
    EXPECT_NEAR(r->objective, 1.0, 1e-9) << max_exact;
  }
}

TEST(SolveOptimum, AnErrorInsideARunKeepsItsWorthlessLink) {
  // The error request 1 is worth nothing (latency 0), yet its interval must
  // stay: it is the only way to the hit at 2 (worth 5).
  const std::vector<Request> reqs = {R(1, 1, 1, 0), R(1, 1, 0, 1),
                                     R(1, 1, 5, 2)};
  constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
  const std::vector<uint64_t> dies = {kNever, 2, kNever};
  Result<OptimumResult> r =
      SolveOptimum(reqs, AllCacheable(3), 100, OptimumObjective::kLatency,
                   {.dies_at = dies});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->exact);
  EXPECT_DOUBLE_EQ(r->saved_latency, 5.0);
}

TEST(SolveOptimum, InvalidationEndsARunAtDiesAt) {
  // x at 0, 1, 3, 4; an invalidation at index 2 kills the entry fetched at
  // 0 (and at 1): 3 must miss and refetch, 4 hits: 2 hits, not 3.
  const std::vector<Request> reqs = {R(1, 1, 1, 0), R(1, 1, 1, 1),
                                     R(2, 1, 1, 2), R(1, 1, 1, 3),
                                     R(1, 1, 1, 4)};
  const std::vector<uint8_t> flags = {1, 1, 0, 1, 1};
  constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
  const std::vector<uint64_t> dies = {2, 2, kNever, kNever, kNever};
  for (const uint64_t max_exact : {5000u, 0u}) {
    Result<OptimumResult> r =
        SolveOptimum(reqs, flags, kUnlimitedBytes, OptimumObjective::kHits,
                     {.max_exact_requests = max_exact, .dies_at = dies});
    ASSERT_TRUE(r.ok());
    EXPECT_NEAR(r->objective, 2.0, 1e-9) << max_exact;
  }
  Result<OptimumResult> r =
      SolveOptimum(reqs, flags, kUnlimitedBytes, OptimumObjective::kHits);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->hits, 3u);  // without dies_at, nothing ends the run
}

TEST(SolveOptimum, LongRunRowsAreDroppedOnTheLpPathAndReportedAsABound) {
  // One hot object requested every second with TTL 100: each run row spans
  // ~100 intervals, beyond the LP path's 64, so the rows are dropped, the
  // result is an upper bound (>= the exact value) and says so.
  std::vector<Request> reqs;
  for (int i = 0; i < 400; ++i) reqs.push_back(R(1, 1, 1, i, 100));
  Result<OptimumResult> exact =
      SolveOptimum(reqs, AllCacheable(reqs.size()), kUnlimitedBytes,
                   OptimumObjective::kHits);
  Result<OptimumResult> lp =
      SolveOptimum(reqs, AllCacheable(reqs.size()), kUnlimitedBytes,
                   OptimumObjective::kHits, {.max_exact_requests = 0});
  ASSERT_TRUE(exact.ok() && lp.ok());
  EXPECT_TRUE(exact->exact) << exact->method;
  EXPECT_EQ(exact->hits, 396u);  // misses at 0, 100, 200, 300
  EXPECT_FALSE(lp->exact);
  EXPECT_NE(lp->method.find("run rows dropped"), std::string::npos)
      << lp->method;
  EXPECT_GE(lp->objective, exact->objective - 1e-9);
  EXPECT_EQ(lp->lower_bound, 0);
}

TEST(SolveOptimum, RejectsBadInputWithAMessage) {
  const std::vector<Request> reqs = {R(1, 1, 1, 0), R(1, 1, 1, 1)};
  Result<OptimumResult> r =
      SolveOptimum(reqs, AllCacheable(1), 10, OptimumObjective::kHits);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("cacheable flags"), std::string::npos);
  std::vector<Request> bad = reqs;
  bad[1].latency = std::nan("");
  r = SolveOptimum(bad, AllCacheable(2), 10, OptimumObjective::kLatency);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("request 1"), std::string::npos);
  r = SolveOptimum(reqs, AllCacheable(2), 10, OptimumObjective::kHits,
                   {.time_limit_seconds = 0});
  EXPECT_FALSE(r.ok());
  const std::vector<uint64_t> short_dies = {5};
  r = SolveOptimum(reqs, AllCacheable(2), 10, OptimumObjective::kHits,
                   {.dies_at = short_dies});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("dies_at"), std::string::npos);
  const std::vector<uint64_t> not_after = {0, 5};
  r = SolveOptimum(reqs, AllCacheable(2), 10, OptimumObjective::kHits,
                   {.dies_at = not_after});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("request 0"), std::string::npos);
}

}  // namespace
}  // namespace toolcache::sim
