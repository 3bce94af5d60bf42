// Tests for the learned write veto: the shipped weights reproduce the
// trainer's scores on every train/dev tool, and the layer only vetoes.
#include "src/classify/learned.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "src/classify/eval_set.h"
#include "src/classify/tool_input.h"
#include "tests/support/test_data.h"

namespace toolcache::classify {
namespace {

using ::testing::HasSubstr;

TEST(LearnedTest, WeightsAreSortedForBinarySearch) {
  ASSERT_GT(kLearnedWeightCount, 100u);
  for (size_t i = 1; i < kLearnedWeightCount; ++i) {
    EXPECT_LT(std::string(kLearnedWeights[i - 1].feature),
              std::string(kLearnedWeights[i].feature));
  }
  EXPECT_GT(kLearnedThreshold, 0.0);
  EXPECT_LT(kLearnedThreshold, 1.0);
}

TEST(LearnedTest, FeaturesFollowTheTrainersDefinition) {
  ToolInfo t;
  t.name = "getHTTPStatus_v2";
  t.title = "Status";
  t.description = "Gets the status. Of a URL, é x";
  t.input_schema_json =
      R"({"type":"object","properties":{"saveTo":{"type":"string",
          "description":"Where to write it"}}})";
  const std::set<std::string> f = LearnedFeatures(t);
  EXPECT_EQ(f, (std::set<std::string>{
                   "n:get", "n:http", "n:status", "n:v2", "v:get", "d:status",
                   "d:gets", "d:the", "d:of", "d:url", "f:gets", "p:save",
                   "p:to", "q:where", "q:to", "q:write", "q:it"}));
}

// The trainer writes every labelled tool's score (all sets train the
// shipped model); the compiled weights must give the same numbers.
TEST(LearnedTest, ShippedWeightsReproduceTheTrainersScores) {
  std::ifstream in(testing::TestDataPath("classify/model/scores.csv"));
  ASSERT_TRUE(in) << "tests/data/classify/model/scores.csv";
  std::map<std::pair<std::string, std::string>, std::map<std::string, double>>
      want;  // (set, server) -> tool -> score
  std::string line;
  std::getline(in, line);
  size_t rows = 0;
  while (std::getline(in, line)) {
    // set,server,tool,part,score (tool names hold no comma in these sets).
    std::vector<std::string> c;
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, ',');) c.push_back(f);
    ASSERT_EQ(c.size(), 5u) << line;
    want[{c[0], c[1]}][c[2]] = std::stod(c[4]);
    ++rows;
  }
  ASSERT_GT(rows, 1000u);
  std::map<std::string, std::vector<SetTool>> sets;
  size_t checked = 0, vetoed = 0;
  for (const auto& [key, tools] : want) {
    if (!sets.count(key.first)) {
      Result<std::vector<SetTool>> s =
          LoadEvalSet(testing::TestDataPath("classify/" + key.first));
      ASSERT_TRUE(s.ok()) << s.status().message();
      sets[key.first] = *s;
    }
    for (const SetTool& t : sets[key.first]) {
      if (t.info.server != key.second) continue;
      auto it = tools.find(t.info.name);
      if (it == tools.end()) continue;
      ToolInfo blind = t.info;
      blind.annotations.reset();
      const double got = ScoreTool(blind).p_write;
      EXPECT_NEAR(got, it->second, 1e-9) << key.second << "/" << t.info.name;
      ++checked;
      vetoed += got >= kLearnedThreshold;
    }
  }
  EXPECT_EQ(checked, rows);
  std::cout << "checked " << checked << " scores, " << vetoed
            << " at or above the threshold " << kLearnedThreshold << "\n";
}

TEST(LearnedTest, VetoNamesItsEvidenceAndNeverSaysInformational) {
  // A write the heuristic calls INFORMATIONAL (tau2's log_verification,
  // "Logs the verification ...": the name's verb reads as a noun) scores
  // above the threshold (in-sample: every set trains the model; 0.96 out
  // of set, docs/CLASSIFY.md "Session 16").
  Result<std::vector<SetTool>> set =
      LoadEvalSet(testing::TestDataPath("classify/tau2"));
  ASSERT_TRUE(set.ok()) << set.status().message();
  const std::unique_ptr<FeatureExtractor> veto = MakeLearnedVeto();
  bool found = false;
  for (const SetTool& t : *set) {
    if (t.info.name != "log_verification") continue;
    found = true;
    const LearnedScore s = ScoreTool(t.info);
    ASSERT_GE(s.p_write, kLearnedThreshold);
    std::optional<Features> f = veto->Extract(t.info, "");
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->request_type, RequestType::kCommand);
    EXPECT_TRUE(f->weak_command);
    EXPECT_THAT(f->detail, HasSubstr("learned-veto rule: P(write)"));
    EXPECT_THAT(f->detail, HasSubstr(s.top.front().first));
  }
  EXPECT_TRUE(found);
  ToolInfo read;
  read.name = "get_weather";
  read.description = "Get the weather forecast for a city.";
  EXPECT_LT(ScoreTool(read).p_write, kLearnedThreshold);
  EXPECT_FALSE(veto->Extract(read, "").has_value());
}

}  // namespace
}  // namespace toolcache::classify
