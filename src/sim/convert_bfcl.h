// Internal: the BFCL function docs and the request-type rule derived from
// them (exposed for tests).
#ifndef TOOLCACHE_SRC_SIM_CONVERT_BFCL_H_
#define TOOLCACHE_SRC_SIM_CONVERT_BFCL_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "toolcache/status.h"

namespace toolcache::trace_internal {

struct BfclToolDoc {
  enum class Type { kInformational, kCommand };
  std::string file;                 // e.g. "gorilla_file_system.json"
  std::vector<std::string> params;  // in the doc's order (positional order)
  Type type = Type::kCommand;
};

// The documented rule: every math_api.json tool is INFORMATIONAL (pure
// arithmetic); otherwise INFORMATIONAL iff the first verb of the description
// (after "Tool description:", skipping "This function") is a read verb.
BfclToolDoc::Type BfclRequestType(std::string_view doc_file,
                                  const std::string& description);

// Loads every *.json (JSON Lines of function docs) in `dir`, keyed by name.
Result<std::map<std::string, BfclToolDoc>> LoadBfclFuncDocs(
    const std::string& dir);

// The question file beside a possible_answer file: possible_answer_X.json
// -> X.json in the same directory, or possible_answer/X.json -> ../X.json
// (BFCL's own layout). "" when none exists.
std::string LocateBfclQuestions(const std::string& input_path);

// Episode id -> world identity (12 hex digits of the SHA-256 of the
// canonical {initial_config, sorted involved_classes}) from a BFCL
// multi-turn question file. Errors name the file and line.
Result<std::map<std::string, std::string>> LoadBfclWorlds(
    const std::string& path);

}  // namespace toolcache::trace_internal

#endif  // TOOLCACHE_SRC_SIM_CONVERT_BFCL_H_
