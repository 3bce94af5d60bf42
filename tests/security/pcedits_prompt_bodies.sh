#!/usr/bin/env bash
# Hostile request bodies against the prompt-cache stage's one reader
# (issue 30: every body is read from its bytes and the rewrite spliced in;
# no DOM), through the built binary with every promptCache switch on: what
# the provider receives is one well-formed body the stage rewrote
# consistently (a duplicate member edited once, its earlier copy cut out),
# lone surrogates and deep nesting never crash the proxy, and a good
# request is still rewritten afterwards.
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
printf 'promptCache:\n  stabilizeTools: true\n  placeCacheControl: true\n  cacheSystem: true\n  cacheLastTurn: true\n  minCacheableTokens: 0\n  detectBreaks: true\n' >"$tmp/c.yaml"
"$bin" proxy --listen 127.0.0.1:0 --upstream "$up" --config "$tmp/c.yaml" \
  --no-cache --log-level warn >"$tmp/px.log" 2>&1 &
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
# The body the fake provider received last, as raw text.
last_upstream() {
  curl -s "$up/_fake/requests" | node -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      const r = JSON.parse(s).filter((x) => x.api);
      process.stdout.write(r.length ? r[r.length - 1].raw : "");
    });'
}
# 1. Two top-level "tools" members: never spliced from the bytes (which
#    would rewrite one and leave the other for the provider to pick); the
#    provider gets one body with ONE tools member, the stage's rewrite.
printf '%s' '{"model":"m","max_tokens":5,"tools":[{"name":"zz","input_schema":{}}],"tools":[{"name":"b","input_schema":{}},{"name":"a","input_schema":{}}],"messages":[{"role":"user","content":"hi"}]}' >"$tmp/dup.json"
got=$(post "$tmp/dup.json")
body=$(last_upstream)
n=$(grep -o '"tools":' <<<"$body" | wc -l)
echo "duplicate tools members: HTTP $got; upstream has $n tools member(s): $(head -c 200 <<<"$body")"
if [ "$got" != 200 ] || [ "$n" != 1 ] || ! grep -q '"tools":\[{"name":"a"' <<<"$body"; then
  echo "  FAIL: want HTTP 200 and one rewritten tools member (a before b)"; fail=1
fi
# 2. A lone surrogate escape in a tool description: not dump form, and the
#    DOM refuses it: forwarded as the client's bytes, untouched.
printf '%s' '{"model":"m","max_tokens":5,"tools":[{"name":"b","description":"\ud800","input_schema":{}},{"name":"a","input_schema":{}}],"messages":[{"role":"user","content":"hi"}]}' >"$tmp/sur.json"
got=$(post "$tmp/sur.json")
body=$(last_upstream)
echo "lone surrogate: HTTP $got; upstream: $(head -c 160 <<<"$body")"
if [ "$got" != 200 ] || [ "$body" != "$(cat "$tmp/sur.json")" ]; then
  echo "  FAIL: want HTTP 200 and the client's bytes forwarded"; fail=1
fi
# 3. Nesting 500 deep in an unknown field (below the proxy's 512 limit, at
#    the span reader's): rewritten, no crash.
node -e 'const d=500;process.stdout.write(`{"model":"m","max_tokens":5,"x":${"[".repeat(d)}${"]".repeat(d)},"tools":[{"name":"b","input_schema":{}},{"name":"a","input_schema":{}}],"messages":[{"role":"user","content":"hi"}]}`)' >"$tmp/deep.json"
got=$(post "$tmp/deep.json")
body=$(last_upstream)
echo "nesting 500 deep: HTTP $got; upstream $(wc -c <<<"$body") bytes"
if [ "$got" != 200 ] || ! grep -q '"tools":\[{"name":"a"' <<<"$body"; then
  echo "  FAIL: want HTTP 200 and the tools rewritten"; fail=1
fi
# 4. A good compact request afterwards: the proxy is alive and the span
#    path rewrites it (sorted tools, a breakpoint on the last one, the
#    string system prompt as one block with a breakpoint); the other bytes
#    are the client's.
printf '%s' '{"model":"m","max_tokens":5,"system":"be brief","tools":[{"name":"b","input_schema":{}},{"name":"a","input_schema":{}}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}' >"$tmp/ok.json"
got=$(post "$tmp/ok.json")
body=$(last_upstream)
want='{"model":"m","max_tokens":5,"system":[{"type":"text","text":"be brief","cache_control":{"type":"ephemeral"}}],"tools":[{"name":"a","input_schema":{}},{"name":"b","input_schema":{},"cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]}'
echo "good request: HTTP $got; upstream: $body"
if [ "$got" != 200 ] || [ "$body" != "$want" ]; then
  echo "  FAIL: want HTTP 200 and $want"; fail=1
fi
kill -0 "$proxy_pid" 2>/dev/null || { echo "  FAIL: proxy died"; fail=1; }
exit $fail
