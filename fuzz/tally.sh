#!/usr/bin/env bash
# Sums build-fuzz/tally.txt (fuzz/rotate.sh) per target: slices, executions,
# seconds, executions per second, the last slice's cov and ft, crashes.
# Usage: fuzz/tally.sh [SINCE]   SINCE: only slices that ended at or after
#   this UTC time, written as in the tally (e.g. 2026-11-27T01:18).
set -euo pipefail
cd "$(dirname "$0")/.."
awk -v since="${1:-}" '$2 != "STOP" && NF >= 8 && $1 >= since {
  t = $2; s[t]++; e[t] += $3; sec[t] += $7; cov[t] = $5; ft[t] = $6; c[t] += $8
} END {
  printf "%-16s %6s %12s %8s %8s %7s %7s %s\n", "target", "slices", "execs",
    "seconds", "exec/s", "cov", "ft", "crashes"
  for (t in s) printf "%-16s %6d %12d %8d %8d %7s %7s %d\n", t, s[t], e[t],
    sec[t], (sec[t] ? e[t] / sec[t] : 0), cov[t], ft[t], c[t]
}' build-fuzz/tally.txt
