#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance
# 0.2.0-alpha.12, server scenarios) against `toolcache serve`'s /mcp/fixture,
# which fronts the project's stdio fixture server
# (tests/peers/conformance_fixture.mjs) through the caching session, in both
# eras: the default "active" suite (2025 sessions) and the 2026-07-28
# requirement set (--requirements 2026-07-28: stateless requests, caching
# hints, header validation). The suite needs Node 22: tests/conformance installs it
# from npm (the `node` package) beside the suite (scripts/setup.sh NPM_DIRS).
# Scenarios known to fail, with why, are listed in
# tests/conformance/expected-failures.yml (docs/SERVE.md); the suite exits
# non-zero on any other failure and on a listed scenario that passes.
set -euo pipefail
: "${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the built toolcache binary}"
src="${TOOLCACHE_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
conf="$src/tests/conformance"
node22="$conf/node_modules/node/bin/node"
suite="$conf/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [ ! -x "$node22" ] || [ ! -f "$suite" ] || [ ! -d "$src/tests/peers/node_modules/@modelcontextprotocol/sdk" ]; then
  echo "e2e_mcp_conformance: npm packages missing; run scripts/setup.sh (npm ci in tests/conformance and tests/peers)" >&2
  exit 1
fi
work=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

cat >"$work/serve.yaml" <<YAML
servers:
  fixture:
    command: ["$(command -v node)", "$src/tests/peers/conformance_fixture.mjs"]
YAML
"$TOOLCACHE_BIN" serve --listen 127.0.0.1:0 --config "$work/serve.yaml" --log-level warn \
  >"$work/out" 2>"$work/err" &
pid=$!
for _ in $(seq 100); do grep -q "listening on" "$work/out" 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$work/out")
[ -n "$url" ] || { echo "FAIL: serve did not start: $(cat "$work/err")"; exit 1; }

cd "$work"
failed=0
# run NAME [suite args...]
run() {
  local name=$1; shift
  set +e
  "$node22" "$suite" server --url "$url/mcp/fixture" \
    --expected-failures "$conf/expected-failures.yml" "$@" >"$work/$name.log" 2>&1
  local rc=$?
  set -e
  cat "$work/$name.log"
  if [ $rc -eq 0 ]; then
    echo "PASS conformance suite ($name) against /mcp/fixture"
  else
    echo "FAIL: conformance suite ($name, rc=$rc)"
    failed=1
  fi
}
run era-2025
run era-2026 --requirements 2026-07-28
[ $failed -eq 0 ] || { echo "serve's stderr:"; tail -20 "$work/err"; exit 1; }
