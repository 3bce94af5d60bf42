// The LLM feature extractor: the paper's semantic features (Table 2: request
// type, parameter category, TTL class) asked of an LLM, once per tool
// definition, as one optional classification layer (classifier.h,
// FeatureSource::kLlm). Off unless `classifier.llm` is configured
// (docs/CLASSIFY.md "The LLM feature extractor").
//
// Safety: the answer is evidence from a model that read text written by the
// tool's server, so by default (mayRelax false) it may only make a verdict
// more conservative: COMMAND vetoes, a TTL only shortens the TTL other
// layers chose (Features::ttl_cap); INFORMATIONAL adds nothing. With
// mayRelax true an INFORMATIONAL answer counts like a trusted annotation
// (it outranks the heuristic's weak evidence; hard vetoes and the learned
// veto still win). A slow, failing or malformed provider never blocks or
// breaks classification: the call is abandoned after timeoutSeconds, the
// layer has no opinion, the reason is logged, and the definition is not
// asked again for kRetryAfterSeconds.
//
// Answers are cached by the definition's digest (name, title, description,
// schema, annotations, api, model and prompt version): in memory, and in an
// LlmAnswerMemory (the program's is the Store given at construction, sealed
// values in namespace "llmx") so that several processes sharing a store ask
// once.
//
// What the extractor needs from outside classify is narrowed to two
// interfaces: LlmModel (ask the provider) and LlmAnswerMemory (remember an
// answer by digest). classify knows no HTTP and no Store layout: the
// program's implementations (an HTTP client, sealed Store values) live in
// src/runtime/startup/llm_backends.h and are wired in at start-up
// (InstallLlmBackends, called by toolcache::UseBuiltInLlmBackends, which
// apps/toolcache/main.cc and programs linking the library call).
//
// Thread-safety: Extract may be called concurrently; concurrent first calls
// for one definition make one provider call (in Mode::kWait the others wait
// for it, up to the timeout; in Mode::kBackground nobody waits).
//
// Example:
//   toolcache::UseBuiltInLlmBackends();  // once, at start-up
//   LlmExtractorConfig c{.url = "http://127.0.0.1:8080", .model = "m"};
//   Result<std::unique_ptr<LlmExtractor>> x = LlmExtractor::Create(c);
//   std::vector<std::unique_ptr<FeatureExtractor>> extra;
//   extra.push_back(std::move(*x));
//   Classifier classifier(config, {}, std::move(extra));
#ifndef TOOLCACHE_SRC_CLASSIFY_LLM_EXTRACTOR_H_
#define TOOLCACHE_SRC_CLASSIFY_LLM_EXTRACTOR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "toolcache/classifier.h"
#include "toolcache/config.h"
#include "toolcache/status.h"

namespace toolcache {
class Store;
}

namespace toolcache::classify {

// A failed definition is not asked again for this long. Choice: 300 s, so
// an unreachable provider costs one timeout per tool per five minutes.
inline constexpr double kLlmRetryAfterSeconds = 300;
// Cached answers live this long in a Store. Choice: 7 days (a changed
// definition has another digest anyway).
inline constexpr double kLlmStoreTtlSeconds = 7 * 86400.0;
// The prompt's version, part of the digest: a new prompt asks again.
inline constexpr std::string_view kLlmPromptVersion = "toolcache-llmx-1";

// What the model said about one definition, validated.
struct LlmAnswer {
  RequestType request_type = RequestType::kCommand;
  std::optional<double> ttl_seconds;  // >= 0
  std::string parameter_category;     // a property of the schema, or ""
  std::string reason;                 // sanitized, at most 200 bytes
};

// The request body for `api` ("anthropic" / "openai").
std::string BuildLlmRequestBody(std::string_view api, std::string_view model,
                                const ToolInfo& tool);

// The answer in a provider's 200 response body, or INVALID_ARGUMENT saying
// what was wrong (not JSON, no text, no JSON object in the text, an unknown
// request_type, a bad ttl_seconds).
Result<LlmAnswer> ParseLlmResponse(std::string_view api, std::string_view body,
                                   const ToolInfo& tool);

// 64 hex digits identifying `tool`'s definition for this api/model/prompt.
std::string LlmDefinitionDigest(std::string_view api, std::string_view model,
                                const ToolInfo& tool);

// A provider's reply to one request: its HTTP status and body.
struct LlmReply {
  int http_status = 0;
  std::string body;
};

// Asks the configured model. Thread-safe: called from several threads at
// once (one call per definition digest at a time).
class LlmModel {
 public:
  virtual ~LlmModel() = default;
  // Sends one request body (BuildLlmRequestBody) to the provider. The
  // reply, whatever its status, or an error saying why none came (refused,
  // timed out, larger than the implementation's bound). Returns within
  // about the configured timeoutSeconds.
  virtual Result<LlmReply> Ask(std::string_view request_body) = 0;
};

// Remembers answers by definition digest, beyond this process. Thread-safe.
class LlmAnswerMemory {
 public:
  virtual ~LlmAnswerMemory() = default;
  // The answer text remembered under `digest`, nullopt when there is none
  // (or it could not be read), DATA_LOSS when one is there but damaged.
  virtual Result<std::optional<std::string>> Recall(
      std::string_view digest) = 0;
  // Remembers `answer_json` under `digest` for `ttl_seconds`.
  virtual Status Remember(std::string_view digest, std::string_view answer_json,
                          double ttl_seconds) = 0;
};

// An extractor's outside world: a model (required) and a memory (nullptr:
// answers are remembered in this process only).
struct LlmBackends {
  std::unique_ptr<LlmModel> model;
  std::unique_ptr<LlmAnswerMemory> memory;
};

// Builds the backends for a configuration and a Store (nullptr: none), or
// INVALID_ARGUMENT naming the bad key (e.g. "classifier.llm.url: ...").
using LlmBackendFactory = Result<LlmBackends> (*)(const LlmExtractorConfig&,
                                                  Store*);

// Sets the factory that LlmExtractor::Create(config, store, mode) uses, the
// path the Classifier takes for `classifier.llm`. Call at start-up, before
// any Classifier is built (apps/toolcache/main.cc installs
// runtime::MakeLlmBackends). Without one that path answers
// FAILED_PRECONDITION and the classifier leaves the layer out (logged).
void InstallLlmBackends(LlmBackendFactory factory);

struct LlmExtractorStats {
  uint64_t provider_calls = 0;  // requests sent
  uint64_t memory_hits = 0;     // answered from the in-memory cache
  uint64_t store_hits = 0;      // answered from the Store
  uint64_t failures = 0;        // timeouts, HTTP errors, malformed answers
};

class LlmExtractor final : public FeatureExtractor {
 public:
  // How a definition's first classification gets its answer.
  enum class Mode {
    // Waits for the provider (up to timeoutSeconds): `toolcache classify`.
    kWait,
    // Never waits: the question goes to a worker thread and the layer says
    // COMMAND "answer pending" until the answer arrives (the faces, whose
    // engine classifies while holding its lock).
    kBackground,
  };
  // INVALID_ARGUMENT for a bad api, model, timeout or url. Builds the
  // backends with the installed factory (InstallLlmBackends;
  // FAILED_PRECONDITION when none is), which reads the API key from
  // config.api_key_env now. `store` (optional, not owned) must outlive the
  // extractor.
  [[nodiscard]] static Result<std::unique_ptr<LlmExtractor>> Create(
      const LlmExtractorConfig& config, Store* store = nullptr,
      Mode mode = Mode::kWait);
  // The same on given backends (INVALID_ARGUMENT without a model).
  [[nodiscard]] static Result<std::unique_ptr<LlmExtractor>> Create(
      const LlmExtractorConfig& config, LlmBackends backends, Mode mode);
  ~LlmExtractor() override;

  FeatureSource source() const override { return FeatureSource::kLlm; }
  std::optional<Features> Extract(
      const ToolInfo& tool, std::string_view arguments_json) const override;

  LlmExtractorStats stats() const;
  // Why the last failed call failed ("" if none failed).
  std::string last_error() const;

 private:
  struct Impl;
  explicit LlmExtractor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace toolcache::classify

#endif  // TOOLCACHE_SRC_CLASSIFY_LLM_EXTRACTOR_H_
