#!/usr/bin/env bash
# End-to-end test of `toolcache key`: every RFC 8785 vector through
# `key --canonical` byte for byte, bad input (exit 2 + a message naming the
# position and the problem), and digest equality / inequality of calls.
set -u
: "${TOOLCACHE_BIN:?set TOOLCACHE_BIN to the toolcache binary}"
: "${TOOLCACHE_SOURCE_DIR:?set TOOLCACHE_SOURCE_DIR to the checkout}"
JCS="$TOOLCACHE_SOURCE_DIR/tests/data/jcs"
[ -d "$JCS/input" ] || { echo "FAIL: test data folder missing: $JCS/input" >&2; exit 1; }
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

# 2b. --canonical is pure RFC 8785 of any JSON value: nothing dropped.
printf '{"_meta":{"x":1},"b":2}' | "$TOOLCACHE_BIN" key --canonical >"$TMP/out" 2>"$TMP/err" ||
  fail "--canonical with _meta: exit $? ($(cat "$TMP/err"))"
printf '{"_meta":{"x":1},"b":2}' | cmp -s - "$TMP/out" ||
  fail "--canonical dropped or changed _meta: $(cat "$TMP/out")"
printf ' [1, {"b":1.0,"a":null}] ' | "$TOOLCACHE_BIN" key --canonical >"$TMP/out" 2>"$TMP/err" ||
  fail "--canonical of an array: exit $? ($(cat "$TMP/err"))"
printf '[1,{"a":null,"b":1}]' | cmp -s - "$TMP/out" || fail "--canonical array: $(cat "$TMP/out")"
# The key path still drops _meta, and nothing can let it into the key.
"$TOOLCACHE_BIN" key t '{"_meta":{"x":1},"b":2}' >"$TMP/out" 2>"$TMP/err"
grep -qxF 'canonical: {"b":2}' "$TMP/out" || fail "key kept _meta: $(cat "$TMP/out")"
expect_usage() {  # <description> <stderr part> -- <args...>; stdin from /dev/null unless piped
  local what="$1" want="$2"; shift 3
  "$TOOLCACHE_BIN" "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  [ "$rc" -eq 2 ] || fail "$what: exit $rc, want 2"
  grep -qF -- "$want" "$TMP/err" || fail "$what: stderr lacks '$want': $(cat "$TMP/err")"
  [ ! -s "$TMP/out" ] || fail "$what: wrote to stdout on error"
}
expect_usage "--keep-meta is gone" "--keep-meta" -- key --keep-meta t '{}'
expect_usage "--canonical --ignore" "--ignore applies to a key, not to --canonical" \
  -- key --canonical --ignore b </dev/null
expect_usage "--canonical --server" "--server applies to a key" -- key --canonical --server s </dev/null
expect_usage "--canonical --format" "--format applies to a key" -- key --canonical --format json </dev/null

# 2c. Tool arguments must be a JSON object (as in MCP and the LLM APIs).
for args in '[1]' '"x"' '3' 'true' 'null'; do
  expect_usage "non-object arguments $args" "tool arguments: must be a JSON object" -- key read_file "$args"
done
grep -qF "got null" "$TMP/err" || fail "non-object message lacks the type: $(cat "$TMP/err")"
printf '[{"path":"/etc/hosts"}]' | "$TOOLCACHE_BIN" key read_file >"$TMP/out" 2>"$TMP/err"
[ $? -eq 2 ] || fail "non-object arguments on stdin: want exit 2"
grep -qF "got an array on <stdin>" "$TMP/err" || fail "stdin non-object message: $(cat "$TMP/err")"

# 2d. Other bad input: stdin that is a directory, binary bytes, over the
# size limit.
"$TOOLCACHE_BIN" key --canonical <"$TMP" >"$TMP/out" 2>"$TMP/err"
[ $? -eq 2 ] || fail "stdin is a directory: want exit 2"
grep -qF "cannot read stdin: Is a directory" "$TMP/err" || fail "directory stdin message: $(cat "$TMP/err")"
expect_bad '\x00\x01\x02' "line 1, column 1 (byte 0): unexpected"
head -c 64 "$TOOLCACHE_BIN" >"$TMP/binary"
"$TOOLCACHE_BIN" key t <"$TMP/binary" >"$TMP/out" 2>"$TMP/err"
[ $? -eq 2 ] || fail "binary stdin: want exit 2"
grep -qF "invalid JSON in <stdin>: line 1, column 1 (byte 0)" "$TMP/err" ||
  fail "binary stdin message: $(cat "$TMP/err")"
printf '"%0200d"' 0 | "$TOOLCACHE_BIN" key --canonical --max-bytes 100 >"$TMP/out" 2>"$TMP/err"
[ $? -eq 2 ] || fail "over --max-bytes: want exit 2"
grep -qF "longer than the limit of 100 bytes" "$TMP/err" || fail "over --max-bytes message: $(cat "$TMP/err")"
"$TOOLCACHE_BIN" key --max-bytes 100 t "{\"q\":\"$(printf '%0200d' 0)\"}" >"$TMP/out" 2>"$TMP/err"
[ $? -eq 2 ] || fail "positional over --max-bytes: want exit 2"
grep -qF "larger than the limit of 100 bytes" "$TMP/err" || fail "positional over --max-bytes: $(cat "$TMP/err")"
{ printf '{"q":"'; head -c $((17 << 20)) /dev/zero | tr '\0' a; printf '"}'; } |
  "$TOOLCACHE_BIN" key t >"$TMP/out" 2>"$TMP/err"
[ $? -eq 2 ] || fail "17 MiB line: want exit 2"
grep -qF "<stdin> is longer than the limit of 16777216 bytes" "$TMP/err" ||
  fail "17 MiB line message: $(head -c 300 "$TMP/err")"
expect_usage "unknown --format" "--format" -- key --format xml t '{}'

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

# 3b. Integers a double cannot hold: RFC 8785 (--canonical) rounds them, the
# key keeps them exact (different calls for a Python/Go/Rust/Java server) and
# says so; spellings of one integer still share the key.
d7="$(digest t '{"n":9007199254740993}')"
d8="$(digest t '{"n":9007199254740992}')"
d9="$(digest t '{"n":9.007199254740993e15}')"
[ "$d7" != "$d8" ] || fail "9007199254740993 and 9007199254740992 share a key"
[ "$d7" = "$d9" ] || fail "two spellings of 9007199254740993 differ"
"$TOOLCACHE_BIN" key t '{"n":9007199254740993}' >"$TMP/out"
grep -qxF 'canonical: {"n":9007199254740993}' "$TMP/out" || fail "exact key: $(cat "$TMP/out")"
grep -qF 'numbers: exact integer digits kept at "/n"' "$TMP/out" || fail "exact integers not named: $(cat "$TMP/out")"
"$TOOLCACHE_BIN" key t '{"n":9007199254740992}' >"$TMP/out"
! grep -q '^numbers:' "$TMP/out" || fail "numbers line for an ordinary integer: $(cat "$TMP/out")"
"$TOOLCACHE_BIN" key --format json t '{"a":[1,9007199254740993]}' >"$TMP/j"
grep -qF '"exact_integers":["/a/1"]' "$TMP/j" || fail "--format json exact_integers: $(cat "$TMP/j")"
printf '{"n":9007199254740993}' | "$TOOLCACHE_BIN" key --canonical >"$TMP/out"
printf '{"n":9007199254740992}' | cmp -s - "$TMP/out" || fail "--canonical is no longer RFC 8785: $(cat "$TMP/out")"

if [ "$fails" -ne 0 ]; then
  echo "e2e_key: $fails failure(s)" >&2
  exit 1
fi
echo "e2e_key: all checks passed ($n vectors)"
