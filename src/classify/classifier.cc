// The layered classifier: hard list -> operator config -> MCP annotations ->
// extra extractors -> heuristic.
//
// Invariants:
// - The hard list is consulted first and nothing can remove a name from it;
//   the operator's excludeTools only adds names.
// - A layer that excludes or says COMMAND ends the decision (unless the
//   operator's explicit requestType already fixed the type as final; the
//   hard list and exclusions still win over that).
// - No layer recognizing the tool => COMMAND: unknown is never cached.
// - A COMMAND verdict is never cacheable and has TTL 0 (paper section 4.1).
// - Cacheable requires TTL > 0 and TTL > min_cacheable_ttl_seconds when that
//   minimum is > 0 (paper section 5.2 rule 2).
// - Classification never throws and never fails: malformed schemas or
//   arguments are treated as absent.
#include "toolcache/classifier.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "src/classify/heuristic.h"
#include "src/classify/learned.h"
#include "src/classify/llm_extractor.h"

namespace toolcache {
namespace {

// The hard list (docs/CLASSIFY.md "Hard list"): side-effecting
// tools whose stale cached result would be actively harmful.
constexpr auto kHardList = std::to_array<std::string_view>({
    "bash",
    "shell_exec",
    "shell",
    "send_email",
    "write_file",
    "edit_file",
    "create_file",
    "delete_file",
    "commit",
    "push",
    "deploy",
    "execute_sql",
    "http_request",
});

// snake_case form: lowercase, '-'/' ' -> '_', camelCase split.
std::string Normalize(std::string_view name) {
  std::vector<std::string> tokens = classify::TokenizeName(name);
  std::string out;
  for (const std::string& t : tokens) {
    if (!out.empty()) out += '_';
    out += t;
  }
  return out;
}

// The segment after the last MCP prefix separator ("__", ".", "/", ":").
std::string_view LastSegment(std::string_view name) {
  size_t cut = 0;
  for (std::string_view sep : {"__", ".", "/", ":"}) {
    const size_t p = name.rfind(sep);
    if (p != std::string_view::npos) cut = std::max(cut, p + sep.size());
  }
  return name.substr(cut);
}

// A tool name normalized once, to match against many listed names
// (Classifier::MatchesToolName's rule).
struct NameForms {
  explicit NameForms(std::string_view tool) : full(Normalize(tool)) {
    const std::string_view last = LastSegment(tool);
    if (last.size() != tool.size()) segment = Normalize(last);
  }
  // `want`: a listed name, already normalized.
  bool Matches(std::string_view want) const {
    return !want.empty() && (full == want || (segment && *segment == want));
  }
  std::string full;
  std::optional<std::string> segment;  // after the last prefix separator
};

// kHardList, normalized.
const std::vector<std::string>& NormalizedHardList() {
  static const std::vector<std::string> list = [] {
    std::vector<std::string> out;
    for (std::string_view l : kHardList) out.push_back(Normalize(l));
    return out;
  }();
  return list;
}

// The first config entry whose key matches `tool` (exact name first).
template <typename Map>
const typename Map::mapped_type* FindTool(const Map& map,
                                          std::string_view tool) {
  if (auto it = map.find(tool); it != map.end()) return &it->second;
  for (const auto& [name, value] : map) {
    if (Classifier::MatchesToolName(tool, name)) return &value;
  }
  return nullptr;
}

class HardListLayer final : public FeatureExtractor {
 public:
  FeatureSource source() const override { return FeatureSource::kHardList; }
  std::optional<Features> Extract(const ToolInfo& tool,
                                  std::string_view) const override {
    const NameForms forms(tool.name);
    const std::vector<std::string>& normalized = NormalizedHardList();
    for (size_t i = 0; i < kHardList.size(); ++i) {
      if (forms.Matches(normalized[i])) {
        const std::string_view listed = kHardList[i];
        Features f;
        f.excluded = true;
        f.reason_if_excluded = VerdictReason::kHardExcluded;
        f.request_type = RequestType::kCommand;
        f.detail = "'" + tool.name + "' matches built-in exclusion '" +
                   std::string(listed) + "'";
        return f;
      }
    }
    return std::nullopt;
  }
};

class ConfigLayer final : public FeatureExtractor {
 public:
  explicit ConfigLayer(const Config& config) : config_(config) {}
  FeatureSource source() const override { return FeatureSource::kConfig; }

  std::optional<Features> Extract(const ToolInfo& tool,
                                  std::string_view) const override {
    const ServerConfig* server = nullptr;
    if (auto it = config_.servers.find(tool.server);
        !tool.server.empty() && it != config_.servers.end()) {
      server = &it->second;
    }
    Features f;
    auto excluded_by = [&](const std::vector<std::string>& list,
                           std::string_view where) {
      for (const std::string& listed : list) {
        if (Classifier::MatchesToolName(tool.name, listed)) {
          f.excluded = true;
          f.reason_if_excluded = VerdictReason::kOperatorExcluded;
          f.request_type = RequestType::kCommand;
          f.detail = "'" + tool.name + "' matches " + std::string(where) +
                     " entry '" + listed + "'";
          return true;
        }
      }
      return false;
    };
    if (server && excluded_by(server->exclude_tools,
                              "servers." + tool.server + ".excludeTools")) {
      return f;
    }
    if (excluded_by(config_.exclude_tools, "excludeTools")) return f;

    bool any = false;
    // Most specific scope first (this server, then global); within a scope
    // `tools.<name>` before `perToolTtl`.
    struct Scope {
      const ToolConfigMap* tools;
      const TtlMap* ttls;
    };
    const Scope scopes[] = {{server ? &server->tools : nullptr,
                             server ? &server->per_tool_ttl : nullptr},
                            {&config_.tools, &config_.per_tool_ttl}};
    for (const Scope& scope : scopes) {
      if (!scope.tools) continue;
      if (const ToolConfig* t = FindTool(*scope.tools, tool.name)) {
        any = true;
        if (t->request_type && !f.request_type) {
          f.request_type = t->request_type;
          f.final_type = true;
          f.detail = "configured requestType " +
                     std::string(RequestTypeName(*t->request_type));
        }
        if (t->ttl_seconds && !f.ttl_seconds) {
          f.ttl_seconds = t->ttl_seconds;
          f.operator_ttl = true;
        }
        if (t->parameter_category && !f.parameter_category) {
          f.parameter_category = t->parameter_category;
        }
      }
      if (const double* ttl = FindTool(*scope.ttls, tool.name)) {
        any = true;
        if (!f.ttl_seconds) {
          f.ttl_seconds = *ttl;
          f.operator_ttl = true;
        }
      }
    }
    if (server && server->ttl_seconds && !f.ttl_seconds) {
      f.ttl_seconds = server->ttl_seconds;
      f.operator_ttl = true;
      any = true;
    }
    if (!any) return std::nullopt;
    if (f.ttl_seconds) {
      if (!f.detail.empty()) f.detail += "; ";
      std::ostringstream os;
      os << "configured TTL " << *f.ttl_seconds << " s"
         << (ServerWideTtlOnly(tool) ? " (server-wide)" : "");
      f.detail += os.str();
    }
    return f;
  }

  // True if the tool's TTL comes from servers.<name>.ttlSeconds alone (no
  // per-tool TTL in any scope): a duration for the server's tools, not the
  // operator's judgement of this one.
  bool ServerWideTtlOnly(const ToolInfo& tool) const {
    auto it = config_.servers.find(tool.server);
    if (tool.server.empty() || it == config_.servers.end() ||
        !it->second.ttl_seconds) {
      return false;
    }
    const ServerConfig& server = it->second;
    for (const ToolConfigMap* tools : {&server.tools, &config_.tools}) {
      if (const ToolConfig* t = FindTool(*tools, tool.name);
          t && t->ttl_seconds) {
        return false;
      }
    }
    for (const TtlMap* ttls : {&server.per_tool_ttl, &config_.per_tool_ttl}) {
      if (FindTool(*ttls, tool.name)) return false;
    }
    return true;
  }

 private:
  const Config& config_;
};

class AnnotationLayer final : public FeatureExtractor {
 public:
  FeatureSource source() const override { return FeatureSource::kAnnotations; }

  std::optional<Features> Extract(const ToolInfo& tool,
                                  std::string_view) const override {
    if (!tool.annotations || !tool.annotations->any()) return std::nullopt;
    const ToolAnnotations& a = *tool.annotations;
    Features f;
    // MCP defaults: readOnlyHint false, openWorldHint true.
    if (!a.read_only.value_or(false)) {
      f.request_type = RequestType::kCommand;
      f.detail = a.read_only ? "readOnlyHint: false" : "readOnlyHint not set";
      return f;
    }
    if (a.destructive.value_or(false)) {
      // Contradictory hints: believe the dangerous one.
      f.request_type = RequestType::kCommand;
      f.detail = "readOnlyHint: true but destructiveHint: true";
      return f;
    }
    f.request_type = RequestType::kInformational;
    f.open_world = a.open_world.value_or(true);
    f.detail = f.open_world ? (a.open_world ? "readOnlyHint: true, "
                                              "openWorldHint: true"
                                            : "readOnlyHint: true, "
                                              "openWorldHint not set (open)")
                            : "readOnlyHint: true, openWorldHint: false";
    return f;
  }
};

std::string FormatSeconds(double s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

}  // namespace

namespace {

// The configured LLM layer when it could not be built and may not relax:
// every tool a COMMAND, with the reason (fail closed; see Impl).
class UnavailableLlmLayer final : public FeatureExtractor {
 public:
  explicit UnavailableLlmLayer(std::string why) : why_(std::move(why)) {}
  FeatureSource source() const override { return FeatureSource::kLlm; }
  std::optional<Features> Extract(const ToolInfo&,
                                  std::string_view) const override {
    Features f;
    f.request_type = RequestType::kCommand;
    f.detail = "the configured LLM layer is unavailable (" + why_ +
               "): treated as a write";
    return f;
  }

 private:
  std::string why_;
};

}  // namespace

struct Classifier::Impl {
  Config config;
  ClassifierOptions options;
  HardListLayer hard;
  ConfigLayer config_layer{config};
  AnnotationLayer annotations;
  std::vector<std::unique_ptr<FeatureExtractor>> extra;
  std::unique_ptr<FeatureExtractor> heuristic =
      classify::MakeHeuristicExtractor();
  std::unique_ptr<FeatureExtractor> learned = classify::MakeLearnedVeto();

  Impl(Config c, ClassifierOptions o,
       std::vector<std::unique_ptr<FeatureExtractor>> e)
      : config(std::move(c)), options(o), extra(std::move(e)) {
    const bool given = std::any_of(extra.begin(), extra.end(), [](auto& x) {
      return x->source() == FeatureSource::kLlm;
    });
    if (config.classifier.llm && options.use_llm && !given) {
      // A bad extractor configuration leaves the layer out (logged): the
      // classifier never fails to construct (config loading checked it).
      Result<std::unique_ptr<classify::LlmExtractor>> x =
          classify::LlmExtractor::Create(
              *config.classifier.llm, options.llm_store,
              options.llm_wait ? classify::LlmExtractor::Mode::kWait
                               : classify::LlmExtractor::Mode::kBackground);
      if (x.ok()) {
        extra.push_back(std::move(*x));
      } else if (config.classifier.llm->may_relax) {
        spdlog::warn("classifier: LLM extractor left out: {}",
                     x.status().message());
      } else {
        // Choice: fail closed. Without mayRelax the layer could only have
        // made verdicts more conservative; leaving it out would silently
        // cache what the operator asked it to vet, so every tool is a
        // COMMAND (never cached) until the layer can be built.
        spdlog::error(
            "classifier: LLM extractor unavailable ({}); every tool is "
            "treated as a write until it is",
            x.status().message());
        extra.push_back(std::make_unique<UnavailableLlmLayer>(
            std::string(x.status().message())));
      }
    }
  }

  bool TrustAnnotations(const ToolInfo& tool) const {
    if (!options.use_annotations) return false;
    if (auto it = config.servers.find(tool.server);
        !tool.server.empty() && it != config.servers.end() &&
        it->second.trust_annotations) {
      return *it->second.trust_annotations;
    }
    return config.trust_annotations;
  }

  Verdict Run(const ToolInfo& tool, std::string_view args,
              const CanonicalArguments* parsed = nullptr) const {
    std::vector<const FeatureExtractor*> layers = {&hard, &config_layer};
    if (TrustAnnotations(tool)) layers.push_back(&annotations);
    for (const auto& e : extra) layers.push_back(e.get());
    layers.push_back(heuristic.get());
    if (options.use_learned_model) layers.push_back(learned.get());

    Verdict v;
    std::optional<RequestType> type;
    bool final_type = false;
    bool open_world = false;
    std::optional<double> ttl;
    bool operator_ttl = false;
    bool server_wide_ttl = false;
    // The heuristic read the tool as INFORMATIONAL too (a second opinion
    // for a server-wide TTL on an open-world tool).
    bool heuristic_reads = false;
    std::string ttl_detail;
    std::optional<std::string> category;
    std::optional<double> shorter_ttl;
    std::string shorter_detail;
    // An upper bound on the TTL (Features::ttl_cap) and who set it.
    std::optional<double> ttl_cap;
    std::string cap_detail;

    for (const FeatureExtractor* layer : layers) {
      std::optional<Features> f = layer->ExtractCall(tool, args, parsed);
      if (!f) continue;
      if (f->parameter_category && !category) category = f->parameter_category;
      if (f->excluded) {
        v.cacheable = false;
        v.reason = f->reason_if_excluded;
        v.request_type = RequestType::kCommand;
        v.source = layer->source();
        v.detail = f->detail;
        v.parameter_category = category.value_or("");
        v.ttl_seconds = 0;
        return v;
      }
      if (f->request_type && !final_type) {
        // A trusted read-only annotation is not overruled by weak evidence
        // (a stray noun or parameter name); the name's verb still vetoes.
        if (*f->request_type == RequestType::kCommand && f->weak_command &&
            type && v.source == FeatureSource::kLlm) {
          v.detail += "; the LLM extractor (mayRelax) outranks the " +
                      std::string(FeatureSourceName(layer->source())) + "'s " +
                      f->detail.substr(0, f->detail.find(';'));
          f->request_type.reset();
        }
        if (f->request_type && *f->request_type == RequestType::kCommand &&
            f->weak_command && type &&
            v.source == FeatureSource::kAnnotations) {
          v.detail += "; readOnlyHint outranks the " +
                      std::string(FeatureSourceName(layer->source())) + "'s " +
                      f->detail.substr(0, f->detail.find(';'));
          f->request_type.reset();
        }
      }
      if (layer->source() == FeatureSource::kHeuristic && f->request_type &&
          *f->request_type == RequestType::kInformational) {
        heuristic_reads = true;
      }
      if (f->request_type && !final_type) {
        if (*f->request_type == RequestType::kCommand) {
          // Annotations are evidence, not verdicts: a stronger contradiction
          // (the name's verb, an action enum, a hard veto) wins and says so.
          const bool contradicts =
              type && v.source == FeatureSource::kAnnotations;
          v.cacheable = false;
          v.reason = VerdictReason::kCommand;
          v.request_type = RequestType::kCommand;
          v.source = layer->source();
          v.detail = contradicts
                         ? f->detail + "; contradicts the annotation (" +
                               v.detail +
                               "): annotations are evidence, not "
                               "verdicts"
                         : f->detail;
          v.parameter_category = category.value_or("");
          v.ttl_seconds = 0;
          return v;
        }
        if (!type) {
          type = RequestType::kInformational;
          final_type = f->final_type;
          open_world = f->open_world;
          v.source = layer->source();
          v.detail = f->detail;
        }
      }
      if (f->ttl_seconds && f->ttl_cap) {
        if (!ttl_cap || *f->ttl_seconds < *ttl_cap) {
          ttl_cap = f->ttl_seconds;
          cap_detail = std::string(FeatureSourceName(layer->source())) +
                       (f->ttl_detail.empty() ? "" : ": " + f->ttl_detail);
        }
      } else if (f->ttl_seconds && !ttl) {
        ttl = f->ttl_seconds;
        operator_ttl = f->operator_ttl;
        server_wide_ttl =
            layer == &config_layer && config_layer.ServerWideTtlOnly(tool);
        ttl_detail = std::string(FeatureSourceName(layer->source()));
        if (!f->ttl_detail.empty()) ttl_detail += ": " + f->ttl_detail;
      } else if (f->ttl_seconds && ttl && operator_ttl &&
                 *f->ttl_seconds < *ttl && !shorter_ttl) {
        // The operator's TTL wins, but never silently over a shorter
        // (e.g. real-time) class the classifier judged.
        shorter_ttl = f->ttl_seconds;
        shorter_detail = std::string(FeatureSourceName(layer->source())) +
                         (f->ttl_detail.empty() ? "" : ": " + f->ttl_detail);
      }
    }
    v.parameter_category = category.value_or("");
    if (!type) {
      v.cacheable = false;
      v.reason = VerdictReason::kCommand;
      v.request_type = RequestType::kCommand;
      v.source = FeatureSource::kHeuristic;
      v.detail = "no layer recognized the tool; unknown tools are COMMAND";
      v.ttl_seconds = 0;
      return v;
    }
    v.request_type = RequestType::kInformational;
    // An operator TTL never makes a write cacheable (issue 31): a
    // server-wide TTL is a duration, not a judgement of this tool, so it
    // does not lengthen a shorter class judged from evidence (the 60 s of a
    // real-time tool stays 60 s and so stays below the minimum).
    // What the verdict says when it keeps the shorter TTL judged by `by`.
    auto not_lengthened = [&](double server, double judged,
                              const std::string& by) {
      v.detail += "; the server-wide TTL " + FormatSeconds(server) +
                  " s does not lengthen the " + FormatSeconds(judged) +
                  " s judged by the " + by +
                  " (set tools.<name>.ttlSeconds to decide for this tool)";
    };
    if (server_wide_ttl && shorter_ttl) {
      not_lengthened(*ttl, *shorter_ttl, shorter_detail);
      ttl = shorter_ttl;
      ttl_detail = shorter_detail;
      operator_ttl = false;
      shorter_ttl.reset();
    }
    v.ttl_seconds = ttl.value_or(config.ttl_seconds);
    if (!ttl) ttl_detail = "default ttlSeconds";
    // A cap shortens any TTL but the operator's own for this tool.
    const bool per_tool_operator_ttl = operator_ttl && !server_wide_ttl;
    if (ttl_cap && *ttl_cap < v.ttl_seconds && !per_tool_operator_ttl) {
      if (server_wide_ttl) {
        not_lengthened(v.ttl_seconds, *ttl_cap, cap_detail);
        // Nor does it then count as the operator's TTL (an open-world
        // tool stays uncached, as with a longer class above).
        operator_ttl = false;
      }
      ttl_detail = cap_detail + ", shortened from " +
                   FormatSeconds(v.ttl_seconds) + " s (" + ttl_detail + ")";
      v.ttl_seconds = *ttl_cap;
    } else if (ttl_cap && *ttl_cap < v.ttl_seconds && !shorter_ttl) {
      shorter_ttl = ttl_cap;
      shorter_detail = cap_detail;
    }
    if (open_world && operator_ttl && server_wide_ttl && !heuristic_reads) {
      v.cacheable = false;
      v.reason = VerdictReason::kOpenWorldNeedsTtl;
      v.detail +=
          "; a server-wide TTL unlocks a read-only open-world tool only when "
          "the rest of its definition reads too (the heuristic does not "
          "say INFORMATIONAL); set tools.<name>.ttlSeconds to decide for "
          "this tool";
      return v;
    }
    if (open_world && !operator_ttl) {
      v.cacheable = false;
      v.reason = VerdictReason::kOpenWorldNeedsTtl;
      v.detail +=
          "; read-only open-world tools need a TTL set by the "
          "operator (tools.<name>.ttlSeconds, perToolTtl or "
          "servers.<name>.ttlSeconds)";
      return v;
    }
    const double min = config.min_cacheable_ttl_seconds;
    // Paper-silent: TTL 0 means "expires at once", never cacheable even
    // with the paper rule disabled.
    if (v.ttl_seconds <= 0 || (min > 0 && v.ttl_seconds <= min)) {
      v.cacheable = false;
      v.reason = VerdictReason::kTtlTooShort;
      v.detail += "; TTL " + FormatSeconds(v.ttl_seconds) + " s (" +
                  ttl_detail + ") <= minCacheableTtlSeconds " +
                  FormatSeconds(min);
      return v;
    }
    v.cacheable = true;
    v.reason = VerdictReason::kCacheable;
    v.detail +=
        "; TTL " + FormatSeconds(v.ttl_seconds) + " s from " + ttl_detail;
    if (shorter_ttl) {
      v.detail += "; the operator's TTL lengthens the " +
                  FormatSeconds(*shorter_ttl) + " s judged by the " +
                  shorter_detail;
    }
    return v;
  }
};

Classifier::Classifier(Config config, ClassifierOptions options,
                       std::vector<std::unique_ptr<FeatureExtractor>> extra)
    : impl_(std::make_unique<Impl>(std::move(config), options,
                                   std::move(extra))) {}
Classifier::~Classifier() = default;
Classifier::Classifier(Classifier&&) noexcept = default;
Classifier& Classifier::operator=(Classifier&&) noexcept = default;

Verdict Classifier::Classify(const ToolInfo& tool) const {
  return impl_->Run(tool, "");
}

Verdict Classifier::ClassifyCall(const ToolInfo& tool,
                                 std::string_view arguments_json,
                                 const CanonicalArguments* parsed) const {
  // An empty argument text is an empty object for a call.
  return impl_->Run(tool, arguments_json.empty() ? "{}" : arguments_json,
                    parsed);
}

Verdict Classifier::AdmitResult(const Verdict& call, bool is_error,
                                bool is_complete) {
  if (!call.cacheable) return call;
  Verdict v = call;
  if (is_error) {
    v.cacheable = false;
    v.reason = VerdictReason::kErrorResult;
    v.detail =
        "the result is an error (isError: true); errors are never "
        "cached";
  } else if (!is_complete) {
    v.cacheable = false;
    v.reason = VerdictReason::kIncompleteResult;
    v.detail = "the result is partial; only complete results are cached";
  }
  return v;
}

bool Classifier::MatchesToolName(std::string_view tool,
                                 std::string_view listed) {
  const std::string want = Normalize(listed);
  return !want.empty() && NameForms(tool).Matches(want);
}

bool Classifier::IsHardExcluded(std::string_view tool) {
  const NameForms forms(tool);
  const std::vector<std::string>& normalized = NormalizedHardList();
  return std::any_of(normalized.begin(), normalized.end(),
                     [&](const std::string& l) { return forms.Matches(l); });
}

const Config& Classifier::config() const { return impl_->config; }

std::span<const std::string_view> HardExcludedTools() { return kHardList; }

namespace {

template <typename J>
Result<ToolInfo> ToolInfoFromAnyJson(const J& tool, std::string_view server) {
  if (!tool.is_object()) {
    return InvalidArgument("a tool definition must be a JSON object");
  }
  auto name = tool.find("name");
  if (name == tool.end() || !name->is_string() ||
      name->template get<std::string>().empty()) {
    return InvalidArgument("a tool definition needs a non-empty string 'name'");
  }
  ToolInfo info;
  info.name = name->template get<std::string>();
  info.server = std::string(server);
  for (auto [key, field] : {std::pair{"title", &info.title},
                            std::pair{"description", &info.description}}) {
    auto it = tool.find(key);
    if (it == tool.end() || it->is_null()) continue;
    if (!it->is_string()) {
      return InvalidArgument("tool '" + info.name + "': '" + key +
                             "' must be a string");
    }
    *field = it->template get<std::string>();
  }
  // MCP names the schema "inputSchema"; the Anthropic Messages API's tool
  // definitions (what an LLM-API face sees) name it "input_schema".
  for (const char* key : {"inputSchema", "input_schema"}) {
    auto it = tool.find(key);
    if (it == tool.end() || it->is_null()) continue;
    if (!it->is_object()) {
      return InvalidArgument("tool '" + info.name + "': '" + key +
                             "' must be an object");
    }
    info.input_schema_json = it->dump();
    break;
  }
  if (auto it = tool.find("annotations"); it != tool.end() && !it->is_null()) {
    if (!it->is_object()) {
      return InvalidArgument("tool '" + info.name +
                             "': 'annotations' must be an object");
    }
    ToolAnnotations a;
    for (auto [key, field] : {std::pair{"readOnlyHint", &a.read_only},
                              std::pair{"destructiveHint", &a.destructive},
                              std::pair{"idempotentHint", &a.idempotent},
                              std::pair{"openWorldHint", &a.open_world}}) {
      auto h = it->find(key);
      if (h == it->end() || h->is_null()) continue;
      if (!h->is_boolean()) {
        return InvalidArgument("tool '" + info.name + "': annotation '" + key +
                               "' must be true or false");
      }
      *field = h->template get<bool>();
    }
    info.annotations = a;
  }
  return info;
}

}  // namespace

Result<ToolInfo> ToolInfoFromJson(const nlohmann::json& tool,
                                  std::string_view server) {
  return ToolInfoFromAnyJson(tool, server);
}

Result<ToolInfo> ToolInfoFromJson(const nlohmann::ordered_json& tool,
                                  std::string_view server) {
  return ToolInfoFromAnyJson(tool, server);
}

}  // namespace toolcache
