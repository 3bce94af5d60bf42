// Replay throughput: the simulator's real request loop (sim::Replay over a
// PreparedTrace: COMMAND/invalidation bookkeeping, lookup, admission,
// eviction, metrics) per registry policy, on one thread. Prints, per
// policy, the median requests per CPU-second of the replay thread over
// several runs (and per wall-second), the ratio to LRU measured in the same
// run, and the hit ratio. bench_policy_throughput measures CacheCore alone;
// the difference between the two is the simulator's own overhead.
//
// Default workload (docs/SIM.md): 1,000,000 requests, Zipf(1.1) over
// 100,000 distinct keys (a seeded random ranking), unit sizes, no expiry,
// 20 tools, 4 users, one session, no COMMANDs, capacity 10% of the keys
// (bytes = entries). --sessions / --command-fraction spread the requests
// over sessions and turn a share of them into COMMANDs, which exercises the
// session-invalidation bookkeeping. The trace is built and prepared once
// (timed separately, not part of the rates).
//
// Usage: bench_replay_throughput [--runs N] [--requests N] [--keys N]
//          [--alpha A] [--capacity-fraction F] [--invalidation session|none]
//          [--sessions N] [--command-fraction F] [--policy NAME]...
// Run pinned to one core:  taskset -c 0 build/bench/bench_replay_throughput
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_util.h"
#include "src/sim/replay.h"
#include "toolcache/policy.h"
#include "toolcache/trace.h"

namespace toolcache {
namespace {

struct Options : bench::ZipfOptions {
  sim::InvalidationRule invalidation = sim::InvalidationRule::kSession;
  uint64_t sessions = 1;
  double command_fraction = 0;
  std::vector<std::string> policies;  // empty = every registry row
};

Trace MakeZipfTrace(const Options& o) {
  // Zipf ranks (bench_util.h); key ids follow a seeded random permutation
  // of the ranks.
  const bench::ZipfSampler zipf(o.keys, o.alpha);
  std::vector<uint64_t> key_of_rank(o.keys);
  for (uint64_t r = 0; r < o.keys; ++r) key_of_rank[r] = r;
  std::mt19937_64 rng(2024);
  std::shuffle(key_of_rank.begin(), key_of_rank.end(), rng);
  Trace t;
  t.name = "zipf-bench";
  t.records.resize(o.requests);
  for (uint64_t i = 0; i < o.requests; ++i) {
    const uint64_t rank = zipf.Next(rng);
    const uint64_t key = key_of_rank[rank];
    TraceRecord& r = t.records[i];
    r.time = static_cast<double>(i) * 0.001;
    if (o.sessions > 1) r.session = "s" + std::to_string(rng() % o.sessions);
    if (o.command_fraction > 0 && std::uniform_real_distribution<double>(
                                      0, 1)(rng) < o.command_fraction) {
      r.tool = "cd";
      r.arguments = "{}";
      r.result_size = 1;
      r.latency = 0.1;
      r.request_type = RequestType::kCommand;
      continue;
    }
    r.user = "u" + std::to_string(key % 4);
    r.tool = "tool" + std::to_string(key % 20);
    // Two parameters, so the replay derives a parameter category.
    r.arguments = "{\"cat\":" + std::to_string(key % 97) +
                  ",\"k\":" + std::to_string(key) + "}";
    r.result_size = 1;
    r.latency = 0.1 + static_cast<double>(key % 10) * 0.2;
    r.cost = 0.001 * static_cast<double>(key % 3);
    r.ttl = 1e9;  // no expiry within the trace
    r.request_type = RequestType::kInformational;
  }
  return t;
}

int Usage(const std::string& msg) {
  std::fprintf(stderr,
               "error: %s\nusage: bench_replay_throughput [--runs N] "
               "[--requests N] [--keys N] [--alpha A] "
               "[--capacity-fraction F] [--invalidation session|none] "
               "[--sessions N] [--command-fraction F] [--policy NAME]...\n",
               msg.c_str());
  return 2;
}

int Main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (i + 1 >= argc) return Usage("missing value after " + std::string(a));
    const char* v = argv[++i];
    char* end = nullptr;
    if (bench::ParseZipfFlag(a, v, o, &end)) {
      // parsed; checked below
    } else if (a == "--sessions") {
      o.sessions = std::strtoull(v, &end, 10);
    } else if (a == "--command-fraction") {
      o.command_fraction = std::strtod(v, &end);
    } else if (a == "--invalidation") {
      if (std::string_view(v) == "session") {
        o.invalidation = sim::InvalidationRule::kSession;
      } else if (std::string_view(v) == "none") {
        o.invalidation = sim::InvalidationRule::kNone;
      } else {
        return Usage("--invalidation must be session or none");
      }
      continue;
    } else if (a == "--policy") {
      if (FindPolicy(v) == nullptr) {
        return Usage("unknown policy " + std::string(v));
      }
      o.policies.emplace_back(v);
      continue;
    } else {
      return Usage("unknown flag " + std::string(a));
    }
    if (end == v || *end != '\0') {
      return Usage("bad number for " + std::string(a));
    }
  }
  if (!o.Valid() || o.sessions < 1) {
    return Usage(
        "runs, requests, keys, alpha, capacity-fraction, sessions must be > "
        "0");
  }
  if (!(o.command_fraction >= 0 && o.command_fraction < 1)) {
    return Usage("--command-fraction must be in [0, 1)");
  }
  const auto build_start = std::chrono::steady_clock::now();
  const Trace trace = MakeZipfTrace(o);
  Result<sim::PreparedTrace> prepared = sim::PrepareTrace(trace, {});
  if (!prepared.ok()) {
    std::fprintf(stderr, "%s\n", prepared.status().ToString().c_str());
    return 1;
  }
  const double build_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                    build_start)
          .count();
  const uint64_t capacity = std::max<uint64_t>(
      1,
      static_cast<uint64_t>(o.capacity_fraction * static_cast<double>(o.keys)));
  std::printf(
      "# sim::Replay: %llu requests, Zipf(%.2f) over %llu keys, unit sizes, "
      "no TTL expiry, capacity %llu entries, %llu session(s), %.1f%% "
      "COMMANDs, invalidation %s; median of %d runs (trace built + prepared "
      "in %.1f s, not timed)\n",
      static_cast<unsigned long long>(o.requests), o.alpha,
      static_cast<unsigned long long>(o.keys),
      static_cast<unsigned long long>(capacity),
      static_cast<unsigned long long>(o.sessions), 100 * o.command_fraction,
      o.invalidation == sim::InvalidationRule::kSession ? "session" : "none",
      o.runs, build_seconds);
  std::printf("%-14s %14s %7s %15s %9s\n", "policy", "requests/cpu_s", "vs_lru",
              "requests/wall_s", "hit_ratio");
  // LRU first: the in-run baseline of the ratio column.
  std::vector<const PolicyInfo*> rows;
  if (const PolicyInfo* lru = FindPolicy("lru")) rows.push_back(lru);
  for (const PolicyInfo& info : Policies()) {
    if (info.name == "lru") continue;
    if (!o.policies.empty() && std::find(o.policies.begin(), o.policies.end(),
                                         info.name) == o.policies.end()) {
      continue;
    }
    rows.push_back(&info);
  }
  double lru_rps = 0;
  for (const PolicyInfo* info : rows) {
    sim::ReplayOptions ro;
    ro.policy = std::string(info->name);
    ro.capacity_bytes = capacity;  // unbounded rows get unlimited in Replay
    ro.invalidation = o.invalidation;
    std::vector<double> cpu_rps, wall_rps;
    double hit_ratio = 0;
    for (int run = 0; run < o.runs; ++run) {
      const double cpu_start = bench::ThreadCpuSeconds();
      const auto start = std::chrono::steady_clock::now();
      Result<sim::ReplayMetrics> m = sim::Replay(*prepared, ro);
      const double cpu = bench::ThreadCpuSeconds() - cpu_start;
      const double wall = std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count();
      if (!m.ok()) {
        std::fprintf(stderr, "%s\n", m.status().ToString().c_str());
        return 1;
      }
      cpu_rps.push_back(static_cast<double>(o.requests) / cpu);
      wall_rps.push_back(static_cast<double>(o.requests) / wall);
      hit_ratio = m->HitRatio();
    }
    const double med = bench::Median(cpu_rps);
    if (info->name == "lru") lru_rps = med;
    std::printf("%-14.*s %14.0f %7.2f %15.0f %9.4f\n",
                static_cast<int>(info->name.size()), info->name.data(), med,
                lru_rps > 0 ? med / lru_rps : 0.0, bench::Median(wall_rps),
                hit_ratio);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace toolcache

int main(int argc, char** argv) { return toolcache::Main(argc, argv); }
