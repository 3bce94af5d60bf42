// FlatIdMap: an open-addressing hash map from a 64-bit id (ObjectId, group
// key, ...) to a 32-bit value (a Slot, an index, a counter), for hot paths.
//
// Linear probing over a power-of-two bucket array of 16-byte buckets
// {key, value}; deletion by backward shift, so there are no tombstones and
// lookups never degrade after churn. Keys are mixed with the murmur3 fmix64
// finalizer, so sequential ids (trace object ids) spread well. The table
// grows (doubles) when it would exceed 3/4 load; it never shrinks except on
// Clear(). Any 64-bit key is allowed; the value kEmpty (UINT32_MAX) is
// reserved.
//
// Thread-safety: none.
//
// Example:
//   FlatIdMap map;
//   map.Insert(42, 7);
//   uint32_t v = map.Find(42);   // 7, or FlatIdMap::kEmpty when absent
//   map.Erase(42);
#ifndef TOOLCACHE_SRC_POLICY_FLAT_MAP_H_
#define TOOLCACHE_SRC_POLICY_FLAT_MAP_H_

#include <cassert>
#include <cstdint>
#include <vector>

namespace toolcache {

// murmur3's 64-bit finalizer: a fast bijective mixer.
inline uint64_t MixId(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// Invariants:
//  - buckets_.size() is a power of two >= kMinBuckets; mask_ = size - 1.
//  - a bucket is empty iff its value == kEmpty.
//  - every key sits in the probe run that starts at its home bucket
//    (MixId(key) & mask_) with no empty bucket in between (maintained by
//    backward-shift deletion).
//  - size_ * 4 <= buckets_.size() * 3.
//  - a live bucket's hash is the low 32 bits of MixId(its key).
class FlatIdMap {
 public:
  static constexpr uint32_t kEmpty = 0xffffffffu;

  explicit FlatIdMap(uint64_t expected_size = 0) { Reset(expected_size); }

  // The value of `key`, or kEmpty.
  uint32_t Find(uint64_t key) const {
    uint64_t i = MixId(key) & mask_;
    while (true) {
      const Bucket& b = buckets_[i];
      if (b.value == kEmpty) return kEmpty;
      if (b.key == key) return b.value;
      i = (i + 1) & mask_;
    }
  }

  // Sets key -> value (overwrites). REQUIRES: value != kEmpty.
  void Insert(uint64_t key, uint32_t value) {
    assert(value != kEmpty);
    if ((size_ + 1) * 4 > buckets_.size() * 3) Rehash(buckets_.size() * 2);
    const uint64_t h = MixId(key);
    uint64_t i = h & mask_;
    while (true) {
      Bucket& b = buckets_[i];
      if (b.value == kEmpty) {
        b.key = key;
        b.value = value;
        b.hash = static_cast<uint32_t>(h);
        ++size_;
        return;
      }
      if (b.key == key) {
        b.value = value;
        return;
      }
      i = (i + 1) & mask_;
    }
  }

  // Sets key -> value like Insert, but grows the table only when `key` is
  // new: the same table, bucket count included, as Erase(key) then
  // Insert(key, value), with one probe instead of two. REQUIRES: value !=
  // kEmpty.
  void Assign(uint64_t key, uint32_t value) {
    assert(value != kEmpty);
    const uint64_t h = MixId(key);
    uint64_t i = h & mask_;
    while (true) {
      Bucket& b = buckets_[i];
      if (b.value == kEmpty) break;
      if (b.key == key) {
        b.value = value;
        return;
      }
      i = (i + 1) & mask_;
    }
    if ((size_ + 1) * 4 > buckets_.size() * 3) {
      Rehash(buckets_.size() * 2);
      i = h & mask_;
      while (buckets_[i].value != kEmpty) i = (i + 1) & mask_;
    }
    buckets_[i].key = key;
    buckets_[i].value = value;
    buckets_[i].hash = static_cast<uint32_t>(h);
    ++size_;
  }

  // Removes `key`; returns whether it was present.
  bool Erase(uint64_t key) {
    return EraseIf(key, [](uint32_t) { return true; });
  }

  // Removes `key` if it is present and pred(its value) holds (one probe for
  // Find then Erase); returns whether it removed it.
  template <typename Pred>
  bool EraseIf(uint64_t key, Pred&& pred) {
    uint64_t i = MixId(key) & mask_;
    while (true) {
      if (buckets_[i].value == kEmpty) return false;
      if (buckets_[i].key == key) break;
      i = (i + 1) & mask_;
    }
    if (!pred(buckets_[i].value)) return false;
    // Backward shift: pull later members of the run into the hole when their
    // home is not strictly between the hole and their position.
    uint64_t hole = i;
    uint64_t j = i;
    while (true) {
      j = (j + 1) & mask_;
      if (buckets_[j].value == kEmpty) break;
      const uint64_t home = Home(buckets_[j]);
      // Distance from home to j vs from hole to j (cyclic).
      if (((j - home) & mask_) >= ((j - hole) & mask_)) {
        buckets_[hole] = buckets_[j];
        hole = j;
      }
    }
    buckets_[hole].value = kEmpty;
    --size_;
    return true;
  }

  // Grows the bucket array to at least `buckets` (rounded up to a power of
  // two), keeping every key and value; never shrinks. A caller that knows
  // how many keys it will hold can keep the load below the 3/4 the growth
  // rule allows (shorter probes and shifts at the price of memory).
  void ReserveBuckets(uint64_t buckets) {
    uint64_t n = buckets_.size();
    while (n < buckets) n *= 2;
    if (n > buckets_.size()) Rehash(n);
  }
  uint64_t bucket_count() const { return buckets_.size(); }

  uint64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Drops every key and shrinks to fit `expected_size`.
  void Clear(uint64_t expected_size = 0) { Reset(expected_size); }
  // Bytes of the bucket array.
  uint64_t MemoryBytes() const { return buckets_.size() * sizeof(Bucket); }

  // Calls f(key, value) for every entry (order unspecified). f must not
  // modify the map.
  template <typename F>
  void ForEach(F&& f) const {
    for (const Bucket& b : buckets_) {
      if (b.value != kEmpty) f(b.key, b.value);
    }
  }

 private:
  struct Bucket {
    uint64_t key = 0;
    uint32_t value = kEmpty;
    // The low 32 bits of MixId(key), in what was padding: a deletion's
    // backward shift and a rehash find a bucket's home without mixing its
    // key again.
    uint32_t hash = 0;
  };
  static_assert(sizeof(Bucket) == 16);  // the hash costs no memory
  // The home bucket of a live bucket's key.
  uint64_t Home(const Bucket& b) const {
    if (mask_ <= 0xffffffffu) return b.hash & mask_;
    return MixId(b.key) & mask_;  // > 2^32 buckets
  }
  static constexpr uint64_t kMinBuckets = 16;

  void Reset(uint64_t expected_size) {
    uint64_t n = kMinBuckets;
    while (n * 3 < expected_size * 4) n *= 2;
    buckets_.assign(n, Bucket{});
    mask_ = n - 1;
    size_ = 0;
  }
  void Rehash(uint64_t n) {
    std::vector<Bucket> old(n);
    old.swap(buckets_);
    mask_ = n - 1;
    for (const Bucket& b : old) {
      if (b.value == kEmpty) continue;
      uint64_t i = Home(b);
      while (buckets_[i].value != kEmpty) i = (i + 1) & mask_;
      buckets_[i] = b;
    }
  }

  std::vector<Bucket> buckets_;
  uint64_t mask_ = 0;
  uint64_t size_ = 0;
};

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_POLICY_FLAT_MAP_H_
