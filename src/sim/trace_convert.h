// Trace converters: turn real agent transcripts and public benchmark data
// into the JSON Lines trace format of trace.h (documented in docs/TRACES.md).
//
// Sources: OpenAI-chat trajectories (assistant `tool_calls` + `role: tool`
// messages), Anthropic transcripts (`tool_use` / `tool_result` blocks, plain
// message lines or Claude-Code-like session lines), the BFCL multi-turn (and
// simple) ground truth, and two workloads derived from the LLMCompiler
// datasets (movie recommendation, ParallelQA). Where a source lacks latency,
// cost, TTL or result size, the converter takes them from a ToolTable (the
// user's `--tool-table`, else the built-in default modeled on Table 1 of the
// paper) and counts what it assigned in ConvertReport, so the caller can say
// so.
//
// Thread-safety: functions are pure over their inputs; a ToolTable is
// immutable after loading and may be shared between threads.
//
// Example:
//   ConvertOptions opts;  // built-in tool table
//   std::ifstream in("chats.json");
//   Result<ConvertResult> r =
//       ConvertTrace(TraceSource::kOpenAiChat, in, "chats.json", opts);
//   if (!r.ok()) { std::cerr << r.status().message() << "\n"; return 2; }
//   WriteTrace(r->trace, std::cout);
//   std::cerr << r->report.Summary();
#ifndef TOOLCACHE_SRC_SIM_TRACE_CONVERT_H_
#define TOOLCACHE_SRC_SIM_TRACE_CONVERT_H_

#include <cstdint>
#include <iosfwd>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolcache/status.h"
#include "toolcache/trace.h"

namespace toolcache {

// What a converter assigns to a call whose source lacks the measurement.
struct ToolProfile {
  double latency = 0;  // seconds
  double cost = 0;     // dollars per call
  // Seconds; NaN = leave the record's ttl unset (the classifier decides).
  double ttl = std::numeric_limits<double>::quiet_NaN();
  // Bytes, used only when the source carries no result; nullopt = the
  // table's default result size.
  std::optional<uint64_t> result_size;
  // User tables only: the request type every call of the tool gets,
  // overriding the source's ground truth and the classifier; nullopt =
  // leave it to them.
  std::optional<RequestType> request_type;
};

// Per-tool latency / cost / TTL / result size. Lookup order: an exact row of
// the user's table, the user's "*" row, then the built-in default table.
class ToolTable {
 public:
  // The built-in table (Table 1 of the paper; see docs/TRACES.md): rows
  // "wikipedia_fetch", "search", "map_planning", "weather", "llm_math" and
  // "other", chosen for a tool name by the substring rules documented there.
  ToolTable();

  // Loads a user table from JSON (an array of objects, or an object mapping
  // tool -> object, with fields tool, latency, cost, ttl, result_size) or CSV
  // (a header naming the columns
  // `tool,latency,cost[,ttl][,result_size][,request_type]`). Units: seconds,
  // dollars per call, seconds, bytes; request_type is INFORMATIONAL or
  // COMMAND (or empty). latency and cost are required and at most 10^6
  // s / $10^6 (the trace bounds). A row "*" applies to tools not listed.
  // Errors name the file, line or row and the problem.
  static Result<ToolTable> Load(const std::string& path);
  static Result<ToolTable> Parse(std::string_view text,
                                 std::string_view source_name);

  struct Match {
    ToolProfile profile;
    bool from_user_table = false;
    std::string row;  // the tool, "*", or the built-in row name
  };
  // The profile for `tool`. `builtin_row` names the built-in row to use when
  // the user's table does not cover the tool ("" = choose by name).
  Match Lookup(std::string_view tool, std::string_view builtin_row = "") const;

  // Result size used when neither the source nor any row gives one.
  uint64_t default_result_size() const { return default_result_size_; }

 private:
  std::map<std::string, ToolProfile, std::less<>> user_rows_;
  uint64_t default_result_size_;
};

enum class TraceSource {
  kOpenAiChat,             // "openai-chat"
  kAnthropic,              // "anthropic"
  kBfcl,                   // "bfcl"
  kLlmCompilerMovie,       // "llmcompiler-movie"
  kLlmCompilerParallelQa,  // "llmcompiler-parallelqa"
  kLlmCompiler,            // "llmcompiler": detects movie vs ParallelQA
};

// Parses the `--from` spelling above; InvalidArgument lists the choices.
Result<TraceSource> ParseTraceSource(std::string_view name);

struct ConvertOptions {
  // nullptr = the built-in table.
  std::shared_ptr<const ToolTable> tool_table;
  // BFCL: directory of the `multi_turn_func_doc/*.json` function docs used
  // to name positional arguments and derive request types. "" = look for
  // `multi_turn_func_doc/` beside the input file (when converting a file).
  std::string bfcl_func_doc_dir;
  // BFCL multi-turn: the question file (BFCL_v3_multi_turn_base.json) that
  // holds each episode's initial_config. "" = look beside the input file
  // (see docs/TRACES.md 4.3); when none is found every episode is its own
  // tenant (no sharing across episodes) and the report says so. Given but
  // unreadable, or missing an episode, is an error.
  std::string bfcl_questions_path;
  // Path of the input when it is a file ("" for stdin); used to find the
  // BFCL docs and questions and to name sessions.
  std::string input_path;
};

// What a conversion did, for the stderr summary.
struct ConvertReport {
  uint64_t records = 0;
  uint64_t sessions = 0;
  // Calls whose latency/cost came from the user's table / the default table,
  // and the number of distinct tools involved.
  uint64_t assigned_from_user = 0;
  uint64_t assigned_from_default = 0;
  uint64_t tools_from_user = 0;
  uint64_t tools_from_default = 0;
  // Calls without a matching result (dropped), results without a call.
  uint64_t calls_without_result = 0;
  uint64_t results_without_call = 0;
  // Calls whose result size came from a table (the source has no results).
  uint64_t assigned_result_size = 0;
  // Request types: set by --tool-table rows, derived by the engine's
  // classifier for calls whose source has none (distinct tools; tools whose
  // definition -- description, schema -- the source carried).
  uint64_t typed_from_table = 0;
  uint64_t classified_calls = 0;
  uint64_t classified_tools = 0;
  uint64_t classified_with_definition = 0;
  std::vector<std::string> classified;  // one line per classified tool
  std::vector<std::string> notes;       // one line each: derivation caveats

  // Multi-line human summary ("assigned latency/cost from the default table
  // to 1234 calls of 7 tools", ...), each line ending in '\n'.
  std::string Summary() const;
};

struct ConvertResult {
  Trace trace;
  ConvertReport report;
};

// Converts `in` (named `source_name` in error messages) from `source`.
// Every record leaves with a request_type: a --tool-table row's if it has
// one, else the source's ground truth, else the engine's classifier
// (toolcache::Classifier with the default configuration, per call, fed the
// tool definitions the source carries -- OpenAI `tools`/`functions`, an
// Anthropic request's `tools` -- or only the name), which also sets `ttl`
// when no table row did (its TTL if cacheable, 0 if INFORMATIONAL but not
// cacheable). The report lists what was derived.
// Errors are InvalidArgument with the location (line, trajectory and message
// index, or entry id) and the reason; no partial trace is returned.
Result<ConvertResult> ConvertTrace(TraceSource source, std::istream& in,
                                   std::string_view source_name,
                                   const ConvertOptions& options);

// Parses one Python call expression as written in BFCL ground truth, e.g.
// `cd(folder='document')` or `sort('a.txt')`, into the function name and the
// arguments: keyword arguments by name, positional ones as "$0", "$1", ...
// (the BFCL converter renames them from the function docs). Literals:
// strings (' or ", escapes), ints, floats, True/False/None, lists, tuples
// (as arrays), dicts, nested; negative numbers.
struct PythonCall {
  std::string name;
  std::string arguments_json;  // a JSON object, members in source order
};
Result<PythonCall> ParsePythonCall(std::string_view text);

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_SIM_TRACE_CONVERT_H_
