#include "src/sim/report.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "src/sim/progress.h"

namespace toolcache::sim {
namespace {

RunRecord Rec(std::string policy, double size, uint64_t seed, uint64_t hits) {
  RunRecord r;
  r.workload = "zipf";
  r.policy = std::move(policy);
  r.cache_size_pct = size;
  r.seed = seed;
  r.metrics.requests = 100;
  r.metrics.hits = hits;
  r.metrics.misses = 100 - hits;
  r.metrics.total_bytes = 1000;
  r.metrics.hit_bytes = 10 * hits;
  r.metrics.total_latency = 100.0 - hits;
  r.metrics.total_size = 1000 - 10 * hits;
  r.metrics.total_cost = 0.5;
  return r;
}

TEST(ReportTest, JsonLineHasEveryFieldWithItsType) {
  nlohmann::json j = nlohmann::json::parse(RecordToJson(Rec("lru", 10, 3, 25)));
  EXPECT_EQ(j["workload"], "zipf");
  EXPECT_EQ(j["policy"], "lru");
  EXPECT_TRUE(j["cache_size_pct"].is_number());
  EXPECT_EQ(j["seed"], 3);
  EXPECT_DOUBLE_EQ(j["hit_ratio"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(j["byte_hit_ratio"].get<double>(), 0.25);
  for (const char* f : {"total_latency", "total_cost"}) {
    EXPECT_TRUE(j[f].is_number_float()) << f;
  }
  for (const char* f : {"total_size", "admissions", "evictions",
                        "expired_misses", "command_served"}) {
    EXPECT_TRUE(j[f].is_number_unsigned()) << f;
  }
  EXPECT_FALSE(j.contains("stale_served"));  // synthetic, no optimum
  RunRecord t = Rec("lru", 10, 1, 5);
  t.from_trace = true;
  t.saved_cost_fraction_of_opt = 0.5;
  nlohmann::json jt = nlohmann::json::parse(RecordToJson(t));
  EXPECT_TRUE(jt["saved_latency_fraction_of_opt"].is_null());
  EXPECT_DOUBLE_EQ(jt["saved_cost_fraction_of_opt"].get<double>(), 0.5);
  EXPECT_TRUE(jt["stale_served"].is_number_unsigned());
}

TEST(ReportTest, SummarizeGivesMeanAndSampleStddev) {
  std::vector<RunRecord> runs = {Rec("lru", 10, 1, 10), Rec("lru", 10, 2, 20),
                                 Rec("lru", 10, 3, 30), Rec("vaac", 10, 1, 90)};
  Stat s = Summarize(runs, "zipf", "lru", 10, [](const RunRecord& r) {
    return 100 * r.metrics.HitRatio();
  });
  EXPECT_EQ(s.n, 3u);
  EXPECT_DOUBLE_EQ(s.mean, 20);
  EXPECT_NEAR(s.sd, 10, 1e-9);
}

TEST(ReportTest, TablesShowMeansAndTheFocusPolicysMargins) {
  std::vector<RunRecord> runs = {Rec("lru", 10, 1, 10), Rec("vaac", 10, 1, 15),
                                 Rec("lru", 50, 1, 40), Rec("vaac", 50, 1, 41)};
  std::string t = HitRatioTable(runs);
  EXPECT_NE(t.find("10.0 +- 0.0"), std::string::npos) << t;
  EXPECT_NE(t.find("vaac-lru"), std::string::npos) << t;
  EXPECT_NE(t.find("best +5.0 pp"), std::string::npos) << t;
  std::string c = CostTable(runs, "zipf");
  EXPECT_NE(c.find("total latency (s)"), std::string::npos);
  EXPECT_NE(c.find("-5.6%"), std::string::npos) << c;  // 85 vs 90
  EXPECT_EQ(CostTable(runs, "hotspot"), "");
  std::string u = UserGroupingTable(runs, "zipf", "vaac", "lru");
  EXPECT_NE(u.find("+50.0%"), std::string::npos) << u;  // 15 vs 10 hits
  EXPECT_NE(SafetyLine(runs).find("command_served=0"), std::string::npos);
}

TEST(ReportTest, JsonAndTablesSayWhetherTheOptimumIsExactOrABound) {
  RunRecord t = Rec("lru", 10, 1, 5);
  t.from_trace = true;
  nlohmann::json unsolved = nlohmann::json::parse(RecordToJson(t));
  EXPECT_TRUE(unsolved["optimum_method"].is_null());
  EXPECT_TRUE(unsolved["optimum_exact"].is_null());
  t.saved_latency_fraction_of_opt = 0.5;
  t.optimum_method = "lp-relaxation (3 run rows dropped)";
  t.optimum_cost_method = "all-intervals-fit";
  t.optimum_exact = false;
  nlohmann::json j = nlohmann::json::parse(RecordToJson(t));
  EXPECT_EQ(j["optimum_method"], "lp-relaxation (3 run rows dropped)");
  EXPECT_EQ(j["optimum_cost_method"], "all-intervals-fit");
  EXPECT_EQ(j["optimum_exact"], false);
  EXPECT_EQ(OptimumLabel(t), "lp-bound");
  const std::string traces = TraceTable(std::vector<RunRecord>{t});
  EXPECT_NE(traces.find("lp-bound"), std::string::npos) << traces;
  EXPECT_NE(traces.find("0.500"), std::string::npos) << traces;
  t.optimum_method = "ilp";
  t.optimum_exact = true;
  EXPECT_EQ(OptimumLabel(t), "exact");
  t.optimum_method = "ilp bound (time limit)";
  t.optimum_exact = false;
  EXPECT_EQ(OptimumLabel(t), "ilp-bound");
}

TEST(ReportTest, DetailsTableHasEveryMetricAndEntryUnits) {
  std::vector<RunRecord> runs = {Rec("lru", 10, 1, 10), Rec("lru", 10, 2, 20)};
  runs[0].metrics.admissions = 7;
  runs[1].metrics.admissions = 8;
  runs[0].metrics.expired_misses = 3;
  std::string d = DetailsTable(runs);
  for (const char* col : {"hit%", "bhit%", "latency_s", "size_KB", "cost_usd",
                          "admit", "evict", "expired", "cmd_srv"}) {
    EXPECT_NE(d.find(col), std::string::npos) << col << "\n" << d;
  }
  EXPECT_NE(d.find("7.5"), std::string::npos) << d;  // mean admissions
  EXPECT_EQ(d.find("lat/opt"), std::string::npos);   // no optimum solved
  EXPECT_NE(d.find("unique cacheable bytes"), std::string::npos);
  for (RunRecord& r : runs) r.capacity_entries = 5;
  EXPECT_NE(DetailsTable(runs).find("unique cacheable entries"),
            std::string::npos);
  EXPECT_NE(HitRatioTable(runs).find("unique cacheable entries"),
            std::string::npos);
  EXPECT_EQ(OptimumTable(runs), "");  // synthetic without --optimum
  for (RunRecord& r : runs) {
    r.optimum_method = "ilp";
    r.optimum_exact = true;
    r.saved_latency_fraction_of_opt = 0.8;
    r.saved_cost_fraction_of_opt = 0.6;
  }
  const std::string o = OptimumTable(runs);
  EXPECT_NE(o.find("0.80 / 0.60"), std::string::npos) << o;
  EXPECT_NE(DetailsTable(runs).find("lat/opt"), std::string::npos);
}

TEST(ReportTest, PlotsDrawOnlyFiguresWithDataAndDropStaleOnes) {
  const std::string dir = ::testing::TempDir() + "/toolcache_plots";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  // A free trace-like workload with an optimum: no cost panel anywhere.
  std::vector<RunRecord> runs = {Rec("lru", 10, 1, 20), Rec("vaac", 10, 1, 30),
                                 Rec("lru", 50, 1, 40), Rec("vaac", 50, 1, 45)};
  for (RunRecord& r : runs) {
    r.workload = "movie";
    r.metrics.total_cost = 0;
    r.saved_latency_fraction_of_opt = 0.5;
  }
  ASSERT_TRUE(WritePlots(runs, dir).ok());
  std::ifstream gp_file(dir + "/plots.gp");
  std::stringstream gp;
  gp << gp_file.rdbuf();
  EXPECT_NE(gp.str().find("movie: total latency (s)"), std::string::npos);
  EXPECT_EQ(gp.str().find("movie: total cost (USD)"), std::string::npos);
  EXPECT_NE(gp.str().find("movie: saved latency / optimum"), std::string::npos);
  EXPECT_EQ(gp.str().find("saved cost / optimum"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir + "/optimum.png"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/fig4.png"));  // no zipf
  // The same directory without an optimum: the old optimum.png goes.
  for (RunRecord& r : runs) r.saved_latency_fraction_of_opt.reset();
  ASSERT_TRUE(WritePlots(runs, dir).ok());
  EXPECT_FALSE(std::filesystem::exists(dir + "/optimum.png"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/fig3.png"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/paid.png"));
  std::filesystem::remove_all(dir);
}

TEST(ReportTest, FlatPanelsGetAPaddedRangeInsteadOfAnEmptyOne) {
  const std::string dir = ::testing::TempDir() + "/toolcache_flat_plots";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  // "bfcl": no hit anywhere (flat 0 % hit ratio, flat latency 100 s);
  // "zipf": varies.
  std::vector<RunRecord> runs = {Rec("lru", 10, 1, 0), Rec("lru", 50, 1, 0),
                                 Rec("lru", 10, 1, 20), Rec("lru", 50, 1, 40)};
  runs[0].workload = runs[1].workload = "bfcl";
  ASSERT_TRUE(WritePlots(runs, dir).ok());
  std::ifstream gp_file(dir + "/plots.gp");
  std::stringstream gp;
  gp << gp_file.rdbuf();
  const std::string s = gp.str();
  // The range set right before each panel's title.
  auto range_of = [&](const std::string& title) {
    size_t t = s.find("set title '" + title + "'");
    EXPECT_NE(t, std::string::npos) << title;
    size_t r = s.find("set yrange ", t);
    return s.substr(r + 11, s.find('\n', r) - r - 11);
  };
  EXPECT_EQ(range_of("bfcl"), "[0:1]");  // hit ratio 0 %: never negative
  EXPECT_EQ(range_of("bfcl: total latency (s)"), "[90:110]");
  EXPECT_EQ(range_of("bfcl: total cost (USD)"), "[0.45:0.55]");
  EXPECT_EQ(range_of("zipf"), "[*:*]");
  EXPECT_EQ(range_of("zipf: total latency (s)"), "[*:*]");
  std::filesystem::remove_all(dir);
}

TEST(ProgressBarTest, RendersAndStaysQuietForShortRuns) {
  EXPECT_EQ(ProgressBar::Render(5, 10, 10, "x"), "[#####-----]  50% 5/10 x");
  std::ostringstream quiet;
  {
    ProgressBar bar(quiet, "sim", true, /*delay_seconds=*/3600);
    bar.Update(1, 2);
    EXPECT_FALSE(bar.drawn());
  }
  EXPECT_EQ(quiet.str(), "");
  std::ostringstream off;
  ProgressBar disabled(off, "sim", false, 0);
  disabled.Update(1, 2);
  EXPECT_EQ(off.str(), "");
  std::ostringstream out;
  ProgressBar bar(out, "sim", true, 0);
  bar.Update(2, 2);
  EXPECT_TRUE(bar.drawn());
  bar.Finish();
  EXPECT_NE(out.str().find("100% 2/2 sim"), std::string::npos);
  EXPECT_EQ(out.str().back(), 'K');  // cleared with \r ESC [K
}

}  // namespace
}  // namespace toolcache::sim
