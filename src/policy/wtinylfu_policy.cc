// W-TinyLFU (see wtinylfu_policy.h).
//
// Invariants:
//  - every live slot is in exactly one of the lists kWindow, kProbation,
//    kProtected (front = most recent); bytes_[q] is the sum of the sizes of
//    the slots in list q (sizes read from the core's EntryMeta).
//  - after OnInsert, the window holds at most window_cap_ bytes unless it
//    holds a single entry (the overflow moved to probation's front).
//  - after OnHit, protected holds at most protected_cap_ bytes unless it
//    holds a single entry.
//  - the sketch counts every Admit (a miss) and every hit of an id.
#include "src/policy/wtinylfu_policy.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "src/policy/frequency_sketch.h"
#include "src/policy/intrusive_list.h"

namespace toolcache {
namespace {

enum Queue : uint32_t { kWindow = 0, kProbation = 1, kProtected = 2 };

// Caffeine: a candidate this popular may still win a lost duel with
// probability 1/128, which defeats hash-flooding attacks on the sketch.
constexpr uint32_t kHashDosThreshold = 6;
// Paper-silent (size-unaware sketch sizing): without an entry capacity the
// sketch starts sized for capacity_bytes / 4 KiB entries and grows with the
// live entry count (clearing its counters, like Caffeine's ensureCapacity).
constexpr uint64_t kAssumedEntryBytes = 4096;

class WTinyLfuPolicy final : public Policy {
 public:
  explicit WTinyLfuPolicy(const WTinyLfuOptions& o) : lists_(3), rng_(o.seed) {
    const double cap = static_cast<double>(o.capacity_bytes);
    window_cap_ = static_cast<uint64_t>(std::floor(cap * o.window_pct));
    // Paper-silent: the window is at least one byte, so a tiny cache still
    // has a window (Caffeine rounds the same way for small maxima).
    window_cap_ = std::max<uint64_t>(window_cap_, 1);
    const uint64_t main =
        o.capacity_bytes > window_cap_ ? o.capacity_bytes - window_cap_ : 0;
    protected_cap_ = static_cast<uint64_t>(
        std::floor(static_cast<double>(main) * o.protected_pct));
    const uint64_t expected =
        o.capacity_entries > 0
            // The sketch grows with the entries (EnsureCapacity): a huge
            // limit allocates nothing up front.
            ? std::min<uint64_t>(o.capacity_entries, uint64_t{1} << 20)
            : std::clamp<uint64_t>(o.capacity_bytes / kAssumedEntryBytes, 16,
                                   uint64_t{1} << 16);
    sketch_.Resize(expected);
  }

  std::string_view name() const override { return "w-tinylfu"; }

  bool Admit(const Request& req) override {
    sketch_.Increment(req.id);
    pending_ = std::max<uint64_t>(req.size, 1);  // the core counts 0 as 1
    return true;
  }

  void OnInsert(Slot slot, const Request&) override {
    lists_.PushFront(kWindow, slot);
    bytes_[kWindow] += view_->meta(slot).size;
    pending_ = 0;
    sketch_.EnsureCapacity(view_->entry_count());
    DrainWindow(0);
  }

  void OnHit(Slot slot, const Request& req) override {
    sketch_.Increment(req.id);
    const uint8_t q = lists_.ListOf(slot);
    if (q == kProbation) {
      fresh_[slot] = 0;
      Move(slot, kProbation, kProtected);
      // Demote protected overflow to probation's most recent end.
      while (bytes_[kProtected] > protected_cap_ &&
             lists_.Size(kProtected) > 1) {
        Move(lists_.Back(kProtected), kProtected, kProbation);
      }
    } else {
      lists_.MoveToFront(q, slot);
    }
  }

  void OnRemove(Slot slot) override {
    if (slot < fresh_.size()) fresh_[slot] = 0;
    const uint8_t q = lists_.ListOf(slot);
    if (q == SlotLists::kNotListed) return;
    bytes_[q] -= view_->meta(slot).size;
    lists_.Remove(slot);
  }

  // Paper-silent: the window stays at 1% (no hill climbing, unlike
  // Caffeine's adaptive window), as the issue specifies.
  Slot Victim() override {
    // The incoming object will enter the window: make room there first.
    DrainWindow(pending_);
    if (lists_.Empty(kProbation)) {
      // Caffeine's fallback order: protected, then window.
      if (!lists_.Empty(kProtected)) return lists_.Back(kProtected);
      return lists_.Back(kWindow);
    }
    // Caffeine's evictFromMain: the candidates are the entries that just
    // left the window, newest first; a duel winner, a demoted protected
    // entry or an older probation entry is not one. With no such candidate
    // the window's least recent entry duels instead.
    while (!candidates_.empty() && !IsFresh(candidates_.back())) {
      candidates_.pop_back();
    }
    const Slot victim = lists_.Back(kProbation);
    const bool from_window = candidates_.empty();
    if (from_window && lists_.Empty(kWindow)) return victim;
    const Slot candidate =
        from_window ? lists_.Back(kWindow) : candidates_.back();
    if (candidate == victim) return victim;
    if (AdmitCandidate(candidate, victim)) {
      if (!from_window) {
        fresh_[candidate] = 0;  // stays in probation as an ordinary entry
        candidates_.pop_back();
      }
      return victim;
    }
    return candidate;
  }

  uint64_t MetadataBytes() const override {
    const uint64_t n = std::max<uint64_t>(view_ ? view_->entry_count() : 0, 1);
    return SlotLists::kBytesPerSlot + sizeof(uint8_t) +
           (sketch_.MemoryBytes() + candidates_.capacity() * sizeof(Slot)) / n;
  }

  const FrequencySketch& sketch() const { return sketch_; }

 private:
  // TinyLFU's admission test (Caffeine's admit()).
  bool AdmitCandidate(Slot candidate, Slot victim) {
    const uint32_t cf = sketch_.Frequency(view_->meta(candidate).id);
    const uint32_t vf = sketch_.Frequency(view_->meta(victim).id);
    if (cf > vf) return true;
    if (cf >= kHashDosThreshold) return (rng_() & 127) == 0;
    return false;
  }
  // Moves window LRU entries to probation's front until the window plus
  // `incoming` bytes fits (keeping one entry when incoming is 0).
  void DrainWindow(uint64_t incoming) {
    const uint64_t keep = incoming == 0 ? 1 : 0;
    while (bytes_[kWindow] + incoming > window_cap_ &&
           lists_.Size(kWindow) > keep) {
      const Slot moved = lists_.Back(kWindow);
      Move(moved, kWindow, kProbation);
      if (moved >= fresh_.size()) {
        fresh_.resize(
            std::max<size_t>(64, 2 * (static_cast<size_t>(moved) + 1)));
      }
      fresh_[moved] = 1;
      candidates_.push_back(moved);
    }
    // Drop stale cells once they dominate, so the stack stays O(entries).
    if (candidates_.size() > 2 * view_->entry_count() + 64) {
      std::erase_if(candidates_, [this](Slot c) { return !IsFresh(c); });
    }
  }
  void Move(Slot slot, Queue from, Queue to) {
    const uint64_t size = view_->meta(slot).size;
    bytes_[from] -= size;
    bytes_[to] += size;
    lists_.MoveToFront(to, slot);
  }

  bool IsFresh(Slot slot) const {
    return slot < fresh_.size() && fresh_[slot] != 0 &&
           lists_.ListOf(slot) == kProbation;
  }

  SlotLists lists_;
  // fresh_[s]: slot s left the window and has not yet dueled or been hit;
  // candidates_: such slots in the order they left (stale cells skipped).
  std::vector<uint8_t> fresh_;
  std::vector<Slot> candidates_;
  uint64_t bytes_[3] = {0, 0, 0};
  uint64_t window_cap_ = 1;
  uint64_t protected_cap_ = 0;
  uint64_t pending_ = 0;
  FrequencySketch sketch_;
  std::mt19937_64 rng_;
};

}  // namespace

std::unique_ptr<Policy> NewWTinyLfuPolicy(const WTinyLfuOptions& options) {
  return std::make_unique<WTinyLfuPolicy>(options);
}

std::unique_ptr<Policy> MakeWTinyLfuPolicy(const PolicyParams& params) {
  WTinyLfuOptions o;
  o.capacity_bytes = params.capacity_bytes;
  o.capacity_entries = params.capacity_entries;
  o.seed = params.seed;
  o.window_pct =
      std::clamp(KnobOr(params, "window_pct", o.window_pct), 0.0, 1.0);
  o.protected_pct =
      std::clamp(KnobOr(params, "protected_pct", o.protected_pct), 0.0, 1.0);
  return NewWTinyLfuPolicy(o);
}

}  // namespace toolcache
