// Tool-call traces: the record every workload (synthetic or converted from a
// real source) is expressed in, and the JSON Lines format that stores it.
//
// One record is one tool call. The simulator replays a Trace through the
// request path (classify -> lookup -> admit/evict) of each policy. The file
// format is documented in docs/TRACES.md; ReadTrace rejects a bad line with
// its line number and a reason and never guesses a missing required field.
//
// Thread-safety: plain values.
//
// Example:
//   Result<Trace> t = ReadTraceFile("session.jsonl");
//   if (!t.ok()) { std::cerr << t.status().message(); return 2; }
//   for (const TraceRecord& r : t->records) ...
#ifndef TOOLCACHE_TRACE_H_
#define TOOLCACHE_TRACE_H_

#include <cstdint>
#include <iosfwd>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolcache/status.h"
#include "toolcache/verdict.h"

namespace toolcache {

struct TraceRecord {
  // Seconds since the trace's start; NaN when the source has no clock (the
  // simulator then advances time by each call's latency).
  double time = std::numeric_limits<double>::quiet_NaN();
  std::string session;  // conversation / episode; "" = one global session
  std::string user;     // user; "" = anonymous
  // Sharing boundary: records of different tenants never share a cached
  // result (part of the object identity under every --scope). A converter
  // that knows which calls read the same tool state sets it (BFCL: the
  // episode's initial world + the COMMANDs it has run). "" = the default.
  std::string tenant;
  // Server identity (the MCP server or tool provider the call went to), as
  // the faces key and invalidate by it; "" = unknown (`sim --config` then
  // uses one server for the whole trace). The fast replay keeps records of
  // different servers apart (part of the object identity, like tenant).
  std::string server;
  std::string tool;          // tool name as the model called it
  std::string arguments;     // RFC 8785 canonical JSON of the arguments
  uint64_t result_size = 0;  // bytes of the result
  double latency = 0;        // seconds the call took upstream
  double cost = 0;           // price of the call
  // Seconds the result stays valid; NaN = unknown (the classifier decides).
  double ttl = std::numeric_limits<double>::quiet_NaN();
  bool error = false;  // the tool reported an error (never cached)
  // Ground-truth request type when the source knows it.
  std::optional<RequestType> request_type;
  // Digest of the result content when the source carries results; used to
  // count stale results served from cache. "" = unknown.
  std::string result_digest;
};

// Input bounds the reader enforces (docs/TRACES.md), so that sums over a
// trace stay finite and a capacity computed from sizes cannot wrap.
// Choice: 1 TiB per result, 10^6 s per call (11.6 days), $10^6 per call,
// times up to 10^12 s; TTLs are only required to be finite.
inline constexpr uint64_t kMaxTraceResultSize = uint64_t{1} << 40;
inline constexpr double kMaxTraceLatencySeconds = 1e6;
inline constexpr double kMaxTraceCost = 1e6;
inline constexpr double kMaxTraceTimeSeconds = 1e12;

struct Trace {
  std::string name;  // for reports: file stem or workload name
  std::vector<TraceRecord> records;
};

// Parses JSON Lines; blank lines are skipped. On error the message is
// "<source>:<line>: <reason>".
Result<Trace> ReadTrace(std::istream& in, std::string_view source_name);
Result<Trace> ReadTraceFile(const std::string& path);
// Writes one JSON object per record, in the documented field order.
void WriteTrace(const Trace& trace, std::ostream& out);

}  // namespace toolcache

#endif  // TOOLCACHE_TRACE_H_
