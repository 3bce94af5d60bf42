// Stable names of the Verdict enums (they appear in JSON output and stats).
#include "toolcache/verdict.h"

namespace toolcache {

std::string_view VerdictReasonName(VerdictReason reason) {
  switch (reason) {
    case VerdictReason::kCacheable:
      return "cacheable";
    case VerdictReason::kHardExcluded:
      return "hard_excluded";
    case VerdictReason::kOperatorExcluded:
      return "operator_excluded";
    case VerdictReason::kCommand:
      return "command";
    case VerdictReason::kTtlTooShort:
      return "ttl_too_short";
    case VerdictReason::kOpenWorldNeedsTtl:
      return "open_world_needs_ttl";
    case VerdictReason::kErrorResult:
      return "error_result";
    case VerdictReason::kIncompleteResult:
      return "incomplete_result";
    case VerdictReason::kInvalidArguments:
      return "invalid_arguments";
    case VerdictReason::kUserRequired:
      return "user_required";
    case VerdictReason::kDeclaredByServer:
      return "declared_by_server";
    case VerdictReason::kReservedToolName:
      return "reserved_tool_name";
  }
  return "unknown";
}

std::string_view RequestTypeName(RequestType type) {
  return type == RequestType::kInformational ? "INFORMATIONAL" : "COMMAND";
}

std::optional<RequestType> ParseRequestType(std::string_view name) {
  if (name == "INFORMATIONAL") return RequestType::kInformational;
  if (name == "COMMAND") return RequestType::kCommand;
  return std::nullopt;
}

std::string_view FeatureSourceName(FeatureSource source) {
  switch (source) {
    case FeatureSource::kHardList:
      return "hard_list";
    case FeatureSource::kConfig:
      return "config";
    case FeatureSource::kAnnotations:
      return "annotations";
    case FeatureSource::kHeuristic:
      return "heuristic";
    case FeatureSource::kLlm:
      return "llm";
    case FeatureSource::kTrace:
      return "trace";
  }
  return "unknown";
}

}  // namespace toolcache
