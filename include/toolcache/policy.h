// Cache policies: admission + eviction behind one small interface, and the
// cache core that runs the request loop once for every policy.
//
// The loop (libCacheSim's, written once in CacheCore):
//   Lookup(req)  -> hit (fresh)        : Policy::OnHit
//                -> expired            : entry removed (OnRemove), counted
//                -> miss
//   Insert(req)  -> Policy::Admit(req) : false -> not cached
//                -> while it does not fit: Policy::Victim() then remove it
//                -> Policy::OnInsert
// A policy only decides; CacheCore owns the entries, the byte/entry
// accounting, and TTL expiry, so every policy honours capacity and TTL the
// same way.
//
// Thread-safety: a Policy and a CacheCore are NOT thread-safe; callers that
// share one across threads use the sharded front in result_cache.h.
//
// Example:
//   auto policy = MakePolicy("vaac", {.capacity_bytes = 1 << 20});
//   CacheCore core({.capacity_bytes = 1 << 20}, std::move(*policy));
//   Request req{.id = 42, .tool = 1, .size = 512, .latency = 0.8, .ttl = 3600};
//   if (core.Lookup(req) != LookupOutcome::kHit) core.Insert(req);
#ifndef TOOLCACHE_POLICY_H_
#define TOOLCACHE_POLICY_H_

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "toolcache/status.h"

namespace toolcache {

// Identity of a cached object: the first 8 bytes of its CacheKey digest, or a
// trace's object id. Full-key comparison happens above the core.
using ObjectId = uint64_t;

inline constexpr double kNoExpiry = std::numeric_limits<double>::infinity();
inline constexpr uint64_t kNoNextAccess = std::numeric_limits<uint64_t>::max();
// A byte capacity that never forces an eviction (the infinite cache). A
// capacity of 0 bytes caches nothing.
inline constexpr uint64_t kUnlimitedBytes =
    std::numeric_limits<uint64_t>::max();

// One request as a policy sees it: identity, grouping features (the paper's
// tool -> parameter category -> user hierarchy) and system features.
struct Request {
  ObjectId id = 0;
  uint32_t tool = 0;            // interned tool identity
  uint64_t param_category = 0;  // hash of the parameter-category value, 0=none
  uint32_t user = 0;            // interned user identity
  uint64_t size = 1;            // result size in bytes (>= 1)
  double latency = 0;           // seconds one miss costs upstream
  double cost = 0;              // price of one miss (e.g. USD)
  double ttl = kNoExpiry;       // seconds the result stays valid
  double now = 0;               // seconds; virtual time in the simulator
  uint64_t index = 0;           // position in the request stream
  // Index of the next request for `id`, for offline policies (Belady); set
  // by the simulator, kNoNextAccess otherwise.
  uint64_t next_access = kNoNextAccess;
  // Time of that next request (kNoExpiry when none or unknown), so an
  // offline policy can tell that an entry expires before it is used again.
  double next_access_time = kNoExpiry;
  // Index of the first request at which an entry this request touches is
  // invalidated (its session's next invalidating COMMAND in a trace
  // replay), kNoNextAccess when never. Set by the simulator.
  uint64_t dies_at = kNoNextAccess;
};

// Handle of a cached entry inside a CacheCore; stable while the entry lives.
using Slot = uint32_t;
inline constexpr Slot kNoSlot = std::numeric_limits<Slot>::max();

// What CacheCore keeps per entry. Policies may read it through EntryView.
struct EntryMeta {
  ObjectId id = 0;
  uint64_t size = 0;
  double inserted_at = 0;
  double expires_at = kNoExpiry;
  double last_access = 0;
  uint32_t hits = 0;
};

// Read-only view of the core's entries, handed to the policy on Bind().
class EntryView {
 public:
  virtual ~EntryView() = default;
  // REQUIRES: `slot` holds a live entry.
  virtual const EntryMeta& meta(Slot slot) const = 0;
  virtual uint64_t used_bytes() const = 0;
  virtual uint64_t capacity_bytes() const = 0;
  virtual uint64_t entry_count() const = 0;
  // The entry limit, 0 = unlimited. (Added later: default body for fakes.)
  virtual uint64_t capacity_entries() const { return 0; }
  // Whether a result of `size` bytes (0 counts as 1) fits without evicting
  // anything (overflow-safe).
  bool Fits(uint64_t size) const {
    const uint64_t need = std::max<uint64_t>(size, 1);
    const uint64_t cap = capacity_bytes(), used = used_bytes();
    const uint64_t max_entries = capacity_entries();
    return used <= cap && need <= cap - used &&
           (max_entries == 0 || entry_count() < max_entries);
  }
};

// Admission + eviction decisions. Implementations live in src/policy/ behind
// factories listed in the registry table (MakePolicy).
class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view name() const = 0;
  // Called once by CacheCore before any other hook.
  virtual void Bind(const EntryView* view) { view_ = view; }
  // A cacheable request missed. Return true to admit its result. Called
  // before any eviction for it; may update statistics (frequency sketches,
  // group statistics, ghost queues).
  virtual bool Admit(const Request& req) = 0;
  // The admitted result now occupies `slot`.
  virtual void OnInsert(Slot slot, const Request& req) = 0;
  // A fresh entry was served.
  virtual void OnHit(Slot slot, const Request& req) = 0;
  // The entry leaves the cache (evicted, expired, erased). Called before the
  // slot is reused.
  virtual void OnRemove(Slot slot) = 0;
  // Choose the entry to evict next. REQUIRES: the cache holds an entry.
  // May reorganize internal queues (S3-FIFO, W-TinyLFU) before answering.
  // MUST return a live slot. Victim() itself removes nothing: CacheCore then
  // calls OnRemove(victim) like for every other removal.
  virtual Slot Victim() = 0;
  // Bytes of policy metadata per cached entry (for the memory report).
  virtual uint64_t MetadataBytes() const { return 0; }
  // The live entry's current score in this policy's eviction order (higher
  // = kept longer), for `explain`; nullopt for policies that rank entries by
  // recency or frequency alone. (Added later: default body.)
  virtual std::optional<double> ValueScore(Slot slot) const {
    (void)slot;
    return std::nullopt;
  }

 protected:
  const EntryView* view_ = nullptr;
};

// Construction parameters shared by all policies. `knobs` carries
// policy-specific tunables by name (e.g. "lambda1"); unknown knobs are an
// error at MakePolicy.
struct PolicyParams {
  uint64_t capacity_bytes = 0;
  uint64_t capacity_entries = 0;  // 0 = unlimited
  uint64_t seed = 1;
  std::map<std::string, double, std::less<>> knobs;
};

// How the simulator must run a policy.
enum class PolicyKind {
  kOnline,     // an ordinary policy: usable in the proxies
  kOffline,    // needs Request::next_access (Belady): simulator only
  kUnbounded,  // a limit run with unbounded capacity (infinite cache)
};

// One row of the policy registry.
struct PolicyInfo {
  std::string_view name;         // "lru", "caca", "vaac", ...
  std::string_view description;  // one line for --help and docs
  PolicyKind kind;
  std::unique_ptr<Policy> (*make)(const PolicyParams& params);
  // Accepted PolicyParams::knobs, comma-separated, each a name with an
  // optional valid range "name=lo:hi" (either bound may be empty:
  // "lambda1=0:,hr=0:1"); "" = none. MakePolicy rejects any other knob name
  // and any value outside its range.
  std::string_view knobs = "";
};

// The registry table, in display order.
std::span<const PolicyInfo> Policies();
// Returns the policy `name` or an error listing the known names.
Result<std::unique_ptr<Policy>> MakePolicy(std::string_view name,
                                           const PolicyParams& params);
// The row named `name`, or nullptr.
const PolicyInfo* FindPolicy(std::string_view name);
// One knob of a row: its name and valid range (either bound may be
// infinite).
struct KnobSpec {
  std::string_view name;
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
};

// The knobs a row accepts, parsed from its `knobs` list ("name=lo:hi", the
// range optional). Inline so that modules holding only the table (config
// checks) need not link the policies.
inline std::vector<KnobSpec> KnobSpecs(const PolicyInfo& info) {
  std::vector<KnobSpec> specs;
  auto bound = [](std::string_view text, double fallback) {
    return text.empty() ? fallback
                        : std::strtod(std::string(text).c_str(), nullptr);
  };
  for (std::string_view list = info.knobs; !list.empty();) {
    const size_t comma = list.find(',');
    const std::string_view entry = list.substr(0, comma);
    const size_t eq = entry.find('=');
    KnobSpec spec{entry.substr(0, eq)};
    if (eq != std::string_view::npos) {
      const std::string_view range = entry.substr(eq + 1);
      const size_t colon = range.find(':');
      spec.lo = bound(range.substr(0, colon), spec.lo);
      if (colon != std::string_view::npos) {
        spec.hi = bound(range.substr(colon + 1), spec.hi);
      }
    }
    specs.push_back(spec);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return specs;
}

// The knob names a row accepts (its `knobs` list without the ranges).
inline std::vector<std::string_view> KnobNames(const PolicyInfo& info) {
  std::vector<std::string_view> names;
  for (const KnobSpec& spec : KnobSpecs(info)) names.push_back(spec.name);
  return names;
}
// The row's knob `name` with its range, or nullopt when it has none.
inline std::optional<KnobSpec> FindKnob(const PolicyInfo& info,
                                        std::string_view name) {
  for (const KnobSpec& spec : KnobSpecs(info)) {
    if (spec.name == name) return spec;
  }
  return std::nullopt;
}
// params.knobs[name] if present, else `fallback` (for policy factories; the
// name was already validated against the row by MakePolicy).
double KnobOr(const PolicyParams& params, std::string_view name,
              double fallback);

enum class LookupOutcome { kHit, kMiss, kExpired };
enum class RemovalCause { kEvicted, kExpired, kErased };

struct CacheCoreOptions {
  uint64_t capacity_bytes = 0;  // 0 caches nothing; kUnlimitedBytes = no limit
  uint64_t capacity_entries = 0;  // 0 = unlimited
};

// The request loop of every policy: entries, accounting, TTL, eviction.
class CacheCore {
 public:
  CacheCore(const CacheCoreOptions& options, std::unique_ptr<Policy> policy);
  ~CacheCore();
  CacheCore(const CacheCore&) = delete;
  CacheCore& operator=(const CacheCore&) = delete;

  // Looks up req.id at req.now. A fresh entry is a hit (Policy::OnHit); an
  // entry past its expiry is removed and reported as kExpired.
  LookupOutcome Lookup(const Request& req);
  // After a miss: expires entries due at req.now (ExpireUntil), asks the
  // policy (Admit, exactly once per call), evicts until the result fits,
  // inserts (OnInsert). Returns the new slot, or kNoSlot when not admitted,
  // larger than capacity_bytes, or already expired (ttl <= 0 or NaN); the
  // policy is asked even then, so its statistics see every miss, and nothing
  // is evicted for a refused object. If req.id is already cached, the old
  // entry is first removed (RemovalCause::kErased). size 0 counts as 1.
  Slot Insert(const Request& req);
  // Removes req.id if cached. Returns whether it was.
  bool Erase(ObjectId id);
  // Removes every entry whose expiry is <= now.
  void ExpireUntil(double now);
  // Removes every entry (RemovalCause::kErased).
  void Clear();
  // Slot of `id`, or kNoSlot.
  Slot Find(ObjectId id) const;

  // Called for every removal, after Policy::OnRemove and before the slot is
  // reused (values above the core, like ResultCache's payloads, are dropped
  // here); view().meta(slot) still describes the leaving entry. The listener
  // must not call back into this CacheCore. Expiry is inclusive: an entry is
  // stale once now >= inserted_at + ttl.
  void SetRemovalListener(std::function<void(Slot, ObjectId, RemovalCause)> f);

  const EntryView& view() const;
  Policy& policy();
  uint64_t evictions() const;
  uint64_t expirations() const;
  // Bytes the core's own structures use (entry table, hash index, expiry
  // heap, free list), excluding the policy's: for the memory report.
  uint64_t MetadataBytes() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace toolcache

#endif  // TOOLCACHE_POLICY_H_
