// RequestFeatures: the one derivation of a call's policy features (the
// paper's grouping tool -> parameter category -> user, and the system
// features cost and TTL), shared by the simulator and every face, so what
// is tuned in simulation groups requests exactly as production does.
//
// Rules (docs/STORE.md, "One feature builder"):
//   parameter category  the operator's `parameterCategory` for the tool
//                       (servers.<S>.tools first, then tools; "" = none);
//                       otherwise the first argument, in byte order of its
//                       name, of a call with two or more arguments (the
//                       paper: "the first parameter of a multi-parameter
//                       call"; byte order, not the caller's order, so a
//                       client that reorders keys stays in its group).
//                       The feature is a stable 64-bit hash of
//                       "<tool>\x1f<name>=<value as compact JSON>", never 0.
//   cost                the measured price when the source has one (a
//                       trace record), else the tool's configured `cost`
//                       (servers.<S>.tools, then tools), else 0.
//   TTL                 the call's TTL when finite (Verdict, trace record),
//                       else the configuration's ttlSeconds.
//
// Thread-safety: a FeatureBuilder is immutable; Build may run concurrently.
// Ownership: the builder copies what it needs from the Config.
//
// Example:
//   FeatureBuilder features(config);
//   Result<RequestFeatures> f = features.Build(
//       {.server = "weather", .tool = "forecast",
//        .arguments_json = R"({"city":"Paris","day":1})"});
//   // f->category == R"(city="Paris")", f->cost from tools.forecast.cost
#ifndef TOOLCACHE_REQUEST_FEATURES_H_
#define TOOLCACHE_REQUEST_FEATURES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "toolcache/config.h"
#include "toolcache/policy.h"
#include "toolcache/status.h"

namespace toolcache {

struct CanonicalArguments;  // canonical_json.h

struct FeatureInput {
  std::string_view server;  // "" (traces): global tool table only
  std::string_view tool;
  std::string_view arguments_json;  // the arguments object as JSON text
  // The same arguments as the key's canonicalizer read them
  // (canonical_json.h), when the caller has them: read instead of parsing
  // `arguments_json` again (one parse per call), with the same result.
  const CanonicalArguments* parsed = nullptr;
  // The call's TTL; not finite = the configuration's ttlSeconds.
  double ttl_seconds = kNoExpiry;
  // The measured price of this call (a trace record's cost); nullopt when
  // the source does not know it (live calls).
  std::optional<double> observed_cost;
};

struct RequestFeatures {
  std::string category;           // "name=<compact JSON>", "" = none
  uint64_t category_feature = 0;  // Request::param_category; 0 = none
  double cost = 0;
  double ttl_seconds = kNoExpiry;
};

// The parameter-category feature (RequestFeatures::category_feature) of a
// call of `tool` whose category is `name`=`value_json` (the value as
// compact JSON): FNV-1a 64 over "<tool>\x1f<name>=<value_json>", then
// SplitMix64's finalizer, low bit set (never 0). The one derivation: the
// simulator's fast trace reader calls it too, so both group alike.
uint64_t ParameterCategoryFeature(std::string_view tool, std::string_view name,
                                  std::string_view value_json);

class FeatureBuilder {
 public:
  explicit FeatureBuilder(const Config& config);
  // INVALID_ARGUMENT when `in.arguments_json` is not a JSON object.
  Result<RequestFeatures> Build(const FeatureInput& in) const;

 private:
  const ToolConfig* FindTool(std::string_view server,
                             std::string_view tool) const;
  double default_ttl_;
  ToolConfigMap tools_;
  std::map<std::string, ToolConfigMap, std::less<>> server_tools_;
};

}  // namespace toolcache

#endif  // TOOLCACHE_REQUEST_FEATURES_H_
