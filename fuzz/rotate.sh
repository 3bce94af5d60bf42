#!/usr/bin/env bash
# Long fuzzing on a shared machine: runs the targets one at a time (one
# process, -fork=0, `nice -n 19`), in slices, round after round, until a
# wall-clock deadline, merging what each slice found into fuzz/corpus/
# (FUZZ_MERGE=1 of run.sh: -merge=1 keeps only inputs that add coverage).
# Every slice appends run.sh's line (executions, exec/s, cov, ft, seconds,
# crashes) to build-fuzz/tally.txt and keeps its log as
# build-fuzz/logs/<target>.<n>.log; fuzz/tally.sh sums the tally per target.
# Stops at the first crash (its input is in build-fuzz/artifacts/<target>/).
# Usage: fuzz/rotate.sh UNTIL SLICE_SECONDS TARGET[:SLICES]...
#   UNTIL is anything `date -d` reads (e.g. 16:00); TARGET:2 gets two slices
#   per round (a fast target reaching its executions sooner).
# Expects build-fuzz/ built (fuzz/build.sh); a target whose binary is not
# there yet is skipped until it is.
set -euo pipefail
cd "$(dirname "$0")/.."
until_s=$(date -d "$1" +%s)
if ((until_s <= $(date +%s))); then
  # `date -d 00:05` is today's 00:05: give a date when UNTIL is past midnight.
  echo "rotate.sh: UNTIL '$1' is $(date -d "@$until_s"), in the past" >&2
  exit 2
fi
slice=$2
shift 2
dir=build-fuzz
tally=$dir/tally.txt
mkdir -p "$dir/logs"
n=$(find "$dir/logs" -name '*.*.log' | wc -l)
while :; do
  ran=0
  for spec in "$@"; do
    t=${spec%%:*}
    # A target still being built (fuzz/build.sh running beside) waits.
    [ -x "$dir/fuzz/fuzz_$t" ] || continue
    reps=1
    [ "$spec" != "$t" ] && reps=${spec#*:}
    for ((i = 0; i < reps; i++)); do
      ran=1
      left=$((until_s - $(date +%s)))
      ((left >= 30)) || exit 0
      secs=$((left < slice ? left : slice))
      n=$((n + 1))
      rc=0
      out=$(FUZZ_SKIP_BUILD=1 FUZZ_MERGE=1 nice -n 19 fuzz/run.sh "$secs" "$t" 2>&1) || rc=$?
      cp "$dir/logs/$t.log" "$dir/logs/$t.$n.log"
      echo "$(date -u +%FT%TZ) $(echo "$out" | sed -n 2p)" >>"$tally"
      if [ "$rc" != 0 ]; then
        echo "$(date -u +%FT%TZ) STOP $t: $out" >>"$tally"
        exit 1
      fi
    done
  done
  ((ran)) || sleep 10
done
