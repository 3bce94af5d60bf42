#!/usr/bin/env bash
# serve's /mcp/<name> stateless (2026-07-28) path re-serializes every request
# through nlohmann::json before the pooled child sees it and every answer
# before the client does (src/mcp/http_server.cc ~792-853 and RestoreId):
# numbers past 64 bits and decimals past double precision reach the server
# altered, and the result's numbers reach the client altered.
# Exit 1 while the child sees other numbers than the client sent.
set -u
BIN=${TOOLCACHE_BIN:-/tmp/s18/atk_tc}
here=$(cd "$(dirname "$0")" && pwd)
w=$(mktemp -d /tmp/atkV-num-XXXX); : >"$w/child.log"
node=$(command -v node)
printf 'servers:\n  notes:\n    command: ["%s", "%s", "%s", "--", "%s", "%s"]\n' "$node" "${TOOLCACHE_SOURCE_DIR:-/work/wt/attackV}/tests/peers/tee.js" "$w/child.log" "$node" "$here/notes_server.mjs" >"$w/s.yaml"
taskset -c 0 "$BIN" serve --listen 127.0.0.1:0 --config "$w/s.yaml" --log-level error >"$w/out" 2>"$w/err" &
spid=$!; trap 'kill $spid 2>/dev/null' EXIT
for i in $(seq 50); do url=$(grep -o 'http://[^ ]*' "$w/out" | head -1); [ -n "$url" ] && break; sleep 0.2; done
M='{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
ARGS='{"id":"a","text":"t","amount":1234567.8912345678912345,"account":123456789012345678901234567890}'
curl -s -X POST -H 'content-type: application/json' -H 'accept: application/json' -H 'mcp-protocol-version: 2026-07-28' -H 'mcp-method: tools/call' -H 'mcp-name: note' \
  --data-binary '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"note","arguments":'"$ARGS"',"_meta":'"$M"'}}' "$url/mcp/notes" | cut -c1-200; echo
sleep 0.5
sent=$(grep -o '"arguments":{[^}]*}' "$w/child.log" | grep amount | head -1)
echo "client sent: \"arguments\":$ARGS"
echo "child got:   $sent"
# Two different numbers, one key: the second read is served the first's entry.
read_n() { curl -s -X POST -H 'content-type: application/json' -H 'accept: application/json' -H 'mcp-protocol-version: 2026-07-28' -H 'mcp-method: tools/call' -H 'mcp-name: read_note' \
  --data-binary '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_note","arguments":{"id":"a","account":'"$1"'},"_meta":'"$M"'}}' "$url/mcp/notes"; }
r1=$(read_n 123456789012345678901234567890); r2=$(read_n 123456789012345678901234567891)
echo "read account ...890: $(cut -c1-120 <<<"$r1")"
echo "read account ...891: $(cut -c1-160 <<<"$r2")"
status=0
if [ "$sent" != "\"arguments\":$ARGS" ]; then echo "FAIL: the server received other arguments than the client sent"; status=1; fi
if grep -q '"hit":true' <<<"$r2"; then echo "FAIL: a call with another number was served the first call's entry"; status=1; fi
[ $status = 0 ] && echo PASS
exit $status
