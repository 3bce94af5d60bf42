#!/usr/bin/env bash
# Attacks on `toolcache serve`'s MCP endpoint (/mcp/<name>, issue 27): a
# result recorded through /v1/ that would make the MCP answer unreadable
# (27.6), and one tenant holding every MCP session (27.10). The MCP server
# is the real server-filesystem from tests/peers (scripts/setup.sh).
source "$(dirname "$0")/lib/common.sh"
FS="$src/tests/peers/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
[ -f "$FS" ] || { echo "FAIL: $FS missing; run scripts/setup.sh" >&2; exit 1; }
mkdir "$work/files"
echo "hello" >"$work/files/a.txt"
node=$(command -v node)

# start EXTRA_YAML [ARGS...]: serve with the filesystem server at /mcp/fs.
start() {
  local extra=$1; shift
  cat >"$work/serve.yaml" <<YAML
tools:
  read_text_file: {requestType: INFORMATIONAL, ttlSeconds: 600}
servers:
  fs:
    command: ["$node", "$FS", "$work/files"]
$extra
YAML
  start_bg "$work/out" "$work/err" "$TOOLCACHE_BIN" serve --listen 127.0.0.1:0 \
    --config "$work/serve.yaml" --log-level error "$@"
  # Up to 30 s (lib/common.sh); a server that died says with what status.
  wait_listening "$work/out" "$work/err" || exit 1
}

# mcp TOKEN SESSION BODY -> writes headers to $work/h, body to $work/b;
# prints the status (000 when no answer within 30 s: an initialize starts
# the filesystem server under node, which took over 10 s once on a loaded
# 2-core machine, session 16; a hang still fails).
mcp() {
  local args=(-s -m 30 -D "$work/h" -o "$work/b" -w '%{http_code}' -X POST
    -H 'content-type: application/json'
    -H 'accept: application/json, text/event-stream'
    -H 'mcp-protocol-version: 2025-06-18')
  [ -n "$1" ] && args+=(-H "authorization: Bearer $1")
  [ -n "$2" ] && args+=(-H "mcp-session-id: $2")
  curl "${args[@]}" --data-binary "$3" "$url/mcp/fs" || true
}
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sec","version":"1"}}}'
# open TOKEN -> prints the new session id (empty when refused)
open_session() {
  local status
  status=$(mcp "$1" "" "$init")
  echo "initialize ($1): $status" >&2
  [ "$status" = 200 ] || { cat "$work/b" >&2; echo >&2; return 0; }
  local sid
  sid=$(sed -n 's/^mcp-session-id: *\([^\r]*\).*/\1/Ip' "$work/h")
  mcp "$1" "$sid" '{"jsonrpc":"2.0","method":"notifications/initialized"}' >/dev/null
  echo "$sid"
}

# --- 27.6: a recorded non-object result never reaches /mcp/fs -----------
start ""
args='{"path":"'"$work/files/a.txt"'"}'
for result in '"a{b"' '[{"content":[]}]' '7'; do
  r=$(curl -s -m 5 -w ' %{http_code}' -X POST -H 'content-type: application/json' --data-binary \
    '{"server":"fs","tool":"read_text_file","arguments":'"$args"',"result":'"$result"'}' "$url/v1/record")
  echo "record $result: $r"
  [[ "$r" == *" 400" ]] || fail "a non-object result was accepted: $r"
done
sid=$(open_session "")
[ -n "$sid" ] || fail "no session"
call='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_text_file","arguments":'"$args"'}}'
for round in miss hit; do
  status=$(mcp "" "$sid" "$call")
  body=$(cat "$work/b")
  echo "tools/call ($round): $status $body"
  [ "$status" = 200 ] || fail "tools/call: no answer ($status)"
  # The JSON-RPC answer (from the SSE data line when it is a stream).
  msg=$(grep -q '^data:' <<<"$body" && sed -n 's/^data: *//p' <<<"$body" | tail -1 || echo "$body")
  python3 -c 'import json,sys; m=json.loads(sys.argv[1]); r=m["result"]; assert isinstance(r, dict) and "hello" in json.dumps(r), m' "$msg" \
    || fail "tools/call answer is not a valid MCP result: $msg"
  if [ "$round" = hit ]; then
    grep -q '"toolcache/cache":{"hit":true' <<<"$msg" || fail "the second call was no hit: $msg"
  fi
done
stop
pass "27.6 /mcp/fs answers tools/call (miss and hit) with a valid result object; non-objects refused at record"

# --- 27.10: one tenant cannot hold every MCP session --------------------
start 'serve:
  tenants:
    alice: {token: tok-alice}
    bob: {token: tok-bob}' --mcp-max-sessions 4
for i in 1 2; do
  s=$(open_session tok-alice)
  [ -n "$s" ] || fail "alice's session $i was refused"
done
status=$(mcp tok-alice "" "$init")
echo "alice's third initialize: $status $(cat "$work/b")"
[ "$status" = 429 ] || fail "alice got a third session ($status)"
grep -q "mcp-max-sessions-per-tenant" "$work/b" || fail "the 429 does not name the limit"
for i in 1 2; do
  s=$(open_session tok-bob)
  [ -n "$s" ] || fail "bob was locked out (session $i)"
done
status=$(mcp tok-bob "" "$init")
echo "a fifth session in all: $status $(cat "$work/b")"
[ "$status" = 503 ] || [ "$status" = 429 ] || fail "past the global limit: $status"
stop
pass "27.10 alice's sessions stop at her limit (429); bob still gets his"
echo "serve_mcp: ok"
