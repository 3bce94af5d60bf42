#!/usr/bin/env bash
# A real coding agent (Claude Code from npm, tests/agent) through
# `toolcache proxy`, offline against the scripted fake upstream: the second
# read of a file shows as a would-hit. Driven by tests/agent/agent.test.mjs.
set -euo pipefail
: "${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the built toolcache binary}"
src="${TOOLCACHE_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
dir="$src/tests/agent"
if [ ! -x "$dir/node_modules/@anthropic-ai/claude-code-linux-x64/claude" ]; then
  echo "e2e_agent: Claude Code missing; run scripts/setup.sh (npm ci in tests/agent)" >&2
  exit 1
fi
cd "$dir"
TOOLCACHE_BIN="$TOOLCACHE_BIN" timeout 300 node --test agent.test.mjs
