// ResultCache throughput: the sharded thread-safe front the proxies use,
// including the SHA-256 key digest (CacheKey::Id) every call pays.
//
// Workload: Zipf(1.1) over 100,000 distinct CacheKeys (realistic server /
// tool / canonical-args strings), 256-byte results, capacity for ~10% of the
// keys, policy lru (or --policy NAME). Each thread replays its own
// 1,000,000-request slice: Lookup, and Insert on a miss. Prints, per thread
// count, requests per CPU-second per thread and aggregate requests per
// wall-second (median of --runs), plus the cost of the digest alone.
//
// Usage: bench_result_cache_throughput [--runs N] [--threads N]
//          [--requests N] [--policy NAME] [--shards N]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/bench_util.h"
#include "toolcache/clock.h"
#include "toolcache/key.h"
#include "toolcache/result_cache.h"

namespace toolcache {
namespace {

std::vector<uint32_t> ZipfIndices(uint64_t n, uint64_t keys, double alpha,
                                  uint64_t seed) {
  const bench::ZipfSampler zipf(keys, alpha);
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> out(n);
  for (auto& x : out) x = static_cast<uint32_t>(zipf.Next(rng));
  return out;
}

int Usage(const std::string& msg) {
  std::fprintf(stderr,
               "error: %s\nusage: bench_result_cache_throughput [--runs N] "
               "[--threads N] [--requests N] [--policy NAME] [--shards N]\n",
               msg.c_str());
  return 2;
}

int Main(int argc, char** argv) {
  int runs = 5;
  int max_threads = 2;
  uint64_t requests = 1'000'000;
  uint32_t shards = 16;
  std::string policy = "lru";
  constexpr uint64_t kKeys = 100'000;
  constexpr uint64_t kResultBytes = 256;
  for (int i = 1; i < argc; i += 2) {
    const std::string_view a = argv[i];
    if (i + 1 >= argc) return Usage("missing value after " + std::string(a));
    const char* v = argv[i + 1];
    char* end = nullptr;
    if (a == "--policy") {
      policy = v;
      continue;
    }
    const long long n = std::strtoll(v, &end, 10);
    if (end == v || *end != '\0' || n < 1) {
      return Usage("bad value for " + std::string(a));
    }
    if (a == "--runs") {
      runs = static_cast<int>(n);
    } else if (a == "--threads") {
      max_threads = static_cast<int>(n);
    } else if (a == "--requests") {
      requests = static_cast<uint64_t>(n);
    } else if (a == "--shards") {
      shards = static_cast<uint32_t>(n);
    } else {
      return Usage("unknown flag " + std::string(a));
    }
  }

  std::vector<CacheKey> keys(kKeys);
  for (uint64_t i = 0; i < kKeys; ++i) {
    keys[i] = CacheKey{.scope = "",
                       .server = i % 3 ? "github" : "filesystem",
                       .tool = "tool_" + std::to_string(i % 40),
                       .canonical_args = R"({"path":"/repo/src/file_)" +
                                         std::to_string(i) + R"(.cc"})"};
  }
  // Accounted size = result + key bytes; budget ~10% of the keys.
  const uint64_t entry_bytes = kResultBytes + keys[0].server.size() +
                               keys[0].tool.size() +
                               keys[0].canonical_args.size();
  const uint64_t capacity = entry_bytes * kKeys / 10;

  // The digest alone.
  {
    std::vector<double> rates;
    for (int r = 0; r < runs; ++r) {
      uint64_t sink = 0;
      const double t0 = bench::ThreadCpuSeconds();
      for (const CacheKey& k : keys) sink += k.Id();
      const double dt = bench::ThreadCpuSeconds() - t0;
      rates.push_back(static_cast<double>(keys.size()) / dt);
      if (sink == 42) std::printf(" ");
    }
    std::printf("# CacheKey::Id (SHA-256): %.0f digests per CPU-second\n",
                bench::Median(rates));
  }
  std::printf(
      "# ResultCache, policy %s, %u shards, Zipf(1.1) over %llu keys, "
      "%llu-byte results, capacity %llu bytes (~10%% of keys), %llu "
      "requests per thread, median of %d runs\n",
      policy.c_str(), shards, static_cast<unsigned long long>(kKeys),
      static_cast<unsigned long long>(kResultBytes),
      static_cast<unsigned long long>(capacity),
      static_cast<unsigned long long>(requests), runs);
  std::printf("%8s %22s %22s %10s\n", "threads", "requests/cpu_s/thread",
              "requests/wall_s(total)", "hit_ratio");
  const std::string result(kResultBytes, 'r');
  for (int threads = 1; threads <= max_threads; ++threads) {
    std::vector<std::vector<uint32_t>> slices;
    for (int t = 0; t < threads; ++t) {
      slices.push_back(ZipfIndices(requests, kKeys, 1.1, 77 + t));
    }
    std::vector<double> cpu_rates, wall_rates, hit_ratios;
    for (int r = 0; r < runs; ++r) {
      ManualClock clock;
      ResultCacheOptions options{
          .capacity_bytes = capacity, .policy = policy, .num_shards = shards};
      auto cache = NewResultCache(options, &clock);
      if (!cache.ok()) return Usage(cache.status().ToString());
      std::vector<double> cpu(threads);
      std::vector<uint64_t> hits(threads);
      const auto start = std::chrono::steady_clock::now();
      std::vector<std::thread> pool;
      for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
          const double c0 = bench::ThreadCpuSeconds();
          for (uint32_t idx : slices[t]) {
            const CacheKey& key = keys[idx];
            if ((*cache)->Lookup(key, {}).hit()) {
              ++hits[t];
            } else {
              CachedValue v;
              v.result = result;
              (void)(*cache)->Insert(key, std::move(v), {.ttl_seconds = 3600});
            }
          }
          cpu[t] = bench::ThreadCpuSeconds() - c0;
        });
      }
      for (auto& th : pool) th.join();
      const double wall = std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count();
      double cpu_sum = 0;
      uint64_t hit_sum = 0;
      for (int t = 0; t < threads; ++t) {
        cpu_sum += cpu[t];
        hit_sum += hits[t];
      }
      const double total = static_cast<double>(requests) * threads;
      cpu_rates.push_back(total / cpu_sum);
      wall_rates.push_back(total / wall);
      hit_ratios.push_back(static_cast<double>(hit_sum) / total);
    }
    std::printf("%8d %22.0f %22.0f %10.4f\n", threads, bench::Median(cpu_rates),
                bench::Median(wall_rates), bench::Median(hit_ratios));
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace toolcache

int main(int argc, char** argv) { return toolcache::Main(argc, argv); }
