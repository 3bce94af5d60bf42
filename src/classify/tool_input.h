// Reading tool definitions (for `toolcache classify` and tests) and
// evaluating the classifier against annotation ground truth.
//
// Accepted inputs, auto-detected:
//   - an MCP `tools/list` result {"tools": [...]}, a JSON-RPC response
//     {"result": {"tools": [...]}}, or a bare JSON array of tool objects;
//   - JSON Lines: one tool object per line, or BFCL lines whose "function"
//     array holds the definitions (schema under "parameters");
//   - CSV (RFC 4180, quoted fields may span lines) with a header naming
//     `name` or `tool`, and optionally title, description, inputSchema,
//     server, readOnlyHint, destructiveHint, idempotentHint, openWorldHint.
//
// Thread-safety: free functions over values.
//
// Example:
//   Result<std::vector<LabeledTool>> tools = ParseToolDefinitions(text,
//   "x.csv"); Evaluation e = Evaluate(Classifier(), *tools); std::cout <<
//   e.command_positive.F1();
#ifndef TOOLCACHE_SRC_CLASSIFY_TOOL_INPUT_H_
#define TOOLCACHE_SRC_CLASSIFY_TOOL_INPUT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "toolcache/classifier.h"
#include "toolcache/status.h"

namespace toolcache::classify {

struct LabeledTool {
  ToolInfo info;
  // 1-based line of the definition in the input (CSV record / JSON line);
  // 0 when unknown (one JSON document).
  uint32_t line = 0;
};

// Parses `text`; errors name `source` and, where known, the line.
[[nodiscard]] Result<std::vector<LabeledTool>> ParseToolDefinitions(
    std::string_view text, std::string_view source);

// One RFC 4180 CSV record and the 1-based line it starts on.
struct CsvRow {
  std::vector<std::string> fields;
  uint32_t line = 0;
};

// Splits CSV `text` into records (quoted fields may span lines); blank lines
// are skipped. INVALID_ARGUMENT naming `source` for an unterminated quote.
[[nodiscard]] Result<std::vector<CsvRow>> ParseCsv(std::string_view text,
                                                   std::string_view source);

// Binary confusion matrix; "positive" is the class named by the caller.
struct Confusion {
  uint32_t tp = 0, fp = 0, tn = 0, fn = 0;
  uint32_t total() const { return tp + fp + tn + fn; }
  double Accuracy() const;
  double Precision() const;  // 0 when nothing was predicted positive
  double Recall() const;     // 0 when there are no positives
  double F1() const;
};

struct Evaluation {
  // Positive class = COMMAND (the class whose miss is costly).
  Confusion command_positive;
  // Tools without a readOnlyHint (no ground truth), not counted.
  uint32_t skipped = 0;
  // COMMAND (readOnlyHint false) predicted INFORMATIONAL: the costly error.
  std::vector<std::string> costly;
  // INFORMATIONAL predicted COMMAND: a lost caching opportunity.
  std::vector<std::string> lost;
};

// Classifies every tool WITHOUT its annotations (they are the ground truth:
// readOnlyHint true = INFORMATIONAL, otherwise COMMAND) and compares the
// predicted request type.
Evaluation Evaluate(const Classifier& classifier,
                    const std::vector<LabeledTool>& tools);

}  // namespace toolcache::classify

#endif  // TOOLCACHE_SRC_CLASSIFY_TOOL_INPUT_H_
