// ScoreClassQueue: the slots of VAAC's eviction window ordered by
// (score, arrival), least first, for slots that arrive in increasing
// arrival order.
//
// It answers what a SlotHeap keyed by {score, tick} answers (the least
// score, the earliest arrival among equal scores) when every Add comes
// after every member already queued -- VAAC's window, whose newcomer is
// always the most recent entry to enter it. Slots of one score form a
// class, a list in arrival order; only the classes (one per distinct
// score) are kept in a heap. A class that empties stays (in the heap and
// the index) until it reaches the top or the empty classes outnumber the
// others, so a score that leaves and comes back -- an entry with 3 hits
// evicted, another with 3 hits entering -- costs no heap or index work. An
// Add, a Remove and Top are then O(1), O(log classes) when a class is made
// or dropped.
//
// Scores must not be NaN (they are unordered; the heap it replaces had no
// defined answer for them either). -0.0 and +0.0 are one score.
//
// Thread-safety: none (owned by one policy).
//
// Example:
//   ScoreClassQueue q;
//   q.Add(/*slot=*/3, 1.5);
//   q.Add(/*slot=*/7, 1.2);
//   q.Add(/*slot=*/9, 1.2);
//   Slot victim = q.Top();  // 7: the least score, earliest among equals
//   q.Remove(victim);
#ifndef TOOLCACHE_SRC_POLICY_SCORE_CLASS_QUEUE_H_
#define TOOLCACHE_SRC_POLICY_SCORE_CLASS_QUEUE_H_

#include <bit>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "src/policy/flat_map.h"
#include "src/policy/slot_heap.h"
#include "toolcache/policy.h"

namespace toolcache {

// Invariants:
//  - links_[s].cls != kNone iff s is queued; then s is in the list of class
//    links_[s].cls, whose members are in arrival order head to tail.
//  - a class is allocated iff it is in classes_heap_ (keyed by its score)
//    and index_ maps its score's bits to it; no two allocated classes have
//    equal scores. Free class ids are in free_.
//  - empty_ counts the allocated classes with an empty list; it is at most
//    the non-empty ones + kEmptySlack after every call.
//  - last_class_ is kNone or an allocated class whose score has bits
//    last_bits_.
//  - after a sweep, classes_ (and with it the heap's and the index's
//    tables) is at most kCompactRatio times the allocated classes, or
//    kMinCompact: the memory follows the live classes, not the peak.
class ScoreClassQueue {
 public:
  bool empty() const { return size_ == 0; }
  uint64_t size() const { return size_; }
  bool Contains(Slot slot) const {
    return slot < links_.size() && links_[slot].cls != kNone;
  }

  // Queues `slot` with `score`. REQUIRES: slot is not queued, score is not
  // NaN, and slot arrives after every queued slot of an equal score (for
  // VAAC: its tick exceeds every member's).
  void Add(Slot slot, double score) {
    assert(!std::isnan(score));
    if (slot >= links_.size()) Grow(slot + 1);
    const uint64_t bits = std::bit_cast<uint64_t>(score + 0.0);  // -0 -> +0
    uint32_t c = last_class_;
    if (c == kNone || last_bits_ != bits) {
      c = index_.Find(bits);
      if (c == FlatIdMap::kEmpty) c = NewClass(bits, score);
      last_class_ = c;
      last_bits_ = bits;
    }
    Class& k = classes_[c];
    if (k.head == kNoSlot && k.allocated_empty) {
      k.allocated_empty = false;
      --empty_;
    }
    Link& l = links_[slot];
    l.cls = c;
    l.prev = k.tail;
    l.next = kNoSlot;
    if (k.tail != kNoSlot) {
      links_[k.tail].next = slot;
    } else {
      k.head = slot;
    }
    k.tail = slot;
    ++size_;
  }

  // Dequeues `slot`; no-op when absent.
  void Remove(Slot slot) {
    if (!Contains(slot)) return;
    Link& l = links_[slot];
    const uint32_t c = l.cls;
    Class& k = classes_[c];
    if (l.prev != kNoSlot) {
      links_[l.prev].next = l.next;
    } else {
      k.head = l.next;
    }
    if (l.next != kNoSlot) {
      links_[l.next].prev = l.prev;
    } else {
      k.tail = l.prev;
    }
    l.cls = kNone;
    --size_;
    if (k.head == kNoSlot) {
      k.allocated_empty = true;
      ++empty_;
      if (empty_ > (classes_heap_.size() - empty_) + kEmptySlack) Sweep();
    }
  }

  // The earliest slot of the least score (drops the empty classes above
  // it). REQUIRES: !empty().
  Slot Top() {
    while (true) {
      const uint32_t c = classes_heap_.Top();
      if (classes_[c].head != kNoSlot) return classes_[c].head;
      --empty_;
      DropClass(c);
    }
  }

  // Bytes per queued slot (its links; the classes are per distinct score).
  static constexpr uint64_t kBytesPerSlot = 3 * sizeof(uint32_t);
  // Bytes held for the classes: their table, the free ids, the heap and the
  // index (what kBytesPerSlot leaves out).
  uint64_t ClassBytes() const {
    return classes_.capacity() * sizeof(Class) +
           free_.capacity() * sizeof(uint32_t) + index_.MemoryBytes() +
           classes_heap_.MemoryBytes();
  }

 private:
  static constexpr uint32_t kNone = 0xffffffffu;
  struct Link {
    uint32_t cls = kNone;
    Slot prev = kNoSlot;
    Slot next = kNoSlot;
  };
  struct Class {
    uint64_t bits = 0;
    Slot head = kNoSlot;
    Slot tail = kNoSlot;
    bool allocated_empty = false;  // allocated, list empty (counted in empty_)
  };
  // Empty classes kept beyond the non-empty ones before a sweep.
  static constexpr uint64_t kEmptySlack = 64;
  // A sweep renumbers the classes when the ids in use are fewer than
  // 1 / kCompactRatio of the ids ever made, and more than kMinCompact were.
  static constexpr uint64_t kCompactRatio = 4;
  static constexpr uint64_t kMinCompact = 256;

  void Grow(uint64_t min_slots) {
    uint64_t n = links_.empty() ? 64 : links_.size();
    while (n < min_slots) n *= 2;
    links_.resize(n);
  }
  uint32_t NewClass(uint64_t bits, double score) {
    uint32_t c;
    if (!free_.empty()) {
      c = free_.back();
      free_.pop_back();
    } else {
      c = static_cast<uint32_t>(classes_.size());
      classes_.emplace_back();
    }
    classes_[c] = Class{bits, kNoSlot, kNoSlot, false};
    index_.Insert(bits, c);
    classes_heap_.Set(c, score + 0.0);
    return c;
  }
  void DropClass(uint32_t c) {
    classes_heap_.Remove(c);
    index_.Erase(classes_[c].bits);
    classes_[c].allocated_empty = false;
    free_.push_back(c);
    if (last_class_ == c) last_class_ = kNone;
  }
  // Drops every empty class (amortized: runs after more than kEmptySlack
  // classes emptied since the empty ones last were at most the others).
  // Then, when most class ids are free, renumbers the live classes.
  [[gnu::noinline]] void Sweep() {
    for (uint32_t c = 0; c < classes_.size(); ++c) {
      if (classes_[c].allocated_empty) DropClass(c);
    }
    empty_ = 0;
    const uint64_t live = classes_.size() - free_.size();
    if (classes_.size() > kMinCompact &&
        kCompactRatio * live < classes_.size()) {
      Compact();
    }
  }
  // Gives the allocated classes the ids 0..live-1 (in their old order) and
  // rebuilds the heap and the index at their size. The scores are distinct,
  // so the heap's top (the least score) does not depend on the ids.
  // REQUIRES: no empty class is allocated (right after the sweep).
  [[gnu::noinline]] void Compact() {
    std::vector<bool> is_free(classes_.size(), false);
    for (const uint32_t c : free_) is_free[c] = true;
    std::vector<Class> kept;
    kept.reserve(classes_.size() - free_.size());
    std::vector<uint32_t> renamed(classes_.size(), kNone);
    for (uint32_t c = 0; c < classes_.size(); ++c) {
      if (is_free[c]) continue;
      renamed[c] = static_cast<uint32_t>(kept.size());
      kept.push_back(classes_[c]);
    }
    FlatIdMap index;
    SlotHeap<double, std::less<double>, 4> heap;
    for (uint32_t c = 0; c < kept.size(); ++c) {
      for (Slot s = kept[c].head; s != kNoSlot; s = links_[s].next) {
        links_[s].cls = c;
      }
      index.Insert(kept[c].bits, c);
      heap.Set(c, std::bit_cast<double>(kept[c].bits));
    }
    classes_.swap(kept);
    free_ = std::vector<uint32_t>();
    index_ = std::move(index);
    classes_heap_ = std::move(heap);
    if (last_class_ != kNone) last_class_ = renamed[last_class_];
  }

  std::vector<Link> links_;
  std::vector<Class> classes_;
  std::vector<uint32_t> free_;
  FlatIdMap index_;  // score bits -> live class
  // Distinct scores: no ties, so the arity does not change the top.
  SlotHeap<double, std::less<double>, 4> classes_heap_;
  uint64_t size_ = 0;
  uint64_t empty_ = 0;
  uint32_t last_class_ = kNone;  // the class of the last Add
  uint64_t last_bits_ = 0;
};

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_POLICY_SCORE_CLASS_QUEUE_H_
