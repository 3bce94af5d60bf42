// VaacPlusPolicy ("vaac-plus"): VAAC with the two weaknesses measured in
// docs/EVALUATION.md fixed, keeping its value model (latency, cost, size and
// TTL risk weighted by lambda1..lambda3) and its hierarchical feature grouping
// (Algorithm 1). Not the paper's algorithm: `vaac` stays that.
//
//   benefit B of one hit = (l1*lat/mean_lat + l2*cost/mean_cost) / (l1 + l2)
//                          * (1 - l3*exp(-TTL/tau))
//       the value model's terms, normalized by running means instead of
//       min-max, so the cheapest tool still has a benefit > 0 (with min-max
//       it is worth exactly 0 and is never kept).
//   expected reuse F     = r + p_g
//       r   = how often the object was requested before (a TinyLFU count-min
//             sketch with periodic halving, so history survives eviction and
//             fades), p_g = the re-reference ratio of the object's feature
//             group (Algorithm 1's grouping over "was this object requested
//             before?"): a group prior for objects seen for the first time.
//   eviction             : the whole cache by H = L + F * B / size, L = the H
//       of the last victim (GreedyDual aging). Replaces v-LRU, whose score
//       has no frequency and only re-ranks the LRU tail.
//   admission            : when the result does not fit, it duels with the
//       entry that would be evicted first and is admitted iff
//       F_c*B_c/size_c >= gamma * F_v*B_v/size_v. gamma in [0, 1] adapts by
//       regret: a refused candidate that comes back while remembered lowers
//       gamma (admit more), an evicted entry that comes back raises it.
//       Replaces the UCB1 group bandit, which refuses whole groups and lags
//       behind popularity shifts.
//
// Knobs (PolicyParams::knobs): lambda1, lambda2, lambda3 (0.8, 0.2, 0.2, the
// paper's), tau (0 = mean TTL of inserted entries), eta (0.1), gamma0 (0.5),
// group_prior (1; 0 = F = r + 1), admission (2 = adaptive duel; 1 = strict
// duel, gamma = 1; 0 = admit everything), t1, hr, smin, b, group_by_user
// (grouping, as for vaac). The switches exist for the ablation in
// docs/VAAC.md.
//
// Thread-safety: none (see policy.h).
//
// Example:
//   auto policy = MakePolicy("vaac-plus", {.capacity_bytes = 1 << 20});
//   CacheCore core({.capacity_bytes = 1 << 20}, std::move(*policy));
#ifndef TOOLCACHE_SRC_POLICY_VAAC_PLUS_POLICY_H_
#define TOOLCACHE_SRC_POLICY_VAAC_PLUS_POLICY_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "src/policy/feature_grouping.h"
#include "src/policy/flat_map.h"
#include "src/policy/frequency_sketch.h"
#include "src/policy/slot_heap.h"
#include "src/policy/value_model.h"
#include "toolcache/policy.h"

namespace toolcache {

enum class PlusAdmission {
  kAll = 0,       // admit every result (GreedyDual eviction only)
  kStrict = 1,    // duel with gamma fixed at 1
  kAdaptive = 2,  // duel with gamma learned from regret (the default)
};

struct VaacPlusOptions {
  ValueModelOptions value;  // lambda1..3 and tau, as for vaac
  GroupingOptions grouping;
  bool group_prior = true;
  PlusAdmission admission = PlusAdmission::kAdaptive;
  // Paper-silent (ours): regret learning rate; each remembered refusal that
  // returns multiplies gamma by (1 - eta), each remembered eviction moves it
  // eta of the way to 1 (ARC-style adaptation, in the spirit of LeCaR).
  double eta = 0.1;
  // Paper-silent (ours): start half way between "admit all" and "strict".
  double gamma0 = 0.5;
  // Bytes the sketch assumes per entry until the cache holds entries
  // (as W-TinyLFU: capacity_bytes / 4 KiB, at least 16 entries).
  uint64_t capacity_bytes = 0;
  uint64_t capacity_entries = 0;
};

// Reads the knobs listed in kVaacPlusKnobs over the defaults.
VaacPlusOptions VaacPlusOptionsFromParams(const PolicyParams& params);
// The registry row's knobs and their ranges (see kVaacKnobs).
inline constexpr std::string_view kVaacPlusKnobs =
    "lambda1=0:,lambda2=0:,lambda3=0:1,tau=0:,eta=0:1,gamma0=0:1,"
    "group_prior=0:1,admission=0:2,t1=0:,hr=0:1,smin=0:,b=1:1e12,"
    "group_by_user=0:1";

class VaacPlusPolicy final : public Policy {
 public:
  explicit VaacPlusPolicy(const VaacPlusOptions& options);

  std::string_view name() const override { return "vaac-plus"; }
  bool Admit(const Request& req) override;
  void OnInsert(Slot slot, const Request& req) override;
  void OnHit(Slot slot, const Request& req) override;
  void OnRemove(Slot slot) override;
  Slot Victim() override;
  uint64_t MetadataBytes() const override;

  // Introspection for tests and `explain`.
  double gamma() const { return gamma_; }
  // Benefit B of one hit of `req` with the current running means.
  double Benefit(const Request& req) const;
  // Expected reuse F of the last request seen by Admit/OnHit.
  double last_reuse() const { return reuse_; }
  // The priority H of a cached entry.
  double Priority(Slot slot) const { return heap_.KeyOf(slot).h; }
  std::optional<double> ValueScore(Slot slot) const override {
    return Priority(slot);
  }
  double clock() const { return clock_; }
  uint64_t refusals() const { return refusals_; }
  const FeatureGrouping& grouping() const { return grouping_; }

 private:
  struct SlotMeta {
    float reuse = 0;    // F at the last touch
    float density = 0;  // B / size at the last touch
  };
  // A FIFO memory of the last `capacity` refused candidates (tag 0) and
  // evicted entries (tag 1), for the regret signal. Above kGhostBudget
  // cache entries it is spatially sampled (only ids whose hash falls in a
  // fraction kGhostBudget / entries are remembered), so it covers the same
  // span of requests in at most kGhostBudget ids.
  class Ghost {
   public:
    // Remembers `id` with `tag` (replacing an older memory of it) and
    // forgets the oldest beyond `capacity`.
    void Add(ObjectId id, uint32_t tag, uint64_t capacity);
    // The tag of `id` (and forgets it), or FlatIdMap::kEmpty.
    uint32_t Take(ObjectId id);
    uint64_t MemoryBytes() const;

   private:
    std::vector<ObjectId> ring_;
    uint64_t head_ = 0;  // position of the oldest memory in ring_
    uint64_t size_ = 0;
    uint64_t next_ = 0;  // sequence number of the next memory
    FlatIdMap index_;    // id -> (sequence mod 2^31) * 2 + tag
  };

  // A request's latency and cost as the model uses them (NaN, infinite or
  // negative read as 0), worked out once per request: Observe and Density
  // both read them.
  struct Measures {
    double latency;
    double cost;
  };
  static Measures MeasuresOf(const Request& req);
  // Updates the statistics with one request and returns its F.
  // Observe, Density and Touch run on every request, hit or insert: forced
  // inline (GCC kept them out of line, a call and register saves each).
  // (Defined inline in vaac_plus_policy.cc, their only user.)
  [[gnu::always_inline]] inline double Observe(const Request& req,
                                               const Measures& m, bool cached);
  [[gnu::always_inline]] inline double Density(const Request& req,
                                               const Measures& m) const;
  // Benefit's body, inlined into Density.
  [[gnu::always_inline]] inline double BenefitOf(const Request& req,
                                                 const Measures& m) const;
  // Remembers `id` with `tag` if the sample covers it.
  void Remember(ObjectId id, uint32_t tag);
  // Whether the ghost sample covers `id` at the current cache size.
  bool Sampled(ObjectId id) const;
  // The same with the cache's entry count given (Remember reads it once).
  static bool Sampled(ObjectId id, uint64_t entries);
  [[gnu::always_inline]] inline void Touch(Slot slot);

  VaacPlusOptions options_;
  ValueModel model_;  // only for the TTL risk term and tau
  FeatureGrouping grouping_;
  FrequencySketch sketch_;
  SlotHeap<ClockPriority, ClockPriorityLess, 4> heap_;
  std::vector<SlotMeta> slots_;
  Ghost ghost_;
  double clock_ = 0;  // L
  uint64_t tick_ = 0;
  double gamma_;
  double reuse_ = 1;  // F of the request being handled
  uint64_t observed_ = 0;
  double latency_sum_ = 0;
  double cost_sum_ = 0;
  uint64_t refusals_ = 0;
};

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_POLICY_VAAC_PLUS_POLICY_H_
