#include "src/policy/slot_heap.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace toolcache {
namespace {

// The heap as it was before its keys moved into the cells: keys in a table
// by slot, sifts by swapping. Kept here as the reference: which slot is on
// top among equal keys decides GDSF's, Belady's, VAAC's and vaac-plus's
// victims, so the pinned miss counts depend on the same choice.
template <typename Key, typename Less, uint32_t kArity = 2>
class SwappingHeap {
 public:
  static constexpr uint32_t kAbsent = 0xffffffffu;
  bool Contains(Slot slot) const {
    return slot < pos_.size() && pos_[slot] != kAbsent;
  }
  bool empty() const { return heap_.empty(); }
  uint64_t size() const { return heap_.size(); }
  void Set(Slot slot, const Key& key) {
    if (slot >= pos_.size()) {
      pos_.resize(slot + 1, kAbsent);
      key_.resize(slot + 1);
    }
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
  const Key& KeyOf(Slot slot) const { return key_[slot]; }
  Slot Top() const { return heap_.front(); }
  void Remove(Slot slot) {
    if (!Contains(slot)) return;
    const uint32_t i = pos_[slot];
    const auto last = static_cast<uint32_t>(heap_.size() - 1);
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

 private:
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
      const uint32_t parent = (i - 1) / kArity;
      if (!LessAt(i, parent)) return;
      Swap(i, parent);
      i = parent;
    }
  }
  void SiftDown(uint32_t i) {
    const auto n = static_cast<uint32_t>(heap_.size());
    while (true) {
      const uint32_t l = kArity * i + 1;
      if (l >= n) return;
      // The first least child: a later one only when Less than it.
      uint32_t best = l;
      for (uint32_t c = l + 1; c < n && c < l + kArity; ++c) {
        if (LessAt(c, best)) best = c;
      }
      if (!LessAt(best, i)) return;
      Swap(i, best);
      i = best;
    }
  }
  std::vector<Slot> heap_;
  std::vector<uint32_t> pos_;
  std::vector<Key> key_;
  Less less_;
};

// Only h is compared: many slots share a key, so the order among equal keys
// (which of them is on top) is what the test pins.
struct HOnlyLess {
  bool operator()(const ClockPriority& a, const ClockPriority& b) const {
    return a.h < b.h;
  }
};

template <typename Less, uint32_t kArity = 2, uint32_t kReferenceArity = 2>
void ExpectSameTopOverRandomOperations(uint32_t seed, uint32_t distinct_keys) {
  SlotHeap<ClockPriority, Less, kArity> heap;
  SwappingHeap<ClockPriority, Less, kReferenceArity> reference;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<uint32_t> slot_of(0, 199);
  std::uniform_int_distribution<uint32_t> key_of(0, distinct_keys - 1);
  std::uniform_int_distribution<uint32_t> op_of(0, 9);
  uint64_t tick = 0;
  for (int step = 0; step < 20000; ++step) {
    const uint32_t op = op_of(rng);
    if (op < 6) {
      const Slot s = slot_of(rng);
      const ClockPriority key{static_cast<double>(key_of(rng)), ++tick};
      heap.Set(s, key);
      reference.Set(s, key);
    } else if (op < 8) {
      const Slot s = slot_of(rng);
      heap.Remove(s);
      reference.Remove(s);
    } else if (!reference.empty()) {
      const Slot top = reference.Top();
      heap.Remove(top);
      reference.Remove(top);
    }
    ASSERT_EQ(heap.size(), reference.size()) << "step " << step;
    if (reference.empty()) continue;
    ASSERT_EQ(heap.Top(), reference.Top()) << "step " << step;
    const Slot probe = slot_of(rng);
    ASSERT_EQ(heap.Contains(probe), reference.Contains(probe));
    if (reference.Contains(probe)) {
      ASSERT_EQ(heap.KeyOf(probe).h, reference.KeyOf(probe).h);
      ASSERT_EQ(heap.KeyOf(probe).tick, reference.KeyOf(probe).tick);
    }
  }
}

TEST(SlotHeapTest, SameTopAsTheSwappingHeap) {
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    // Few distinct keys: ties everywhere.
    ExpectSameTopOverRandomOperations<HOnlyLess>(seed, 3);
    ExpectSameTopOverRandomOperations<HOnlyLess>(seed, 40);
    // The policies' own order (ties broken by tick).
    ExpectSameTopOverRandomOperations<ClockPriorityLess>(seed, 5);
  }
}

// The same with 3 and 4 children per cell against a swapping heap of the
// same arity: with ties everywhere the slot on top (and so every sift's
// choice among equal children) is the swapping form's, full families (the
// unrolled scan) and the last, partial one alike.
TEST(SlotHeapTest, SameTopAsTheSwappingHeapOfTheSameArity) {
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    ExpectSameTopOverRandomOperations<HOnlyLess, 4, 4>(seed, 3);
    ExpectSameTopOverRandomOperations<HOnlyLess, 4, 4>(seed, 40);
    ExpectSameTopOverRandomOperations<ClockPriorityLess, 4, 4>(seed, 5);
    ExpectSameTopOverRandomOperations<HOnlyLess, 3, 3>(seed, 3);
  }
}

// With the policies' order no two keys are equal (a fresh tick per Set), so
// the least key is unique and a 4-ary heap (GDSF, VAAC's window, vaac-plus)
// keeps the top the binary heap had: the policies' victims do not change.
TEST(SlotHeapTest, FourAryHeapKeepsTheTopUnderATotalOrder) {
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    ExpectSameTopOverRandomOperations<ClockPriorityLess, 4>(seed, 5);
    ExpectSameTopOverRandomOperations<ClockPriorityLess, 4>(seed, 1000);
    ExpectSameTopOverRandomOperations<ClockPriorityLess, 3>(seed, 7);
  }
}

TEST(SlotHeapTest, KeyOfAnAbsentSlotIsTheDefaultKey) {
  SlotHeap<ClockPriority, ClockPriorityLess> heap;
  heap.Set(3, ClockPriority{2.5, 7});
  EXPECT_EQ(heap.KeyOf(3).h, 2.5);
  heap.Remove(3);
  EXPECT_FALSE(heap.Contains(3));
  EXPECT_EQ(heap.KeyOf(3).h, 0.0);
  EXPECT_EQ(heap.KeyOf(1000).tick, 0u);  // never seen, past the table
}

}  // namespace
}  // namespace toolcache
