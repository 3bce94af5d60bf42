#!/usr/bin/env bash
# The cache API against the store it resembles (issue 32 item 6): a lookup
# hit of `toolcache serve` (POST /v1/lookup, memory store, ~100-byte result)
# against a GET of a 100-byte value from a real redis-server, side by side
# in one run. Each server is pinned to one core (SERVER_CPU, default 1) and
# runs one thread; each client to the other (CLIENT_CPU, default 0). Rounds
# alternate the two sides; the summary gives medians over rounds and the
# goals' ratios (the median of the per-round ratios, so a load change
# between rounds cancels out; the ratio of the medians in brackets):
#   latency at 1 connection:    toolcache p50 / redis p50   (goal <= 1.2),
#                               and the same for p99
#   throughput at 64 conns:     toolcache rps / redis rps   (goal >= 0.9)
# Clients: wrk (Lua script bench/serve/post.lua) for toolcache,
# redis-benchmark for redis (both C, no pipelining, keep-alive).
# The floor of the HTTP side: nginx (Debian's, one worker, on the server
# core) answering every request with the hit's bytes from its config
# (`return 200`), through the same wrk client and script. It does no work
# per request beyond HTTP, so toolcache / nginx is what toolcache's own
# work costs, and nginx / redis what HTTP through wrk costs against RESP
# through redis-benchmark. NGINX=0 leaves it out.
# Usage: bench/serve/vs_redis.sh [BUILD_DIR] [SECONDS] [ROUNDS]
# BASELINE_BIN=/path/to/an/older/toolcache adds that binary as a third side
# (its own server on the same core, in the same interleaved rounds), so a
# before/after comparison comes from one run too (a last line gives this
# binary / the baseline: p50, p99 and req/s).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
secs=${2:-5}
rounds=${3:-3}
server_cpu=${SERVER_CPU:-1}
client_cpu=${CLIENT_CPU:-0}
bin=$build/apps/toolcache/toolcache
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

cat >"$work/serve.yaml" <<'YAML'
tools:
  get_doc: {requestType: INFORMATIONAL, ttlSeconds: 3600}
YAML
result='{"content":[{"type":"text","text":"a document of about one hundred bytes, the typical small tool result."}]}'
start_serve() {  # BIN NAME -> sets started_url: a serve holding the entry
  taskset -c "$server_cpu" "$1" serve --listen 127.0.0.1:0 \
    --config "$work/serve.yaml" --store memory --log-level error --threads 1 \
    >"$work/$2.out" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do grep -q "listening on" "$work/$2.out" && break; sleep 0.1; done
  started_url=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$work/$2.out")
  curl -sf -o /dev/null -H 'content-type: application/json' --data-binary \
    "{\"server\":\"bench\",\"tool\":\"get_doc\",\"arguments\":{\"id\":1},\"result\":$result,\"latencySeconds\":0.2}" \
    "$started_url/v1/record"
}
start_serve "$bin" serve
url=$started_url
base_url=
if [ -n "${BASELINE_BIN:-}" ]; then
  start_serve "$BASELINE_BIN" baseline
  base_url=$started_url
fi
hit='{"server":"bench","tool":"get_doc","arguments":{"id":1}}'

ngx_url=
ngx_bin=$(command -v nginx || ls /usr/sbin/nginx 2>/dev/null || true)
if [ "${NGINX:-1}" != 0 ] && [ -n "$ngx_bin" ]; then
  nport=$(free_port)
  mkdir -p "$work/nginx/logs"
  hitbody='{"hit":true,"result":'"$result"',"ageSeconds":0.0}'
  cat >"$work/nginx/nginx.conf" <<NGX
worker_processes 1;
daemon off;
error_log $work/nginx/logs/error.log;
pid $work/nginx/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  default_type application/json;
  server {
    listen 127.0.0.1:$nport;
    location / { return 200 '$hitbody'; }
  }
}
NGX
  taskset -c "$server_cpu" "$ngx_bin" -p "$work/nginx" -c "$work/nginx/nginx.conf" \
    -e "$work/nginx/logs/error.log" >"$work/nginx.out" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do curl -sf -o /dev/null -X POST "http://127.0.0.1:$nport/v1/lookup" && break; sleep 0.1; done
  ngx_url="http://127.0.0.1:$nport"
fi

rport=$(free_port)
taskset -c "$server_cpu" redis-server --port "$rport" --bind 127.0.0.1 \
  --save '' --appendonly no --io-threads 1 >"$work/redis.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do redis-cli -p "$rport" ping >/dev/null 2>&1 && break; sleep 0.1; done
value=$(printf '%s' "$result" | head -c 100)
redis-cli -p "$rport" set doc "$value" >/dev/null

toolcache_run() {  # CONNS [URL] -> "p50_us rps p99_us"
  local line
  line=$(TC_PATH=/v1/lookup TC_BODY=$hit taskset -c "$client_cpu" wrk -c "$1" \
    -t 1 -d "${secs}s" -s "$root/bench/serve/post.lua" "${2:-$url}" | grep '^p50_us')
  # p50_us=N p90_us=N p99_us=N rps=N errors=N
  local p50 p99 rps errors
  p50=$(sed -n 's/.*p50_us=\([0-9]*\).*/\1/p' <<<"$line")
  p99=$(sed -n 's/.*p99_us=\([0-9]*\).*/\1/p' <<<"$line")
  rps=$(sed -n 's/.*rps=\([0-9.]*\).*/\1/p' <<<"$line")
  errors=$(sed -n 's/.*errors=\([0-9]*\).*/\1/p' <<<"$line")
  [ "$errors" = 0 ] || { echo "toolcache: $errors errors: $line" >&2; exit 1; }
  echo "$p50 $rps $p99"
}
redis_run() {  # CONNS -> "p50_us rps p99_us"
  # redis-benchmark runs a request count, not a duration: size it from a
  # short probe so both sides run about SECONDS.
  local n=$(( $1 == 1 ? 20000 * secs : 80000 * secs ))
  local csv
  csv=$(taskset -c "$client_cpu" redis-benchmark -p "$rport" -c "$1" -n "$n" \
    --csv GET doc | tail -1)
  # "GET doc","rps","avg","min","p50","p95","p99","max" (ms)
  python3 -c 'import csv,sys; r=next(csv.reader([sys.argv[1]])); print(round(float(r[4])*1000), r[1], round(float(r[6])*1000))' "$csv"
}

echo "serve vs redis: $(nproc) cores, servers on CPU $server_cpu, clients on CPU $client_cpu, ${secs}s x $rounds rounds"
declare -a tc1 tc64 rd1 rd64 bl1 bl64 ng1 ng64
baseline_runs() {  # CONNS
  if [ -n "$base_url" ]; then
    if [ "$1" = 1 ]; then bl1+=("$(toolcache_run 1 "$base_url")"); else bl64+=("$(toolcache_run 64 "$base_url")"); fi
  fi
  if [ -n "$ngx_url" ]; then
    if [ "$1" = 1 ]; then ng1+=("$(toolcache_run 1 "$ngx_url")"); else ng64+=("$(toolcache_run 64 "$ngx_url")"); fi
  fi
}
for r in $(seq "$rounds"); do
  if (( r % 2 )); then
    tc1+=("$(toolcache_run 1)"); rd1+=("$(redis_run 1)"); baseline_runs 1
    tc64+=("$(toolcache_run 64)"); rd64+=("$(redis_run 64)"); baseline_runs 64
  else
    baseline_runs 1; rd1+=("$(redis_run 1)"); tc1+=("$(toolcache_run 1)")
    baseline_runs 64; rd64+=("$(redis_run 64)"); tc64+=("$(toolcache_run 64)")
  fi
  f() { cut -d' ' -f"$1" <<<"$2"; }
  echo "round $r: 1 conn p50/p99 us: toolcache $(f 1 "${tc1[-1]}")/$(f 3 "${tc1[-1]}") redis $(f 1 "${rd1[-1]}")/$(f 3 "${rd1[-1]}")${base_url:+ baseline $(f 1 "${bl1[-1]}")/$(f 3 "${bl1[-1]}")}${ngx_url:+ nginx $(f 1 "${ng1[-1]}")/$(f 3 "${ng1[-1]}")}; 64 conns rps: toolcache $(f 2 "${tc64[-1]}") redis $(f 2 "${rd64[-1]}")${base_url:+ baseline $(f 2 "${bl64[-1]}")}${ngx_url:+ nginx $(f 2 "${ng64[-1]}")}"
done
python3 - "${tc1[*]}" "${rd1[*]}" "${tc64[*]}" "${rd64[*]}" "${bl1[*]:-}" "${bl64[*]:-}" "${ng1[*]:-}" "${ng64[*]:-}" <<'EOF'
import statistics, sys
def col(s, i):  # each run is "p50_us rps p99_us"
    v = s.split()
    return [float(x) for x in v[i::3]]
P50, RPS, P99 = 0, 1, 2
rd1p = statistics.median(col(sys.argv[2], P50))
rd1q = statistics.median(col(sys.argv[2], P99))
rd64r = statistics.median(col(sys.argv[4], RPS))
sides = [("toolcache serve (lookup hit)", sys.argv[1], sys.argv[3])]
if sys.argv[5].strip():
    sides.append(("baseline serve (BASELINE_BIN)", sys.argv[5], sys.argv[6]))
if sys.argv[7].strip():
    sides.append(("nginx `return 200` (HTTP floor, same client)", sys.argv[7], sys.argv[8]))
# Ratios: the median of the per-round ratios (each round runs the sides
# back to back, so a load change between rounds cancels out), with the
# ratio of the medians in brackets.
def per_round(mine, theirs):
    return statistics.median(a / b for a, b in zip(mine, theirs))
print("| side | p50 at 1 connection | ratio to redis (goal <= 1.2x) | p99 at 1 connection | ratio to redis | req/s at 64 connections, one server core | ratio to redis (goal >= 0.9x) |")
print("|---|---|---|---|---|---|---|")
print(f"| redis-server (GET) | {rd1p:.0f} us | 1 | {rd1q:.0f} us | 1 | {rd64r:,.0f} | 1 |")
for name, one, many in sides:
    p = statistics.median(col(one, P50)); q = statistics.median(col(one, P99))
    r = statistics.median(col(many, RPS))
    q1 = per_round(col(one, P50), col(sys.argv[2], P50))
    q99 = per_round(col(one, P99), col(sys.argv[2], P99))
    q64 = per_round(col(many, RPS), col(sys.argv[4], RPS))
    print(f"| {name} | {p:.0f} us | {q1:.2f}x ({p / rd1p:.2f}x) | {q:.0f} us | {q99:.2f}x ({q / rd1q:.2f}x) | {r:,.0f} | {q64:.2f}x ({r / rd64r:.2f}x) |")
if sys.argv[5].strip():
    # This binary against the baseline binary, in the same rounds.
    p = per_round(col(sys.argv[1], P50), col(sys.argv[5], P50))
    q = per_round(col(sys.argv[1], P99), col(sys.argv[5], P99))
    r = per_round(col(sys.argv[3], RPS), col(sys.argv[6], RPS))
    print(f"this binary / baseline: p50 {p:.2f}x, p99 {q:.2f}x at 1 connection; req/s {r:.2f}x at 64 connections")
if sys.argv[7].strip():
    # What toolcache's own work costs over a server that only speaks HTTP.
    p = per_round(col(sys.argv[1], P50), col(sys.argv[7], P50))
    r = per_round(col(sys.argv[3], RPS), col(sys.argv[8], RPS))
    print(f"this binary / nginx floor: p50 {p:.2f}x at 1 connection; req/s {r:.2f}x at 64 connections")
EOF
