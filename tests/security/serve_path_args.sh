#!/usr/bin/env bash
# Attacks on the arguments of `toolcache serve`'s cache API now that a
# call's arguments are parsed once (by the key's canonicalizer, issue 30)
# and reach the engine as sent (issue 32): documents two JSON parsers read
# differently (duplicate names, 1e400, a byte order mark, 130 levels)
# must never be served or stored; integers a double cannot hold, "_meta",
# whitespace and member order must neither merge two calls nor split one;
# a write whose arguments are refused still invalidates; a tenant's entry
# stays its own; and many label sets do not grow the service without
# bound. Each case prints what it saw.
source "$(dirname "$0")/lib/common.sh"

start() {  # start CONFIG_TEXT: serve on a free port; sets $url and $pid
  printf '%s\n' "$1" >"$work/serve.yaml"
  start_bg "$work/out" "$work/err" "$TOOLCACHE_BIN" serve --listen 127.0.0.1:0 \
    --config "$work/serve.yaml" --log-level error
  wait_listening "$work/out" "$work/err" || exit 1
}
req() {  # req PATH BODY [TOKEN] -> "STATUS BODY" (5 s at most: a hang fails)
  local auth=()
  [ -n "${3:-}" ] && auth=(-H "authorization: Bearer $3")
  curl -s -m 5 -o "$work/body" -w '%{http_code}' -X POST "${auth[@]}" \
    -H 'content-type: application/json' --data-binary "$2" "$url$1" || true
  printf ' '; cat "$work/body" 2>/dev/null || true
}
expect() {  # expect CASE STATUS PATTERN RESPONSE
  [[ "$4" == "$2 "* ]] && grep -q -- "$3" <<<"$4" || fail "$1: want $2 /$3/, got: $4"
}
refused() {  # refused CASE PATTERN RESPONSE: 200 matching PATTERN, or a 400
  [[ "$3" == "400 "*'"bad_request"'* ]] && return 0
  expect "$1" 200 "$2" "$3"
}
call() { printf '{"server":"docs","tool":"%s","arguments":%s' "$1" "$2"; }
result='"result":{"content":[{"type":"text","text":"RESULT-'

start 'tools:
  get_doc: {requestType: INFORMATIONAL, ttlSeconds: 600}
  query_docs: {requestType: INFORMATIONAL, ttlSeconds: 600}'

# --- 1. Documents parsers disagree on are refused, never stored or served.
for args in '{"id":1,"id":2}' '{"id":1,"\u0069d":2}' '{"id":1e400}' \
  "$(printf '{"a":%s1%s}' "$(printf '[%.0s' $(seq 130))" "$(printf ']%.0s' $(seq 130))")"; do
  r=$(req /v1/record "$(call get_doc "$args"),$result"'dup"}]}}')
  echo "record ${args:0:40}: ${r:0:160}"
  # Refused by the engine (not admitted) or already by the body reader.
  refused "record ${args:0:20}" '"admitted":false' "$r"
  r=$(req /v1/lookup "$(call get_doc "$args")}")
  echo "lookup ${args:0:40}: ${r:0:160}"
  refused "lookup ${args:0:20}" '"reason":"invalid_arguments"' "$r"
done
# Neither reading of a duplicate is served what the other stored.
expect "store id 2" 200 '"admitted":true' \
  "$(req /v1/record "$(call get_doc '{"id":2}'),$result"'two"}]}}')"
r=$(req /v1/lookup "$(call get_doc '{"id":1,"id":2}')}"); echo "dup lookup after id 2: $r"
grep -q 'RESULT-two' <<<"$r" && fail "a duplicate-name call was served the entry of one reading"
pass "1 duplicate names, 1e400, 130 levels: refused (invalid_arguments, or a 400 from the body reader), never stored or served"

# --- 2. Integers beyond a double's precision stay distinct calls.
expect "store 2^53+1" 200 '"admitted":true' \
  "$(req /v1/record "$(call get_doc '{"id":9007199254740993}'),$result"'odd"}]}}')"
r=$(req /v1/lookup "$(call get_doc '{"id":9007199254740992}')}"); echo "2^53 lookup: $r"
expect "2^53 is another call" 200 '"hit":false' "$r"
r=$(req /v1/lookup "$(call get_doc '{"id":9007199254740993.0}')}"); echo "2^53+1 spelled .0: $r"
expect "same integer, other spelling" 200 'RESULT-odd' "$r"
pass "2 9007199254740993 and 9007199254740992 never share an entry; spellings of one integer do"

# --- 3. Whitespace, order and _meta neither split nor merge calls.
expect "store q" 200 '"admitted":true' \
  "$(req /v1/record "$(call query_docs '{"q":"a","page":1}'),$result"'q"}]}}')"
r=$(req /v1/lookup "$(printf '{ "server" : "docs" , "tool" : "query_docs" ,\n "arguments" : {\t"page" : 1 , "q" : "a" , "_meta" : {"progressToken":7} } }')")
echo "spaced, reordered, _meta: $r"
expect "spaced call hits" 200 'RESULT-q' "$r"
r=$(req /v1/lookup "$(call query_docs '{"q":"a","page":1,"meta":{}}')}"); echo "extra member: $r"
expect "an extra member is another call" 200 '"hit":false' "$r"
pass "3 spacing, member order and _meta keep one entry; another member is another call"

# --- 4. A write with refused arguments still invalidates its server.
expect "store doc" 200 '"admitted":true' \
  "$(req /v1/record "$(call get_doc '{"id":5}'),$result"'five"}]}}')"
# read_messages reads by its name; its action argument makes this call a
# write. The key refuses the duplicate names, but the verdict still comes
# from the arguments (a lenient parse), so the write is a COMMAND.
r=$(req /v1/record "$(call read_messages '{"action":"delete","id":5,"id":5}'),$result"'deleted"}]}}')
echo "write with duplicate names: ${r:0:200}"
expect "the write is a COMMAND" 200 '"reason":"command"' "$r"
r=$(req /v1/lookup "$(call get_doc '{"id":5}')}"); echo "lookup after the write: $r"
expect "invalidated" 200 '"hit":false' "$r"
pass "4 a COMMAND with arguments the key refuses still invalidates (classified from the lenient parse)"

# --- 5. Many tools and outcomes: the service's remembered series stay bounded and answering.
for i in $(seq 300); do
  printf '{"server":"s%d","tool":"t%d","arguments":{}}\n' "$i" "$i"
done >"$work/many"
n=0
while read -r body; do
  r=$(req /v1/lookup "$body"); [[ "$r" == "200 "* ]] || fail "lookup $n: $r"; n=$((n+1))
done <"$work/many"
expect "store after" 200 '"admitted":true' \
  "$(req /v1/record "$(call get_doc '{"id":6}'),$result"'six"}]}}')"
r=$(req /v1/lookup "$(call get_doc '{"id":6}')}")
expect "still serving" 200 'RESULT-six' "$r"
pass "5 300 distinct servers/tools later the API still serves (series remembered up to a bound, docs/SERVE.md)"
stop

# --- 6. A tenant's entry is its own (the remembered series are per tenant).
start 'serve:
  tenants:
    acme: {token: tok-acme}
    evil: {token: tok-evil}
tools:
  get_doc: {requestType: INFORMATIONAL, ttlSeconds: 600}'
expect "acme stores" 200 '"admitted":true' \
  "$(req /v1/record "$(call get_doc '{"id":1}'),$result"'acme"}]}}' tok-acme)"
expect "acme hits" 200 'RESULT-acme' "$(req /v1/lookup "$(call get_doc '{"id":1}')}" tok-acme)"
r=$(req /v1/lookup "$(call get_doc '{ "id" : 1 }')}" tok-evil); echo "evil lookup: $r"
expect "evil misses" 200 '"hit":false' "$r"
# Each tenant reads its own counters on /metrics (session 19: an anonymous
# caller gets 401 there when tenants are configured).
r=$(curl -s -m 5 -H 'Authorization: Bearer tok-acme' "$url/metrics" || true)
grep -q 'toolcache_serve_tenant_calls_total{tenant="acme",outcome="hit"} 1' <<<"$r" ||
  fail "acme's hit not counted once: $(grep tenant_calls <<<"$r")"
! grep -q 'evil' <<<"$r" || fail "acme's /metrics shows evil: $r"
r=$(curl -s -m 5 -H 'Authorization: Bearer tok-evil' "$url/metrics" || true)
grep -q 'toolcache_serve_tenant_calls_total{tenant="evil",outcome="miss"} 1' <<<"$r" ||
  fail "evil's miss not counted once: $(grep tenant_calls <<<"$r")"
! grep -q 'acme' <<<"$r" || fail "evil's /metrics shows acme: $r"
pass "6 tenants: evil never gets acme's entry; each tenant's counters count its own calls"
stop
