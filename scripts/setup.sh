#!/usr/bin/env bash
# Installs everything toolcache needs to build and test on Debian 12:
# Debian packages with apt-get, and the npm test peers from the lock file.
# Idempotent and fast when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake g++ pkg-config clang-format
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libspdlog-dev libfmt-dev
  libssl-dev libboost1.81-dev libsimdjson-dev libglpk-dev glpk-utils gnuplot-nox
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 ccache libsqlite3-dev libhiredis-dev zlib1g-dev redis-server wrk
  openssl   # the CLI: e2e_proxy_ops and e2e_mcp_url make self-signed certificates at test time
  curl      # e2e tests talk HTTP to the servers they start
  dpkg-dev file groff-base zsh   # the .deb (cpack, dpkg-shlibdeps), man page and completion checks
  chromium   # the dashboard test (headless, driven by puppeteer-core)
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

# npm packages (test peers, SDK clients, tools), each folder pinned by its own
# lock file: tests/peers (MCP servers and the SDK client) and any other
# folder listed here. `npm ci` runs only when a lock file changed.
NPM_DIRS=(tests/peers tests/llm tests/agent tests/browser fuzz/differential tests/conformance)
for d in "${NPM_DIRS[@]}"; do
  [ -f "$d/package-lock.json" ] || continue
  stamp=$d/node_modules/.toolcache-lock
  if [ ! -f "$stamp" ] || ! cmp -s "$d/package-lock.json" "$stamp"; then
    echo "setup: installing npm packages from $d/package-lock.json"
    (cd "$d" && npm ci --no-audit --no-fund --loglevel=error)
    cp "$d/package-lock.json" "$stamp"
  fi
done
# openai 7.x (tests/llm) declares Node.js >= 22; npm only warns, and the
# tests pass on 20, so this stays a warning.
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 22 ]; then
  echo "setup: warning: Node.js $(node --version 2>/dev/null) is older than the 22 that openai 7.x (tests/llm) declares" >&2
fi
echo "setup: ok"
