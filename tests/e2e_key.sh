#!/usr/bin/env bash
# End-to-end test of `toolcache key`: every RFC 8785 vector through
# `key --canonical` byte for byte, bad input (exit 2 + a message naming the
# position and the problem), and digest equality / inequality of calls.
set -u
: "${TOOLCACHE_BIN:?set TOOLCACHE_BIN to the toolcache binary}"
: "${TOOLCACHE_SHARED_DIR:?set TOOLCACHE_SHARED_DIR to the shared directory}"
JCS="$TOOLCACHE_SHARED_DIR/data/jcs"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# 1. Every JCS vector, exact bytes (no trailing newline).
n=0
for in in "$JCS"/input/*.json; do
  name="$(basename "$in")"
  if ! "$TOOLCACHE_BIN" key --canonical <"$in" >"$TMP/out" 2>"$TMP/err"; then
    fail "vector $name: exit $? ($(cat "$TMP/err"))"
  elif ! cmp -s "$TMP/out" "$JCS/output/$name"; then
    fail "vector $name: output differs from $JCS/output/$name"
  fi
  n=$((n + 1))
done
[ "$n" -ge 6 ] || fail "expected at least 6 JCS vectors, found $n"

# 2. Bad input: exit 2 and a message naming line:column and the problem.
expect_bad() {  # <stdin text> <expected message part>
  printf '%b' "$1" | "$TOOLCACHE_BIN" key --canonical >"$TMP/out" 2>"$TMP/err"
  rc=$?
  [ "$rc" -eq 2 ] || fail "input '$1': exit $rc, want 2"
  grep -qF -- "$2" "$TMP/err" || fail "input '$1': stderr lacks '$2': $(cat "$TMP/err")"
  [ ! -s "$TMP/out" ] || fail "input '$1': wrote to stdout on error"
}
expect_bad '{"a":1,"a":2}' 'line 1, column 8 (byte 7): duplicate object member name "a"'
expect_bad '{\n  "a": [1,\n  ]}' 'line 3, column 3 (byte 15): unexpected'
expect_bad '[1e400]' 'out of the range of an IEEE-754 double'
expect_bad '[NaN]' 'NaN and Infinity'
expect_bad '"\\uD800"' 'unpaired high surrogate'
expect_bad '"\xC0\xAF"' 'invalid UTF-8: overlong'
expect_bad '{} x' 'trailing garbage'
expect_bad '' 'empty input'
deep="$(printf '[%.0s' $(seq 129))"
expect_bad "$deep" 'nesting depth exceeds the limit of 128 levels'

"$TOOLCACHE_BIN" key read_file '{"a":' >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] || fail "bad positional JSON: want exit 2"
grep -qF 'invalid JSON in arguments: line 1, column 6' "$TMP/err" ||
  fail "bad positional JSON message: $(cat "$TMP/err")"
"$TOOLCACHE_BIN" key >/dev/null 2>&1
[ $? -eq 2 ] || fail "missing tool: want exit 2"
"$TOOLCACHE_BIN" key --format xml t '{}' >/dev/null 2>&1
[ $? -eq 2 ] || fail "bad --format: want exit 2"

# 3. Digests: equivalent calls share a key, different calls do not.
digest() { "$TOOLCACHE_BIN" key "$@" | sed -n 's/^digest: //p'; }
d1="$(digest --server fs read_file '{"path":"/etc/hosts","_meta":{"progressToken":1}}')"
d2="$(digest --server fs read_file '{ "path" : "/etc/hosts" }')"
d3="$(digest --server fs read_file '{"path":"/etc/passwd"}')"
d4="$(digest --server fs2 read_file '{"path":"/etc/hosts"}')"
d5="$(digest --server fs --scope alice read_file '{"path":"/etc/hosts"}')"
d6="$(digest --server fs --ignore nonce read_file '{"path":"/etc/hosts","nonce":7}')"
[[ "$d1" =~ ^[0-9a-f]{64}$ ]] || fail "digest is not 64 hex digits: '$d1'"
[ "$d1" = "$d2" ] || fail "_meta/whitespace changed the digest"
[ "$d1" = "$d6" ] || fail "--ignore did not drop the field"
[ "$d1" != "$d3" ] || fail "different arguments share a digest"
[ "$d1" != "$d4" ] || fail "different servers share a digest"
[ "$d1" != "$d5" ] || fail "different scopes share a digest"
# The pinned golden digest (docs/KEYS.md).
dg="$(digest --server fs read_file '{"path":"/etc/hosts"}')"
[ "$dg" = "fdbd8abc53b81eef74154ac4f132b0a81296b5e5a4cca72bf3240204903da4e2" ] ||
  fail "golden digest changed: $dg"
# JSON output carries the same digest.
"$TOOLCACHE_BIN" key --format json --server fs read_file '{"path":"/etc/hosts"}' >"$TMP/j"
grep -qF "\"digest\":\"$dg\"" "$TMP/j" || fail "--format json: $(cat "$TMP/j")"

if [ "$fails" -ne 0 ]; then
  echo "e2e_key: $fails failure(s)" >&2
  exit 1
fi
echo "e2e_key: all checks passed ($n vectors)"
