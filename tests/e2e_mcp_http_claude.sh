#!/usr/bin/env bash
# Claude Code 2.1.332 (tests/agent; 2.1.328 before session 17) against `toolcache serve`'s /mcp/<name>
# in both MCP eras (docs/SERVE.md): MCP_PROTOCOL_NEGOTIATION=auto (its
# default: 2026-07-28, stateless) and =legacy (2025 sessions), the model
# being the scripted fake upstream. The driver is
# tests/peers/e2e_claude_mcp_http.mjs; it skips when the native binary is
# not installed.
set -euo pipefail
: "${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the built toolcache binary}"
src="${TOOLCACHE_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
peers="$src/tests/peers"
if [ ! -d "$peers/node_modules/@modelcontextprotocol/server-filesystem" ]; then
  echo "e2e_mcp_http_claude: npm peers missing; run scripts/setup.sh (npm ci in tests/peers)" >&2
  exit 1
fi
cd "$peers"
exec node e2e_claude_mcp_http.mjs "$@"
