#!/usr/bin/env bash
# Adversarial trace files for `toolcache sim --trace` on the paths issue 32
# added or changed: the streamed replay (two reads of the file), the
# oracleGeneral reader keyed by object id, the mmap'ed CSV reader. A bad
# file must give exit 2 and a message naming the file (and the record or
# line), never a crash, a hang or a silent drop. Each case prints what it
# saw.
set -u
BIN=${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the toolcache binary}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0

# case NAME WANT_RC WANT_TEXT -- ARGS...: runs sim with a 20 s limit.
case_() {
  local name=$1 want_rc=$2 want=$3
  shift 4
  timeout 20 "$BIN" sim --no-optimum --out '' --format json "$@" \
    >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  local err
  err=$(head -c 300 "$TMP/err")
  if [ "$rc" = "$want_rc" ] && grep -q -- "$want" "$TMP/err"; then
    echo "ok: $name -> exit $rc: $err"
  else
    echo "FAIL: $name: expected exit $want_rc and '$want', got $rc: $err"
    fails=$((fails + 1))
  fi
}

# oracleGeneral, 24-byte records {u32 time, u64 id, u32 size, i64 next}.
python3 - "$TMP" <<'EOF'
import struct, sys
d = sys.argv[1]
recs = b"".join(struct.pack("<IQIq", t, t % 7, 100, -1) for t in range(50))
open(d + "/ok.oracleGeneral", "wb").write(recs)
open(d + "/cut.oracleGeneral", "wb").write(recs + b"\x01\x02\x03")
# ids at the extremes (0, 2^64-1: FlatIdMap's reserved values must not
# collide with real ids) and a zero size
ext = b"".join(struct.pack("<IQIq", t, [0, 2**64 - 1, 1][t % 3], t % 2, -1)
               for t in range(30))
open(d + "/extreme.oracleGeneral", "wb").write(ext)
open(d + "/empty.oracleGeneral", "wb").write(b"")
EOF

case_ "truncated oracleGeneral (streamed)" 2 "not a whole number" -- \
  --trace "$TMP/cut.oracleGeneral" --policy lru
case_ "empty oracleGeneral" 2 "no records" -- \
  --trace "$TMP/empty.oracleGeneral" --policy lru
timeout 20 "$BIN" sim --no-optimum --out '' --format json --policy lru \
  --sizes 100 --trace "$TMP/extreme.oracleGeneral" >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc = 0 ] && python3 - "$TMP/out" <<'EOF'; then
import json, sys
r = json.loads(open(sys.argv[1]).readline())
# three distinct ids (0, 2^64-1, 1) over 30 requests: 3 misses at 100 %
assert r["requests"] == 30 and r["misses"] == 3, r
assert r["unique_objects"] == 3, r
EOF
  echo "ok: ids 0 and 2^64-1 are ordinary objects (3 misses, 3 objects)"
else
  echo "FAIL: extreme ids: exit $rc: $(head -c 300 "$TMP/err") $(head -c 300 "$TMP/out")"
  fails=$((fails + 1))
fi

# CSV: a bad line deep in the file names its line; time going backwards; a
# last line without a newline still counts; CRLF lines.
{
  echo "time,key,size"
  for i in $(seq 1 2000); do echo "$i,$((i % 13)),10"; done
  echo "2001,5"
} >"$TMP/bad.csv"
case_ "CSV bad line 2002 (streamed)" 2 "bad.csv:2002" -- \
  --trace "$TMP/bad.csv" --policy lru
printf 'time,key,size\n5,a,1\n4,b,1\n' >"$TMP/back.csv"
case_ "CSV time backwards" 2 "time goes backwards" -- \
  --trace "$TMP/back.csv" --policy lru
printf 'time,key,size\r\n1,a,1\r\n2,a,1\r\n3,a,1' >"$TMP/crlf.csv"
timeout 20 "$BIN" sim --no-optimum --out '' --format json --policy lru \
  --sizes 100 --trace "$TMP/crlf.csv" >"$TMP/out" 2>"$TMP/err"
if grep -q '"requests":3,' "$TMP/out" && grep -q '"hits":2,' "$TMP/out"; then
  echo "ok: CRLF CSV with no final newline: 3 requests, 2 hits"
else
  echo "FAIL: CRLF CSV: $(head -c 300 "$TMP/out") $(head -c 300 "$TMP/err")"
  fails=$((fails + 1))
fi

# An offline policy named explicitly is still honoured (the trace is then
# held, not streamed), and --limits on a streamed-size trace adds the rows.
timeout 20 "$BIN" sim --no-optimum --out '' --format json --policy lru \
  --limits --sizes 10 --trace "$TMP/ok.oracleGeneral" >"$TMP/out" 2>"$TMP/err"
n=$(grep -c '"policy"' "$TMP/out")
if [ "$n" = 3 ]; then
  echo "ok: --limits adds belady and infinite (3 rows)"
else
  echo "FAIL: --limits: $n rows: $(head -c 300 "$TMP/err")"
  fails=$((fails + 1))
fi

exit $((fails > 0))
