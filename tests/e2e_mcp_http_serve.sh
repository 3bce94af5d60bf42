#!/usr/bin/env bash
# End-to-end tests of `toolcache serve`'s MCP endpoint (/mcp/<name>, MCP
# Streamable HTTP, docs/SERVE.md): the official SDK's
# StreamableHTTPClientTransport against real stdio servers from npm
# (tests/peers, installed by scripts/setup.sh). The driver is
# tests/peers/e2e_mcp_http_serve.mjs.
set -euo pipefail
: "${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the built toolcache binary}"
src="${TOOLCACHE_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
peers="$src/tests/peers"
if [ ! -d "$peers/node_modules/@modelcontextprotocol/sdk" ]; then
  echo "e2e_mcp_http_serve: npm peers missing; run scripts/setup.sh (npm ci in tests/peers)" >&2
  exit 1
fi

# A bad servers.<name>.command is a configuration error (exit 2, file:line).
cfg=$(mktemp)
trap 'rm -f "$cfg"' EXIT
printf 'servers:\n  fs:\n    command: node\n' >"$cfg"
set +e
out=$("$TOOLCACHE_BIN" serve --listen 127.0.0.1:0 --config "$cfg" 2>&1 </dev/null); rc=$?
set -e
[ $rc -eq 2 ] && grep -q "servers.fs.command' must be a non-empty list" <<<"$out" \
  || { echo "FAIL: bad command: rc=$rc $out"; exit 1; }
echo "PASS configuration error for servers.<name>.command"

cd "$peers"
exec node e2e_mcp_http_serve.mjs "$@"
