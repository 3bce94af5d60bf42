#!/usr/bin/env bash
# End-to-end tests of the prompt-cache stage of `toolcache proxy` (issue 14):
# the official SDKs over multi-turn sessions (tests/llm/sessions.mjs) against
# the fake upstream's simulated prompt cache, driven by
# tests/llm/prompt_cache.test.mjs; plus the configuration's error message.
set -euo pipefail
: "${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the built toolcache binary}"
src="${TOOLCACHE_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
dir="$src/tests/llm"
if [ ! -d "$dir/node_modules/@anthropic-ai/sdk" ] || [ ! -d "$dir/node_modules/openai" ]; then
  echo "e2e_prompt_cache: npm packages missing; run scripts/setup.sh (npm ci in tests/llm)" >&2
  exit 1
fi

set +e
cfg=$(mktemp); printf 'promptCache:\n  stabilizeTool: true\n' >"$cfg"
out=$("$TOOLCACHE_BIN" proxy --config "$cfg" 2>&1 </dev/null); rc=$?
rm -f "$cfg"
[ $rc -eq 2 ] && grep -q "did you mean 'stabilizeTools'" <<<"$out" || { echo "FAIL: bad config: rc=$rc $out"; exit 1; }
set -e

cd "$dir"
TOOLCACHE_BIN="$TOOLCACHE_BIN" timeout 300 node --test --test-concurrency=1 prompt_cache.test.mjs
