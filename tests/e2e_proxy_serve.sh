#!/usr/bin/env bash
# End-to-end tests of the proxy's server-side tool loop (`proxy.serve`,
# docs/PROXY_SERVE.md): config errors here, then tests/llm/serve.test.mjs with the
# official SDKs against the scripted fake upstream (strict history).
set -euo pipefail
: "${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the built toolcache binary}"
src="${TOOLCACHE_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
dir="$src/tests/llm"
if [ ! -d "$dir/node_modules/@anthropic-ai/sdk" ] || [ ! -d "$dir/node_modules/openai" ]; then
  echo "e2e_proxy_serve: npm packages missing; run scripts/setup.sh (npm ci in tests/llm)" >&2
  exit 1
fi

set +e
cfg=$(mktemp); printf 'proxy:\n  serve: maybe\n' >"$cfg"
out=$("$TOOLCACHE_BIN" proxy --config "$cfg" 2>&1 </dev/null); rc=$?
[ $rc -eq 2 ] && grep -q "proxy.serve' must be true or false" <<<"$out" || { echo "FAIL: bad serve: rc=$rc $out"; rm -f "$cfg"; exit 1; }
printf 'proxy:\n  serveMaxRounds: 0\n' >"$cfg"
out=$("$TOOLCACHE_BIN" proxy --config "$cfg" 2>&1 </dev/null); rc=$?
rm -f "$cfg"
[ $rc -eq 2 ] && grep -q "serveMaxRounds' must be 1 to 64" <<<"$out" || { echo "FAIL: bad rounds: rc=$rc $out"; exit 1; }
set -e

cd "$dir"
TOOLCACHE_BIN="$TOOLCACHE_BIN" timeout 300 node --test --test-concurrency=1 serve.test.mjs
