#!/usr/bin/env bash
# The security groups' start-up wait (lib/common.sh wait_for) against a
# wall-clock jump. serve_api.sh and serve_mcp.sh failed a handful of times
# with "did not start listening within 30 s" after ~14 s of real time and
# passed on re-run; the limit was measured with bash's SECONDS, which
# follows the wall clock, and this project's VMs have seen it jump. The
# case jumps SECONDS by a minute while a real `toolcache serve` starts (the
# first `sleep` of the wait moves it, as a clock step would) and expects
# the wait to go on until the server has printed its URL.
source "$(dirname "$0")/lib/common.sh"

jumped=0
sleep() {  # the wait loop's sleep; the first call steps the clock
  if [ "$jumped" = 0 ]; then
    jumped=1
    SECONDS=$((SECONDS + 60))
  fi
  command sleep "$@"
}

printf 'tools: {}\n' >"$work/serve.yaml"
# The server starts a little later, so the wait loop sleeps (and the clock
# steps) before the URL is printed.
start_bg "$work/out" "$work/err" bash -c \
  'command sleep 0.5; exec "$0" serve --listen 127.0.0.1:0 --config "$1" --log-level error' \
  "$TOOLCACHE_BIN" "$work/serve.yaml"
SECURITY_START_TIMEOUT=30
wait_listening "$work/out" "$work/err" ||
  fail "a wall-clock step of 60 s ended the 30 s start-up wait (jumped=$jumped)"
[ "$jumped" = 1 ] || fail "the wait never slept: the case did not step the clock"
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$url/v1/stats" || true)
echo "after a 60 s wall-clock step the wait still found $url (GET /v1/stats: $code)"
pass "start-up wait measured on the monotonic clock"
