// The paper's synthetic workloads (section 6.2-6.3), expressed as Traces so
// synthetic and real traces take one replay path.
//
// Six informational tools modelled on Table 1 of the paper (search,
// wikipedia fetch, map planning, weather, plus a calculator and a stock-price
// tool) and one side-effecting tool (send_message) that exercises the
// never-serve-a-COMMAND rule. Every tool has a fixed universe of argument
// combinations ("keys"); each key gets a result size and a latency drawn once
// per seed, so repeated calls of one key look the same to the value model.
// Workloads differ only in which key each request picks:
//   zipf       Zipf(alpha) over a seeded random ranking of all keys
//   hotspot    phases; in each, 80% of requests are Zipf over a contiguous
//              hot region (20% of the keys), 20% uniform over the rest
//   uniform    uniform over all keys
//   multiuser  10 users; each request comes from a uniformly chosen user and
//              picks from a shared popular set (40%) or the user's own
//              topical window of keys, which shares a third with each
//              neighbouring user's window (60%)
// docs/SIM.md justifies every constant.
//
// Thread-safety: pure functions of their arguments.
//
// Example:
//   WorkloadOptions opt{.requests = 1000, .seed = 7};
//   Trace t = GenerateWorkload(WorkloadKind::kZipf, opt);
//   // t.records.size() == 1000, t.name == "zipf"
#ifndef TOOLCACHE_SRC_SIM_WORKLOADS_H_
#define TOOLCACHE_SRC_SIM_WORKLOADS_H_

#include <cstdint>
#include <span>
#include <string_view>

#include "toolcache/status.h"
#include "toolcache/trace.h"
#include "toolcache/verdict.h"

namespace toolcache::sim {

enum class WorkloadKind { kZipf, kHotspot, kUniform, kMultiUser };

// The workloads in display order.
std::span<const WorkloadKind> AllWorkloads();
// "zipf", "hotspot", "uniform", "multiuser".
std::string_view WorkloadName(WorkloadKind kind);
// Inverse of WorkloadName; an error lists the known names.
Result<WorkloadKind> ParseWorkload(std::string_view name);

// One tool of the synthetic universe (Table 1 of the paper as a guide).
struct ToolModel {
  std::string_view name;
  RequestType type;
  double ttl;           // seconds (60 = real-time: not cacheable in paper mode)
  double latency_lo;    // seconds; each key draws its latency uniformly
  double latency_hi;    //   from [latency_lo, latency_hi]
  double cost;          // USD per call
  double size_median;   // bytes; each key draws a log-normal size
  double size_sigma;    //   with this median and log-space sigma
  uint32_t keys;        // distinct argument combinations (0 = every call new)
  uint32_t categories;  // distinct first-parameter values (0 = one parameter)
};

// The tool table, in universe order.
std::span<const ToolModel> PaperTools();

struct WorkloadOptions {
  uint64_t requests = 1000;  // the paper's 1,000
  uint64_t seed = 1;
  double zipf_alpha = 1.1;  // the paper's alpha
  // Paper-silent: mean gap between calls, so the trace spans ~2,000 s: the
  // 300 s TTLs expire several times, the 3,600 s ones never do.
  double mean_interarrival_seconds = 2.0;
  // Paper-silent: share of calls that are the COMMAND tool (send_message).
  double command_fraction = 0.03;
  uint32_t users = 10;  // multiuser only (the paper's 10)
  // Multiplies every tool's key count (ToolModel::keys), so a cache can hold
  // thousands of entries. 1 = the paper-shaped universe of 600 keys (540
  // cacheable); the first `keys` keys of each tool keep their arguments for
  // any scale, the others vary the non-category parameter. Must be >= 1.
  uint32_t keys_scale = 1;
};

// Generates `options.requests` records. Deterministic in (kind, options) on
// every platform (src/sim/random.h).
Trace GenerateWorkload(WorkloadKind kind, const WorkloadOptions& options);

}  // namespace toolcache::sim

#endif  // TOOLCACHE_SRC_SIM_WORKLOADS_H_
