#!/usr/bin/env python3
"""VAAC and vaac-plus against toolcache's own LRU, per cache size (issue 32).

Goal: per-request cost independent of the cache size, i.e. `toolcache sim`
replaying the trace with vaac (or vaac-plus) costs at most 1.5x what it
costs with lru, at every size. For each size and policy this runs one
`toolcache sim --trace T --policy P --sizes X --no-optimum --jobs 1` child
(LRU and the others alternating, ROUNDS times) and prints the median cost,
the ratio to LRU at the same size, and the misses.

Cost: --measure cpu (default: user+system CPU seconds of the child) or
--measure instructions (valgrind --tool=callgrind counts: repeatable on a
shared machine, ~50x slower; keep the trace at 1M requests).

Usage:
  taskset -c 1 bench/sim_policy_cost.py --toolcache build/apps/toolcache/toolcache \\
      --trace zipf1m.bin --sizes 1,5,10,20 --policies vaac,vaac-plus --rounds 3
Only the Python 3 standard library is used.
"""

import argparse
import json
import re
import resource
import statistics
import subprocess
import sys
import tempfile


def cost_of(argv, measure):
    if measure == "instructions":
        with tempfile.NamedTemporaryFile(suffix=".cg") as out:
            p = subprocess.run(["valgrind", "--tool=callgrind",
                                "--callgrind-out-file=" + out.name] + argv,
                               capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit("failed: %s\n%s" % (" ".join(argv), p.stderr[-2000:]))
            return int(re.search(r"Collected : (\d+)", p.stderr).group(1)), \
                p.stdout
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(argv, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(argv), p.stderr[-2000:]))
    return ((after.ru_utime - before.ru_utime) +
            (after.ru_stime - before.ru_stime)), p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--toolcache", required=True)
    ap.add_argument("--trace", required=True)
    ap.add_argument("--sizes", default="1,5,10,20")
    ap.add_argument("--policies", default="vaac,vaac-plus")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--measure", choices=["cpu", "instructions"],
                    default="cpu")
    a = ap.parse_args()
    policies = ["lru"] + [p for p in a.policies.split(",") if p != "lru"]
    print("# %s, %s, median of %d rounds" % (a.trace, a.measure, a.rounds))
    print("%-10s %6s %14s %8s %10s" % ("policy", "size", a.measure,
                                      "vs lru", "misses"))
    worst = 0.0
    for size in a.sizes.split(","):
        costs = {p: [] for p in policies}
        misses = {}
        for _ in range(a.rounds):
            for p in policies:
                argv = [a.toolcache, "sim", "--trace", a.trace, "--policy", p,
                        "--sizes", size, "--no-optimum", "--jobs", "1",
                        "--format", "json", "--out", ""]
                c, out = cost_of(argv, a.measure)
                costs[p].append(c)
                misses[p] = json.loads(out.splitlines()[0])["misses"]
        lru = statistics.median(costs["lru"])
        for p in policies:
            m = statistics.median(costs[p])
            ratio = m / lru
            if p != "lru":
                worst = max(worst, ratio)
            print("%-10s %6s %14.4g %7.2fx %10d" % (p, size, m, ratio,
                                                    misses[p]))
        sys.stdout.flush()
    print("# worst ratio to lru %.2fx (goal <= 1.5x)" % worst)


if __name__ == "__main__":
    main()
