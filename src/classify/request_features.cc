// FeatureBuilder (request_features.h).
//
// Invariants:
// - For a Config without a tool table, Build gives the simulator's
//   historical features bit for bit (category hash, cost = the record's,
//   TTL), so pinned simulator results do not move.
// - Argument order never matters: names are taken in byte order
//   (nlohmann::json keeps objects sorted).
// - The arguments are parsed at most once: a caller with the key's
//   CanonicalArguments (FeatureInput::parsed) is served from them, with the
//   same category text as the text path's nlohmann dump (AppendCompact).
#include "toolcache/request_features.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "toolcache/canonical_json.h"
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

// Position just after the canonical string literal at v[pos] (a '"').
size_t StringEnd(std::string_view v, size_t pos) {
  for (size_t i = pos + 1; i < v.size(); ++i) {
    if (v[i] == '\\') {
      ++i;
    } else if (v[i] == '"') {
      return i + 1;
    }
  }
  return v.size();
}

// Appends what nlohmann::json::dump() writes for the value whose canonical
// text (CanonicalizeArguments) starts at v[*pos], and moves *pos past it.
// The text path hashed that dump, so the category feature must not move.
// The two forms agree on strings (the same escapes) and literals; they
// differ in numbers (nlohmann keeps an integer that fits 64 bits as
// written and writes any other number as its double, "1e-06") and in the
// order of a nested object's members (UTF-8 bytes, not UTF-16 units).
void AppendCompact(std::string_view v, size_t* pos, std::string* out) {
  const size_t start = *pos;
  if (start >= v.size()) return;
  const char c = v[start];
  if (c == '"') {
    *pos = StringEnd(v, start);
    out->append(v.substr(start, *pos - start));
  } else if (c == 't' || c == 'n') {
    out->append(v.substr(start, 4));
    *pos = start + 4;
  } else if (c == 'f') {
    out->append(v.substr(start, 5));
    *pos = start + 5;
  } else if (c == '[') {
    out->push_back('[');
    ++*pos;
    while (*pos < v.size() && v[*pos] != ']') {
      if (v[*pos] == ',') {
        out->push_back(',');
        ++*pos;
      }
      AppendCompact(v, pos, out);
    }
    out->push_back(']');
    ++*pos;
  } else if (c == '{') {
    // (decoded name, name literal + ':' + value) in nlohmann's key order.
    std::vector<std::pair<std::string, std::string>> members;
    ++*pos;
    while (*pos < v.size() && v[*pos] != '}') {
      if (v[*pos] == ',') ++*pos;
      const size_t name_end = StringEnd(v, *pos);
      std::string text(v.substr(*pos, name_end - *pos));
      std::string name = DecodeCanonicalString(text);
      text.push_back(':');
      *pos = name_end + 1;  // ':'
      AppendCompact(v, pos, &text);
      members.emplace_back(std::move(name), std::move(text));
    }
    ++*pos;
    std::sort(members.begin(), members.end());
    out->push_back('{');
    for (size_t i = 0; i < members.size(); ++i) {
      if (i > 0) out->push_back(',');
      out->append(members[i].second);
    }
    out->push_back('}');
  } else {
    size_t end = start;
    bool integer = true;
    while (end < v.size() && v[end] != ',' && v[end] != ']' && v[end] != '}') {
      if (v[end] == '.' || v[end] == 'e' || v[end] == 'E') integer = false;
      ++end;
    }
    *pos = end;
    const std::string_view number = v.substr(start, end - start);
    const char* first = number.data();
    const char* last = number.data() + number.size();
    if (integer) {
      std::from_chars_result r;
      if (number.front() == '-') {
        int64_t i = 0;
        r = std::from_chars(first, last, i);
      } else {
        uint64_t u = 0;
        r = std::from_chars(first, last, u);
      }
      if (r.ec == std::errc() && r.ptr == last) {
        out->append(number);
        return;
      }
    }
    double d = 0;
    std::from_chars(first, last, d);
    out->append(nlohmann::json(d).dump());
  }
}

std::string CompactJsonOfCanonical(std::string_view v) {
  std::string out;
  size_t pos = 0;
  AppendCompact(v, &pos, &out);
  return out;
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
  // The parameter category: (name, value as compact JSON) of the configured
  // member or of the first in byte order of a multi-member object.
  std::optional<std::pair<std::string, std::string>> picked;
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
  if (in.parsed != nullptr) {
    // Only the members the key keeps ("_meta" is not an argument here).
    const ArgumentMember* first = nullptr;
    const ArgumentMember* named = nullptr;
    size_t kept = 0;
    for (const ArgumentMember& m : in.parsed->members) {
      if (m.dropped) continue;
      ++kept;
      if (first == nullptr || m.name < first->name) first = &m;
      if (name && m.name == *name) named = &m;
    }
    const ArgumentMember* use = name ? (name->empty() ? nullptr : named)
                                     : (kept >= 2 ? first : nullptr);
    if (use != nullptr) {
      picked.emplace(use->name, CompactJsonOfCanonical(in.parsed->Value(*use)));
    }
  } else {
    CountArgumentParse();
    nlohmann::json args =
        nlohmann::json::parse(in.arguments_json, nullptr, false);
    if (args.is_discarded() || !args.is_object()) {
      return InvalidArgument("arguments are not a JSON object");
    }
    if (name) {
      if (!name->empty()) {
        if (auto it = args.find(*name); it != args.end()) {
          picked.emplace(*name, it->dump());
        }
      }
    } else if (args.size() >= 2) {
      picked.emplace(args.begin().key(), args.begin().value().dump());
    }
  }
  RequestFeatures f;
  if (picked) {
    f.category = picked->first + '=' + picked->second;
    f.category_feature =
        ParameterCategoryFeature(in.tool, picked->first, picked->second);
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
