// The one stats shape: every key of kCacheStatsKeys, in order, with the
// engine's values; face members beside "cache"; no engine, no "cache".
#include "src/runtime/stats.h"

#include <gtest/gtest.h>

namespace toolcache::runtime {
namespace {

TEST(StatsSnapshot, CacheHasEveryKeyInOrderWithTheEngineValues) {
  ToolCacheStats s;
  s.calls = 7;
  s.hits = 3;
  s.would_hits = 2;
  s.entries = 4;
  s.bypasses["not_read_only"] = 2;
  s.bypasses["store_unavailable"] = 1;
  s.store_errors["store_unavailable"] = 5;
  s.latency_saved_seconds = 1.25;
  s.bytes_served = 99;
  StatsSnapshot snap("mcp", &s);
  snap.face_fields["session"] = {{"clientParseErrors", 1}};
  snap.face_fields["face"] = "overwritten?";
  auto j = nlohmann::ordered_json::parse(SerializeStats(snap));
  EXPECT_EQ(j["face"], "mcp");
  ASSERT_TRUE(j.contains("cache"));
  std::vector<std::string> keys;
  for (const auto& [k, v] : j["cache"].items()) keys.push_back(k);
  ASSERT_EQ(keys.size(), std::size(kCacheStatsKeys));
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(keys[i], kCacheStatsKeys[i]);
  }
  EXPECT_EQ(j["cache"]["calls"], 7);
  EXPECT_EQ(j["cache"]["hits"], 3);
  EXPECT_EQ(j["cache"]["wouldHits"], 2);
  EXPECT_EQ(j["cache"]["entries"], 4);
  EXPECT_EQ(j["cache"]["bypasses"], 3);
  EXPECT_EQ(j["cache"]["bypassesByReason"]["not_read_only"], 2);
  EXPECT_EQ(j["cache"]["storeErrors"]["store_unavailable"], 5);
  EXPECT_DOUBLE_EQ(j["cache"]["savedSeconds"].get<double>(), 1.25);
  EXPECT_EQ(j["cache"]["bytesServed"], 99);
  EXPECT_EQ(j["session"]["clientParseErrors"], 1);
}

TEST(StatsSnapshot, NoEngineNoCacheMember) {
  StatsSnapshot snap("proxy", nullptr);
  snap.face_fields["inFlight"] = 0;
  auto j = nlohmann::ordered_json::parse(SerializeStats(snap));
  EXPECT_FALSE(j.contains("cache"));
  EXPECT_EQ(j["face"], "proxy");
  EXPECT_EQ(j["inFlight"], 0);
}

TEST(StatsSnapshot, InvalidUtf8InAReasonIsReplacedNotThrown) {
  ToolCacheStats s;
  s.bypasses[std::string("bad\xff")] = 1;
  StatsSnapshot snap("serve", &s);
  std::string out;
  EXPECT_NO_THROW(out = SerializeStats(snap));
  EXPECT_TRUE(nlohmann::json::accept(out));
}

}  // namespace
}  // namespace toolcache::runtime
