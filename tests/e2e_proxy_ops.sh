#!/usr/bin/env bash
# End-to-end tests of `toolcache proxy` in operation (tests/llm/proxy_ops.test.mjs):
# a TLS fake upstream with a self-signed certificate made by the openssl CLI
# at test time (--ca-file trusts it; the wrong CA gets 502), OpenAI n > 1, and
# SIGTERM draining the requests in flight.
set -euo pipefail
: "${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the built toolcache binary}"
src="${TOOLCACHE_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
dir="$src/tests/llm"
if [ ! -d "$dir/node_modules/openai" ]; then
  echo "e2e_proxy_ops: npm packages missing; run scripts/setup.sh (npm ci in tests/llm)" >&2
  exit 1
fi
command -v openssl >/dev/null || { echo "e2e_proxy_ops: the openssl CLI is missing (scripts/setup.sh)" >&2; exit 1; }
cd "$dir"
TOOLCACHE_BIN="$TOOLCACHE_BIN" timeout 300 node --test --test-concurrency=1 proxy_ops.test.mjs
