// bench_store_latency: what each store adds to a ToolCache hit.
//
// Side by side in one run, in this process (no MCP pipes), 1 KiB results:
//   memory        the in-process cache alone (`store: memory`): baseline
//   <store> L1    a hit on this process's copy, checked against the store's
//                 invalidation counters (one store round trip)
//   <store> L2    a hit on a result another process stored (cache B reads
//                 what cache A stored: counters + value, one round trip)
// for the stores memory (shared, in-process), sqlite (a file in /tmp) and
// redis (a redis-server this benchmark starts on a free port). Each round
// measures every mode on --keys fresh keys; rounds alternate the modes so a
// load change on the machine hits them all. The table shows, per mode, the
// median over rounds of the round's p50 and p99 in microseconds and the p50
// added to the memory baseline.
//
// Usage: bench_store_latency [--keys N] [--rounds R]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "tests/support/redis_server.h"
#include "toolcache/classifier.h"
#include "toolcache/config.h"
#include "toolcache/store.h"
#include "toolcache/tool_cache.h"

namespace {

using toolcache::CallAction;
using toolcache::ToolCache;

struct Pct {
  double p50 = 0, p99 = 0;
};

std::unique_ptr<ToolCache> MakeCache(const toolcache::Clock* clock,
                                     toolcache::Store* store) {
  toolcache::Config config;
  config.capacity_bytes = uint64_t{1} << 30;
  auto made = toolcache::NewToolCache(config, clock, store);
  if (!made.ok()) {
    std::cerr << made.status().ToString() << "\n";
    std::exit(1);
  }
  toolcache::ToolInfo read{.name = "get_value",
                           .description = "Get a stored value"};
  read.annotations =
      toolcache::ToolAnnotations{.read_only = true, .open_world = false};
  std::vector<toolcache::ToolInfo> tools = {read};
  (*made)->LearnTools("bench", tools, true);
  return std::move(*made);
}

std::string Args(uint64_t key) {
  return R"({"key":)" + std::to_string(key) + "}";
}

const std::string& Body() {
  static const std::string body = R"({"content":[{"type":"text","text":")" +
                                  std::string(1000, 'x') + R"("}]})";
  return body;
}

// Stores keys [first, first + n) through `cache`.
void Fill(ToolCache& cache, uint64_t first, int n) {
  for (int i = 0; i < n; ++i) {
    const std::string args = Args(first + i);
    toolcache::CallPlan p = cache.Begin(
        {.server = "bench", .tool = "get_value", .arguments_json = args}, 1);
    if (p.action != CallAction::kForward ||
        !cache.Complete(p.ticket, {.result_json = Body()}).admitted) {
      std::cerr << "fill failed\n";
      std::exit(1);
    }
  }
}

// Times one hit per key of [first, first + n) through `cache`.
Pct TimeHits(ToolCache& cache, uint64_t first, int n) {
  std::vector<double> us;
  us.reserve(n);
  for (int i = 0; i < n; ++i) {
    const std::string args = Args(first + i);
    const auto t0 = std::chrono::steady_clock::now();
    toolcache::CallPlan p = cache.Begin(
        {.server = "bench", .tool = "get_value", .arguments_json = args}, 2);
    const auto t1 = std::chrono::steady_clock::now();
    if (p.action != CallAction::kServe) {
      std::cerr << "expected a hit, got a " << static_cast<int>(p.action)
                << " (" << p.bypass_reason << ")\n";
      std::exit(1);
    }
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us[us.size() * 99 / 100]};
}

}  // namespace

int main(int argc, char** argv) {
  int keys = 2000, rounds = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--keys") keys = std::atoi(argv[i + 1]);
    if (flag == "--rounds") rounds = std::atoi(argv[i + 1]);
  }
  if (keys < 10 || rounds < 1) {
    std::cerr << "usage: bench_store_latency [--keys N>=10] [--rounds R>=1]\n";
    return 2;
  }
  toolcache::testing::RedisServer redis;
  if (!redis.Start()) {
    std::cerr << redis.error() << "\n";
    return 1;
  }
  char tmpl[] = "/tmp/toolcache-bench-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  toolcache::SystemClock clock;
  std::map<std::string, std::unique_ptr<toolcache::Store>> stores;
  for (const auto& [name, spec] :
       std::vector<std::pair<std::string, std::string>>{
           {"memory-store", "memory?max_bytes=1GiB"},
           {"sqlite", "sqlite:" + dir + "/bench.db?max_bytes=1GiB"},
           {"redis", redis.Spec()}}) {
    auto s = toolcache::OpenStore(spec);
    if (!s.ok()) {
      std::cerr << spec << ": " << s.status().ToString() << "\n";
      return 1;
    }
    stores[name] = std::move(*s);
  }
  const std::vector<std::string> modes = {
      "memory",    "memory-store L1", "memory-store L2", "sqlite L1",
      "sqlite L2", "redis L1",        "redis L2"};
  std::map<std::string, std::vector<double>> p50, p99;
  uint64_t next = 0;
  for (int r = 0; r < rounds; ++r) {
    for (const std::string& mode : modes) {
      const uint64_t first = next;
      next += keys;
      const std::string store_name = mode.substr(0, mode.find(' '));
      toolcache::Store* store =
          mode == "memory" ? nullptr : stores[store_name].get();
      auto a = MakeCache(&clock, store);
      Fill(*a, first, keys);
      Pct pct;
      if (mode.ends_with("L2")) {
        auto b = MakeCache(&clock, store);  // "another process"
        pct = TimeHits(*b, first, keys);
      } else {
        pct = TimeHits(*a, first, keys);
      }
      p50[mode].push_back(pct.p50);
      p99[mode].push_back(pct.p99);
    }
    std::fprintf(stderr, "round %d/%d done\n", r + 1, rounds);
  }
  const double base = toolcache::bench::Median(p50["memory"]);
  std::printf(
      "hit latency, 1 KiB results, %d keys x %d rounds (median of "
      "per-round percentiles, us)\n",
      keys, rounds);
  std::printf("%-18s %10s %10s %14s\n", "mode", "p50", "p99", "p50 added");
  for (const std::string& mode : modes) {
    const double m50 = toolcache::bench::Median(p50[mode]);
    std::printf("%-18s %10.1f %10.1f %14.1f\n", mode.c_str(), m50,
                toolcache::bench::Median(p99[mode]), m50 - base);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
}
