// LRU: admits everything, evicts the least recently used entry.
//
// Invariants:
//  - every live slot of the bound CacheCore is in list 0 of lists_, most
//    recently inserted or hit first; nothing else is listed.
//  - every hook is O(1) and allocation-free once the link arrays have grown
//    to the highest slot index.
#include <memory>
#include <string_view>

#include "src/policy/factories.h"
#include "src/policy/intrusive_list.h"
#include "toolcache/policy.h"

namespace toolcache {
namespace {

class LruPolicy final : public Policy {
 public:
  explicit LruPolicy(const PolicyParams& params) {
    if (params.capacity_entries != 0 && params.capacity_entries < (1u << 20)) {
      lists_.Reserve(static_cast<uint32_t>(params.capacity_entries));
    }
  }

  std::string_view name() const override { return "lru"; }
  bool Admit(const Request&) override { return true; }
  void OnInsert(Slot slot, const Request&) override {
    lists_.PushFront(0, slot);
  }
  void OnHit(Slot slot, const Request&) override {
    lists_.MoveToFront(0, slot);
  }
  void OnRemove(Slot slot) override { lists_.Remove(slot); }
  Slot Victim() override { return lists_.Back(0); }
  uint64_t MetadataBytes() const override { return SlotLists::kBytesPerSlot; }

 private:
  SlotLists lists_{1};
};

}  // namespace

std::unique_ptr<Policy> MakeLruPolicy(const PolicyParams& params) {
  return std::make_unique<LruPolicy>(params);
}

}  // namespace toolcache
