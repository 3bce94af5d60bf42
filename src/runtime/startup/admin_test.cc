// EnginePrometheus renders one ToolCacheStats snapshot with the shared
// metric registry: every count appears under its documented series.
#include "src/runtime/startup/admin.h"

#include <gtest/gtest.h>

#include <string>

namespace toolcache::runtime {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(EnginePrometheus, EveryCounterUnderItsSeries) {
  ToolCacheStats s;
  s.hits = 3;
  s.misses = 2;
  s.coalesced = 1;
  s.bypasses["not_read_only"] = 4;
  s.bypasses["store_timeout"] = 1;
  s.store_errors["store_full"] = 6;
  s.admitted = 2;
  s.bytes_served = 1234;
  s.entries = 2;
  s.latency_saved_seconds = 0.5;
  const std::string t = "\n" + EnginePrometheus(s);
  EXPECT_TRUE(Has(t, "toolcache_engine_calls_total{outcome=\"hit\"} 3")) << t;
  EXPECT_TRUE(Has(t, "toolcache_engine_calls_total{outcome=\"miss\"} 2"));
  EXPECT_TRUE(Has(t, "toolcache_engine_calls_total{outcome=\"bypass\"} 5"));
  EXPECT_TRUE(
      Has(t, "toolcache_engine_bypasses_total{reason=\"not_read_only\"} 4"));
  EXPECT_TRUE(Has(t, "toolcache_store_errors_total{reason=\"store_full\"} 6"));
  EXPECT_TRUE(Has(t, "toolcache_engine_events_total{what=\"admitted\"} 2"));
  EXPECT_TRUE(Has(t, "toolcache_engine_bytes_served_total 1234"));
  EXPECT_TRUE(Has(t, "toolcache_cache_entries 2"));
  EXPECT_TRUE(Has(t, "toolcache_engine_saved_seconds 0.5"));
}

}  // namespace
}  // namespace toolcache::runtime
