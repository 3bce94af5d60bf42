// The LLM extractor on its two interfaces alone (LlmModel, LlmAnswerMemory),
// with no HTTP and no Store: what classify asks of the program's backends
// (src/runtime/startup/llm_backends.h, tested with a real HTTP provider in
// llm_extractor_test.cc there).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/classify/llm_extractor.h"
#include "toolcache/classifier.h"

namespace toolcache::classify {
namespace {

// Answers every request with one reply and counts the requests.
class ScriptedModel final : public LlmModel {
 public:
  ScriptedModel(Result<LlmReply> reply, int* asked)
      : reply_(std::move(reply)), asked_(asked) {}
  Result<LlmReply> Ask(std::string_view request_body) override {
    ++*asked_;
    EXPECT_NE(request_body.find("get_book_details"), std::string_view::npos);
    return reply_;
  }

 private:
  Result<LlmReply> reply_;
  int* asked_;
};

// A memory in a map shared by the test (another "process" sees it).
class MapMemory final : public LlmAnswerMemory {
 public:
  explicit MapMemory(std::map<std::string, std::string>* m) : m_(m) {}
  Result<std::optional<std::string>> Recall(std::string_view digest) override {
    auto it = m_->find(std::string(digest));
    if (it == m_->end()) return std::optional<std::string>();
    if (it->second == "damaged") return DataLoss("damaged");
    return std::optional<std::string>(it->second);
  }
  Status Remember(std::string_view digest, std::string_view answer_json,
                  double) override {
    (*m_)[std::string(digest)] = std::string(answer_json);
    return Status();
  }

 private:
  std::map<std::string, std::string>* m_;
};

ToolInfo Book() {
  return {.name = "get_book_details",
          .description = "Returns the details of a book by its ISBN.",
          .input_schema_json =
              R"({"type":"object","properties":{"isbn":{"type":"string"}}})"};
}

LlmReply Said(std::string_view text) {
  return {200, R"({"type":"message","content":[{"type":"text","text":)" +
                   std::string(nlohmann::json(text).dump()) + "}]}"};
}

Verdict ClassifyWith(LlmBackends b) {
  LlmExtractorConfig c{.url = "unused", .model = "m"};
  Result<std::unique_ptr<LlmExtractor>> x =
      LlmExtractor::Create(c, std::move(b), LlmExtractor::Mode::kWait);
  EXPECT_TRUE(x.ok()) << x.status().message();
  std::vector<std::unique_ptr<FeatureExtractor>> extra;
  extra.push_back(std::move(*x));
  return Classifier(Config(), ClassifierOptions{}, std::move(extra))
      .Classify(Book());
}

TEST(LlmInterface, ACommandAnswerFromTheModelVetoesAndIsRemembered) {
  int asked = 0;
  std::map<std::string, std::string> memory;
  LlmBackends b{std::make_unique<ScriptedModel>(
                    Said(R"({"request_type":"COMMAND"})"), &asked),
                std::make_unique<MapMemory>(&memory)};
  const Verdict v = ClassifyWith(std::move(b));
  EXPECT_FALSE(v.cacheable);
  EXPECT_EQ(v.source, FeatureSource::kLlm);
  EXPECT_EQ(asked, 1);
  ASSERT_EQ(memory.size(), 1u);
  EXPECT_EQ(memory.begin()->first,
            LlmDefinitionDigest("anthropic", "m", Book()));
  // A second extractor on the same memory does not ask the model.
  int asked_again = 0;
  LlmBackends again{std::make_unique<ScriptedModel>(Said("{}"), &asked_again),
                    std::make_unique<MapMemory>(&memory)};
  EXPECT_FALSE(ClassifyWith(std::move(again)).cacheable);
  EXPECT_EQ(asked_again, 0);
}

TEST(LlmInterface, ADamagedMemoryOrAFailedModelLeavesTheHeuristicVerdict) {
  std::map<std::string, std::string> memory = {
      {LlmDefinitionDigest("anthropic", "m", Book()), "damaged"}};
  int asked = 0;
  LlmBackends b{std::make_unique<ScriptedModel>(Unavailable("refused"), &asked),
                std::make_unique<MapMemory>(&memory)};
  const Verdict v = ClassifyWith(std::move(b));
  EXPECT_TRUE(v.cacheable) << v.detail;
  EXPECT_EQ(v.source, FeatureSource::kHeuristic);
  EXPECT_EQ(asked, 1);
}

TEST(LlmInterface, WithoutAModelOrInstalledBackendsTheLayerFailsClosed) {
  LlmExtractorConfig c{.url = "http://127.0.0.1:1", .model = "m"};
  EXPECT_FALSE(
      LlmExtractor::Create(c, LlmBackends{}, LlmExtractor::Mode::kWait).ok());
  // This test binary installs no backends (a library user who cannot):
  // without mayRelax the layer could only have been more conservative, so
  // its absence makes every tool a write, said in the verdict, rather than
  // silently caching what it was configured to vet.
  InstallLlmBackends(nullptr);
  Result<std::unique_ptr<LlmExtractor>> x = LlmExtractor::Create(c);
  ASSERT_FALSE(x.ok());
  EXPECT_EQ(x.status().code(), StatusCode::kFailedPrecondition);
  Config config;
  config.classifier.llm = c;
  const Verdict closed = Classifier(config).Classify(Book());
  EXPECT_FALSE(closed.cacheable);
  EXPECT_EQ(closed.source, FeatureSource::kLlm);
  EXPECT_NE(closed.detail.find("unavailable"), std::string::npos)
      << closed.detail;
  // With mayRelax the layer may have made verdicts less conservative, so
  // leaving it out (logged) leaves the heuristic's verdict.
  config.classifier.llm->may_relax = true;
  EXPECT_TRUE(Classifier(config).Classify(Book()).cacheable);
}

}  // namespace
}  // namespace toolcache::classify
