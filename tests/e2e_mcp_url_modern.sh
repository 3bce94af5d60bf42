#!/usr/bin/env bash
# End-to-end tests of `toolcache mcp --url` in the MCP 2026-07-28 era
# (docs/MCP.md): the 2.4.0 SDK client on stdio, pinned, auto and legacy, in
# front of a modern Streamable HTTP server built on @modelcontextprotocol/
# server 2.4.0 + node 2.1.2. The driver is tests/peers/e2e_mcp_url_modern.mjs.
set -euo pipefail
: "${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the built toolcache binary}"
src="${TOOLCACHE_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
peers="$src/tests/peers"
if [ ! -d "$peers/node_modules/@modelcontextprotocol/node" ]; then
  echo "e2e_mcp_url_modern: npm peers missing; run scripts/setup.sh (npm ci in tests/peers)" >&2
  exit 1
fi
cd "$peers"
exec node e2e_mcp_url_modern.mjs "$@"
