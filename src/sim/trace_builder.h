// TraceBuilder: builds a PreparedTrace one record at a time, so that trace
// readers stream records into the replay's compact form without holding the
// documents (a Trace of strings) in between.
//
// PrepareTrace (replay.h) is this builder fed from a Trace; the fast readers
// (trace_formats.h) feed it straight from a file. Two entry points:
//   Add          a record as text fields (JSON Lines): identities are interned
//                exactly from the strings, as PrepareTrace always did.
//   AddInterned  a record whose identities are already dense ids (the binary
//                formats): no string is hashed per record.
// Both give identical PreparedTraces for the same records, because the ids
// the binary writer assigns follow the same first-appearance order (see
// InternedRecord).
//
// Thread-safety: none; one builder per reader.
//
// Example:
//   TraceBuilder b("session", {});
//   for (...) if (Status s = b.Add(view); !s.ok()) return s;
//   Result<PreparedTrace> p = std::move(b).Finish();
#ifndef TOOLCACHE_SRC_SIM_TRACE_BUILDER_H_
#define TOOLCACHE_SRC_SIM_TRACE_BUILDER_H_

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "src/sim/replay.h"
#include "toolcache/status.h"
#include "toolcache/verdict.h"

namespace toolcache::sim {

// One record as text (borrowed for the duration of Add). Same meaning as
// TraceRecord; `arguments` is the canonical JSON text of an object.
struct RecordView {
  double time = std::numeric_limits<double>::quiet_NaN();
  std::string_view session;
  std::string_view user;
  std::string_view tenant;
  std::string_view tool;
  std::string_view arguments;
  uint64_t result_size = 0;
  double latency = 0;
  double cost = 0;
  // NaN = none (the default TTL applies), +infinity = never expires.
  double ttl = std::numeric_limits<double>::quiet_NaN();
  bool error = false;
  std::optional<RequestType> request_type;
  std::string_view result_digest;
};

// One record with its identities interned. The ids follow the builder's own
// conventions, in order of first appearance in the trace:
//   key      (tenant, tool, arguments), 0-based, < key_count of the builder
//   tool     1-based
//   user     0 = "" (anonymous), then 1, 2, ...
//   session  0-based
//   digest   0 = "" (unknown), then 1, 2, ...
// `ttl`: NaN = none (the default TTL applies), +infinity = never expires
// (formats without TTLs: libCacheSim's traces).
struct InternedRecord {
  uint64_t key = 0;
  uint64_t param_category = 0;
  uint32_t tool = 1;
  uint32_t user = 0;
  uint32_t session = 0;
  uint32_t digest = 0;
  uint64_t result_size = 0;
  double latency = 0;
  double cost = 0;
  double ttl = std::numeric_limits<double>::quiet_NaN();
  double time = std::numeric_limits<double>::quiet_NaN();
  bool error = false;
  std::optional<RequestType> request_type;
};

// How the builder classes a record: a COMMAND (a record with no ground-truth
// type counts as one: safety first), its TTL in the replay (0 for a
// COMMAND; NaN `ttl` = the options' default, +infinity = never expires) and
// whether it is cacheable (not a COMMAND, TTL above the minimum).
struct RecordClass {
  bool command = false;
  bool cacheable = false;
  double ttl = 0;
};
inline RecordClass ClassifyRecord(const PrepareOptions& options,
                                  std::optional<RequestType> type, double ttl) {
  RecordClass c;
  c.command = !type.has_value() || *type == RequestType::kCommand;
  const double record_ttl = ttl != ttl ? options.default_ttl : ttl;  // NaN
  c.ttl = c.command ? 0 : record_ttl;
  c.cacheable = !c.command && c.ttl > options.min_cacheable_ttl;
  return c;
}

// The sharing boundary the fast replay interns for a record with a `server`
// (TraceRecord::server): the server, length-prefixed behind a control byte
// no tenant of an older trace starts with, then the tenant. Choice: the
// server joins the tenant, so two servers' equal calls are two objects and
// a record without a server keeps its identity (and pinned results).
std::string ServerTenant(std::string_view server, std::string_view tenant);

// What IsPlainCanonicalObject saw (views into its argument).
struct PlainObject {
  uint64_t members = 0;
  std::string_view first_name;   // unescaped: plain names have no escapes
  std::string_view first_value;  // the value's JSON text
};

// Whether `raw` is a JSON object already in its RFC 8785 canonical form, in
// the plain shape fast readers can check without parsing (no whitespace,
// ASCII names without escapes in increasing order, values that are short
// integers, plain ASCII strings, true, false or null). false is always safe
// (the caller then canonicalizes fully).
bool IsPlainCanonicalObject(std::string_view raw, PlainObject* info = nullptr);
// The same check on the object that starts at `p` (a '{'): returns the end
// of that object (past its '}') if it is plain canonical, else nullptr.
// Never reads at or past `end`. IsPlainCanonicalObject(raw) is
// PlainCanonicalObjectEnd(raw.data(), raw.data() + raw.size()) == its end.
const char* PlainCanonicalObjectEnd(const char* p, const char* end,
                                    PlainObject* info = nullptr);

class TraceBuilder {
 public:
  // `expected_records` only reserves memory (0 = unknown). `key_count` bounds
  // InternedRecord::key (0 = AddInterned is not used; kGrowingKeys = keys
  // are numbered 0, 1, 2... as they first appear, each new one exactly the
  // count so far).
  static constexpr uint64_t kGrowingKeys = UINT64_MAX;
  TraceBuilder(std::string name, const PrepareOptions& options,
               uint64_t expected_records = 0, uint64_t key_count = 0);
  ~TraceBuilder();
  TraceBuilder(const TraceBuilder&) = delete;
  TraceBuilder& operator=(const TraceBuilder&) = delete;

  // InvalidArgument "<name>: record <n>: <reason>" for what PrepareTrace
  // rejects (empty tool, latency/cost/size/time out of bounds).
  [[nodiscard]] Status Add(const RecordView& r);
  // Add on each record in turn, stopping at the first error: the same
  // PreparedTrace and errors, faster when the distinct keys outgrow the CPU
  // cache (the key table's memory for a group of records is fetched ahead).
  [[nodiscard]] Status AddBatch(std::span<const RecordView> records);
  // As Add; also rejects ids outside their ranges (a corrupt file).
  [[nodiscard]] Status AddInterned(const InternedRecord& r);
  // Records added so far.
  uint64_t size() const;
  // Computes the next-access and next-COMMAND indices. Call once. When
  // streaming, hands the last chunk to the sink and returns the trace's
  // totals (objects, unique cacheable bytes, sessions...) with no records.
  Result<PreparedTrace> Finish() &&;

  // Streaming: a chunk of records, as a PreparedTrace whose per-record
  // columns hold only the chunk (record i of it is record first + i of the
  // trace; per-object tables and totals cover the trace so far; next_access
  // and next_command are not filled). An error stops the read.
  using ChunkSink =
      std::function<Status(const PreparedTrace& chunk, uint64_t first)>;
  // Which per-record columns a streamed chunk fills: all, or only `flags`
  // and `session` (a first pass that wants the totals and the COMMANDs per
  // session: the other columns are left empty, which costs half as much).
  enum class StreamContent { kAll, kFlagsAndSessions };
  // Call before the first Add: every `chunk_records` records (and the rest at
  // Finish) go to `sink` and are dropped, so the builder's memory is the
  // per-object tables plus one chunk, whatever the trace's length.
  void StreamChunks(uint64_t chunk_records, ChunkSink sink,
                    StreamContent content = StreamContent::kAll);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// The bounds TraceBuilder::Add and AddInterned enforce on a record
// (toolcache/trace.h's kMaxTrace*; TraceBuilder names the one violated), in
// two halves so that a reader whose latency and cost are constants of the
// whole trace tests them once (trace_formats.cc's plain stream).
inline bool CallInTraceBounds(double latency, double cost) {
  return latency >= 0 && latency <= kMaxTraceLatencySeconds && cost >= 0 &&
         cost <= kMaxTraceCost;
}
inline bool ResultInTraceBounds(uint64_t size, double time) {
  return size <= kMaxTraceResultSize &&
         !(std::isinf(time) || time > kMaxTraceTimeSeconds || time < 0);
}
inline bool InTraceBounds(uint64_t size, double latency, double cost,
                          double time) {
  return CallInTraceBounds(latency, cost) && ResultInTraceBounds(size, time);
}

}  // namespace toolcache::sim

#endif  // TOOLCACHE_SRC_SIM_TRACE_BUILDER_H_
