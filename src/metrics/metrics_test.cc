#include "src/metrics/metrics.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace toolcache::metrics {
namespace {

TEST(Metrics, RendersCountersAndHistogramsAsPrometheusText) {
  Registry r;
  auto& calls = r.Counters("tc_calls_total", "Calls", {"tool", "outcome"});
  calls.Get({"Read", "would_hit"})->Add(2);
  calls.Get({"Read", "miss"})->Add();
  calls.Get({"we\"ird\n", "miss"})->Add();
  auto& lat = r.Histograms("tc_seconds", "Latency", {"route"}, {0.001, 0.01});
  lat.Get({"a"})->Observe(0.0005);
  lat.Get({"a"})->Observe(0.005);
  lat.Get({"a"})->Observe(5);
  r.Gauge("tc_open", "Open", [] { return 3.0; });
  const std::string text = r.Prometheus();
  EXPECT_NE(text.find("# TYPE tc_calls_total counter"), std::string::npos);
  EXPECT_NE(text.find("tc_calls_total{tool=\"Read\",outcome=\"would_hit\"} 2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("tool=\"we\\\"ird\\n\""), std::string::npos) << text;
  EXPECT_NE(text.find("tc_seconds_bucket{route=\"a\",le=\"0.001\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("tc_seconds_bucket{route=\"a\",le=\"0.01\"} 2"),
            std::string::npos);
  EXPECT_NE(text.find("tc_seconds_bucket{route=\"a\",le=\"+Inf\"} 3"),
            std::string::npos);
  EXPECT_NE(text.find("tc_seconds_count{route=\"a\"} 3"), std::string::npos);
  EXPECT_NE(text.find("tc_open 3"), std::string::npos);
  nlohmann::json j = r.Json();
  EXPECT_EQ(j["tc_calls_total"]["series"].size(), 3u);
  EXPECT_EQ(j["tc_seconds"]["series"][0]["count"], 3);
}

TEST(Metrics, CapsTheNumberOfSeries) {
  Registry r(4);
  auto& f = r.Counters("c", "c", {"tool"});
  for (int i = 0; i < 100; ++i) f.Get({std::to_string(i)})->Add();
  int series = 0;
  uint64_t other = 0;
  f.ForEach([&](const std::vector<std::string>& v, const Counter& c) {
    ++series;
    if (v[0] == "_other") other = c.value();
  });
  EXPECT_EQ(series, 5);  // 4 named + _other
  EXPECT_EQ(other, 96u);
}

TEST(Metrics, HistogramQuantiles) {
  Histogram h({1, 2, 3, 4});
  for (int i = 0; i < 100; ++i) h.Observe(i < 50 ? 0.5 : 3.5);
  EXPECT_NEAR(h.Quantile(0.5), 1.0, 1e-9);
  EXPECT_GT(h.Quantile(0.9), 3.0);
  EXPECT_LE(h.Quantile(0.9), 4.0);
}

}  // namespace
}  // namespace toolcache::metrics
