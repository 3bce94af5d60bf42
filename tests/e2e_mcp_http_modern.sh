#!/usr/bin/env bash
# End-to-end tests of `toolcache serve`'s /mcp/<name> in the stateless MCP
# era (2026-07-28, docs/SERVE.md): two serve instances on one sqlite store
# behind an alternating client, a 2025-era stdio server upstream, the 2.4.0
# SDK client and raw POSTs. The driver is tests/peers/e2e_mcp_http_modern.mjs.
set -euo pipefail
: "${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the built toolcache binary}"
src="${TOOLCACHE_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
peers="$src/tests/peers"
if [ ! -d "$peers/node_modules/@modelcontextprotocol/client" ]; then
  echo "e2e_mcp_http_modern: npm peers missing; run scripts/setup.sh (npm ci in tests/peers)" >&2
  exit 1
fi
cd "$peers"
exec node e2e_mcp_http_modern.mjs "$@"
