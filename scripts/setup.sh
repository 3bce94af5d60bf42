#!/usr/bin/env bash
# Installs everything toolcache needs to build and test on Debian 12:
# Debian packages with apt-get, and the npm test peers from the lock file.
# Idempotent and fast when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake g++ pkg-config clang-format
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libspdlog-dev libfmt-dev
  libssl-dev libglpk-dev glpk-utils gnuplot-nox
  libgtest-dev libgmock-dev libbenchmark-dev
  python3
)
# Node.js and npm run the MCP test peers; keep a newer one if present.
command -v node >/dev/null 2>&1 || PACKAGES+=(nodejs)
command -v npm >/dev/null 2>&1 || PACKAGES+=(npm)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm test peers (MCP servers and the official SDK client), pinned by the lock.
if [ -f tests/peers/package-lock.json ]; then
  stamp=tests/peers/node_modules/.toolcache-lock
  if [ ! -f "$stamp" ] || ! cmp -s tests/peers/package-lock.json "$stamp"; then
    echo "setup: installing npm test peers from tests/peers/package-lock.json"
    (cd tests/peers && npm ci --no-audit --no-fund --loglevel=error)
    cp tests/peers/package-lock.json "$stamp"
  fi
fi
echo "setup: ok"
