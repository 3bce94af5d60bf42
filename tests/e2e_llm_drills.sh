#!/usr/bin/env bash
# Fault drills for `toolcache proxy` (fuzz/drills/llm_proxy_drills.mjs):
# slow, failing, truncating, killed and garbage-sending upstreams, clients
# vanishing mid-stream, SIGTERM under load. Fails when any request is
# answered wrongly, the proxy does not recover by itself, or it does not
# exit 0 on SIGTERM. Needs only node (the fake upstream uses no packages).
set -u
: "${TOOLCACHE_BIN:?set TOOLCACHE_BIN to the toolcache binary}"
: "${TOOLCACHE_SOURCE_DIR:?set TOOLCACHE_SOURCE_DIR to the checkout}"
timeout 180 node "$TOOLCACHE_SOURCE_DIR/fuzz/drills/llm_proxy_drills.mjs" \
  --bin "$TOOLCACHE_BIN"
