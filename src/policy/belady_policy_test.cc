// Belady MIN: farthest-next-use eviction and optimality on unit sizes.
#include "src/policy/belady_policy.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

#include "gtest/gtest.h"
#include "toolcache/policy.h"

namespace toolcache {
namespace {

std::vector<Request> Trace(const std::vector<ObjectId>& ids) {
  std::vector<Request> t(ids.size());
  std::unordered_map<ObjectId, uint64_t> next;
  for (uint64_t i = ids.size(); i-- > 0;) {
    t[i].id = ids[i];
    t[i].index = i;
    t[i].now = static_cast<double>(i);
    auto it = next.find(ids[i]);
    t[i].next_access = it == next.end() ? kNoNextAccess : it->second;
    next[ids[i]] = i;
  }
  return t;
}

uint64_t Replay(const std::vector<Request>& t, uint64_t capacity) {
  CacheCore core({.capacity_bytes = capacity}, MakeBeladyPolicy({}));
  uint64_t hits = 0;
  for (const Request& r : t) {
    if (core.Lookup(r) == LookupOutcome::kHit) {
      ++hits;
    } else {
      (void)core.Insert(r);
    }
  }
  return hits;
}

// Exhaustive optimum for unit sizes: every reachable cache content after
// each request (caching optional), maximizing hits.
uint64_t BruteForceOptimum(const std::vector<ObjectId>& ids, size_t cap) {
  std::map<std::set<ObjectId>, uint64_t> states{{{}, 0}};
  for (ObjectId id : ids) {
    std::map<std::set<ObjectId>, uint64_t> next;
    auto offer = [&](const std::set<ObjectId>& s, uint64_t h) {
      auto [it, fresh] = next.emplace(s, h);
      if (!fresh) it->second = std::max(it->second, h);
    };
    for (const auto& [s, h] : states) {
      const bool hit = s.count(id) > 0;
      const uint64_t h2 = h + (hit ? 1 : 0);
      // Any subset obtained by dropping entries (and adding id on a miss).
      std::set<ObjectId> with = s;
      with.insert(id);
      std::vector<ObjectId> members(with.begin(), with.end());
      const uint32_t n = static_cast<uint32_t>(members.size());
      for (uint32_t mask = 0; mask < (1u << n); ++mask) {
        std::set<ObjectId> sub;
        for (uint32_t b = 0; b < n; ++b) {
          if (mask & (1u << b)) sub.insert(members[b]);
        }
        if (sub.size() <= cap) offer(sub, h2);
      }
    }
    states.swap(next);
  }
  uint64_t best = 0;
  for (const auto& [s, h] : states) best = std::max(best, h);
  return best;
}

TEST(BeladyPolicy, MatchesTextbookOptimumOnSilberschatzString) {
  // The OPT example of Silberschatz et al., 3 frames: 9 faults of 20 when
  // every miss must be loaded (demand paging). A cache may bypass: MIN
  // does not load the never-reused 4 (which would evict 0), so 0 still hits
  // at request 10: 8 misses, 12 hits.
  const std::vector<ObjectId> ids = {7, 0, 1, 2, 0, 3, 0, 4, 2, 3,
                                     0, 3, 2, 1, 2, 0, 1, 7, 0, 1};
  EXPECT_EQ(Replay(Trace(ids), 3), 12u);
  EXPECT_EQ(BruteForceOptimum(ids, 3), 12u);
}

TEST(BeladyPolicy, MatchesExhaustiveOptimumOnRandomUnitTraces) {
  uint64_t state = 12345;
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<ObjectId> ids;
    for (int i = 0; i < 14; ++i) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      ids.push_back((state >> 33) % 6);
    }
    for (uint64_t cap : {1u, 2u, 3u}) {
      EXPECT_EQ(Replay(Trace(ids), cap), BruteForceOptimum(ids, cap))
          << "trial " << trial << " cap " << cap;
    }
  }
}

TEST(BeladyPolicy, EvictsTheEntryUsedFarthestInTheFuture) {
  CacheCore core({.capacity_bytes = 2}, MakeBeladyPolicy({}));
  (void)core.Insert(Request{.id = 1, .next_access = 50});
  (void)core.Insert(Request{.id = 2, .next_access = 30});
  EXPECT_NE(core.Insert(Request{.id = 3, .next_access = 40}), kNoSlot);
  EXPECT_EQ(core.Find(1), kNoSlot);
  EXPECT_NE(core.Find(2), kNoSlot);
  // A newcomer used later than everything cached is bypassed.
  EXPECT_EQ(core.Insert(Request{.id = 4, .next_access = 60}), kNoSlot);
  // An object never requested again is never cached.
  CacheCore empty({.capacity_bytes = 10}, MakeBeladyPolicy({}));
  EXPECT_EQ(empty.Insert(Request{.id = 5}), kNoSlot);
}

TEST(BeladyPolicy, RegisteredAsOffline) {
  const PolicyInfo* info = FindPolicy("belady");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->kind, PolicyKind::kOffline);
}

// Fills next_access_time from the trace's times.
void FillTimes(std::vector<Request>& t) {
  for (Request& r : t) {
    r.next_access_time =
        r.next_access == kNoNextAccess ? kNoExpiry : t[r.next_access].now;
  }
}

TEST(BeladyPolicy, EntryExpiringBeforeItsNextUseIsEvictedFirst) {
  // Capacity 2. A (TTL 2) is next used at t=4, after it expires at t=2;
  // B (no TTL) is next used at t=5. When C arrives one must go: A is
  // useless, so B stays and its reuse at t=5 is a hit. Without the TTL
  // check, A's next use (4) is nearer than B's (5) and B would be evicted.
  std::vector<Request> t = Trace({1, 2, 3, 3, 1, 2});
  for (Request& r : t) r.size = 1;
  t[0].ttl = 2;
  FillTimes(t);
  EXPECT_EQ(Replay(t, 2), 2u);  // C at t=3, B at t=5
}

TEST(BeladyPolicy, EntryInvalidatedBeforeItsNextUseIsNotAdmitted) {
  // A is requested at 0 and 2, but its session invalidates it at 1; B is
  // requested at 1 and 3 and is admitted.
  std::vector<Request> t = Trace({1, 2, 1, 2});
  FillTimes(t);
  t[0].dies_at = 1;
  CacheCore core({.capacity_bytes = 4}, MakeBeladyPolicy({}));
  ASSERT_EQ(core.Lookup(t[0]), LookupOutcome::kMiss);
  EXPECT_EQ(core.Insert(t[0]), kNoSlot);  // would die before its reuse
  ASSERT_EQ(core.Lookup(t[1]), LookupOutcome::kMiss);
  EXPECT_NE(core.Insert(t[1]), kNoSlot);
}

}  // namespace
}  // namespace toolcache
