// FrequencySketch: a count-min sketch of 4-bit counters with periodic
// halving, TinyLFU's approximate popularity history (Einziger, Friedman,
// Manes, "TinyLFU: A Highly Efficient Cache Admission Policy", 2017; layout
// as in Caffeine's FrequencySketch).
//
// Each 64-bit word holds 16 counters of 4 bits (saturating at 15). An id is
// counted in 4 rows; its estimate is the least of its 4 counters. After
// `sample_size` successful increments every counter is halved ("reset"), so
// the sketch follows changes in popularity; the sample size is 10x the
// expected number of cached entries, as in Caffeine.
//
// Thread-safety: none.
//
// Example:
//   FrequencySketch sketch(/*expected_entries=*/1000);
//   sketch.Increment(id);
//   uint32_t f = sketch.Frequency(id);  // 0..15, never an underestimate
//                                        // until a halving
#ifndef TOOLCACHE_SRC_POLICY_FREQUENCY_SKETCH_H_
#define TOOLCACHE_SRC_POLICY_FREQUENCY_SKETCH_H_

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "src/policy/flat_map.h"

namespace toolcache {

// Invariants:
//  - table_.size() is a power of two >= kMinWords; mask_ = size - 1.
//  - additions_ < sample_size_ after every public call.
class FrequencySketch {
 public:
  static constexpr uint64_t kMinWords = 16;
  static constexpr uint32_t kMaxCount = 15;
  // Caffeine's sample size factor: halve after 10 x expected entries.
  static constexpr uint64_t kSampleFactor = 10;

  explicit FrequencySketch(uint64_t expected_entries = 0) {
    Resize(expected_entries);
  }

  // Re-sizes for `expected_entries` and clears every counter.
  void Resize(uint64_t expected_entries) {
    uint64_t words = kMinWords;
    while (words < expected_entries) words *= 2;
    table_.assign(words, 0);
    mask_ = words - 1;
    expected_ = std::max<uint64_t>(expected_entries, 1);
    sample_size_ = kSampleFactor * expected_;
    additions_ = 0;
    resets_ = 0;
  }
  // Grows (and clears) when `entries` exceeds the size planned for.
  void EnsureCapacity(uint64_t entries) {
    if (entries > expected_) Resize(std::bit_ceil(entries) * 2);
  }

  // Estimated count of `id`, 0..15.
  uint32_t Frequency(uint64_t id) const {
    const uint64_t h = MixId(id);
    uint32_t f = kMaxCount;
    for (uint32_t row = 0; row < 4; ++row) {
      const uint64_t word = table_[Index(h, row)];
      const uint32_t shift = Offset(h, row);
      f = std::min<uint32_t>(f, static_cast<uint32_t>((word >> shift) & 15));
    }
    return f;
  }

  // Counts one occurrence of `id`; halves all counters every sample_size()
  // increments.
  void Increment(uint64_t id) {
    const uint64_t h = MixId(id);
    bool added = false;
    for (uint32_t row = 0; row < 4; ++row) {
      uint64_t& word = table_[Index(h, row)];
      const uint32_t shift = Offset(h, row);
      if (((word >> shift) & 15) != kMaxCount) {
        word += uint64_t{1} << shift;
        added = true;
      }
    }
    if (added && ++additions_ >= sample_size_) Reset();
  }

  // Frequency(id) before this occurrence, then Increment(id), with the
  // hash and the four positions computed once (vaac-plus asks both per
  // request). The four rows of one id are four different words (an odd step
  // over a power-of-two table of >= 16 words), so the counts read first are
  // the ones Increment would test.
  // Inline (forced, with the halving out of line: vaac-plus calls it once
  // per request).
  [[gnu::always_inline]] uint32_t FrequencyThenIncrement(uint64_t id) {
    const uint64_t h = MixId(id);
    const uint64_t step = (h >> 32) | 1;
    uint64_t& w0 = table_[h & mask_];
    uint64_t& w1 = table_[(h + step) & mask_];
    uint64_t& w2 = table_[(h + 2 * step) & mask_];
    uint64_t& w3 = table_[(h + 3 * step) & mask_];
    const uint32_t s0 = Offset(h, 0);
    const uint32_t s1 = Offset(h, 1);
    const uint32_t s2 = Offset(h, 2);
    const uint32_t s3 = Offset(h, 3);
    const auto c0 = static_cast<uint32_t>((w0 >> s0) & 15);
    const auto c1 = static_cast<uint32_t>((w1 >> s1) & 15);
    const auto c2 = static_cast<uint32_t>((w2 >> s2) & 15);
    const auto c3 = static_cast<uint32_t>((w3 >> s3) & 15);
    const uint32_t f = std::min(std::min(c0, c1), std::min(c2, c3));
    w0 += static_cast<uint64_t>(c0 != kMaxCount) << s0;
    w1 += static_cast<uint64_t>(c1 != kMaxCount) << s1;
    w2 += static_cast<uint64_t>(c2 != kMaxCount) << s2;
    w3 += static_cast<uint64_t>(c3 != kMaxCount) << s3;
    // Some counter was raised unless all four were saturated (f == 15).
    if (f != kMaxCount && ++additions_ >= sample_size_) Reset();
    return f;
  }

  uint64_t sample_size() const { return sample_size_; }
  uint64_t additions() const { return additions_; }
  uint64_t resets() const { return resets_; }
  uint64_t MemoryBytes() const { return table_.size() * sizeof(uint64_t); }

 private:
  // Halves every counter. As in Caffeine, the addition count is halved and
  // corrected for the odd counters whose half was truncated.
  [[gnu::noinline]] void Reset() {
    uint64_t odd = 0;
    for (uint64_t& w : table_) {
      odd += std::popcount(w & 0x1111111111111111ULL);
      w = (w >> 1) & 0x7777777777777777ULL;
    }
    additions_ = (additions_ - (odd >> 2)) >> 1;
    ++resets_;
  }
  // Row `row` uses word (h1 + row * h2) and a nibble chosen by other bits,
  // so the 4 counters of one id rarely share a word (double hashing).
  uint64_t Index(uint64_t h, uint32_t row) const {
    const uint64_t h2 = (h >> 32) | 1;
    return (h + row * h2) & mask_;
  }
  static uint32_t Offset(uint64_t h, uint32_t row) {
    // ((h >> (8 + 4 * row)) & 15) << 2, in one shift and one mask.
    return static_cast<uint32_t>((h >> (6 + 4 * row)) & 60);
  }

  std::vector<uint64_t> table_;
  uint64_t mask_ = 0;
  uint64_t expected_ = 1;
  uint64_t sample_size_ = 0;
  uint64_t additions_ = 0;
  uint64_t resets_ = 0;
};

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_POLICY_FREQUENCY_SKETCH_H_
