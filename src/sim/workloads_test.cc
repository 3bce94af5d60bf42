#include "src/sim/workloads.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace toolcache::sim {
namespace {

std::string Key(const TraceRecord& r) { return r.tool + r.arguments; }

std::map<std::string, int> Counts(const Trace& t, size_t from = 0,
                                  size_t to = SIZE_MAX) {
  std::map<std::string, int> c;
  for (size_t i = from; i < std::min(to, t.records.size()); ++i) {
    if (t.records[i].request_type == RequestType::kInformational) {
      ++c[Key(t.records[i])];
    }
  }
  return c;
}

int MaxCount(const std::map<std::string, int>& c) {
  int m = 0;
  for (const auto& [k, v] : c) m = std::max(m, v);
  return m;
}

TEST(WorkloadsTest, SameSeedSameTraceDifferentSeedDifferentTrace) {
  WorkloadOptions a{.requests = 500, .seed = 3};
  WorkloadOptions b{.requests = 500, .seed = 4};
  for (WorkloadKind k : AllWorkloads()) {
    Trace t1 = GenerateWorkload(k, a);
    Trace t2 = GenerateWorkload(k, a);
    Trace t3 = GenerateWorkload(k, b);
    ASSERT_EQ(t1.records.size(), 500u);
    bool same = true, differs = false;
    for (size_t i = 0; i < 500; ++i) {
      same &= Key(t1.records[i]) == Key(t2.records[i]) &&
              t1.records[i].time == t2.records[i].time &&
              t1.records[i].result_size == t2.records[i].result_size;
      differs |= Key(t1.records[i]) != Key(t3.records[i]);
    }
    EXPECT_TRUE(same) << WorkloadName(k);
    EXPECT_TRUE(differs) << WorkloadName(k);
    EXPECT_EQ(t1.name, WorkloadName(k));
  }
}

TEST(WorkloadsTest, SixInformationalToolsAndOneCommandTool) {
  int informational = 0, command = 0;
  uint32_t keys = 0;
  for (const ToolModel& m : PaperTools()) {
    (m.type == RequestType::kInformational ? informational : command) += 1;
    keys += m.keys;
  }
  EXPECT_EQ(informational, 6);
  EXPECT_EQ(command, 1);
  EXPECT_EQ(keys, 600u);
}

TEST(WorkloadsTest, UniformUsesEveryToolAndAboutThreePercentCommands) {
  Trace t =
      GenerateWorkload(WorkloadKind::kUniform, {.requests = 10000, .seed = 1});
  std::set<std::string> tools;
  int commands = 0;
  for (const TraceRecord& r : t.records) {
    tools.insert(r.tool);
    if (r.request_type == RequestType::kCommand) {
      ++commands;
      EXPECT_EQ(r.tool, "send_message");
      EXPECT_EQ(r.ttl, 0);
    }
  }
  EXPECT_EQ(tools.size(), 7u);
  EXPECT_GT(commands, 200);
  EXPECT_LT(commands, 400);
}

TEST(WorkloadsTest, ZipfIsFarMoreSkewedThanUniform) {
  Trace z = GenerateWorkload(WorkloadKind::kZipf, {.requests = 1000});
  Trace u = GenerateWorkload(WorkloadKind::kUniform, {.requests = 1000});
  EXPECT_GT(MaxCount(Counts(z)), 5 * MaxCount(Counts(u)));
  EXPECT_LT(Counts(z).size(), Counts(u).size());
}

TEST(WorkloadsTest, HotspotMovesBetweenPhases) {
  Trace t =
      GenerateWorkload(WorkloadKind::kHotspot, {.requests = 1000, .seed = 2});
  // 5 phases of 200: the hottest key of phase 1 is not hot in phase 2.
  auto p1 = Counts(t, 0, 200), p2 = Counts(t, 200, 400);
  auto hottest = std::max_element(
      p1.begin(), p1.end(),
      [](const auto& a, const auto& b) { return a.second < b.second; });
  EXPECT_GE(hottest->second, 10);
  EXPECT_LT(p2[hottest->first], hottest->second / 2);
}

TEST(WorkloadsTest, MultiUserHasTenUsersOthersAnonymous) {
  Trace t = GenerateWorkload(WorkloadKind::kMultiUser, {.requests = 2000});
  std::set<std::string> users;
  for (const TraceRecord& r : t.records) users.insert(r.user);
  EXPECT_EQ(users.size(), 10u);
  EXPECT_FALSE(users.count(""));
  for (const TraceRecord& r :
       GenerateWorkload(WorkloadKind::kZipf, {.requests = 100}).records) {
    EXPECT_EQ(r.user, "");
  }
}

TEST(WorkloadsTest, TimeIncreasesAndSpansAboutTwoSecondsPerRequest) {
  Trace t = GenerateWorkload(WorkloadKind::kZipf, {.requests = 1000});
  for (size_t i = 1; i < t.records.size(); ++i) {
    EXPECT_GT(t.records[i].time, t.records[i - 1].time);
  }
  EXPECT_GT(t.records.back().time, 1600);
  EXPECT_LT(t.records.back().time, 2400);
}

TEST(WorkloadsTest, MultiParameterToolsPutTheCategoryFirst) {
  Trace t = GenerateWorkload(WorkloadKind::kUniform, {.requests = 2000});
  for (const TraceRecord& r : t.records) {
    if (r.tool == "web_search") {
      EXPECT_EQ(r.arguments.rfind("{\"category\":", 0), 0u) << r.arguments;
    }
    if (r.tool == "weather") {
      EXPECT_EQ(r.arguments.rfind("{\"city\":", 0), 0u) << r.arguments;
    }
  }
}

TEST(WorkloadsTest, ParseWorkloadNamesTheKnownOnes) {
  EXPECT_EQ(*ParseWorkload("hotspot"), WorkloadKind::kHotspot);
  Result<WorkloadKind> bad = ParseWorkload("zipfian");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("multiuser"), std::string::npos);
}

TEST(WorkloadsTest, KeysScaleMultipliesTheUniverseAndKeepsTheBaseKeys) {
  // Uniform over the universe with many requests: every key shows up.
  const WorkloadOptions base{
      .requests = 60000, .seed = 2, .command_fraction = 0};
  WorkloadOptions scaled = base;
  scaled.keys_scale = 5;
  const Trace t1 = GenerateWorkload(WorkloadKind::kUniform, base);
  const Trace t5 = GenerateWorkload(WorkloadKind::kUniform, scaled);
  std::set<std::string> k1, k5;
  for (const TraceRecord& r : t1.records) k1.insert(Key(r));
  for (const TraceRecord& r : t5.records) k5.insert(Key(r));
  EXPECT_EQ(k1.size(), 600u);
  EXPECT_EQ(k5.size(), 3000u);
  // The scale-1 keys are a subset of the scaled universe (same arguments).
  for (const std::string& k : k1) EXPECT_TRUE(k5.contains(k)) << k;
  // Scaled keys are valid canonical JSON in the same parameter categories.
  bool district = false, later_date = false;
  for (const std::string& k : k5) {
    district |= k.find(" district 4\"") != std::string::npos;
    later_date |= k.find("2025-06-30") != std::string::npos;
  }
  EXPECT_TRUE(district);
  EXPECT_TRUE(later_date);
  // Default scale: the trace is the one of keys_scale = 1 explicitly.
  WorkloadOptions one = base;
  one.keys_scale = 1;
  const Trace again = GenerateWorkload(WorkloadKind::kUniform, one);
  ASSERT_EQ(again.records.size(), t1.records.size());
  for (size_t i = 0; i < t1.records.size(); ++i) {
    ASSERT_EQ(Key(again.records[i]), Key(t1.records[i]));
  }
}

}  // namespace
}  // namespace toolcache::sim
