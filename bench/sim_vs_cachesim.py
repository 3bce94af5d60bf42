#!/usr/bin/env python3
"""`toolcache sim` against libCacheSim's `cachesim`, side by side (issue 32).

For every policy both ship (lru, s3fifo, gdsf, w-tinylfu) and every cache
size, runs one `toolcache sim --trace T --policy P --sizes X --no-optimum`
process and one `cachesim T TYPE P X` process on the same trace, alternately,
ROUNDS times, and prints per cell the median cost of each side, the ratio
cachesim / toolcache (> 1: toolcache is faster; the goal is >= 1.5), the peak
RSS of each and the misses of each (LRU and GDSF must agree exactly; S3-FIFO
and W-TinyLFU differences are explained in docs/SIM.md).

Two pairings (the issue's): toolcache's binary trace against cachesim's
oracleGeneral (--bin / --oracle), and CSV against CSV (--csv: the same file
for both sides; cachesim reads it with time,key,size columns and a header).

Cost: --measure cpu (default) is user+system CPU seconds of the child
(resource.getrusage), the rate printed as M requests per CPU-second; on a
shared machine prefer --measure instructions, which runs each child under
`valgrind --tool=callgrind` and compares instruction counts (repeatable,
but 30-60x slower: keep traces at 1M requests).

--bin, --oracle and --csv take comma-separated lists (the i-th of each is
one trace): one run covers several trace lengths. Or --make-traces DIR
writes the reference Zipf trace (bench/zipf_trace.py) at each length of
--requests into DIR as .bin (via `toolcache trace convert`),
.oracleGeneral and .csv, runs every pair on them, and deletes them at the
end (unless --keep-traces).

Usage:
  taskset -c 1 bench/sim_vs_cachesim.py --toolcache build/apps/toolcache/toolcache \\
      --cachesim /path/to/libCacheSim/_build/bin/cachesim \\
      --bin zipf1m.bin --oracle zipf1m.oracleGeneral --csv zipf1m.csv \\
      --sizes 1,10,20 --rounds 3
  # 1M and 10M requests in one command (traces made in /tmp/z, then deleted):
  taskset -c 1 bench/sim_vs_cachesim.py --toolcache build/apps/toolcache/toolcache \\
      --cachesim CACHESIM --make-traces /tmp/z --requests 1000000,10000000
Without --cachesim (or when the path does not exist) only toolcache's side
is run, with a message. Only the Python 3 standard library is used.
"""

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile

POLICIES = {"lru": "lru", "s3fifo": "s3fifo", "gdsf": "gdsf",
            "w-tinylfu": "wtinylfu"}


def run_child(argv, measure):
    """Runs argv; returns (cost, peak MiB, stdout, stderr)."""
    if measure == "instructions":
        with tempfile.NamedTemporaryFile(suffix=".cg") as out:
            p = subprocess.run(
                ["valgrind", "--tool=callgrind",
                 "--callgrind-out-file=" + out.name] + argv,
                capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit("failed: %s\n%s" % (" ".join(argv), p.stderr[-2000:]))
            m = re.search(r"Collected : (\d+)", p.stderr)
            return int(m.group(1)), 0.0, p.stdout, p.stderr
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(argv, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(argv), p.stderr[-2000:]))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # ru_maxrss of RUSAGE_CHILDREN is the largest child so far: run_child is
    # called with each side alternately, so this is only an upper bound when
    # the previous child was bigger; peak_of() below re-measures exactly.
    return cpu, after.ru_maxrss / 1024.0, p.stdout, p.stderr


def peak_of(argv):
    """Peak RSS (MiB) of argv alone, via /usr/bin/time -o when present."""
    if not os.path.exists("/usr/bin/time"):
        return float("nan")
    with tempfile.NamedTemporaryFile(mode="r", suffix=".rss") as out:
        subprocess.run(["/usr/bin/time", "-o", out.name, "-f", "%M"] + argv,
                       capture_output=True, text=True)
        try:
            return int(out.read().strip().splitlines()[-1]) / 1024.0
        except (ValueError, IndexError):
            return float("nan")


def toolcache_argv(exe, trace, policy, size):
    return [exe, "sim", "--trace", trace, "--policy", policy, "--sizes",
            str(size), "--no-optimum", "--jobs", "1", "--format", "json",
            "--out", ""]


def toolcache_misses(stdout):
    import json
    rows = [json.loads(l) for l in stdout.splitlines() if l.strip()]
    return rows[0]["misses"], rows[0]["requests"]


def cachesim_argv(exe, trace, kind, policy, size):
    argv = [exe, trace, kind, POLICIES[policy], str(size / 100.0),
            "--num-thread", "1"]
    if kind == "csv":
        argv += ["-t", "time-col=1, obj-id-col=2, obj-size-col=3, "
                 "has-header=true, delimiter=,"]
    return argv


def cachesim_misses(stdout, requests):
    m = re.search(r"(\d+) req, miss ratio ([0-9.]+)", stdout)
    if not m:
        return None
    return round(float(m.group(2)) * int(m.group(1)))


def make_traces(toolcache, folder, counts):
    """Writes the reference Zipf trace at each length; returns the lists
    (bins, oracles, csvs) and the files written."""
    os.makedirs(folder, exist_ok=True)
    gen = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "zipf_trace.py")
    bins, oracles, csvs = [], [], []
    for n in counts:
        stem = os.path.join(folder, "zipf%d" % n)
        subprocess.run([sys.executable, gen, "--requests", str(n),
                        "--oracle", stem + ".oracleGeneral",
                        "--csv", stem + ".csv"], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run([toolcache, "trace", "convert", "--to", "bin", "-o",
                        stem + ".bin", stem + ".oracleGeneral"], check=True,
                       stderr=subprocess.DEVNULL)
        bins.append(stem + ".bin")
        oracles.append(stem + ".oracleGeneral")
        csvs.append(stem + ".csv")
    return bins, oracles, csvs


def short(n):
    for unit, div in (("M", 1000000), ("k", 1000)):
        if n >= div and n % div == 0:
            return "%d%s" % (n // div, unit)
    return str(n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--toolcache", required=True)
    ap.add_argument("--cachesim", default="")
    ap.add_argument("--bin", help="toolcache binary trace")
    ap.add_argument("--oracle", help="the same trace as oracleGeneral")
    ap.add_argument("--csv", help="the same trace as CSV (time,key,size)")
    ap.add_argument("--policies", default="lru,s3fifo,gdsf,w-tinylfu")
    ap.add_argument("--sizes", default="1,10,20")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--measure", choices=["cpu", "instructions"],
                    default="cpu")
    ap.add_argument("--memory", action="store_true",
                    help="also measure each side's peak RSS alone")
    ap.add_argument("--make-traces", metavar="DIR",
                    help="write the Zipf traces of --requests into DIR")
    ap.add_argument("--requests", default="1000000,10000000",
                    help="trace lengths for --make-traces")
    ap.add_argument("--keep-traces", action="store_true")
    a = ap.parse_args()
    made = []
    if a.make_traces:
        counts = [int(n) for n in a.requests.split(",")]
        bins, oracles, csvs = make_traces(a.toolcache, a.make_traces, counts)
        a.bin, a.oracle, a.csv = ",".join(bins), ",".join(oracles), \
            ",".join(csvs)
        made = bins + oracles + csvs
    try:
        run(a)
    finally:
        if not a.keep_traces:
            # cachesim writes <trace name>.cachesim into the working folder.
            for f in made:
                for g in (f, os.path.basename(f) + ".cachesim"):
                    if os.path.exists(g):
                        os.remove(g)


def run(a):
    have_cachesim = bool(a.cachesim) and os.path.exists(a.cachesim)
    if not have_cachesim:
        print("# cachesim not given or not found (%r): toolcache side only"
              % a.cachesim)
    pairs = []
    if a.bin:
        oracles = a.oracle.split(",") if a.oracle else []
        for i, b in enumerate(a.bin.split(",")):
            pairs.append(("bin/oracle", b,
                          oracles[i] if i < len(oracles) else None,
                          "oracleGeneral"))
    if a.csv:
        for c in a.csv.split(","):
            pairs.append(("csv/csv", c, c, "csv"))
    if not pairs:
        sys.exit("give --bin (+ --oracle) and/or --csv")
    unit = "M req/cpu-s" if a.measure == "cpu" else "instr/req"
    print("# %s, median of %d rounds, one process per cell, alternating"
          % (a.measure, a.rounds))
    print("%-10s %5s %-10s %5s %14s %14s %7s %9s %9s %9s %9s" %
          ("pair", "req", "policy", "size", "toolcache", "cachesim", "ratio",
           "tc MiB", "cs MiB", "tc miss", "cs miss~"))
    worst = None
    for label, tc_trace, cs_trace, kind in pairs:
        for policy in a.policies.split(","):
            for size in [float(s) for s in a.sizes.split(",")]:
                tc, cs = [], []
                tc_m = cs_m = None
                requests = 1
                for _ in range(a.rounds):
                    argv = toolcache_argv(a.toolcache, tc_trace, policy, size)
                    cost, _, out, _ = run_child(argv, a.measure)
                    tc_m, requests = toolcache_misses(out)
                    tc.append(cost)
                    if have_cachesim and cs_trace:
                        argv = cachesim_argv(a.cachesim, cs_trace, kind,
                                             policy, size)
                        cost, _, out, _ = run_child(argv, a.measure)
                        cs_m = cachesim_misses(out, requests)
                        cs.append(cost)
                tcv = statistics.median(tc)
                csv_ = statistics.median(cs) if cs else None
                tc_peak = cs_peak = float("nan")
                if a.memory:
                    tc_peak = peak_of(toolcache_argv(a.toolcache, tc_trace,
                                                     policy, size))
                    if csv_ is not None:
                        cs_peak = peak_of(cachesim_argv(
                            a.cachesim, cs_trace, kind, policy, size))
                if a.measure == "cpu":
                    tc_show = requests / tcv / 1e6
                    cs_show = requests / csv_ / 1e6 if csv_ else None
                else:
                    tc_show = tcv / requests
                    cs_show = csv_ / requests if csv_ else None
                ratio = csv_ / tcv if csv_ else None
                if ratio is not None:
                    worst = ratio if worst is None else min(worst, ratio)
                print("%-10s %5s %-10s %5g %14.3f %14s %7s %9.1f %9.1f %9s %9s" %
                      (label, short(requests), policy, size, tc_show,
                       "%.3f" % cs_show if cs_show else "-",
                       "%.2fx" % ratio if ratio else "-", tc_peak, cs_peak,
                       tc_m, cs_m if cs_m is not None else "-"))
                sys.stdout.flush()
    print("# %s; ratio = cachesim cost / toolcache cost (goal >= 1.5); "
          "cs miss~ is cachesim's 4-digit miss ratio x requests" % unit)
    if worst is not None:
        print("# worst ratio %.2fx" % worst)


if __name__ == "__main__":
    main()
