#!/usr/bin/env bash
# The prompt-cache stage composed with the tool loop's splice and offload
# (issue 30: the client's body read once, the stages' edits read into that
# reading, every rewrite applied by one writer), through the built binary
# with --serve --offload and every promptCache switch on. Hostile bodies
# aim at the overlaps: an oversized result in the last message (offload
# replaces it, the prompt cache places a breakpoint on that block), two
# top-level "tools" members and two "content" members in the last message
# (the prompt cache drops the earlier copy, offload edits the last). These
# bytes are the same as before the composition (the stage then read the
# applied body); the group pins that they stay so. What the provider gets
# is one well-formed body: one tools member with toolcache_read sorted in,
# the preview, and the breakpoint on the block that holds it.
set -uo pipefail
bin=${TOOLCACHE_BIN:?}
src=${TOOLCACHE_SOURCE_DIR:?}
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
node "$src/tests/llm/fake_upstream.mjs" >"$tmp/fake.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do grep -q http "$tmp/fake.log" && break; sleep 0.1; done
up=$(grep -o 'http://127.0.0.1:[0-9]*' "$tmp/fake.log" | head -1)
printf 'proxy:\n  offloadTokens: 100\npromptCache:\n  stabilizeTools: true\n  placeCacheControl: true\n  cacheSystem: true\n  cacheLastTurn: true\n  minCacheableTokens: 0\n  detectBreaks: true\n' >"$tmp/c.yaml"
"$bin" proxy --listen 127.0.0.1:0 --upstream "$up" --config "$tmp/c.yaml" \
  --serve --offload --log-level warn >"$tmp/px.log" 2>&1 &
pids+=($!)
proxy_pid=$!
for _ in $(seq 300); do grep -q "listening on" "$tmp/px.log" && break; sleep 0.1; done
px=$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$tmp/px.log" | grep -o 'http.*')
if [ -z "$px" ]; then
  echo "proxy did not start:"; cat "$tmp/px.log"; exit 1
fi
post() {  # post FILE -> prints the status
  curl -s -o "$tmp/out" -w '%{http_code}' -X POST "$px/v1/messages" \
    -H 'content-type: application/json' -H 'x-api-key: sk' \
    -H 'anthropic-version: 2023-06-01' --data-binary @"$1"
}
last_upstream() {
  curl -s "$up/_fake/requests" | node -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      const r = JSON.parse(s).filter((x) => x.api);
      process.stdout.write(r.length ? r[r.length - 1].raw : "");
    });'
}
# check NAME BODY: the upstream body is one JSON object whose raw text has
# one "tools" member, whose tools are a, b, toolcache_read in that order,
# and whose last message's last block carries a breakpoint and the
# offload preview instead of the 4,000-byte result.
check() {
  node -e '
    const raw = process.argv[1];
    const why = [];
    let j;
    try { j = JSON.parse(raw); } catch (e) { console.log("not JSON: " + e.message); process.exit(1); }
    const n = (raw.match(/"tools":/g) || []).length;
    if (n !== 1) why.push(n + " tools members");
    const names = (j.tools || []).map((t) => t.name).join(",");
    if (names !== "a,b,toolcache_read") why.push("tools " + names);
    const last = j.messages[j.messages.length - 1];
    const blocks = Array.isArray(last.content) ? last.content : [];
    const back = blocks[blocks.length - 1] || {};
    if (!back.cache_control) why.push("no breakpoint on the last block");
    const text = JSON.stringify(back.content || "");
    if (!text.includes("toolcache: this tool result was offloaded")) why.push("no preview");
    if (raw.includes("x".repeat(3000))) why.push("the oversized result went upstream");
    console.log("tools " + names + "; last block " + JSON.stringify(back).slice(0, 90));
    if (why.length) { console.log("  FAIL: " + why.join("; ")); process.exit(1); }
  ' "$1"
}
big=$(head -c 4000 /dev/zero | tr '\0' x)
history='{"role":"user","content":"list"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]}'
# 1. The plain overlap: offload's tool and preview, the prompt cache's
#    sorted list and breakpoint, in one body.
printf '%s' '{"model":"m","max_tokens":5,"tools":[{"name":"b","input_schema":{}},{"name":"a","input_schema":{}}],"messages":['"$history"',{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"'"$big"'"}]}]}' >"$tmp/plain.json"
got=$(post "$tmp/plain.json"); body=$(last_upstream)
echo "offloaded result in the last message: HTTP $got"
if [ "$got" != 200 ] || ! check "$body"; then echo "  FAIL: case 1"; fail=1; fi
# 2. Two top-level tools members: offload appends to the last (the one the
#    provider reads), the prompt cache rewrites it and cuts the first.
printf '%s' '{"model":"m","max_tokens":5,"tools":[{"name":"zz","input_schema":{}}],"tools":[{"name":"b","input_schema":{}},{"name":"a","input_schema":{}}],"messages":['"$history"',{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"'"$big"'"}]}]}' >"$tmp/dup.json"
got=$(post "$tmp/dup.json"); body=$(last_upstream)
echo "duplicate tools members: HTTP $got"
if [ "$got" != 200 ] || ! check "$body" || grep -q '"zz"' <<<"$body"; then
  echo "  FAIL: case 2 (want the earlier tools member cut out)"; fail=1
fi
# 3. Two content members in the last message: the earlier one holds a
#    FAKE result; offload and the breakpoint both go to the last.
printf '%s' '{"model":"m","max_tokens":5,"tools":[{"name":"b","input_schema":{}},{"name":"a","input_schema":{}}],"messages":['"$history"',{"role":"user","content":[{"type":"text","text":"FAKE"}],"content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"'"$big"'"}]}]}' >"$tmp/dupc.json"
got=$(post "$tmp/dupc.json"); body=$(last_upstream)
echo "duplicate content members: HTTP $got"
if [ "$got" != 200 ] || ! check "$body" || grep -q 'FAKE' <<<"$body"; then
  echo "  FAIL: case 3 (want the earlier content member cut out)"; fail=1
fi
kill -0 "$proxy_pid" 2>/dev/null || { echo "  FAIL: proxy died"; fail=1; }
exit $fail
