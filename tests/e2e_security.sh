#!/usr/bin/env bash
# The adversarial suite (docs/SECURITY.md): every case in tests/security/
# drives a real face of the built binary as an attacker would (another
# tenant, user, credential or conversation reading; a browser page writing;
# smuggled framing; path traversal; exhaustion). Each file is one group of
# cases: *.sh runs under bash, *.mjs under node; each exits non-zero on the
# first case that fails and prints what it saw.
set -euo pipefail
: "${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the built toolcache binary}"
src="${TOOLCACHE_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
export TOOLCACHE_BIN TOOLCACHE_SOURCE_DIR="$src"
shopt -s nullglob
n=0
for f in "$src"/tests/security/*.sh "$src"/tests/security/*.mjs; do
  name=$(basename "$f")
  echo "== security: $name"
  case "$f" in
    *.sh) bash "$f" ;;
    *.mjs) node "$f" ;;
  esac
  n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "FAIL: no cases in tests/security/" >&2; exit 1; }
echo "security: $n groups passed"
