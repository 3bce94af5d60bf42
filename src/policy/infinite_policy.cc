// Infinite cache (see infinite_policy.h).
//
// Invariants:
//  - fifo_ holds exactly the live slots, newest at the front.
#include "src/policy/infinite_policy.h"

#include "src/policy/intrusive_list.h"

namespace toolcache {
namespace {

class InfinitePolicy final : public Policy {
 public:
  std::string_view name() const override { return "infinite"; }
  bool Admit(const Request&) override { return true; }
  void OnInsert(Slot slot, const Request&) override {
    fifo_.PushFront(0, slot);
  }
  void OnHit(Slot, const Request&) override {}
  void OnRemove(Slot slot) override { fifo_.Remove(slot); }
  // Only reached when run with a finite capacity: FIFO.
  Slot Victim() override { return fifo_.Back(0); }
  uint64_t MetadataBytes() const override { return SlotLists::kBytesPerSlot; }

 private:
  SlotLists fifo_{1};
};

}  // namespace

std::unique_ptr<Policy> MakeInfinitePolicy(const PolicyParams&) {
  return std::make_unique<InfinitePolicy>();
}

}  // namespace toolcache
