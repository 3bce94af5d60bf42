// The deterministic cacheability heuristic (internal to src/classify): name
// tokens, description, input schema and call arguments -> request type, TTL
// category and parameter category. General verb lexicons only; no tool-name
// lists. See docs/CLASSIFY.md for the rules and their measured accuracy.
//
// Thread-safety: stateless; all functions may be called concurrently.
#ifndef TOOLCACHE_SRC_CLASSIFY_HEURISTIC_H_
#define TOOLCACHE_SRC_CLASSIFY_HEURISTIC_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolcache/classifier.h"

namespace toolcache::classify {

// Splits a tool name into lowercase tokens on non-alphanumerics and camelCase
// boundaries: "getHTTPStatus_v2" -> {"get", "http", "status", "v2"}.
std::vector<std::string> TokenizeName(std::string_view name);

// Where the function part of a mixed-convention name starts: after the last
// "_" when what follows is a camelCase phrase opening with a known verb
// ("hosting_listPluginsV1" -> 8, the offset of "listPluginsV1"); 0 otherwise
// ("list_plugins", "hosting_WordPress", "hosting_pluginsList").
size_t CamelPhraseStart(std::string_view name);

enum class VerbClass {
  kNone,           // not a verb the lexicons know
  kCommand,        // mutating: create, send, delete, ...
  kInformational,  // reading: get, list, search, ...
  kDispatch,       // multi-purpose: manage, handle (decided by arguments)
};

// Classifies one lowercase token. With `inflected`, also accepts inflected
// forms ("gets", "listing", "created"), as found in descriptions. A
// "un"/"re" prefix on a COMMAND verb is COMMAND ("unstar", "rerun").
VerbClass ClassifyVerb(std::string_view token, bool inflected);

// The paper's indicative TTL classes (section 4.1).
enum class TtlCategory { kNone, kRealtime, kComputational, kStatic };
inline constexpr double kRealtimeTtlSeconds = 60;
inline constexpr double kComputationalTtlSeconds = 300;
inline constexpr double kStaticTtlSeconds = 3600;

// The TTL class of a tool from its name tokens; the shortest class wins when
// several match. kNone if no token is in a TTL lexicon.
TtlCategory TtlCategoryOf(const std::vector<std::string>& name_tokens);
std::string_view TtlCategoryName(TtlCategory category);
// The TTL class the heuristic gives `tool` (kNone: the configured default).
TtlCategory ToolTtlCategory(const ToolInfo& tool);
double TtlCategorySeconds(TtlCategory category);

// The heuristic as the last classification layer.
std::unique_ptr<FeatureExtractor> MakeHeuristicExtractor();

}  // namespace toolcache::classify

#endif  // TOOLCACHE_SRC_CLASSIFY_HEURISTIC_H_
