// Tests of CACA / VAAC (GroupBanditPolicy): admission through the bandit,
// v-LRU eviction in its exact and sampled forms, registry knobs.
#include "src/policy/vaac_policy.h"

#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "src/policy/factories.h"
#include "toolcache/policy.h"

namespace toolcache {
namespace {

// An EntryView whose fullness the test sets directly.
class FakeView final : public EntryView {
 public:
  const EntryMeta& meta(Slot) const override { return meta_; }
  uint64_t used_bytes() const override { return used; }
  uint64_t capacity_bytes() const override { return capacity; }
  uint64_t entry_count() const override { return 0; }
  uint64_t used = 0;
  uint64_t capacity = 100;

 private:
  EntryMeta meta_;
};

Request Req(ObjectId id, uint32_t tool, double latency = 0.5) {
  Request r;
  r.id = id;
  r.tool = tool;
  r.size = 1;
  r.latency = latency;
  return r;
}

VaacOptions BanditOptions() {
  VaacOptions o;
  // Split every tool that has >= 2 requests in a window of 10.
  o.grouping.t1 = 2;
  o.grouping.hr = 1.0;
  o.grouping.smin = 1;
  o.grouping.b = 10;
  o.grouping.group_by_user = false;
  return o;
}

TEST(VaacPolicyTest, AdmitsEveryRequestWhileSpaceIsFree) {
  GroupBanditPolicy p(BanditOptions());
  FakeView view;
  p.Bind(&view);
  for (ObjectId id = 1; id <= 30; ++id) {
    EXPECT_TRUE(p.Admit(Req(id, static_cast<uint32_t>(id % 3))));
  }
  EXPECT_EQ(p.last_selected(), UINT32_MAX);  // no bandit round was needed
  EXPECT_EQ(p.rounds(), 30u);
}

TEST(VaacPolicyTest, UnexploredGroupWithZeroHitsGetsExploredWhenFull) {
  GroupBanditPolicy p(BanditOptions());
  FakeView view;
  p.Bind(&view);
  // Nine misses from tools 1 and 2 while space is free, then a hit as the
  // 10th request: the regroup happens without a bandit round, so both new
  // groups start unexplored (N = 0).
  for (ObjectId id = 1; id <= 9; ++id) {
    ASSERT_TRUE(p.Admit(Req(id, id <= 5 ? 1 : 2)));
  }
  p.OnInsert(0, Req(9, 2));
  p.OnHit(0, Req(9, 2));
  ASSERT_EQ(p.grouping().regroups(), 1u);
  const uint32_t g1 = p.grouping().GroupOf(Req(0, 1));
  const uint32_t g2 = p.grouping().GroupOf(Req(0, 2));
  ASSERT_NE(g1, g2);
  ASSERT_EQ(p.grouping().group(g1).selections, 0u);
  ASSERT_EQ(p.grouping().group(g1).hits, 0u);
  view.used = view.capacity;  // full from now on
  // Tool 1's group has N = 0 (infinite UCB) and no hits: explored.
  EXPECT_TRUE(p.Admit(Req(11, 1)));
  EXPECT_EQ(p.last_selected(), g1);
  // Now tool 2's group is the only unexplored arm: it is selected, so this
  // tool-1 request is refused.
  EXPECT_FALSE(p.Admit(Req(12, 1)));
  EXPECT_EQ(p.last_selected(), g2);
  EXPECT_EQ(p.grouping().group(g1).selections, 1u);
  EXPECT_EQ(p.grouping().group(g2).selections, 1u);
  // C counts real admissions only.
  EXPECT_EQ(p.grouping().group(g1).admissions, 1u);
  EXPECT_EQ(p.grouping().group(g2).admissions, 0u);
}

TEST(VaacPolicyTest, HitsMakeAGroupWinTheBandit) {
  VaacOptions o = BanditOptions();
  o.c = 0;  // pure exploitation once every arm is explored
  GroupBanditPolicy p(o);
  FakeView view;
  p.Bind(&view);
  for (ObjectId id = 1; id <= 10; ++id) p.Admit(Req(id, id <= 5 ? 1 : 2));
  view.used = view.capacity;
  p.Admit(Req(11, 1));  // explore group 1
  p.Admit(Req(12, 2));  // explore group 2
  // Tool 2 gets hits (OnHit records them in its group): H2 > H1 = 0.
  p.OnInsert(0, Req(12, 2));
  for (int i = 0; i < 3; ++i) p.OnHit(0, Req(12, 2));
  EXPECT_FALSE(p.Admit(Req(13, 1)));  // group 2 is the argmax
  EXPECT_TRUE(p.Admit(Req(14, 2)));
}

TEST(VaacPolicyTest, VaacRewardIsCacaRewardTimesTheValueFactor) {
  FakeView view;
  auto feed = [&](GroupBanditPolicy& p) {
    p.Bind(&view);
    for (ObjectId id = 1; id <= 10; ++id) {
      p.Admit(Req(id, id % 2 == 0 ? 1 : 2, id % 2 == 0 ? 0.1 : 2.0));
    }
    p.OnInsert(0, Req(2, 1, 0.1));
    p.OnHit(0, Req(2, 1, 0.1));
  };
  VaacOptions caca_opt = BanditOptions();
  caca_opt.reward.use_value = false;
  GroupBanditPolicy caca(caca_opt);
  GroupBanditPolicy vaac(BanditOptions());
  feed(caca);
  feed(vaac);
  const uint32_t g1 = vaac.grouping().GroupOf(Req(0, 1));
  const uint32_t g2 = vaac.grouping().GroupOf(Req(0, 2));
  ASSERT_EQ(g1, caca.grouping().GroupOf(Req(0, 1)));
  const double v1 = vaac.grouping().group(g1).MeanValue();
  const double v2 = vaac.grouping().group(g2).MeanValue();
  EXPECT_LT(v1, v2);  // tool 2 is the slow one
  EXPECT_GT(caca.Reward(g1), 0);
  EXPECT_NEAR(vaac.Reward(g1), caca.Reward(g1) * std::log(1 + v1), 1e-12);
  EXPECT_NEAR(vaac.Reward(g2), caca.Reward(g2) * std::log(1 + v2), 1e-12);
}

// Builds a core of `n` unit-size entries running `policy`.
std::unique_ptr<CacheCore> Core(uint64_t n, std::unique_ptr<Policy> policy) {
  return std::make_unique<CacheCore>(CacheCoreOptions{.capacity_bytes = n},
                                     std::move(policy));
}

GroupBanditPolicy& Bandit(CacheCore& core) {
  return static_cast<GroupBanditPolicy&>(core.policy());
}

VaacOptions SingleGroupVaac(EvictionMode mode) {
  VaacOptions o;
  o.grouping.b = 1u << 30;  // one group: the bandit always picks it
  o.eviction = mode;
  return o;
}

void Insert(CacheCore& core, ObjectId id, double latency, double now = 0) {
  Request r = Req(id, 1, latency);
  r.now = now;
  ASSERT_NE(core.Lookup(r), LookupOutcome::kHit);
  ASSERT_NE(core.Insert(r), kNoSlot);
}

TEST(VaacPolicyTest, VlruEvictsLowestScoreInsideTheWindowNeverOutside) {
  for (EvictionMode mode :
       {EvictionMode::kVlruExact, EvictionMode::kVlruSampled}) {
    auto core =
        Core(20, std::make_unique<GroupBanditPolicy>(SingleGroupVaac(mode)));
    // Two throwaway entries set the latency range to [0, 1].
    Insert(*core, 1000, 0.0);
    Insert(*core, 1001, 1.0);
    ASSERT_TRUE(core->Erase(1000));
    ASSERT_TRUE(core->Erase(1001));
    Insert(*core, 0, 1.0);  // least recent, high value
    Insert(*core, 1, 0.3);  // 2nd least recent, lower value
    for (ObjectId id = 2; id < 20; ++id) Insert(*core, id, 0.0);  // lowest
    ASSERT_EQ(core->view().entry_count(), 20u);
    EXPECT_EQ(Bandit(*core).WindowSize(), 2u);  // ceil(0.1 * 20)
    Insert(*core, 20, 0.0);                     // forces one eviction
    EXPECT_EQ(core->Find(1), kNoSlot) << "the window's lowest e goes";
    EXPECT_NE(core->Find(0), kNoSlot);
    for (ObjectId id = 2; id <= 20; ++id) EXPECT_NE(core->Find(id), kNoSlot);
  }
}

TEST(VaacPolicyTest, VlruBreaksTiesTowardsTheLeastRecent) {
  for (EvictionMode mode :
       {EvictionMode::kVlruExact, EvictionMode::kVlruSampled}) {
    auto core =
        Core(30, std::make_unique<GroupBanditPolicy>(SingleGroupVaac(mode)));
    for (ObjectId id = 0; id < 30; ++id) Insert(*core, id, 0.5);
    Insert(*core, 30, 0.5);
    EXPECT_EQ(core->Find(0), kNoSlot);
    EXPECT_NE(core->Find(1), kNoSlot);
  }
}

TEST(VaacPolicyTest, HitsProtectAnEntryInsideTheWindow) {
  auto core = Core(10, std::make_unique<GroupBanditPolicy>(
                           SingleGroupVaac(EvictionMode::kVlruExact)));
  VaacOptions o = SingleGroupVaac(EvictionMode::kVlruExact);
  o.window_fraction = 0.2;  // window of 2
  core = Core(10, std::make_unique<GroupBanditPolicy>(o));
  for (ObjectId id = 0; id < 10; ++id) Insert(*core, id, 0.5);
  // A hit on 0 makes it most recent; 1 and 2 are the window now.
  Request hit = Req(0, 1, 0.5);
  ASSERT_EQ(core->Lookup(hit), LookupOutcome::kHit);
  Insert(*core, 10, 0.5);
  EXPECT_EQ(core->Find(1), kNoSlot);
  EXPECT_NE(core->Find(0), kNoSlot);
}

TEST(VaacPolicyTest, CacaEvictsTheLeastRecentlyUsed) {
  VaacOptions o;
  o.eviction = EvictionMode::kLru;
  o.grouping.b = 1u << 30;
  auto core = Core(10, std::make_unique<GroupBanditPolicy>(o));
  for (ObjectId id = 0; id < 10; ++id) Insert(*core, id, id == 0 ? 0.0 : 1.0);
  Request hit = Req(0, 1, 0.0);
  ASSERT_EQ(core->Lookup(hit), LookupOutcome::kHit);
  Insert(*core, 10, 1.0);
  EXPECT_EQ(core->Find(1), kNoSlot);  // LRU, whatever the values
  EXPECT_NE(core->Find(0), kNoSlot);
}

// A deterministic mixed trace: Zipf-ish ids over 4 tools, varied latency,
// size and TTL. Returns the hit sequence.
std::vector<bool> RunTrace(const std::string& policy, uint64_t capacity,
                           std::map<std::string, double, std::less<>> knobs,
                           uint64_t requests = 20000, uint64_t seed = 7) {
  PolicyParams params{.capacity_bytes = capacity, .seed = seed};
  params.knobs = std::move(knobs);
  auto made = MakePolicy(policy, params);
  EXPECT_TRUE(made.ok()) << made.status().message();
  CacheCore core({.capacity_bytes = capacity}, std::move(*made));
  std::vector<bool> hits;
  uint64_t x = 99;
  for (uint64_t i = 0; i < requests; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const double u = static_cast<double>(x >> 11) * 0x1.0p-53;
    const ObjectId id = static_cast<ObjectId>(1.0 / (u * u + 1e-3));  // skew
    Request r;
    r.id = id;
    r.tool = static_cast<uint32_t>(id % 4);
    r.param_category = id % 11;
    r.user = static_cast<uint32_t>(id % 3);
    r.size = 1 + id % 5;
    r.latency = 0.05 + static_cast<double>(id % 7) * 0.2;
    r.cost = static_cast<double>(id % 3) * 0.001;
    r.ttl = id % 2 == 0 ? 3600 : 300;
    r.now = static_cast<double>(i) * 0.5;
    r.index = i;
    const bool hit = core.Lookup(r) == LookupOutcome::kHit;
    hits.push_back(hit);
    if (!hit) (void)core.Insert(r);
  }
  return hits;
}

TEST(VaacPolicyTest, SampledFormEqualsExactWhenSampleCoversTheWindow) {
  // ~60 unit-ish entries -> window <= 7 <= 32 samples.
  EXPECT_EQ(RunTrace("vaac", 180, {}), RunTrace("vaac-sampled", 180, {}));
}

TEST(VaacPolicyTest, SampledFormIsDeterministicForAFixedSeed) {
  // Large cache: the window exceeds 4 samples, so sampling is random.
  const auto a = RunTrace("vaac-sampled", 3000, {{"sample_size", 4}});
  EXPECT_EQ(a, RunTrace("vaac-sampled", 3000, {{"sample_size", 4}}));
  EXPECT_EQ(RunTrace("caca", 3000, {}), RunTrace("caca", 3000, {}));
}

TEST(VaacPolicyTest, SampledWindowTracksTheExactWindowSize) {
  VaacOptions o = SingleGroupVaac(EvictionMode::kVlruSampled);
  auto core = Core(1000, std::make_unique<GroupBanditPolicy>(o));
  uint64_t x = 3;
  for (int i = 0; i < 5000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    Request r = Req((x >> 40) % 3000, 1, 0.5);
    if (core->Lookup(r) != LookupOutcome::kHit) (void)core->Insert(r);
    if (i % 7 == 0) (void)core->Erase((x >> 20) % 3000);
    const uint64_t n = core->view().entry_count();
    const uint64_t want = n == 0 ? 0 : std::max<uint64_t>(1, (n + 9) / 10);
    ASSERT_EQ(Bandit(*core).WindowSize(), want) << "n=" << n;
  }
}

TEST(VaacPolicyTest, ExactWindowHeapPicksWhatTheScanPicks) {
  // The exact form keeps its window as a heap; after every hook its victim
  // must be the one the paper's walk over the least recent ceil(0.1 n)
  // entries finds (hits, expiries, erases and evictions mixed; sizes vary so
  // n moves and the window grows and shrinks).
  VaacOptions o = BanditOptions();
  o.eviction = EvictionMode::kVlruExact;
  auto core = Core(400, std::make_unique<GroupBanditPolicy>(o));
  uint64_t x = 11;
  uint64_t checked = 0;
  for (int i = 0; i < 20000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const double u = static_cast<double>(x >> 11) * 0x1.0p-53;
    Request r = Req(static_cast<ObjectId>(1.0 / (u * u + 2e-3)),
                    static_cast<uint32_t>((x >> 8) % 3),
                    static_cast<double>((x >> 16) % 9) * 0.1);
    r.size = 1 + (x >> 24) % 6;
    r.ttl = (x >> 32) % 4 == 0 ? 50 : 3600;
    r.now = i * 0.25;
    core->ExpireUntil(r.now);
    if (core->Lookup(r) != LookupOutcome::kHit) (void)core->Insert(r);
    if (i % 13 == 0) (void)core->Erase((x >> 40) % 200);
    if (core->view().entry_count() == 0) continue;
    ASSERT_EQ(Bandit(*core).Victim(), Bandit(*core).VictimExactScan())
        << "request " << i;
    ++checked;
  }
  EXPECT_GT(checked, 19000u);
  EXPECT_GT(core->evictions(), 300u);
}

TEST(VaacPolicyTest, GroupByUserKnobChangesTheGrouping) {
  PolicyParams params{.capacity_bytes = 10};
  params.knobs["group_by_user"] = 0;
  auto p = MakePolicy("vaac", params);
  ASSERT_TRUE(p.ok());
  params.knobs["t1"] = -3;  // outside [0, inf): an error naming the range
  auto out_of_range = MakePolicy("vaac", params);
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_NE(out_of_range.status().message().find("'t1' = -3 is outside"),
            std::string::npos)
      << out_of_range.status().message();
  params.knobs.erase("t1");
  params.knobs["no_such_knob"] = 1;
  auto bad = MakePolicy("vaac", params);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("no_such_knob"), std::string::npos);
  PolicyParams none{.capacity_bytes = 10};
  EXPECT_TRUE(
      VaacOptionsFromParams(none, VaacVariant::kVaac).grouping.group_by_user);
  none.knobs["group_by_user"] = 0;
  EXPECT_FALSE(
      VaacOptionsFromParams(none, VaacVariant::kVaac).grouping.group_by_user);
}

TEST(VaacPolicyTest, RegistryRowsListEveryKnobTheFactoryReads) {
  for (std::string_view name : {"caca", "vaac", "vaac-sampled"}) {
    const PolicyInfo* info = FindPolicy(name);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_EQ(info->knobs, kVaacKnobs) << name;
    EXPECT_EQ(info->kind, PolicyKind::kOnline);
  }
}

TEST(VaacPolicyTest, MetadataStaysWithinBudget) {
  for (std::string_view name : {"caca", "vaac", "vaac-sampled"}) {
    auto p = MakePolicy(name, PolicyParams{.capacity_bytes = 10});
    ASSERT_TRUE(p.ok());
    EXPECT_LE((*p)->MetadataBytes(), 128u);
    EXPECT_EQ((*p)->name(), name);
  }
}

// The exact window's score classes are memory too: with entries of many
// distinct scores the report counts them beyond the per-entry constants (a
// policy with no entries reports those constants alone).
TEST(VaacPolicyTest, MetadataCountsTheExactWindowsClasses) {
  const uint64_t constants =
      GroupBanditPolicy(SingleGroupVaac(EvictionMode::kVlruExact))
          .MetadataBytes();
  auto core = Core(400, std::make_unique<GroupBanditPolicy>(
                            SingleGroupVaac(EvictionMode::kVlruExact)));
  for (ObjectId id = 1; id <= 400; ++id) {
    Insert(*core, id, static_cast<double>(id) / 400);
  }
  EXPECT_GT(core->policy().MetadataBytes(), constants);
}

TEST(VaacPolicyTest, EntryValueIsTheModelValueOfItsLastAccess) {
  auto core = Core(10, std::make_unique<GroupBanditPolicy>(
                           SingleGroupVaac(EvictionMode::kVlruExact)));
  Insert(*core, 1, 0.0);
  Insert(*core, 2, 1.0);
  Request r = Req(3, 1, 0.25);
  ASSERT_NE(core->Insert(r), kNoSlot);
  const GroupBanditPolicy& p = Bandit(*core);
  const Slot s = core->Find(3);
  EXPECT_NEAR(p.EntryValue(s), p.value_model().Value(r), 1e-6);
  // lambda1 * 0.25 + shift lambda3 (no cost, no expiry).
  EXPECT_NEAR(p.EntryValue(s), 0.8 * 0.25 + 0.2, 1e-6);
  EXPECT_NEAR(p.EntryScore(s), 0.4 + 0 + 1.0, 1e-6);
  ASSERT_EQ(core->Lookup(r), LookupOutcome::kHit);
  EXPECT_NEAR(p.EntryScore(s), 0.4 + 0.5 + 1.0, 1e-6);  // h = 1/(1+1)
}

// WindowTargets::Get answers from runs of n known to share a target; over
// random walks of n (the entry count of a cache that fills, churns and
// drains) it must give exactly Compute's answer, for window fractions that
// round differently.
TEST(VaacPolicyTest, RememberedWindowTargetIsTheComputedOne) {
  for (const double fraction : {0.1, 0.25, 1.0 / 3, 0.5, 1e-3, 1.0}) {
    WindowTargets targets(fraction);
    uint64_t state = 99;
    uint64_t n = 0;
    for (int i = 0; i < 50000; ++i) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      // Mostly +-1 steps, sometimes a jump (a large entry evicts many).
      const uint64_t r = state % 100;
      if (r < 45) {
        ++n;
      } else if (r < 90) {
        n = n > 0 ? n - 1 : 0;
      } else {
        n = state % 3000;
      }
      ASSERT_EQ(targets.Get(n), WindowTargets::Compute(fraction, n))
          << "fraction " << fraction << " n " << n;
    }
  }
  EXPECT_EQ(WindowTargets::Compute(0.1, 0), 0u);
  EXPECT_EQ(WindowTargets::Compute(0.1, 30), 3u);
  EXPECT_EQ(WindowTargets::Compute(0.1, 31), 4u);
  EXPECT_EQ(WindowTargets::Compute(0.1, 5), 1u);
}

}  // namespace
}  // namespace toolcache
