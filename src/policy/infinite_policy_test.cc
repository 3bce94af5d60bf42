// Infinite cache: only compulsory and TTL-forced misses.
#include "src/policy/infinite_policy.h"

#include "gtest/gtest.h"
#include "toolcache/policy.h"

namespace toolcache {
namespace {

TEST(InfinitePolicy, NeverEvictsAndMissesOnlyOnFirstRequestOrExpiry) {
  CacheCore core({.capacity_bytes = kUnlimitedBytes}, MakeInfinitePolicy({}));
  uint64_t hits = 0, misses = 0, expired = 0;
  for (int round = 0; round < 3; ++round) {
    for (ObjectId id = 0; id < 5000; ++id) {
      Request r{.id = id, .size = 1000 + id, .ttl = id % 2 ? 100.0 : kNoExpiry};
      r.now = round * 60.0;  // round 2 is past the 100 s TTL of odd ids
      switch (core.Lookup(r)) {
        case LookupOutcome::kHit:
          ++hits;
          continue;
        case LookupOutcome::kExpired:
          ++expired;
          break;
        case LookupOutcome::kMiss:
          ++misses;
          break;
      }
      EXPECT_NE(core.Insert(r), kNoSlot);
    }
  }
  EXPECT_EQ(core.evictions(), 0u);
  // Compulsory misses (5000) plus the odd ids in round 2 (t = 120 >= 0 +
  // 100); the core purges due entries on Insert, so most of those show as
  // kMiss rather than kExpired.
  EXPECT_EQ(misses + expired, 5000u + 2500u);
  EXPECT_EQ(core.expirations(), 2500u);
  EXPECT_EQ(hits, 3 * 5000u - 5000u - 2500u);
  EXPECT_EQ(core.view().entry_count(), 5000u);
}

TEST(InfinitePolicy, RegisteredAsUnbounded) {
  const PolicyInfo* info = FindPolicy("infinite");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->kind, PolicyKind::kUnbounded);
}

}  // namespace
}  // namespace toolcache
