// SlotHeap: an indexed binary heap over CacheCore slots, for policies that
// evict the entry with the smallest (GDSF) or largest (Belady) key.
//
// Each slot is in the heap at most once with one key; the key of a slot can
// be changed (sift up or down) and a slot can be removed from anywhere, both
// in O(log n). `Less(a, b)` orders keys; Top() is a slot whose key no other
// key is Less than.
//
// Thread-safety: none (a policy is single-threaded; see policy.h).
//
// Example:
//   SlotHeap<double, std::less<double>> heap;
//   heap.Set(slot, 2.5);       // insert or update
//   Slot victim = heap.Top();  // smallest key
//   heap.Remove(victim);
#ifndef TOOLCACHE_SRC_POLICY_SLOT_HEAP_H_
#define TOOLCACHE_SRC_POLICY_SLOT_HEAP_H_

#include <cassert>
#include <cstdint>
#include <utility>
#include <vector>

#include "toolcache/policy.h"

namespace toolcache {

// Invariants:
//  - heap_[i] is a slot; pos_[heap_[i]] == i; pos_[s] == kAbsent for a slot
//    not in the heap.
//  - for every i > 0: !Less(key_[heap_[i]], key_[heap_[(i - 1) / 2]]).
template <typename Key, typename Less>
class SlotHeap {
 public:
  static constexpr uint32_t kAbsent = 0xffffffffu;

  bool Contains(Slot slot) const {
    return slot < pos_.size() && pos_[slot] != kAbsent;
  }
  bool empty() const { return heap_.empty(); }
  uint64_t size() const { return heap_.size(); }

  // Inserts `slot` with `key`, or changes its key when present.
  void Set(Slot slot, const Key& key) {
    if (slot >= pos_.size()) Grow(slot + 1);
    key_[slot] = key;
    uint32_t i = pos_[slot];
    if (i == kAbsent) {
      i = static_cast<uint32_t>(heap_.size());
      heap_.push_back(slot);
      pos_[slot] = i;
      SiftUp(i);
      return;
    }
    SiftUp(i);
    SiftDown(pos_[slot]);
  }
  // REQUIRES: Contains(slot).
  const Key& KeyOf(Slot slot) const { return key_[slot]; }
  // The slot with the least key. REQUIRES: !empty().
  Slot Top() const { return heap_.front(); }
  // Removes `slot`; no-op when absent.
  void Remove(Slot slot) {
    if (!Contains(slot)) return;
    const uint32_t i = pos_[slot];
    const uint32_t last = static_cast<uint32_t>(heap_.size() - 1);
    pos_[slot] = kAbsent;
    if (i == last) {
      heap_.pop_back();
      return;
    }
    const Slot moved = heap_[last];
    heap_[i] = moved;
    pos_[moved] = i;
    heap_.pop_back();
    SiftUp(i);
    SiftDown(pos_[moved]);
  }

  // Bytes per slot of this structure (key, position, heap cell).
  static constexpr uint64_t kBytesPerSlot = sizeof(Key) + 2 * sizeof(uint32_t);

 private:
  void Grow(uint64_t min_slots) {
    uint64_t n = pos_.empty() ? 64 : pos_.size();
    while (n < min_slots) n *= 2;
    pos_.resize(n, kAbsent);
    key_.resize(n);
  }
  bool LessAt(uint32_t a, uint32_t b) const {
    return less_(key_[heap_[a]], key_[heap_[b]]);
  }
  void Swap(uint32_t a, uint32_t b) {
    std::swap(heap_[a], heap_[b]);
    pos_[heap_[a]] = a;
    pos_[heap_[b]] = b;
  }
  void SiftUp(uint32_t i) {
    while (i > 0) {
      const uint32_t parent = (i - 1) / 2;
      if (!LessAt(i, parent)) return;
      Swap(i, parent);
      i = parent;
    }
  }
  void SiftDown(uint32_t i) {
    const uint32_t n = static_cast<uint32_t>(heap_.size());
    while (true) {
      const uint32_t l = 2 * i + 1;
      if (l >= n) return;
      uint32_t best = l;
      if (l + 1 < n && LessAt(l + 1, l)) best = l + 1;
      if (!LessAt(best, i)) return;
      Swap(i, best);
      i = best;
    }
  }

  std::vector<Slot> heap_;
  std::vector<uint32_t> pos_;
  std::vector<Key> key_;
  [[no_unique_address]] Less less_;
};

// The key of GreedyDual-style policies (GDSF, vaac-plus): a priority H and
// the tick of the last touch. Paper-silent: equal priorities evict the least
// recently touched entry.
struct ClockPriority {
  double h = 0;
  uint64_t tick = 0;  // last touch; smaller = older
};
struct ClockPriorityLess {
  bool operator()(const ClockPriority& a, const ClockPriority& b) const {
    return a.h < b.h || (a.h == b.h && a.tick < b.tick);
  }
};

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_POLICY_SLOT_HEAP_H_
