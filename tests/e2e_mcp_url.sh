#!/usr/bin/env bash
# End-to-end tests of `toolcache mcp --url` (a remote Streamable HTTP MCP
# server behind the cache) with real peers from npm (tests/peers: the
# official SDK client, server-everything in streamableHttp mode), pinned by
# tests/peers/package-lock.json. The driver is tests/peers/e2e_mcp_url.mjs.
set -euo pipefail
: "${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the built toolcache binary}"
src="${TOOLCACHE_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
peers="$src/tests/peers"
if [ ! -d "$peers/node_modules/@modelcontextprotocol/sdk" ]; then
  echo "e2e_mcp_url: npm peers missing; run scripts/setup.sh (npm ci in tests/peers)" >&2
  exit 1
fi
cd "$peers"
exec node e2e_mcp_url.mjs "$@"
