#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/build.sh) and fuzzes each for a time
# budget, one process per target, one after another.
# Usage: fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]   (default 60, all)
#   FUZZ_MERGE=1  merges into fuzz/corpus/<target> the inputs of this run
#                 that add an edge (libFuzzer -merge=1 -use_counters=0);
#                 everything else it found stays in the working corpus.
#   FUZZ_SKIP_BUILD=1  uses the existing build-fuzz/.
# Each run starts from fuzz/corpus/<target> (read-only) plus a working
# corpus in build-fuzz/work/<target> (outside git; filled on first use from
# the archive in git history, fuzz/settings.sh restore_work_corpus); crashes go to
# build-fuzz/artifacts/<target>/; the log (with libFuzzer's final stats) to
# build-fuzz/logs/<target>.log. Prints one line per target: executions,
# executions per second, edge coverage (cov), features (ft), crashes.
#
# The per-target flags (-max_len, the dictionary, the entropic threshold)
# and why: fuzz/settings.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
dir=build-fuzz
[ "${FUZZ_SKIP_BUILD:-0}" = 1 ] || fuzz/build.sh "$dir"
targets=("$@")
if ((${#targets[@]} == 0)); then
  for src in fuzz/*_fuzz.cc; do targets+=("$(basename "$src" _fuzz.cc)"); done
fi
. fuzz/settings.sh
mkdir -p "$dir/logs"
status=0
printf '%-16s %12s %8s %7s %7s %8s %s\n' target execs exec/s cov ft seconds crashes
for t in "${targets[@]}"; do
  work=$dir/work/$t
  art=$dir/artifacts/$t/
  mkdir -p "$work" "$art"
  restore_work_corpus "$t" "$work"
  log=$dir/logs/$t.log
  max_len=$(max_len_for "$t")
  args=(-max_total_time="$secs" -print_final_stats=1 -timeout=10
        -rss_limit_mb=2048 -max_len="$max_len" -artifact_prefix="$art"
        "$fuzz_entropic_flag")
  d=$(dict_for "$t" "$dir")
  [ -n "$d" ] && args+=(-dict="$d")
  start=$(date +%s)
  # Crashes of this run only: an old artifact left in $art (a fixed crash
  # kept for reference) must not stop every later run.
  marker=$(mktemp)
  rc=0
  "$dir/fuzz/fuzz_$t" "${args[@]}" "$work" "fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
  took=$(($(date +%s) - start))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  crashes=$(find "$art" -type f -newer "$marker" | wc -l)
  rm -f "$marker"
  printf '%-16s %12s %8s %7s %7s %8s %s\n' "$t" "${execs:-?}" "${rate:-?}" \
    "${cov:-?}" "${ft:-?}" "$took" "$crashes"
  if [ "$rc" != 0 ] || [ "$crashes" != 0 ]; then
    status=1
    echo "  $t: exit $rc; see $log and $art" >&2
  fi
  if [ "${FUZZ_MERGE:-0}" = 1 ]; then
    "$dir/fuzz/fuzz_$t" -merge=1 -use_counters=0 -max_len="$max_len" \
      "fuzz/corpus/$t" "$work" \
      >>"$log" 2>&1
  fi
done
exit $status
