#!/usr/bin/env bash
# Adversarial request bodies against the LLM proxy's one request parse
# (issue 30: one JSON toolkit, edits applied once), through the built
# binary with the tool loop and offload on: every hostile body gets a 400 in
# the provider's error shape, never a crash, a hang or a silent forward, and
# the proxy still answers a good request afterwards.
set -uo pipefail
bin=${TOOLCACHE_BIN:?}
src=${TOOLCACHE_SOURCE_DIR:?}
source "$(dirname "$0")/lib/common.sh"
# This group checks each status itself (fail=1, then carries on): no -e.
set +e
tmp=$work
fail=0
node "$src/tests/llm/fake_upstream.mjs" >"$tmp/fake.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do grep -q http "$tmp/fake.log" && break; sleep 0.1; done
up=$(grep -o 'http://127.0.0.1:[0-9]*' "$tmp/fake.log" | head -1)
start_bg "$tmp/px.log" "" "$bin" proxy --listen 127.0.0.1:0 --upstream "$up" \
  --serve --offload --log-level warn
proxy_pid=$pid
wait_listening "$tmp/px.log" "$tmp/px.log" || exit 1
px=$url
post() {  # post FILE -> prints the status, body in $tmp/out
  curl -s -o "$tmp/out" -w '%{http_code}' -X POST "$px/v1/messages" \
    -H 'content-type: application/json' -H 'x-api-key: sk' \
    -H 'anthropic-version: 2023-06-01' --data-binary @"$1"
}
expect() {  # expect CASE FILE WANT_STATUS WANT_TEXT
  local got
  got=$(post "$2")
  echo "$1: HTTP $got $(head -c 160 "$tmp/out")"
  if [ "$got" != "$3" ] || ! grep -q "$4" "$tmp/out"; then
    echo "  FAIL: want HTTP $3 with '$4'"; fail=1
  fi
}
# 1. Nesting 100,000 deep inside a message: refused by the depth pre-check
#    (no recursion anywhere), named as a depth problem.
node -e 'const d=100000;process.stdout.write(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":${"[".repeat(d)}${"]".repeat(d)}}]}`)' >"$tmp/deep.json"
expect "nesting 100000 deep" "$tmp/deep.json" 400 "depth"
# 2. A tool result whose content has an invalid escape: refused, not
#    spliced or offloaded over.
printf '%s' '{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"bad \x escape"}]}]}' >"$tmp/esc.json"
expect "invalid escape in a tool result" "$tmp/esc.json" 400 "error"
# 3. Ill-formed UTF-8 (an overlong '/') in a string.
printf '{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"a\xC0\xAFb"}]}' >"$tmp/utf8.json"
expect "ill-formed UTF-8" "$tmp/utf8.json" 400 "error"
# 4. A huge number where an integer is expected, and trailing garbage.
printf '{"model":"m","max_tokens":1%s,"messages":[{"role":"user","content":"x"}]} {"x":1}' \
  "$(head -c 5000 /dev/zero | tr '\0' 0)" >"$tmp/trail.json"
expect "trailing content after the body" "$tmp/trail.json" 400 "trailing"
# 5. The proxy is alive and a good request still goes through.
printf '{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}' >"$tmp/ok.json"
got=$(post "$tmp/ok.json")
echo "good request after the hostile ones: HTTP $got"
[ "$got" = 200 ] || { echo "  FAIL: want 200"; fail=1; }
kill -0 "$proxy_pid" 2>/dev/null || { echo "  FAIL: proxy died"; fail=1; }
exit $fail
