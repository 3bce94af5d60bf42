// Experiment: the grid workloads x policies x cache sizes x seeds, run in
// parallel over a std::thread pool with results that do not depend on the
// number of threads.
//
// Every cell is one Replay of one PreparedTrace (src/sim/replay.h). Synthetic
// workloads are generated once per seed; traces read from files are replayed
// once (seed = first_seed; a trace is fixed, only a randomized policy could
// vary). When asked, the offline optimum (src/sim/optimum.h, by the limits
// helper) is solved once per (trace, size) and each record gets its saved
// latency and cost as a fraction of that optimum.
//
// Thread-safety: RunExperiment is reentrant; the progress callback is called
// from worker threads (it must be thread-safe).
//
// Example:
//   ExperimentSpec spec;
//   spec.workloads = {WorkloadKind::kZipf};
//   spec.policies = {{"lru", "lru", {}}};
//   spec.sizes_pct = {10, 50};
//   spec.seeds = 3;
//   Result<std::vector<RunRecord>> runs = RunExperiment(spec);
//   // runs->size() == 1 * 1 * 2 * 3
#ifndef TOOLCACHE_SRC_SIM_EXPERIMENT_H_
#define TOOLCACHE_SRC_SIM_EXPERIMENT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/sim/replay.h"
#include "src/sim/trace_formats.h"
#include "src/sim/workloads.h"
#include "toolcache/status.h"
#include "toolcache/trace.h"

namespace toolcache::sim {

// A policy as it appears in reports: a label, a registry row and its knobs
// (so "vaac" with group_by_user=0 can sit beside "vaac").
struct PolicyVariant {
  std::string label;
  std::string policy;
  std::map<std::string, double, std::less<>> knobs;
};

// A trace replayed as a stream, never held in memory (ScanStreamedTrace
// read it once for its totals; RunExperiment reads it once more, feeding
// every cell of it in the same pass). Only online and unbounded policies,
// and no optimum, can replay a stream.
struct StreamedTrace {
  std::string path;
  TraceReadOptions read;
  TraceTotals totals;
  std::vector<uint64_t> commands_per_session;  // CountCommands
  // Set when every record is plain: the second read then feeds the
  // replayers without columns (StreamPlainTrace, Replayer::FeedPlain).
  std::optional<PlainConstants> plain;
};

// The first pass over a trace to be streamed: its totals (the capacities
// need the unique cacheable bytes) and COMMANDs per session
// (ScanTraceTotals: counted from the records where the format allows).
// Holds one chunk of records at a time. Errors: ReadPreparedTrace's.
Result<StreamedTrace> ScanStreamedTrace(const std::string& path,
                                        const TraceReadOptions& read);

// Records per chunk of a streamed read (64 Ki: ~1.5 MiB of columns).
inline constexpr uint64_t kStreamChunkRecords = uint64_t{1} << 16;
// Records per chunk of a plain stream (StreamPlainTrace: 20 bytes a record,
// 80 KiB, so a chunk stays in the L2 cache between reader and replayers).
inline constexpr uint64_t kPlainChunkRecords = uint64_t{1} << 12;

struct ExperimentSpec {
  std::vector<WorkloadKind> workloads;
  std::vector<Trace> traces;  // replayed with InvalidationRule::kSession
  // Traces already read into the replay's form (ReadPreparedTrace, with
  // `prepare` options); replayed after `traces`, like them. Shared by every
  // cell, never copied.
  std::vector<std::shared_ptr<const PreparedTrace>> prepared_traces;
  // Traces streamed from their files (after the prepared ones, like them);
  // every policy must be online or unbounded, and no optimum is solved for
  // them. Memory does not grow with their length.
  std::vector<std::shared_ptr<const StreamedTrace>> streamed_traces;
  std::vector<PolicyVariant> policies;
  std::vector<double> sizes_pct = {10, 20, 35, 50, 90};
  uint32_t seeds = 10;  // synthetic workloads: seeds first_seed..+seeds-1
  uint64_t first_seed = 1;
  WorkloadOptions workload_options;  // .seed is overwritten per seed
  PrepareOptions prepare;
  // Capacity as a count of entries instead of bytes.
  bool entry_capacity = false;
  // Solve the offline optimum for synthetic workloads too (for traces
  // unless solve_optimum is false; never in entry-capacity mode).
  bool optimum_for_synthetic = false;
  // false: no optimum at all, not even for traces (--no-optimum).
  bool solve_optimum = true;
  // OptimumOptions for every solve (src/sim/optimum.h): the largest trace
  // solved exactly (longer ones get the LP bound) and the time budget per
  // solve (two solves per (trace, size): latency and cost).
  uint64_t optimum_max_exact_requests = 5000;
  double optimum_time_limit_seconds = 60;
  uint32_t jobs = 0;  // 0 = std::thread::hardware_concurrency()
  // Called after each finished unit of work (an optimum solve of one
  // (trace, size) or a replay cell) with (done, total); total ==
  // ExperimentWork(spec).
  std::function<void(uint64_t, uint64_t)> progress;
};

struct RunRecord {
  std::string workload;
  std::string policy;  // PolicyVariant::label
  double cache_size_pct = 0;
  uint64_t seed = 0;
  bool from_trace = false;
  uint64_t capacity_bytes = 0;
  uint64_t capacity_entries = 0;
  uint64_t unique_objects = 0;
  ReplayMetrics metrics;
  // Present when the optimum was solved (and is > 0).
  std::optional<double> saved_latency_fraction_of_opt;
  std::optional<double> saved_cost_fraction_of_opt;
  // How each optimum was obtained (OptimumResult::method; "" when not
  // solved): the latency objective's and the cost objective's.
  std::string optimum_method;
  std::string optimum_cost_method;
  // True when every optimum behind a present fraction is the exact 0/1
  // optimum; false when one is an upper bound (LP relaxation, a time limit
  // or dropped run rows), so the fraction is understated, never overstated.
  bool optimum_exact = false;
};

// True when the limits helper's SolveOptimum is compiled in.
bool OptimumAvailable();

// Units of work RunExperiment reports through `progress`: one per optimum
// solve pair (source x size, when solved) plus one per replay cell.
uint64_t ExperimentWork(const ExperimentSpec& spec);

// Runs the grid. Records come in the order workload (synthetic in spec order,
// then traces), policy, size, seed. Errors: an invalid spec (no policies, a
// size outside (0, 100], an empty trace, bad optimum options), an unknown
// policy or knob, a trace that does not prepare, a failing solver; the first
// failing cell in grid order wins.
Result<std::vector<RunRecord>> RunExperiment(const ExperimentSpec& spec);

// Runs fn(0..count-1) on `jobs` threads; returns the error of the lowest
// failing index (all indices before it ran).
Status ParallelFor(uint64_t count, uint32_t jobs,
                   const std::function<Status(uint64_t)>& fn);

}  // namespace toolcache::sim

#endif  // TOOLCACHE_SRC_SIM_EXPERIMENT_H_
