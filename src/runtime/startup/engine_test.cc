// OpenEngine: the same start-up for every face; errors name their source.
#include "src/runtime/startup/engine.h"

#include <gtest/gtest.h>

#include <string>

namespace toolcache::runtime {
namespace {

TEST(OpenEngine, MemoryStoreIsTheCacheAlone) {
  Config config;
  SystemClock clock;
  Result<Engine> e = OpenEngine(config, &clock, {});
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->store, nullptr);
  ASSERT_NE(e->cache, nullptr);
}

TEST(OpenEngine, NoCacheOpensNothing) {
  Config config;
  SystemClock clock;
  Result<Engine> e =
      OpenEngine(config, &clock, {.store_flag = "bogus://", .no_cache = true});
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->store, nullptr);
  EXPECT_EQ(e->cache, nullptr);
}

TEST(OpenEngine, AStoreFlagOpensThatStoreAndItsErrorsNameTheFlag) {
  Config config;
  SystemClock clock;
  Result<Engine> ok =
      OpenEngine(config, &clock, {.store_flag = "memory?max_bytes=1MiB"});
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_NE(ok->store, nullptr);
  EXPECT_EQ(config.store, "memory?max_bytes=1MiB");
  Result<Engine> bad = OpenEngine(config, &clock, {.store_flag = "bogus://"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(bad.status().message()).rfind("--store: ", 0), 0u)
      << bad.status().message();
}

TEST(OpenEngine, AStoreFromTheFileNamesFileAndLine) {
  Config config;
  config.source = "c.yaml";
  config.store = "bogus://";
  config.store_line = 3;
  SystemClock clock;
  Result<Engine> bad = OpenEngine(config, &clock, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(std::string(bad.status().message()).rfind("c.yaml:3: ", 0), 0u)
      << bad.status().message();
}

TEST(OpenEngine, ABadCacheConfigurationIsRefused) {
  Config config;
  config.capacity_bytes = 0;
  SystemClock clock;
  Result<Engine> bad = OpenEngine(config, &clock, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("capacityBytes"),
            std::string::npos);
}

}  // namespace
}  // namespace toolcache::runtime
