#include "src/classify/eval_set.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "tests/support/test_data.h"

namespace toolcache::classify {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

const std::string kSet = testing::TestDataPath("classify/npm_servers");

std::vector<SetTool> LoadSet() {
  Result<std::vector<SetTool>> set = LoadEvalSet(kSet);
  EXPECT_TRUE(set.ok()) << set.status().message();
  return set.ok() ? *set : std::vector<SetTool>();
}

const HalfReport* Half(const std::vector<HalfReport>& reports,
                       std::string_view half) {
  for (const HalfReport& r : reports) {
    if (r.half == half) return &r;
  }
  ADD_FAILURE() << "no half " << half;
  return nullptr;
}

void Print(const HalfReport& h) {
  std::cout << h.half << ": servers " << h.servers << " tools " << h.tools
            << " reads " << h.reads << " writes " << h.writes
            << " writes_informational " << h.writes_informational.size()
            << " writes_cacheable " << h.writes_cacheable.size()
            << " reads_informational " << h.reads_informational
            << " reads_cacheable " << h.reads_cacheable << " recall "
            << h.ReadRecall() << "\n";
  for (const std::string& w : h.writes_informational) {
    std::cout << "  write INFORMATIONAL: " << w << "\n";
  }
  for (const std::string& w : h.reads_lost) {
    std::cout << "  read COMMAND: " << w << "\n";
  }
  for (const auto& [c, n] : h.ttl_classes) {
    std::cout << "  ttl " << c << "=" << n << "\n";
  }
}

// A scratch copy of a tiny set, for the loader's error paths.
class TinySet : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("toolcache_eval_set_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    Write("split.csv", "server,half,category\ns,dev,x\n");
    Write("s.json", R"({"tools":[{"name":"get_a","description":"Get a"},)"
                    R"({"name":"delete_b","description":"Delete b"}]})");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  std::filesystem::path dir_;
};

TEST_F(TinySet, ScoresReadsAndWritesPerHalf) {
  Write("labels.csv",
        "server,tool,label,basis\ns,get_a,read,hand\ns,delete_b,write,hand\n");
  Result<std::vector<SetTool>> set = LoadEvalSet(dir_.string());
  ASSERT_TRUE(set.ok()) << set.status().message();
  std::vector<HalfReport> r = EvaluateSet(Classifier(), *set);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].reads, 1u);
  EXPECT_EQ(r[0].writes, 1u);
  EXPECT_EQ(r[0].reads_informational, 1u);
  EXPECT_THAT(r[0].writes_cacheable, IsEmpty());
}

TEST_F(TinySet, AMissingOrStrayLabelIsAnError) {
  Write("labels.csv", "server,tool,label,basis\ns,get_a,read,hand\n");
  Result<std::vector<SetTool>> missing = LoadEvalSet(dir_.string());
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("no label for s/delete_b"));

  Write("labels.csv",
        "server,tool,label,basis\ns,get_a,read,hand\ns,delete_b,write,hand\n"
        "s,gone,read,hand\n");
  Result<std::vector<SetTool>> stray = LoadEvalSet(dir_.string());
  ASSERT_FALSE(stray.ok());
  EXPECT_THAT(stray.status().message(), HasSubstr("labels.csv:4"));

  Write("labels.csv",
        "server,tool,label,basis\ns,get_a,maybe,hand\ns,delete_b,write,hand\n");
  Result<std::vector<SetTool>> bad = LoadEvalSet(dir_.string());
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("read or write"));
}

TEST(EvalSetTest, TheStoredSetLoadsWithEveryToolLabelled) {
  std::vector<SetTool> set = LoadSet();
  EXPECT_EQ(set.size(), 527u);
  std::map<std::string, int> halves;
  for (const SetTool& t : set) ++halves[t.half];
  EXPECT_EQ(halves["dev"], 257);
  EXPECT_EQ(halves["heldout"], 215);
  EXPECT_EQ(halves["claude-code"], 55);
}

TEST(EvalSetTest, PrintsTheNumbers) {
  const std::vector<HalfReport> r = EvaluateSet(Classifier(), LoadSet());
  for (std::string_view half : {"dev", "heldout", "claude-code"}) {
    if (const HalfReport* h = Half(r, half)) Print(*h);
  }
}

}  // namespace
}  // namespace toolcache::classify
