// GDSF eviction (see gdsf_policy.h).
//
// Invariants:
//  - heap_ holds exactly the live slots, keyed by {H, tick}; Top() is the
//    least priority, ties broken by the least recently touched (tick). A
//    hit that raises H leaves the entry's heap cell as a lower bound
//    (LazyClockHeap); Top() settles it first, so the victim is the one an
//    eagerly sifted heap would have on top.
//  - heap_.payload(s).freq counts the requests for slot s's object since
//    its insertion (the inserting miss counts as 1).
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
  // What GDSF keeps per entry, beside its priority.
  struct Entry {
    double unit_value;  // C / S of the latest request
    uint32_t freq;      // requests since insertion
  };

 public:
  GdsfPolicy(GdsfCostSource source, bool lazy_heap)
      : source_(source), heap_(lazy_heap) {}

  std::string_view name() const override {
    return source_ == GdsfCostSource::kLatency ? "gdsf" : "gdsf-cost";
  }

  bool Admit(const Request&) override { return true; }

  void OnInsert(Slot slot, const Request& req) override {
    const Entry e{UnitValue(req), 1};
    heap_.Insert(slot, Touch(e), e);
  }

  void OnHit(Slot slot, const Request& req) override {
    // Paper-silent: the latest cost measurement replaces the stored one.
    const Entry e{UnitValue(req), heap_.payload(slot).freq + 1};
    heap_.Update(slot, Touch(e), e);
  }

  void OnRemove(Slot slot) override { heap_.Remove(slot); }

  Slot Victim() override {
    const Slot victim = heap_.Top();
    clock_ = heap_.KeyOf(victim).h;
    return victim;
  }

  uint64_t MetadataBytes() const override {
    // heap: cell + position + record of {H, tick}, cost/size, frequency.
    return decltype(heap_)::kBytesPerSlot;
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
  // The priority of an entry touched now (a fresh tick).
  ClockPriority Touch(const Entry& e) {
    return ClockPriority{clock_ + e.freq * e.unit_value, ++tick_};
  }

  GdsfCostSource source_;
  double clock_ = 0;  // L
  uint64_t tick_ = 0;
  LazyClockHeap<4, Entry> heap_;
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

std::unique_ptr<Policy> NewGdsfPolicy(GdsfCostSource source, bool lazy_heap) {
  return std::make_unique<GdsfPolicy>(source, lazy_heap);
}
std::unique_ptr<Policy> MakeGdsfPolicy(const PolicyParams& params) {
  return MakeWithDefault(params, GdsfCostSource::kLatency);
}
std::unique_ptr<Policy> MakeGdsfCostPolicy(const PolicyParams& params) {
  return MakeWithDefault(params, GdsfCostSource::kPrice);
}

}  // namespace toolcache
