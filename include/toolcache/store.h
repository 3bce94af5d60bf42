// Store: the storage under the request path, a small namespaced byte store
// with TTLs and counters that every face and the cache share (tool results,
// LLM conversation state, offloaded results, a cache server's entries).
//
// A Store maps (namespace, key) to an immutable byte string with an optional
// time to live, and keeps 64-bit counters (epochs) that several processes can
// bump atomically. It has no policy: it never decides what to keep beyond
// TTL expiry and its own size limit. Backends (one registry table,
// Stores()):
//   memory              in this process; gone when it exits (the default)
//   sqlite:PATH         one file, WAL journal: survives restarts and kill -9,
//                       expires by TTL, stays within max_bytes
//   redis://HOST:PORT[/DB]
//                       a shared redis-server: several processes on several
//                       machines read and fill it; Redis evicts by TTL and
//                       maxmemory
// Wrappers (fault injection, a circuit breaker) wrap the interface, never a
// backend.
//
// Every call returns a Status: a fault never throws and never crashes. The
// codes mean: UNAVAILABLE (unreachable, connection lost), DEADLINE_EXCEEDED
// (no answer within the timeout), RESOURCE_EXHAUSTED (full, a value too
// large), DATA_LOSS (the backend found corrupt data), FAILED_PRECONDITION
// (degraded: a counter bump failed and may be lost, so counters are not
// read until the store heals itself; SQLite), INVALID_ARGUMENT (a
// malformed key or namespace: a caller bug). StoreFaultOf() maps them to the
// bypass reasons callers count ("store_unavailable", ...).
//
// Thread-safety: every method of every backend and wrapper is thread-safe;
// calls may block on I/O for up to the store's timeout. Ownership: a Store
// owns its connections; callers borrow it (it must outlive them).
//
// Example:
//   Result<std::unique_ptr<Store>> store = OpenStore("sqlite:/tmp/tc.db");
//   if (!store.ok()) return store.status();
//   StoreKey k{.ns = "conv", .key = "session-42"};
//   Status put = (*store)->Put(k, state_bytes, /*ttl_seconds=*/3600);
//   auto got = (*store)->Get({&k, 1});
//   if (got.ok() && (*got)[0]) Use(*(*got)[0]->bytes);
#ifndef TOOLCACHE_STORE_H_
#define TOOLCACHE_STORE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "toolcache/clock.h"
#include "toolcache/policy.h"  // kNoExpiry
#include "toolcache/status.h"

namespace toolcache {

// One stored item's address. `ns` is 1-64 characters of [a-z0-9_.-] (it
// groups a user's items: "tc1" tool results, "conv" conversation state);
// `key` is any bytes, at most kMaxStoreKeyBytes.
struct StoreKey {
  std::string_view ns;
  std::string_view key;
};

inline constexpr size_t kMaxStoreKeyBytes = 1024;
// Most keys one Get or AddToCounters takes.
inline constexpr size_t kMaxStoreBatch = 256;

struct StoreValue {
  std::shared_ptr<const std::string> bytes;  // never null
  // Seconds the item has left to live when read (kNoExpiry: none).
  double ttl_seconds = kNoExpiry;
};

class Store {
 public:
  virtual ~Store() = default;

  // The store's spec as opened ("memory", "sqlite:/p", "redis://h:6379/0"),
  // for logs.
  virtual std::string_view name() const = 0;

  // The items of `keys`, in order: nullopt where absent or expired. One
  // round trip where the backend allows it. A counter reads as its decimal
  // text. REQUIRES: keys.size() <= kMaxStoreBatch (else INVALID_ARGUMENT).
  virtual Result<std::vector<std::optional<StoreValue>>> Get(
      std::span<const StoreKey> keys) = 0;

  // Stores `value` under `key`, replacing any item (or counter) there.
  // `ttl_seconds` > 0, or kNoExpiry for none; a non-positive TTL is
  // INVALID_ARGUMENT. RESOURCE_EXHAUSTED when the value can never fit (or the
  // backend is full and cannot make room).
  virtual Status Put(const StoreKey& key, std::string_view value,
                     double ttl_seconds) = 0;

  // Removes `key`'s item or counter; returns whether there was one.
  virtual Result<bool> Erase(const StoreKey& key) = 0;

  // Adds `delta` to each counter of `keys` atomically per counter and
  // returns the new values in order; a counter that does not exist is first
  // created at `initial` (so delta 0 reads a counter, creating it if
  // needed). Counters never expire and are never evicted by the store's
  // size limit (Redis: only under an allkeys-* maxmemory policy; see
  // docs/STORE.md). REQUIRES: keys.size() <= kMaxStoreBatch. A key holding a
  // non-counter item is INVALID_ARGUMENT. A bump that fails may be lost;
  // SQLite then fails counter reads in every process sharing the file
  // (FAILED_PRECONDITION) until it has moved every counter past every value
  // read before, so a lost bump costs misses, never a stale hit.
  virtual Result<std::vector<uint64_t>> AddToCounters(
      std::span<const StoreKey> keys, uint64_t delta, uint64_t initial) = 0;
};

// The kinds of store failure a caller counts, each with its own bypass
// reason name.
enum class StoreFault {
  kNone,
  kUnavailable,  // "store_unavailable": unreachable / connection lost
  kTimeout,      // "store_timeout": no answer within the timeout
  kFull,         // "store_full": out of space, value too large
  kCorrupt,      // "store_corrupt": an unreadable item
  kDegraded,     // "store_degraded": counters not trusted (a bump was lost)
  kError,        // "store_error": any other failure (a bug, a bad reply)
};

// kNone for OK; otherwise the fault a non-OK status of a Store call means.
StoreFault StoreFaultOf(const Status& status);
// "store_unavailable", ...; "" for kNone.
std::string_view StoreFaultName(StoreFault fault);

// Options shared by the backends; each backend also reads its own
// parameters from the spec's query string (Stores() lists them).
struct StoreOptions {
  // Time for TTLs of the local backends (memory, sqlite), in seconds. SQLite
  // persists expiry times, so its clock must be wall time (seconds since
  // the Unix epoch); nullptr = the system's wall clock. Redis uses the
  // server's clock.
  const Clock* clock = nullptr;
};

// One registry row per backend.
struct StoreInfo {
  std::string_view scheme;   // "memory", "sqlite", "redis"
  std::string_view syntax;   // "sqlite:PATH[?param=value&...]"
  std::string_view params;   // "max_bytes=1GiB busy_timeout_ms=100"
  std::string_view summary;  // one line for --help and docs
};

// The registry: every backend OpenStore knows.
std::span<const StoreInfo> Stores();

// Opens the store a spec names:
//   memory[?max_bytes=N]
//   sqlite:PATH[?max_bytes=N&busy_timeout_ms=N]
//   redis://[:PASSWORD@]HOST:PORT[/DB][?timeout_ms=N&prefix=P&pool=N]
// Sizes accept units as in the configuration ("64MiB"). INVALID_ARGUMENT
// (naming the closest known scheme or parameter) for a malformed spec;
// UNAVAILABLE when a file cannot be opened. A Redis store opens even when
// the server is down (it reconnects by itself) and is wrapped in a circuit
// breaker (NewCircuitBreakerStore) so a dead server costs no timeouts.
Result<std::unique_ptr<Store>> OpenStore(std::string_view spec,
                                         const StoreOptions& options = {});

// --- wrappers -------------------------------------------------------------

// After a call fails with UNAVAILABLE or DEADLINE_EXCEEDED, the breaker
// fails every call at once with UNAVAILABLE for a backoff (doubling from
// `initial_backoff_seconds` to `max_backoff_seconds`), then lets one call
// through to probe; the first success closes it. `clock` must outlive the
// store (nullptr: a steady clock).
struct CircuitBreakerOptions {
  double initial_backoff_seconds = 0.05;
  double max_backoff_seconds = 2.0;
  const Clock* clock = nullptr;
};
std::unique_ptr<Store> NewCircuitBreakerStore(std::unique_ptr<Store> base,
                                              CircuitBreakerOptions options);

// A test wrapper that injects faults into calls of `base` (borrowed; must
// outlive the wrapper) as the shared FaultPlan says. Change the plan's
// settings only while no call runs; they take effect on the next call.
struct FaultPlan {
  // Every call fails with this status before reaching `base` (OK = none).
  StatusCode fail_with = StatusCode::kOk;
  // Only Put fails, with RESOURCE_EXHAUSTED ("full").
  bool full = false;
  // Get returns values with a byte flipped (corrupt entries); counters
  // (all-digit values) are left intact.
  bool corrupt_values = false;
  // Seconds every call sleeps first (a slow store).
  double delay_seconds = 0;
  // Runs at the start of every call, before any fault (tests use it to
  // hold a call inside the store).
  std::function<void()> on_call;
  // Calls that reached `base` / that the plan failed (set by the wrapper).
  std::atomic<uint64_t> passed{0};
  std::atomic<uint64_t> failed{0};
};
std::unique_ptr<Store> NewFaultInjectionStore(Store* base,
                                              std::shared_ptr<FaultPlan> plan);

}  // namespace toolcache

#endif  // TOOLCACHE_STORE_H_
