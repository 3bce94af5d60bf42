#!/usr/bin/env python3
"""The simulator's reference Zipf trace (issue 17), in four formats.

Definition (docs/SIM.md, "Trace replay speed"), reproduced exactly with
Python's Mersenne Twister so that any simulator can regenerate it:

  rng = random.Random(seed)                       # seed 42
  sizes: one per key, in key order (key 0, 1, ... keys-1), BEFORE any request:
         min(65536, max(50, round(rng.lognormvariate(ln 700, 1))))
  requests: key = the rank drawn by inverse CDF on the Zipf weights
         w_r = 1 / (r + 1) ** 1.1 (r = 0 .. keys-1, rank 0 the hottest),
         i.e. rng.choices(range(keys), cum_weights=cumsum(w)) per request.

Outputs (each optional, written in one pass):
  --jsonl   toolcache JSON Lines (docs/TRACES.md) with what toolcache's
            readers assume for libCacheSim's formats (trace_formats.h): time =
            index, tool "object", arguments {"id": key}, result_size,
            latency 1, cost 0, ttl 1e12 (never expires within the trace),
            request_type INFORMATIONAL
  --csv     libCacheSim CSV with a header line: time,key,size (time = index)
  --oracle  libCacheSim oracleGeneral binary: packed little-endian records
            {uint32 clock_time; uint64 obj_id; uint32 obj_size;
             int64 next_access_vtime} (24 bytes), next access = the index of
            the key's next request, -1 when none
Only the Python 3 standard library is used.
"""

import argparse
import array
import bisect
import itertools
import math
import random
import struct
import sys


def generate(requests, keys, alpha, seed):
    rng = random.Random(seed)
    mu = math.log(700)
    sizes = [min(65536, max(50, round(rng.lognormvariate(mu, 1.0))))
             for _ in range(keys)]
    cum = list(itertools.accumulate(1.0 / (r + 1) ** alpha
                                    for r in range(keys)))
    total = cum[-1]
    hi = keys - 1
    rnd = rng.random
    # Exactly what rng.choices(range(keys), cum_weights=cum, k=requests) does.
    # An array, not a list: 4 bytes per request (100M requests fit in RAM).
    trace = array.array("l", (bisect.bisect(cum, rnd() * total, 0, hi)
                              for _ in range(requests)))
    return sizes, trace


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=1_000_000)
    ap.add_argument("--keys", type=int, default=100_000)
    ap.add_argument("--alpha", type=float, default=1.1)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--jsonl")
    ap.add_argument("--csv")
    ap.add_argument("--oracle")
    a = ap.parse_args()
    if a.requests < 1 or a.keys < 1:
        sys.exit("zipf_trace.py: --requests and --keys must be >= 1")
    sizes, trace = generate(a.requests, a.keys, a.alpha, a.seed)
    if a.jsonl:
        with open(a.jsonl, "w", encoding="ascii", newline="\n") as f:
            f.writelines(
                '{"time":%d,"session":"","user":"","tool":"object",'
                '"arguments":{"id":%d},"result_size":%d,"latency":1,"cost":0,'
                '"ttl":1e12,"error":false,"request_type":"INFORMATIONAL"}\n'
                % (i, k, sizes[k]) for i, k in enumerate(trace))
    if a.csv:
        with open(a.csv, "w", encoding="ascii", newline="\n") as f:
            f.write("time,key,size\n")
            f.writelines("%d,%d,%d\n" % (i, k, sizes[k])
                         for i, k in enumerate(trace))
    if a.oracle:
        nxt = array.array("q", [-1]) * len(trace)
        last = [-1] * a.keys
        for i in range(len(trace) - 1, -1, -1):
            k = trace[i]
            nxt[i] = last[k]
            last[k] = i
        rec = struct.Struct("<IQIq")
        chunk = 1 << 20  # records per write: bounded memory
        with open(a.oracle, "wb") as f:
            for start in range(0, len(trace), chunk):
                end = min(len(trace), start + chunk)
                f.write(b"".join(rec.pack(i & 0xFFFFFFFF, trace[i],
                                          sizes[trace[i]], nxt[i])
                                 for i in range(start, end)))
    uniq = set(trace)
    print("requests=%d keys=%d unique=%d working_set_bytes=%d" %
          (len(trace), a.keys, len(uniq), sum(sizes[k] for k in uniq)),
          file=sys.stderr)


if __name__ == "__main__":
    main()
