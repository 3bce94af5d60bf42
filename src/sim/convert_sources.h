// Internal: one entry point per trace source, and the Assigner that fills in
// latency / cost / TTL / result size from a ToolTable while counting what it
// assigned. Used only by convert_*.cc.
#ifndef TOOLCACHE_SRC_SIM_CONVERT_SOURCES_H_
#define TOOLCACHE_SRC_SIM_CONVERT_SOURCES_H_

#include <istream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "src/sim/trace_convert.h"
#include "toolcache/classifier.h"

namespace toolcache::trace_internal {

class Assigner {
 public:
  Assigner(const ToolTable& table, ConvertReport* report)
      : table_(table), report_(report) {}
  // Sets rec->latency, cost and ttl (when the row has one) from the table.
  // When `needs_size`, also sets result_size (row's, else the table default).
  void Assign(TraceRecord* rec, bool needs_size,
              std::string_view builtin_row = "");
  // Copies the distinct-tool counts into the report.
  void Finish();

 private:
  const ToolTable& table_;
  ConvertReport* report_;
  std::set<std::string, std::less<>> user_tools_;
  std::set<std::string, std::less<>> default_tools_;
};

// Tool definitions a source carries, by tool name (first one wins).
using ToolDefs = std::map<std::string, ToolInfo, std::less<>>;

// Reads one OpenAI (`{"type":"function","function":{...}}` or a bare
// `{name, description, parameters}`) or Anthropic (`{name, description,
// input_schema}`) tool definition into *defs; malformed entries are
// skipped (they only inform the classifier).
void AddToolDefinition(const nlohmann::json& def, ToolDefs* defs);

Result<ConvertResult> ConvertOpenAiChat(std::istream& in,
                                        std::string_view source_name,
                                        const ConvertOptions& options,
                                        ToolDefs* defs);
Result<ConvertResult> ConvertAnthropic(std::istream& in,
                                       std::string_view source_name,
                                       const ConvertOptions& options,
                                       ToolDefs* defs);
Result<ConvertResult> ConvertBfcl(std::istream& in,
                                  std::string_view source_name,
                                  const ConvertOptions& options,
                                  ToolDefs* defs);
// `kind` is kLlmCompilerMovie, kLlmCompilerParallelQa or kLlmCompiler (auto).
Result<ConvertResult> ConvertLlmCompiler(TraceSource kind, std::istream& in,
                                         std::string_view source_name,
                                         const ConvertOptions& options);

// The ParallelQA entity heuristic (docs/TRACES.md), in question order.
std::vector<std::string> ExtractParallelQaEntities(const std::string& question);

// Reads the whole stream.
std::string ReadAll(std::istream& in);

// Counts distinct sessions in the trace into report->sessions and records.
void FinishReport(const Trace& trace, ConvertReport* report);

// Gives every record a request_type (table row > ground truth > the
// classifier) and a ttl where the classifier decided; see ConvertTrace.
void AssignRequestTypes(const ToolTable& table, const ToolDefs& defs,
                        ConvertResult* result);

}  // namespace toolcache::trace_internal

#endif  // TOOLCACHE_SRC_SIM_CONVERT_SOURCES_H_
