#!/usr/bin/env bash
# `toolcache mcp --metrics-listen`: the stdio MCP face exposes GET /metrics
# and GET /toolcache/stats (src/runtime/startup/admin.h). A real MCP server
# (@modelcontextprotocol/server-filesystem from tests/peers) behind the
# proxy; a client reads one file twice; the scrape shows one hit and one
# miss, /toolcache/stats agrees, a foreign Host is refused, a bad address
# exits 2, and SIGTERM still ends the proxy (the admin thread takes no signal).
set -euo pipefail
: "${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the built toolcache binary}"
src="${TOOLCACHE_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
server="$src/tests/peers/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
[ -f "$server" ] || { echo "SKIP: run scripts/setup.sh (no $server)"; exit 0; }
work=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

set +e
out=$("$TOOLCACHE_BIN" mcp --metrics-listen nonsense -- cat 2>&1 </dev/null); rc=$?
set -e
[ $rc -eq 2 ] && grep -q "expected HOST:PORT" <<<"$out" || fail "bad --metrics-listen: rc=$rc $out"
echo "bad --metrics-listen: exit $rc ($out)"

mkdir "$work/files" && echo "hello metrics" >"$work/files/a.txt"
mkfifo "$work/in"
"$TOOLCACHE_BIN" mcp --metrics-listen 127.0.0.1:0 -- node "$server" "$work/files" \
  <"$work/in" >"$work/out" 2>"$work/err" &
pid=$!
exec 3>"$work/in"
for _ in $(seq 100); do grep -q "metrics on" "$work/err" 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's|.*metrics on \(http://[^/]*\)/metrics.*|\1|p' "$work/err")
[ -n "$url" ] || fail "no metrics URL: $(cat "$work/err")"
send() { printf '%s\n' "$1" >&3; }
wait_id() { for _ in $(seq 200); do grep -q "\"id\":$1[,}]" "$work/out" && return 0; sleep 0.05; done; fail "no answer to id $1: $(cat "$work/out")"; }
send '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}'
wait_id 1
send '{"jsonrpc":"2.0","method":"notifications/initialized"}'
send '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
wait_id 2
read_call() { send "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"read_text_file\",\"arguments\":{\"path\":\"$work/files/a.txt\"}}}"; wait_id "$1"; }
read_call 3
read_call 4
metrics=$(curl -sf "$url/metrics") || fail "GET /metrics"
echo "$metrics" | grep -E '^toolcache_engine_calls_total\{outcome="(hit|miss)"\}'
echo "$metrics" | grep -qx 'toolcache_engine_calls_total{outcome="hit"} 1' || fail "no hit in /metrics"
echo "$metrics" | grep -qx 'toolcache_engine_calls_total{outcome="miss"} 1' || fail "no miss in /metrics"
curl -sf "$url/toolcache/stats" >"$work/stats.json" || fail "GET /toolcache/stats"
python3 - "$work/stats.json" <<'PY' || fail "stats: $(cat "$work/stats.json")"
import json, sys
d = json.load(open(sys.argv[1]))
print("stats: face=%s hits=%s misses=%s entries=%s" % (d["face"], d["cache"]["hits"], d["cache"]["misses"], d["cache"]["entries"]))
assert d["face"] == "mcp" and d["cache"]["hits"] == 1 and d["cache"]["misses"] == 1 and d["cache"]["entries"] == 1
PY
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: evil.example' "$url/metrics")
echo "foreign Host: $code"
[ "$code" = 403 ] || fail "a foreign Host got $code"
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/other")
[ "$code" = 404 ] || fail "unknown route got $code"
kill -TERM "$pid"
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
kill -0 "$pid" 2>/dev/null && fail "SIGTERM did not end the proxy"
pid=""
echo "PASS: toolcache mcp --metrics-listen serves the engine's hits and misses"

# Session 19: with an admin token (--admin-token-env VAR, else
# TOOLCACHE_ADMIN_TOKEN) both routes need it; a named variable left unset
# exits 2.
set +e
out=$("$TOOLCACHE_BIN" mcp --metrics-listen 127.0.0.1:0 --admin-token-env TC_E2E_UNSET_ADMIN -- cat 2>&1 </dev/null); rc=$?
set -e
[ $rc -eq 2 ] && grep -q "TC_E2E_UNSET_ADMIN is unset" <<<"$out" || fail "unset --admin-token-env: rc=$rc $out"
: >"$work/err2"
TC_E2E_ADMIN=e2e-admin "$TOOLCACHE_BIN" mcp --metrics-listen 127.0.0.1:0 --admin-token-env TC_E2E_ADMIN \
  -- node "$server" "$work/files" <"$work/in" >/dev/null 2>"$work/err2" &
pid=$!
for _ in $(seq 100); do grep -q "metrics on" "$work/err2" 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's|.*metrics on \(http://[^/]*\)/metrics.*|\1|p' "$work/err2")
[ -n "$url" ] || fail "no metrics URL: $(cat "$work/err2")"
for route in /metrics /toolcache/stats; do
  code=$(curl -s -o /dev/null -w '%{http_code}' "$url$route")
  [ "$code" = 401 ] || fail "$route without the admin token got $code"
  code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer e2e-admin' "$url$route")
  [ "$code" = 200 ] || fail "$route with the admin token got $code"
done
kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; pid=""
echo "PASS: with an admin token the routes need it"
