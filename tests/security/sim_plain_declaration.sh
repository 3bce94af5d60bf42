#!/usr/bin/env bash
# Adversarial cases for the binary trace's plain declaration (issue 32):
# `toolcache trace convert` writes, in the header, that a trace is plain
# with its key count and byte totals, and `toolcache sim` then replays it in
# one pass. A forged declaration must fail the run (exit 2, the record
# number, no row), never produce a wrong row; a file without the
# declaration (an old file) replays to the same rows.
set -uo pipefail
bin=${TOOLCACHE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for i in $(seq 0 1999); do
  echo "{\"tool\":\"t\",\"arguments\":{\"id\":$((i * 7919 % 300))},\"result_size\":$((i % 50 + 1)),\"request_type\":\"INFORMATIONAL\",\"latency\":1}"
done >"$tmp/t.jsonl"
"$bin" trace convert --to bin -o "$tmp/t.bin" "$tmp/t.jsonl" 2>/dev/null ||
  { echo "convert failed"; exit 1; }
sim() {
  "$bin" sim --trace "$1" --policy lru --sizes 10 --no-optimum --jobs 1 \
    --format json 2>"$tmp/err"
}
patch() {  # patch FILE OFFSET PRINTF-BYTES
  printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
want=$(sim "$tmp/t.bin" | sed 's/"workload":"[^"]*"//' | md5sum)
# 0. The old form (declaration words zero) gives the same rows.
cp "$tmp/t.bin" "$tmp/old.bin"
patch "$tmp/old.bin" 48 '\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0'
got=$(sim "$tmp/old.bin" | sed 's/"workload":"[^"]*"//' | md5sum)
echo "old file: rows md5 $got (want $want)"
[ "$got" = "$want" ] || fail=1
forged() {  # forged CASE OFFSET BYTES
  cp "$tmp/t.bin" "$tmp/f.bin"
  patch "$tmp/f.bin" "$2" "$3"
  local out rc
  out=$(sim "$tmp/f.bin")
  rc=$?
  echo "$1: exit $rc, stdout ${#out} bytes, stderr: $(head -c 160 "$tmp/err")"
  [ "$rc" = 2 ] && [ -z "$out" ] && grep -q "plain" "$tmp/err" || fail=1
}
rec=$((64 + 1000 * 88))  # record 1001
forged "record with an error" $((rec + 85)) '\1'
forged "record with a digest" $((rec + 80)) '\1'
forged "record with another TTL" $((rec + 40)) '\0\0\0\0\0\0\24\100'
forged "unique bytes off by one" 48 '\1'
exit $fail
