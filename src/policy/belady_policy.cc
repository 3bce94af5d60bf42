// Belady MIN (see belady_policy.h).
//
// Invariants:
//  - heap_ holds exactly the live slots keyed by {next useful access, slot}:
//    the next request of the object, or kNoNextAccess (farthest of all) when
//    the entry expires (Request::next_access_time) or is invalidated
//    (Request::dies_at, the minimum over every request that touched it since
//    insertion) first; Top() is the farthest; ties go to the larger slot so
//    the choice is deterministic.
#include "src/policy/belady_policy.h"

#include <algorithm>
#include <cmath>
#include <vector>

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
    // Never requested again while the entry would live (expired or
    // invalidated first): caching it cannot produce a hit.
    if (Useful(req, req.now + req.ttl, req.dies_at) == kNoNextAccess) {
      return false;
    }
    // Bypass: if room must be made and the newcomer would be the first
    // victim, keep the cache as it is.
    if (heap_.empty() || view_ == nullptr) return true;
    if (!view_->Fits(req.size) &&
        req.next_access > heap_.KeyOf(heap_.Top()).next) {
      return false;
    }
    return true;
  }

  void OnInsert(Slot slot, const Request& req) override {
    if (slot >= death_.size()) {
      death_.resize(std::max<size_t>(64, 2 * (static_cast<size_t>(slot) + 1)));
    }
    death_[slot] = req.dies_at;
    heap_.Set(
        slot,
        NextUse{Useful(req, view_->meta(slot).expires_at, death_[slot]), slot});
  }
  void OnHit(Slot slot, const Request& req) override {
    // Every session that touches the entry can invalidate it.
    death_[slot] = std::min(death_[slot], req.dies_at);
    heap_.Set(
        slot,
        NextUse{Useful(req, view_->meta(slot).expires_at, death_[slot]), slot});
  }
  void OnRemove(Slot slot) override { heap_.Remove(slot); }
  Slot Victim() override { return heap_.Top(); }

  uint64_t MetadataBytes() const override {
    return decltype(heap_)::kBytesPerSlot + sizeof(uint64_t);
  }

 private:
  // req's next use if an entry expiring at `expires_at` and invalidated at
  // request `death` still serves it, else kNoNextAccess (never).
  static uint64_t Useful(const Request& req, double expires_at,
                         uint64_t death) {
    if (req.next_access == kNoNextAccess) return kNoNextAccess;
    if (req.next_access >= death) return kNoNextAccess;
    // Expiry is inclusive (CacheCore): stale once now >= expires_at.
    // An unknown time (not finite) is taken as "before the expiry".
    if (std::isfinite(req.next_access_time) &&
        !(req.next_access_time < expires_at)) {
      return kNoNextAccess;
    }
    return req.next_access;
  }

  std::vector<uint64_t> death_;  // per slot: min dies_at since insertion
  SlotHeap<NextUse, FartherFirst> heap_;
};

}  // namespace

std::unique_ptr<Policy> MakeBeladyPolicy(const PolicyParams&) {
  return std::make_unique<BeladyPolicy>();
}

}  // namespace toolcache
