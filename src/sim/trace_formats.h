// Trace files straight into the replay's compact form (PreparedTrace): the
// JSON Lines format read at memory speed, toolcache's binary trace format,
// and libCacheSim's oracleGeneral binary and CSV traces (docs/TRACES.md,
// "Trace file formats").
//
//   jsonl           docs/TRACES.md records, mmap'ed; a scanner for lines
//                   in WriteTrace's member order, else a plain-shape line
//                   scanner in any order (both: no whitespace, no escapes,
//                   arguments already canonical: what converters and
//                   bench/zipf_trace.py write), else
//                   simdjson On Demand per line with the arguments
//                   canonicalized once per distinct text; any line neither
//                   fully understands is handed to the reference reader
//                   (ReadTrace's parser), so errors and accepted records are
//                   exactly ReadTrace's.
//   bin             toolcache binary: 64-byte header ("TCTRACE", version 1),
//                   fixed 88-byte records with interned ids, sizes, latency,
//                   cost, TTL, time, type, error and the precomputed next
//                   access, then the string tables; read through mmap.
//   oracle-general  libCacheSim's oracleGeneral: packed 24-byte records
//                   {uint32 clock_time; uint64 obj_id; uint32 obj_size;
//                    int64 next_access_vtime}.
//   csv             libCacheSim's CSV convention: "time,key,size" (a header
//                   line naming the columns is optional; key may be text).
// Defaults for what libCacheSim's traces lack: tool "object" with arguments
// {"id": <key>} (one tool, no parameter category), user/session/tenant "",
// latency 1 s and cost 0 per miss (every miss costs the same, libCacheSim's
// cost model), no TTL (never expires), type INFORMATIONAL, no error; a size of
// 0 counts as 1 byte. time = the trace's clock (seconds).
//
// Thread-safety: free functions; no shared state.
//
// Example:
//   Result<PreparedTrace> p = ReadPreparedTrace("zipf.oracleGeneral", {});
//   Result<ReplayMetrics> m = Replay(*p, {.policy = "lru", ...});
#ifndef TOOLCACHE_SRC_SIM_TRACE_FORMATS_H_
#define TOOLCACHE_SRC_SIM_TRACE_FORMATS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "src/sim/replay.h"
#include "src/sim/trace_builder.h"
#include "toolcache/status.h"

namespace toolcache::sim {

enum class TraceFormat { kAuto, kJsonl, kBinary, kOracleGeneral, kCsv };

// "auto", "jsonl", "bin", "oracle-general" (or "oracleGeneral"), "csv".
Result<TraceFormat> ParseTraceFormat(std::string_view name);
std::string_view TraceFormatName(TraceFormat format);
// kAuto resolved: the binary magic, else the extension (".oracleGeneral"
// anywhere in the name -> oracle-general, ".csv" -> csv), else jsonl.
Result<TraceFormat> DetectTraceFormat(const std::string& path);

struct TraceReadOptions {
  TraceFormat format = TraceFormat::kAuto;
  PrepareOptions prepare;
  // Called now and then with (bytes read, file bytes), from the caller's
  // thread; may be empty.
  std::function<void(uint64_t, uint64_t)> progress;
};

// Reads and prepares the trace at `path`; the name is the file stem. Errors:
// NotFound (cannot open), InvalidArgument "<path>:<line>: <reason>" (JSONL)
// or "<path>: record <n>: <reason>" (binary formats, CSV lines by number).
Result<PreparedTrace> ReadPreparedTrace(const std::string& path,
                                        const TraceReadOptions& options);

// Reads the trace at `path` as ReadPreparedTrace does (same records, same
// errors) but hands it to `sink` in chunks of `chunk_records` records
// (TraceBuilder::StreamChunks) instead of holding it: memory is the
// per-object tables plus one chunk, whatever the trace's length. Returns the
// trace's totals. Replayer::Feed takes the chunks (an online replay needs no
// look-ahead).
Result<TraceTotals> StreamPreparedTrace(
    const std::string& path, const TraceReadOptions& options,
    uint64_t chunk_records, const TraceBuilder::ChunkSink& sink,
    TraceBuilder::StreamContent content = TraceBuilder::StreamContent::kAll);

// The first pass of a streamed replay: the trace's totals (as
// StreamPreparedTrace returns them) and its COMMANDs per session (as
// CountCommands counts them over every chunk), into `commands`. Binary,
// oracleGeneral and CSV traces under the global scope are counted without
// building columns (a fraction of the cost); any other trace, and any file
// the light count does not vouch for, take StreamPreparedTrace (its errors).
// `plain` (may be null): set when every record is plain (PlainConstants,
// replay.h; binary and oracleGeneral traces under the global scope), to
// the records' constants; reset otherwise.
Result<TraceTotals> ScanTraceTotals(
    const std::string& path, const TraceReadOptions& options,
    std::vector<uint64_t>* commands,
    std::optional<PlainConstants>* plain = nullptr);

// The second read of a trace ScanTraceTotals found plain (with constants
// `k`): hands `sink` the varying columns of up to `chunk_records` records
// at a time (object index, size, clock -- exactly the PreparedTrace chunks
// StreamPreparedTrace would build, without building them). Returns the
// totals (records, objects, unique cacheable bytes). FailedPrecondition
// when the file no longer matches the first pass.
using PlainChunkSink =
    std::function<Status(const PlainChunk& chunk, uint64_t first)>;
Result<TraceTotals> StreamPlainTrace(const std::string& path,
                                     const TraceReadOptions& options,
                                     const PlainConstants& k,
                                     uint64_t chunk_records,
                                     const PlainChunkSink& sink);

// Converts the trace at `in_path` (any format ReadPreparedTrace reads, or
// jsonl) into toolcache's binary format at `out_path`. Returns the number of
// records written.
Result<uint64_t> ConvertToBinaryTrace(const std::string& in_path,
                                      TraceFormat in_format,
                                      const std::string& out_path);

// The JSON Lines reader's two scanners, exposed for tests. Each accepts a
// subset of what the reference parser accepts, with the same values;
// rejecting is always safe (the reader then tries the next path).
namespace jsonl_internal {
// The line at `p` in exactly WriteTrace's member order; [p, end) may run
// past the line (the rest of the file). Returns the line's end (its '\n',
// the '\n' after "\r", or `end`), or nullptr.
const char* ScanWriterLine(const char* p, const char* end, RecordView* out);
// The line [p, p + len) (without its newline) in any member order, no
// whitespace, no escapes, plain canonical arguments.
bool ScanPlainLine(const char* p, size_t len, RecordView* out);
}  // namespace jsonl_internal

}  // namespace toolcache::sim

#endif  // TOOLCACHE_SRC_SIM_TRACE_FORMATS_H_
