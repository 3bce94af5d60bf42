// S3-FIFO (see s3fifo_policy.h).
//
// Invariants:
//  - every live slot is in exactly one of kSmall, kMain (front = newest,
//    back = oldest); bytes_[q] is the sum of the sizes of its slots.
//  - freq_[s] in 0..3 for every live slot s.
//  - ghost_ is a FIFO of {id, size}; ghost_index_ maps an id to its
//    position (a sequence number) iff that ghost record is live; ghost_bytes_
//    is the sum of the sizes of the live records and stays <= ghost_cap_
//    after each insertion.
//  - an id is never both cached and live in the ghost: Admit removes a
//    ghost hit from the ghost before the object is inserted.
#include "src/policy/s3fifo_policy.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <vector>

#include "src/policy/flat_map.h"
#include "src/policy/intrusive_list.h"

namespace toolcache {
namespace {

enum Queue : uint32_t { kSmall = 0, kMain = 1 };
constexpr uint8_t kMaxFreq = 3;  // 2-bit counter

class S3FifoPolicy final : public Policy {
 public:
  explicit S3FifoPolicy(const S3FifoOptions& o)
      : lists_(2), threshold_(o.move_to_main_threshold) {
    const double cap = static_cast<double>(o.capacity_bytes);
    small_cap_ = static_cast<uint64_t>(std::floor(cap * o.small_ratio));
    // Paper-silent: at least one byte of S, so a tiny cache can admit.
    small_cap_ = std::max<uint64_t>(small_cap_, 1);
    main_cap_ =
        o.capacity_bytes > small_cap_ ? o.capacity_bytes - small_cap_ : 0;
    ghost_cap_ = static_cast<uint64_t>(std::floor(cap * o.ghost_ratio));
  }

  std::string_view name() const override { return "s3fifo"; }

  // Paper-silent: the 2-bit counter also caps hits counted in S (libCacheSim
  // leaves it uncapped there; the threshold 2 < 3 makes this equivalent).
  bool Admit(const Request& req) override {
    pending_to_main_ = GhostTake(req.id);
    // libCacheSim's can_insert: nothing larger than S is cached.
    return req.size <= small_cap_;
  }

  void OnInsert(Slot slot, const Request&) override {
    if (slot >= freq_.size()) {
      freq_.resize(std::max<size_t>(64, 2 * (static_cast<size_t>(slot) + 1)));
    }
    freq_[slot] = 0;
    const Queue q = pending_to_main_ ? kMain : kSmall;
    pending_to_main_ = false;
    lists_.PushFront(q, slot);
    bytes_[q] += view_->meta(slot).size;
  }

  void OnHit(Slot slot, const Request&) override {
    if (freq_[slot] < kMaxFreq) ++freq_[slot];
  }

  void OnRemove(Slot slot) override {
    const uint8_t q = lists_.ListOf(slot);
    if (q == SlotLists::kNotListed) return;
    bytes_[q] -= view_->meta(slot).size;
    lists_.Remove(slot);
  }

  Slot Victim() override {
    while (true) {
      if (bytes_[kMain] > main_cap_ || lists_.Empty(kSmall)) {
        const Slot t = lists_.Back(kMain);
        if (freq_[t] == 0) return t;
        --freq_[t];
        lists_.MoveToFront(kMain, t);
        continue;
      }
      const Slot t = lists_.Back(kSmall);
      if (freq_[t] >= threshold_) {
        freq_[t] = 0;
        const uint64_t size = view_->meta(t).size;
        bytes_[kSmall] -= size;
        bytes_[kMain] += size;
        lists_.MoveToFront(kMain, t);
        continue;
      }
      // The core evicts what we return: remember it in the ghost now.
      GhostPut(view_->meta(t).id, view_->meta(t).size);
      return t;
    }
  }

  uint64_t MetadataBytes() const override {
    const uint64_t n = std::max<uint64_t>(view_ ? view_->entry_count() : 0, 1);
    const uint64_t ghost =
        ghost_.size() * sizeof(GhostRecord) + ghost_index_.MemoryBytes();
    return SlotLists::kBytesPerSlot + sizeof(uint8_t) + ghost / n;
  }

 private:
  struct GhostRecord {
    ObjectId id;
    uint64_t size;  // 0 once taken out by a ghost hit
  };

  // Appends `id` to the ghost and trims the ghost's oldest records to its
  // byte budget.
  void GhostPut(ObjectId id, uint64_t size) {
    size = std::max<uint64_t>(size, 1);  // size 0 marks a dead record
    if (ghost_cap_ == 0 || size > ghost_cap_) return;
    GhostTake(id);  // at most one live record per id
    uint32_t seq = static_cast<uint32_t>(ghost_front_seq_ + ghost_.size());
    if (seq == FlatIdMap::kEmpty) {
      ghost_.push_back({0, 0});  // a dead filler: kEmpty is reserved
      seq = static_cast<uint32_t>(seq + 1);
    }
    ghost_.push_back({id, size});
    ghost_index_.Insert(id, seq);
    ghost_bytes_ += size;
    while (ghost_bytes_ > ghost_cap_) PopGhost();
    while (!ghost_.empty() && ghost_.front().size == 0) PopGhost();
  }
  void PopGhost() {
    const GhostRecord r = ghost_.front();
    if (r.size > 0) {
      ghost_index_.Erase(r.id);
      ghost_bytes_ -= r.size;
    }
    ghost_.pop_front();
    ++ghost_front_seq_;
  }
  // Removes `id` from the ghost; returns whether it was there.
  bool GhostTake(ObjectId id) {
    const uint32_t seq = ghost_index_.Find(id);
    if (seq == FlatIdMap::kEmpty) return false;
    ghost_index_.Erase(id);
    GhostRecord& r = ghost_[static_cast<uint32_t>(
        seq - static_cast<uint32_t>(ghost_front_seq_))];
    ghost_bytes_ -= r.size;
    r.size = 0;
    return true;
  }

  SlotLists lists_;
  uint64_t bytes_[2] = {0, 0};
  uint64_t small_cap_ = 1;
  uint64_t main_cap_ = 0;
  uint64_t ghost_cap_ = 0;
  uint32_t threshold_;
  bool pending_to_main_ = false;
  std::vector<uint8_t> freq_;
  std::deque<GhostRecord> ghost_;
  uint64_t ghost_front_seq_ = 0;
  uint64_t ghost_bytes_ = 0;
  FlatIdMap ghost_index_;
};

}  // namespace

std::unique_ptr<Policy> NewS3FifoPolicy(const S3FifoOptions& options) {
  return std::make_unique<S3FifoPolicy>(options);
}

std::unique_ptr<Policy> MakeS3FifoPolicy(const PolicyParams& params) {
  S3FifoOptions o;
  o.capacity_bytes = params.capacity_bytes;
  o.small_ratio =
      std::clamp(KnobOr(params, "small_ratio", o.small_ratio), 0.0, 1.0);
  o.ghost_ratio =
      std::clamp(KnobOr(params, "ghost_ratio", o.ghost_ratio), 0.0, 16.0);
  o.move_to_main_threshold = static_cast<uint32_t>(std::clamp(
      KnobOr(params, "move_to_main_threshold", o.move_to_main_threshold), 1.0,
      3.0));
  return NewS3FifoPolicy(o);
}

}  // namespace toolcache
