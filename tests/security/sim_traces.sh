#!/usr/bin/env bash
# Adversarial trace files for `toolcache sim` (issue 32: the id-keyed CSV
# reader and the light first pass): a hostile or corrupt trace gets exit 2
# and a message naming the file and line / record, never a crash, a hang or
# a silent wrong result; decimal and text keys stay apart.
set -uo pipefail
bin=${TOOLCACHE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
refused() {  # refused CASE FILE WANT-SUBSTRING
  local case=$1 file=$2 want=$3 out code
  out=$(timeout 20 "$bin" sim --trace "$file" --policy lru --sizes 10 \
    --no-optimum --format json --out "" 2>&1)
  code=$?
  echo "$case: exit $code: $(printf '%s' "$out" | head -c 200)"
  if [ "$code" != 2 ] || [[ "$out" != *"$want"* ]]; then
    echo "  FAIL: want exit 2 and '$want'"
    fail=1
  fi
}

printf 'time,key,size\n1,\377\376,10\n' >"$tmp/utf8.csv"
refused "CSV key not UTF-8" "$tmp/utf8.csv" "utf8.csv:2: key is not valid UTF-8"
printf '1,2,3\n2,3,99999999999999999999\n' >"$tmp/big.csv"
refused "CSV size past 64 bits" "$tmp/big.csv" "big.csv:2: size"
printf '1,2,3\n2,3,1099511627777\n' >"$tmp/tib.csv"
refused "CSV size past 1 TiB" "$tmp/tib.csv" "record 2: result_size exceeds 1 TiB"
printf '5,2,3\n4,2,3\n' >"$tmp/back.csv"
refused "CSV time backwards" "$tmp/back.csv" "back.csv:2: time goes backwards"
printf '1,2,3\n1,2\n' >"$tmp/cols.csv"
refused "CSV two columns" "$tmp/cols.csv" "cols.csv:2: expected 3"
printf '1,2,3,4\n' >"$tmp/cols4.csv"
refused "CSV four columns" "$tmp/cols4.csv" "cols4.csv:1: expected 3"
head -c 25 /dev/zero >"$tmp/odd.oracleGeneral"
refused "oracleGeneral not whole records" "$tmp/odd.oracleGeneral" "24-byte"

# A binary trace whose record names a key id beyond the records before it:
# the light first pass must not index with it (the full read's error).
printf 'time,key,size\n0,1,10\n1,2,10\n2,1,10\n3,3,10\n' >"$tmp/ok.csv"
"$bin" trace convert --to bin -o "$tmp/ok.bin" "$tmp/ok.csv" 2>/dev/null
python3 - "$tmp/ok.bin" "$tmp/badkey.bin" "$tmp/badsession.bin" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
bad = bytearray(data)
struct.pack_into("<Q", bad, 64 + 88 * 2, 1 << 40)   # record 3's key id
open(sys.argv[2], "wb").write(bad)
bad = bytearray(data)
struct.pack_into("<I", bad, 64 + 88 * 1 + 72, 0xfffffff0)  # record 2's session
open(sys.argv[3], "wb").write(bad)
PY
refused "binary key id out of range" "$tmp/badkey.bin" "record 3"
refused "binary session id out of range" "$tmp/badsession.bin" "record 2"

# Decimal and text keys are different objects: "7", "07" and "abc" are three
# objects, each requested twice (3 misses, 3 hits at any size).
printf 'time,key,size\n0,7,1\n1,07,1\n2,abc,1\n3,7,1\n4,07,1\n5,abc,1\n' \
  >"$tmp/mixed.csv"
got=$("$bin" sim --trace "$tmp/mixed.csv" --policy lru --sizes 100 \
  --no-optimum --format json --out "" 2>/dev/null |
  python3 -c 'import json,sys; r=json.loads(sys.stdin.readline()); print(r["unique_objects"], r["misses"], r["hits"])')
echo "CSV mixed decimal/text keys: objects misses hits = $got (want 3 3 3)"
[ "$got" = "3 3 3" ] || fail=1
exit $fail
