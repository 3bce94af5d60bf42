#!/usr/bin/env python3
"""`toolcache sim` against the bare replay, and its memory by trace length
(issue 32, first goal).

The command a user runs should cost what the bench's bare replay costs: it
replays exactly the policies asked for (no belady/infinite rows unless
--limits) and, with no offline policy or optimum, streams the trace, so its
peak RSS does not grow with the trace. For each trace given (e.g. the same
Zipf trace at 1M and 10M requests) this runs, alternately and ROUNDS times,
  toolcache sim --trace T --policy P --sizes X --no-optimum --jobs 1
  bench_trace_replay --runs 1 --no-reference --policy P --pct X --FORMAT T
(the bench reads the whole trace into memory, then replays) and prints the
median CPU seconds of each child, the ratio sim / bench (goal: ~1.0; before
issue 32 it was 1.6-1.9), and each one's peak RSS (/usr/bin/time -o).

Usage:
  taskset -c 1 bench/sim_overhead.py --toolcache build/apps/toolcache/toolcache \\
      --bench build/bench/bench_trace_replay --traces zipf1m.bin,zipf10m.bin
Formats are told by name (.bin -> --bin, *.oracleGeneral* -> --oracle,
.csv -> --csv, else --jsonl). Only the Python 3 standard library is used.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile


def run(argv):
    """(CPU seconds, peak MiB) of one child."""
    with tempfile.NamedTemporaryFile(mode="r", suffix=".rss") as out:
        timed = (["/usr/bin/time", "-o", out.name, "-f", "%M"]
                 if os.path.exists("/usr/bin/time") else [])
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run(timed + argv, capture_output=True, text=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode != 0:
            sys.exit("failed: %s\n%s" % (" ".join(argv), p.stderr[-2000:]))
        cpu = ((after.ru_utime - before.ru_utime) +
               (after.ru_stime - before.ru_stime))
        try:
            peak = int(out.read().strip().splitlines()[-1]) / 1024.0
        except (ValueError, IndexError):
            peak = float("nan")
    return cpu, peak


def bench_flag(path):
    base = os.path.basename(path)
    if base.endswith(".bin"):
        return "--bin"
    if ".oracleGeneral" in base:
        return "--oracle"
    if base.endswith(".csv"):
        return "--csv"
    return "--jsonl"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--toolcache", required=True)
    ap.add_argument("--bench", default="",
                    help="bench_trace_replay (omit: sim's side only)")
    ap.add_argument("--traces", required=True, help="comma-separated")
    ap.add_argument("--policy", default="lru")
    ap.add_argument("--size", default="10")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    have_bench = bool(a.bench) and os.path.exists(a.bench)
    if not have_bench:
        print("# bench_trace_replay not given or not found: sim side only")
    print("# policy %s at %s %%, CPU seconds and peak RSS, median of %d "
          "rounds" % (a.policy, a.size, a.rounds))
    print("%-28s %10s %10s %7s %10s %10s" % ("trace", "sim cpu-s",
                                            "bench cpu-s", "ratio",
                                            "sim MiB", "bench MiB"))
    for trace in a.traces.split(","):
        sim, bench = [], []
        for _ in range(a.rounds):
            sim.append(run([a.toolcache, "sim", "--trace", trace, "--policy",
                            a.policy, "--sizes", a.size, "--no-optimum",
                            "--jobs", "1", "--format", "json", "--out", ""]))
            if have_bench:
                bench.append(run([a.bench, "--runs", "1", "--no-reference",
                                  "--policy", a.policy, "--pct", a.size,
                                  bench_flag(trace), trace]))
        s_cpu = statistics.median(c for c, _ in sim)
        s_mib = statistics.median(m for _, m in sim)
        if bench:
            b_cpu = statistics.median(c for c, _ in bench)
            b_mib = statistics.median(m for _, m in bench)
            print("%-28s %10.3f %10.3f %6.2fx %10.1f %10.1f" %
                  (os.path.basename(trace), s_cpu, b_cpu, s_cpu / b_cpu,
                   s_mib, b_mib))
        else:
            print("%-28s %10.3f %10s %7s %10.1f %10s" %
                  (os.path.basename(trace), s_cpu, "-", "-", s_mib, "-"))
        sys.stdout.flush()
    print("# ratio = sim CPU / bench CPU (the bench holds the trace; sim "
          "streams it without offline policies)")


if __name__ == "__main__":
    main()
