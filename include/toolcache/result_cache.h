// ResultCache: the thread-safe store of tool results that every face shares,
// a (optionally sharded) front over CacheCore (policy.h).
//
// The key space is split over N shards (a power of two, default 1) by the
// key's ObjectId; each shard has its own mutex, its own CacheCore and its
// own policy instance (built from the registry by name) holding capacity / N
// bytes (and entries). Values are immutable CachedValue objects handed out as
// std::shared_ptr<const CachedValue>, so a reader keeps its value alive even
// if the entry is evicted meanwhile. A hit compares the FULL CacheKey: two
// keys whose digests collide on the 64-bit ObjectId never serve each other's
// results (the newer insert replaces the older entry).
//
// Shards trade policy quality for lock concurrency. With N shards each
// policy sees 1/N of the traffic (VAAC's value model, feature grouping and
// UCB1 bandit learn N times slower: its T1 and B thresholds are reached per
// shard), and no entry larger than capacity / N can ever be stored. Use more
// than one shard only where several threads hit the cache at once and the
// caller does not already serialize access (the MCP proxy is one event loop
// and ToolCache holds its own mutex around the store: it uses 1).
//
// Expiry: every entry carries the TTL it was inserted with; a lookup at or
// after stored_at + ttl is kExpired (and removes the entry). Time comes from
// the injected Clock.
//
// Thread-safety: every method is thread-safe. Callbacks (EraseIf's
// predicate) run under a shard lock and must not call back into the cache.
// Ownership: the cache owns its shards and policies; the Clock is borrowed
// and must outlive the cache (nullptr = an internal SystemClock).
//
// Example:
//   auto cache = NewResultCache({.capacity_bytes = 64 << 20, .policy = "lru"});
//   if (!cache.ok()) return cache.status();
//   CacheKey key{.server = "weather", .tool = "get_forecast",
//                .canonical_args = R"({"city":"Paris"})"};
//   LookupResult r = (*cache)->Lookup(key, {});
//   if (!r.hit()) (*cache)->Insert(key, {.result = body}, {.ttl_seconds =
//   600});
#ifndef TOOLCACHE_RESULT_CACHE_H_
#define TOOLCACHE_RESULT_CACHE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "toolcache/clock.h"
#include "toolcache/key.h"
#include "toolcache/policy.h"
#include "toolcache/status.h"
#include "toolcache/verdict.h"

namespace toolcache {

// One stored tool result. The caller fills `result`, `flags` and
// `media_type`; Insert fills the rest from the key and the InsertContext.
struct CachedValue {
  CacheKey key;        // the full key (set by Insert)
  std::string result;  // the result bytes, exactly as upstream sent them
  // Face-defined bits, opaque to the cache (e.g. "MCP structuredContent
  // present"). Default 0.
  uint32_t flags = 0;
  std::string media_type;          // e.g. "application/json"; "" = unspecified
  double stored_at = 0;            // clock seconds at insert (set by Insert)
  double ttl_seconds = kNoExpiry;  // set by Insert from InsertContext
  double latency_seconds = 0;      // upstream latency (set by Insert)
  double cost = 0;                 // price of the call (set by Insert)
  RequestType request_type = RequestType::kInformational;  // set by Insert
  // Owner-defined validity tag, opaque to the cache (ToolCache: the shared
  // store's invalidation counters the result was read under; "" = none).
  std::string tag;
};

// Features of the call being looked up; the policy sees them on a hit
// (VAAC's grouping: tool -> parameter category -> user).
struct LookupContext {
  std::string_view user;  // caller identity; "" = anonymous
  // RequestFeatures::category_feature (request_features.h); 0 = none.
  uint64_t category = 0;
};

// Features of the result being inserted (system features of the paper's
// value model, Eq. 1-2) and its validity.
struct InsertContext {
  double ttl_seconds = kNoExpiry;  // from the Verdict; <= 0 is not stored
  double latency_seconds = 0;      // measured upstream latency
  double cost = 0;                 // price of the call
  std::string_view user;           // caller identity; "" = anonymous
  // RequestFeatures::category_feature (request_features.h); 0 = none.
  uint64_t category = 0;
  RequestType request_type = RequestType::kInformational;
};

struct LookupResult {
  LookupOutcome outcome = LookupOutcome::kMiss;
  std::shared_ptr<const CachedValue> value;  // set iff outcome == kHit
  double age_seconds = 0;                    // now - stored_at, on a hit
  // Peek on a hit: the policy's score of the entry (Policy::ValueScore).
  std::optional<double> value_score;
  bool hit() const { return outcome == LookupOutcome::kHit; }
};

struct ResultCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;      // lookups that found nothing usable (incl. expired)
  uint64_t expired = 0;     // of the misses: an entry existed but was stale
  uint64_t collisions = 0;  // ObjectId matched but the full key did not
  uint64_t inserts = 0;     // results stored
  uint64_t rejections = 0;  // Insert calls that stored nothing
  uint64_t evictions = 0;   // entries removed to make room
  uint64_t expirations = 0;  // entries removed because their TTL ran out
  uint64_t erasures = 0;     // entries removed by Erase / EraseIf / Clear
  uint64_t bytes = 0;        // accounted bytes now cached
  uint64_t entries = 0;      // entries now cached
};

struct ResultCacheOptions {
  // Total byte budget, split evenly over the shards; an entry is accounted
  // as result + key bytes. Default 64 MiB. Note: an entry larger than
  // capacity_bytes / num_shards is never stored (a shard cannot hold it).
  uint64_t capacity_bytes = uint64_t{64} << 20;
  // Optional total entry limit (split over the shards); 0 = unlimited.
  uint64_t capacity_entries = 0;
  // Registry name of the policy (see Policies()). Default "lru".
  std::string policy = "lru";
  // Policy knobs, validated by MakePolicy.
  std::map<std::string, double, std::less<>> knobs;
  // Number of shards: a power of two >= 1 (0 means 1). Default 1: the
  // policy sees every request and one entry may use the whole budget. More
  // shards cut lock contention between threads but split the budget and the
  // policy's statistics N ways (see the top of this file).
  uint32_t num_shards = 1;
  uint64_t seed = 1;  // policy seed; shard i gets seed + i
  // Test hook: maps a key to its ObjectId (default CacheKey::Id). Lets tests
  // force two different keys onto one id.
  std::function<ObjectId(const CacheKey&)> key_id;
};

class ResultCache {
 public:
  virtual ~ResultCache() = default;

  // The fresh value stored under exactly `key`, if any. An expired entry is
  // removed and reported as kExpired.
  virtual LookupResult Lookup(const CacheKey& key,
                              const LookupContext& ctx) = 0;
  // Like Lookup, but changes nothing: no policy access, no counters, an
  // expired entry stays (reported as kExpired). For observers that must not
  // teach the policy an access that did not happen. Default: a miss.
  virtual LookupResult Peek(const CacheKey& key) const {
    (void)key;
    return {};
  }
  // Offers a result for `key` (after a miss). Returns whether it was stored:
  // false when the policy declined, the entry is larger than a shard, or the
  // TTL is not positive. Replaces any entry stored under the same id.
  virtual bool Insert(const CacheKey& key, CachedValue value,
                      const InsertContext& ctx) = 0;
  // Removes `key`'s entry; returns whether there was one.
  virtual bool Erase(const CacheKey& key) = 0;
  // Removes every entry whose key satisfies `pred` (invalidation: all of a
  // server's entries, or those whose arguments name a resource). Returns how
  // many were removed. `pred` runs under a shard lock.
  virtual uint64_t EraseIf(
      const std::function<bool(const CacheKey&)>& pred) = 0;
  // Removes every entry.
  virtual void Clear() = 0;
  // Removes every entry that has expired by now (lookups and inserts also
  // expire lazily; this is for housekeeping).
  virtual void ExpireNow() = 0;
  // A consistent-per-shard snapshot of the counters.
  virtual ResultCacheStats Stats() const = 0;
  virtual uint32_t num_shards() const = 0;
};

// Builds a cache. Errors: unknown policy or knob (message lists the known
// ones), num_shards not a power of two.
Result<std::unique_ptr<ResultCache>> NewResultCache(
    ResultCacheOptions options, const Clock* clock = nullptr);

}  // namespace toolcache

#endif  // TOOLCACHE_RESULT_CACHE_H_
