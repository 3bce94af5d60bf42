// W-TinyLFU and its count-min sketch: exact small sequences.
#include "src/policy/wtinylfu_policy.h"

#include "gtest/gtest.h"
#include "src/policy/frequency_sketch.h"
#include "src/policy/policy_test_util.h"
#include "toolcache/policy.h"

namespace toolcache {
namespace {

TEST(FrequencySketch, CountsWithoutUnderestimatingAndSaturatesAt15) {
  FrequencySketch sketch(64);
  for (int i = 0; i < 9; ++i) sketch.Increment(7);
  EXPECT_GE(sketch.Frequency(7), 9u);
  for (int i = 0; i < 20; ++i) sketch.Increment(7);
  EXPECT_EQ(sketch.Frequency(7), 15u);
}

TEST(FrequencySketch, HalvesEveryCounterAfterTheSamplePeriod) {
  FrequencySketch sketch(16);
  ASSERT_EQ(sketch.sample_size(), 160u);  // 10 x expected entries
  for (int i = 0; i < 12; ++i) sketch.Increment(1);
  const uint32_t before = sketch.Frequency(1);
  ASSERT_GE(before, 12u);
  uint64_t id = 1000;
  while (sketch.resets() == 0) {
    ASSERT_LT(id, 1000u + 160u) << "no halving within the sample period";
    sketch.Increment(id++);
  }
  EXPECT_EQ(sketch.resets(), 1u);
  EXPECT_EQ(sketch.Frequency(1), before / 2);
  EXPECT_LT(sketch.additions(), 80u);  // the addition count was halved too
}

// The fused call vaac-plus makes per request answers and counts exactly as
// Frequency then Increment, on the smallest table (16 words, 40 ids: many
// shared counters between ids) and through resets.
TEST(FrequencySketch, FrequencyThenIncrementIsFrequencyThenIncrement) {
  FrequencySketch fused(16);
  FrequencySketch separate(16);
  uint64_t x = 12345;
  for (int i = 0; i < 5000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const uint64_t id = (x >> 33) % 40;
    const uint32_t expected = separate.Frequency(id);
    separate.Increment(id);
    ASSERT_EQ(fused.FrequencyThenIncrement(id), expected) << "step " << i;
    ASSERT_EQ(fused.additions(), separate.additions()) << "step " << i;
  }
  EXPECT_GT(separate.resets(), 0u);
  EXPECT_EQ(fused.resets(), separate.resets());
  for (uint64_t id = 0; id < 40; ++id) {
    EXPECT_EQ(fused.Frequency(id), separate.Frequency(id)) << id;
  }
}

// 100 one-byte entries: window 1 byte, main 99 (protected 79).
TEST(WTinyLfuPolicy, RejectsOneHitCandidateAgainstFrequentVictim) {
  CacheCore core({.capacity_bytes = 100},
                 MakeWTinyLfuPolicy({.capacity_bytes = 100}));
  for (ObjectId id = 0; id < 100; ++id) Access(core, id);
  for (int round = 0; round < 3; ++round) {
    for (ObjectId id = 0; id < 99; ++id) EXPECT_TRUE(Access(core, id));
  }
  // Newcomers seen once: each duels a frequent probation victim and loses.
  for (ObjectId id = 1000; id < 1010; ++id) Access(core, id);
  for (ObjectId id = 0; id < 99; ++id) {
    EXPECT_NE(core.Find(id), kNoSlot) << "frequent " << id << " evicted";
  }
  for (ObjectId id = 1000; id < 1009; ++id) {
    EXPECT_EQ(core.Find(id), kNoSlot) << "one-hit " << id << " admitted";
  }
  EXPECT_NE(core.Find(1009), kNoSlot);  // the newest sits in the window
}

TEST(WTinyLfuPolicy, FrequentCandidateWinsAgainstColdVictim) {
  CacheCore core({.capacity_bytes = 100},
                 MakeWTinyLfuPolicy({.capacity_bytes = 100}));
  for (ObjectId id = 0; id < 100; ++id) Access(core, id);  // all cold
  Access(core, 500);  // evicts a cold one; 500 enters the window
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(Access(core, 500));
  Access(core, 501);  // 500 leaves the window and wins its duel
  EXPECT_NE(core.Find(500), kNoSlot);
  EXPECT_EQ(core.view().entry_count(), 100u);
}

TEST(WTinyLfuPolicy, ReportsBoundedMetadataPerEntry) {
  CacheCore core({.capacity_bytes = 10000},
                 MakeWTinyLfuPolicy({.capacity_bytes = 10000}));
  for (ObjectId id = 0; id < 20000; ++id) Access(core, id % 15000);
  EXPECT_LE(core.policy().MetadataBytes(), 128u);
  EXPECT_GT(core.policy().MetadataBytes(), 0u);
}

}  // namespace
}  // namespace toolcache
