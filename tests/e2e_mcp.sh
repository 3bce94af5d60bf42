#!/usr/bin/env bash
# End-to-end tests of `toolcache mcp` against real MCP peers from npm
# (tests/peers: the official SDK client; server-memory, server-filesystem,
# server-everything), pinned by tests/peers/package-lock.json and installed by
# scripts/setup.sh. The driver is tests/peers/e2e_mcp.mjs.
set -euo pipefail
: "${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the built toolcache binary}"
src="${TOOLCACHE_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
peers="$src/tests/peers"
if [ ! -d "$peers/node_modules/@modelcontextprotocol/sdk" ]; then
  echo "e2e_mcp: npm peers missing; run scripts/setup.sh (npm ci in tests/peers)" >&2
  exit 1
fi

# CLI usage errors: exit 2 with a message.
set +e
out=$("$TOOLCACHE_BIN" mcp 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "no server command" <<<"$out" || { echo "FAIL: mcp without command: rc=$rc $out"; exit 1; }
out=$("$TOOLCACHE_BIN" mcp -- /nonexistent/server 2>&1 </dev/null); rc=$?
[ $rc -eq 2 ] && grep -q "cannot start server" <<<"$out" || { echo "FAIL: missing server: rc=$rc $out"; exit 1; }
cfg=$(mktemp); printf 'capacityBytes: 1MiB\nperTooTtl: {}\n' >"$cfg"
out=$("$TOOLCACHE_BIN" mcp --config "$cfg" -- cat 2>&1 </dev/null); rc=$?
rm -f "$cfg"
[ $rc -eq 2 ] && grep -q "perTooTtl" <<<"$out" || { echo "FAIL: bad config: rc=$rc $out"; exit 1; }
# An option the chosen kind of server would ignore is refused, named.
out=$("$TOOLCACHE_BIN" mcp --url http://127.0.0.1:9/mcp --max-buffered-bytes 100 2>&1 </dev/null); rc=$?
[ $rc -eq 2 ] && grep -q -- "--max-buffered-bytes applies to a stdio server" <<<"$out" || { echo "FAIL: stdio-only option with --url: rc=$rc $out"; exit 1; }
out=$("$TOOLCACHE_BIN" mcp --header 'A: b' -- cat 2>&1 </dev/null); rc=$?
[ $rc -eq 2 ] && grep -q -- "--header applies only with --url" <<<"$out" || { echo "FAIL: --url-only option with a command: rc=$rc $out"; exit 1; }
# The server's exit status becomes the proxy's.
"$TOOLCACHE_BIN" mcp -- sh -c 'exit 7' </dev/null; rc=$?
[ $rc -eq 7 ] || { echo "FAIL: exit status not propagated: $rc"; exit 1; }
# Client EOF -> stdin closed -> SIGTERM -> SIGKILL: a server that ignores
# both EOF and SIGTERM is still stopped, and the proxy exits 0 (it stopped it).
timeout 20 "$TOOLCACHE_BIN" mcp --grace 0.2 -- sh -c 'trap "" TERM; while :; do sleep 0.05; done' </dev/null; rc=$?
[ $rc -eq 0 ] || { echo "FAIL: SIGKILL escalation: rc=$rc"; exit 1; }
# A server killed by a signal it did not get from the proxy: 128 + signal.
timeout 20 "$TOOLCACHE_BIN" mcp -- sh -c 'kill -9 $$' </dev/null; rc=$?
[ $rc -eq 137 ] || { echo "FAIL: signal status: rc=$rc"; exit 1; }
set -e
echo "PASS cli usage errors, exit status and shutdown escalation"

# toolcache wrap / --unwrap on a Claude-style mcpServers file.
tmpd=$(mktemp -d); trap 'rm -rf "$tmpd"' EXIT
cat >"$tmpd/.mcp.json" <<'JSON'
{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {"A": "1"}},
                "web": {"type": "http", "url": "https://example.com/mcp"}}}
JSON
cp "$tmpd/.mcp.json" "$tmpd/original.json"
"$TOOLCACHE_BIN" wrap "$tmpd/.mcp.json" 2>/dev/null
cmp -s "$tmpd/.mcp.json.bak" "$tmpd/original.json" || { echo "FAIL: wrap backup"; exit 1; }
node -e '
const j = require(process.argv[1]).mcpServers;
const ok = j.memory.args.join(" ") === "mcp --name memory -- npx -y @modelcontextprotocol/server-memory"
  && j.memory.env.A === "1" && j.web.url === "https://example.com/mcp" && !j.web.args;
process.exit(ok ? 0 : 1);' "$tmpd/.mcp.json" || { echo "FAIL: wrapped content"; cat "$tmpd/.mcp.json"; exit 1; }
"$TOOLCACHE_BIN" wrap --unwrap "$tmpd/.mcp.json" 2>/dev/null
[ -f "$tmpd/.mcp.json.bak.1" ] || { echo "FAIL: second backup"; exit 1; }
node -e '
const a = require(process.argv[1]), b = require(process.argv[2]);
process.exit(JSON.stringify(a) === JSON.stringify(b) ? 0 : 1);' "$tmpd/.mcp.json" "$tmpd/original.json" \
  || { echo "FAIL: unwrap did not restore"; exit 1; }
echo '{"servers": {}}' >"$tmpd/bad.json"
set +e
out=$("$TOOLCACHE_BIN" wrap "$tmpd/bad.json" 2>&1); rc=$?
set -e
[ $rc -eq 2 ] && grep -q mcpServers <<<"$out" || { echo "FAIL: bad wrap input: rc=$rc $out"; exit 1; }
echo "PASS wrap / unwrap with backup"

cd "$peers"
exec node e2e_mcp.mjs "$@"
