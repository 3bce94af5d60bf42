#!/usr/bin/env bash
# Edge coverage of each fuzz target's own sources, from its corpus:
# runs build-fuzz/fuzz/fuzz_<target> over fuzz/corpus/<target> (and the
# working corpus build-fuzz/work/<target> that fuzz/run.sh grew, when
# present) with libFuzzer's -runs=0 -print_coverage=1, and sums the
# covered / total instrumented edges of the functions in the files the
# target is about (below). Needs llvm-symbolizer (package llvm).
# Usage: fuzz/coverage.sh [TARGET...]   (after fuzz/build.sh or fuzz/run.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build-fuzz
files_for() {
  case $1 in
    canonical_json) echo 'src/core/canonical_json\.cc|src/core/key\.cc' ;;
    config) echo 'src/config/config\.cc' ;;
    trace_convert) echo 'src/sim/convert_[a-z]*\.cc|src/sim/trace\.cc' ;;
    mcp_scan) echo 'src/mcp/json_scan\.cc|src/mcp/line_reader\.h' ;;
    mcp_session) echo 'src/mcp/session\.cc|src/mcp/tools_list\.cc' ;;
    sse) echo 'src/http/sse\.cc' ;;
    llm_wire) echo 'src/llm/wire\.cc|src/llm/observer\.cc' ;;
  esac
}
targets=("$@")
if ((${#targets[@]} == 0)); then
  for src in fuzz/*_fuzz.cc; do targets+=("$(basename "$src" _fuzz.cc)"); done
fi
printf '%-16s %7s %15s  %s\n' target inputs "edges covered" files
for t in "${targets[@]}"; do
  corpora=("fuzz/corpus/$t")
  [ -d "$dir/work/$t" ] && corpora+=("$dir/work/$t")
  inputs=$(find "${corpora[@]}" -type f | wc -l)
  pattern=$(files_for "$t")
  "$dir/fuzz/fuzz_$t" -runs=0 -print_coverage=1 "${corpora[@]}" 2>&1 |
    grep -E '^(UN)?COVERED_FUNC: ' | grep -E "($pattern):[0-9]+$" |
    sed -E 's/.* edges: ([0-9]+)\/([0-9]+) .*/\1 \2/' |
    awk -v t="$t" -v n="$inputs" -v f="$pattern" '
      { c += $1; a += $2 }
      END { gsub(/\\/, "", f);
            printf "%-16s %7d %7d/%-5d %5.1f%%  %s\n", t, n, c, a,
                   a ? 100 * c / a : 0, f }'
done
