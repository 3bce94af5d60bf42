// bench_tool_cache_path: the ToolCache request path in-process (no faces,
// no pipes), to see what holding the cache's mutex costs when calls run
// concurrently.
//
//   hit        Begin of a stored call (served)
//   miss       Begin + Complete of a new call (forwarded, admitted)
// each with 1 and 2 threads calling the same cache; arguments are a
// 12-member object (~300 bytes), as a real tool call's. Each round runs
// every mode on --calls calls per thread; the table shows, per mode, the
// median over rounds of the throughput (calls/s over all threads) and of
// the mean time per call per thread. Public API only, so the same source
// builds against another tree's libraries for a side-by-side run.
//
// Usage: bench_tool_cache_path [--calls N] [--rounds R]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "toolcache/classifier.h"
#include "toolcache/clock.h"
#include "toolcache/config.h"
#include "toolcache/tool_cache.h"

namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string Args(uint64_t key) {
  std::string s = R"({"id":)" + std::to_string(key);
  for (int i = 0; i < 11; ++i) {
    s += ",\"field_" + std::to_string(i) + "\":\"value number " +
         std::to_string(i * 7919 % 1000) + " of the request\"";
  }
  return s + "}";
}

std::unique_ptr<toolcache::ToolCache> MakeCache(const toolcache::Clock* c) {
  toolcache::Config config;
  config.policy = "lru";
  config.capacity_bytes = 1ull << 32;
  auto made = toolcache::NewToolCache(config, c);
  if (!made.ok()) std::exit(1);
  toolcache::ToolInfo t;
  t.name = "get_value";
  t.annotations =
      toolcache::ToolAnnotations{.read_only = true, .open_world = false};
  (*made)->LearnTools("kv", std::span(&t, 1), /*replace=*/true);
  return std::move(*made);
}

// Runs `threads` threads, each doing `calls` calls of `mode`; returns the
// wall seconds.
double Run(toolcache::ToolCache& cache, const std::string& mode, int threads,
           int calls, uint64_t first_key) {
  std::vector<std::vector<std::string>> args(threads);
  for (int t = 0; t < threads; ++t) {
    for (int i = 0; i < calls; ++i) {
      const uint64_t key =
          mode == "hit" ? (t * 1000 + i % 1000) : first_key + t * calls + i;
      args[t].push_back(Args(key));
    }
  }
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      ++ready;
      while (!go.load()) {
      }
      uint64_t waiter = (static_cast<uint64_t>(t) << 40) + first_key;
      for (const std::string& a : args[t]) {
        toolcache::CallPlan p = cache.Begin(
            {.server = "kv", .tool = "get_value", .arguments_json = a},
            ++waiter);
        if (mode == "hit" && p.action != toolcache::CallAction::kServe) {
          std::fprintf(stderr, "expected a hit\n");
          std::exit(1);
        }
        if (p.action == toolcache::CallAction::kForward) {
          (void)cache.Complete(p.ticket, {.result_json = R"({"v":1})"});
        }
      }
    });
  }
  while (ready.load() < threads) {
  }
  const auto t0 = std::chrono::steady_clock::now();
  go = true;
  for (auto& w : workers) w.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 20000;
  int rounds = 5;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--calls" && i + 1 < argc) {
      calls = std::atoi(argv[++i]);
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: bench_tool_cache_path [--calls N] [--rounds R]\n");
      return 2;
    }
  }
  if (calls < 1000 || rounds < 1) {
    std::fprintf(stderr, "--calls must be >= 1000, --rounds >= 1\n");
    return 2;
  }
  toolcache::ManualClock clock(0);
  struct Mode {
    std::string name;
    int threads;
    std::vector<double> rate, us;
  };
  std::vector<Mode> modes = {{"hit", 1, {}, {}},
                             {"hit", 2, {}, {}},
                             {"miss", 1, {}, {}},
                             {"miss", 2, {}, {}}};
  uint64_t next_key = 1u << 20;
  for (int r = 0; r < rounds; ++r) {
    auto cache = MakeCache(&clock);
    (void)Run(*cache, "miss", 2, 1000, 0);  // store the hit keys 0..1999
    // keys t*1000 + (i % 1000) for t in {0, 1}: fill them explicitly.
    for (uint64_t k = 0; k < 2000; ++k) {
      toolcache::CallPlan p = cache->Begin(
          {.server = "kv", .tool = "get_value", .arguments_json = Args(k)},
          k + 1);
      if (p.action == toolcache::CallAction::kForward) {
        (void)cache->Complete(p.ticket, {.result_json = R"({"v":1})"});
      }
    }
    for (Mode& m : modes) {
      const double secs = Run(*cache, m.name, m.threads, calls, next_key);
      next_key += static_cast<uint64_t>(m.threads) * calls;
      const double total = static_cast<double>(calls) * m.threads;
      m.rate.push_back(total / secs);
      m.us.push_back(secs * 1e6 / calls);
    }
  }
  std::printf(
      "ToolCache request path: %d calls per thread per mode, median "
      "of %d rounds\n",
      calls, rounds);
  std::printf("%-6s %8s %14s %22s\n", "mode", "threads", "calls/s",
              "us per call per thread");
  for (const Mode& m : modes) {
    std::printf("%-6s %8d %14.0f %22.2f\n", m.name.c_str(), m.threads,
                Median(m.rate), Median(m.us));
  }
  return 0;
}
