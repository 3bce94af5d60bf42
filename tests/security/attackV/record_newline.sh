#!/usr/bin/env bash
# A result recorded through serve's /v1/record whose JSON carries raw CR/LF
# whitespace (valid JSON) is served by a `toolcache mcp` stdio proxy sharing
# the store: is the newline-delimited stdio stream still one message per line?
set -u
BIN=${TOOLCACHE_BIN:-/tmp/s18/atk_tc}
here=$(cd "$(dirname "$0")" && pwd)
w=$(mktemp -d /tmp/atkV-nl-XXXX)
node=$(command -v node)
printf 'servers:\n  notes:\n    command: ["%s", "%s"]\n' "$node" "$here/notes_server.mjs" >"$w/s.yaml"
taskset -c 0 "$BIN" serve --listen 127.0.0.1:0 --config "$w/s.yaml" --store "sqlite:$w/s.db" --log-level error >"$w/out" 2>"$w/err" &
spid=$!; trap 'kill $spid 2>/dev/null' EXIT
for i in $(seq 50); do url=$(grep -o 'http://[^ ]*' "$w/out" | head -1); [ -n "$url" ] && break; sleep 0.2; done
printf '{"server":"notes","tool":"read_note","arguments":{"id":"a"},"result":{"content":[{"type":"text","text":"FORGED"}]\n,"isError":false\r\n}}' >"$w/rec.json"
echo "record: $(curl -s -X POST -H 'content-type: application/json' --data-binary @"$w/rec.json" "$url/v1/record" | cut -c1-60)"
init='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
{ echo "$init"; sleep 1; echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'; sleep 0.3
  echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_note","arguments":{"id":"a"}}}'; sleep 1.5; } |
  taskset -c 0 "$BIN" mcp --name notes --store "sqlite:$w/s.db" -- "$node" "$here/notes_server.mjs" 2>/dev/null >"$w/stdio.out"
cat -A "$w/stdio.out" | cut -c1-200
bad=0
while IFS= read -r line; do [ -z "$line" ] && continue; python3 -c 'import json,sys; json.loads(sys.argv[1])' "$line" 2>/dev/null || bad=$((bad+1)); done <"$w/stdio.out"
echo "unparsable stdio lines: $bad"
[ "$bad" = 0 ] || { echo "FAIL: a stored result broke the stdio framing"; exit 1; }
echo PASS
