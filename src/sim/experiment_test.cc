#include "src/sim/experiment.h"

#include <gtest/gtest.h>

#include <atomic>

#include "src/sim/report.h"

namespace toolcache::sim {
namespace {

ExperimentSpec SmallSpec(uint32_t jobs) {
  ExperimentSpec spec;
  spec.workloads = {WorkloadKind::kZipf, WorkloadKind::kMultiUser};
  for (const PolicyInfo& info : Policies()) {
    if (info.kind == PolicyKind::kOnline) {
      spec.policies.push_back(
          {std::string(info.name), std::string(info.name), {}});
    }
  }
  spec.sizes_pct = {10, 50};
  spec.seeds = 3;
  spec.workload_options.requests = 400;
  spec.jobs = jobs;
  return spec;
}

std::vector<std::string> Lines(const std::vector<RunRecord>& runs) {
  std::vector<std::string> v;
  for (const RunRecord& r : runs) v.push_back(RecordToJson(r));
  return v;
}

TEST(ExperimentTest, ResultsDoNotDependOnTheNumberOfThreads) {
  Result<std::vector<RunRecord>> one = RunExperiment(SmallSpec(1));
  Result<std::vector<RunRecord>> four = RunExperiment(SmallSpec(4));
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  ASSERT_TRUE(four.ok());
  EXPECT_EQ(Lines(*one), Lines(*four));
}

TEST(ExperimentTest, OneRecordPerCellInWorkloadPolicySizeSeedOrder) {
  ExperimentSpec spec = SmallSpec(2);
  std::atomic<uint64_t> calls{0};
  uint64_t last_total = 0;
  spec.progress = [&](uint64_t, uint64_t total) {
    ++calls;
    last_total = total;
  };
  Result<std::vector<RunRecord>> runs = RunExperiment(spec);
  ASSERT_TRUE(runs.ok());
  const size_t n = 2 * spec.policies.size() * 2 * 3;
  ASSERT_EQ(runs->size(), n);
  EXPECT_EQ(calls.load(), n);
  EXPECT_EQ(last_total, n);
  const RunRecord& a = (*runs)[0];
  const RunRecord& b = (*runs)[1];
  const RunRecord& c = (*runs)[3];
  EXPECT_EQ(a.workload, "zipf");
  EXPECT_EQ(a.seed, 1u);
  EXPECT_EQ(b.seed, 2u);
  EXPECT_EQ(b.cache_size_pct, 10);
  EXPECT_EQ(c.cache_size_pct, 50);
  EXPECT_EQ(runs->back().workload, "multiuser");
  // A bigger cache never holds fewer bytes, and the same seed means the same
  // unique objects for every policy.
  EXPECT_GT(c.capacity_bytes, a.capacity_bytes);
  EXPECT_EQ(a.unique_objects, (*runs)[6].unique_objects);
}

TEST(ExperimentTest, TracesAreReplayedOnceWithSessionInvalidation) {
  ExperimentSpec spec;
  spec.policies = {{"lru", "lru", {}}};
  spec.sizes_pct = {100};
  Trace t;
  t.name = "tiny";
  for (int i = 0; i < 3; ++i) {
    TraceRecord r;
    r.time = i;
    r.tool = i == 1 ? "cd" : "ls";
    r.arguments = "{}";
    r.result_size = 10;
    r.ttl = 3600;
    r.request_type =
        i == 1 ? RequestType::kCommand : RequestType::kInformational;
    t.records.push_back(r);
  }
  spec.traces = {t};
  Result<std::vector<RunRecord>> runs = RunExperiment(spec);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_TRUE((*runs)[0].from_trace);
  EXPECT_EQ((*runs)[0].metrics.hits, 0u);  // cd invalidated the ls result
  EXPECT_EQ((*runs)[0].metrics.invalidations, 1u);
}

TEST(ExperimentTest, RejectsBadSpecsWithAClearMessage) {
  ExperimentSpec spec = SmallSpec(1);
  spec.sizes_pct = {0};
  Result<std::vector<RunRecord>> r = RunExperiment(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("outside"), std::string::npos);
  spec = SmallSpec(1);
  spec.policies = {{"x", "no-such-policy", {}}};
  r = RunExperiment(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("lru"), std::string::npos);
  spec = SmallSpec(1);
  spec.policies = {{"lru", "lru", {{"no_such_knob", 1}}}};
  EXPECT_FALSE(RunExperiment(spec).ok());
}

TEST(ExperimentTest, ParallelForReportsTheLowestFailingIndex) {
  for (uint32_t jobs : {1u, 3u}) {
    std::atomic<int> ran{0};
    Status s = ParallelFor(100, jobs, [&](uint64_t i) -> Status {
      ++ran;
      if (i == 17 || i == 40) return Internal("bad " + std::to_string(i));
      return Status::Ok();
    });
    EXPECT_EQ(s.message(), "bad 17");
    EXPECT_GE(ran.load(), 18);
  }
  std::atomic<int> ran{0};
  EXPECT_TRUE(ParallelFor(10, 0, [&](uint64_t) {
                ++ran;
                return Status::Ok();
              }).ok());
  EXPECT_EQ(ran.load(), 10);
}

}  // namespace
}  // namespace toolcache::sim
