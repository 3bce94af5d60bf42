#!/usr/bin/env bash
# The `toolcache serve` dashboard in Debian's headless chromium, driven by
# puppeteer-core (tests/browser, pinned by its package-lock.json and
# installed by scripts/setup.sh; chromium is in setup's PACKAGES).
set -euo pipefail
: "${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the built toolcache binary}"
src="${TOOLCACHE_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
dir="$src/tests/browser"
if [ ! -d "$dir/node_modules/puppeteer-core" ]; then
  echo "e2e_dashboard: npm packages missing; run scripts/setup.sh (npm ci in tests/browser)" >&2
  exit 1
fi
command -v chromium >/dev/null || { echo "e2e_dashboard: chromium missing; run scripts/setup.sh" >&2; exit 1; }
cd "$dir"
TOOLCACHE_BIN="$TOOLCACHE_BIN" timeout 180 node --test --test-concurrency=1 dashboard.test.mjs
