#!/usr/bin/env bash
# Differential test of RFC 8785 canonicalisation: `toolcache key --canonical
# --lines` against the RFC 8785 authors' JavaScript implementation (npm
# canonicalize) and V8's number serialisation, on fast-check-generated
# documents in several spellings (fuzz/differential/jcs_differential.mjs),
# plus the --lines framing itself (an error line per bad document). A
# CI-sized run; fuzz/README.md records the large one.
set -u
: "${TOOLCACHE_BIN:?set TOOLCACHE_BIN to the toolcache binary}"
: "${TOOLCACHE_SOURCE_DIR:?set TOOLCACHE_SOURCE_DIR to the checkout}"
DIFF="$TOOLCACHE_SOURCE_DIR/fuzz/differential"
[ -d "$DIFF/node_modules/canonicalize" ] || {
  echo "FAIL: $DIFF/node_modules missing (scripts/setup.sh installs it)" >&2
  exit 1
}
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

out=$(printf '{"b":1.0,"a":"\\u00e9"}\n[1e400]\n\n  -0 \n' |
  "$TOOLCACHE_BIN" key --canonical --lines)
want=$(printf '{"a":"\xc3\xa9","b":1}\nerror: X\nerror: X\n0')
[ "$(printf '%s' "$out" | sed 's/^error: .*/error: X/')" = "$want" ] ||
  fail "--lines framing: got [$out]"
case $out in *"1e400"*|*"overflow"*|*"double"*) ;; *) fail "--lines: no reason for 1e400: [$out]" ;; esac
"$TOOLCACHE_BIN" key --lines read_file '{}' >/dev/null 2>&1 &&
  fail "--lines without --canonical accepted"

node "$DIFF/jcs_differential.mjs" --bin "$TOOLCACHE_BIN" --docs 2000 \
  --numbers 20000 --seed 16 || fail "differences against the references"
[ "$fails" -eq 0 ] && echo "e2e_jcs_differential: ok"
exit $((fails > 0))
