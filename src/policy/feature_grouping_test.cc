// Tests of the periodic hierarchical feature grouping (Algorithm 1).
#include "src/policy/feature_grouping.h"

#include <bit>
#include <random>
#include <set>

#include "gtest/gtest.h"

namespace toolcache {
namespace {

Request Req(uint32_t tool, uint64_t cat = 0, uint32_t user = 0) {
  Request r;
  r.tool = tool;
  r.param_category = cat;
  r.user = user;
  return r;
}

GroupingOptions Small(bool by_user) {
  GroupingOptions o;
  o.t1 = 4;
  o.hr = 0.5;
  o.smin = 2;
  o.b = 10;
  o.group_by_user = by_user;
  return o;
}

// Tool 1: 6 misses over categories 1,1,1,2,2,3 (f = 6 >= T1, H = 0 <= Hr);
// tool 2: 4 hits (f = 4 >= T1 but H = 1 > Hr).
void FeedFirstWindow(FeatureGrouping& g) {
  for (uint64_t cat : {1, 1, 1, 2, 2, 3}) g.Record(Req(1, cat), false, 0.5);
  for (int i = 0; i < 4; ++i) g.Record(Req(2, 7), true, 0.5);
}

TEST(FeatureGroupingTest, EverythingIsOneGroupBeforeTheFirstRegroup) {
  FeatureGrouping g(Small(false));
  for (int i = 0; i < 9; ++i) g.Record(Req(i % 3, i), false, 0.1);
  EXPECT_EQ(g.regroups(), 0u);
  EXPECT_EQ(g.group_count(), 1u);
  EXPECT_EQ(g.GroupOf(Req(1, 1)), g.GroupOf(Req(2, 5)));
  EXPECT_EQ(g.group(0).accesses, 9u);
}

TEST(FeatureGroupingTest, SplitsOnlyFrequentLowHitGroupsAndMergesSmallOnes) {
  FeatureGrouping g(Small(false));
  FeedFirstWindow(g);
  ASSERT_EQ(g.regroups(), 1u);
  const Group& cat1 = g.group(g.GroupOf(Req(1, 1)));
  EXPECT_EQ(cat1.key.level, 2);
  EXPECT_FALSE(cat1.key.residual);
  EXPECT_EQ(cat1.accesses, 3u);
  const Group& cat2 = g.group(g.GroupOf(Req(1, 2)));
  EXPECT_EQ(cat2.key.level, 2);
  EXPECT_EQ(cat2.key.category, 2u);
  // Category 3 had 1 < Smin requests: merged into tool 1's residual group.
  const Group& cat3 = g.group(g.GroupOf(Req(1, 3)));
  EXPECT_TRUE(cat3.key.residual);
  EXPECT_EQ(cat3.key.level, 1);
  EXPECT_EQ(cat3.accesses, 1u);
  // A category never seen also lands in tool 1's residual group.
  EXPECT_EQ(g.GroupOf(Req(1, 99)), g.GroupOf(Req(1, 3)));
  // Tool 2 is frequent but hits well: not split, a tool-level leaf.
  const Group& tool2 = g.group(g.GroupOf(Req(2, 7)));
  EXPECT_EQ(tool2.key.level, 1);
  EXPECT_FALSE(tool2.key.residual);
  EXPECT_DOUBLE_EQ(tool2.HitRatio(), 1.0);
  EXPECT_EQ(g.GroupOf(Req(2, 8)), g.GroupOf(Req(2, 7)));
  // An unknown tool goes to the root's residual group.
  const Group& unknown = g.group(g.GroupOf(Req(42)));
  EXPECT_EQ(unknown.key.level, 0);
  EXPECT_TRUE(unknown.key.residual);
}

TEST(FeatureGroupingTest, HitRatioExactlyAtHrStillSplits) {
  FeatureGrouping g(Small(false));
  // Tool 1: 4 requests, 2 hits (H = 0.5 = Hr) -> split.
  g.Record(Req(1, 1), false, 0);
  g.Record(Req(1, 1), true, 0);
  g.Record(Req(1, 2), false, 0);
  g.Record(Req(1, 2), true, 0);
  // Tool 2: 3 requests (f < T1) -> leaf; tool 3: 3 misses -> leaf.
  for (int i = 0; i < 3; ++i) g.Record(Req(2), false, 0);
  for (int i = 0; i < 3; ++i) g.Record(Req(3), false, 0);
  ASSERT_EQ(g.regroups(), 1u);
  EXPECT_EQ(g.group(g.GroupOf(Req(1, 1))).key.level, 2);
  EXPECT_EQ(g.group(g.GroupOf(Req(2))).key.level, 1);
  EXPECT_EQ(g.group(g.GroupOf(Req(3))).key.level, 1);
}

TEST(FeatureGroupingTest, ToolBelowSminMergesIntoRoot) {
  FeatureGrouping g(Small(false));
  for (int i = 0; i < 9; ++i) g.Record(Req(1), false, 0);
  g.Record(Req(5), false, 0);  // 1 request < Smin
  const Group& small = g.group(g.GroupOf(Req(5)));
  EXPECT_EQ(small.key.level, 0);
  EXPECT_TRUE(small.key.residual);
  EXPECT_EQ(small.accesses, 1u);
}

TEST(FeatureGroupingTest, RegroupsEveryBRequests) {
  FeatureGrouping g(Small(false));
  for (int i = 0; i < 35; ++i) g.Record(Req(1), false, 0);
  EXPECT_EQ(g.regroups(), 3u);
  EXPECT_EQ(g.recorded(), 35u);
}

TEST(FeatureGroupingTest, UserLevelSplitsOnlyWithGroupByUser) {
  for (bool by_user : {false, true}) {
    FeatureGrouping g(Small(by_user));
    // Tool 1, category 1: 10 misses from users 1 (6x) and 2 (3x) and 3 (1x).
    for (uint32_t user : {1, 1, 1, 1, 1, 1, 2, 2, 2, 3}) {
      g.Record(Req(1, 1, user), false, 0);
    }
    const Group& u1 = g.group(g.GroupOf(Req(1, 1, 1)));
    const Group& u3 = g.group(g.GroupOf(Req(1, 1, 3)));
    if (by_user) {
      EXPECT_EQ(u1.key.level, 3);
      EXPECT_EQ(u1.key.user, 1u);
      EXPECT_EQ(u1.accesses, 6u);
      EXPECT_TRUE(u3.key.residual);  // 1 request < Smin -> category residual
      EXPECT_EQ(u3.key.level, 2);
    } else {
      EXPECT_EQ(u1.key.level, 2);  // category is the deepest level
      EXPECT_EQ(g.GroupOf(Req(1, 1, 1)), g.GroupOf(Req(1, 1, 3)));
    }
  }
}

TEST(FeatureGroupingTest, BanditCountersSurviveARegroupOfTheSameLeaf) {
  FeatureGrouping g(Small(false));
  FeedFirstWindow(g);
  const uint32_t tool2 = g.GroupOf(Req(2, 7));
  g.group(tool2).admissions = 5;
  g.group(tool2).selections = 7;
  FeedFirstWindow(g);  // same traffic -> same leaves
  ASSERT_EQ(g.regroups(), 2u);
  const Group& again = g.group(g.GroupOf(Req(2, 7)));
  EXPECT_EQ(again.admissions, 5u);
  EXPECT_EQ(again.selections, 7u);
  // H and V are re-seeded from the last window only.
  EXPECT_EQ(again.accesses, 4u);
}

TEST(FeatureGroupingTest, WindowModeForgetsOldTrafficCumulativeDoesNot) {
  for (bool cumulative : {false, true}) {
    GroupingOptions o = Small(false);
    o.cumulative = cumulative;
    FeatureGrouping g(o);
    FeedFirstWindow(g);  // tool 1 split
    // Second window: tool 1 hits only (H = 1), plus tool 3.
    for (int i = 0; i < 5; ++i) g.Record(Req(1, 1), true, 0);
    for (int i = 0; i < 5; ++i) g.Record(Req(3), false, 0);
    ASSERT_EQ(g.regroups(), 2u);
    const Group& t1 = g.group(g.GroupOf(Req(1, 1)));
    if (cumulative) {
      // 11 requests, 5 hits: H = 0.45 <= Hr -> still split.
      EXPECT_EQ(t1.key.level, 2);
    } else {
      // Window: 5 requests, all hits -> a tool-level leaf.
      EXPECT_EQ(t1.key.level, 1);
    }
  }
}

TEST(FeatureGroupingTest, EveryRequestMapsToExactlyOneExistingGroup) {
  FeatureGrouping g(Small(true));
  uint64_t x = 12345;
  for (int i = 0; i < 500; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const Request r = Req(static_cast<uint32_t>((x >> 60) % 4), (x >> 50) % 5,
                          static_cast<uint32_t>((x >> 40) % 3));
    const uint32_t got = g.Record(r, (x >> 33) % 3 == 0, 0.3);
    ASSERT_LT(got, g.group_count());
    ASSERT_EQ(got, g.GroupOf(r));
  }
  std::set<std::tuple<int, bool, uint32_t, uint64_t, uint32_t>> keys;
  for (const Group& grp : g.groups()) {
    EXPECT_TRUE(keys.insert({grp.key.level, grp.key.residual, grp.key.tool,
                             grp.key.category, grp.key.user})
                    .second);
  }
}

// RecordWithoutValue (vaac-plus's form) keeps the same statistics, bit for
// bit, as Record with a value of 0.0: random tools, categories, users and
// hits over many regroups, with and without user grouping, both groupings
// compared group by group after every request.
TEST(FeatureGroupingTest, RecordWithoutValueIsRecordOfZero) {
  for (const bool by_user : {false, true}) {
    std::mt19937_64 rng(by_user ? 17 : 5);
    FeatureGrouping with_value(Small(by_user));
    FeatureGrouping without(Small(by_user));
    for (int i = 0; i < 20000; ++i) {
      // Runs of one tool / category / user (the nodes' memo) and changes.
      const Request r = Req(static_cast<uint32_t>(rng() % 4), rng() % 6,
                            static_cast<uint32_t>(rng() % 3));
      const bool hit = rng() % 3 == 0;
      const uint32_t a = with_value.Record(r, hit, 0.0);
      const uint32_t b = without.RecordWithoutValue(r, hit);
      ASSERT_EQ(a, b) << i;
      ASSERT_EQ(with_value.group_count(), without.group_count()) << i;
      for (uint32_t g = 0; g < with_value.group_count(); ++g) {
        const Group& x = with_value.group(g);
        const Group& y = without.group(g);
        ASSERT_EQ(x.key, y.key) << i;
        ASSERT_EQ(x.accesses, y.accesses) << i;
        ASSERT_EQ(x.hits, y.hits) << i;
        ASSERT_EQ(std::bit_cast<uint64_t>(x.sum_value),
                  std::bit_cast<uint64_t>(y.sum_value))
            << i;
        ASSERT_EQ(x.version, y.version) << i;
      }
    }
    EXPECT_GT(with_value.regroups(), 100u);
    EXPECT_GT(with_value.group_count(), 1u);
  }
}

}  // namespace
}  // namespace toolcache
