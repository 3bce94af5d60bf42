// Internal to src/cache: how ToolCache keeps tool results in a Store that
// other processes share (the L2 under the in-process ResultCache), and how
// invalidations reach every process without scanning keys.
//
// Layout in the store (namespace "tc1"; every hash is SHA-256, hex):
//   e:<S>               server epoch counter          (S = hash of server)
//   ra:<S>:<R>          "a write AT resource R" counter
//   rb:<S>:<R>          "a write AT or BELOW R" counter (R = hash of resource)
//   v:<U>:<S>:<E>:<D>   a result: scope hash U ("-" = global), server epoch
//                       E when it was read upstream, key digest D (KEYS.md)
// A result depends on its server's epoch and, for each resource argument P
// (normalized, as tool_cache.cc compares them), on ra:<A> for every strict
// ancestor A of P and rb:<P>. A write of resource W bumps ra:<W> and rb:<A>
// for W and every ancestor A of W; a write without resources (or under
// `invalidation: server`) bumps the server epoch. So a result of P is
// invalidated exactly when W equals P, lies below P or above P: the
// relation ResourcesOverlap implements for the in-process cache.
//
// A result records the values of every counter it depends on, read BEFORE
// the upstream call (its tag). It is served only while all of them are
// unchanged, so a write that happened anywhere, in any process, after the
// read was sent makes it invisible. Counters never start at 0: one that is
// absent (lost, evicted, a new store) is created at the current time in
// microseconds, above any value it could have had, so a lost counter can
// never make an old result valid again.
//
// Thread-safety: SharedResults is thread-safe; it never holds a lock while
// it waits for the store. Ownership: borrows the Store.
#ifndef TOOLCACHE_SRC_CACHE_SHARED_RESULTS_H_
#define TOOLCACHE_SRC_CACHE_SHARED_RESULTS_H_

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "toolcache/key.h"
#include "toolcache/result_cache.h"
#include "toolcache/status.h"
#include "toolcache/store.h"

namespace toolcache::cache_internal {

inline constexpr std::string_view kResultNamespace = "tc1";

// The counters one result depends on; counter_keys[0] is the server epoch.
struct Dependencies {
  std::string server_hash;
  std::vector<std::string> counter_keys;
};

// A result as stored: the value (key, bytes and the policy's metadata) and
// the tag of counter values it was read under.
struct StoredResult {
  CachedValue value;  // key, result, flags, media_type, ttl, latency, cost,
                      // request_type; stored_at is not stored
  std::string tag;
};

// The record format (docs/STORE.md): "TCR1", a CRC-32 of the rest, the
// metadata, then length-prefixed tag, key fields, media type and result.
// `meta` gives the key and metadata (its `result` is ignored).
std::string EncodeResult(const CachedValue& meta, std::string_view result,
                         std::string_view tag);
// DATA_LOSS when `bytes` is not a whole, intact record.
Result<StoredResult> DecodeResult(std::string_view bytes);

// The strict ancestors of a normalized resource under ResourcesOverlap's
// "below" relation ("/a/b" -> "/", "/a"), shortest first.
std::vector<std::string> ResourceAncestors(std::string_view resource);

class SharedResults {
 public:
  explicit SharedResults(Store* store) : store_(store) {}

  // The counters a result of `server` depends on: the server epoch, and
  // for each of its `resources` the counters a write at or above it bumps.
  // `unanchored`: some resource is a path the proxy cannot place (relative),
  // so the result also depends on a counter every resource write bumps.
  Dependencies DependenciesOf(std::string_view server,
                              const std::vector<std::string>& resources,
                              bool unanchored) const;

  struct Read {
    std::string tag;     // the current counter values, encoded
    uint64_t epoch = 0;  // the server epoch (first counter)
    // The stored result under `key` at that epoch (when asked for), not yet
    // decoded or checked against the tag.
    std::optional<StoreValue> value;
  };
  // Reads the counters of `deps` (creating absent ones) and, when
  // `want_value`, the result stored under `key` at the current epoch. One
  // store round trip when this process's last seen epoch is still current.
  Result<Read> Lookup(const CacheKey& key, const Dependencies& deps,
                      bool want_value);

  // Stores an encoded result read under `epoch` for `ttl_seconds`.
  Status Put(const CacheKey& key, const Dependencies& deps, uint64_t epoch,
             std::string_view record, double ttl_seconds);
  // Removes the result of `key` stored under `epoch`.
  Status Erase(const CacheKey& key, const Dependencies& deps, uint64_t epoch);

  // Publishes a write: bumps the server epoch (empty `resources`) or the
  // counters of each resource.
  Status Invalidate(std::string_view server,
                    const std::vector<std::string>& resources);

  Store* store() const { return store_; }

 private:
  std::string ValueKey(const CacheKey& key, std::string_view server_hash,
                       uint64_t epoch) const;
  Status Bump(const std::vector<std::string>& keys);

  Store* store_;
  std::mutex mu_;
  // Last server epoch seen per server hash: the guess that lets a lookup
  // read counters and value in one round trip.
  std::unordered_map<std::string, uint64_t> epoch_guess_;  // GUARDED_BY(mu_)
};

}  // namespace toolcache::cache_internal

#endif  // TOOLCACHE_SRC_CACHE_SHARED_RESULTS_H_
