#!/usr/bin/env bash
# End-to-end tests of `toolcache mcp` across MCP protocol eras (docs/MCP.md,
# "Protocol eras") with real peers pinned in tests/peers: the SDK 2.4.0
# server (tests/peers/modern_fixture.mjs, 2026-07-28 and 2025), the SDK
# 2.4.0 and 1.32.2 clients, server-memory (2025). The driver is
# tests/peers/e2e_mcp_era.mjs; an argument filters its tests by name.
set -euo pipefail
: "${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the built toolcache binary}"
src="${TOOLCACHE_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
peers="$src/tests/peers"
for pkg in client server sdk server-memory; do
  if [ ! -d "$peers/node_modules/@modelcontextprotocol/$pkg" ]; then
    echo "e2e_mcp_era: npm peer @modelcontextprotocol/$pkg missing; run scripts/setup.sh" >&2
    exit 1
  fi
done
cd "$peers"
exec node e2e_mcp_era.mjs "$@"
