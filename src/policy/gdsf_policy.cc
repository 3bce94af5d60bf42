// GDSF eviction (see gdsf_policy.h).
//
// Invariants:
//  - heap_ holds exactly the live slots, keyed by {H, tick}; Top() is the
//    least priority, ties broken by the least recently touched (tick).
//  - freq_[s] counts the requests for slot s's object since its insertion
//    (the inserting miss counts as 1).
//  - clock_ (L) never decreases: it is set to the H of each victim, and every
//    H is computed as L + F*C/S >= L at the time it is set.
#include "src/policy/gdsf_policy.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "src/policy/slot_heap.h"

namespace toolcache {
namespace {

class GdsfPolicy final : public Policy {
 public:
  explicit GdsfPolicy(GdsfCostSource source) : source_(source) {}

  std::string_view name() const override {
    return source_ == GdsfCostSource::kLatency ? "gdsf" : "gdsf-cost";
  }

  bool Admit(const Request&) override { return true; }

  void OnInsert(Slot slot, const Request& req) override {
    if (slot >= freq_.size()) {
      freq_.resize(std::max<size_t>(64, 2 * (static_cast<size_t>(slot) + 1)));
      unit_value_.resize(freq_.size());
    }
    freq_[slot] = 1;
    unit_value_[slot] = UnitValue(req);
    Touch(slot);
  }

  void OnHit(Slot slot, const Request& req) override {
    ++freq_[slot];
    // Paper-silent: the latest cost measurement replaces the stored one.
    unit_value_[slot] = UnitValue(req);
    Touch(slot);
  }

  void OnRemove(Slot slot) override { heap_.Remove(slot); }

  Slot Victim() override {
    const Slot victim = heap_.Top();
    clock_ = heap_.KeyOf(victim).h;
    return victim;
  }

  uint64_t MetadataBytes() const override {
    // heap (key + position + cell) + frequency + cost/size.
    return decltype(heap_)::kBytesPerSlot + sizeof(uint32_t) + sizeof(double);
  }

  // H(p), the heap key the victim is chosen by.
  std::optional<double> ValueScore(Slot slot) const override {
    return heap_.KeyOf(slot).h;
  }

 private:
  // C / S for the configured cost source.
  double UnitValue(const Request& req) const {
    const double c =
        source_ == GdsfCostSource::kLatency ? req.latency : req.cost;
    // Paper-silent: a negative or NaN cost is treated as 0 (never worth more
    // than the clock), so bad input cannot corrupt the heap order.
    const double cost = c > 0 ? c : 0;
    return cost / static_cast<double>(std::max<uint64_t>(req.size, 1));
  }
  void Touch(Slot slot) {
    heap_.Set(slot,
              ClockPriority{clock_ + freq_[slot] * unit_value_[slot], ++tick_});
  }

  GdsfCostSource source_;
  double clock_ = 0;  // L
  uint64_t tick_ = 0;
  std::vector<uint32_t> freq_;
  std::vector<double> unit_value_;
  SlotHeap<ClockPriority, ClockPriorityLess, 4> heap_;
};

std::unique_ptr<Policy> MakeWithDefault(const PolicyParams& params,
                                        GdsfCostSource fallback) {
  const double knob = KnobOr(params, "cost_source",
                             fallback == GdsfCostSource::kPrice ? 1.0 : 0.0);
  const GdsfCostSource source =
      knob >= 0.5 ? GdsfCostSource::kPrice : GdsfCostSource::kLatency;
  return NewGdsfPolicy(source);
}

}  // namespace

std::unique_ptr<Policy> NewGdsfPolicy(GdsfCostSource source) {
  return std::make_unique<GdsfPolicy>(source);
}
std::unique_ptr<Policy> MakeGdsfPolicy(const PolicyParams& params) {
  return MakeWithDefault(params, GdsfCostSource::kLatency);
}
std::unique_ptr<Policy> MakeGdsfCostPolicy(const PolicyParams& params) {
  return MakeWithDefault(params, GdsfCostSource::kPrice);
}

}  // namespace toolcache
