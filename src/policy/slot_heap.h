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
//  - heap_[i].slot is a slot and heap_[i].key its key; pos_[heap_[i].slot]
//    == i; pos_[s] == kAbsent for a slot not in the heap.
//  - for every i > 0: !Less(heap_[i].key, heap_[(i - 1) / kArity].key).
// Choice: the keys live in the heap's cells (not in a table by slot), so a
// sift compares neighbouring cells instead of following two indexes per
// comparison, and a sift moves a hole instead of swapping: the same
// comparisons in the same order as the swapping form, so the same slot ends
// on top even among equal keys (SlotHeapTest.SameTopAsTheSwappingHeap).
//
// kArity children per cell (2 unless a user asks for more). Which slot is on
// top among equal keys depends on the arity; with a strict total order (no
// two keys equal, as {H, tick} with a fresh tick per Set) the top is the
// unique least key whatever the arity. A 4-ary heap has half the levels of
// a binary one, and a cell's children share one or two cache lines.
template <typename Key, typename Less, uint32_t kArity = 2>
class SlotHeap {
  static_assert(kArity >= 2);

 public:
  static constexpr uint32_t kAbsent = 0xffffffffu;
  // One heap cell: a key and the slot it belongs to.
  struct Cell {
    Key key;
    Slot slot;
  };

  bool Contains(Slot slot) const {
    return slot < pos_.size() && pos_[slot] != kAbsent;
  }
  bool empty() const { return heap_.empty(); }
  uint64_t size() const { return heap_.size(); }

  // Inserts `slot` with `key`, or changes its key when present.
  // Inline (forced): vaac-plus calls it on every hit and insert, and GCC
  // kept it out of line (~19 instructions of call and register saves).
  [[gnu::always_inline]] void Set(Slot slot, const Key& key) {
    if (slot >= pos_.size()) Grow(slot + 1);
    const uint32_t i = pos_[slot];
    if (i == kAbsent) {
      const auto n = static_cast<uint32_t>(heap_.size());
      heap_.push_back(Cell{key, slot});
      SiftUp(n, Cell{key, slot});
      return;
    }
    // The swapping form sifted up, then down from where that ended: a cell
    // that moved up is already above every child it could be swapped with.
    const Cell cell{key, slot};
    if (i > 0 && less_(key, heap_[(i - 1) / kArity].key)) {
      SiftUp(i, cell);
    } else {
      SiftDown(i, cell);
    }
  }
  // The key of `slot`; a default Key when absent (a contract violation
  // answered without reading out of bounds).
  const Key& KeyOf(Slot slot) const {
    return Contains(slot) ? heap_[pos_[slot]].key : absent_key_;
  }
  // The slot with the least key. REQUIRES: !empty().
  Slot Top() const { return heap_.front().slot; }
  // Removes `slot`; no-op when absent.
  void Remove(Slot slot) {
    if (!Contains(slot)) return;
    const uint32_t i = pos_[slot];
    const auto last = static_cast<uint32_t>(heap_.size() - 1);
    pos_[slot] = kAbsent;
    const Cell moved = heap_[last];
    heap_.pop_back();
    if (i == last) return;
    if (i > 0 && less_(moved.key, heap_[(i - 1) / kArity].key)) {
      SiftUp(i, moved);
    } else {
      SiftDown(i, moved);
    }
  }

  // Bytes per slot of this structure (a heap cell: key and slot; position).
  static constexpr uint64_t kBytesPerSlot = sizeof(Cell) + sizeof(uint32_t);
  // Bytes held (the cells' and the positions' tables, at capacity).
  uint64_t MemoryBytes() const {
    return heap_.capacity() * sizeof(Cell) + pos_.capacity() * sizeof(uint32_t);
  }

 private:
  void Grow(uint64_t min_slots) {
    uint64_t n = pos_.empty() ? 64 : pos_.size();
    while (n < min_slots) n *= 2;
    pos_.resize(n, kAbsent);
  }
  void Place(uint32_t i, const Cell& cell) {
    heap_[i] = cell;
    pos_[cell.slot] = i;
  }
  // Moves the hole at i up while `cell` is Less than its parent, then puts
  // `cell` there.
  void SiftUp(uint32_t i, const Cell& cell) {
    while (i > 0) {
      const uint32_t parent = (i - 1) / kArity;
      if (!less_(cell.key, heap_[parent].key)) break;
      Place(i, heap_[parent]);
      i = parent;
    }
    Place(i, cell);
  }
  // Moves the hole at i down while a child is Less than `cell` (the first
  // least child: a later one only when Less than it), then puts `cell` there.
  void SiftDown(uint32_t i, const Cell& cell) {
    const auto n = static_cast<uint32_t>(heap_.size());
    while (true) {
      const uint64_t first = uint64_t{kArity} * i + 1;
      if (first >= n) break;
      const auto l = static_cast<uint32_t>(first);
      uint32_t best = l;
      if (n - l >= kArity) {
        // A full family (all but the last one): a constant trip count the
        // compiler unrolls, the same comparisons in the same order.
        for (uint32_t c = 1; c < kArity; ++c) {
          if (less_(heap_[l + c].key, heap_[best].key)) best = l + c;
        }
      } else {
        for (uint32_t c = l + 1; c < n; ++c) {
          if (less_(heap_[c].key, heap_[best].key)) best = c;
        }
      }
      if (!less_(heap_[best].key, cell.key)) break;
      Place(i, heap_[best]);
      i = best;
    }
    Place(i, cell);
  }

  std::vector<Cell> heap_;
  std::vector<uint32_t> pos_;
  Key absent_key_{};
  [[no_unique_address]] Less less_;
};

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
