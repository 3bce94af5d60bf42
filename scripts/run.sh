#!/usr/bin/env bash
# Main job: set up, build, and run the simulator reproducing the paper's
# evaluation on its embedded defaults (tables on stdout, JSON and plots in out/).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh build
mkdir -p out
build/apps/toolcache/toolcache sim --out out "$@"
