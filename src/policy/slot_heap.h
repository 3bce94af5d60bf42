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
  // Top()'s key. REQUIRES: !empty().
  const Key& TopKey() const { return heap_.front().key; }
  // Gives Top() the key `key`, not Less than its current one, and sifts it
  // down (Set(Top(), key) without finding the slot's position). REQUIRES:
  // !empty().
  void RaiseTop(const Key& key) { SiftDown(0, Cell{key, heap_.front().slot}); }
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

// LazyClockHeap: a heap of ClockPriority keys {h, tick} that gives the same
// answers as SlotHeap<ClockPriority, ClockPriorityLess> -- Top() is the
// slot with the least key -- with no heap work when a key grows.
// REQUIRES: every key given to Insert or Update carries a fresh tick,
// greater than every tick given before, and no h is NaN (as GDSF and
// vaac-plus: ++tick per touch, finite priorities). No two keys are then
// equal, the least key is unique, and a new key is Less than an old one
// iff its h is less.
//
// Each slot has a record in a table by slot: its true key, the h its heap
// cell holds (a lower bound of the true h) and the caller's Payload, so a
// hit reads and writes one record and nothing of the heap. Update() with
// an h not below the cell's only writes the record (the cell, with an
// older tick, is then a lower bound of the true key); a lower h goes into
// the cell too and sifts up, as SlotHeap does. Top() first settles: while
// the top cell's key is not its slot's true key, the true key goes into the
// cell and sifts down. Then the top's true key is its cell key <= every
// cell key <= every true key, so it is the unique least true key: the slot
// an eager SlotHeap would have on top. An entry re-keyed many times is
// sifted at most once, when its cell reaches the top.
//
// Choice: the cell's h is kept in the record, not read from the cell: a
// hit then touches no heap memory. Comparing with the old true h instead
// would need no copy, but vaac-plus's H falls slightly between two hits
// about a quarter of the time (the group prior moves with every request),
// and each fall would be a sift and a mispredicted branch.
// Choice: `lazy = false` makes every Update eager (a SlotHeap with the
// table beside it): the reference the tests compare the lazy form with.
//
// Thread-safety: none. Top() is not const (it may re-order cells).
//
// Example:
//   LazyClockHeap<4> heap;
//   heap.Insert(slot, {2.5, ++tick});
//   heap.Update(slot, {3.0, ++tick});  // no sift: 3.0 >= 2.5
//   Slot victim = heap.Top();          // least true key
//   double h = heap.KeyOf(victim).h;
//   heap.Remove(victim);
//
// Invariants:
//  - cells_ holds exactly the slots in the heap; for every slot s in it,
//    table_[s].key is s's key, table_[s].cell_h is the h of s's cell, and
//    the cell holds table_[s].key or an older key of s with an h no greater
//    (so the cell's key is never greater than s's key).
//  - after Settle(): the top cell's key is its slot's true key.
struct NoPayload {};
template <uint32_t kArity = 4, typename Payload = NoPayload>
class LazyClockHeap {
  // A slot's record: its key, its cell's h, the caller's payload.
  struct Record {
    ClockPriority key;
    double cell_h;
    [[no_unique_address]] Payload payload;
  };

 public:
  explicit LazyClockHeap(bool lazy = true) : lazy_(lazy) {}

  bool Contains(Slot slot) const { return cells_.Contains(slot); }
  bool empty() const { return cells_.empty(); }
  uint64_t size() const { return cells_.size(); }

  // Adds `slot` with `key` and `payload`. REQUIRES: !Contains(slot).
  void Insert(Slot slot, const ClockPriority& key,
              const Payload& payload = {}) {
    if (slot >= table_.size()) Grow(slot + 1);
    table_[slot] = Record{key, key.h, payload};
    cells_.Set(slot, key);
  }
  // Changes the key and payload of `slot`. REQUIRES: Contains(slot).
  // Inline (forced): GDSF and vaac-plus call it on every hit.
  [[gnu::always_inline]] void Update(Slot slot, const ClockPriority& key,
                                     const Payload& payload = {}) {
    Record& r = table_[slot];
    // A fresh tick: the key is Less than the cell's iff its h is less.
    if (lazy_ && key.h >= r.cell_h) {
      r.key = key;
      r.payload = payload;
      return;
    }
    r = Record{key, key.h, payload};
    cells_.Set(slot, key);
  }
  // Insert or Update, as `slot` is absent or present.
  void Set(Slot slot, const ClockPriority& key, const Payload& payload = {}) {
    if (Contains(slot)) {
      Update(slot, key, payload);
    } else {
      Insert(slot, key, payload);
    }
  }
  // The key of `slot` (its true key); a default key when absent.
  const ClockPriority& KeyOf(Slot slot) const {
    return Contains(slot) ? table_[slot].key : absent_.key;
  }
  // The payload of `slot`. REQUIRES: Contains(slot).
  const Payload& payload(Slot slot) const { return table_[slot].payload; }
  // The slot with the least key. REQUIRES: !empty().
  Slot Top() {
    Settle();
    return cells_.Top();
  }
  // Removes `slot`; no-op when absent.
  void Remove(Slot slot) { cells_.Remove(slot); }

  // Bytes per slot (SlotHeap's, and the table's record).
  static constexpr uint64_t kBytesPerSlot =
      SlotHeap<ClockPriority, ClockPriorityLess, kArity>::kBytesPerSlot +
      sizeof(Record);
  // Bytes held.
  uint64_t MemoryBytes() const {
    return cells_.MemoryBytes() + table_.capacity() * sizeof(Record);
  }

 private:
  void Grow(uint64_t min_slots) {
    uint64_t n = table_.empty() ? 64 : table_.size();
    while (n < min_slots) n *= 2;
    table_.resize(n);
  }
  // Writes the true key into the top cell until the top cell holds it
  // (ticks are unique: the same tick is the same key).
  void Settle() {
    while (!cells_.empty()) {
      Record& r = table_[cells_.Top()];
      if (cells_.TopKey().tick == r.key.tick) return;
      r.cell_h = r.key.h;
      cells_.RaiseTop(r.key);
    }
  }

  SlotHeap<ClockPriority, ClockPriorityLess, kArity> cells_;
  std::vector<Record> table_;
  Record absent_{};
  bool lazy_;
};

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_POLICY_SLOT_HEAP_H_
