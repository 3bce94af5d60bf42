// `toolcache sim`: replays the paper's synthetic workloads and real traces
// through the registry's policies at several cache sizes and seeds.
//
//   toolcache sim [--workload zipf,hotspot,uniform,multiuser|all]
//                 [--policy lru,caca,vaac|all] [--sizes 10,20,35,50,90]
//                 [--seeds 10] [--requests 1000] [--format table|json]
//                 [--out DIR] [--trace FILE]... [--trace-format F]
//                 [--jobs N] [--no-plots]
//                 [--set policy.knob=value]... [--capacity bytes|entries]
//                 [--scope global|user|session] [--optimum] [--no-optimum]
//                 [--optimum-time-limit S] [--optimum-max-exact N]
//                 [--keys-scale N] [--details] [--progress] [--limits]
//   toolcache sim --config FILE [--invalidation server|resource]
//                 [--trace FILE]... [--workload W] [--format table|json]
//
// With --config (or --engine, the faces' defaults) each tool-call trace is
// replayed through the engine's own request path (a real ToolCache built
// from the same YAML the faces read: classifier, keys, `scope`, TTLs,
// policy, `invalidation`; src/sim/engine_replay.h) instead of the policy
// grid; one line per trace.
//
// Default (no flags): the paper's evaluation (section 6.2-6.3): Fig. 3,
// Fig. 4 and Table 3 style tables on stdout; results.jsonl, table3.jsonl,
// summary.txt and plots in --out (default out/). With --format json, stdout
// carries only JSON Lines (one per workload x policy x size x seed). Bad
// flags -> message + exit 2; a failing run -> exit 1.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "apps/toolcache/commands.h"
#include "src/sim/engine_replay.h"
#include "src/sim/experiment.h"
#include "src/sim/progress.h"
#include "src/sim/report.h"
#include "src/sim/trace_formats.h"
#include "toolcache/config.h"
#include "toolcache/policy.h"
#include "toolcache/trace.h"

namespace toolcache::cli {
namespace {

struct SimFlags {
  std::vector<std::string> workloads;
  std::vector<std::string> policies;
  std::vector<std::string> sizes;
  int64_t seeds = 10;
  int64_t requests = 1000;
  std::string format = "table";
  std::string out = "out";
  std::vector<std::string> traces;
  int64_t jobs = 0;
  bool no_plots = false;
  std::vector<std::string> sets;
  std::string capacity = "bytes";
  std::string scope = "global";
  bool optimum = false;
  bool no_optimum = false;
  double optimum_time_limit = 60;
  int64_t optimum_max_exact = 5000;
  int64_t keys_scale = 1;
  bool details = false;
  bool progress = false;
  bool limits = false;
  std::string trace_format = "auto";
  std::string config;        // --config: replay through the engine
  bool engine = false;       // --engine: the same with the default Config
  std::string invalidation;  // --invalidation: overrides the Config's
};

bool SplitAll(const std::vector<std::string>& in, const std::string& flag,
              std::vector<std::string>* out);

// `sim --config` / `--engine`: each --trace through a real ToolCache.
int RunEngine(const SimFlags& f) {
  Config config;
  if (!f.config.empty()) {
    Result<Config> loaded = LoadConfigFile(f.config);
    if (!loaded.ok()) {
      std::cerr << "toolcache sim: " << loaded.status().message() << "\n";
      return kExitUsage;
    }
    config = std::move(*loaded);
  }
  if (f.invalidation == "server") {
    config.invalidation = InvalidationScope::kServer;
  } else if (f.invalidation == "resource") {
    config.invalidation = InvalidationScope::kResource;
  } else if (!f.invalidation.empty()) {
    std::cerr << "toolcache sim: --invalidation must be server or resource\n";
    return kExitUsage;
  }
  // Tool-call traces: each --trace, then each --workload named explicitly
  // (generated with --requests and seed 1).
  std::vector<Trace> workloads;
  std::vector<std::string> names;
  if (!SplitAll(f.workloads, "--workload", &names)) return kExitUsage;
  for (const std::string& n : names) {
    std::vector<sim::WorkloadKind> kinds;
    if (n == "all") {
      kinds = {sim::WorkloadKind::kZipf, sim::WorkloadKind::kHotspot,
               sim::WorkloadKind::kUniform, sim::WorkloadKind::kMultiUser};
    } else {
      Result<sim::WorkloadKind> k = sim::ParseWorkload(n);
      if (!k.ok()) {
        std::cerr << "toolcache sim: " << k.status().message() << "\n";
        return kExitUsage;
      }
      kinds = {*k};
    }
    if (f.requests < 1 || f.requests > 100000000) {
      std::cerr << "toolcache sim: --requests must be between 1 and "
                   "100000000\n";
      return kExitUsage;
    }
    for (sim::WorkloadKind k : kinds) {
      workloads.push_back(sim::GenerateWorkload(
          k, {.requests = static_cast<uint64_t>(f.requests)}));
    }
  }
  if (f.traces.empty() && workloads.empty()) {
    std::cerr << "toolcache sim: --config/--engine replays tool-call traces: "
                 "give --trace FILE (JSON Lines) or --workload NAME\n";
    return kExitUsage;
  }
  if (f.format != "table" && f.format != "json") {
    std::cerr << "toolcache sim: --format must be 'table' or 'json'\n";
    return kExitUsage;
  }
  if (f.format == "table") {
    std::printf("%-28s %-9s %9s %8s %8s %8s %8s %7s %8s\n", "trace", "invalid.",
                "requests", "hits", "repeats", "bypass", "stale", "invals",
                "dropped");
  }
  const size_t runs = f.traces.size() + workloads.size();
  for (size_t i = 0; i < runs; ++i) {
    const bool from_file = i < f.traces.size();
    const std::string path =
        from_file ? f.traces[i] : workloads[i - f.traces.size()].name;
    Result<Trace> trace = from_file
                              ? ReadTraceFile(path)
                              : Result<Trace>(workloads[i - f.traces.size()]);
    if (!trace.ok()) {
      std::cerr << "toolcache sim: " << trace.status().message() << "\n";
      return kExitUsage;
    }
    Result<sim::EngineReplayMetrics> m =
        sim::ReplayThroughEngine(*trace, config, {});
    if (!m.ok()) {
      std::cerr << "toolcache sim: " << path << ": " << m.status().message()
                << "\n";
      return m.status().code() == StatusCode::kInvalidArgument ? kExitUsage
                                                               : kExitFailure;
    }
    const std::string inval(InvalidationScopeName(config.invalidation));
    if (f.format == "json") {
      nlohmann::json j = {{"trace", trace->name},
                          {"config", config.source},
                          {"invalidation", inval},
                          {"scope", SharingScopeName(config.scope)},
                          {"requests", m->requests},
                          {"hits", m->hits},
                          {"misses", m->misses},
                          {"repeats", m->repeats},
                          {"bypasses", m->bypasses},
                          {"bypass_reasons", m->bypass_reasons},
                          {"stale_served", m->stale_served},
                          {"admitted", m->admitted},
                          {"invalidations", m->invalidations},
                          {"entries_invalidated", m->entries_invalidated}};
      std::cout << j.dump() << "\n";
    } else {
      std::printf("%-28s %-9s %9llu %8llu %8llu %8llu %8llu %7llu %8llu\n",
                  trace->name.c_str(), inval.c_str(),
                  static_cast<unsigned long long>(m->requests),
                  static_cast<unsigned long long>(m->hits),
                  static_cast<unsigned long long>(m->repeats),
                  static_cast<unsigned long long>(m->bypasses),
                  static_cast<unsigned long long>(m->stale_served),
                  static_cast<unsigned long long>(m->invalidations),
                  static_cast<unsigned long long>(m->entries_invalidated));
    }
  }
  return kExitOk;
}

constexpr std::string_view kPaperPolicies[] = {"lru", "caca", "vaac"};
constexpr const char* kUserGroupingKnob = "group_by_user";

bool Usage(const std::string& msg) {
  std::cerr << "toolcache sim: " << msg << "\n";
  return false;
}

// Splits "a,b" lists (CLI11 already splits repeated flags); duplicates are
// dropped. An empty item ("10,,20", a trailing comma) is an error: false.
bool SplitAll(const std::vector<std::string>& in, const std::string& flag,
              std::vector<std::string>* out) {
  out->clear();
  for (const std::string& s : in) {
    if (s.empty() || s.back() == ',') {
      return Usage(flag + ": empty item in '" + s + "'");
    }
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
      if (item.empty()) return Usage(flag + ": empty item in '" + s + "'");
      if (std::find(out->begin(), out->end(), item) == out->end()) {
        out->push_back(item);
      }
    }
  }
  return true;
}

bool BuildSpec(const SimFlags& f, sim::ExperimentSpec* spec) {
  if (f.seeds < 1 || f.seeds > 10000) {
    return Usage("--seeds must be between 1 and 10000");
  }
  if (f.requests < 1 || f.requests > 100000000) {
    return Usage("--requests must be between 1 and 100000000");
  }
  if (f.jobs < 0 || f.jobs > 1024) return Usage("--jobs must be 0..1024");
  if (f.format != "table" && f.format != "json") {
    return Usage("--format must be 'table' or 'json', got '" + f.format + "'");
  }
  if (f.capacity != "bytes" && f.capacity != "entries") {
    return Usage("--capacity must be 'bytes' or 'entries'");
  }
  if (f.optimum && f.no_optimum) {
    return Usage("--optimum and --no-optimum contradict each other");
  }
  if (!(f.optimum_time_limit > 0 && f.optimum_time_limit <= 86400)) {
    return Usage("--optimum-time-limit must be in (0, 86400] seconds");
  }
  if (f.optimum_max_exact < 0 || f.optimum_max_exact > 100000000) {
    return Usage("--optimum-max-exact must be 0..100000000 requests");
  }
  if (f.keys_scale < 1 || f.keys_scale > 1000) {
    return Usage("--keys-scale must be 1..1000");
  }
  spec->seeds = static_cast<uint32_t>(f.seeds);
  spec->workload_options.requests = static_cast<uint64_t>(f.requests);
  spec->workload_options.keys_scale = static_cast<uint32_t>(f.keys_scale);
  spec->jobs = static_cast<uint32_t>(f.jobs);
  spec->entry_capacity = f.capacity == "entries";
  spec->optimum_for_synthetic = f.optimum;
  spec->solve_optimum = !f.no_optimum;
  spec->optimum_time_limit_seconds = f.optimum_time_limit;
  spec->optimum_max_exact_requests = static_cast<uint64_t>(f.optimum_max_exact);
  if (f.scope == "global") {
    spec->prepare.scope = sim::Scope::kGlobal;
  } else if (f.scope == "user") {
    spec->prepare.scope = sim::Scope::kUser;
  } else if (f.scope == "session") {
    spec->prepare.scope = sim::Scope::kSession;
  } else {
    return Usage("--scope must be global, user or session");
  }

  // Workloads: default all, unless only traces were given.
  std::vector<std::string> names;
  if (!SplitAll(f.workloads, "--workload", &names)) return false;
  if (names.empty() && f.traces.empty()) names = {"all"};
  for (const std::string& n : names) {
    if (n == "all") {
      for (sim::WorkloadKind k : sim::AllWorkloads()) {
        if (std::find(spec->workloads.begin(), spec->workloads.end(), k) ==
            spec->workloads.end()) {
          spec->workloads.push_back(k);
        }
      }
      continue;
    }
    Result<sim::WorkloadKind> k = sim::ParseWorkload(n);
    if (!k.ok()) return Usage(k.status().message());
    if (std::find(spec->workloads.begin(), spec->workloads.end(), *k) ==
        spec->workloads.end()) {
      spec->workloads.push_back(*k);
    }
  }
  // Sizes.
  std::vector<std::string> sizes;
  if (!SplitAll(f.sizes, "--sizes", &sizes)) return false;
  if (sizes.empty()) sizes = {"10", "20", "35", "50", "90"};
  spec->sizes_pct.clear();
  for (const std::string& s : sizes) {
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != s.size() || !(v > 0 && v <= 100)) {
      return Usage("--sizes: '" + s +
                   "' is not a percentage in (0, 100] (e.g. --sizes 10,50)");
    }
    spec->sizes_pct.push_back(v);
  }

  // Policies: exactly those asked for (default the paper's three, those
  // registered); --limits adds the limit rows (offline / unbounded kinds).
  // Choice: the limits are opt-in -- they cost the replay 1.6-1.9x its CPU
  // on a trace and Belady needs the next-access column (issue 32).
  std::vector<std::string> pols;
  if (!SplitAll(f.policies, "--policy", &pols)) return false;
  std::vector<std::string> chosen;
  if (pols.empty()) {
    for (std::string_view p : kPaperPolicies) {
      if (FindPolicy(p) != nullptr) chosen.emplace_back(p);
    }
  }
  for (const std::string& p : pols) {
    if (p == "all") {
      for (const PolicyInfo& info : Policies()) chosen.emplace_back(info.name);
      continue;
    }
    if (FindPolicy(p) == nullptr) {
      std::string known;
      for (const PolicyInfo& info : Policies()) {
        known += (known.empty() ? "" : ", ") + std::string(info.name);
      }
      return Usage("unknown policy '" + p + "' (known: " + known + ", all)");
    }
    chosen.push_back(p);
  }
  if (f.limits) {
    for (const PolicyInfo& info : Policies()) {
      if (info.kind != PolicyKind::kOnline) chosen.emplace_back(info.name);
    }
  }
  for (const std::string& p : chosen) {
    bool dup = false;
    for (const sim::PolicyVariant& v : spec->policies) dup |= v.label == p;
    if (!dup) spec->policies.push_back({p, p, {}});
  }
  if (spec->policies.empty()) return Usage("no policy selected");

  // --set policy.knob=value
  for (const std::string& s : f.sets) {
    size_t dot = s.find('.');
    size_t eq = s.find('=');
    if (dot == std::string::npos || eq == std::string::npos || eq < dot ||
        dot == 0 || eq == dot + 1 || eq + 1 == s.size()) {
      return Usage("--set expects policy.knob=value, got '" + s + "'");
    }
    std::string pol = s.substr(0, dot);
    std::string knob = s.substr(dot + 1, eq - dot - 1);
    std::string val = s.substr(eq + 1);
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(val, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != val.size()) {
      return Usage("--set " + s + ": '" + val + "' is not a number");
    }
    bool applied = false;
    for (sim::PolicyVariant& pv : spec->policies) {
      if (pv.policy == pol) {
        pv.knobs[knob] = v;
        applied = true;
      }
    }
    if (!applied) {
      return Usage("--set " + s + ": policy '" + pol + "' is not selected");
    }
  }
  // Traces. Choice: a trace is streamed -- read twice (totals, then the
  // replay), never held, so memory does not grow with its length -- unless
  // something needs it whole: an offline policy (Belady's next accesses) or
  // the offline optimum. Otherwise it is read once, straight into the
  // replay's compact form, shared by every cell (and every --jobs thread).
  const bool needs_whole =
      (spec->solve_optimum && !spec->entry_capacity &&
       sim::OptimumAvailable()) ||
      std::any_of(spec->policies.begin(), spec->policies.end(),
                  [](const sim::PolicyVariant& v) {
                    const PolicyInfo* info = FindPolicy(v.policy);
                    return info == nullptr ||
                           info->kind == PolicyKind::kOffline;
                  });
  Result<sim::TraceFormat> format = sim::ParseTraceFormat(f.trace_format);
  if (!format.ok())
    return Usage("--trace-format: " + format.status().message());
  const bool show_progress = f.progress || isatty(STDERR_FILENO) == 1;
  for (const std::string& path : f.traces) {
    const auto start = std::chrono::steady_clock::now();
    sim::ProgressBar bar(std::cerr, "MiB read of " + path, show_progress);
    sim::TraceReadOptions read{.format = *format, .prepare = spec->prepare};
    read.progress = [&](uint64_t done, uint64_t total) {
      bar.Update(done >> 20, std::max<uint64_t>(1, total >> 20));
    };
    uint64_t records = 0;
    if (needs_whole) {
      Result<sim::PreparedTrace> t = sim::ReadPreparedTrace(path, read);
      bar.Finish();
      if (!t.ok()) return Usage(t.status().message());
      records = t->records;
      if (records != 0) {
        spec->prepared_traces.push_back(
            std::make_shared<const sim::PreparedTrace>(std::move(*t)));
      }
    } else {
      Result<sim::StreamedTrace> t = sim::ScanStreamedTrace(path, read);
      bar.Finish();
      if (!t.ok()) return Usage(t.status().message());
      records = t->totals.records;
      if (records != 0) {
        spec->streamed_traces.push_back(
            std::make_shared<const sim::StreamedTrace>(std::move(*t)));
      }
    }
    if (records == 0) {
      return Usage(path + ": the trace has no records (nothing to replay)");
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (show_progress) {
      std::cerr << "toolcache sim: " << (needs_whole ? "read " : "scanned ")
                << path << ": " << records << " requests in "
                << std::to_string(secs) << " s ("
                << std::to_string(static_cast<double>(records) /
                                  std::max(secs, 1e-9) / 1e6)
                << " M requests/s)"
                << (needs_whole ? "" : "; streamed, not held") << "\n";
    }
  }
  return true;
}

int Run(const SimFlags& f) {
  if (!f.config.empty() || f.engine) return RunEngine(f);
  if (!f.invalidation.empty()) {
    std::cerr << "toolcache sim: --invalidation needs --config or --engine\n";
    return kExitUsage;
  }
  sim::ExperimentSpec spec;
  if (!BuildSpec(f, &spec)) return kExitUsage;
  const bool json = f.format == "json";
  if (f.optimum && spec.entry_capacity) {
    std::cerr << "toolcache sim: note: the offline optimum is byte-capacity "
                 "only; not solved with --capacity entries\n";
  }
  const bool show_progress = f.progress || isatty(STDERR_FILENO) == 1;

  if (!f.out.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(f.out, ec);
    if (ec) {
      std::cerr << "toolcache sim: cannot create --out directory '" << f.out
                << "': " << ec.message() << "\n";
      return kExitUsage;
    }
  }

  // Table 3 ablation: VAAC with vs without user grouping on multiuser.
  sim::ExperimentSpec ablation;
  const PolicyInfo* vaac = FindPolicy("vaac");
  bool run_ablation =
      vaac != nullptr && FindKnob(*vaac, kUserGroupingKnob) &&
      std::find(spec.workloads.begin(), spec.workloads.end(),
                sim::WorkloadKind::kMultiUser) != spec.workloads.end() &&
      std::any_of(
          spec.policies.begin(), spec.policies.end(),
          [](const sim::PolicyVariant& v) { return v.policy == "vaac"; });
  const std::string with_label = "vaac user-grouping";
  const std::string without_label = "vaac global-grouping";
  if (run_ablation) {
    ablation = spec;
    ablation.workloads = {sim::WorkloadKind::kMultiUser};
    ablation.traces.clear();
    ablation.prepared_traces.clear();
    ablation.streamed_traces.clear();
    // Choice: Table 3 shows no fractions of optimum, so the ablation solves
    // none (table3.jsonl has no fraction fields).
    ablation.optimum_for_synthetic = false;
    ablation.policies.clear();
    for (const sim::PolicyVariant& v : spec.policies) {
      if (v.policy != "vaac") continue;
      sim::PolicyVariant with = v, without = v;
      with.label = with_label;
      with.knobs[kUserGroupingKnob] = 1;
      without.label = without_label;
      without.knobs[kUserGroupingKnob] = 0;
      ablation.policies = {with, without};
      break;
    }
  }

  // Units: replay cells plus optimum solves, of the main grid and of the
  // user-grouping ablation (sim::ExperimentWork counts both kinds).
  sim::ProgressBar bar(std::cerr, "cells + optimum solves (toolcache sim)",
                       show_progress);
  const uint64_t main_cells = sim::ExperimentWork(spec);
  const uint64_t ablation_cells =
      run_ablation ? sim::ExperimentWork(ablation) : 0;
  spec.progress = [&](uint64_t d, uint64_t) {
    bar.Update(d, main_cells + ablation_cells);
  };
  const auto replay_start = std::chrono::steady_clock::now();
  Result<std::vector<sim::RunRecord>> runs = sim::RunExperiment(spec);
  if (runs.ok() && show_progress) {
    // Throughput of the grid (every cell's requests, optimum solves
    // included in the time), on stderr with the bar.
    uint64_t replayed = 0;
    for (const sim::RunRecord& r : *runs) replayed += r.metrics.requests;
    const double secs = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - replay_start)
                            .count();
    bar.Finish();
    std::cerr << "toolcache sim: replayed " << replayed << " requests in "
              << runs->size() << " cells in " << std::to_string(secs) << " s ("
              << std::to_string(replayed / std::max(secs, 1e-9) / 1e6)
              << " M requests/s)\n";
  }
  if (!runs.ok()) {
    bar.Finish();
    std::cerr << "toolcache sim: " << runs.status().message() << "\n";
    // A trace that contradicts itself (FailedPrecondition: a forged plain
    // declaration, or a file changed between its reads) is bad input too.
    return runs.status().code() == StatusCode::kInvalidArgument ||
                   runs.status().code() == StatusCode::kFailedPrecondition
               ? kExitUsage
               : kExitFailure;
  }
  std::vector<sim::RunRecord> ablation_runs;
  if (run_ablation) {
    ablation.progress = [&](uint64_t d, uint64_t) {
      bar.Update(main_cells + d, main_cells + ablation_cells);
    };
    Result<std::vector<sim::RunRecord>> a = sim::RunExperiment(ablation);
    if (!a.ok()) {
      bar.Finish();
      std::cerr << "toolcache sim: user-grouping ablation: "
                << a.status().message() << "\n";
      return kExitFailure;
    }
    ablation_runs = std::move(*a);
  }
  bar.Finish();

  std::string tables = sim::HitRatioTable(*runs) + "\n";
  std::string cost = sim::CostTable(*runs, "zipf");
  if (!cost.empty()) tables += cost + "\n";
  if (run_ablation) {
    tables += sim::UserGroupingTable(ablation_runs, "multiuser", with_label,
                                     without_label) +
              "\n";
  }
  std::string optimum = sim::OptimumTable(*runs);
  if (!optimum.empty()) tables += optimum + "\n";
  std::string traces = sim::TraceTable(*runs);
  if (!traces.empty()) tables += traces + "\n";
  // Printed with --details, always in summary.txt.
  const std::string details = f.details || !f.out.empty()
                                  ? sim::DetailsTable(*runs) + "\n"
                                  : std::string();
  const std::string safety = sim::SafetyLine(*runs);

  if (json) {
    for (const sim::RunRecord& r : *runs)
      std::cout << sim::RecordToJson(r) << "\n";
  } else {
    std::cout << tables << (f.details ? details : "") << safety;
  }
  std::cout << std::flush;

  if (!f.out.empty()) {
    std::ofstream results(f.out + "/results.jsonl");
    for (const sim::RunRecord& r : *runs)
      results << sim::RecordToJson(r) << "\n";
    if (run_ablation) {
      std::ofstream t3(f.out + "/table3.jsonl");
      for (const sim::RunRecord& r : ablation_runs) {
        t3 << sim::RecordToJson(r) << "\n";
      }
    }
    std::ofstream summary(f.out + "/summary.txt");
    summary << tables << details << safety;  // details always here
    if (!results || !summary) {
      std::cerr << "toolcache sim: cannot write results into '" << f.out
                << "'\n";
      return kExitFailure;
    }
    if (!f.no_plots) {
      Status s = sim::WritePlots(*runs, f.out);
      if (!s.ok()) {
        std::cerr << "toolcache sim: warning: plots not drawn: " << s.message()
                  << "\n";
      } else {
        // List the plots that exist: optimum.png only when one was solved.
        std::string pngs;
        for (const char* png :
             {"fig3.png", "fig4.png", "paid.png", "optimum.png"}) {
          const std::string path = f.out + "/" + png;
          if (std::filesystem::exists(path)) pngs += ", " + path;
        }
        std::cerr << "toolcache sim: wrote " << f.out << "/results.jsonl, "
                  << f.out << "/summary.txt" << pngs << "\n";
      }
    }
  }
  const bool unsafe =
      std::any_of(runs->begin(), runs->end(),
                  [](const auto& r) { return r.metrics.command_served != 0; });
  if (unsafe) {
    std::cerr << "toolcache sim: a COMMAND call was served from cache\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

Command AddSimCommand(CLI::App& root) {
  auto flags = std::make_shared<SimFlags>();
  Command c;
  c.app = root.add_subcommand(
      "sim",
      "Simulate caching policies on the paper's workloads and on traces "
      "(hit ratio, latency, cost; tables, JSON Lines, plots)");
  CLI::App* a = c.app;
  a->add_option("--workload", flags->workloads,
                "zipf,hotspot,uniform,multiuser or all (default: all, or "
                "none when --trace is given)");
  a->add_option("--policy", flags->policies,
                "registry policies, comma-separated, or all (default: "
                "lru,caca,vaac)");
  a->add_option("--sizes", flags->sizes,
                "cache sizes in % of the unique cacheable bytes (entries "
                "with --capacity entries; default 10,20,35,50,90)");
  a->add_option("--seeds", flags->seeds, "seeds per synthetic workload (10)");
  a->add_option("--requests", flags->requests,
                "requests per synthetic workload (1000)");
  a->add_option("--format", flags->format, "table (default) or json");
  a->add_option("--out", flags->out,
                "directory for results.jsonl, summary.txt and plots (out); "
                "'' writes nothing");
  a->add_option("--trace", flags->traces,
                "a trace to replay: JSON Lines, toolcache binary, libCacheSim "
                "oracleGeneral or CSV (repeatable; docs/TRACES.md)");
  a->add_option("--trace-format", flags->trace_format,
                "format of every --trace: auto (default: binary magic, "
                "*.oracleGeneral*, *.csv, else jsonl), jsonl, bin, "
                "oracle-general, csv (docs/TRACES.md)");
  a->add_option("--jobs", flags->jobs, "worker threads (0 = all cores)");
  a->add_flag("--no-plots", flags->no_plots, "do not run gnuplot");
  a->add_option("--set", flags->sets,
                "policy knob, e.g. --set vaac.lambda1=0.6 (repeatable)");
  a->add_option("--capacity", flags->capacity,
                "size unit: bytes (default) or entries");
  a->add_option("--scope", flags->scope,
                "who shares entries: global (default), user, session");
  a->add_flag("--optimum", flags->optimum,
              "also solve the offline optimum for synthetic workloads");
  a->add_flag("--no-optimum", flags->no_optimum,
              "solve no offline optimum, not even for traces");
  a->add_option("--optimum-time-limit", flags->optimum_time_limit,
                "seconds per optimum solve (60); a solve that runs out "
                "reports an upper bound");
  a->add_option("--optimum-max-exact", flags->optimum_max_exact,
                "largest trace (requests) solved exactly by the ILP (5000); "
                "longer ones get the LP bound");
  a->add_option("--keys-scale", flags->keys_scale,
                "multiply every synthetic tool's key count (1 = the paper's "
                "~540 cacheable keys)");
  a->add_flag("--details", flags->details,
              "also print the per-cell details table on stdout (always in "
              "summary.txt)");
  a->add_flag("--limits", flags->limits,
              "also replay the limit rows (belady, infinite: the registry's "
              "offline and unbounded policies)");
  a->add_flag("--progress", flags->progress,
              "draw the progress bar even when stderr is not a terminal");
  a->add_option("--config", flags->config,
                "replay each --trace through the engine (a real ToolCache) "
                "with this configuration file, the faces' YAML");
  a->add_flag("--engine", flags->engine,
              "replay each --trace through the engine with the faces' "
              "default configuration");
  a->add_option("--invalidation", flags->invalidation,
                "with --config/--engine: server or resource (overrides the "
                "file's invalidation)");
  c.run = [flags] { return Run(*flags); };
  return c;
}

}  // namespace toolcache::cli
