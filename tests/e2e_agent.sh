#!/usr/bin/env bash
# Real coding agents (Claude Code and Codex CLI from npm, tests/agent)
# through `toolcache proxy`, offline against the scripted fake upstream: the
# second read of a file shows as a would-hit; the agents' own tools are
# observed, not served; Codex's apply_patch invalidates and its WebSocket
# attempt falls back at once. Driven by tests/agent/{agent,codex}.test.mjs.
set -euo pipefail
: "${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the built toolcache binary}"
src="${TOOLCACHE_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
dir="$src/tests/agent"
if [ ! -x "$dir/node_modules/@anthropic-ai/claude-code-linux-x64/claude" ]; then
  echo "e2e_agent: Claude Code missing; run scripts/setup.sh (npm ci in tests/agent)" >&2
  exit 1
fi
cd "$dir"
if [ ! -x "$dir/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex" ]; then
  echo "e2e_agent: Codex CLI missing; run scripts/setup.sh (npm ci in tests/agent)" >&2
  exit 1
fi
TOOLCACHE_BIN="$TOOLCACHE_BIN" timeout 480 node --test agent.test.mjs codex.test.mjs
