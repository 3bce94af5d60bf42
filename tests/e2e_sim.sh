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
expect_usage "empty item in --sizes" --sizes 10,,20
expect_usage "trailing comma in --sizes" --sizes 10,
expect_usage "empty item in --policy" --policy lru,,vaac
expect_usage "--optimum with --no-optimum" --optimum --no-optimum
expect_usage "zero optimum time limit" --optimum-time-limit 0
expect_usage "negative --optimum-max-exact" --optimum-max-exact -1
expect_usage "zero --keys-scale" --keys-scale 0
# The knob range lives in the registry (src/policy); the CLI maps it to 2.
expect_usage "knob out of range" --policy vaac --set vaac.lambda1=-5

# Bad traces: exit 2 with file:line, never a crash or silent acceptance.
: >"$TMP/empty.jsonl"
expect_usage "empty trace" --trace "$TMP/empty.jsonl"
grep -q "has no records" "$TMP/err" || { echo "FAIL: empty trace message"; fail=1; }
printf '{"tool":"a","arguments":{},"result_size":18446744073709551615}\n' >"$TMP/huge.jsonl"
expect_usage "result_size beyond 1 TiB" --trace "$TMP/huge.jsonl"
grep -q "huge.jsonl:1: 'result_size'" "$TMP/err" || { echo "FAIL: size message"; fail=1; }
printf '{"tool":"a","arguments":{},"result_size":1}\n{"tool":"a","arguments":{},"result_size":1,"latency":1e308}\n' >"$TMP/slow.jsonl"
expect_usage "latency 1e308" --trace "$TMP/slow.jsonl"
grep -q "slow.jsonl:2: 'latency'" "$TMP/err" || { echo "FAIL: latency message"; fail=1; }
printf '{"tool":"a","arguments":{},"result_size":1,"cost":1e308}\n' >"$TMP/dear.jsonl"
expect_usage "cost 1e308" --trace "$TMP/dear.jsonl"

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
# Exactly the policies asked for: no limit rows without --limits.
assert [r["policy"] for r in rows] == ["lru"], rows
r = rows[0]
assert r["workload"] == "t", r
assert r["hits"] == 1 and r["invalidations"] == 1 and r["stale_served"] == 1, r
for f in ["saved_latency_fraction_of_opt", "saved_cost_fraction_of_opt"]:
    assert f in r, (f, r)
EOF
check "trace: only the asked policy; invalidation, stale count, optimum fields" $?

# Cross-session touch (the audit's cross.jsonl): A ls, B ls (a hit on A's
# entry), B cd, B ls -> the last ls misses. The optimum follows the same
# rule: infinite (a limit row, --limits) reaches exactly 1.0 of it and says
# it is exact.
cat >"$TMP/cross.jsonl" <<'EOF'
{"session":"A","tool":"ls","arguments":{},"result_size":10,"latency":1,"cost":0.5,"ttl":3600,"request_type":"INFORMATIONAL"}
{"session":"B","tool":"ls","arguments":{},"result_size":10,"latency":1,"cost":0.5,"ttl":3600,"request_type":"INFORMATIONAL"}
{"session":"B","tool":"cd","arguments":{"folder":"x"},"result_size":10,"latency":1,"request_type":"COMMAND"}
{"session":"B","tool":"ls","arguments":{},"result_size":10,"latency":1,"cost":0.5,"ttl":3600,"request_type":"INFORMATIONAL"}
EOF
"$BIN" sim --trace "$TMP/cross.jsonl" --policy lru,vaac --sizes 100 --limits \
  --format json --out '' >"$TMP/cross.out" 2>"$TMP/err"
check "cross trace exits 0" $?
python3 - "$TMP/cross.out" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for r in rows:
    assert r["hits"] == 1 and r["invalidations"] == 1, r
    assert r["optimum_exact"] is True, r
    assert r["optimum_method"] in ("ilp", "all-intervals-fit"), r
    assert r["saved_latency_fraction_of_opt"] <= 1 + 1e-9, r
inf = [r for r in rows if r["policy"] == "infinite"]
assert sorted(r["policy"] for r in rows) == ["belady", "infinite", "lru", "vaac"], rows
for r in inf:
    assert abs(r["saved_latency_fraction_of_opt"] - 1) < 1e-12, r
    assert abs(r["saved_cost_fraction_of_opt"] - 1) < 1e-12, r
EOF
check "cross: touched entry invalidated; infinite = 1.0 of an exact optimum" $?

# --no-optimum: no solve even for a trace; the fields say so (null).
"$BIN" sim --trace "$TMP/cross.jsonl" --policy lru --sizes 100 --no-optimum \
  --format json --out '' >"$TMP/noopt.out" 2>"$TMP/err"
check "--no-optimum exits 0" $?
python3 - "$TMP/noopt.out" <<'EOF'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    assert r["optimum_method"] is None and r["optimum_exact"] is None, r
    assert r["saved_latency_fraction_of_opt"] is None, r
EOF
check "--no-optimum: fractions and method null" $?

# Tables: the details table (stdout with --details, always in summary.txt),
# fractions for synthetic workloads with --optimum, entry units.
"$BIN" sim --workload zipf --policy lru,vaac --sizes 10,50 --seeds 1 \
  --requests 300 --optimum --optimum-time-limit 5 --details --no-plots \
  --out "$TMP/det" >"$TMP/det.txt" 2>"$TMP/err"
check "--optimum --details run exits 0" $?
for want in "Details - per workload x policy x size" \
  "Fraction of the offline optimum" "lat/opt" "expired" "cmd_srv"; do
  grep -q "$want" "$TMP/det.txt"
  check "details/optimum tables mention '$want'" $?
done
"$BIN" sim --workload zipf --policy lru --sizes 10 --seeds 1 --requests 200 \
  --no-plots --out "$TMP/nodet" >"$TMP/nodet.txt" 2>"$TMP/err"
! grep -q "^Details" "$TMP/nodet.txt" && grep -q "^Details" "$TMP/nodet/summary.txt"
check "details only with --details on stdout, always in summary.txt" $?
"$BIN" sim --workload zipf --policy lru --sizes 10 --seeds 1 --requests 200 \
  --capacity entries --out "$TMP/ent" >"$TMP/ent.txt" 2>"$TMP/err"
grep -q "% of unique cacheable entries" "$TMP/ent.txt" &&
  ! grep -q "cacheable bytes" "$TMP/ent.txt" &&
  grep -q "unique cacheable entries" "$TMP/ent/plots.gp"
check "--capacity entries: tables and plot axes say entries" $?

# --keys-scale multiplies the synthetic key universe (540 cacheable keys).
"$BIN" sim --workload uniform --policy lru --sizes 10 --seeds 1 \
  --requests 20000 --keys-scale 4 --format json --out '' >"$TMP/ks.out" 2>"$TMP/err"
check "--keys-scale run exits 0" $?
python3 - "$TMP/ks.out" <<'EOF'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
assert r["unique_objects"] == 4 * 540, r["unique_objects"]
EOF
check "--keys-scale 4: 2160 unique cacheable objects" $?

# Trace formats (issue 17): the reference Zipf generator's trace as JSONL,
# CSV, oracleGeneral and toolcache binary replays to the same LRU misses.
python3 "$(dirname "$0")/../bench/zipf_trace.py" --requests 20000 --keys 2000 \
  --jsonl "$TMP/z.jsonl" --csv "$TMP/z.csv" --oracle "$TMP/z.oracleGeneral" 2>/dev/null
check "zipf_trace.py writes the three formats" $?
"$BIN" trace convert --to bin -o "$TMP/z.bin" "$TMP/z.jsonl" 2>"$TMP/err"
check "trace convert --to bin exits 0" $?
grep -q "wrote 20000 records" "$TMP/err"
check "trace convert --to bin reports the records" $?
for f in z.jsonl z.csv z.oracleGeneral z.bin; do
  "$BIN" sim --trace "$TMP/$f" --policy lru --sizes 10 --no-optimum --format json \
    --out '' 2>"$TMP/err" | python3 -c '
import json, sys
print([r["misses"] for r in map(json.loads, sys.stdin) if r["policy"] == "lru"][0])' \
    >"$TMP/$f.misses"
  check "sim --trace $f exits 0" $?
done
for f in z.csv z.oracleGeneral z.bin; do
  cmp -s "$TMP/z.jsonl.misses" "$TMP/$f.misses"
  check "$f replays like the JSONL ($(cat "$TMP/$f.misses") misses)" $?
done
# Streamed vs held (issue 32): without an offline policy or the optimum the
# trace is streamed (read in chunks, never held); with belady in the set it
# is held. The online rows must be identical either way.
"$BIN" sim --trace "$TMP/z.bin" --policy lru,s3fifo,vaac,infinite --sizes 1,10 \
  --no-optimum --format json --out '' --progress >"$TMP/streamed.out" 2>"$TMP/streamed.err"
check "streamed replay exits 0" $?
grep -q "streamed, not held" "$TMP/streamed.err"
check "the trace was streamed (stderr says so)" $?
"$BIN" sim --trace "$TMP/z.bin" --policy lru,s3fifo,vaac,infinite,belady --sizes 1,10 \
  --no-optimum --format json --out '' --progress >"$TMP/held.out" 2>"$TMP/held.err"
check "held replay exits 0" $?
! grep -q "streamed, not held" "$TMP/held.err"
check "with belady the trace is held" $?
python3 - "$TMP/streamed.out" "$TMP/held.out" <<'EOF'
import json, sys
s = [json.loads(l) for l in open(sys.argv[1])]
h = [json.loads(l) for l in open(sys.argv[2]) if json.loads(l)["policy"] != "belady"]
assert len(s) == 8 and s == h, (s, h)
EOF
check "streamed rows equal the held rows (lru, s3fifo, vaac, infinite)" $?

# --trace-format overrides detection; a wrong one is a clear error (exit 2).
cp "$TMP/z.csv" "$TMP/z.txt"
"$BIN" sim --trace "$TMP/z.txt" --trace-format csv --policy lru --sizes 10 \
  --no-optimum --format json --out '' >/dev/null 2>"$TMP/err"
check "--trace-format csv on a .txt file" $?
expect_usage "unknown --trace-format" --trace "$TMP/z.txt" --trace-format parquet
printf '0123456789012345678901234' >"$TMP/cut.oracleGeneral"  # 25 bytes
expect_usage "a cut oracleGeneral file" --trace "$TMP/cut.oracleGeneral"
grep -q "24-byte" "$TMP/err" || { echo "FAIL: cut oracleGeneral message"; fail=1; }

# sim --config / --engine: a tool-call trace through the engine's request
# path with the faces' YAML; `invalidation: resource` keeps the read of a
# file another one's write did not touch, `server` drops it.
cat >"$TMP/calls.jsonl" <<'EOF2'
{"time":0,"user":"u","tool":"read_file","arguments":{"path":"/d/a"},"result_size":10,"result_digest":"a1"}
{"time":1,"user":"u","tool":"read_file","arguments":{"path":"/d/b"},"result_size":10,"result_digest":"b1"}
{"time":2,"user":"u","tool":"write_file","arguments":{"content":"x","path":"/d/a"},"result_size":2,"result_digest":"ok"}
{"time":3,"user":"u","tool":"read_file","arguments":{"path":"/d/b"},"result_size":10,"result_digest":"b1"}
{"time":4,"user":"u","tool":"read_file","arguments":{"path":"/d/a"},"result_size":10,"result_digest":"a2"}
EOF2
printf 'invalidation: resource\n' >"$TMP/resource.yaml"
"$BIN" sim --config "$TMP/resource.yaml" --trace "$TMP/calls.jsonl" \
  --format json >"$TMP/res.json" 2>"$TMP/err"
check "sim --config (invalidation: resource) runs" $?
"$BIN" sim --engine --trace "$TMP/calls.jsonl" --format json \
  >"$TMP/srv.json" 2>"$TMP/err"
check "sim --engine (the faces' defaults: invalidation server) runs" $?
grep -q '"invalidation":"resource"' "$TMP/res.json" &&
  grep -q '"hits":1,' "$TMP/res.json" && grep -q '"stale_served":0' "$TMP/res.json"
check "resource: the untouched /d/b read is served once, nothing stale" $?
grep -q '"invalidation":"server"' "$TMP/srv.json" && grep -q '"hits":0,' "$TMP/srv.json"
check "server: the write drops every read of the server" $?
expect_usage "--invalidation without --config" --invalidation resource
expect_usage "a bad --invalidation" --engine --invalidation tenant --trace "$TMP/calls.jsonl"
expect_usage "--config of a missing file" --config "$TMP/nope.yaml" --trace "$TMP/calls.jsonl"
expect_usage "--engine without a trace" --engine

# A record's `server`: the engine's server identity (a write on fs1 leaves
# fs2's entry), and the fast replay reads the field too.
cat >"$TMP/servers.jsonl" <<'EOF2'
{"time":0,"server":"fs2","tool":"read_file","arguments":{"path":"/x"},"result_size":10,"result_digest":"a","request_type":"INFORMATIONAL"}
{"time":1,"server":"fs1","tool":"write_file","arguments":{"content":"c","path":"/x"},"result_size":2,"result_digest":"ok","request_type":"COMMAND"}
{"time":2,"server":"fs2","tool":"read_file","arguments":{"path":"/x"},"result_size":10,"result_digest":"a","request_type":"INFORMATIONAL"}
EOF2
"$BIN" sim --engine --trace "$TMP/servers.jsonl" --format json >"$TMP/sv.json" 2>"$TMP/err" &&
  grep -q '"hits":1,' "$TMP/sv.json"
check "sim --engine: a write on server fs1 keeps server fs2's entry" $?
"$BIN" sim --trace "$TMP/servers.jsonl" --policy lru --sizes 90 --no-optimum \
  --format json --out '' >"$TMP/sv2.json" 2>"$TMP/err" && grep -q . "$TMP/sv2.json"
check "the fast replay reads a trace with servers" $?

exit $fail
