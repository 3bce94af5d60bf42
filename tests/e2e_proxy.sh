#!/usr/bin/env bash
# End-to-end tests of `toolcache proxy` (the LLM API face): CLI usage errors
# here, then the official SDKs (@anthropic-ai/sdk, openai) against the
# scripted fake upstream (tests/llm, pinned by its package-lock.json and
# installed by scripts/setup.sh), driven by tests/llm/proxy.test.mjs.
set -euo pipefail
: "${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the built toolcache binary}"
src="${TOOLCACHE_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
dir="$src/tests/llm"
if [ ! -d "$dir/node_modules/@anthropic-ai/sdk" ] || [ ! -d "$dir/node_modules/openai" ]; then
  echo "e2e_proxy: npm packages missing; run scripts/setup.sh (npm ci in tests/llm)" >&2
  exit 1
fi

set +e
out=$("$TOOLCACHE_BIN" proxy --listen nonsense 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "HOST:PORT" <<<"$out" || { echo "FAIL: bad --listen: rc=$rc $out"; exit 1; }
out=$("$TOOLCACHE_BIN" proxy --listen 127.0.0.1:0 --upstream ftp://x 2>&1 </dev/null); rc=$?
[ $rc -eq 2 ] && grep -q "not an http" <<<"$out" || { echo "FAIL: bad upstream: rc=$rc $out"; exit 1; }
cfg=$(mktemp); printf 'proxy:\n  scop: global\n' >"$cfg"
out=$("$TOOLCACHE_BIN" proxy --config "$cfg" 2>&1 </dev/null); rc=$?
rm -f "$cfg"
[ $rc -eq 2 ] && grep -q "did you mean 'scope'" <<<"$out" || { echo "FAIL: bad config: rc=$rc $out"; exit 1; }
set -e

cd "$dir"
TOOLCACHE_BIN="$TOOLCACHE_BIN" timeout 300 node --test --test-concurrency=1 proxy.test.mjs
