// Reports of an experiment: JSON Lines for machines, paper-style tables for
// people (Fig. 3, Fig. 4, Table 3 of the paper), and gnuplot figures.
//
// JSON: one object per RunRecord, fields in a fixed order: workload, policy,
// cache_size_pct, seed, hit_ratio, byte_hit_ratio, total_latency (s),
// total_size (bytes), total_cost (USD), admissions, evictions,
// expired_misses, command_served, then requests, hits, misses,
// capacity_bytes, capacity_entries, unique_objects, rejections,
// invalidations, saved_latency, saved_cost; records from traces (or with an
// optimum) add saved_latency_fraction_of_opt, saved_cost_fraction_of_opt
// (null when unsolved), stale_served, optimum_method, optimum_cost_method
// (OptimumResult::method of each objective) and optimum_exact (false = the
// fractions are against an upper bound), all three null when unsolved.
// Tables and plots say "% of unique cacheable entries" when the runs used
// an entry capacity, else bytes.
//
// Thread-safety: pure functions (WritePlots runs the gnuplot process).
//
// Example:
//   for (const RunRecord& r : runs) std::cout << RecordToJson(r) << "\n";
//   std::cout << HitRatioTable(runs);
#ifndef TOOLCACHE_SRC_SIM_REPORT_H_
#define TOOLCACHE_SRC_SIM_REPORT_H_

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "src/sim/experiment.h"
#include "toolcache/status.h"

namespace toolcache::sim {

// One line of JSON, no trailing newline.
std::string RecordToJson(const RunRecord& record);

// Mean and sample standard deviation of a metric over seeds.
struct Stat {
  double mean = 0;
  double sd = 0;
  uint32_t n = 0;
};
using Metric = std::function<double(const RunRecord&)>;
Stat Summarize(std::span<const RunRecord> runs, const std::string& workload,
               const std::string& policy, double size_pct,
               const Metric& metric);

// Distinct values in first-appearance order.
std::vector<std::string> Workloads(std::span<const RunRecord> runs);
std::vector<std::string> PolicyLabels(std::span<const RunRecord> runs);
std::vector<double> Sizes(std::span<const RunRecord> runs);

// Fig. 3 style: hit ratio (%) mean +- sd per workload x policy x size, and
// for each workload the best margin of `focus` (e.g. "vaac") over each other
// policy, in percentage points.
std::string HitRatioTable(std::span<const RunRecord> runs,
                          const std::string& focus = "vaac");
// Fig. 4 style for one workload: total latency (s), total result size (KB)
// and total cost (USD) per policy x size, and `focus`'s relative change vs
// each other policy.
std::string CostTable(std::span<const RunRecord> runs,
                      const std::string& workload,
                      const std::string& focus = "vaac");
// Table 3 style: hit ratio (%) / average latency per request (ms) for two
// policy labels (with vs without user grouping) on one workload.
std::string UserGroupingTable(std::span<const RunRecord> runs,
                              const std::string& workload,
                              const std::string& with_label,
                              const std::string& without_label);
// Synthetic workloads solved with --optimum: saved latency / cost as a
// fraction of the optimum (mean over seeds) per workload x policy x size,
// and how many solves were upper bounds. "" when no synthetic run has one.
std::string OptimumTable(std::span<const RunRecord> runs);
// Traces: hit ratio, fractions of the optimum and whether the optimum is
// exact or a bound, stale results served, invalidations. "" without traces.
std::string TraceTable(std::span<const RunRecord> runs);
// Every metric per workload x policy x size (means over seeds): hit ratio,
// byte hit ratio, total latency / size / cost, admissions, evictions,
// expired misses, command_served, and when an optimum was solved the
// fractions of it, its method and stale_served.
std::string DetailsTable(std::span<const RunRecord> runs);
// "exact", "ilp-bound", "lp-bound", "all-bound" (the optimum behind a
// record's fractions), or "-" when none was solved.
std::string OptimumLabel(const RunRecord& record);
// Safety counters summed over all runs: command_served (must be 0),
// stale_served, invalidations, expired misses.
std::string SafetyLine(std::span<const RunRecord> runs);

// Writes into `dir`, then runs gnuplot on plots.gp: fig3.png (hit ratio vs
// size, one panel per workload), paid.png (total latency and total cost vs
// size per workload), optimum.png (saved latency and cost as a fraction of
// the offline optimum, when one was solved) and, when `cost_workload` is
// present, fig4.png (the paper's latency, size and cost of that workload);
// each with its .dat file. Error when gnuplot is missing or fails (the .dat
// and .gp files are still written).
Status WritePlots(std::span<const RunRecord> runs, const std::string& dir,
                  const std::string& cost_workload = "zipf");

}  // namespace toolcache::sim

#endif  // TOOLCACHE_SRC_SIM_REPORT_H_
