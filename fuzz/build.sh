#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan) into build-fuzz/ (or $1).
# Needs Debian's clang, libclang-rt-14-dev (libFuzzer, sanitizer runtimes)
# and llvm (llvm-cov, llvm-profdata for fuzz/coverage.sh); installs them
# when missing. TOOLCACHE_JOBS sets the parallel jobs (default: all cores).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-fuzz}
need=()
for p in clang libclang-rt-14-dev llvm; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++
      -DTOOLCACHE_FUZZ=ON -DTOOLCACHE_BUILD_TESTS=OFF -DTOOLCACHE_BUILD_BENCH=OFF)
if command -v ccache >/dev/null 2>&1; then
  args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$dir" "${args[@]}" >/dev/null
targets=()
for src in fuzz/*_fuzz.cc; do
  name=$(basename "$src" _fuzz.cc)
  targets+=(--target "fuzz_$name")
done
cmake --build "$dir" -j"${TOOLCACHE_JOBS:-$(nproc)}" "${targets[@]}"
