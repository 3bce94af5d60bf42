#!/usr/bin/env bash
# Store fault drill (fuzz/drills/store_drills.mjs) at CI size: a real
# redis-server killed under load and restarted. Fails when any answer is
# wrong or the store does not come back by itself. The SQLite disk-full
# drill (`--only sqlite`, needs root for its tmpfs) is not run here: it
# finds stale answers, an open bug (fuzz/README.md, "Fault drills").
set -u
: "${TOOLCACHE_BIN:?set TOOLCACHE_BIN to the toolcache binary}"
: "${TOOLCACHE_SOURCE_DIR:?set TOOLCACHE_SOURCE_DIR to the checkout}"
timeout 240 node "$TOOLCACHE_SOURCE_DIR/fuzz/drills/store_drills.mjs" \
  --bin "$TOOLCACHE_BIN" --seconds 1 --only redis
