// GroupBanditPolicy: the paper's CACA baseline and VAAC (ToolCaching
// sections 5.3-5.5, Appendix B) as one policy with three switches.
//
//   admission (both): hierarchical feature grouping (feature_grouping.h) +
//       UCB1 over the leaf groups (ucb1.h). Each cacheable miss is one
//       decision round t. A request that fits in free space is admitted
//       (the paper's initial state: "admitted if space is available");
//       otherwise the argmax-UCB group g* is selected and the request is
//       admitted iff its own group is g*.
//   reward: VAAC = Eq. 3 with the value factor (v-CACA); CACA = without it.
//   eviction: CACA = LRU; VAAC = v-LRU (Eq. 4): among the least recent
//       ceil(window_fraction * n) entries, evict the lowest
//       e = log(v + h + delta5), least recent first on ties. The exact form
//       walks that window (O(n) per eviction); the sampled form keeps the
//       window as its own segment (same membership) in a dense array and
//       scores `sample_size` random members (O(sample_size)); when the window
//       has at most sample_size entries it scores all of them, so it then
//       picks exactly what the exact form picks.
//
// This header is internal (src/policy): the registry builds these through
// MakeCacaPolicy / MakeVaacPolicy / MakeVaacSampledPolicy (factories.h);
// tests include it to inspect the groups and the bandit.
//
// Thread-safety: none (see policy.h).
//
// Example:
//   VaacOptions opt = VaacOptionsFromParams(params, VaacVariant::kVaac);
//   CacheCore core({.capacity_bytes = 1 << 20},
//                  std::make_unique<GroupBanditPolicy>(opt));
#ifndef TOOLCACHE_SRC_POLICY_VAAC_POLICY_H_
#define TOOLCACHE_SRC_POLICY_VAAC_POLICY_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/policy/feature_grouping.h"
#include "src/policy/intrusive_list.h"
#include "src/policy/score_class_queue.h"
#include "src/policy/ucb1.h"
#include "src/policy/value_model.h"
#include "toolcache/policy.h"

namespace toolcache {

enum class EvictionMode {
  kLru,          // CACA: the least recently used entry
  kVlruExact,    // VAAC: scan the whole bottom window (the paper's form)
  kVlruSampled,  // VAAC: score sample_size random members of the window
};

enum class AdmitRule {
  // Admit iff the request's group is the argmax-UCB group (Algorithm 2 read
  // literally: "select g*, admit requests from g*").
  kArgmax = 0,
  // Admit iff the request's group's UCB is >= the mean UCB of the active
  // groups (an alternative reading, kept for comparison).
  kAboveMean = 1,
};

enum class VaacVariant { kCaca, kVaac, kVaacSampled };

struct VaacOptions {
  std::string name = "vaac";
  ValueModelOptions value;
  GroupingOptions grouping;
  RewardOptions reward;
  // Paper-silent: c = 0.5, on the scale of F (<= ~1.1 with the default
  // deltas); c in {0.1, 0.5, 1.41} measured within 0.3 points (VAAC.md).
  double c = 0.5;
  AdmitRule admit_rule = AdmitRule::kArgmax;
  EvictionMode eviction = EvictionMode::kVlruExact;
  double window_fraction = 0.1;  // paper: the bottom 10% by recency
  // Paper-silent: delta5 = 1, so v + h + delta5 >= 1 and e >= 0.
  double delta5 = 1.0;
  // Paper-silent (scalable form): 32 samples per eviction.
  uint32_t sample_size = 32;
  uint64_t seed = 1;
};

// Reads the registry knobs (lambda1, lambda2, lambda3, tau, t1, hr, smin,
// b, c, delta1..delta5, window_fraction, sample_size, group_by_user,
// cumulative_grouping, admit_rule) over the defaults of `variant`.
VaacOptions VaacOptionsFromParams(const PolicyParams& params,
                                  VaacVariant variant);
// The knobs every variant accepts, with their valid ranges ("name=lo:hi",
// an empty bound is unbounded), for its registry row; MakePolicy rejects a
// value outside its range.
inline constexpr std::string_view kVaacKnobs =
    "lambda1=0:,lambda2=0:,lambda3=0:,tau=0:,t1=0:,hr=0:1,smin=0:,b=1:1e12,"
    "c=0:,delta1=0:,delta2=0:,delta3=0:,delta4=0:,delta5=1e-9:,"
    "window_fraction=1e-9:1,sample_size=1:1e6,group_by_user=0:1,"
    "cumulative_grouping=0:1,admit_rule=0:1";

// The size of VAAC's eviction window for n entries: ceil(fraction * n),
// at least 1 and at most n (0 for n = 0). Get() answers from two runs
// [lo, hi] of n known to share one target (Compute is non-decreasing in n),
// so a cache whose entry count moves within a run computes nothing.
class WindowTargets {
 public:
  explicit WindowTargets(double fraction) : fraction_(fraction) {}
  static uint64_t Compute(double fraction, uint64_t n);
  // == Compute(fraction, n). Inline: Rebalance asks after every hook.
  uint64_t Get(uint64_t n);

 private:
  struct Run {
    uint64_t lo = UINT64_MAX;  // empty while lo > hi
    uint64_t hi = 0;
    uint64_t target = 0;
  };
  double fraction_;
  Run runs_[2];
};

inline uint64_t WindowTargets::Get(uint64_t n) {
  // Compute is non-decreasing in n (each step -- the product, the
  // subtraction, ceil, max, the cast, the clamp to [1, n] -- is), so when it
  // gives the same target at lo and at hi it gives it at every n in between.
  for (const Run& run : runs_) {
    if (run.lo <= n && n <= run.hi) return run.target;
  }
  const uint64_t target = Compute(fraction_, n);
  for (Run& run : runs_) {
    if (run.lo <= run.hi && run.target == target) {
      run.lo = std::min(run.lo, n);
      run.hi = std::max(run.hi, n);
      return target;
    }
  }
  runs_[1] = runs_[0];
  runs_[0] = {n, n, target};
  return target;
}

class GroupBanditPolicy final : public Policy {
 public:
  explicit GroupBanditPolicy(const VaacOptions& options);

  std::string_view name() const override { return options_.name; }
  bool Admit(const Request& req) override;
  void OnInsert(Slot slot, const Request& req) override;
  void OnHit(Slot slot, const Request& req) override;
  void OnRemove(Slot slot) override;
  Slot Victim() override;
  uint64_t MetadataBytes() const override;
  // EntryScore: what the eviction window compares.
  std::optional<double> ValueScore(Slot slot) const override {
    return EntryScore(slot);
  }

  // Introspection for tests and `explain`.
  const FeatureGrouping& grouping() const { return grouping_; }
  const ValueModel& value_model() const { return model_; }
  uint64_t rounds() const { return rounds_; }
  // The group selected in the last bandit round (not a free-space
  // admission), or UINT32_MAX.
  uint32_t last_selected() const { return last_selected_; }
  // Eq. 3 for group `index` with the current statistics.
  double Reward(uint32_t index) const;
  // The stored (shifted) value and hit count of a cached entry.
  double EntryValue(Slot slot) const { return slots_[slot].value; }
  // Eviction score without the log: v + h + delta5 (same order as Eq. 4).
  double EntryScore(Slot slot) const;
  // Entries in the bottom window (sampled mode keeps it as a segment).
  uint64_t WindowSize() const;
  // Evictions the sampled form decided by sampling (window > sample_size);
  // the others scored the whole window, exactly as the exact form does.
  uint64_t sampled_victims() const { return sampled_victims_; }
  // TEST ONLY (exact mode): the victim found by walking the window from its
  // least recent end, the paper's O(window) form; Victim() must agree.
  Slot VictimExactScan() const;

 private:
  static constexpr uint32_t kNotInWindow = UINT32_MAX;
  struct SlotMeta {
    float value = 0;
    uint32_t hits = 0;
    uint32_t window_pos = kNotInWindow;
    uint32_t pad = 0;
    uint64_t tick = 0;  // logical time of the last insert / hit
  };
  static constexpr uint32_t kMain = 0;
  static constexpr uint32_t kWindow = 1;

  uint64_t WindowTarget(uint64_t n) const;
  void Rebalance();
  void WindowAdd(Slot slot);
  void WindowRemove(Slot slot);
  uint32_t SelectGroup(uint32_t own);
  Slot VictimExact();
  Slot VictimSampled();
  uint64_t NextRandom();
  SlotMeta& Meta(Slot slot);
  double CachedReward(uint32_t index);

  VaacOptions options_;
  ValueModel model_;
  FeatureGrouping grouping_;
  SlotLists lists_{2};
  std::vector<SlotMeta> slots_;
  std::vector<Slot> window_;  // sampled mode: the members of kWindow
  // Exact mode: the members of kWindow by (EntryScore, tick).
  ScoreClassQueue window_queue_;
  mutable WindowTargets window_targets_;
  uint64_t rounds_ = 0;
  uint64_t sampled_victims_ = 0;
  uint64_t tick_ = 0;
  uint32_t last_selected_ = UINT32_MAX;
  ObjectId pending_id_ = 0;
  double pending_value_ = 0;
  bool has_pending_ = false;
  uint64_t rng_state_;
  // F_i cache: (group version + 1, F) per group index of the current
  // grouping; cleared when the grouping changes (regroup count differs).
  std::vector<std::pair<uint64_t, double>> reward_cache_;
  uint64_t reward_cache_regroups_ = UINT64_MAX;
};

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_POLICY_VAAC_POLICY_H_
