// The experiment grid and its thread pool.
//
// Invariants:
//   - Every cell writes only its own pre-sized slot of the result vector, and
//     every cell's inputs (PreparedTrace, options, seed) are fixed before the
//     pool starts: results are identical for any --jobs.
//   - Workers take indices in increasing order from one atomic counter and
//     stop taking new ones after a failure, so the reported error is the one
//     of the lowest failing index.
#include "src/sim/experiment.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <thread>

#if __has_include("src/sim/optimum.h")
#include "src/sim/optimum.h"
#define TOOLCACHE_SIM_HAS_OPTIMUM 1
#else
#define TOOLCACHE_SIM_HAS_OPTIMUM 0
#endif

namespace toolcache::sim {
namespace {

struct Source {
  std::string name;
  uint64_t seed = 0;
  bool from_trace = false;
  // Paper-silent: synthetic workloads invalidate nothing (send_message writes
  // to an outbox no informational tool reads); traces use the session rule.
  InvalidationRule invalidation = InvalidationRule::kNone;
  std::shared_ptr<const PreparedTrace> held;  // a pre-read trace (shared)
  PreparedTrace own;
  std::shared_ptr<const StreamedTrace> streamed;  // read while replayed
  const PreparedTrace& prepared() const { return held ? *held : own; }
  TraceTotals totals() const {
    return streamed ? streamed->totals : TotalsOf(prepared());
  }
};

struct Optimum {
  bool solved = false;
  double saved_latency = 0;
  double saved_cost = 0;
  std::string method;       // latency objective
  std::string cost_method;  // cost objective
  bool latency_exact = false;
  bool cost_exact = false;
};

// INTEGRATION POINT (limits helper): SolveOptimum from src/sim/optimum.h,
// told the replay's invalidation rule through dies_at so that it never
// counts a hit the replay forbids (at unlimited capacity the infinite cache
// reaches it exactly).
Result<Optimum> SolveOptimumFor(const PreparedTrace& p, uint64_t capacity,
                                const std::vector<uint64_t>& dies_at,
                                const ExperimentSpec& spec) {
#if TOOLCACHE_SIM_HAS_OPTIMUM
  OptimumOptions options;
  options.max_exact_requests = spec.optimum_max_exact_requests;
  options.time_limit_seconds = spec.optimum_time_limit_seconds;
  options.dies_at = dies_at;
  // The offline solver reads whole Requests: rebuilt from the compact
  // records for this solve only.
  const std::vector<Request> requests = p.Requests();
  const std::vector<uint8_t> cacheable = p.CacheableFlags();
  Result<OptimumResult> lat = SolveOptimum(requests, cacheable, capacity,
                                           OptimumObjective::kLatency, options);
  if (!lat.ok()) return lat.status();
  Result<OptimumResult> cost = SolveOptimum(requests, cacheable, capacity,
                                            OptimumObjective::kCost, options);
  if (!cost.ok()) return cost.status();
  Optimum o;
  o.solved = true;
  o.saved_latency = lat->saved_latency;
  o.saved_cost = cost->saved_cost;
  o.method = lat->method;
  o.cost_method = cost->method;
  o.latency_exact = lat->exact;
  o.cost_exact = cost->exact;
  return o;
#else
  (void)p;
  (void)capacity;
  (void)dies_at;
  (void)spec;
  return Optimum{};
#endif
}

bool SolvesOptimumFor(const ExperimentSpec& spec, bool from_trace) {
  return spec.solve_optimum && !spec.entry_capacity && OptimumAvailable() &&
         (from_trace || spec.optimum_for_synthetic);
}

std::optional<double> Fraction(double value, double optimum) {
  if (!(optimum > 0)) return std::nullopt;
  return value / optimum;
}

}  // namespace

bool OptimumAvailable() { return TOOLCACHE_SIM_HAS_OPTIMUM != 0; }

Result<StreamedTrace> ScanStreamedTrace(const std::string& path,
                                        const TraceReadOptions& read) {
  StreamedTrace t;
  t.path = path;
  t.read = read;
  Result<TraceTotals> totals =
      ScanTraceTotals(path, read, &t.commands_per_session, &t.plain);
  if (!totals.ok()) return totals.status();
  t.totals = std::move(*totals);
  return t;
}

uint64_t ExperimentWork(const ExperimentSpec& spec) {
  const uint64_t synthetic =
      static_cast<uint64_t>(spec.workloads.size()) * spec.seeds;
  const uint64_t traces = spec.traces.size() + spec.prepared_traces.size();
  const uint64_t sizes = spec.sizes_pct.size();
  uint64_t work = (synthetic + traces + spec.streamed_traces.size()) *
                  spec.policies.size() * sizes;
  if (SolvesOptimumFor(spec, false)) work += synthetic * sizes;
  if (SolvesOptimumFor(spec, true)) work += traces * sizes;
  return work;
}

Status ParallelFor(uint64_t count, uint32_t jobs,
                   const std::function<Status(uint64_t)>& fn) {
  if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
  jobs = static_cast<uint32_t>(
      std::min<uint64_t>(jobs, std::max<uint64_t>(count, 1)));
  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  uint64_t first_bad = UINT64_MAX;  // GUARDED_BY(mu)
  Status first_status;              // GUARDED_BY(mu)
  auto worker = [&] {
    while (!failed.load()) {
      uint64_t i = next.fetch_add(1);
      if (i >= count) return;
      Status s = fn(i);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (i < first_bad) {
          first_bad = i;
          first_status = std::move(s);
        }
        failed.store(true);
      }
    }
  };
  if (jobs <= 1) {
    worker();
  } else {
    std::vector<std::thread> threads;
    for (uint32_t t = 0; t < jobs; ++t) threads.emplace_back(worker);
    for (std::thread& t : threads) t.join();
  }
  return first_status;
}

Result<std::vector<RunRecord>> RunExperiment(const ExperimentSpec& spec) {
  if (spec.policies.empty()) return InvalidArgument("no policy selected");
  if (spec.sizes_pct.empty()) return InvalidArgument("no cache size selected");
  for (double s : spec.sizes_pct) {
    if (!(s > 0 && s <= 100)) {
      return InvalidArgument("cache size " + std::to_string(s) +
                             "% is outside (0, 100]");
    }
  }
  if (spec.seeds == 0 && !spec.workloads.empty()) {
    return InvalidArgument("--seeds must be at least 1");
  }
  if (!(spec.optimum_time_limit_seconds > 0) ||
      !std::isfinite(spec.optimum_time_limit_seconds)) {
    return InvalidArgument(
        "the optimum's time limit must be a positive number of seconds");
  }
  for (const Trace& t : spec.traces) {
    if (t.records.empty()) {
      return InvalidArgument("trace '" + t.name +
                             "' has no records (nothing to replay)");
    }
  }
  for (const auto& t : spec.prepared_traces) {
    if (t == nullptr || t->empty()) {
      return InvalidArgument("trace '" + (t ? t->name : std::string()) +
                             "' has no records (nothing to replay)");
    }
  }
  for (const auto& t : spec.streamed_traces) {
    if (t == nullptr || t->totals.records == 0) {
      return InvalidArgument("trace '" + (t ? t->path : std::string()) +
                             "' has no records (nothing to replay)");
    }
  }
  for (const PolicyVariant& v : spec.policies) {
    const PolicyInfo* info = FindPolicy(v.policy);
    if (!spec.streamed_traces.empty() && info != nullptr &&
        info->kind == PolicyKind::kOffline) {
      return InvalidArgument("policy '" + v.policy +
                             "' is offline: it cannot replay a streamed "
                             "trace (it needs the next accesses)");
    }
    Result<std::unique_ptr<Policy>> probe =
        MakePolicy(v.policy, {.capacity_bytes = 1024, .knobs = v.knobs});
    if (!probe.ok()) return probe.status();
  }

  // Phase 1: sources (one per synthetic workload x seed, one per trace).
  std::vector<Source> sources;
  for (WorkloadKind k : spec.workloads) {
    for (uint32_t s = 0; s < spec.seeds; ++s) {
      Source src;
      src.name = std::string(WorkloadName(k));
      src.seed = spec.first_seed + s;
      sources.push_back(std::move(src));
    }
  }
  for (const Trace& t : spec.traces) {
    Source src;
    src.name = t.name;
    // Choice: a trace is fixed, so it is replayed once (first seed).
    src.seed = spec.first_seed;
    src.from_trace = true;
    src.invalidation = InvalidationRule::kSession;
    sources.push_back(std::move(src));
  }
  const size_t synthetic = sources.size() - spec.traces.size();
  // Pre-read traces: shared, never copied or parsed again (--jobs).
  for (const auto& t : spec.prepared_traces) {
    Source src;
    src.name = t->name;
    src.seed = spec.first_seed;
    src.from_trace = true;
    src.invalidation = InvalidationRule::kSession;
    src.held = t;
    sources.push_back(std::move(src));
  }
  for (const auto& t : spec.streamed_traces) {
    Source src;
    src.name = t->totals.name;
    src.seed = spec.first_seed;
    src.from_trace = true;
    src.invalidation = InvalidationRule::kSession;
    src.streamed = t;
    sources.push_back(std::move(src));
  }
  const size_t to_prepare = synthetic + spec.traces.size();
  Status st = ParallelFor(to_prepare, spec.jobs, [&](uint64_t i) -> Status {
    Source& src = sources[i];
    Result<PreparedTrace> p =
        i < synthetic
            ? PrepareTrace(GenerateWorkload(spec.workloads[i / spec.seeds],
                                            [&] {
                                              WorkloadOptions o =
                                                  spec.workload_options;
                                              o.seed = src.seed;
                                              return o;
                                            }()),
                           spec.prepare)
            : PrepareTrace(spec.traces[i - synthetic], spec.prepare);
    if (!p.ok()) return p.status();
    src.own = std::move(*p);
    return Status::Ok();
  });
  if (!st.ok()) return st;

  const size_t n_sizes = spec.sizes_pct.size();
  const size_t n_pol = spec.policies.size();
  // Phase 2: optimum per (source, size), when asked.
  std::vector<Optimum> optima(sources.size() * n_sizes);
  std::vector<uint64_t> opt_cells;
  std::vector<std::vector<uint64_t>> dies_at(sources.size());
  for (size_t s = 0; s < sources.size(); ++s) {
    if (sources[s].streamed) continue;  // never solved (no held trace)
    if (!SolvesOptimumFor(spec, sources[s].from_trace)) continue;
    dies_at[s] =
        EntryDeathIndices(sources[s].prepared(), sources[s].invalidation);
    for (size_t z = 0; z < n_sizes; ++z) opt_cells.push_back(s * n_sizes + z);
  }
  const uint64_t total = ExperimentWork(spec);  // == opt_cells + replays
  std::atomic<uint64_t> done{0};
  auto tick = [&] {
    uint64_t d = done.fetch_add(1) + 1;
    if (spec.progress) spec.progress(d, total);
  };
  st = ParallelFor(opt_cells.size(), spec.jobs, [&](uint64_t i) -> Status {
    const uint64_t cell = opt_cells[i];
    const PreparedTrace& p = sources[cell / n_sizes].prepared();
    Result<Optimum> o = SolveOptimumFor(
        p, CapacityForPercent(p, spec.sizes_pct[cell % n_sizes]),
        dies_at[cell / n_sizes], spec);
    if (!o.ok()) return o.status();
    optima[cell] = std::move(*o);
    tick();
    return Status::Ok();
  });
  if (!st.ok()) return st;

  // Phase 3: replays. Cell order: source-major (so a workload's seeds are
  // adjacent), then policy, then size; records are re-sorted below.
  std::vector<RunRecord> cells(sources.size() * n_pol * n_sizes);
  // The options of cell i (source-major, then policy, then size).
  auto options_of = [&](uint64_t i) {
    const Source& src = sources[i / (n_pol * n_sizes)];
    const PolicyVariant& v = spec.policies[(i / n_sizes) % n_pol];
    const size_t z = i % n_sizes;
    const TraceTotals totals = src.totals();
    ReplayOptions opt;
    opt.policy = v.policy;
    opt.knobs = v.knobs;
    opt.seed = src.seed;
    opt.invalidation = src.invalidation;
    if (spec.entry_capacity) {
      opt.capacity_entries = EntriesForPercent(totals, spec.sizes_pct[z]);
      opt.capacity_bytes = std::max<uint64_t>(1, totals.total_bytes);
    } else {
      opt.capacity_bytes = CapacityForPercent(totals, spec.sizes_pct[z]);
    }
    return opt;
  };
  auto record = [&](uint64_t i, const ReplayOptions& opt,
                    const ReplayMetrics& m) {
    const size_t s = i / (n_pol * n_sizes);
    const size_t z = i % n_sizes;
    const Source& src = sources[s];
    RunRecord& r = cells[i];
    r.workload = src.name;
    r.policy = spec.policies[(i / n_sizes) % n_pol].label;
    r.cache_size_pct = spec.sizes_pct[z];
    r.seed = src.seed;
    r.from_trace = src.from_trace;
    r.capacity_bytes = opt.capacity_bytes;
    r.capacity_entries = opt.capacity_entries;
    r.unique_objects = src.totals().unique_cacheable_objects;
    r.metrics = m;
    const Optimum& o = optima[s * n_sizes + z];
    if (o.solved) {
      r.saved_latency_fraction_of_opt =
          Fraction(m.saved_latency, o.saved_latency);
      r.saved_cost_fraction_of_opt = Fraction(m.saved_cost, o.saved_cost);
      r.optimum_method = o.method;
      r.optimum_cost_method = o.cost_method;
      r.optimum_exact = (!r.saved_latency_fraction_of_opt || o.latency_exact) &&
                        (!r.saved_cost_fraction_of_opt || o.cost_exact);
    }
    tick();
  };
  const size_t held_sources = sources.size() - spec.streamed_traces.size();
  st = ParallelFor(held_sources * n_pol * n_sizes, spec.jobs,
                   [&](uint64_t i) -> Status {
                     const ReplayOptions opt = options_of(i);
                     Result<ReplayMetrics> m =
                         Replay(sources[i / (n_pol * n_sizes)].prepared(), opt);
                     if (!m.ok()) return m.status();
                     record(i, opt, *m);
                     return Status::Ok();
                   });
  if (!st.ok()) return st;
  // Streamed traces: one more read each, every cell fed chunk by chunk
  // (the cells of a chunk in parallel).
  for (size_t s = held_sources; s < sources.size(); ++s) {
    const StreamedTrace& t = *sources[s].streamed;
    const uint64_t first_cell = s * n_pol * n_sizes;
    std::vector<ReplayOptions> opts;
    std::vector<std::unique_ptr<Replayer>> replayers;
    for (uint64_t c = 0; c < n_pol * n_sizes; ++c) {
      opts.push_back(options_of(first_cell + c));
      Result<std::unique_ptr<Replayer>> r =
          Replayer::Make(opts.back(), t.commands_per_session);
      if (!r.ok()) return r.status();
      replayers.push_back(std::move(*r));
    }
    TraceReadOptions read = t.read;
    read.progress = nullptr;
    Result<TraceTotals> again =
        t.plain
            ? StreamPlainTrace(
                  t.path, read, *t.plain, kPlainChunkRecords,
                  [&](const PlainChunk& chunk, uint64_t first) -> Status {
                    return ParallelFor(
                        replayers.size(), spec.jobs, [&](uint64_t c) -> Status {
                          replayers[c]->FeedPlain(chunk, *t.plain, first);
                          return Status::Ok();
                        });
                  })
            : StreamPreparedTrace(
                  t.path, read, kStreamChunkRecords,
                  [&](const PreparedTrace& chunk, uint64_t first) -> Status {
                    return ParallelFor(replayers.size(), spec.jobs,
                                       [&](uint64_t c) -> Status {
                                         replayers[c]->Feed(chunk, first);
                                         return Status::Ok();
                                       });
                  });
    if (!again.ok()) return again.status();
    if (again->records != t.totals.records ||
        again->unique_cacheable_bytes != t.totals.unique_cacheable_bytes) {
      return FailedPrecondition("trace '" + t.path +
                                "' changed between its two reads");
    }
    for (uint64_t c = 0; c < replayers.size(); ++c) {
      record(first_cell + c, opts[c], replayers[c]->Finish());
    }
  }

  // Order: workload, policy, size, seed. Sources of one workload are
  // adjacent and in seed order.
  std::vector<RunRecord> out;
  out.reserve(cells.size());
  size_t first = 0;
  while (first < sources.size()) {
    size_t last = first;
    while (last < sources.size() && sources[last].name == sources[first].name &&
           sources[last].from_trace == sources[first].from_trace &&
           (!sources[first].from_trace || last == first)) {
      ++last;
    }
    for (size_t pol = 0; pol < n_pol; ++pol) {
      for (size_t z = 0; z < n_sizes; ++z) {
        for (size_t s = first; s < last; ++s) {
          out.push_back(std::move(cells[(s * n_pol + pol) * n_sizes + z]));
        }
      }
    }
    first = last;
  }
  return out;
}

}  // namespace toolcache::sim
