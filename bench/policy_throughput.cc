// Policy throughput: replays a Zipf(alpha) trace through CacheCore + every
// registry policy on one thread and prints, per policy, the median
// requests per CPU-second of the replay thread over several runs (and per
// wall-second), the ratio to LRU, the hit ratio and the metadata bytes per
// cached entry: the core's structures (entry table, index, expiry heap, free
// list; allocated capacity / entries at the end) + the policy's own.
//
// Default workload (the "beyond the paper" issue): 1,000,000 requests,
// Zipf(1.1) over 100,000 distinct keys, unit sizes, no TTL, fixed seed,
// capacity 10% of the keys. Trace generation is not timed.
//
// Usage: bench_policy_throughput [--runs N] [--requests N] [--keys N]
//          [--alpha A] [--capacity-fraction F] [--policy NAME]...
// Run pinned to one core:  taskset -c 0 build/bench/bench_policy_throughput
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "bench/bench_util.h"
#include "toolcache/policy.h"

namespace toolcache {
namespace {

struct Options : bench::ZipfOptions {
  std::vector<std::string> policies;  // empty = all rows
};

uint64_t SplitMix(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::vector<Request> MakeZipfTrace(const Options& o) {
  const bench::ZipfSampler zipf(o.keys, o.alpha);
  // Random 64-bit ids (like key digests), fixed per rank.
  std::vector<ObjectId> ids(o.keys);
  uint64_t s = 12345;
  for (auto& id : ids) id = SplitMix(s);
  std::mt19937_64 rng(2024);
  std::vector<Request> trace(o.requests);
  for (uint64_t i = 0; i < o.requests; ++i) {
    const uint64_t rank = zipf.Next(rng);
    Request& r = trace[i];
    r.id = ids[rank];
    r.tool = static_cast<uint32_t>(rank % 20);
    r.param_category = 1 + rank % 97;
    r.user = static_cast<uint32_t>(rank % 4);
    r.size = 1;
    r.latency = 0.1 + static_cast<double>(rank % 10) * 0.2;
    r.cost = 0.001 * static_cast<double>(rank % 3);
    r.ttl = kNoExpiry;
    r.now = static_cast<double>(i) * 0.001;
    r.index = i;
  }
  std::unordered_map<ObjectId, uint64_t> next;
  next.reserve(o.keys * 2);
  for (uint64_t i = o.requests; i-- > 0;) {
    const auto it = next.find(trace[i].id);
    trace[i].next_access = it == next.end() ? kNoNextAccess : it->second;
    next[trace[i].id] = i;
  }
  return trace;
}

struct RunResult {
  double requests_per_second = 0;  // per CPU-second of the replay thread
  double wall_requests_per_second = 0;
  double hit_ratio = 0;
  double core_bytes_per_entry = 0;    // CacheCore's structures
  double policy_bytes_per_entry = 0;  // Policy::MetadataBytes()
};

RunResult RunOnce(const PolicyInfo& info, const std::vector<Request>& trace,
                  uint64_t capacity) {
  PolicyParams params{.capacity_bytes = capacity, .seed = 1};
  auto policy = MakePolicy(info.name, params);
  if (!policy.ok()) {
    std::fprintf(stderr, "%s\n", policy.status().ToString().c_str());
    std::exit(1);
  }
  CacheCore core({.capacity_bytes = capacity}, std::move(*policy));
  uint64_t hits = 0;
  const double cpu_start = bench::ThreadCpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  for (const Request& r : trace) {
    if (core.Lookup(r) == LookupOutcome::kHit) {
      ++hits;
    } else {
      (void)core.Insert(r);
    }
  }
  const double cpu = bench::ThreadCpuSeconds() - cpu_start;
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  RunResult out;
  out.requests_per_second = static_cast<double>(trace.size()) / cpu;
  out.wall_requests_per_second = static_cast<double>(trace.size()) / wall;
  out.hit_ratio = static_cast<double>(hits) / static_cast<double>(trace.size());
  const uint64_t entries = std::max<uint64_t>(1, core.view().entry_count());
  out.core_bytes_per_entry =
      static_cast<double>(core.MetadataBytes()) / static_cast<double>(entries);
  out.policy_bytes_per_entry =
      static_cast<double>(core.policy().MetadataBytes());
  return out;
}

int Usage(const char* msg) {
  std::fprintf(stderr,
               "error: %s\nusage: bench_policy_throughput [--runs N] "
               "[--requests N] [--keys N] [--alpha A] "
               "[--capacity-fraction F] [--policy NAME]...\n",
               msg);
  return 2;
}

int Main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (i + 1 >= argc)
      return Usage(("missing value after " + std::string(a)).c_str());
    const char* v = argv[++i];
    char* end = nullptr;
    if (bench::ParseZipfFlag(a, v, o, &end)) {
      // parsed; checked below
    } else if (a == "--policy") {
      if (FindPolicy(v) == nullptr) {
        return Usage(("unknown policy " + std::string(v)).c_str());
      }
      o.policies.emplace_back(v);
      continue;
    } else {
      return Usage(("unknown flag " + std::string(a)).c_str());
    }
    if (end == v || *end != '\0') {
      return Usage(("bad number for " + std::string(a)).c_str());
    }
  }
  if (!o.Valid()) {
    return Usage("runs, requests, keys, alpha, capacity-fraction must be > 0");
  }
  const std::vector<Request> trace = MakeZipfTrace(o);
  const uint64_t capacity = std::max<uint64_t>(
      1,
      static_cast<uint64_t>(o.capacity_fraction * static_cast<double>(o.keys)));
  std::printf(
      "# %llu requests, Zipf(%.2f) over %llu keys, unit sizes, no TTL, "
      "capacity %llu entries; median of %d runs\n",
      static_cast<unsigned long long>(o.requests), o.alpha,
      static_cast<unsigned long long>(o.keys),
      static_cast<unsigned long long>(capacity), o.runs);
  std::printf("%-14s %14s %7s %15s %9s %7s %9s %7s\n", "policy",
              "requests/cpu_s", "vs_lru", "requests/wall_s", "hit_ratio",
              "core_B", "policy_B", "meta_B");
  double lru_rps = 0;
  for (const PolicyInfo& info : Policies()) {
    if (!o.policies.empty() &&
        std::find(o.policies.begin(), o.policies.end(), info.name) ==
            o.policies.end() &&
        info.name != "lru") {
      continue;
    }
    const uint64_t cap =
        info.kind == PolicyKind::kUnbounded ? kUnlimitedBytes : capacity;
    std::vector<double> rps, wall;
    RunResult last;
    for (int run = 0; run < o.runs; ++run) {
      last = RunOnce(info, trace, cap);
      rps.push_back(last.requests_per_second);
      wall.push_back(last.wall_requests_per_second);
    }
    const double med = bench::Median(rps);
    if (info.name == "lru") lru_rps = med;
    std::printf("%-14.*s %14.0f %7.2f %15.0f %9.4f %7.1f %9.1f %7.1f\n",
                static_cast<int>(info.name.size()), info.name.data(), med,
                lru_rps > 0 ? med / lru_rps : 0.0, bench::Median(wall),
                last.hit_ratio, last.core_bytes_per_entry,
                last.policy_bytes_per_entry,
                last.core_bytes_per_entry + last.policy_bytes_per_entry);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace toolcache

int main(int argc, char** argv) { return toolcache::Main(argc, argv); }
