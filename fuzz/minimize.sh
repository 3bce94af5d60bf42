#!/usr/bin/env bash
# Re-minimises the corpora kept in the repository, the way OSS-Fuzz
# projects keep theirs: fuzz/corpus/<target>/ holds every named input
# (seed-* from make_seeds.py, crash-* and other regression inputs, always
# kept) plus the smallest set of other inputs that libFuzzer's merge finds
# covering every edge the named inputs, the repository corpus and the
# working corpus cover together (-use_counters=0: edges, not hit counts;
# the hit-count features live in the working corpus). Every input dropped
# from the repository goes into the working corpus build-fuzz/work/<target>/
# first, so nothing a fuzzer found is lost. CI replays what is left
# (fuzz_replay_<target>), which covers the same edges.
# Usage: fuzz/minimize.sh [TARGET...]   (default: all). Prints one line per
# target: inputs before and after, and the edges the kept unnamed inputs add
# to the named ones. FUZZ_SKIP_BUILD=1 uses build-fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build-fuzz
[ "${FUZZ_SKIP_BUILD:-0}" = 1 ] || fuzz/build.sh "$dir"
targets=("$@")
if ((${#targets[@]} == 0)); then
  for src in fuzz/*_fuzz.cc; do targets+=("$(basename "$src" _fuzz.cc)"); done
fi
. fuzz/settings.sh
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
printf '%-16s %8s %8s %8s\n' target before after edges+
for t in "${targets[@]}"; do
  repo=fuzz/corpus/$t
  work=$dir/work/$t
  mkdir -p "$work" "$scratch/$t/keep" "$scratch/$t/rest"
  before=$(find "$repo" -type f | wc -l)
  for f in "$repo"/*; do
    [ -f "$f" ] || continue
    b=$(basename "$f")
    if [[ $b =~ ^[0-9a-f]{40}$ ]]; then
      cp "$f" "$scratch/$t/rest/"
      cp -n "$f" "$work/" # the working corpus keeps every input
    else
      cp "$f" "$scratch/$t/keep/" # named: a seed or a regression input
    fi
  done
  log=$scratch/$t.log
  "$dir/fuzz/fuzz_$t" -merge=1 -use_counters=0 -max_len="$(max_len_for "$t")" \
    -rss_limit_mb=4096 "$scratch/$t/keep" "$scratch/$t/rest" "$work" >"$log" 2>&1 ||
    { cat "$log" >&2; exit 1; }
  find "$repo" -type f -regextype posix-extended -regex '.*/[0-9a-f]{40}' -delete
  cp -n "$scratch/$t/keep"/* "$repo/"
  after=$(find "$repo" -type f | wc -l)
  edges=$(grep -o '[0-9]* new coverage edges' "$log" | tail -1 | cut -d' ' -f1)
  printf '%-16s %8s %8s %8s\n' "$t" "$before" "$after" "${edges:-?}"
done
