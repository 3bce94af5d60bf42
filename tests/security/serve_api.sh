#!/usr/bin/env bash
# Attacks on `toolcache serve`'s cache API (/v1/, issue 27): another user
# reading a user-scoped entry, results that would break the MCP face, valid
# JSON refused and flights left open, inflated statistics, two tenants with
# one token, contradictory verdicts. Each case prints what it saw.
source "$(dirname "$0")/lib/common.sh"

# start CONFIG_TEXT: runs serve on a free port; sets $url and $pid.
start() {
  printf '%s\n' "$1" >"$work/serve.yaml"
  start_bg "$work/out" "$work/err" "$TOOLCACHE_BIN" serve --listen 127.0.0.1:0 \
    --config "$work/serve.yaml" --log-level error
  wait_listening "$work/out" "$work/err" || exit 1
}
# req PATH BODY -> "STATUS BODY" (at most 5 s: a hang is a failure)
req() {
  curl -s -m 5 -o "$work/body" -w '%{http_code}' -X POST \
    -H 'content-type: application/json' --data-binary "$2" "$url$1" || true
  printf ' '; cat "$work/body" 2>/dev/null || true
}
expect() {  # expect CASE STATUS PATTERN RESPONSE
  [[ "$4" == "$2 "* ]] && grep -q -- "$3" <<<"$4" || fail "$1: want $2 /$3/, got: $4"
}

# --- 27.1: scope: user keeps one user's results from another -----------
start 'scope: user
tools:
  read_inbox: {requestType: INFORMATIONAL, ttlSeconds: 600}'
alice='{"server":"mail","tool":"read_inbox","arguments":{},"user":"alice"'
bob='{"server":"mail","tool":"read_inbox","arguments":{},"user":"bob"'
expect "alice records" 200 '"admitted":true' \
  "$(req /v1/record "$alice"',"result":{"content":[{"type":"text","text":"alice inbox"}]}}')"
r=$(req /v1/lookup "$bob}"); echo "bob lookup: $r"
expect "bob's lookup" 200 '"hit":false' "$r"
r=$(req /v1/begin "$bob}"); echo "bob begin: $r"
expect "bob's begin" 200 '"action":"forward"' "$r"
grep -q "alice inbox" <<<"$r" && fail "bob's begin got alice's inbox"
# (scope, user) pairs that concatenate alike stay apart.
expect "alice again" 200 'alice inbox' "$(req /v1/lookup "$alice}")"
expect "user 'alic'+'e'" 200 '"hit":false' \
  "$(req /v1/lookup '{"server":"mail","tool":"read_inbox","arguments":{},"user":"alic"}')"
nouser='{"server":"mail","tool":"read_inbox","arguments":{}'
for op in lookup begin; do
  r=$(req /v1/$op "$nouser}"); echo "no user $op: $r"
  expect "no user $op" 400 '"code":"user_required"' "$r"
done
r=$(req /v1/record "$nouser"',"result":{"content":[]}}'); echo "no user record: $r"
expect "no user record" 400 '"code":"user_required"' "$r"
pass "27.1 scope: user: bob never gets alice's entry; a call without user is a 400"

# --- 27.6: a stored result must be an MCP result object ----------------
for result in '"a{b"' '[{"x":1}]' '42' 'null'; do
  r=$(req /v1/record "$bob"',"result":'"$result"'}'); echo "record $result: $r"
  expect "non-object result $result" 400 'must be a JSON object' "$r"
done
pass "27.6 a non-object result is refused at record"
stop

# --- 27.14: integers beyond 64 bits; a refused complete fails its flight -
start 'tools:
  get_doc: {requestType: INFORMATIONAL, ttlSeconds: 600}'
big=123456789012345678901234567890
call='{"server":"docs","tool":"get_doc","arguments":{"id":'$big'}'
result='{"n":'$big',"f":1.50}'
r=$(req /v1/record "$call"',"result":'"$result"'}'); echo "record big: $r"
expect "record of a big integer" 200 '"admitted":true' "$r"
r=$(req /v1/lookup "$call}"); echo "lookup big: $r"
expect "big integer kept byte-exactly" 200 "\"result\":$result" "$r"
call2='{"server":"docs","tool":"get_doc","arguments":{"id":2}}'
ticket=$(req /v1/begin "$call2" | sed -n 's/.*"ticket":"\([^"]*\)".*/\1/p')
[ -n "$ticket" ] || fail "no ticket"
# A waiter joins, then the leader's completion is refused.
t0=$(date +%s%N)
curl -s -m 20 -X POST -H "content-type: application/json" --data-binary "$call2" "$url/v1/begin" >"$work/waiter" &
wpid=$!
sleep 0.5
r=$(req /v1/complete '{"ticket":"'"$ticket"'","result":"not an object"}'); echo "refused complete: $r"
expect "refused complete" 400 'must be a JSON object' "$r"
wait "$wpid" || true
ms=$((($(date +%s%N) - t0) / 1000000))
echo "waiter: $(cat "$work/waiter") after $ms ms"
grep -q '"leader_failed"' "$work/waiter" || fail "the waiter was not released: $(cat "$work/waiter")"
[ "$ms" -lt 5000 ] || fail "the waiter waited $ms ms (its wait is 30 s)"
pass "27.14 big integers are stored exactly; a refused complete releases its waiters at once"

# --- 27.13: waiters without a result are not coalesced hits -----------
call3='{"server":"docs","tool":"get_doc","arguments":{"id":3}}'
ticket=$(req /v1/begin "$call3" | sed -n 's/.*"ticket":"\([^"]*\)".*/\1/p')
curl -s -m 20 -X POST -H "content-type: application/json" --data-binary "$call3" "$url/v1/begin" >"$work/waiter" &
wpid=$!
sleep 0.5
expect "leader fails" 200 '"waitersAnswered":1' \
  "$(req /v1/complete '{"ticket":"'"$ticket"'","isError":true,"latencySeconds":3}')"
wait "$wpid" || true
stats=$(curl -s "$url/toolcache/stats")
python3 - "$stats" <<'PY' || fail "statistics: $stats"
import json, sys
t = json.loads(sys.argv[1])["totals"]
print("totals:", {k: t[k] for k in ("calls", "hits", "coalesced", "waitedNoResult", "savedSeconds")})
assert t["coalesced"] == 0 and t["waitedNoResult"] == 2, t
assert t["hits"] == 1 and t["savedSeconds"] == 0, t
PY
# Read the page whole first: `curl | grep -q` fails under pipefail when
# grep stops reading before curl has written everything (SIGPIPE).
metrics=$(curl -s "$url/metrics")
grep -q 'toolcache_serve_calls_total{op="begin",outcome="leader_failed"} 2' <<<"$metrics" \
  || fail "metrics: $(grep serve_calls_total <<<"$metrics")"
pass "27.13 waiters that got no result are counted as leader_failed, not coalesced"

# --- 27.15: a duplicate argument name: the verdict agrees ---------------
r=$(req /v1/explain '{"server":"docs","tool":"get_doc","arguments":{"a":1,"a":2}}'); echo "explain: $r"
python3 - "${r#* }" <<'PY' || fail "explain: $r"
import json, sys
j = json.loads(sys.argv[1])
assert j["reason"] == "invalid_arguments" and j["verdict"]["reason"] == "invalid_arguments", j
assert j["cacheable"] is False and j["verdict"]["cacheable"] is False, j
PY
pass "27.15 duplicate argument names: reason and verdict both say invalid_arguments"
stop

# --- 27.12: two tenants with one token are refused ----------------------
printf 'serve:\n  tenants:\n    alice: {token: same-s3cret}\n    bob: {token: same-s3cret}\n' >"$work/dup.yaml"
set +e
out=$(timeout 10 "$TOOLCACHE_BIN" serve --listen 127.0.0.1:0 --config "$work/dup.yaml" 2>&1 </dev/null); rc=$?
set -e
echo "literal tokens: rc=$rc $out"
[ $rc -eq 2 ] && grep -q "'alice' and 'bob'" <<<"$out" || fail "duplicate token accepted: rc=$rc $out"
grep -q same-s3cret <<<"$out" && fail "the token was printed"
printf 'serve:\n  tenants:\n    alice: {tokenEnv: TC_SEC_A}\n    bob: {tokenEnv: TC_SEC_B}\n' >"$work/dupenv.yaml"
set +e
out=$(TC_SEC_A=env-s3cret TC_SEC_B=env-s3cret timeout 10 "$TOOLCACHE_BIN" serve --listen 127.0.0.1:0 \
  --config "$work/dupenv.yaml" 2>&1 </dev/null); rc=$?
set -e
echo "env tokens: rc=$rc $out"
[ $rc -eq 2 ] && grep -q "'alice' and 'bob'" <<<"$out" || fail "duplicate env token accepted: rc=$rc $out"
grep -q env-s3cret <<<"$out" && fail "the token was printed"
pass "27.12 two tenants with one token: exit 2, both named, token not shown"
echo "serve_api: ok"
