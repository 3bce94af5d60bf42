#!/usr/bin/env python3
"""Two builds of bench_trace_replay side by side in one run (issue 17).

Runs the PREVIOUS build's and the NEW build's bench_trace_replay alternately,
one child run per reader per round (--runs 1 --no-reference), so both see the
same machine load, and prints per reader the median requests per CPU-second,
peak RSS and bytes per request of each, the ratio new/previous, and the
misses (which must agree).

Usage:
  bench/trace_replay_compare.py --previous OLD/bench_trace_replay \\
      --new build/bench/bench_trace_replay --rounds 3 \\
      --jsonl zipf1m.jsonl --bin zipf1m.bin --oracle zipf1m.oracleGeneral \\
      --csv zipf1m.csv
Run it pinned to one core (taskset -c 0 ...). Only the Python 3 standard
library is used.
"""

import argparse
import statistics
import subprocess
import sys


def run_one(exe, flag, path, policy, pct):
    out = subprocess.run(
        [exe, "--runs", "1", "--no-reference", "--policy", policy, "--pct",
         str(pct), flag, path],
        check=True, capture_output=True, text=True).stdout
    row = out.strip().splitlines()[-1].split()
    # reader label (1-2 words), rate, wall, read, ratio, peak MiB, B/req,
    # misses: the numbers are the last 7 fields.
    rate, wall, read, _, peak, per_req, misses = row[-7:]
    return (float(rate), float(wall), float(read), float(peak), float(per_req),
            int(misses))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--previous", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--policy", default="lru")
    ap.add_argument("--pct", type=float, default=10)
    for f in ("jsonl", "bin", "oracle", "csv"):
        ap.add_argument("--" + f)
    a = ap.parse_args()
    readers = [(f, getattr(a, f)) for f in ("jsonl", "bin", "oracle", "csv")
               if getattr(a, f)]
    if not readers or a.rounds < 1:
        sys.exit("trace_replay_compare.py: give --rounds >= 1 and a trace")
    results = {(r, w): [] for r, _ in readers for w in ("previous", "new")}
    for _ in range(a.rounds):
        for r, path in readers:
            for which, exe in (("previous", a.previous), ("new", a.new)):
                results[(r, which)].append(
                    run_one(exe, "--" + r, path, a.policy, a.pct))
    print("policy %s at %g%% of the unique bytes, %d rounds, medians "
          "(previous / new build, alternating)" % (a.policy, a.pct, a.rounds))
    print("%-8s %14s %14s %7s %14s %14s %9s" %
          ("reader", "prev M req/cpu", "new M req/cpu", "ratio",
           "prev MiB (B/r)", "new MiB (B/r)", "misses"))
    for r, _ in readers:
        p, n = results[(r, "previous")], results[(r, "new")]
        misses = {x[5] for x in p + n}
        if len(misses) != 1:
            sys.exit("trace_replay_compare.py: %s: misses differ: %s" %
                     (r, sorted(misses)))

        def med(rows, i):
            return statistics.median(x[i] for x in rows)

        print("%-8s %14.3f %14.3f %6.2fx %8.1f (%4.0f) %8.1f (%4.0f) %9d" %
              (r, med(p, 0), med(n, 0), med(n, 0) / med(p, 0), med(p, 3),
               med(p, 4), med(n, 3), med(n, 4), misses.pop()))


if __name__ == "__main__":
    main()
