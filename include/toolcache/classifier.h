// Classifier: decides whether a tool (or one call of it) is cacheable, and
// with which semantic features (the paper's section 5.2, made safe).
//
// Cacheability is decided in layers, strongest first; each layer may say no:
//   1. the built-in, non-removable exclusion list (HardExcludedTools())
//   2. the operator's configuration (excludeTools, tools.*.requestType, TTLs)
//   3. MCP tool annotations (unless the configuration distrusts them)
//   4. extra FeatureExtractors given at construction, and the LLM feature
//      extractor when the configuration has `classifier.llm` (it may only
//      veto or shorten the TTL unless `mayRelax`)
//   5. the deterministic name / description / schema / argument heuristic
// A layer that says COMMAND (or excludes) ends the decision. The first layer
// that says INFORMATIONAL sets the request type, but later layers may still
// veto it with an explicit COMMAND signal, except that the operator's
// explicit `requestType` is final. If no layer recognizes the tool it is
// COMMAND (unknown is never cached). Then: COMMAND -> not cacheable;
// read-only open-world without an operator TTL -> not cacheable;
// TTL <= minCacheableTtlSeconds (paper: 60 s) or TTL 0 -> not cacheable.
// Error or partial results are never cached (AdmitResult).
//
// Thread-safety: a constructed Classifier is immutable; all const methods may
// be called concurrently. FeatureExtractors must be thread-safe likewise.
// Ownership: the Classifier owns its Config copy and its extractors.
//
// Example:
//   Classifier classifier(config);
//   ToolInfo tool{.name = "get_weather", .description = "Current weather"};
//   Verdict v = classifier.ClassifyCall(tool, R"({"city":"Paris","day":1})");
//   if (!v.cacheable) spdlog::info("bypass {}: {}", tool.name, v.detail);
//   // v.parameter_category == "city"
#ifndef TOOLCACHE_CLASSIFIER_H_
#define TOOLCACHE_CLASSIFIER_H_

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "toolcache/config.h"
#include "toolcache/status.h"
#include "toolcache/verdict.h"

namespace toolcache {

class Store;
struct CanonicalArguments;  // canonical_json.h

// MCP tool annotations (hints from the server). Unset = not given.
struct ToolAnnotations {
  std::optional<bool> read_only;    // readOnlyHint (MCP default false)
  std::optional<bool> destructive;  // destructiveHint (MCP default true)
  std::optional<bool> idempotent;   // idempotentHint (MCP default false)
  std::optional<bool> open_world;   // openWorldHint (MCP default true)

  // True when at least one hint is given.
  bool any() const {
    return read_only || destructive || idempotent || open_world;
  }
};

// What the classifier knows about a tool.
struct ToolInfo {
  std::string name;
  std::string title;
  std::string description;
  // The tool's JSON Schema for its input as JSON text; may be empty.
  std::string input_schema_json;
  std::optional<ToolAnnotations> annotations;
  // Server name for per-server configuration; "" = none.
  std::string server;
};

// Builds a ToolInfo from one MCP tool object ({"name", "title",
// "description", "inputSchema", "annotations"}). INVALID_ARGUMENT if `tool`
// is not an object or has no string `name`, or a hint is not a boolean.
// nlohmann::json sorts object keys, so the schema's "first property" (the
// tool-level parameter category) is then the alphabetically first; pass an
// ordered_json to keep the server's property order.
[[nodiscard]] Result<ToolInfo> ToolInfoFromJson(const nlohmann::json& tool,
                                                std::string_view server = "");
[[nodiscard]] Result<ToolInfo> ToolInfoFromJson(
    const nlohmann::ordered_json& tool, std::string_view server = "");

// The partial features one layer contributes. Unset fields are left to the
// next layer.
struct Features {
  std::optional<RequestType> request_type;
  // True if request_type must not be overridden or vetoed by later layers
  // (the operator's explicit requestType).
  bool final_type = false;
  // True: the tool must never be cached (reason_if_excluded says why).
  bool excluded = false;
  VerdictReason reason_if_excluded = VerdictReason::kOperatorExcluded;
  std::optional<double> ttl_seconds;
  // True if ttl_seconds came from the operator (makes open-world cacheable).
  bool operator_ttl = false;
  std::optional<std::string> parameter_category;
  // Read-only but open-world: cacheable only with an operator TTL.
  bool open_world = false;
  // One line: which rule fired and the words that decided.
  std::string detail;
  // A COMMAND from evidence that a trusted read-only annotation outranks
  // (description words, parameter names): it does not veto an earlier
  // layer's INFORMATIONAL from annotations. Default: the COMMAND vetoes.
  bool weak_command = false;
  // Why ttl_seconds has its value (e.g. "TTL class real-time from 'recent'
  // in the description"); "" = no reason given.
  std::string ttl_detail;
  // True: ttl_seconds is only an upper bound (the LLM extractor without
  // mayRelax): it shortens the TTL the other layers chose, never lengthens
  // it, and does not shorten the operator's per-tool TTL.
  bool ttl_cap = false;
};

// One classification layer. Add an LLM-based extractor by implementing this
// and passing it to the Classifier.
class FeatureExtractor {
 public:
  virtual ~FeatureExtractor() = default;
  // Which FeatureSource the verdict names when this layer decides.
  virtual FeatureSource source() const = 0;
  // Features for `tool`, or nullopt for "no opinion". `arguments_json` is the
  // call's arguments as JSON object text, or empty for a tool-level query.
  // Must be deterministic and must not throw.
  virtual std::optional<Features> Extract(
      const ToolInfo& tool, std::string_view arguments_json) const = 0;
  // As Extract, for a call whose arguments the key's canonicalizer has
  // already read (`parsed`, canonical_json.h; nullptr when it refused
  // them): a layer that reads arguments overrides this to read `parsed`
  // instead of parsing the text again (one parse per call). Default:
  // Extract(tool, arguments_json).
  virtual std::optional<Features> ExtractCall(
      const ToolInfo& tool, std::string_view arguments_json,
      const CanonicalArguments* parsed) const {
    (void)parsed;
    return Extract(tool, arguments_json);
  }
};

// Options for tool-level vs call-level use.
struct ClassifierOptions {
  // false: ignore MCP annotations regardless of the configuration (used when
  // evaluating the heuristic against annotation ground truth).
  bool use_annotations = true;
  // false: leave out the learned write veto (src/classify/learned.h), a
  // layer after the heuristic that turns a tool whose learned P(write)
  // reaches its threshold into COMMAND (it never makes a tool cacheable).
  // Used to measure the heuristic alone and to train the model.
  bool use_learned_model = true;
  // false: do not build the LLM feature extractor from the configuration's
  // `classifier.llm` (src/classify/llm_extractor.h) even when it is set.
  // An extractor passed as an `extra` layer is used regardless.
  bool use_llm = true;
  // Where the configured LLM extractor caches its answers besides memory
  // (not owned; must outlive the Classifier). nullptr: memory only.
  Store* llm_store = nullptr;
  // true: a new definition's first classification waits for the LLM's
  // answer (up to classifier.llm.timeoutSeconds; `toolcache classify`).
  // false (default, the faces): it never waits; the call is COMMAND
  // ("answer pending") until the answer arrives.
  bool llm_wait = false;
};

class Classifier {
 public:
  // `extra` layers run after annotations and before the heuristic.
  explicit Classifier(
      Config config = Config(), ClassifierOptions options = {},
      std::vector<std::unique_ptr<FeatureExtractor>> extra = {});
  ~Classifier();
  Classifier(Classifier&&) noexcept;
  Classifier& operator=(Classifier&&) noexcept;

  // Tool-level verdict: may calls of `tool` be cached at all? The parameter
  // category is the first property of a multi-property input schema.
  Verdict Classify(const ToolInfo& tool) const;

  // Call-level verdict for one call with `arguments_json` (a JSON object as
  // text, keys in the caller's order). Adds argument rules: an action-like
  // argument whose value is a mutating verb ("send") makes the call COMMAND;
  // the parameter category is the first argument NAME of a multi-argument
  // call. Malformed arguments are treated as absent (tool-level rules only).
  // `parsed`: the same arguments as CanonicalizeArguments read them, when
  // the caller has them (the layers read it instead of the text).
  Verdict ClassifyCall(const ToolInfo& tool, std::string_view arguments_json,
                       const CanonicalArguments* parsed = nullptr) const;

  // Result rule: returns `call` unchanged if the result may be stored, else
  // a non-cacheable copy with reason kErrorResult / kIncompleteResult.
  static Verdict AdmitResult(const Verdict& call, bool is_error,
                             bool is_complete);

  // True if `tool` matches the built-in hard list (see MatchesToolName).
  static bool IsHardExcluded(std::string_view tool);

  // True if the tool name `tool` matches the listed name `listed`:
  // case-insensitive, '-' == '_', camelCase == snake_case, and also when the
  // last segment after an MCP prefix separator ("__", ".", "/", ":")
  // matches, so "mcp__srv__bash", "srv.bash", "srv__write_file" and
  // "WriteFile" all match their listed names.
  static bool MatchesToolName(std::string_view tool, std::string_view listed);

  const Config& config() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Installs the built-in provider client of the LLM feature extractor
// (`classifier.llm`, docs/CLASSIFY.md) for this process: the model is asked
// over HTTP (Anthropic Messages or OpenAI Chat Completions) and, when a
// Classifier is given ClassifierOptions::llm_store, answers are remembered
// there as sealed values, as the `toolcache` program does. A program that
// links the library and configures `classifier.llm` calls it once at
// start-up, before it builds a Classifier or a ToolCache; without it a
// configured layer fails closed (every tool COMMAND) unless `mayRelax` is
// set (then it is left out). Idempotent and thread-safe. Defined in the
// toolcache::runtime_startup library (part of toolcache::toolcache), so the
// classifier itself stays free of HTTP and of the Store's layout.
//
// Example:
//   toolcache::UseBuiltInLlmBackends();
//   Result<Config> cfg = LoadConfigFile("toolcache.yaml");  // classifier.llm
//   Classifier c(*cfg, {.llm_wait = true});
//   Verdict v = c.Classify(tool);  // the model's answer as one layer
void UseBuiltInLlmBackends();

// The built-in exclusion list (side-effecting tools; the seed proxy
// module's default list). Config may extend it, never shrink it.
std::span<const std::string_view> HardExcludedTools();

}  // namespace toolcache

#endif  // TOOLCACHE_CLASSIFIER_H_
