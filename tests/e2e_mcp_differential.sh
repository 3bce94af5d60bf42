#!/usr/bin/env bash
# Differential test of the MCP proxy (fuzz/differential/mcp_differential.mjs)
# at CI size: generated sessions with no cacheable repeats, run directly
# against the real npm servers (everything, memory, filesystem) and through
# `toolcache mcp`; the answers, their order and ids must be identical.
set -u
: "${TOOLCACHE_BIN:?set TOOLCACHE_BIN to the toolcache binary}"
: "${TOOLCACHE_SOURCE_DIR:?set TOOLCACHE_SOURCE_DIR to the checkout}"
timeout 240 node "$TOOLCACHE_SOURCE_DIR/fuzz/differential/mcp_differential.mjs" \
  --bin "$TOOLCACHE_BIN" --sessions 6 --seed 16
