// FeatureBuilder (request_features.h).
//
// Invariants:
// - For a Config without a tool table, Build gives the simulator's
//   historical features bit for bit (category hash, cost = the record's,
//   TTL), so pinned simulator results do not move.
// - Argument order never matters: names are taken in byte order
//   (nlohmann::json keeps objects sorted).
#include "toolcache/request_features.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "toolcache/classifier.h"

namespace toolcache {
namespace {

// FNV-1a 64 over the bytes of `s`, continuing from `h`.
uint64_t Fnv1a(uint64_t h, std::string_view s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

template <typename Map>
const ToolConfig* Find(const Map& map, std::string_view tool) {
  if (auto it = map.find(tool); it != map.end()) return &it->second;
  for (const auto& [name, value] : map) {
    if (Classifier::MatchesToolName(tool, name)) return &value;
  }
  return nullptr;
}

}  // namespace

uint64_t ParameterCategoryFeature(std::string_view tool, std::string_view name,
                                  std::string_view value_json) {
  uint64_t h = 0xcbf29ce484222325ULL;
  h = Fnv1a(h, tool);
  h = Fnv1a(h, "\x1f");
  h = Fnv1a(h, name);
  h = Fnv1a(h, "=");
  h = Fnv1a(h, value_json);
  // SplitMix64's finalizer.
  h += 0x9e3779b97f4a7c15ULL;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return (h ^ (h >> 31)) | 1;
}

FeatureBuilder::FeatureBuilder(const Config& config)
    : default_ttl_(config.ttl_seconds), tools_(config.tools) {
  for (const auto& [name, server] : config.servers) {
    if (!server.tools.empty()) server_tools_[name] = server.tools;
  }
}

const ToolConfig* FeatureBuilder::FindTool(std::string_view server,
                                           std::string_view tool) const {
  if (!server.empty()) {
    if (auto s = server_tools_.find(server); s != server_tools_.end()) {
      if (const ToolConfig* t = Find(s->second, tool)) return t;
    }
  }
  return Find(tools_, tool);
}

Result<RequestFeatures> FeatureBuilder::Build(const FeatureInput& in) const {
  nlohmann::json args =
      nlohmann::json::parse(in.arguments_json, nullptr, false);
  if (args.is_discarded() || !args.is_object()) {
    return InvalidArgument("arguments are not a JSON object");
  }
  RequestFeatures f;
  const ToolConfig* configured = FindTool(in.server, in.tool);
  // A configured tool without its own setting falls back to the next source
  // (a server table entry may set only the TTL).
  std::optional<std::string> name;
  if (configured != nullptr && configured->parameter_category) {
    name = *configured->parameter_category;
  }
  if (!name && configured != nullptr && !in.server.empty()) {
    if (auto it = tools_.find(in.tool);
        it != tools_.end() && it->second.parameter_category) {
      name = *it->second.parameter_category;
    }
  }
  auto set_category = [&](std::string_view key, const nlohmann::json& value) {
    const std::string dumped = value.dump();
    f.category = std::string(key) + '=' + dumped;
    f.category_feature = ParameterCategoryFeature(in.tool, key, dumped);
  };
  if (name) {
    if (!name->empty()) {
      if (auto it = args.find(*name); it != args.end()) {
        set_category(*name, *it);
      }
    }
  } else if (args.size() >= 2) {
    auto first = args.begin();
    set_category(first.key(), first.value());
  }
  if (in.observed_cost) {
    f.cost = *in.observed_cost;
  } else if (configured != nullptr && configured->cost) {
    f.cost = *configured->cost;
  } else if (const ToolConfig* global = Find(tools_, in.tool);
             global != nullptr && global->cost) {
    f.cost = *global->cost;
  }
  f.ttl_seconds = std::isfinite(in.ttl_seconds) ? in.ttl_seconds : default_ttl_;
  return f;
}

}  // namespace toolcache
