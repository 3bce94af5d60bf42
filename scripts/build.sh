#!/usr/bin/env bash
# Configures and builds toolcache. Usage: scripts/build.sh [BUILD_DIR] [cmake args...]
# BUILD_DIR defaults to build/. TOOLCACHE_SANITIZE=1 builds with ASan+UBSan;
# TOOLCACHE_JOBS sets the parallel jobs (default: all cores).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
# ccache, when installed, makes rebuilds cheap; it is optional. Paths are
# hashed relative to the checkout, so two clones share the cache.
if command -v ccache >/dev/null 2>&1; then
  args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
fi
if [ "${TOOLCACHE_SANITIZE:-0}" = 1 ]; then
  args+=(-DTOOLCACHE_SANITIZE=ON -DTOOLCACHE_BUILD_BENCH=OFF)
fi
cmake -S . -B "$dir" "${args[@]}" "$@" >/dev/null
cmake --build "$dir" -j"${TOOLCACHE_JOBS:-$(nproc)}"
