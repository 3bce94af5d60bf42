#!/usr/bin/env bash
# Measures a fuzz target's speed in executions per CPU second, which a
# shared, loaded machine disturbs far less than executions per wall second.
# Runs the target twice with a fixed seed on a fresh working corpus: once
# only loading fuzz/corpus/<target> (-runs=0), once loading it and then
# fuzzing RUNS more inputs; the difference of the two CPU times is the
# fuzzing phase. Prints both (corpus loading is paid again by every
# fuzz/rotate.sh slice).
# Usage: fuzz/rate.sh TARGET RUNS [BINARY_DIR] [libFuzzer flags...]
#   BINARY_DIR defaults to build-fuzz/fuzz (e.g. a copy of older binaries);
#   the flags default to fuzz/run.sh's (fuzz/settings.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
t=$1
runs=$2
bin=${3:-build-fuzz/fuzz}
shift 2
(($# > 0)) && shift
flags=("$@")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. fuzz/settings.sh
if ((${#flags[@]} == 0)); then
  flags=(-max_len="$(max_len_for "$t")" "$fuzz_entropic_flag")
fi
dict=$(dict_for "$t" "$tmp")
cpu() {  # runs the target with "$@"; prints user+sys seconds
  rm -rf "$tmp/work"
  mkdir "$tmp/work"
  /usr/bin/time -f "%U %S" -o "$tmp/time" "$bin/fuzz_$t" "$@" -seed=1 \
    -timeout=10 -rss_limit_mb=2048 -dict="$dict" "${flags[@]}" \
    "$tmp/work" "fuzz/corpus/$t" >"$tmp/log" 2>&1
  awk '{print $1 + $2}' "$tmp/time"
}
load=$(cpu -runs=0)
loaded=$(grep -o '^#[0-9]*' "$tmp/log" | tail -1 | tr -d '#')
total=$(cpu -runs=$((loaded + runs)))
awk -v t="$t" -v n="$loaded" -v l="$load" -v r="$runs" -v c="$total" 'BEGIN {
  printf "%s: corpus %d inputs in %.2f s CPU; fuzzing %d runs in %.2f s CPU: %d exec/CPU-s\n",
    t, n, l, r, c - l, r / (c - l) }'
