// Belady MIN (see belady_policy.h).
//
// Invariants:
//  - heap_ holds exactly the live slots keyed by {next_access, slot}; Top()
//    is the farthest next use (kNoNextAccess is farthest of all); ties go to
//    the larger slot so the choice is deterministic.
#include "src/policy/belady_policy.h"

#include <algorithm>

#include "src/policy/slot_heap.h"

namespace toolcache {
namespace {

struct NextUse {
  uint64_t next = kNoNextAccess;
  Slot slot = kNoSlot;
};
// "Less" for SlotHeap: the farther next use comes first (a max-heap).
struct FartherFirst {
  bool operator()(const NextUse& a, const NextUse& b) const {
    return a.next > b.next || (a.next == b.next && a.slot > b.slot);
  }
};

class BeladyPolicy final : public Policy {
 public:
  std::string_view name() const override { return "belady"; }

  // Paper-silent: MIN with bypass (a cache, unlike demand paging, may
  // decline to store), which is what makes it the hit-ratio optimum.
  bool Admit(const Request& req) override {
    // Never requested again: caching it cannot produce a hit.
    if (req.next_access == kNoNextAccess) return false;
    // Bypass: if room must be made and the newcomer would be the first
    // victim, keep the cache as it is.
    if (heap_.empty() || view_ == nullptr) return true;
    const uint64_t size = std::max<uint64_t>(req.size, 1);
    const bool must_evict =
        size > view_->capacity_bytes() -
                   std::min(view_->used_bytes(), view_->capacity_bytes()) ||
        (view_->capacity_entries() != 0 &&
         view_->entry_count() >= view_->capacity_entries());
    if (must_evict && req.next_access > heap_.KeyOf(heap_.Top()).next) {
      return false;
    }
    return true;
  }

  void OnInsert(Slot slot, const Request& req) override {
    heap_.Set(slot, NextUse{req.next_access, slot});
  }
  void OnHit(Slot slot, const Request& req) override {
    heap_.Set(slot, NextUse{req.next_access, slot});
  }
  void OnRemove(Slot slot) override { heap_.Remove(slot); }
  Slot Victim() override { return heap_.Top(); }

  uint64_t MetadataBytes() const override {
    return decltype(heap_)::kBytesPerSlot;
  }

 private:
  SlotHeap<NextUse, FartherFirst> heap_;
};

}  // namespace

std::unique_ptr<Policy> MakeBeladyPolicy(const PolicyParams&) {
  return std::make_unique<BeladyPolicy>();
}

}  // namespace toolcache
