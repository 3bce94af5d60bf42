#!/usr/bin/env bash
# End-to-end tests of `toolcache serve` (the cache API): CLI usage errors,
# the HTTP API with curl (auth, bad input, lookup/record, metrics), then the
# two thin clients against a running server: Python (stdlib, unittest) and
# TypeScript (node --test).
set -euo pipefail
: "${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the built toolcache binary}"
src="${TOOLCACHE_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
work=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

set +e
out=$("$TOOLCACHE_BIN" serve --listen nonsense 2>&1 </dev/null); rc=$?
[ $rc -eq 2 ] && grep -q "HOST:PORT" <<<"$out" || fail "bad --listen: rc=$rc $out"
printf 'serve:\n  tenants:\n    a: {tokn: x}\n' >"$work/bad.yaml"
out=$("$TOOLCACHE_BIN" serve --config "$work/bad.yaml" 2>&1 </dev/null); rc=$?
[ $rc -eq 2 ] && grep -q "did you mean 'token'" <<<"$out" || fail "bad config: rc=$rc $out"
printf 'serve:\n  tenants:\n    a: {tokenEnv: TC_E2E_UNSET_TOKEN}\n' >"$work/env.yaml"
out=$(env -u TC_E2E_UNSET_TOKEN "$TOOLCACHE_BIN" serve --listen 127.0.0.1:0 --config "$work/env.yaml" 2>&1 </dev/null); rc=$?
[ $rc -eq 2 ] && grep -q "TC_E2E_UNSET_TOKEN is unset" <<<"$out" || fail "unset tokenEnv: rc=$rc $out"
out=$("$TOOLCACHE_BIN" serve --listen 127.0.0.1:0 --store bogus:// 2>&1 </dev/null); rc=$?
[ $rc -eq 2 ] || fail "bad store: rc=$rc $out"
set -e

cat >"$work/serve.yaml" <<'YAML'
tools:
  get_weather: {requestType: INFORMATIONAL, ttlSeconds: 600}
serve:
  tenants:
    alice: {token: alice-secret}
YAML
# With tenants, /metrics and /toolcache/stats are the admin token's (session 19).
TOOLCACHE_ADMIN_TOKEN=e2e-ops-token "$TOOLCACHE_BIN" serve --listen 127.0.0.1:0 \
  --config "$work/serve.yaml" --log-level warn >"$work/out" 2>"$work/err" &
pid=$!
for _ in $(seq 100); do grep -q "listening on" "$work/out" 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$work/out")
[ -n "$url" ] || fail "server did not start: $(cat "$work/err")"

# req METHOD PATH BODY [TOKEN] -> "STATUS BODY"
req() {
  local auth=()
  [ -n "${4:-}" ] && auth=(-H "Authorization: Bearer $4")
  curl -s -o "$work/body" -w '%{http_code}' -X "$1" "${auth[@]}" \
    -H 'content-type: application/json' --data-binary "$3" "$url$2"
  printf ' '; cat "$work/body"
}
expect() {  # expect "<status>" "<grep pattern>" -- response
  local want=$1 pat=$2; shift 2
  [[ "$*" == "$want "* ]] && grep -q -- "$pat" <<<"$*" || fail "want $want /$pat/, got: $*"
}
call='{"server":"weather","tool":"get_weather","arguments":{"city":"Oslo"}}'
expect 401 '"code":"unauthorized"' "$(req POST /v1/lookup "$call")"
expect 401 '"code":"unauthorized"' "$(req POST /v1/lookup "$call" wrong)"
expect 400 '"code":"bad_request"' "$(req POST /v1/lookup '{"server":' alice-secret)"
expect 400 'arguments' "$(req POST /v1/lookup '{"server":"w","tool":"t","arguments":7}' alice-secret)"
expect 404 '"code":"not_found"' "$(req POST /v1/nope '{}' alice-secret)"
expect 200 '"hit":false' "$(req POST /v1/lookup "$call" alice-secret)"
rec='{"server":"weather","tool":"get_weather","arguments":{"city":"Oslo"},"result":{"tempC":21},"latencySeconds":0.3}'
expect 200 '"admitted":true' "$(req POST /v1/record "$rec" alice-secret)"
expect 200 '"result":{"tempC":21}' "$(req POST /v1/lookup "$call" alice-secret)"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$url/metrics")" = 401 ] || fail "anonymous /metrics with tenants"
ops=(-H 'Authorization: Bearer e2e-ops-token')
metrics=$(curl -s "${ops[@]}" "$url/metrics")
grep -q 'toolcache_serve_calls_total{op="lookup",outcome="hit"} 1' <<<"$metrics" || fail "metrics: $metrics"
grep -q 'toolcache_serve_requests_total{op="lookup",status="4xx"}' <<<"$metrics" || fail "metrics 4xx"
curl -s "$url/v1/openapi.json" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert "/v1/begin" in d["paths"]' \
  || fail "openapi"
curl -s "${ops[@]}" "$url/toolcache/stats" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["totals"]["hits"]==1, d["totals"]' \
  || fail "stats"
kill "$pid"; wait "$pid" || true; pid=""

export TOOLCACHE_BIN
(cd "$src/clients/python" && timeout 120 python3 -m unittest -v test_client.py)
(cd "$src/clients/typescript" && timeout 120 node --test --test-concurrency=1 test/)
echo "e2e_serve: ok"
