#include "src/classify/eval_set.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "tests/support/test_data.h"

namespace toolcache::classify {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

const std::string kSet = testing::TestDataPath("classify/npm_servers");
const std::string kFreshSet =
    testing::TestDataPath("classify/npm_servers_fresh");
const std::string kHeldout2Set =
    testing::TestDataPath("classify/npm_servers_heldout2");

std::vector<SetTool> LoadSet(const std::string& dir = kSet) {
  Result<std::vector<SetTool>> set = LoadEvalSet(dir);
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
  for (const std::string& w : h.writes_cacheable) {
    std::cout << "  write CACHEABLE: " << w << "\n";
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

// Pinned: the heuristic alone (annotations stripped, default config) on the
// stored set, per half (docs/CLASSIFY.md, "Evaluation on real servers").
// Before issue 18's rules: dev 5 writes cacheable, read recall 0.842;
// heldout 6 writes cacheable, recall 0.846; claude-code 0, recall 0.778.
// A rule change that moves these numbers must update them deliberately.
// TTL classes: issue 31 took file, content(s), read, code, tree, gist, book
// and movie out of the static words (mutable data, the default TTL now):
// static 6 -> 2 (dev), 14 -> 5 (heldout), 13 -> 8 (fresh), 11 -> 9
// (heldout2); reads cacheable unchanged.
TEST(EvalSetTest, NumbersPerHalfArePinned) {
  // The heuristic alone (the learned veto was trained on this set; its
  // in-sample effect is pinned below).
  const std::vector<HalfReport> r = EvaluateSet(
      Classifier(Config(), {.use_learned_model = false}), LoadSet());
  for (const HalfReport& h : r) Print(h);
  const HalfReport* dev = Half(r, "dev");
  const HalfReport* heldout = Half(r, "heldout");
  const HalfReport* cc = Half(r, "claude-code");
  ASSERT_TRUE(dev && heldout && cc);

  EXPECT_EQ(dev->servers, 14u);
  EXPECT_EQ(dev->reads, 120u);
  EXPECT_EQ(dev->writes, 137u);
  // git_fetch left with the option rule ("prune": "Prune remote-tracking
  // references"); playwright_assert_response ("Wait for and validate a
  // previously initiated ... wait operation") is still INFORMATIONAL, and
  // since session 16 never cached (a call that waits: TTL cap 0).
  EXPECT_THAT(dev->writes_cacheable, IsEmpty());
  EXPECT_THAT(dev->writes_informational,
              ElementsAre("executeautomation-playwright/"
                          "playwright_assert_response"));
  // Was 113 (0.942): the parameter-text and option rules cost MongoDB's
  // aggregate, aggregate-db ("stages to execute"), explain ("arguments to
  // run") and playwright_console_logs ("Whether to clear logs").
  // Session 12: 109 -> 110 (0.917), notion's API-query-data-source
  // (read-evidence rule: the ambiguous "query" with filter parameters).
  EXPECT_EQ(dev->reads_informational, 110u);  // recall 0.917
  EXPECT_EQ(dev->reads_cacheable, 81u);
  EXPECT_EQ(dev->ttl_classes,
            (std::map<std::string, uint32_t>{{"computational", 2},
                                             {"none", 77},
                                             {"real-time", 29},
                                             {"static", 2}}));

  // The held-out half. Its last 3 writes (seen in an earlier session) led to
  // the agent-noun, async-job and action-list rules, so it is no longer
  // clean: the fresh set below is the held-out measure now. Goal (issue 18):
  // 0 writes cacheable, read recall >= 0.85. One write is still
  // INFORMATIONAL, labelled write only by its authors' destructiveHint
  // (circleci/find_flaky_tests, see docs/CLASSIFY.md); it is no longer
  // cacheable by default because its description's "logs" and "recent"
  // make it real-time (60 s), not because it is recognised as a write.
  EXPECT_EQ(heldout->servers, 14u);
  EXPECT_EQ(heldout->reads, 91u);
  EXPECT_EQ(heldout->writes, 124u);
  EXPECT_THAT(heldout->writes_cacheable, IsEmpty());
  EXPECT_THAT(heldout->writes_informational,
              UnorderedElementsAre("circleci/find_flaky_tests"));
  EXPECT_EQ(heldout->reads_informational, 82u);  // recall 0.901
  EXPECT_GE(heldout->ReadRecall(), 0.85);
  EXPECT_EQ(heldout->reads_cacheable, 68u);
  EXPECT_EQ(heldout->ttl_classes,
            (std::map<std::string, uint32_t>{{"computational", 1},
                                             {"none", 62},
                                             {"real-time", 14},
                                             {"static", 5}}));

  // Claude Code's built-ins (what the LLM-API proxy sees), with the
  // project's own one-line descriptions: no write is INFORMATIONAL; LSP
  // ("Asks a language server ...") has no reading verb and stays COMMAND.
  EXPECT_EQ(cc->reads, 18u);
  EXPECT_EQ(cc->writes, 37u);
  EXPECT_THAT(cc->writes_informational, IsEmpty());
  EXPECT_EQ(cc->reads_informational, 17u);
  EXPECT_EQ(cc->reads_cacheable, 15u);

  // With the learned write veto (default; trained on this set, so
  // in-sample). Session 16: retrained on every set with the threshold its
  // leave-one-set-out scores support (0.90), it no longer vetoes the dev
  // write (P(write) 0.77 in-sample, 0.68 out of set: session 6's veto of it
  // was in-sample only) and costs no read; a wait is never cached, which
  // keeps it out.
  const std::vector<HalfReport> m = EvaluateSet(Classifier(), LoadSet());
  const HalfReport* mdev = Half(m, "dev");
  ASSERT_TRUE(mdev);
  EXPECT_THAT(mdev->writes_cacheable, IsEmpty());
  EXPECT_THAT(mdev->writes_informational,
              ElementsAre("executeautomation-playwright/"
                          "playwright_assert_response"));
  EXPECT_EQ(mdev->reads_informational, 110u);
}

// Issue 31: with annotations trusted and an operator TTL of 300 s on every
// server, no write of the first set becomes cacheable (the writes called
// INFORMATIONAL are labelled against their own annotations; each stays below
// the minimum TTL or needs a per-tool TTL). Until session 16 the learned veto
// caught playwright_assert_response in-sample; the veto retrained on every
// set does not, and the rule that a wait is never cached does (an operator's
// server TTL does not lift it; docs/CLASSIFY.md, "Session 16").
TEST(EvalSetTest, AnnotationsAndServerTtlsMakeNoWriteCacheable) {
  std::string yaml = "servers:\n";
  const std::vector<SetTool> set = LoadSet();
  std::set<std::string> names;
  for (const SetTool& t : set) names.insert(t.info.server);
  for (const std::string& n : names) yaml += "  " + n + ": {ttlSeconds: 300}\n";
  Result<Config> config = ParseConfig(yaml, "ttl.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  const Classifier c(*config, {.use_annotations = true});
  const std::vector<HalfReport> r =
      EvaluateSet(c, set, /*keep_annotations=*/true);
  for (const HalfReport& h : r) {
    Print(h);
    EXPECT_THAT(h.writes_cacheable, IsEmpty()) << h.half;
  }
  const HalfReport* dev = Half(r, "dev");
  ASSERT_TRUE(dev);
  EXPECT_THAT(dev->writes_informational,
              UnorderedElementsAre(
                  "executeautomation-playwright/playwright_assert_response",
                  "mongodb/disconnect", "exa/agent_run",
                  "desktop-commander/start_search"));
  EXPECT_EQ(dev->reads_informational, 115u);  // recall 0.958
}

// BFCL's multi-turn APIs (tests/data/classify/bfcl_multi_turn), hand
// labels committed before the first run: a set no rule or model saw. Safe
// (no write INFORMATIONAL) but recall 0.647: math functions named by bare
// verbs ("add", "divide"), and a boilerplate first sentence ("allows users
// to create, view, and manage ...") that vetoes every ticket tool.
TEST(EvalSetTest, BfclMultiTurnNumbersArePinned) {
  const std::vector<HalfReport> r = EvaluateSet(
      Classifier(), LoadSet(testing::TestDataPath("classify/bfcl_multi_turn")));
  const HalfReport* test = Half(r, "test");
  ASSERT_TRUE(test);
  EXPECT_EQ(test->tools, 145u);
  EXPECT_EQ(test->writes, 60u);
  EXPECT_THAT(test->writes_cacheable, IsEmpty());
  EXPECT_THAT(test->writes_informational, IsEmpty());
  // Session 12: 55 -> 68 (0.800), the read-evidence rule reading the
  // clause after the "Tool description:" label ("Calculate the mean ...",
  // "Find the maximum value ...").
  EXPECT_EQ(test->reads_informational, 68u);  // of 85
}

// tau2-bench's tools (tests/data/classify/tau2), labelled by the benchmark's
// own ToolType. Issue 27 item 17: `return_delivered_order_items` (retail,
// test half) was cacheable by "name-verb rule: 'return'".
TEST(EvalSetTest, Tau2NumbersArePinned) {
  const std::vector<HalfReport> r = EvaluateSet(
      Classifier(), LoadSet(testing::TestDataPath("classify/tau2")));
  for (const HalfReport& h : r) Print(h);
  const HalfReport* dev = Half(r, "dev");
  const HalfReport* test = Half(r, "test");
  ASSERT_TRUE(dev && test);
  EXPECT_EQ(dev->tools + test->tools, 105u);
  EXPECT_THAT(dev->writes_cacheable, IsEmpty());
  EXPECT_THAT(dev->writes_informational, IsEmpty());
  EXPECT_THAT(test->writes_cacheable, IsEmpty());
  // "Log the verification ..." (banking): a write whose name verb reads as
  // a noun; not cacheable (real-time), called INFORMATIONAL by the heuristic.
  // Session 16: the veto retrained on every set (tau2 included, so
  // in-sample) calls it COMMAND (P(write) 0.97; 0.96 out of set).
  EXPECT_THAT(test->writes_informational, IsEmpty());
  EXPECT_EQ(dev->reads_informational, 25u);   // of 28: recall 0.893
  EXPECT_EQ(test->reads_informational, 23u);  // of 24: recall 0.958
}

// The fresh held-out set (tests/data/classify/npm_servers_fresh): 15 servers
// whose labels were committed before the classifier was first run on them,
// and on which no rule was written.
TEST(EvalSetTest, FreshHeldOutNumbersArePinned) {
  const std::vector<HalfReport> r =
      EvaluateSet(Classifier(), LoadSet(kFreshSet));
  for (const HalfReport& h : r) Print(h);
  const HalfReport* fresh = Half(r, "fresh");
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->servers, 15u);
  EXPECT_EQ(fresh->reads, 207u);
  EXPECT_EQ(fresh->writes, 194u);
  // Any write that becomes cacheable or INFORMATIONAL fails here. The two
  // of the previous rules are COMMAND now: azure-devops/wit_query (its
  // "wiql" parameter: "The WIQL query string to execute") and
  // selenium/diagnostics (boolean "clear": "Clear after returning").
  EXPECT_THAT(fresh->writes_cacheable, IsEmpty());
  EXPECT_THAT(fresh->writes_informational, IsEmpty());
  // Was 197 (0.952): stories-search and list_discounts are back (the
  // "-ies" morphology and "code" cue defects fixed); list_adjustments is
  // lost (its filter "action" allows "refund": the action-enum rule).
  EXPECT_EQ(fresh->reads_informational, 198u);  // recall 0.957
  EXPECT_GE(fresh->ReadRecall(), 0.85);
  EXPECT_EQ(fresh->reads_cacheable, 153u);
  EXPECT_EQ(fresh->ttl_classes,
            (std::map<std::string, uint32_t>{{"computational", 3},
                                             {"none", 142},
                                             {"real-time", 45},
                                             {"static", 8}}));
}

// The second held-out set (tests/data/classify/npm_servers_heldout2): 12
// servers labelled and committed before any rule of its session changed and
// before the classifier was first run on them. As first measured: 0 writes
// cacheable, 1 write INFORMATIONAL (upstash/box_preview), recall 0.901 (145
// of 161), 114 reads cacheable; with the session's rules written on the
// other sets (commit dc88115): the same but 110 reads cacheable. The
// action-enum precedence rule was then prompted by box_preview, so this set
// is no longer clean for that tool (docs/CLASSIFY.md).
TEST(EvalSetTest, SecondHeldOutNumbersArePinned) {
  const std::vector<HalfReport> r =
      EvaluateSet(Classifier(), LoadSet(kHeldout2Set));
  for (const HalfReport& h : r) Print(h);
  const HalfReport* h2 = Half(r, "heldout2");
  ASSERT_TRUE(h2);
  EXPECT_EQ(h2->servers, 12u);
  EXPECT_EQ(h2->reads, 161u);
  EXPECT_EQ(h2->writes, 152u);
  EXPECT_THAT(h2->writes_cacheable, IsEmpty());
  EXPECT_THAT(h2->writes_informational, IsEmpty());
  // Session 12: 145 -> 148 (0.919): bullmq's query_dead_letter_queue,
  // salesforce_query_records (the ambiguous "query" with filter
  // parameters) and mapbox's nearest_point_on_line_tool (a "Returns"
  // sentence), by the read-evidence rule.
  EXPECT_EQ(h2->reads_informational, 148u);  // recall 0.919
  EXPECT_GE(h2->ReadRecall(), 0.85);
  EXPECT_EQ(h2->reads_cacheable, 112u);
  EXPECT_EQ(h2->ttl_classes,
            (std::map<std::string, uint32_t>{{"computational", 1},
                                             {"none", 102},
                                             {"real-time", 36},
                                             {"static", 9}}));
}

}  // namespace
}  // namespace toolcache::classify
