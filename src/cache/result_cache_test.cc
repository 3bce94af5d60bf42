// Tests of the sharded, thread-safe ResultCache.
#include "toolcache/result_cache.h"

#include <atomic>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "toolcache/clock.h"

namespace toolcache {
namespace {

CacheKey Key(std::string server, std::string tool, std::string args,
             std::string scope = "") {
  return CacheKey{.scope = std::move(scope),
                  .server = std::move(server),
                  .tool = std::move(tool),
                  .canonical_args = std::move(args)};
}

CachedValue Value(std::string result) {
  CachedValue v;
  v.result = std::move(result);
  return v;
}

std::unique_ptr<ResultCache> Make(ResultCacheOptions options,
                                  const Clock* clock) {
  auto cache = NewResultCache(std::move(options), clock);
  EXPECT_TRUE(cache.ok()) << cache.status().ToString();
  return std::move(*cache);
}

TEST(ResultCacheTest, PeekSeesFreshEntriesButTeachesThePolicyNothing) {
  ManualClock clock(0);
  // Room for two entries of this size under LRU.
  auto cache =
      Make({.capacity_bytes = 2 * (1000 + 6), .policy = "lru"}, &clock);
  const CacheKey a = Key("s", "t", "a"), b = Key("s", "t", "b"),
                 c = Key("s", "t", "c");
  ASSERT_TRUE(
      cache->Insert(a, Value(std::string(1000, 'a')), {.ttl_seconds = 10}));
  clock.Advance(1);
  ASSERT_TRUE(cache->Insert(b, Value(std::string(1000, 'b')), {}));
  const LookupResult p = cache->Peek(a);
  ASSERT_TRUE(p.hit());
  EXPECT_EQ(p.value->result, std::string(1000, 'a'));
  EXPECT_EQ(p.age_seconds, 1);
  EXPECT_FALSE(cache->Peek(Key("s", "t", "a", "other-scope")).hit());
  const ResultCacheStats before = cache->Stats();
  EXPECT_EQ(before.hits, 0u);
  // Had Peek been an access, LRU would now evict b instead of a.
  ASSERT_TRUE(cache->Insert(c, Value(std::string(1000, 'c')), {}));
  EXPECT_FALSE(cache->Peek(a).hit());
  EXPECT_TRUE(cache->Peek(b).hit());
  // Expiry: reported, not removed.
  ASSERT_TRUE(cache->Insert(a, Value("x"), {.ttl_seconds = 5}));
  clock.Advance(5);
  const uint64_t entries = cache->Stats().entries;
  EXPECT_EQ(cache->Peek(a).outcome, LookupOutcome::kExpired);
  EXPECT_EQ(cache->Stats().entries, entries);
  EXPECT_EQ(cache->Lookup(a, {}).outcome, LookupOutcome::kExpired);
  EXPECT_EQ(cache->Stats().entries, entries - 1);
}

TEST(ResultCacheTest, HitReturnsStoredValueWithAgeAndFeatures) {
  ManualClock clock(100);
  auto cache = Make({.capacity_bytes = 1 << 20}, &clock);
  const CacheKey key = Key("weather", "get_forecast", R"({"city":"Paris"})");
  EXPECT_FALSE(cache->Lookup(key, {}).hit());
  CachedValue v = Value("sunny");
  v.flags = 3;
  v.media_type = "application/json";
  ASSERT_TRUE(cache->Insert(
      key, std::move(v),
      {.ttl_seconds = 600, .latency_seconds = 1.5, .cost = 0.01}));
  clock.Advance(7);
  const LookupResult r = cache->Lookup(key, {});
  ASSERT_TRUE(r.hit());
  EXPECT_EQ(r.value->result, "sunny");
  EXPECT_EQ(r.value->key, key);
  EXPECT_EQ(r.value->flags, 3u);
  EXPECT_EQ(r.value->media_type, "application/json");
  EXPECT_EQ(r.value->stored_at, 100);
  EXPECT_EQ(r.value->ttl_seconds, 600);
  EXPECT_EQ(r.value->latency_seconds, 1.5);
  EXPECT_EQ(r.age_seconds, 7);
  const ResultCacheStats st = cache->Stats();
  EXPECT_EQ(st.hits, 1u);
  EXPECT_EQ(st.misses, 1u);
  EXPECT_EQ(st.inserts, 1u);
  EXPECT_EQ(st.entries, 1u);
  EXPECT_EQ(st.bytes, 5 + 16 + 7 + 12 + 16u);  // result+media+key bytes
}

TEST(ResultCacheTest, EntryExpiresExactlyAtTtlOnTheInjectedClock) {
  ManualClock clock;
  auto cache = Make({.capacity_bytes = 1 << 20}, &clock);
  const CacheKey key = Key("s", "t", "{}");
  ASSERT_TRUE(cache->Insert(key, Value("r"), {.ttl_seconds = 60}));
  clock.Advance(59.5);
  EXPECT_TRUE(cache->Lookup(key, {}).hit());
  clock.Advance(0.5);
  EXPECT_EQ(cache->Lookup(key, {}).outcome, LookupOutcome::kExpired);
  EXPECT_EQ(cache->Lookup(key, {}).outcome, LookupOutcome::kMiss);
  const ResultCacheStats st = cache->Stats();
  EXPECT_EQ(st.expired, 1u);
  EXPECT_EQ(st.expirations, 1u);
  EXPECT_EQ(st.entries, 0u);
}

TEST(ResultCacheTest, ExpireNowSweepsWithoutLookups) {
  ManualClock clock;
  auto cache = Make({.capacity_bytes = 1 << 20, .num_shards = 4}, &clock);
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(cache->Insert(Key("s", "t", std::to_string(i)), Value("r"),
                              {.ttl_seconds = i < 10 ? 5.0 : 500.0}));
  }
  clock.Advance(10);
  cache->ExpireNow();
  EXPECT_EQ(cache->Stats().entries, 10u);
  EXPECT_EQ(cache->Stats().expirations, 10u);
}

TEST(ResultCacheTest, NonPositiveTtlIsNotStored) {
  ManualClock clock;
  auto cache = Make({.capacity_bytes = 1 << 20}, &clock);
  EXPECT_FALSE(
      cache->Insert(Key("s", "t", "1"), Value("r"), {.ttl_seconds = 0}));
  EXPECT_FALSE(
      cache->Insert(Key("s", "t", "2"), Value("r"), {.ttl_seconds = -1}));
  EXPECT_EQ(cache->Stats().rejections, 2u);
  EXPECT_EQ(cache->Stats().entries, 0u);
}

TEST(ResultCacheTest, DigestCollisionWithDifferentFullKeyIsAMiss) {
  ManualClock clock;
  ResultCacheOptions options{.capacity_bytes = 1 << 20};
  options.key_id = [](const CacheKey&) -> ObjectId { return 7; };
  auto cache = Make(std::move(options), &clock);
  const CacheKey a = Key("fs", "read_file", R"({"path":"/a"})");
  const CacheKey b = Key("fs", "read_file", R"({"path":"/b"})");
  ASSERT_TRUE(cache->Insert(a, Value("content of a"), {}));
  EXPECT_FALSE(cache->Lookup(b, {}).hit());
  EXPECT_EQ(cache->Stats().collisions, 1u);
  EXPECT_FALSE(cache->Erase(b));  // must not erase a's entry
  EXPECT_TRUE(cache->Lookup(a, {}).hit());
  // The newer key replaces the older one under the shared id.
  ASSERT_TRUE(cache->Insert(b, Value("content of b"), {}));
  EXPECT_FALSE(cache->Lookup(a, {}).hit());
  const LookupResult rb = cache->Lookup(b, {});
  ASSERT_TRUE(rb.hit());
  EXPECT_EQ(rb.value->result, "content of b");
  EXPECT_EQ(cache->Stats().entries, 1u);
}

TEST(ResultCacheTest, ScopeIsPartOfTheKey) {
  ManualClock clock;
  auto cache = Make({.capacity_bytes = 1 << 20}, &clock);
  ASSERT_TRUE(cache->Insert(Key("s", "t", "{}", "tenant-a"), Value("a"), {}));
  EXPECT_FALSE(cache->Lookup(Key("s", "t", "{}", "tenant-b"), {}).hit());
  EXPECT_TRUE(cache->Lookup(Key("s", "t", "{}", "tenant-a"), {}).hit());
}

TEST(ResultCacheTest, EraseIfRemovesOnlyMatchingEntries) {
  ManualClock clock;
  auto cache = Make({.capacity_bytes = 1 << 20, .num_shards = 8}, &clock);
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(
        cache->Insert(Key(i % 2 ? "github" : "fs", "get", std::to_string(i)),
                      Value("x"), {}));
  }
  const uint64_t erased =
      cache->EraseIf([](const CacheKey& k) { return k.server == "fs"; });
  EXPECT_EQ(erased, 25u);
  EXPECT_EQ(cache->Stats().entries, 25u);
  EXPECT_EQ(cache->Stats().erasures, 25u);
  EXPECT_FALSE(cache->Lookup(Key("fs", "get", "0"), {}).hit());
  EXPECT_TRUE(cache->Lookup(Key("github", "get", "1"), {}).hit());
  EXPECT_TRUE(cache->Erase(Key("github", "get", "1")));
  EXPECT_FALSE(cache->Erase(Key("github", "get", "1")));
  cache->Clear();
  EXPECT_EQ(cache->Stats().entries, 0u);
  EXPECT_EQ(cache->Stats().bytes, 0u);
}

TEST(ResultCacheTest, DefaultIsOneShardSoOneEntryMayUseTheWholeBudget) {
  ManualClock clock;
  auto cache = Make({.capacity_bytes = 4000}, &clock);
  EXPECT_EQ(cache->num_shards(), 1u);
  EXPECT_TRUE(
      cache->Insert(Key("s", "t", "big"), Value(std::string(3900, 'x')), {}));
  EXPECT_EQ(
      Make({.capacity_bytes = 4000, .num_shards = 0}, &clock)->num_shards(),
      1u);
}

TEST(ResultCacheTest, CapacityIsSplitEvenlyOverShards) {
  ManualClock clock;
  auto cache = Make({.capacity_bytes = 4000, .num_shards = 4}, &clock);
  EXPECT_EQ(cache->num_shards(), 4u);
  // 1500 accounted bytes fit the total (4000) but not one shard (1000).
  EXPECT_FALSE(
      cache->Insert(Key("s", "t", "big"), Value(std::string(1490, 'x')), {}));
  EXPECT_EQ(cache->Stats().rejections, 1u);
  // Many 100-byte entries: total never exceeds the budget, every shard fills.
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(cache->Insert(Key("s", "t", std::to_string(1000 + i)),
                              Value(std::string(94, 'y')), {}));
    ASSERT_LE(cache->Stats().bytes, 4000u);
  }
  EXPECT_EQ(cache->Stats().entries, 40u);  // 10 per shard
  EXPECT_GT(cache->Stats().evictions, 0u);
}

TEST(ResultCacheTest, EntryLimitIsSplitOverShards) {
  ManualClock clock;
  auto cache =
      Make({.capacity_bytes = 1 << 20, .capacity_entries = 8, .num_shards = 2},
           &clock);
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(
        cache->Insert(Key("s", "t", std::to_string(i)), Value("v"), {}));
  }
  EXPECT_EQ(cache->Stats().entries, 8u);
}

TEST(ResultCacheTest, ValueOutlivesItsEviction) {
  ManualClock clock;
  auto cache = Make({.capacity_bytes = 200, .num_shards = 1}, &clock);
  const CacheKey key = Key("s", "t", "keep");
  ASSERT_TRUE(cache->Insert(key, Value(std::string(100, 'k')), {}));
  const LookupResult r = cache->Lookup(key, {});
  ASSERT_TRUE(r.hit());
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(cache->Insert(Key("s", "t", std::to_string(i)),
                              Value(std::string(100, 'z')), {}));
  }
  EXPECT_FALSE(cache->Lookup(key, {}).hit());
  EXPECT_EQ(r.value->result, std::string(100, 'k'));  // still alive
}

TEST(ResultCacheTest, BadOptionsAreClearErrors) {
  auto bad_shards = NewResultCache({.num_shards = 3});
  ASSERT_FALSE(bad_shards.ok());
  EXPECT_NE(bad_shards.status().message().find("power of two"),
            std::string::npos);
  ResultCacheOptions options;
  options.policy = "no-such-policy";
  auto bad_policy = NewResultCache(std::move(options));
  ASSERT_FALSE(bad_policy.ok());
  EXPECT_NE(bad_policy.status().message().find("lru"), std::string::npos);
  ResultCacheOptions knob;
  knob.knobs["bogus"] = 1;
  EXPECT_FALSE(NewResultCache(std::move(knob)).ok());
}

TEST(ResultCacheTest, ConcurrentUseKeepsValuesAndCountersConsistent) {
  ManualClock clock;
  auto cache = Make({.capacity_bytes = 64 * 1024, .num_shards = 4}, &clock);
  constexpr int kThreads = 4;
  constexpr int kOps = 20000;
  std::atomic<uint64_t> lookups{0}, wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(t + 1);
      for (int i = 0; i < kOps; ++i) {
        const int k = static_cast<int>(rng() % 500);
        const CacheKey key = Key(k % 3 ? "a" : "b", "t", std::to_string(k));
        const uint64_t op = rng() % 100;
        if (op < 60) {
          ++lookups;
          const LookupResult r = cache->Lookup(key, {.user = "u"});
          if (r.hit() && (r.value->key != key ||
                          r.value->result != "value-" + std::to_string(k))) {
            ++wrong;
          }
        } else if (op < 90) {
          (void)cache->Insert(key, Value("value-" + std::to_string(k)),
                              {.ttl_seconds = k % 5 ? 1e9 : 3});
        } else if (op < 97) {
          (void)cache->Erase(key);
        } else if (op < 99) {
          clock.Advance(1);
        } else {
          (void)cache->EraseIf([k](const CacheKey& c) {
            return c.canonical_args == std::to_string(k);
          });
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0u);
  const ResultCacheStats st = cache->Stats();
  EXPECT_EQ(st.hits + st.misses, lookups.load());
  EXPECT_EQ(st.inserts,
            st.evictions + st.expirations + st.erasures + st.entries);
  EXPECT_LE(st.bytes, 64u * 1024);
  EXPECT_GT(st.hits, 0u);
}

}  // namespace
}  // namespace toolcache
