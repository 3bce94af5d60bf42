#!/usr/bin/env bash
# End-to-end tests of `toolcache sim`: bad flags exit 2 with a message, JSON
# Lines count == workloads x policies x sizes x seeds with the documented
# fields, tables and plots on a default-shaped run, trace replay with session
# invalidation and stale counting.
set -u
BIN=${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the toolcache binary}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0

check() {  # check NAME CONDITION-RESULT(0 ok)
  if [ "$2" -ne 0 ]; then
    echo "FAIL: $1"
    fail=1
  else
    echo "ok: $1"
  fi
}

expect_usage() {  # expect_usage NAME ARGS...
  local name=$1
  shift
  "$BIN" sim --out '' --no-plots "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  if [ $rc -ne 2 ] || ! grep -q . "$TMP/err"; then
    echo "FAIL: $name: expected exit 2 with a message, got $rc"
    cat "$TMP/err"
    fail=1
  else
    echo "ok: $name -> exit 2: $(head -1 "$TMP/err")"
  fi
}

expect_usage "bad format" --format xml
expect_usage "zero size" --sizes 0
expect_usage "size over 100" --sizes 150
expect_usage "size not a number" --sizes ten
expect_usage "unknown policy" --policy nope
expect_usage "unknown workload" --workload zipfian
expect_usage "zero seeds" --seeds 0
expect_usage "bad --set" --set lru
expect_usage "unknown knob" --policy lru --set lru.nope=1
expect_usage "--set for unselected policy" --policy lru --set vaac.lambda1=1
expect_usage "bad capacity unit" --capacity pages
expect_usage "missing trace" --trace "$TMP/missing.jsonl"
expect_usage "unknown flag" --frobnicate

# JSON Lines: 2 workloads x 2 policies x 2 sizes x 3 seeds = 24.
"$BIN" sim --workload zipf,uniform --policy lru,vaac --sizes 10,50 --seeds 3 \
  --requests 300 --format json --out '' --jobs 2 >"$TMP/a.jsonl" 2>"$TMP/err"
check "json run exits 0" $?
lines=$(wc -l <"$TMP/a.jsonl")
[ "$lines" -eq 24 ]
check "json line count 24 (got $lines)" $?
python3 - "$TMP/a.jsonl" <<'EOF'
import json, sys
ints = ["seed", "total_size", "admissions", "evictions", "expired_misses",
        "command_served"]
floats = ["cache_size_pct", "hit_ratio", "byte_hit_ratio", "total_latency",
          "total_cost"]
for line in open(sys.argv[1]):
    r = json.loads(line)
    assert isinstance(r["workload"], str) and isinstance(r["policy"], str), r
    for f in ints:
        assert isinstance(r[f], int) and not isinstance(r[f], bool), (f, r)
    for f in floats:
        assert isinstance(r[f], (int, float)), (f, r)
    assert 0 <= r["hit_ratio"] <= 1, r
    assert r["command_served"] == 0, r
    assert r["hits"] + r["misses"] == r["requests"] == 300, r
EOF
check "json fields present, typed, command_served == 0" $?

# Same grid on one thread: byte-identical output.
"$BIN" sim --workload zipf,uniform --policy lru,vaac --sizes 10,50 --seeds 3 \
  --requests 300 --format json --out '' --jobs 1 >"$TMP/b.jsonl" 2>/dev/null
cmp -s "$TMP/a.jsonl" "$TMP/b.jsonl"
check "results identical for --jobs 1 and --jobs 2" $?

# Default-shaped run (fewer seeds): tables on stdout, files and plots in --out.
"$BIN" sim --seeds 2 --out "$TMP/res" >"$TMP/table.txt" 2>"$TMP/err"
check "table run exits 0" $?
for want in "Fig. 3" "Fig. 4" "Table 3" "command_served=0" "vaac-lru"; do
  grep -q "$want" "$TMP/table.txt"
  check "table mentions '$want'" $?
done
[ -s "$TMP/res/results.jsonl" ] && [ -s "$TMP/res/summary.txt" ]
check "results.jsonl and summary.txt written" $?
if command -v gnuplot >/dev/null; then
  [ -s "$TMP/res/fig3.png" ] && [ -s "$TMP/res/fig4.png" ]
  check "fig3.png and fig4.png drawn" $?
fi

# A trace: ls, cd (COMMAND), ls in session s1 -> the second ls misses; a
# result that changed without a COMMAND is served stale and counted.
cat >"$TMP/t.jsonl" <<'EOF'
{"time":0,"session":"s1","tool":"ls","arguments":{},"result_size":10,"latency":0.1,"ttl":3600,"request_type":"INFORMATIONAL","result_digest":"d1"}
{"time":1,"session":"s1","tool":"cd","arguments":{"folder":"docs"},"result_size":1,"latency":0.1,"request_type":"COMMAND"}
{"time":2,"session":"s1","tool":"ls","arguments":{},"result_size":10,"latency":0.1,"ttl":3600,"request_type":"INFORMATIONAL","result_digest":"d2"}
{"time":3,"session":"s2","tool":"cat","arguments":{"f":"a"},"result_size":10,"latency":0.1,"ttl":3600,"request_type":"INFORMATIONAL","result_digest":"x1"}
{"time":4,"session":"s2","tool":"cat","arguments":{"f":"a"},"result_size":10,"latency":0.1,"ttl":3600,"request_type":"INFORMATIONAL","result_digest":"x2"}
EOF
"$BIN" sim --trace "$TMP/t.jsonl" --policy lru --sizes 100 --format json \
  --out '' >"$TMP/t.out" 2>"$TMP/err"
check "trace run exits 0" $?
python3 - "$TMP/t.out" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
lru = [r for r in rows if r["policy"] == "lru"]
assert len(lru) == 1, rows
r = lru[0]
assert r["workload"] == "t", r
assert r["hits"] == 1 and r["invalidations"] == 1 and r["stale_served"] == 1, r
for f in ["saved_latency_fraction_of_opt", "saved_cost_fraction_of_opt"]:
    assert f in r, (f, r)
EOF
check "trace: session invalidation, stale count, optimum fields" $?

exit $fail
