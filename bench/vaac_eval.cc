// bench_vaac_eval: compares CACA / VAAC variants on the paper's synthetic
// workloads (src/sim/workloads.h), through the simulator's replay loop.
//
// Used to (1) choose the paper-silent constants of VAAC by measurement
// (docs/VAAC.md) and (2) show that the sampled v-LRU ("vaac-sampled") stays
// within 0.5 percentage points of the exact window scan ("vaac").
//
// Usage:
//   bench_vaac_eval [--seeds N] [--requests N] [--sizes P,P,...] [--entries]
//                   [--ttl S] [--keys-scale N] [--interarrival S]
//                   [--set label:policy:knob=v,knob=v]...
// --entries sizes the cache in entries instead of bytes; --ttl S gives every
// cacheable record (TTL > 60 s) the TTL S, so capacity, not expiry, binds;
// --keys-scale N multiplies the key universe (WorkloadOptions::keys_scale)
// and --interarrival S sets the mean gap between calls, so a large cache
// fills before TTLs expire.
// Prints, per workload x cache size, the mean hit ratio (%) over the seeds
// for each configuration, then the mean over sizes, then for every config
// the largest |difference| to the first config per (workload, size).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "src/sim/replay.h"
#include "src/sim/workloads.h"

namespace {

using toolcache::sim::WorkloadKind;

struct Config {
  std::string label;
  std::string policy;
  std::map<std::string, double, std::less<>> knobs;
};

Config ParseConfig(const std::string& spec) {
  // label:policy[:knob=v,knob=v]
  Config c;
  const size_t a = spec.find(':');
  c.label = spec.substr(0, a);
  std::string rest = a == std::string::npos ? c.label : spec.substr(a + 1);
  const size_t b = rest.find(':');
  c.policy = rest.substr(0, b);
  if (b != std::string::npos) {
    std::string knobs = rest.substr(b + 1);
    size_t pos = 0;
    while (pos < knobs.size()) {
      size_t comma = knobs.find(',', pos);
      if (comma == std::string::npos) comma = knobs.size();
      const std::string kv = knobs.substr(pos, comma - pos);
      const size_t eq = kv.find('=');
      c.knobs[kv.substr(0, eq)] = std::atof(kv.substr(eq + 1).c_str());
      pos = comma + 1;
    }
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  int seeds = 10;
  uint64_t requests = 1000;
  bool entries = false;
  double ttl_override = 0;  // > 0: every cacheable record gets this TTL
  uint32_t keys_scale = 1;
  double interarrival = 0;  // > 0: mean seconds between calls
  std::vector<Config> configs;
  std::vector<double> sizes = {10, 20, 35, 50, 90};  // the paper's
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--seeds" && i + 1 < argc) {
      seeds = std::atoi(argv[++i]);
    } else if (arg == "--requests" && i + 1 < argc) {
      requests = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--keys-scale" && i + 1 < argc) {
      keys_scale = static_cast<uint32_t>(std::max(1, std::atoi(argv[++i])));
    } else if (arg == "--interarrival" && i + 1 < argc) {
      interarrival = std::atof(argv[++i]);
    } else if (arg == "--ttl" && i + 1 < argc) {
      ttl_override = std::atof(argv[++i]);
    } else if (arg == "--sizes" && i + 1 < argc) {
      sizes.clear();
      for (const char* p = argv[++i]; *p != 0;) {
        char* end = nullptr;
        sizes.push_back(std::strtod(p, &end));
        if (end == p) break;
        p = *end == ',' ? end + 1 : end;
      }
    } else if (arg == "--entries") {
      entries = true;
    } else if (arg == "--set" && i + 1 < argc) {
      configs.push_back(ParseConfig(argv[++i]));
    } else {
      std::fprintf(stderr,
                   "usage: bench_vaac_eval [--seeds N] [--requests N] "
                   "[--sizes P,P] [--entries] [--ttl S] [--keys-scale N] "
                   "[--interarrival S] [--set "
                   "label:policy:knob=v,...]...\n");
      return 2;
    }
  }
  if (configs.empty()) {
    configs = {ParseConfig("lru"), ParseConfig("caca"), ParseConfig("vaac"),
               ParseConfig("vaac-sampled")};
  }
  // [config][workload][size] -> sum of hit ratios
  std::vector<std::vector<std::vector<double>>> sum(
      configs.size(), std::vector<std::vector<double>>(
                          4, std::vector<double>(sizes.size(), 0)));
  const auto workloads = toolcache::sim::AllWorkloads();
  for (int seed = 1; seed <= seeds; ++seed) {
    for (size_t w = 0; w < workloads.size(); ++w) {
      toolcache::sim::WorkloadOptions wo;
      wo.requests = requests;
      wo.seed = static_cast<uint64_t>(seed);
      wo.keys_scale = keys_scale;
      if (interarrival > 0) wo.mean_interarrival_seconds = interarrival;
      toolcache::Trace trace =
          toolcache::sim::GenerateWorkload(workloads[w], wo);
      if (ttl_override > 0) {
        for (toolcache::TraceRecord& r : trace.records) {
          if (r.ttl > 60) r.ttl = ttl_override;
        }
      }
      auto prepared = toolcache::sim::PrepareTrace(trace, {});
      if (!prepared.ok()) {
        std::fprintf(stderr, "%s\n", prepared.status().message().c_str());
        return 1;
      }
      for (size_t s = 0; s < sizes.size(); ++s) {
        for (size_t c = 0; c < configs.size(); ++c) {
          toolcache::sim::ReplayOptions ro;
          ro.policy = configs[c].policy;
          ro.knobs = configs[c].knobs;
          ro.seed = static_cast<uint64_t>(seed);
          // As `toolcache sim` does for synthetic workloads: their COMMAND
          // (send_message) changes nothing an informational tool reads.
          ro.invalidation = toolcache::sim::InvalidationRule::kNone;
          if (entries) {
            ro.capacity_bytes = toolcache::kUnlimitedBytes;
            ro.capacity_entries =
                toolcache::sim::EntriesForPercent(*prepared, sizes[s]);
          } else {
            ro.capacity_bytes =
                toolcache::sim::CapacityForPercent(*prepared, sizes[s]);
          }
          auto m = toolcache::sim::Replay(*prepared, ro);
          if (!m.ok()) {
            std::fprintf(stderr, "%s\n", m.status().message().c_str());
            return 2;
          }
          sum[c][w][s] += m->HitRatio();
        }
      }
    }
  }
  std::printf("mean hit ratio %% over %d seeds, %llu requests%s\n", seeds,
              static_cast<unsigned long long>(requests),
              entries ? " (entry capacity)" : " (byte capacity)");
  std::printf("%-10s %5s", "workload", "size");
  for (const Config& c : configs) std::printf(" %14s", c.label.c_str());
  std::printf("\n");
  std::vector<double> overall(configs.size(), 0);
  std::vector<double> max_diff(configs.size(), 0);
  for (size_t w = 0; w < workloads.size(); ++w) {
    std::vector<double> avg(configs.size(), 0);
    for (size_t s = 0; s < sizes.size(); ++s) {
      std::printf(
          "%-10s %4.0f%%",
          std::string(toolcache::sim::WorkloadName(workloads[w])).c_str(),
          sizes[s]);
      for (size_t c = 0; c < configs.size(); ++c) {
        const double hr = 100.0 * sum[c][w][s] / seeds;
        avg[c] += hr / static_cast<double>(sizes.size());
        overall[c] += hr / static_cast<double>(sizes.size() * workloads.size());
        max_diff[c] =
            std::max(max_diff[c], std::abs(hr - 100.0 * sum[0][w][s] / seeds));
        std::printf(" %14.2f", hr);
      }
      std::printf("\n");
    }
    std::printf("%-10s %5s",
                std::string(toolcache::sim::WorkloadName(workloads[w])).c_str(),
                "mean");
    for (double a : avg) std::printf(" %14.2f", a);
    std::printf("\n");
  }
  std::printf("%-16s", "overall mean");
  for (double a : overall) std::printf(" %14.2f", a);
  std::printf("\n%-16s", "max|diff| vs 1st");
  for (double d : max_diff) std::printf(" %14.2f", d);
  std::printf("  (percentage points)\n");
  return 0;
}
