#!/usr/bin/env bash
# Fault drills for `toolcache mcp` (fuzz/drills/mcp_proxy_drills.mjs) at CI
# size: the real server-everything killed mid-call, slow, sending garbage,
# closing its output early; the client vanishing mid-call; SIGTERM under
# load. Fails when any request is answered wrongly or left unanswered, or a
# proxy does not exit by itself. fuzz/README.md records a larger run.
set -u
: "${TOOLCACHE_BIN:?set TOOLCACHE_BIN to the toolcache binary}"
: "${TOOLCACHE_SOURCE_DIR:?set TOOLCACHE_SOURCE_DIR to the checkout}"
timeout 240 node "$TOOLCACHE_SOURCE_DIR/fuzz/drills/mcp_proxy_drills.mjs" \
  --bin "$TOOLCACHE_BIN" --scale 1
