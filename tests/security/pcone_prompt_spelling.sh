#!/usr/bin/env bash
# The prompt-cache stage over bodies the client did not write in compact
# dump form (issue 30: one implementation over any body), through the built
# binary with every promptCache switch on, against the fake provider: the
# provider receives the client's bytes outside what the stage rewrites
# (numbers as the client spelled them -- "max_tokens": 1.0e3 is not turned
# into 1000.0, which a provider checking for an integer may reject --
# whitespace and escapes), tools are recognised whatever their spelling,
# an edited member is never sent twice, and a body the stage cannot read is
# forwarded untouched.
source "$(dirname "$0")/lib/common.sh"
set +e
bad=0
start_bg "$work/fake.out" "$work/fake.err" node "$src/tests/llm/fake_upstream.mjs"
fake_pid=$pid
for _ in $(seq 100); do grep -q http "$work/fake.out" && break; sleep 0.1; done
up=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/fake.out" | head -1)
[ -n "$up" ] || fail "fake upstream did not start: $(cat "$work/fake.err")"
printf 'promptCache:\n  stabilizeTools: true\n  placeCacheControl: true\n  cacheSystem: true\n  cacheLastTurn: true\n  minCacheableTokens: 0\n  detectBreaks: true\n' >"$work/c.yaml"
start_bg "$work/px.out" "" "$TOOLCACHE_BIN" proxy --listen 127.0.0.1:0 \
  --upstream "$up" --config "$work/c.yaml" --no-cache --log-level warn
proxy_pid=$pid
wait_listening "$work/px.out" "" "$proxy_pid" || exit 1
px=$url
post() {  # post FILE -> prints the status
  curl -s -o "$work/out" -w '%{http_code}' -X POST "$px/v1/messages" \
    -H 'content-type: application/json' -H 'x-api-key: sk' \
    -H 'anthropic-version: 2023-06-01' --data-binary @"$1"
}
last_upstream() {  # the raw body the fake provider received last
  curl -s "$up/_fake/requests" | node -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      const r = JSON.parse(s).filter((x) => x.api);
      process.stdout.write(r.length ? r[r.length - 1].raw : "");
    });'
}
has() { grep -qF -- "$2" <<<"$1"; }

# 1. A pretty-printed body with number spellings the DOM would rewrite:
#    the tools are sorted and marked, every other byte is the client's.
cat >"$work/num.json" <<'J'
{
  "model": "m",
  "max_tokens": 1.0e3,
  "temperature": 0.50,
  "metadata": {"user_id": "caf\u00e9 \/ u"},
  "tools": [ {"name": "b", "input_schema": {"x": 1E2}},
             {"name": "a", "input_schema": {}} ],
  "messages": [ {"role": "user", "content": [ {"type": "text", "text": "hi"} ]} ]
}
J
got=$(post "$work/num.json")
body=$(last_upstream)
echo "non-compact body: HTTP $got; upstream: $(tr '\n' ' ' <<<"$body" | head -c 400)"
if [ "$got" != 200 ] || ! has "$body" '"max_tokens": 1.0e3,' ||
  has "$body" '1000' || ! has "$body" '"temperature": 0.50,' ||
  ! has "$body" '"metadata": {"user_id": "caf\u00e9 \/ u"},' ||
  ! has "$body" '"tools": [{"name": "a", "input_schema": {}},{"name": "b", "input_schema": {"x": 1E2},"cache_control":{"type":"ephemeral"}}],' ||
  ! has "$body" '{"type": "text", "text": "hi","cache_control":{"type":"ephemeral"}}'; then
  echo "  FAIL: want HTTP 200, 1.0e3 / 0.50 / the escapes kept, the tools sorted and marked, the last turn marked"
  bad=1
fi
# 2. Names spelled with escapes ("n\u0061me"): the same tools, sorted by
#    their decoded names; the escaped spelling travels with each tool.
printf '%s' '{"model":"m","max_tokens":5,"tools":[{"n\u0061me":"z","input_schema":{}},{"name":"\u0079","input_schema":{}}],"messages":[{"role":"user","content":"q"}]}' >"$work/esc.json"
got=$(post "$work/esc.json")
body=$(last_upstream)
echo "escaped names: HTTP $got; upstream: $(head -c 300 <<<"$body")"
if [ "$got" != 200 ] ||
  ! has "$body" '"tools":[{"name":"\u0079","input_schema":{}},{"n\u0061me":"z","input_schema":{},"cache_control":{"type":"ephemeral"}}]'; then
  echo "  FAIL: want y before z, each in the client's spelling"; bad=1
fi
# 3. Two "tools" members in a pretty body: the provider reads the last; it
#    is the one rewritten, and the earlier one is not sent.
printf '{\n "model": "m", "max_tokens": 5,\n "tools": [{"name":"zz","input_schema":{}}],\n "tools": [{"name":"b","input_schema":{}}, {"name":"a","input_schema":{}}],\n "messages": [{"role":"user","content":"dup"}]\n}' >"$work/dup.json"
got=$(post "$work/dup.json")
body=$(last_upstream)
n=$(grep -o '"tools":' <<<"$body" | wc -l)
echo "duplicate tools members: HTTP $got; $n tools member(s) upstream: $(tr '\n' ' ' <<<"$body" | head -c 300)"
if [ "$got" != 200 ] || [ "$n" != 1 ] || has "$body" '"zz"' ||
  ! has "$body" '"tools": [{"name":"a","input_schema":{}},{"name":"b"'; then
  echo "  FAIL: want one tools member, the last one's tools sorted"; bad=1
fi
# 4. A body the stage cannot read (a lone surrogate escape, pretty): the
#    client's bytes, untouched.
printf '{ "model": "m", "max_tokens": 1.0e3,\n  "tools": [{"name":"b","description":"\\ud800","input_schema":{}}, {"name":"a","input_schema":{}}],\n  "messages": [{"role":"user","content":"hi"}] }' >"$work/sur.json"
got=$(post "$work/sur.json")
body=$(last_upstream)
echo "lone surrogate: HTTP $got; upstream: $(tr '\n' ' ' <<<"$body" | head -c 200)"
if [ "$got" != 200 ] || [ "$body" != "$(cat "$work/sur.json")" ]; then
  echo "  FAIL: want HTTP 200 and the client's bytes forwarded"; bad=1
fi
kill -0 "$proxy_pid" 2>/dev/null || { echo "  FAIL: proxy died"; bad=1; }
kill -0 "$fake_pid" 2>/dev/null || true
exit $bad
