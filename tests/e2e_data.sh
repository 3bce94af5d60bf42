#!/usr/bin/env bash
# The checkout stands alone: nothing in the build, tests, benchmarks or
# scripts reads outside it (no sibling shared folder), and a test whose data file is
# missing fails with a message naming the file instead of crashing.
set -u
SRC="${TOOLCACHE_SOURCE_DIR:?TOOLCACHE_SOURCE_DIR not set}"
BUILD="${TOOLCACHE_BINARY_DIR:?TOOLCACHE_BINARY_DIR not set}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# 1. No reference to the sibling folder of shared data in code, build or scripts
# (the pattern is built in two parts so this file does not name it).
sibling='\.\./'
sibling+='shared'
if grep -rnI --exclude=e2e_data.sh -e "$sibling" -e 'SHARED_DIR' \
  "$SRC/CMakeLists.txt" "$SRC/cmake" "$SRC/src" "$SRC/apps" "$SRC/bench" \
  "$SRC/scripts" "$SRC/tests"/*.sh "$SRC/tests/CMakeLists.txt" \
  "$SRC/tests/support" >"$TMP/refs" 2>/dev/null; then
  fail "references outside the checkout: $(cat "$TMP/refs")"
fi

# 2. Every data file the provenance note lists is in the checkout.
for f in jcs/es6-numbers-100k.txt classify/github-mcp-server-tools.csv \
  traces/bfcl/BFCL_v3_multi_turn_base.json traces/llmcompiler/parallelqa_dataset.json; do
  [ -s "$SRC/tests/data/$f" ] || fail "tests/data/$f missing"
done
ls "$SRC"/tests/data/jcs/input/*.json >/dev/null 2>&1 || fail "tests/data/jcs/input is empty"

# 3. Unit tests that read data, pointed at an empty data folder: they fail
#    (exit 1, not a signal) and name the missing file.
mkdir -p "$TMP/empty"
check_missing() {  # <test binary> <gtest filter>
  local bin="$BUILD/$1"
  [ -x "$bin" ] || { fail "$1 not built"; return; }
  TOOLCACHE_TEST_DATA_DIR="$TMP/empty" "$bin" --gtest_filter="$2" >"$TMP/out" 2>&1
  local rc=$?
  [ "$rc" -eq 1 ] || fail "$1 ($2) with no data: exit $rc, want 1 (a crash is >= 128)"
  grep -q "test data f.* missing: $TMP/empty/" "$TMP/out" ||
    fail "$1 ($2) with no data: no message naming the missing file: $(tail -5 "$TMP/out")"
}
check_missing src/core/toolcache_core_test 'CanonicalJson.*Jcs*:CanonicalJson.*100k*'
check_missing src/sim/toolcache_sim_test 'BfclConverterTest.*:LlmCompilerConverterTest.*:ExperimentTest.InfiniteEquals*'
check_missing src/classify/toolcache_classify_test 'ToolInputTest.*'

if [ "$fails" -gt 0 ]; then
  echo "e2e_data: $fails failure(s)" >&2
  exit 1
fi
echo "e2e_data: ok"
