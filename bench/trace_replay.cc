// End-to-end trace replay (issue 17): read a trace file, prepare it and
// replay one policy at one cache size, on one thread -- the whole of
// `toolcache sim --trace F --policy lru --sizes 10` minus the reports.
//
// Side by side in one run, each in a fresh child process (so each gets its
// own peak RSS): the reference reader (ReadTraceFile + PrepareTrace, what
// `sim --trace` did before issue 17) and the fast readers (ReadPreparedTrace)
// on JSON Lines, toolcache binary, libCacheSim oracleGeneral and CSV. Prints
// per reader the median requests per CPU-second of the child end to end
// (read + prepare + replay; CPU time, so that a shared machine does not
// distort it; the wall-clock rate beside it) over --runs runs,
// the ratio to the reference reader, the peak RSS (and bytes per request
// above the process's RSS before reading), and the misses (identical
// across readers, or the run fails).
//
// Usage: bench_trace_replay [--runs N] [--policy P] [--pct X]
//          [--jsonl F] [--bin F] [--oracle F] [--csv F] [--no-reference]
// Make the files with bench/zipf_trace.py and `toolcache trace convert --to
// bin` (docs/SIM.md, "Trace replay speed"). Run pinned to one core:
//   taskset -c 0 build/bench/bench_trace_replay --jsonl ... --bin ...
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "src/sim/replay.h"
#include "src/sim/trace_formats.h"
#include "toolcache/trace.h"

namespace toolcache {
namespace {

struct Outcome {
  double seconds = 0;
  double read_seconds = 0;
  double wall_seconds = 0;
  uint64_t requests = 0;
  uint64_t misses = 0;
  long max_rss_kib = 0;
  long base_rss_kib = 0;
  int ok = 0;
};

double CpuSeconds() {
  struct rusage u {};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

long MaxRssKib() {
  struct rusage u {};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// Runs one read + replay in a child; returns what it measured.
Outcome RunChild(const std::string& path, bool reference,
                 sim::TraceFormat format, const std::string& policy,
                 double pct) {
  int fds[2];
  if (pipe(fds) != 0) std::abort();
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    Outcome o;
    o.base_rss_kib = MaxRssKib();
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = CpuSeconds();
    Result<sim::PreparedTrace> p = [&]() -> Result<sim::PreparedTrace> {
      if (reference) {
        Result<Trace> t = ReadTraceFile(path);
        if (!t.ok()) return t.status();
        return sim::PrepareTrace(*t, {});
      }
      return sim::ReadPreparedTrace(path, {.format = format});
    }();
    const auto t1 = std::chrono::steady_clock::now();
    const double c1 = CpuSeconds();
    if (p.ok()) {
      Result<sim::ReplayMetrics> m =
          sim::Replay(*p, {.policy = policy,
                           .capacity_bytes = sim::CapacityForPercent(*p, pct)});
      if (m.ok()) {
        o.ok = 1;
        o.requests = m->requests;
        o.misses = m->misses;
      } else {
        std::fprintf(stderr, "%s\n", m.status().message().c_str());
      }
    } else {
      std::fprintf(stderr, "%s\n", p.status().message().c_str());
    }
    const auto t2 = std::chrono::steady_clock::now();
    o.read_seconds = c1 - c0;
    o.seconds = CpuSeconds() - c0;
    o.wall_seconds = std::chrono::duration<double>(t2 - t0).count();
    (void)t1;
    o.max_rss_kib = MaxRssKib();
    if (write(fds[1], &o, sizeof(o)) != static_cast<ssize_t>(sizeof(o))) {
      _exit(1);
    }
    _exit(0);
  }
  close(fds[1]);
  Outcome o;
  if (read(fds[0], &o, sizeof(o)) != static_cast<ssize_t>(sizeof(o))) {
    o.ok = 0;
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return o;
}

int Main(int argc, char** argv) {
  int runs = 5;
  std::string policy = "lru";
  double pct = 10;
  bool with_reference = true;
  struct Input {
    std::string label;
    std::string path;
    bool reference;
    sim::TraceFormat format;
  };
  std::vector<Input> inputs;
  std::string jsonl;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--no-reference") {
      with_reference = false;
      continue;
    }
    if (v == nullptr) {
      std::fprintf(stderr, "bench_trace_replay: %s needs a value\n", a.c_str());
      return 2;
    }
    ++i;
    if (a == "--runs") {
      runs = std::atoi(v);
    } else if (a == "--policy") {
      policy = v;
    } else if (a == "--pct") {
      pct = std::atof(v);
    } else if (a == "--jsonl") {
      jsonl = v;
      inputs.push_back({"jsonl (fast)", v, false, sim::TraceFormat::kJsonl});
    } else if (a == "--bin") {
      inputs.push_back({"bin", v, false, sim::TraceFormat::kBinary});
    } else if (a == "--oracle") {
      inputs.push_back(
          {"oracleGeneral", v, false, sim::TraceFormat::kOracleGeneral});
    } else if (a == "--csv") {
      inputs.push_back({"csv", v, false, sim::TraceFormat::kCsv});
    } else {
      std::fprintf(stderr, "bench_trace_replay: unknown flag %s\n", a.c_str());
      return 2;
    }
  }
  if (inputs.empty() || runs < 1) {
    std::fprintf(stderr,
                 "usage: bench_trace_replay [--runs N] [--policy P] [--pct X] "
                 "[--jsonl F] [--bin F] [--oracle F] [--csv F] "
                 "[--no-reference]\n");
    return 2;
  }
  if (with_reference && !jsonl.empty()) {
    inputs.insert(inputs.begin(), {"jsonl (reference reader)", jsonl, true,
                                   sim::TraceFormat::kJsonl});
  }
  std::printf("policy %s at %g%% of the unique bytes, %d runs each, medians\n",
              policy.c_str(), pct, runs);
  std::printf("%-26s %12s %10s %10s %9s %10s %10s %9s\n", "reader",
              "M req/cpu-s", "(wall)", "read cpu-s", "ratio", "peak MiB",
              "B/request", "misses");
  double reference_rate = 0;
  uint64_t misses = 0;
  bool first = true;
  for (const Input& in : inputs) {
    std::vector<double> rates, walls, reads, rss, per_req;
    Outcome last;
    for (int r = 0; r < runs; ++r) {
      Outcome o = RunChild(in.path, in.reference, in.format, policy, pct);
      if (!o.ok) {
        std::fprintf(stderr, "bench_trace_replay: %s failed\n",
                     in.label.c_str());
        return 1;
      }
      rates.push_back(static_cast<double>(o.requests) / o.seconds / 1e6);
      walls.push_back(static_cast<double>(o.requests) / o.wall_seconds / 1e6);
      reads.push_back(o.read_seconds);
      rss.push_back(static_cast<double>(o.max_rss_kib) / 1024.0);
      per_req.push_back(static_cast<double>(o.max_rss_kib - o.base_rss_kib) *
                        1024.0 / static_cast<double>(o.requests));
      last = o;
    }
    if (first) {
      misses = last.misses;
      first = false;
    } else if (last.misses != misses) {
      std::fprintf(stderr, "bench_trace_replay: %s: %llu misses, not %llu\n",
                   in.label.c_str(),
                   static_cast<unsigned long long>(last.misses),
                   static_cast<unsigned long long>(misses));
      return 1;
    }
    const double rate = bench::Median(rates);
    if (reference_rate == 0) reference_rate = rate;
    std::printf("%-26s %12.3f %10.3f %10.3f %8.2fx %10.1f %10.1f %9llu\n",
                in.label.c_str(), rate, bench::Median(walls),
                bench::Median(reads), rate / reference_rate, bench::Median(rss),
                bench::Median(per_req),
                static_cast<unsigned long long>(last.misses));
  }
  return 0;
}

}  // namespace
}  // namespace toolcache

int main(int argc, char** argv) { return toolcache::Main(argc, argv); }
