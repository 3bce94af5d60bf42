// Internal: one entry point per trace source, and the Assigner that fills in
// latency / cost / TTL / result size from a ToolTable while counting what it
// assigned. Used only by convert_*.cc.
#ifndef TOOLCACHE_SRC_SIM_CONVERT_SOURCES_H_
#define TOOLCACHE_SRC_SIM_CONVERT_SOURCES_H_

#include <istream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "toolcache/trace_convert.h"

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

Result<ConvertResult> ConvertOpenAiChat(std::istream& in,
                                        std::string_view source_name,
                                        const ConvertOptions& options);
Result<ConvertResult> ConvertAnthropic(std::istream& in,
                                       std::string_view source_name,
                                       const ConvertOptions& options);
Result<ConvertResult> ConvertBfcl(std::istream& in,
                                  std::string_view source_name,
                                  const ConvertOptions& options);
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

}  // namespace toolcache::trace_internal

#endif  // TOOLCACHE_SRC_SIM_CONVERT_SOURCES_H_
