#!/usr/bin/env bash
# Store fault drills (fuzz/drills/store_drills.mjs) at CI size: a real
# redis-server killed under load and restarted, and SQLite on a 1 MiB tmpfs
# filled to ENOSPC under load, then freed (needs root to mount the tmpfs;
# without it that drill reports SKIPPED). Fails when any answer is wrong or
# a store does not come back by itself.
set -u
: "${TOOLCACHE_BIN:?set TOOLCACHE_BIN to the toolcache binary}"
: "${TOOLCACHE_SOURCE_DIR:?set TOOLCACHE_SOURCE_DIR to the checkout}"
timeout 240 node "$TOOLCACHE_SOURCE_DIR/fuzz/drills/store_drills.mjs" \
  --bin "$TOOLCACHE_BIN" --seconds 1
