// The one feature builder: the simulator's historical parameter category
// bit for bit, argument order ignored, the operator's table for category
// and cost, TTL fallback.
#include "toolcache/request_features.h"

#include <gtest/gtest.h>

#include <string>

#include "toolcache/config.h"

namespace toolcache {
namespace {

// The simulator's formula before the builder existed (src/sim/replay.cc):
// StableHash(tool + '\x1f' + first key + '=' + first value dumped) | 1.
uint64_t SimulatorCategory(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  h += 0x9e3779b97f4a7c15ULL;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return (h ^ (h >> 31)) | 1;
}

TEST(RequestFeaturesTest, DefaultCategoryIsTheSimulatorsFirstArgument) {
  FeatureBuilder b{Config()};
  auto f = b.Build(
      {.tool = "weather", .arguments_json = R"({"day":1,"city":"Paris"})"});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->category, R"(city="Paris")");
  EXPECT_EQ(f->category_feature, SimulatorCategory("weather\x1f"
                                                   R"(city="Paris")"));
  // The caller's key order does not move a call to another group.
  auto g = b.Build(
      {.tool = "weather", .arguments_json = R"({"city":"Paris","day":1})"});
  EXPECT_EQ(g->category_feature, f->category_feature);
  // One argument: no category (every group would be one object).
  EXPECT_EQ(b.Build({.tool = "weather", .arguments_json = R"({"city":"x"})"})
                ->category_feature,
            0u);
  EXPECT_FALSE(b.Build({.tool = "weather", .arguments_json = "[1]"}).ok());
  EXPECT_FALSE(b.Build({.tool = "weather", .arguments_json = "{"}).ok());
}

TEST(RequestFeaturesTest, TheOperatorsToolTableSetsCategoryAndCost) {
  Result<Config> c = ParseConfig(R"(
tools:
  weather: {parameterCategory: day, cost: 0.02}
  search: {parameterCategory: ""}
servers:
  paid:
    tools:
      weather: {cost: 0.5}
)",
                                 "t.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  FeatureBuilder b(*c);
  const char* args = R"({"day":3,"city":"Oslo"})";
  auto f =
      b.Build({.server = "free", .tool = "weather", .arguments_json = args});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->category, "day=3");
  EXPECT_EQ(f->cost, 0.02);
  auto paid =
      b.Build({.server = "paid", .tool = "weather", .arguments_json = args});
  EXPECT_EQ(paid->cost, 0.5) << "the server's table first";
  EXPECT_EQ(paid->category, "day=3") << "then the global one";
  EXPECT_EQ(b.Build({.tool = "search", .arguments_json = args})->category, "")
      << "an explicit \"\" means no category";
  // A measured cost (a trace record) wins over the table.
  EXPECT_EQ(
      b.Build({.tool = "weather", .arguments_json = args, .observed_cost = 0.1})
          ->cost,
      0.1);
  EXPECT_EQ(b.Build({.tool = "other", .arguments_json = "{}"})->cost, 0);
}

TEST(RequestFeaturesTest, TtlIsTheCallsOrTheConfigured) {
  Config c;
  c.ttl_seconds = 123;
  FeatureBuilder b(c);
  EXPECT_EQ(b.Build({.tool = "t", .arguments_json = "{}"})->ttl_seconds, 123);
  EXPECT_EQ(b.Build({.tool = "t", .arguments_json = "{}", .ttl_seconds = 7})
                ->ttl_seconds,
            7);
}

TEST(RequestFeaturesTest, CostMustBeANonNegativeNumberInTheConfig) {
  EXPECT_FALSE(ParseConfig("tools:\n  t: {cost: -1}\n", "c.yaml").ok());
  EXPECT_FALSE(ParseConfig("tools:\n  t: {cost: cheap}\n", "c.yaml").ok());
  Result<Config> store = ParseConfig("store: sqlite:/tmp/x.db\n", "c.yaml");
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(store->store, "sqlite:/tmp/x.db");
  EXPECT_EQ(store->store_line, 1);
  EXPECT_EQ(Config().store, "memory");
}

}  // namespace
}  // namespace toolcache
