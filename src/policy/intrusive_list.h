// SlotLists: several intrusive doubly linked lists over CacheCore slot
// indices, for policies that keep entries in recency / FIFO order (LRU, the
// windows and segments of W-TinyLFU, the queues of S3-FIFO, CACA's LRU).
//
// Each slot is in at most one of the `num_lists` lists at a time. Every
// operation is O(1) and allocation-free except when a slot index beyond the
// current node array is first seen (the array then grows, amortized O(1)).
// Memory: 9 bytes per slot (two uint32 links + one list tag). A node's two
// links sit side by side (one 8-byte record), so an unlink or a link touches
// one cache line per neighbour instead of two.
//
// Thread-safety: none (a policy is single-threaded; see policy.h).
//
// Example:
//   SlotLists lists(/*num_lists=*/1);
//   lists.PushFront(0, slot);      // most recent first
//   lists.MoveToFront(0, slot);    // on a hit
//   Slot victim = lists.Back(0);   // least recent
//   lists.Remove(victim);
#ifndef TOOLCACHE_SRC_POLICY_INTRUSIVE_LIST_H_
#define TOOLCACHE_SRC_POLICY_INTRUSIVE_LIST_H_

#include <cassert>
#include <cstdint>
#include <vector>

#include "toolcache/policy.h"

namespace toolcache {

// Invariants:
//  - node index i < num_lists_ is the sentinel of list i; slot s lives at
//    node index num_lists_ + s.
//  - every list is circular through its sentinel; an empty list's sentinel
//    points at itself.
//  - list_of_[s] == kNotListed iff slot s is in no list.
//  - nodes_.size() == num_lists_ + list_of_.size().
class SlotLists {
 public:
  static constexpr uint8_t kNotListed = 0xff;

  // REQUIRES: 1 <= num_lists < 255.
  explicit SlotLists(uint32_t num_lists = 1) : num_lists_(num_lists) {
    assert(num_lists >= 1 && num_lists < kNotListed);
    nodes_.resize(num_lists);
    size_.assign(num_lists, 0);
    for (uint32_t i = 0; i < num_lists; ++i) nodes_[i] = {i, i};
  }

  // Reserves room for slots [0, slots) so later pushes do not allocate.
  void Reserve(uint32_t slots) {
    if (slots > list_of_.size()) Grow(slots);
  }

  // REQUIRES: `slot` is in no list.
  void PushFront(uint32_t list, Slot slot) { LinkAfter(list, list, slot); }
  // REQUIRES: `slot` is in no list.
  void PushBack(uint32_t list, Slot slot) {
    LinkAfter(list, nodes_[list].prev, slot);
  }
  // Unlinks `slot` from its list; no-op if it is in none.
  void Remove(Slot slot) {
    if (slot >= list_of_.size() || list_of_[slot] == kNotListed) return;
    Unlink(num_lists_ + slot);
    --size_[list_of_[slot]];
    list_of_[slot] = kNotListed;
  }
  // Moves `slot` (listed anywhere, or nowhere) to the front of `list`.
  void MoveToFront(uint32_t list, Slot slot) {
    const uint32_t n = num_lists_ + slot;
    if (slot < list_of_.size() && list_of_[slot] == list) {
      // Already in `list`: relink in place (no tag or size to update).
      if (nodes_[list].next == n) return;  // already first
      Unlink(n);
      Link(list, n);
      return;
    }
    Remove(slot);
    PushFront(list, slot);
  }
  // Moves `slot` (listed anywhere, or nowhere) to the back of `list`.
  void MoveToBack(uint32_t list, Slot slot) {
    Remove(slot);
    PushBack(list, slot);
  }
  // First / last slot of `list`, or kNoSlot when it is empty.
  Slot Front(uint32_t list) const { return ToSlot(nodes_[list].next); }
  Slot Back(uint32_t list) const { return ToSlot(nodes_[list].prev); }
  // The slot after / before `slot` in its list (towards the back / front),
  // or kNoSlot at the end. REQUIRES: `slot` is listed.
  Slot Next(Slot slot) const { return ToSlot(nodes_[num_lists_ + slot].next); }
  Slot Prev(Slot slot) const { return ToSlot(nodes_[num_lists_ + slot].prev); }

  uint64_t Size(uint32_t list) const { return size_[list]; }
  bool Empty(uint32_t list) const { return size_[list] == 0; }
  // The list holding `slot`, or kNotListed.
  uint8_t ListOf(Slot slot) const {
    return slot < list_of_.size() ? list_of_[slot] : kNotListed;
  }
  bool Contains(Slot slot) const { return ListOf(slot) != kNotListed; }

  // Bytes per slot of this structure (for Policy::MetadataBytes).
  static constexpr uint64_t kBytesPerSlot =
      2 * sizeof(uint32_t) + sizeof(uint8_t);

 private:
  Slot ToSlot(uint32_t node) const {
    return node < num_lists_ ? kNoSlot : node - num_lists_;
  }
  struct Node {
    uint32_t prev;
    uint32_t next;
  };
  void LinkAfter(uint32_t list, uint32_t at, Slot slot) {
    if (slot >= list_of_.size()) Grow(slot + 1);
    assert(list_of_[slot] == kNotListed);
    const uint32_t n = num_lists_ + slot;
    const uint32_t after = nodes_[at].next;
    nodes_[n] = {at, after};
    nodes_[at].next = n;
    nodes_[after].prev = n;
    list_of_[slot] = static_cast<uint8_t>(list);
    ++size_[list];
  }
  // Node `n` (listed in `list`, unlinked) back in as the first of `list`.
  void Link(uint32_t list, uint32_t n) {
    const uint32_t after = nodes_[list].next;
    nodes_[n] = {list, after};
    nodes_[list].next = n;
    nodes_[after].prev = n;
  }
  void Unlink(uint32_t n) {
    const Node node = nodes_[n];
    nodes_[node.prev].next = node.next;
    nodes_[node.next].prev = node.prev;
  }
  void Grow(uint64_t min_slots) {
    uint64_t n = list_of_.empty() ? 64 : list_of_.size();
    while (n < min_slots) n *= 2;
    list_of_.resize(n, kNotListed);
    nodes_.resize(num_lists_ + n);
  }

  uint32_t num_lists_;
  std::vector<Node> nodes_;  // sentinels, then one node per slot
  std::vector<uint8_t> list_of_;
  std::vector<uint64_t> size_;
};

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_POLICY_INTRUSIVE_LIST_H_
