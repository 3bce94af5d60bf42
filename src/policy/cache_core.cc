// CacheCore: the request loop run once for every policy (see policy.h).
//
// Invariants (checked by the contract suite's reference model):
//  - generation_[s] is odd iff slot s holds an entry (IsLive); then
//    index_.Find(metas_[s].id) == s, and no other id maps to s. index_ holds
//    entry_count_ buckets and reads ids through metas_, so metas_[s].id is
//    only changed while s is out of the index.
//  - used_bytes_ == sum of metas_[s].size over live slots
//    <= capacity_bytes_, and entry_count_ <= capacity_entries_ when that is
//    non-zero, after every public call returns.
//  - a live entry with finite expires_at has exactly one heap item
//    {expires_at, s, generation_[s]}; items whose generation no longer
//    matches are stale and skipped (lazy deletion); the heap is compacted
//    when stale items outnumber live ones.
//  - generation_[s] is incremented on every insert and every removal, so a
//    stale heap item never matches a reused slot.
//  - every removal calls Policy::OnRemove, then the listener, and only then
//    frees the slot (pushes it on free_); slots are reused LIFO.
//  - the hot path (Lookup hit/miss, Insert without growth) allocates nothing.
//  - absent_known_ implies index_.Find(absent_id_) == kNoSlot (set by a
//    Lookup that found no fresh entry, cleared by every Insert).
#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <utility>
#include <vector>

#include "src/policy/flat_map.h"
#include "toolcache/policy.h"

namespace toolcache {

namespace {

struct HeapItem {
  double expires_at;
  Slot slot;
  uint32_t generation;
};
// std::push_heap builds a max-heap: "less" = later expiry, so the earliest
// expiry is on top.
struct LaterExpiry {
  bool operator()(const HeapItem& a, const HeapItem& b) const {
    return a.expires_at > b.expires_at;
  }
};

// The id -> slot index: linear probing over 8-byte buckets {tag, slot},
// tag = the high 32 bits of MixId(id). The full id is not stored: a tag
// match is confirmed against metas[slot].id, which a hit reads anyway, so the
// index costs 8 bytes per bucket instead of 16.
// Choice: the home bucket is the top `bits_` bits of MixId(id), so for up to
// 2^32 buckets it is the tag's top bits: deletion's backward shift and a
// rehash find every entry's home in the bucket itself, without reading its
// meta (another cache line) or mixing its id again (an erase walked ~10
// buckets at 3/4 load, each a meta read and a MixId: the largest cost of an
// eviction). Deletion is by backward shift (no tombstones).
// Choice: max load 1/2 up to kSparseBuckets buckets (64 KiB), 3/4 beyond
// (3/4 throughout until session 12). Linear probing degrades fast near 3/4:
// a 1 % cache of the 1M Zipf trace (~700 entries in 1024 buckets, load
// 0.68) probed ~5 buckets per miss and shifted ~10 per erase (432 M
// instructions against 384 M at 2048 buckets), and the 10M trace's ~1200
// entries at load 5/8 cost 5 % more instructions and ~10 % more CPU time
// than at 1/2. A table that small costs at most 64 KiB however sparse, so it
// is kept at 1/2 for speed; a larger one keeps 3/4 and so main's bytes per
// entry (bench_policy_throughput: core 75.1 B at 10,000 entries, 16384
// buckets either way).
class SlotIndex {
 public:
  explicit SlotIndex(const std::vector<EntryMeta>* metas, uint64_t expected)
      : metas_(metas) {
    uint64_t n = 16;
    while (MaxEntries(n) < expected) n *= 2;
    Allocate(n);
  }

  Slot Find(ObjectId id) const {
    const uint64_t h = MixId(id);
    const uint32_t tag = static_cast<uint32_t>(h >> 32);
    for (uint64_t i = h >> shift_;; i = (i + 1) & mask_) {
      const Bucket b = buckets_[i];
      if (b.slot == kNoSlot) return kNoSlot;
      if (b.tag == tag && (*metas_)[b.slot].id == id) return b.slot;
    }
  }

  // REQUIRES: id is absent and (*metas_)[slot].id == id.
  void Insert(ObjectId id, Slot slot) {
    if (size_ + 1 > MaxEntries(buckets_.size())) Rehash(buckets_.size() * 2);
    const uint64_t h = MixId(id);
    uint64_t i = h >> shift_;
    while (buckets_[i].slot != kNoSlot) i = (i + 1) & mask_;
    buckets_[i] = {static_cast<uint32_t>(h >> 32), slot};
    ++size_;
  }

  // REQUIRES: id is present (and its meta still names it).
  void Erase(ObjectId id) {
    const uint64_t h = MixId(id);
    const uint32_t tag = static_cast<uint32_t>(h >> 32);
    uint64_t hole = h >> shift_;
    while (true) {
      const Bucket b = buckets_[hole];
      assert(b.slot != kNoSlot);
      if (b.slot != kNoSlot && b.tag == tag && (*metas_)[b.slot].id == id) {
        break;
      }
      hole = (hole + 1) & mask_;
    }
    for (uint64_t j = (hole + 1) & mask_; buckets_[j].slot != kNoSlot;
         j = (j + 1) & mask_) {
      const uint64_t home = Home(buckets_[j]);
      if (((j - home) & mask_) >= ((j - hole) & mask_)) {
        buckets_[hole] = buckets_[j];
        hole = j;
      }
    }
    buckets_[hole].slot = kNoSlot;
    --size_;
  }

  uint64_t MemoryBytes() const { return buckets_.size() * sizeof(Bucket); }

 private:
  struct Bucket {
    uint32_t tag = 0;
    Slot slot = kNoSlot;
  };
  static constexpr uint64_t kSparseBuckets = 8192;
  // The entries `n` buckets hold before the table doubles.
  static constexpr uint64_t MaxEntries(uint64_t n) {
    return n <= kSparseBuckets ? n / 2 : n / 4 * 3;
  }
  // REQUIRES: n is a power of two >= 16.
  void Allocate(uint64_t n) {
    buckets_.assign(n, Bucket{});
    mask_ = n - 1;
    bits_ = static_cast<uint32_t>(std::countr_zero(n));
    shift_ = 64 - bits_;
  }
  // The home bucket of a live bucket's entry.
  uint64_t Home(const Bucket& b) const {
    if (bits_ <= 32) return b.tag >> (32 - bits_);
    return MixId((*metas_)[b.slot].id) >> shift_;  // > 2^32 buckets
  }
  void Rehash(uint64_t n) {
    std::vector<Bucket> old;
    old.swap(buckets_);
    Allocate(n);
    for (const Bucket& b : old) {
      if (b.slot == kNoSlot) continue;
      uint64_t i = Home(b);
      while (buckets_[i].slot != kNoSlot) i = (i + 1) & mask_;
      buckets_[i] = b;
    }
  }

  const std::vector<EntryMeta>* metas_;
  std::vector<Bucket> buckets_;
  uint64_t mask_ = 0;
  uint32_t bits_ = 0;   // log2(buckets_.size())
  uint32_t shift_ = 0;  // 64 - bits_
  uint64_t size_ = 0;
};

}  // namespace

class CacheCore::Impl final : public EntryView {
 public:
  Impl(const CacheCoreOptions& options, std::unique_ptr<Policy> policy)
      : capacity_bytes_(options.capacity_bytes),
        capacity_entries_(options.capacity_entries),
        policy_(std::move(policy)),
        index_(&metas_,
               std::min<uint64_t>(options.capacity_entries, kMaxPresized)) {
    assert(policy_ != nullptr);
    if (capacity_entries_ != 0 && capacity_entries_ < kMaxPresized) {
      metas_.reserve(capacity_entries_);
      generation_.reserve(capacity_entries_);
    }
    policy_->Bind(this);
  }

  // Choice: up to this many entries are allocated up front; past it the
  // arrays and the index grow with the entries (a `maxEntries: 400333333`
  // in a config allocated a 4 GiB index at start: found by fuzz_config).
  static constexpr uint64_t kMaxPresized = uint64_t{1} << 20;

  // EntryView.
  const EntryMeta& meta(Slot slot) const override {
    assert(slot < metas_.size() && IsLive(slot));
    return metas_[slot];
  }
  uint64_t used_bytes() const override { return used_bytes_; }
  uint64_t capacity_bytes() const override { return capacity_bytes_; }
  uint64_t entry_count() const override { return entry_count_; }
  uint64_t capacity_entries() const override { return capacity_entries_; }

  LookupOutcome Lookup(const Request& req) {
    const Slot s = index_.Find(req.id);
    if (s == kNoSlot) {
      NoteAbsent(req.id);
      return LookupOutcome::kMiss;
    }
    EntryMeta& m = metas_[s];
    if (m.expires_at <= req.now) {
      Remove(s, RemovalCause::kExpired);
      NoteAbsent(req.id);
      return LookupOutcome::kExpired;
    }
    m.last_access = req.now;
    m.hits += (m.hits != UINT32_MAX);
    policy_->OnHit(s, req);
    return LookupOutcome::kHit;
  }

  Slot Insert(const Request& req) {
    // The Lookup that just missed req.id already searched the index for it.
    const bool known_absent = absent_known_ && absent_id_ == req.id;
    absent_known_ = false;
    // ExpireUntil's loop test, inline: most inserts have nothing due.
    if (!heap_.empty() && heap_.front().expires_at <= req.now) {
      ExpireUntil(req.now);
    }
    // Choice: inserting an id that is already cached replaces it (the old
    // entry is removed as kErased) instead of being undefined behaviour.
    if (!known_absent) {
      if (const Slot old = index_.Find(req.id); old != kNoSlot) {
        Remove(old, RemovalCause::kErased);
      }
    }
    // Choice: a size of 0 is accounted as 1 byte (policy.h: size >= 1), so
    // every entry costs capacity and byte-based policies never divide by 0.
    const uint64_t size = req.size == 0 ? 1 : req.size;
    // Paper-silent: the policy is asked first even for an object that can
    // never be cached (larger than the whole cache, or already expired), so
    // its statistics (sketches, group counters, bandits) see every miss;
    // the core then refuses it. Policies must tolerate Admit() == true
    // without a following OnInsert().
    if (!policy_->Admit(req)) return kNoSlot;
    const double expires_at = req.now + req.ttl;
    if (size > capacity_bytes_ || !(expires_at > req.now)) {
      return kNoSlot;
    }
    while (size > capacity_bytes_ - used_bytes_ ||
           (capacity_entries_ != 0 && entry_count_ >= capacity_entries_)) {
      const Slot victim = policy_->Victim();
      if (victim >= generation_.size() || !IsLive(victim)) {
        // A policy bug (contract: Victim() returns a live slot). Refuse the
        // insert rather than loop forever or corrupt the accounting.
        assert(false && "Policy::Victim() returned a slot that is not live");
        return kNoSlot;
      }
      Remove(victim, RemovalCause::kEvicted);
      ++evictions_;
    }
    Slot s;
    if (!free_.empty()) {
      s = free_.back();
      free_.pop_back();
    } else {
      s = static_cast<Slot>(metas_.size());
      if (metas_.size() == metas_.capacity()) GrowSlots();
      metas_.emplace_back();
      generation_.push_back(0);
    }
    EntryMeta& m = metas_[s];
    m.id = req.id;
    m.size = size;
    m.inserted_at = req.now;
    m.expires_at = expires_at;
    m.last_access = req.now;
    m.hits = 0;
    ++generation_[s];  // odd: live
    index_.Insert(req.id, s);
    used_bytes_ += size;
    ++entry_count_;
    if (expires_at != kNoExpiry) {
      heap_.push_back({expires_at, s, generation_[s]});
      std::push_heap(heap_.begin(), heap_.end(), LaterExpiry{});
      ++live_timed_;
    }
    policy_->OnInsert(s, req);
    return s;
  }

  bool Erase(ObjectId id) {
    const Slot s = index_.Find(id);
    if (s == kNoSlot) return false;
    Remove(s, RemovalCause::kErased);
    return true;
  }

  void ExpireUntil(double now) {
    while (!heap_.empty() && heap_.front().expires_at <= now) {
      const HeapItem top = heap_.front();
      std::pop_heap(heap_.begin(), heap_.end(), LaterExpiry{});
      heap_.pop_back();
      if (generation_[top.slot] == top.generation) {
        Remove(top.slot, RemovalCause::kExpired);
      }
    }
  }

  void Clear() {
    for (Slot s = 0; s < generation_.size(); ++s) {
      if (IsLive(s)) Remove(s, RemovalCause::kErased);
    }
    heap_.clear();
  }

  Slot Find(ObjectId id) const { return index_.Find(id); }

  void SetRemovalListener(std::function<void(Slot, ObjectId, RemovalCause)> f) {
    listener_ = std::move(f);
    has_listener_ = static_cast<bool>(listener_);
  }

  Policy& policy() { return *policy_; }
  uint64_t evictions() const { return evictions_; }
  uint64_t expirations() const { return expirations_; }
  uint64_t MetadataBytes() const {
    return metas_.capacity() * sizeof(EntryMeta) +
           generation_.capacity() * sizeof(uint32_t) +
           free_.capacity() * sizeof(Slot) + index_.MemoryBytes() +
           heap_.capacity() * sizeof(HeapItem);
  }

 private:
  bool IsLive(Slot s) const { return (generation_[s] & 1) != 0; }

  // `id` is not in the index. Only Insert adds an id, and every Insert
  // forgets the note, so it stays true until then.
  void NoteAbsent(ObjectId id) {
    absent_id_ = id;
    absent_known_ = true;
  }

  // REQUIRES: IsLive(s).
  void Remove(Slot s, RemovalCause cause) {
    const EntryMeta& m = metas_[s];
    policy_->OnRemove(s);
    if (has_listener_) listener_(s, m.id, cause);
    index_.Erase(m.id);
    used_bytes_ -= m.size;
    --entry_count_;
    if (m.expires_at != kNoExpiry) --live_timed_;
    if (cause == RemovalCause::kExpired) ++expirations_;
    ++generation_[s];  // even: free
    free_.push_back(s);
    MaybeCompactHeap();
  }

  // Choice: the slot arrays grow by 1/4 (at least 256 slots), not 2x, so
  // an unknown entry count wastes at most ~25% of the per-slot metadata;
  // copying stays amortized O(1) per insert.
  void GrowSlots() {
    const uint64_t n =
        metas_.size() + std::max<uint64_t>(256, metas_.size() / 4);
    metas_.reserve(n);
    generation_.reserve(n);
  }

  // Drops stale heap items once they outnumber live ones (bounded memory
  // under churn; amortized O(1) per removal).
  void MaybeCompactHeap() {
    if (heap_.size() < 1024 || heap_.size() < 2 * live_timed_ + 1024) return;
    std::erase_if(heap_, [this](const HeapItem& h) {
      return generation_[h.slot] != h.generation;
    });
    std::make_heap(heap_.begin(), heap_.end(), LaterExpiry{});
  }

  const uint64_t capacity_bytes_;
  const uint64_t capacity_entries_;
  std::unique_ptr<Policy> policy_;
  std::vector<EntryMeta> metas_;  // declared before index_, which reads it
  SlotIndex index_;               // ObjectId -> Slot
  std::vector<uint32_t> generation_;
  std::vector<Slot> free_;
  std::vector<HeapItem> heap_;
  uint64_t live_timed_ = 0;  // live entries with a finite expiry
  uint64_t used_bytes_ = 0;
  uint64_t entry_count_ = 0;
  uint64_t evictions_ = 0;
  uint64_t expirations_ = 0;
  bool has_listener_ = false;
  // Set by a Lookup that found no fresh entry for absent_id_ (NoteAbsent),
  // so the Insert that follows it skips its own search of the index.
  bool absent_known_ = false;
  ObjectId absent_id_ = 0;
  std::function<void(Slot, ObjectId, RemovalCause)> listener_;
};

CacheCore::CacheCore(const CacheCoreOptions& options,
                     std::unique_ptr<Policy> policy)
    : impl_(std::make_unique<Impl>(options, std::move(policy))) {}
CacheCore::~CacheCore() = default;

LookupOutcome CacheCore::Lookup(const Request& req) {
  return impl_->Lookup(req);
}
Slot CacheCore::Insert(const Request& req) { return impl_->Insert(req); }
bool CacheCore::Erase(ObjectId id) { return impl_->Erase(id); }
void CacheCore::ExpireUntil(double now) { impl_->ExpireUntil(now); }
void CacheCore::Clear() { impl_->Clear(); }
Slot CacheCore::Find(ObjectId id) const { return impl_->Find(id); }
void CacheCore::SetRemovalListener(
    std::function<void(Slot, ObjectId, RemovalCause)> f) {
  impl_->SetRemovalListener(std::move(f));
}
const EntryView& CacheCore::view() const { return *impl_; }
Policy& CacheCore::policy() { return impl_->policy(); }
uint64_t CacheCore::evictions() const { return impl_->evictions(); }
uint64_t CacheCore::expirations() const { return impl_->expirations(); }
uint64_t CacheCore::MetadataBytes() const { return impl_->MetadataBytes(); }

}  // namespace toolcache
