#!/usr/bin/env bash
# Two `toolcache mcp` processes on one SQLite store, the same server, different
# operator TTLs for read_note: P_long (ttlSeconds 3600) stores the entry; P_short
# (ttlSeconds 2) serves it after 4 s? Exit 1 when P_short serves an entry older
# than its own TTL.
set -u
BIN=${TOOLCACHE_BIN:-/tmp/s18/atk_tc}
here=$(cd "$(dirname "$0")" && pwd)
w=$(mktemp -d /tmp/atkV-ttl-XXXX)
for t in 3600 2; do printf 'tools:\n  read_note: {requestType: INFORMATIONAL, ttlSeconds: %s}\n' $t >"$w/c$t.yaml"; done
init='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
ready='{"jsonrpc":"2.0","method":"notifications/initialized"}'
call='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_note","arguments":{"id":"a"}}}'
run() { # TTL SLEEP_BEFORE_CALL
  { echo "$init"; sleep 1; echo "$ready"; sleep "$2"; echo "$call"; sleep 1.5; } |
    taskset -c 0 "$BIN" mcp --name notes --config "$w/c$1.yaml" --store "sqlite:$w/s.db" -- node "$here/notes_server.mjs" 2>/dev/null | grep '"id":1'
}
echo "long:  $(run 3600 0 | cut -c1-200)"
echo "long again (control): $(run 3600 0 | cut -c1-250)"
sleep 3
out=$(run 2 0)
echo "short, 5 s later: $(echo "$out" | cut -c1-250)"
if grep -q '"hit":true' <<<"$out"; then echo "FAIL: served an entry older than this process's ttlSeconds (2)"; exit 1; fi
echo PASS
