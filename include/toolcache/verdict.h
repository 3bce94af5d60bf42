// Verdict: the answer to "may this tool call be served from / stored in the
// cache, and with which features?".
//
// Every classifier returns a Verdict with a reason, never a bare bool, so a
// bypass can be explained in logs, statistics and `toolcache classify`.
//
// Thread-safety: plain values.
//
// Example:
//   Verdict v = classifier.Classify(call);
//   if (!v.cacheable) LOG(info) << "bypass: " << VerdictReasonName(v.reason);
#ifndef TOOLCACHE_VERDICT_H_
#define TOOLCACHE_VERDICT_H_

#include <optional>
#include <string>
#include <string_view>

namespace toolcache {

// The paper's request types (section 4.1).
enum class RequestType { kInformational, kCommand };

// Why a call is or is not cacheable. Append only: the names are part of the
// JSON output and the statistics.
enum class VerdictReason {
  kCacheable,          // INFORMATIONAL with a usable TTL
  kHardExcluded,       // on the non-removable side-effect exclusion list
  kOperatorExcluded,   // excluded by the operator's configuration
  kCommand,            // classified COMMAND (side effects)
  kTtlTooShort,        // TTL <= the minimum cacheable TTL (paper: 60 s)
  kOpenWorldNeedsTtl,  // read-only but open-world, and no operator TTL
  kErrorResult,        // the result is an error (never cached)
  kIncompleteResult,   // the result is partial / task-augmented / streamed
  kInvalidArguments,   // the arguments have no canonical form (for example
                       // a duplicate member name): no key can be built
  kUserRequired,       // `scope: user` and the call names no user
  kDeclaredByServer,   // the protocol declares the result cacheable and the
                       // server's own hints decide TTL and sharing
                       // (ToolCall::declared; MCP 2026-07-28 ttlMs /
                       // cacheScope), not the classifier
  kReservedToolName,   // the tool name is an MCP method whose result only
                       // the MCP face caches (ToolCall::declared; see
                       // IsDeclaredMethodName): a call that is not declared
                       // never reads or writes that key space
};

// Where the request type came from, strongest first.
enum class FeatureSource {
  kHardList,     // built-in exclusion list
  kConfig,       // operator configuration
  kAnnotations,  // MCP tool annotations
  kHeuristic,    // name / description / schema heuristic
  kLlm,          // LLM feature extractor
  kTrace,        // ground truth carried by a trace
};

struct Verdict {
  bool cacheable = false;
  VerdictReason reason = VerdictReason::kCommand;
  RequestType request_type = RequestType::kCommand;
  // Name of the argument used as the paper's parameter category ("" = none).
  std::string parameter_category;
  double ttl_seconds = 0;
  FeatureSource source = FeatureSource::kHeuristic;
  // One human-readable line: which rule decided, e.g. "name starts with
  // 'delete_'".
  std::string detail;
};

// "cacheable", "hard_excluded", ... (snake_case; stable).
std::string_view VerdictReasonName(VerdictReason reason);
// "INFORMATIONAL" or "COMMAND".
std::string_view RequestTypeName(RequestType type);
// The inverse of RequestTypeName (exact, case-sensitive); nullopt for any
// other string.
std::optional<RequestType> ParseRequestType(std::string_view name);
// "hard_list", "config", "annotations", "heuristic", "llm", "trace".
std::string_view FeatureSourceName(FeatureSource source);

}  // namespace toolcache

#endif  // TOOLCACHE_VERDICT_H_
