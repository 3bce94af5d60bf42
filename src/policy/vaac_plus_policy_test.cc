// vaac-plus: its defining behaviours on small exact sequences (value
// density, frequency that survives eviction, the group prior, the admission
// duel and its regret-adapted threshold), plus scan resistance against LRU.
#include "src/policy/vaac_plus_policy.h"

#include <cmath>
#include <limits>
#include <memory>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "src/policy/factories.h"
#include "src/policy/policy_test_util.h"
#include "toolcache/policy.h"

namespace toolcache {
namespace {

Request Req(ObjectId id, uint32_t tool, uint64_t size, double latency,
            double cost = 0) {
  Request r;
  r.id = id;
  r.tool = tool;
  r.size = size;
  r.latency = latency;
  r.cost = cost;
  return r;
}

VaacPlusPolicy* Plus(CacheCore& core) {
  return dynamic_cast<VaacPlusPolicy*>(&core.policy());
}

std::unique_ptr<Policy> Make(uint64_t capacity, double admission = 2,
                             double group_prior = 1) {
  PolicyParams p{.capacity_bytes = capacity};
  p.knobs["admission"] = admission;
  p.knobs["group_prior"] = group_prior;
  return MakeVaacPlusPolicy(p);
}

TEST(VaacPlusPolicy, AdmitsEverythingWhileSpaceIsFree) {
  CacheCore core({.capacity_bytes = 1000}, Make(1000, /*strict*/ 1));
  for (ObjectId id = 1; id <= 10; ++id) {
    Access(core, Req(id, 1, 10, 0.1 * static_cast<double>(id)));
  }
  EXPECT_EQ(core.view().entry_count(), 10u);
  EXPECT_EQ(Plus(core)->refusals(), 0u);
}

TEST(VaacPlusPolicy, EvictsTheLowestValueDensityNotTheLeastRecent) {
  CacheCore core({.capacity_bytes = 100}, Make(100, /*all*/ 0));
  Access(core, Req(1, 1, 10, 5.0));  // slow and small: high density
  Access(core, Req(2, 1, 85, 0.1));  // fast and big: low density
  Access(core, Req(3, 1, 10, 1.0));  // needs 10 bytes
  EXPECT_NE(core.Find(1), kNoSlot);  // the oldest stays
  EXPECT_EQ(core.Find(2), kNoSlot);
  EXPECT_NE(core.Find(3), kNoSlot);
}

TEST(VaacPlusPolicy, CheapestToolStillHasPositiveBenefit) {
  // With the paper's min-max normalization the fastest tool is worth 0; the
  // running-mean benefit keeps it comparable by size.
  CacheCore core({.capacity_bytes = 100}, Make(100));
  Access(core, Req(1, 1, 10, 0.01));
  Access(core, Req(2, 2, 10, 2.0));
  EXPECT_GT(Plus(core)->Benefit(Req(1, 1, 10, 0.01)), 0.0);
  EXPECT_GT(Plus(core)->Priority(core.Find(1)), Plus(core)->clock());
}

TEST(VaacPlusPolicy, BenefitBlendsLatencyAndCostByTheLambdas) {
  CacheCore core({.capacity_bytes = 1000}, Make(1000));
  // Means: latency 1.0, cost 0.01.
  Access(core, Req(1, 1, 10, 1.5, 0.0));
  Access(core, Req(2, 1, 10, 0.5, 0.02));
  const VaacPlusPolicy& p = *Plus(core);
  // (0.8 * 1.5/1 + 0.2 * 0/0.01) / 1.0 and (0.8 * 0.5 + 0.2 * 2) / 1.0, no
  // TTL risk (infinite TTL).
  EXPECT_DOUBLE_EQ(p.Benefit(Req(1, 1, 10, 1.5, 0.0)), 1.2);
  EXPECT_DOUBLE_EQ(p.Benefit(Req(2, 1, 10, 0.5, 0.02)), 0.8);
}

TEST(VaacPlusPolicy, FreeWorkloadIsRankedByLatencyAlone) {
  CacheCore core({.capacity_bytes = 1000}, Make(1000));
  Access(core, Req(1, 1, 10, 2.0));
  Access(core, Req(2, 1, 10, 1.0));
  // Mean latency 1.5, no cost anywhere: B = latency / mean.
  EXPECT_DOUBLE_EQ(Plus(core)->Benefit(Req(1, 1, 10, 2.0)), 2.0 / 1.5);
}

TEST(VaacPlusPolicy, ShortTtlLowersTheBenefit) {
  CacheCore core({.capacity_bytes = 1000}, Make(1000));
  Request a = Req(1, 1, 10, 1.0);
  a.ttl = 3600;
  Access(core, a);
  Request b = a;
  b.ttl = 60;
  // tau = 3600 (mean TTL of inserted entries): risk e^-1 vs e^-(1/60).
  EXPECT_LT(Plus(core)->Benefit(b), Plus(core)->Benefit(a));
  EXPECT_NEAR(Plus(core)->Benefit(a), 1.0 - 0.2 * std::exp(-1.0), 1e-12);
}

TEST(VaacPlusPolicy, FrequencyRemembersAnEvictedObject) {
  // Object 1 was requested three times before it was evicted; when it comes
  // back its expected reuse F starts from that history, unlike a newcomer.
  CacheCore core({.capacity_bytes = 20}, Make(20, /*all*/ 0, /*prior*/ 0));
  for (int i = 0; i < 3; ++i) Access(core, Req(1, 1, 10, 0.1));
  for (ObjectId id = 2; id <= 6; ++id) Access(core, Req(id, 1, 10, 50.0));
  ASSERT_EQ(core.Find(1), kNoSlot);
  Access(core, Req(1, 1, 10, 0.1));
  EXPECT_DOUBLE_EQ(Plus(core)->last_reuse(), 3 + 1);  // r = 3, prior off
  Access(core, Req(99, 1, 10, 0.1));
  EXPECT_DOUBLE_EQ(Plus(core)->last_reuse(), 0 + 1);
}

TEST(VaacPlusPolicy, GroupPriorMarksToolsWhoseCallsNeverRepeat) {
  // Tool 1's calls always repeat, tool 2's never do; after enough requests
  // for the grouping to split by tool (T1 = 20, B = 200), a first call of
  // tool 2 expects far less reuse than a first call of tool 1.
  CacheCore core({.capacity_bytes = 1 << 20}, Make(1 << 20));
  ObjectId fresh = 1000;
  for (int round = 0; round < 150; ++round) {
    Access(core, Req(1 + round % 5, 1, 10, 1.0));
    Access(core, Req(fresh++, 2, 10, 1.0));
  }
  Access(core, Req(fresh++, 1, 10, 1.0));
  const double new_of_repeating_tool = Plus(core)->last_reuse();
  Access(core, Req(fresh++, 2, 10, 1.0));
  const double new_of_one_off_tool = Plus(core)->last_reuse();
  EXPECT_GT(new_of_repeating_tool, 0.9);
  EXPECT_LT(new_of_one_off_tool, 0.1);
}

TEST(VaacPlusPolicy, StrictDuelRefusesACandidateWorthLessThanTheVictim) {
  CacheCore core({.capacity_bytes = 20}, Make(20, /*strict*/ 1, /*prior*/ 0));
  Access(core, Req(1, 1, 10, 2.0));
  Access(core, Req(2, 1, 10, 2.0));
  Access(core, Req(3, 1, 10, 0.1));  // density far below the victim's
  EXPECT_EQ(core.Find(3), kNoSlot);
  EXPECT_NE(core.Find(1), kNoSlot);
  EXPECT_NE(core.Find(2), kNoSlot);
  EXPECT_EQ(Plus(core)->refusals(), 1u);
  Access(core, Req(4, 1, 10, 8.0));  // worth more: admitted
  EXPECT_NE(core.Find(4), kNoSlot);
}

TEST(VaacPlusPolicy, RefusedCandidateThatReturnsLowersGamma) {
  CacheCore core({.capacity_bytes = 20}, Make(20, /*adaptive*/ 2, 0));
  Access(core, Req(1, 1, 10, 2.0));
  Access(core, Req(2, 1, 10, 2.0));
  const double start = Plus(core)->gamma();
  EXPECT_DOUBLE_EQ(start, 0.5);
  Access(core, Req(3, 1, 10, 0.1));  // refused
  ASSERT_EQ(core.Find(3), kNoSlot);
  Access(core, Req(3, 1, 10, 0.1));  // returns: refusing it cost a hit
  EXPECT_DOUBLE_EQ(Plus(core)->gamma(), start * 0.9);
}

TEST(VaacPlusPolicy, EvictedEntryThatReturnsRaisesGamma) {
  CacheCore core({.capacity_bytes = 20}, Make(20, /*adaptive*/ 2, 0));
  Access(core, Req(1, 1, 10, 1.0));
  Access(core, Req(2, 1, 10, 1.0));
  Access(core, Req(3, 1, 10, 1.0));  // admitted (tie), evicts 1
  ASSERT_EQ(core.Find(1), kNoSlot);
  Access(core, Req(1, 1, 10, 1.0));  // returns: evicting it cost a hit
  EXPECT_DOUBLE_EQ(Plus(core)->gamma(), 0.5 + 0.1 * 0.5);
}

TEST(VaacPlusPolicy, ObjectsTheCoreRefusesAnywayDoNotMoveGamma) {
  CacheCore core({.capacity_bytes = 20}, Make(20, /*adaptive*/ 2, 0));
  Access(core, Req(1, 1, 10, 2.0));
  Access(core, Req(2, 1, 10, 2.0));
  Request huge = Req(3, 1, 50, 0.1);  // larger than the whole cache
  Request expired = Req(4, 1, 10, 0.1);
  expired.ttl = 0;
  for (int i = 0; i < 30; ++i) {
    EXPECT_FALSE(Access(core, huge));
    EXPECT_FALSE(Access(core, expired));
  }
  EXPECT_DOUBLE_EQ(Plus(core)->gamma(), 0.5);
  EXPECT_EQ(Plus(core)->refusals(), 0u);
  EXPECT_NE(core.Find(1), kNoSlot);
  EXPECT_NE(core.Find(2), kNoSlot);
}

TEST(VaacPlusPolicy, NonFiniteMeasurementsCountAsZero) {
  CacheCore core({.capacity_bytes = 30}, Make(30, /*all*/ 0, 0));
  // A finite measurement first (with no mean yet every benefit is 1).
  Access(core, Req(2, 1, 10, 5.0));
  Access(core, Req(1, 1, 10, std::numeric_limits<double>::infinity()));
  Access(core, Req(3, 1, 10, std::numeric_limits<double>::quiet_NaN()));
  Access(core, Req(4, 1, 10, 1.0));  // evicts one of the two zero-benefit
  Access(core, Req(5, 1, 10, 1.0));  // and then the other
  EXPECT_EQ(core.Find(1), kNoSlot);
  EXPECT_EQ(core.Find(3), kNoSlot);
  EXPECT_NE(core.Find(2), kNoSlot);
  EXPECT_NE(core.Find(4), kNoSlot);
  EXPECT_NE(core.Find(5), kNoSlot);
}

// A latency that is NaN, infinite, zero or negative weighs as 0 in the
// benefit; the largest finite one counts.
TEST(VaacPlusPolicy, OnlyPositiveFiniteLatenciesCount) {
  CacheCore core({.capacity_bytes = 30}, Make(30, /*all*/ 0, 0));
  Access(core, Req(1, 1, 10, 5.0));  // a running mean > 0
  const double zero = Plus(core)->Benefit(Req(2, 1, 10, 0.0));
  for (const double x :
       {std::numeric_limits<double>::quiet_NaN(),
        std::numeric_limits<double>::infinity(),
        -std::numeric_limits<double>::infinity(), -1.0, -0.0}) {
    EXPECT_EQ(Plus(core)->Benefit(Req(2, 1, 10, x)), zero) << x;
  }
  EXPECT_GT(
      Plus(core)->Benefit(Req(2, 1, 10, std::numeric_limits<double>::max())),
      zero);
}

TEST(VaacPlusPolicy, OneOffScanDoesNotFlushTheHotSet) {
  // A hot set of 8 objects (tool 1) fills the cache; then a scan of 400
  // one-off objects of tool 2 interleaved with the hot set. LRU keeps losing
  // the hot set to the scan; vaac-plus refuses the scan.
  auto run = [](std::unique_ptr<Policy> policy) {
    CacheCore core({.capacity_bytes = 100}, std::move(policy));
    uint64_t hot_hits = 0;
    ObjectId scan = 1000;
    for (int round = 0; round < 100; ++round) {
      for (int k = 0; k < 4; ++k) Access(core, Req(scan++, 2, 10, 1.0));
      for (ObjectId h = 1; h <= 8; ++h) {
        hot_hits += Access(core, Req(h, 1, 10, 1.0)) ? 1 : 0;
      }
    }
    return hot_hits;
  };
  const uint64_t lru = run(MakeLruPolicy({.capacity_bytes = 100}));
  const uint64_t plus = run(Make(100));
  EXPECT_LT(lru, 200u);
  EXPECT_GT(plus, 700u);  // of 800 hot requests
}

TEST(VaacPlusPolicy, MetadataStaysWithinTheBudget) {
  CacheCore core({.capacity_bytes = 1 << 20}, Make(1 << 20));
  for (ObjectId id = 0; id < 20000; ++id) {
    Access(core, Req(id % 5000, static_cast<uint32_t>(id % 7), 100, 1.0));
  }
  // Heap cell + F + density + the ghost's share; the core adds its own.
  EXPECT_LE(core.policy().MetadataBytes(), 64u);
}

TEST(VaacPlusPolicy, RegistryRowAcceptsItsKnobsOnly) {
  PolicyParams p{.capacity_bytes = 100};
  p.knobs["eta"] = 0.2;
  p.knobs["admission"] = 1;
  EXPECT_TRUE(MakePolicy("vaac-plus", p).ok());
  p.knobs["eta"] = 1.5;  // outside [0, 1]
  EXPECT_FALSE(MakePolicy("vaac-plus", p).ok());
  p.knobs["eta"] = 0.2;
  p.knobs["admit_rule"] = 1;  // a vaac knob, not a vaac-plus one
  EXPECT_FALSE(MakePolicy("vaac-plus", p).ok());
  const std::vector<std::string_view> names =
      KnobNames(*FindPolicy("vaac-plus"));
  EXPECT_EQ(names.size(), 13u);
  EXPECT_EQ(names.front(), "lambda1");
  EXPECT_EQ(names.back(), "group_by_user");
}

}  // namespace
}  // namespace toolcache
