// VaacPlusPolicy (see vaac_plus_policy.h).
//
// Invariants:
//  - heap_ holds exactly the live slots, keyed by {H, tick}; Top() is the
//    entry evicted next.
//  - clock_ (L) never decreases: Victim() raises it to the victim's H, and
//    every H is set as L + F * B / size >= L (F, B >= 0).
//  - slots_[s] describes the live entry in slot s: F and B / size as of its
//    last touch (insert or hit).
//  - the sketch counts every request the policy sees (misses via Admit, hits
//    via OnHit) exactly once; r is read before the increment.
//  - 0 <= gamma_ <= 1.
#include "src/policy/vaac_plus_policy.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "src/policy/factories.h"

namespace toolcache {
namespace {

constexpr uint32_t kRefused = 0;
constexpr uint32_t kEvicted = 1;
// As W-TinyLFU: without an entry capacity the sketch is sized for
// capacity_bytes / 4 KiB entries (at least 16) and grows with the cache.
constexpr uint64_t kAssumedEntryBytes = 4096;
// Paper-silent (ours): the ghost remembers as many ids as the cache holds
// entries, at least kMinGhost so a small cache still learns, and at most
// kGhostBudget (~70 KB) by sampling ids beyond that.
constexpr uint64_t kMinGhost = 16;
constexpr uint64_t kGhostBudget = 2048;
constexpr uint64_t kGhostSalt = 0x9e3779b97f4a7c15ULL;

// A latency or cost as the value model uses it: NaN, infinite or negative
// measurements count as 0, so they never corrupt the running means or put a
// NaN priority into the heap.
// (x > 0 && x <= DBL_MAX: the same answer for NaN, infinities, zeros and
// negatives as isfinite(x) && x > 0, in two comparisons.)
double Measured(double x) {
  return x > 0 && x <= std::numeric_limits<double>::max() ? x : 0;
}

// A count as a double: the signed conversion (one instruction; the unsigned
// one tests the top bit first) gives the same double for any count below
// 2^63, which a count of requests does not reach.
double CountToDouble(uint64_t n) {
  return static_cast<double>(static_cast<int64_t>(n));
}

}  // namespace

void VaacPlusPolicy::Ghost::Add(ObjectId id, uint32_t tag, uint64_t capacity) {
  if (ring_.size() < capacity) {
    // Grow the ring, keeping the memories in FIFO order from position 0.
    std::vector<ObjectId> grown(std::max<uint64_t>(capacity, 2 * ring_.size()));
    for (uint64_t i = 0; i < size_; ++i) {
      grown[i] = ring_[(head_ + i) % ring_.size()];
    }
    ring_.swap(grown);
    head_ = 0;
    // At most half the buckets in use (the growth rule alone allows 3/4):
    // a miss probes and a deletion shifts far less. The largest table is
    // the one the growth rule reaches at kGhostBudget ids anyway (4,096
    // buckets). Only the layout changes: the same ids, the same values.
    index_.ReserveBuckets(2 * capacity);
  }
  while (size_ >= capacity && size_ > 0) {  // forget the oldest
    const ObjectId old = ring_[head_];
    const uint64_t seq = next_ - size_;
    // Its memory, unless `old` was remembered again since (a newer seq).
    index_.EraseIf(
        old, [seq](uint32_t v) { return (v >> 1) == (seq & 0x3fffffffu); });
    // Wraps without a division (head_ < ring size, size_ <= ring size).
    if (++head_ == ring_.size()) head_ = 0;
    --size_;
  }
  index_.Assign(id, static_cast<uint32_t>((next_ & 0x3fffffffu) << 1 | tag));
  uint64_t tail = head_ + size_;
  if (tail >= ring_.size()) tail -= ring_.size();
  ring_[tail] = id;
  ++size_;
  ++next_;
}

uint32_t VaacPlusPolicy::Ghost::Take(ObjectId id) {
  // Forgets it (its ring cell is skipped when it ages out).
  uint32_t v = FlatIdMap::kEmpty;
  index_.EraseIf(id, [&v](uint32_t found) {
    v = found;
    return true;
  });
  return v == FlatIdMap::kEmpty ? v : v & 1;
}

uint64_t VaacPlusPolicy::Ghost::MemoryBytes() const {
  return ring_.size() * sizeof(ObjectId) + index_.MemoryBytes();
}

VaacPlusPolicy::VaacPlusPolicy(const VaacPlusOptions& options)
    : options_(options),
      model_(options.value),
      grouping_(options.grouping),
      gamma_(std::clamp(options.gamma0, 0.0, 1.0)) {
  if (options_.admission == PlusAdmission::kStrict) gamma_ = 1;
  const uint64_t expected =
      options.capacity_entries > 0
          // The sketch grows with the entries (EnsureCapacity): a huge
          // limit allocates nothing up front.
          ? std::min<uint64_t>(options.capacity_entries, uint64_t{1} << 20)
          : std::clamp<uint64_t>(options.capacity_bytes / kAssumedEntryBytes,
                                 16, uint64_t{1} << 16);
  sketch_.Resize(expected);
}

double VaacPlusPolicy::Benefit(const Request& req) const {
  return BenefitOf(req, MeasuresOf(req));
}

VaacPlusPolicy::Measures VaacPlusPolicy::MeasuresOf(const Request& req) {
  return Measures{Measured(req.latency), Measured(req.cost)};
}

inline double VaacPlusPolicy::BenefitOf(const Request& req,
                                        const Measures& m) const {
  const double n = CountToDouble(std::max<uint64_t>(observed_, 1));
  const double mean_latency = latency_sum_ / n;
  const double mean_cost = cost_sum_ / n;
  const double l1 = options_.value.lambda1;
  const double l2 = options_.value.lambda2;
  double b = 0;
  double weight = 0;
  // Paper-silent (ours): a feature whose running mean is 0 (no tool reports
  // it) drops out and the other's weight becomes 1, so a free workload is
  // ranked by latency alone and a workload without timings by cost alone.
  if (mean_latency > 0) {
    b += l1 * m.latency / mean_latency;
    weight += l1;
  }
  if (mean_cost > 0) {
    b += l2 * m.cost / mean_cost;
    weight += l2;
  }
  // Neither latency nor cost known: every hit is worth the same (hit ratio).
  b = weight > 0 ? b / weight : 1.0;
  // The paper's TTL risk (Eq. 2's third term) as a discount in [1 - l3, 1].
  const double risk = model_.StalenessRisk(req.ttl);
  return b * std::max(0.0, 1.0 - options_.value.lambda3 * risk);
}

inline double VaacPlusPolicy::Density(const Request& req,
                                      const Measures& m) const {
  return BenefitOf(req, m) /
         static_cast<double>(std::max<uint64_t>(req.size, 1));
}

inline double VaacPlusPolicy::Observe(const Request& req, const Measures& m,
                                      bool cached) {
  const uint32_t before = sketch_.FrequencyThenIncrement(req.id);
  ++observed_;
  latency_sum_ += m.latency;
  cost_sum_ += m.cost;
  // A hit is a re-reference even when the sketch has halved it away.
  const bool reref = cached || before > 0;
  const uint32_t g = grouping_.RecordWithoutValue(req, reref);
  const double r = cached ? std::max<uint32_t>(before, 1) : before;
  if (!options_.group_prior) return r + 1;
  const Group& group = grouping_.group(g);
  // Paper-silent (ours): Laplace-smoothed re-reference ratio, so a new group
  // starts at 1/2 instead of 0 or 1.
  const double prior =
      (CountToDouble(group.hits) + 1.0) / (CountToDouble(group.accesses) + 2.0);
  return r + prior;
}

bool VaacPlusPolicy::Admit(const Request& req) {
  const Measures m = MeasuresOf(req);
  reuse_ = Observe(req, m, /*cached=*/false);
  if (options_.admission == PlusAdmission::kAdaptive) {
    const uint32_t tag =
        Sampled(req.id) ? ghost_.Take(req.id) : FlatIdMap::kEmpty;
    if (tag == kRefused) {
      gamma_ *= 1 - options_.eta;  // refusing it cost a hit: admit more
    } else if (tag == kEvicted) {
      gamma_ += options_.eta * (1 - gamma_);  // evicting it did: protect more
    }
    gamma_ = std::clamp(gamma_, 0.0, 1.0);
  }
  if (options_.admission == PlusAdmission::kAll || heap_.empty() ||
      view_->Fits(req.size)) {
    return true;  // free space costs nothing
  }
  // An object the core refuses anyway (larger than the whole cache, or
  // already expired) is no refusal of ours: no duel, no regret memory, so
  // its repeats cannot drive gamma down.
  if (std::max<uint64_t>(req.size, 1) > view_->capacity_bytes() ||
      !(req.ttl > 0)) {
    return true;
  }
  // Paper-silent (ours): duel with the first victim only, by density, even
  // when the result would displace several entries.
  const SlotMeta& v = slots_[heap_.Top()];
  const double candidate = reuse_ * Density(req, m);
  const double victim =
      static_cast<double>(v.reuse) * static_cast<double>(v.density);
  if (candidate >= gamma_ * victim) return true;
  ++refusals_;
  if (options_.admission == PlusAdmission::kAdaptive) {
    Remember(req.id, kRefused);
  }
  return false;
}

void VaacPlusPolicy::OnInsert(Slot slot, const Request& req) {
  if (slot >= slots_.size()) {
    slots_.resize(std::max<size_t>(64, 2 * (static_cast<size_t>(slot) + 1)));
  }
  model_.ObserveInsertedTtl(req.ttl);
  slots_[slot] = {static_cast<float>(reuse_),
                  static_cast<float>(Density(req, MeasuresOf(req)))};
  sketch_.EnsureCapacity(view_->entry_count());
  Touch(slot);
}

void VaacPlusPolicy::OnHit(Slot slot, const Request& req) {
  const Measures m = MeasuresOf(req);
  reuse_ = Observe(req, m, /*cached=*/true);
  // The latest measurement replaces the stored one (as GDSF).
  slots_[slot] = {static_cast<float>(reuse_),
                  static_cast<float>(Density(req, m))};
  Touch(slot);
}

void VaacPlusPolicy::OnRemove(Slot slot) { heap_.Remove(slot); }

Slot VaacPlusPolicy::Victim() {
  const Slot victim = heap_.Top();
  clock_ = heap_.KeyOf(victim).h;
  if (options_.admission == PlusAdmission::kAdaptive) {
    Remember(view_->meta(victim).id, kEvicted);
  }
  return victim;
}

bool VaacPlusPolicy::Sampled(ObjectId id) const {
  return Sampled(id, view_->entry_count());
}

bool VaacPlusPolicy::Sampled(ObjectId id, uint64_t entries) {
  if (entries <= kGhostBudget) return true;
  // The top 53 bits of a mixed id as a uniform fraction in [0, 1).
  const double u =
      static_cast<double>(MixId(id ^ kGhostSalt) >> 11) * 0x1.0p-53;
  return u * static_cast<double>(entries) < static_cast<double>(kGhostBudget);
}

void VaacPlusPolicy::Remember(ObjectId id, uint32_t tag) {
  const uint64_t entries = view_->entry_count();
  if (!Sampled(id, entries)) return;
  ghost_.Add(id, tag, std::clamp<uint64_t>(entries, kMinGhost, kGhostBudget));
}

inline void VaacPlusPolicy::Touch(Slot slot) {
  const SlotMeta& m = slots_[slot];
  heap_.Set(slot, ClockPriority{clock_ + static_cast<double>(m.reuse) *
                                             static_cast<double>(m.density),
                                ++tick_});
}

uint64_t VaacPlusPolicy::MetadataBytes() const {
  const uint64_t entries =
      view_ != nullptr ? std::max<uint64_t>(view_->entry_count(), 1) : 1;
  return decltype(heap_)::kBytesPerSlot + sizeof(SlotMeta) +
         ghost_.MemoryBytes() / entries;
}

VaacPlusOptions VaacPlusOptionsFromParams(const PolicyParams& params) {
  VaacPlusOptions o;
  o.capacity_bytes = params.capacity_bytes;
  o.capacity_entries = params.capacity_entries;
  o.value.lambda1 = std::max(0.0, KnobOr(params, "lambda1", o.value.lambda1));
  o.value.lambda2 = std::max(0.0, KnobOr(params, "lambda2", o.value.lambda2));
  o.value.lambda3 =
      std::clamp(KnobOr(params, "lambda3", o.value.lambda3), 0.0, 1.0);
  o.value.tau = KnobOr(params, "tau", o.value.tau);
  o.eta = std::clamp(KnobOr(params, "eta", o.eta), 0.0, 1.0);
  o.gamma0 = std::clamp(KnobOr(params, "gamma0", o.gamma0), 0.0, 1.0);
  o.group_prior = KnobOr(params, "group_prior", 1) >= 0.5;
  const double a = KnobOr(params, "admission", 2);
  o.admission = a < 0.5   ? PlusAdmission::kAll
                : a < 1.5 ? PlusAdmission::kStrict
                          : PlusAdmission::kAdaptive;
  o.grouping.t1 = std::max(0.0, KnobOr(params, "t1", o.grouping.t1));
  o.grouping.hr = std::clamp(KnobOr(params, "hr", o.grouping.hr), 0.0, 1.0);
  o.grouping.smin = std::max(0.0, KnobOr(params, "smin", o.grouping.smin));
  o.grouping.b = static_cast<uint64_t>(
      std::max(1.0, KnobOr(params, "b", static_cast<double>(o.grouping.b))));
  o.grouping.group_by_user = KnobOr(params, "group_by_user", 1) >= 0.5;
  return o;
}

std::unique_ptr<Policy> MakeVaacPlusPolicy(const PolicyParams& params) {
  return std::make_unique<VaacPlusPolicy>(VaacPlusOptionsFromParams(params));
}

}  // namespace toolcache
