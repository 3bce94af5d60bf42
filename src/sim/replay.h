// Replay: the simulator's request loop, written once for every workload
// (synthetic or a real trace) and every policy of the registry.
//
// A Trace is first turned into a PreparedTrace (object identities, grouping
// features, cacheability, virtual time, next-access indices for offline
// policies), once per trace; Replay then runs it through one CacheCore + one
// policy at one capacity and returns the counters of ReplayMetrics.
//
// Per record, in order (libCacheSim's loop):
//   COMMAND            -> never looked up, never inserted: a miss with full
//                         latency/cost; under InvalidationRule::kSession it
//                         erases every entry its session created or was
//                         served (see InvalidationRule)
//   not cacheable      -> (TTL <= min_cacheable_ttl) bypass: a miss
//   otherwise          -> CacheCore::Lookup: hit (served; counts saved
//                         latency/cost/bytes and stale results) | miss or
//                         expired -> Insert unless the result is an error
//
// Thread-safety: a PreparedTrace is immutable after PrepareTrace and may be
// shared by concurrent Replay calls; Replay has no shared state.
//
// Example:
//   Result<PreparedTrace> p = PrepareTrace(trace, {});
//   ReplayOptions opt{.policy = "lru", .capacity_bytes =
//                         CapacityForPercent(*p, 10)};
//   Result<ReplayMetrics> m = Replay(*p, opt);
//   if (m.ok()) std::cout << m->HitRatio();
#ifndef TOOLCACHE_SRC_SIM_REPLAY_H_
#define TOOLCACHE_SRC_SIM_REPLAY_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "src/sim/random.h"
#include "toolcache/config.h"
#include "toolcache/policy.h"
#include "toolcache/status.h"
#include "toolcache/trace.h"

namespace toolcache::sim {

// What a COMMAND invalidates.
enum class InvalidationRule {
  // Nothing: the workload's COMMAND tools change no state any informational
  // tool reads (the synthetic send_message writes to an outbox).
  kNone,
  // Choice: every cached entry the COMMAND's session has touched -- created
  // (inserted) or been served from cache -- since the entry was inserted.
  // A `cd` therefore drops every `ls` result its session cached or read,
  // including one another session created. Entries the session never
  // touched stay (their staleness, if any, is counted by stale_served).
  kSession,
};

// Object identity (PrepareTrace): scope (--scope) + the record's tenant +
// tool + canonical arguments, interned exactly.

// Who may share a cached result: part of the object identity.
enum class Scope { kGlobal, kUser, kSession };

struct PrepareOptions {
  // Paper-silent: one shared cache, as the paper's multi-user setting implies.
  Scope scope = Scope::kGlobal;
  // Paper section 5.2: a TTL <= 60 s is not cacheable. The faces' value
  // (Config::min_cacheable_ttl_seconds), not a copy of it.
  double min_cacheable_ttl = Config().min_cacheable_ttl_seconds;
  // TTL of a record whose trace carries none (and no classifier decided):
  // the faces' default ttlSeconds (Config::ttl_seconds, the paper's
  // "computational" 300 s).
  double default_ttl = Config().ttl_seconds;
};

// One column of a PreparedTrace: a value per record, held as one constant
// until a record differs (then a vector). Traces repeat most fields (one
// latency, no sessions, no digests...), so most columns cost nothing per
// record. Values compare by bits (a NaN constant stays constant).
template <typename T>
class Column {
 public:
  T operator[](size_t i) const {
    return values_.empty() ? constant_ : values_[i];
  }
  // Appends the value of record `n` (== the records before it); `reserve`
  // sizes the vector if this is the record that makes the column vary.
  [[gnu::always_inline]] void Push(T v, size_t n, size_t reserve) {
    if (!values_.empty()) {
      values_.push_back(v);
    } else if (n == 0 || !SameBits(v, constant_)) {
      Start(v, n, reserve);  // the first value, or the first that differs
    }
  }
  // The whole column at once (a constant when every value is the same).
  void Assign(std::vector<T>&& v) {
    const bool same = std::all_of(
        v.begin(), v.end(), [&](const T& x) { return SameBits(x, v.front()); });
    if (same) {
      constant_ = v.empty() ? T{} : v.front();
      std::vector<T>().swap(values_);
    } else {
      values_ = std::move(v);
    }
  }
  void Fill(T v) {
    constant_ = v;
    std::vector<T>().swap(values_);
  }
  // Empties the column for the next chunk of a stream (keeps the capacity).
  void Clear() { values_.clear(); }
  bool varies() const { return !values_.empty(); }
  uint64_t bytes() const { return values_.capacity() * sizeof(T); }

 private:
  static bool SameBits(const T& a, const T& b) {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
  }
  // Out of line: once per column at most (keeps Push small enough to
  // inline in the readers' loops).
  [[gnu::noinline]] void Start(T v, size_t n, size_t reserve) {
    if (n == 0) {
      constant_ = v;
      return;
    }
    values_.reserve(std::max(reserve, n + 1));
    values_.assign(n, constant_);
    values_.push_back(v);
  }
  T constant_{};
  std::vector<T> values_;
};

// One trace, ready to replay: a compact record per request (columns, most of
// them constant in practice: docs/SIM.md, "Trace replay speed") and per-object
// tables; request(i) rebuilds the full Request a policy sees. At most
// 2^32 - 1 records and objects.
struct PreparedTrace {
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  enum Flag : uint8_t { kCacheable = 1, kCommand = 2, kError = 4 };

  std::string name;
  // Per object (dense index in order of first appearance). An object's id
  // is ObjectIdOf(index), computed rather than stored; its features are
  // columns too (one constant for a one-tool trace).
  uint64_t objects = 0;
  Column<uint64_t> object_category;  // Request::param_category
  Column<uint32_t> object_tool;      // interned tool (1-based)
  // Per record.
  std::vector<uint32_t> object;  // object index
  Column<uint64_t> size;         // >= 1
  Column<double> latency;
  Column<double> cost;
  Column<double> ttl;  // 0 for a COMMAND
  Column<double> now;  // virtual time
  Column<uint32_t> user;
  Column<uint32_t> session;  // interned session
  Column<uint32_t> digest;   // interned result digest, 0 = unknown
  Column<uint8_t> flags;     // Flag bits
  // Next cacheable request of the same object (kNone = none).
  Column<uint32_t> next_access;
  // Index of the next COMMAND in the record's session (kNone = none): what a
  // hit or insert of this record exposes its entry to under
  // InvalidationRule::kSession (Request::dies_at for offline policies).
  Column<uint32_t> next_command;
  uint64_t records = 0;
  uint32_t session_count = 0;
  uint64_t unique_cacheable_objects = 0;
  uint64_t unique_cacheable_bytes = 0;  // first-seen size of each object
  uint64_t total_bytes = 0;             // sum over all records

  bool empty() const { return records == 0; }
  bool cacheable(size_t i) const { return (flags[i] & kCacheable) != 0; }
  bool command(size_t i) const { return (flags[i] & kCommand) != 0; }
  bool error(size_t i) const { return (flags[i] & kError) != 0; }
  // Mix64(index + 1): a bijection, so distinct objects never share an id.
  static ObjectId ObjectIdOf(uint64_t index) { return Mix64(index + 1); }
  ObjectId id(size_t i) const { return ObjectIdOf(object[i]); }
  uint64_t NextCommand(size_t i) const {
    const uint32_t c = next_command[i];
    return c == kNone ? kNoNextAccess : c;
  }
  // The full view of record i (id, features, size, latency, cost, ttl, now,
  // index, next_access and next_access_time; dies_at unset).
  Request request(size_t i) const {
    Request q;
    const uint32_t o = object[i];
    q.id = ObjectIdOf(o);
    q.tool = object_tool[o];
    q.param_category = object_category[o];
    q.user = user[i];
    q.size = size[i];
    q.latency = latency[i];
    q.cost = cost[i];
    q.ttl = ttl[i];
    q.now = now[i];
    q.index = i;
    const uint32_t nx = next_access[i];
    if (nx != kNone) {
      q.next_access = nx;
      q.next_access_time = now[nx];
    }
    return q;
  }
  // Every record's Request / cacheable flag (offline solvers, tests).
  std::vector<Request> Requests() const;
  std::vector<uint8_t> CacheableFlags() const;
  // Heap bytes held (per-record columns and per-object tables).
  uint64_t MemoryBytes() const;
};

// What a capacity and a report need of a trace: its totals, without the
// records (all a streamed read keeps).
struct TraceTotals {
  std::string name;
  uint64_t records = 0;
  uint64_t objects = 0;
  uint32_t session_count = 0;
  uint64_t unique_cacheable_objects = 0;
  uint64_t unique_cacheable_bytes = 0;
  uint64_t total_bytes = 0;
};
TraceTotals TotalsOf(const PreparedTrace& trace);

// Interns identities and features. Errors (InvalidArgument) name the
// offending record: empty tool, arguments not an object, latency / cost
// negative, non-finite or above the trace bounds (kMaxTrace* in trace.h),
// result_size above kMaxTraceResultSize.
Result<PreparedTrace> PrepareTrace(const Trace& trace,
                                   const PrepareOptions& options);

// The replay's invalidation rule seen from one fetch: for each request p,
// the first request index at which an entry inserted by p is gone under
// `rule` (whatever the capacity): p + 1 when p is an error result (never
// inserted); under kSession the first COMMAND, after some request q >= p of
// the same object, in q's session (a hit at q touches the entry, so q's
// session's next COMMAND erases it); otherwise UINT64_MAX (never). Only
// meaningful for cacheable requests (others hold UINT64_MAX). Non-
// decreasing along an object's non-error requests. The offline optimum uses
// it so that it never counts a hit the replay's rule forbids.
std::vector<uint64_t> EntryDeathIndices(const PreparedTrace& trace,
                                        InvalidationRule rule);

// Paper-silent: capacity for `percent` of the unique cacheable objects: the
// summed first-seen size of them
// (percent x unique_cacheable_bytes), or their count (entries); at least 1.
uint64_t CapacityForPercent(const TraceTotals& trace, double percent);
uint64_t EntriesForPercent(const TraceTotals& trace, double percent);
uint64_t CapacityForPercent(const PreparedTrace& trace, double percent);
uint64_t EntriesForPercent(const PreparedTrace& trace, double percent);

struct ReplayOptions {
  std::string policy = "lru";  // a registry name
  std::map<std::string, double, std::less<>> knobs;
  uint64_t seed = 1;
  uint64_t capacity_bytes = 0;
  uint64_t capacity_entries = 0;  // 0 = no entry limit
  InvalidationRule invalidation = InvalidationRule::kSession;
  // TEST ONLY: send COMMANDs through lookup and insert like informational
  // calls, a deliberately broken path that proves command_served counts.
  bool test_only_serve_commands = false;
};

struct ReplayMetrics {
  uint64_t requests = 0;
  uint64_t hits = 0;    // served from cache
  uint64_t misses = 0;  // everything else (incl. COMMAND and bypass)
  uint64_t cacheable_requests = 0;
  uint64_t command_requests = 0;
  uint64_t hit_bytes = 0;
  uint64_t total_bytes = 0;
  // Paper-silent: paid upstream, summed over the requests not served from
  // cache; a hit costs 0 latency and 0 cost.
  double total_latency = 0;  // seconds
  uint64_t total_size = 0;   // bytes fetched from upstream
  double total_cost = 0;     // USD
  double saved_latency = 0;  // over hits
  double saved_cost = 0;
  uint64_t admissions = 0;  // results inserted
  uint64_t rejections = 0;  // results refused by Admit (or oversized)
  uint64_t evictions = 0;
  uint64_t expired_misses = 0;  // lookups that found an expired entry
  uint64_t invalidations = 0;   // entries erased by a COMMAND (session rule)
  uint64_t command_served = 0;  // COMMANDs answered from cache: must be 0
  uint64_t stale_served = 0;    // hits whose digest differs from the trace's

  // Paper-silent: hits / requests over ALL requests (COMMANDs and uncacheable
  // calls are misses), so every policy is compared on the same base.
  double HitRatio() const;
  // hit_bytes / total_bytes.
  double ByteHitRatio() const;
};

// Replays `trace` through a fresh CacheCore with the policy `options.policy`.
// Errors: unknown policy or knob (the registry's message).
Result<ReplayMetrics> Replay(const PreparedTrace& trace,
                             const ReplayOptions& options);

// The same replay fed a chunk at a time (StreamPreparedTrace), for online
// and unbounded policies: what Replay decides needs no look-ahead except
// "does this session have a COMMAND still to come" (whether a touch is
// worth recording), which the caller supplies as the count of COMMANDs per
// session (CountCommands over a first pass). Feeding the chunks of a trace
// in order gives exactly Replay's metrics on the whole trace.
//
//   Result<std::unique_ptr<Replayer>> r = Replayer::Make(opt, commands);
//   StreamPreparedTrace(path, read, 1 << 16, [&](auto& c, uint64_t first) {
//     (*r)->Feed(c, first); return Status::Ok(); });
//   ReplayMetrics m = (*r)->Finish();
// A trace whose every record is plain (ScanTraceTotals says so: cacheable,
// INFORMATIONAL, no error, no digest, and one session, user, tool,
// parameter category, latency, cost and TTL throughout -- oracleGeneral,
// most binary traces) is streamed without columns: the reader hands over
// only what varies per record (StreamPlainTrace), the constants once.
struct PlainConstants {
  uint32_t tool = 1;
  uint32_t user = 0;
  uint32_t session = 0;
  uint64_t param_category = 0;
  double latency = 0;
  double cost = 0;
  double ttl = 0;  // as the replay sees it (PreparedTrace::ttl)
  // A binary trace's record 0 TTL, bit for bit: what every record of the
  // second read is checked against (StreamPlainTrace), so a file rewritten
  // between the reads cannot bring its own record 0 along.
  uint64_t ttl_bits = 0;
  // Taken from a binary header's plain declaration without a first pass:
  // the stream checks every record in full against it (StreamPlainTrace).
  bool declared = false;
};
struct PlainChunk {
  const uint32_t* object = nullptr;  // object index (PreparedTrace::object)
  const uint64_t* size = nullptr;    // >= 1 (PreparedTrace::size)
  const double* now = nullptr;       // PreparedTrace::now
  size_t records = 0;
};

class Replayer {
 public:
  // `commands_per_session[s]`: COMMAND records of session s in the whole
  // trace (index = interned session). Errors: unknown policy or knob; an
  // offline policy (it needs next_access: use Replay on a held trace).
  static Result<std::unique_ptr<Replayer>> Make(
      const ReplayOptions& options, std::vector<uint64_t> commands_per_session);
  virtual ~Replayer() = default;
  // Records [first, first + chunk.records) of the trace, in order.
  virtual void Feed(const PreparedTrace& chunk, uint64_t first) = 0;
  // The same for a chunk of plain records: exactly Feed's metrics on the
  // PreparedTrace chunk with these columns and constants.
  virtual void FeedPlain(const PlainChunk& chunk, const PlainConstants& k,
                         uint64_t first) = 0;
  // The metrics so far (call once, after the last chunk).
  virtual ReplayMetrics Finish() = 0;
};

// Adds each COMMAND of `chunk` to counts[session] (growing it as needed).
void CountCommands(const PreparedTrace& chunk, std::vector<uint64_t>* counts);

}  // namespace toolcache::sim

#endif  // TOOLCACHE_SRC_SIM_REPLAY_H_
