#!/usr/bin/env bash
# End-to-end tests of `toolcache mcp --store` (docs/STORE.md): CLI errors for
# bad store specs, then tests/peers/e2e_store.mjs: two proxies sharing a real
# redis-server in front of the npm filesystem server, Redis killed mid-run
# and restarted, and a proxy restarted on a SQLite file.
set -euo pipefail
: "${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the built toolcache binary}"
src="${TOOLCACHE_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
peers="$src/tests/peers"
if [ ! -d "$peers/node_modules/@modelcontextprotocol/sdk" ]; then
  echo "e2e_store: npm peers missing; run scripts/setup.sh (npm ci in tests/peers)" >&2
  exit 1
fi

set +e
out=$("$TOOLCACHE_BIN" mcp --store mongo://x -- cat 2>&1 </dev/null); rc=$?
[ $rc -eq 2 ] && grep -q "unknown store" <<<"$out" && grep -q "sqlite:PATH" <<<"$out" \
  || { echo "FAIL: bad --store: rc=$rc $out"; exit 1; }
cfg=$(mktemp); printf 'capacityBytes: 1MiB\nstore: "sqlite:/tmp/x.db?max_byts=1"\n' >"$cfg"
out=$("$TOOLCACHE_BIN" mcp --config "$cfg" -- cat 2>&1 </dev/null); rc=$?
rm -f "$cfg"
[ $rc -eq 2 ] && grep -q ":2: store 'sqlite:/tmp/x.db?max_byts=1': unknown parameter 'max_byts'" <<<"$out" \
  || { echo "FAIL: bad config store: rc=$rc $out"; exit 1; }
out=$("$TOOLCACHE_BIN" mcp --store sqlite:/nonexistent-dir/x.db -- cat 2>&1 </dev/null); rc=$?
[ $rc -eq 2 ] && grep -q "/nonexistent-dir/x.db" <<<"$out" \
  || { echo "FAIL: unusable sqlite file: rc=$rc $out"; exit 1; }
set -e
echo "PASS store spec errors exit 2 naming the spec"

cd "$peers"
exec node e2e_store.mjs "$@"
