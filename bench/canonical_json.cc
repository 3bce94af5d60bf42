// Canonical JSON and key digest throughput.
//
// Compares, on the same documents, the text path CanonicalizeJson, the value
// path (nlohmann::json::parse + CanonicalizeJsonValue, what a caller that
// must parse anyway pays) and a plain nlohmann parse + dump (not canonical:
// the baseline cost of touching the bytes), plus MakeCacheKey end to end.
// Documents are generated from a fixed seed.
//
//   bench_canonical_json --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
#include "toolcache/canonical_json.h"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "toolcache/key.h"

namespace toolcache {
namespace {

// A typical MCP tools/call arguments object (~150 bytes).
const std::string kSmall =
    R"({"query":"weather in Paris","units":"metric","days":3,)"
    R"("include":["hourly","alerts"],"_meta":{"progressToken":42},"lang":"fr"})";

// An object of `n` records with unsorted keys, nested objects, numbers,
// strings with escapes and non-ASCII text.
std::string MakeDoc(int n) {
  std::mt19937_64 rng(20260101);
  std::uniform_real_distribution<double> real(-1e6, 1e6);
  nlohmann::json items = nlohmann::json::array();
  for (int i = 0; i < n; ++i) {
    items.push_back(
        {{"zeta", real(rng)},
         {"id", static_cast<int64_t>(rng() % 1000000)},
         {"name", "caf\u00e9 \"" + std::to_string(i) + "\"\n"},
         {"tags", {"b", "a", "\xF0\x9F\x98\x82"}},
         {"nested", {{"y", nullptr}, {"x", true}, {"w", 0.1 * i}}}});
  }
  nlohmann::json doc = {{"records", items}, {"count", n}};
  return doc.dump(2);  // pretty-printed, members in nlohmann's byte order
}

const std::string& Doc(int64_t n) {
  static const std::string kMedium = MakeDoc(40);   // ~10 KB
  static const std::string kLarge = MakeDoc(4000);  // ~1 MB
  if (n == 0) return kSmall;
  return n == 1 ? kMedium : kLarge;
}

void BM_CanonicalizeText(benchmark::State& state) {
  const std::string& doc = Doc(state.range(0));
  for (auto _ : state) {
    Result<std::string> r = CanonicalizeJson(doc);
    if (!r.ok()) state.SkipWithError(r.status().message().c_str());
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(doc.size()));
}

void BM_NlohmannParseThenCanonicalizeValue(benchmark::State& state) {
  const std::string& doc = Doc(state.range(0));
  for (auto _ : state) {
    Result<std::string> r = CanonicalizeJsonValue(nlohmann::json::parse(doc));
    if (!r.ok()) state.SkipWithError(r.status().message().c_str());
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(doc.size()));
}

void BM_NlohmannParseDumpBaseline(benchmark::State& state) {
  const std::string& doc = Doc(state.range(0));
  for (auto _ : state) {
    std::string s = nlohmann::json::parse(doc).dump();
    benchmark::DoNotOptimize(s);
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(doc.size()));
}

void BM_MakeCacheKeyAndId(benchmark::State& state) {
  const std::string& doc = Doc(state.range(0));
  for (auto _ : state) {
    Result<CacheKey> k = MakeCacheKey("tenant", "weather", "get_forecast", doc);
    uint64_t id = k.ok() ? k->Id() : 0;
    benchmark::DoNotOptimize(id);
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(doc.size()));
}

void BM_DigestOfSmallKey(benchmark::State& state) {
  const CacheKey key{.scope = "tenant",
                     .server = "weather",
                     .tool = "get_forecast",
                     .canonical_args = *CanonicalizeJson(kSmall)};
  for (auto _ : state) {
    uint64_t id = key.Id();
    benchmark::DoNotOptimize(id);
  }
}
BENCHMARK(BM_DigestOfSmallKey);

// Arg: 0 = small (~150 B), 1 = medium (~10 KB), 2 = large (~1 MB).
BENCHMARK(BM_CanonicalizeText)->Arg(0)->Arg(1)->Arg(2);
BENCHMARK(BM_NlohmannParseThenCanonicalizeValue)->Arg(0)->Arg(1)->Arg(2);
BENCHMARK(BM_NlohmannParseDumpBaseline)->Arg(0)->Arg(1)->Arg(2);
BENCHMARK(BM_MakeCacheKeyAndId)->Arg(0)->Arg(1)->Arg(2);

}  // namespace
}  // namespace toolcache

BENCHMARK_MAIN();
