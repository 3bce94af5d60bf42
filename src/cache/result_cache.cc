// ResultCache: N (default 1) independently locked shards, each a CacheCore +
// policy + a payload table indexed by slot.
//
// Invariants (per shard, all GUARDED_BY(shard.mu)):
//  - payload[s] is non-null iff slot s of core is live, and then
//    payload[s]->key is the full key whose id maps to s.
//  - the removal listener moves payload[s] into `graveyard` before the core
//    reuses s; the graveyard is emptied by the caller AFTER unlocking, so a
//    large result is never freed while the lock is held.
//  - a key's shard is chosen by the HIGH bits of MixId(id): the FlatIdMap
//    inside each core indexes by the low bits, so sharding by low bits
//    would cluster every shard's ids into a fraction of its buckets.
//  - Lookup never calls CacheCore::Lookup for a key whose full key differs
//    from the stored one (a digest collision is a miss and the policy sees
//    no hit).
#include "toolcache/result_cache.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "src/policy/flat_map.h"

namespace toolcache {
namespace {

// FNV-1a, 64-bit: stable across runs and builds (std::hash is not).
uint64_t Fnv1a(std::string_view s, uint64_t h = 0xcbf29ce484222325ULL) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

uint32_t Fold32(uint64_t h) { return static_cast<uint32_t>(h ^ (h >> 32)); }

// Interned-by-hash grouping features; 0 means "none" as in policy.h.
uint32_t ToolFeature(const CacheKey& key) {
  const uint32_t h = Fold32(Fnv1a(key.tool, Fnv1a("\x1f", Fnv1a(key.server))));
  return h == 0 ? 1 : h;
}
uint32_t UserFeature(std::string_view user) {
  if (user.empty()) return 0;
  const uint32_t h = Fold32(Fnv1a(user));
  return h == 0 ? 1 : h;
}

// Choice: an entry's accounted size is its result plus its key bytes (the
// full key is stored beside the result); fixed per-entry overhead is left
// out so capacities read as payload bytes.
uint64_t AccountedSize(const CacheKey& key, const CachedValue& value) {
  return value.result.size() + value.media_type.size() + value.tag.size() +
         key.scope.size() + key.server.size() + key.tool.size() +
         key.canonical_args.size();
}

using Payload = std::shared_ptr<const CachedValue>;

struct Shard {
  mutable std::mutex mu;
  std::unique_ptr<CacheCore> core;  // GUARDED_BY(mu)
  std::vector<Payload> payload;     // GUARDED_BY(mu), indexed by Slot
  std::vector<Payload> graveyard;   // GUARDED_BY(mu)
  uint64_t index = 0;               // GUARDED_BY(mu): request position
  uint64_t hits = 0;                // GUARDED_BY(mu), and the counters below
  uint64_t misses = 0;
  uint64_t expired = 0;
  uint64_t collisions = 0;
  uint64_t inserts = 0;
  uint64_t rejections = 0;
  uint64_t erasures = 0;
};

// Holds a shard's lock; on destruction releases it and only then frees the
// payloads removed meanwhile.
class ShardLock {
 public:
  explicit ShardLock(Shard& shard) : shard_(shard), lock_(shard.mu) {}
  ~ShardLock() {
    std::vector<Payload> dead;
    dead.swap(shard_.graveyard);
    lock_.unlock();
    // `dead` is destroyed here, outside the lock.
  }
  ShardLock(const ShardLock&) = delete;
  ShardLock& operator=(const ShardLock&) = delete;

 private:
  Shard& shard_;
  std::unique_lock<std::mutex> lock_;
};

class ShardedResultCache final : public ResultCache {
 public:
  ShardedResultCache(ResultCacheOptions options, const Clock* clock,
                     std::vector<std::unique_ptr<Shard>> shards)
      : options_(std::move(options)),
        clock_(clock),
        shards_(std::move(shards)),
        shard_shift_(std::countr_zero(shards_.size())) {
    if (clock_ == nullptr) {
      own_clock_ = std::make_unique<SystemClock>();
      clock_ = own_clock_.get();
    }
  }

  LookupResult Lookup(const CacheKey& key, const LookupContext& ctx) override {
    const ObjectId id = IdOf(key);
    Shard& sh = ShardOf(id);
    const double now = clock_->NowSeconds();
    LookupResult result;
    Payload value;  // declared before the lock: released after unlocking
    ShardLock lock(sh);
    const Slot s = sh.core->Find(id);
    if (s == kNoSlot) {
      ++sh.misses;
      return result;
    }
    value = sh.payload[s];
    if (value->key != key) {
      ++sh.collisions;
      ++sh.misses;
      return result;
    }
    Request req;
    req.id = id;
    req.tool = ToolFeature(key);
    req.param_category = ctx.category;
    req.user = UserFeature(ctx.user);
    req.size = sh.core->view().meta(s).size;
    req.latency = value->latency_seconds;
    req.cost = value->cost;
    req.ttl = value->ttl_seconds;
    req.now = now;
    req.index = sh.index++;
    result.outcome = sh.core->Lookup(req);
    if (result.outcome == LookupOutcome::kHit) {
      ++sh.hits;
      result.age_seconds = now - value->stored_at;
      result.value = std::move(value);
    } else {
      ++sh.misses;
      ++sh.expired;
    }
    return result;
  }

  LookupResult Peek(const CacheKey& key) const override {
    const ObjectId id = IdOf(key);
    Shard& sh = ShardOf(id);
    const double now = clock_->NowSeconds();
    LookupResult result;
    ShardLock lock(sh);
    const Slot s = sh.core->Find(id);
    if (s == kNoSlot || sh.payload[s]->key != key) return result;
    const Payload& value = sh.payload[s];
    // The core's freshness rule (CacheCore::Lookup): stale at expires_at.
    if (sh.core->view().meta(s).expires_at <= now) {
      result.outcome = LookupOutcome::kExpired;
      return result;
    }
    result.outcome = LookupOutcome::kHit;
    result.age_seconds = now - value->stored_at;
    result.value = value;
    result.value_score = sh.core->policy().ValueScore(s);
    return result;
  }

  bool Insert(const CacheKey& key, CachedValue value,
              const InsertContext& ctx) override {
    const ObjectId id = IdOf(key);
    Shard& sh = ShardOf(id);
    const double now = clock_->NowSeconds();
    value.key = key;
    value.stored_at = now;
    value.ttl_seconds = ctx.ttl_seconds;
    value.latency_seconds = ctx.latency_seconds;
    value.cost = ctx.cost;
    value.request_type = ctx.request_type;
    Request req;
    req.id = id;
    req.tool = ToolFeature(key);
    req.param_category = ctx.category;
    req.user = UserFeature(ctx.user);
    req.size = std::max<uint64_t>(1, AccountedSize(key, value));
    req.latency = ctx.latency_seconds;
    req.cost = ctx.cost;
    req.ttl = ctx.ttl_seconds;
    req.now = now;
    // Allocate outside the lock.
    auto payload = std::make_shared<const CachedValue>(std::move(value));
    ShardLock lock(sh);
    req.index = sh.index++;
    const Slot s = sh.core->Insert(req);
    if (s == kNoSlot) {
      ++sh.rejections;
      return false;
    }
    if (s >= sh.payload.size()) sh.payload.resize(s + 1);
    sh.payload[s] = std::move(payload);
    ++sh.inserts;
    return true;
  }

  bool Erase(const CacheKey& key) override {
    const ObjectId id = IdOf(key);
    Shard& sh = ShardOf(id);
    ShardLock lock(sh);
    const Slot s = sh.core->Find(id);
    if (s == kNoSlot || sh.payload[s]->key != key) return false;
    return sh.core->Erase(id);
  }

  uint64_t EraseIf(const std::function<bool(const CacheKey&)>& pred) override {
    uint64_t erased = 0;
    std::vector<ObjectId> ids;
    for (auto& shard : shards_) {
      ShardLock lock(*shard);
      ids.clear();
      for (const Payload& p : shard->payload) {
        if (p != nullptr && pred(p->key)) ids.push_back(IdOf(p->key));
      }
      for (ObjectId id : ids) erased += shard->core->Erase(id);
    }
    return erased;
  }

  void Clear() override {
    for (auto& shard : shards_) {
      ShardLock lock(*shard);
      shard->core->Clear();
    }
  }

  void ExpireNow() override {
    const double now = clock_->NowSeconds();
    for (auto& shard : shards_) {
      ShardLock lock(*shard);
      shard->core->ExpireUntil(now);
    }
  }

  ResultCacheStats Stats() const override {
    ResultCacheStats st;
    for (const auto& shard : shards_) {
      std::lock_guard<std::mutex> lock(shard->mu);
      st.hits += shard->hits;
      st.misses += shard->misses;
      st.expired += shard->expired;
      st.collisions += shard->collisions;
      st.inserts += shard->inserts;
      st.rejections += shard->rejections;
      st.erasures += shard->erasures;
      st.evictions += shard->core->evictions();
      st.expirations += shard->core->expirations();
      st.bytes += shard->core->view().used_bytes();
      st.entries += shard->core->view().entry_count();
    }
    return st;
  }

  uint32_t num_shards() const override {
    return static_cast<uint32_t>(shards_.size());
  }

 private:
  ObjectId IdOf(const CacheKey& key) const {
    return options_.key_id ? options_.key_id(key) : key.Id();
  }
  Shard& ShardOf(ObjectId id) const {
    if (shard_shift_ == 0) return *shards_[0];
    return *shards_[MixId(id) >> (64 - shard_shift_)];
  }

  const ResultCacheOptions options_;
  const Clock* clock_;
  std::unique_ptr<SystemClock> own_clock_;
  std::vector<std::unique_ptr<Shard>> shards_;
  const int shard_shift_;  // log2(number of shards)
};

}  // namespace

Result<std::unique_ptr<ResultCache>> NewResultCache(ResultCacheOptions options,
                                                    const Clock* clock) {
  // Choice: 1 shard by default (0 also means 1): a policy that learns from
  // traffic (VAAC) must see all of it, and an entry may use the whole
  // budget; multi-threaded callers opt into more shards.
  const uint32_t n = options.num_shards == 0 ? 1 : options.num_shards;
  if (!std::has_single_bit(n) || n > (1u << 16)) {
    return InvalidArgument(
        "num_shards must be a power of two in [1, 65536], got " +
        std::to_string(options.num_shards));
  }
  const uint64_t shard_bytes = options.capacity_bytes == kUnlimitedBytes
                                   ? kUnlimitedBytes
                                   : options.capacity_bytes / n;
  // Choice: a non-zero entry limit gives every shard at least one entry (0
  // would mean "unlimited" to CacheCore).
  const uint64_t shard_entries =
      options.capacity_entries == 0
          ? 0
          : std::max<uint64_t>(1, options.capacity_entries / n);
  std::vector<std::unique_ptr<Shard>> shards;
  shards.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    PolicyParams params{.capacity_bytes = shard_bytes,
                        .capacity_entries = shard_entries,
                        .seed = options.seed + i,
                        .knobs = options.knobs};
    Result<std::unique_ptr<Policy>> policy = MakePolicy(options.policy, params);
    if (!policy.ok()) return policy.status();
    auto shard = std::make_unique<Shard>();
    shard->core = std::make_unique<CacheCore>(
        CacheCoreOptions{.capacity_bytes = shard_bytes,
                         .capacity_entries = shard_entries},
        std::move(*policy));
    Shard* raw = shard.get();
    shard->core->SetRemovalListener(
        [raw](Slot s, ObjectId, RemovalCause cause) {
          raw->graveyard.push_back(std::move(raw->payload[s]));
          raw->erasures += cause == RemovalCause::kErased;
        });
    shards.push_back(std::move(shard));
  }
  return std::unique_ptr<ResultCache>(
      new ShardedResultCache(std::move(options), clock, std::move(shards)));
}

}  // namespace toolcache
