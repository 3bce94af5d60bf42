// The LLM feature extractor's outside world as the program wires it
// (src/classify/llm_extractor.h): the model is asked over HTTP (Anthropic
// Messages or OpenAI Chat Completions, src/http), and answers are
// remembered in the configured Store as sealed values (src/store/sealed.h,
// namespace "llmx") so that several processes sharing a store ask once.
//
// classify defines the two interfaces (LlmModel, LlmAnswerMemory) and knows
// no HTTP and no Store layout; this file implements them, and main()
// installs MakeLlmBackends once at start-up. A program linking the library
// does the same through the public toolcache::UseBuiltInLlmBackends()
// (classifier.h), defined in llm_backends.cc.
//
// Thread-safety: MakeLlmBackends is a pure factory; the model and memory it
// returns are thread-safe (each Ask runs its call on the model's own loop
// thread).
//
// Example:
//   classify::InstallLlmBackends(runtime::MakeLlmBackends);  // in main()
//   Classifier c(config);  // builds classifier.llm's layer on them
#pragma once

#include "src/classify/llm_extractor.h"
#include "toolcache/config.h"
#include "toolcache/status.h"
#include "toolcache/store.h"

namespace toolcache::runtime {

// An HTTP model for `config` (url, api, api_key_env read now, timeouts of
// timeoutSeconds) and, when `store` is given (not owned; must outlive the
// backends), a memory of sealed values in it. INVALID_ARGUMENT
// "classifier.llm.url: ..." for a bad url.
[[nodiscard]] Result<classify::LlmBackends> MakeLlmBackends(
    const LlmExtractorConfig& config, Store* store);

}  // namespace toolcache::runtime
