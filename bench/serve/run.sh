#!/usr/bin/env bash
# Cache API latency and throughput with wrk: a hit and a miss of
# POST /v1/lookup, at 1 connection (unloaded latency) and 64 connections
# (throughput), memory store vs Redis store (a real redis-server started
# here on a free port). Also prints the server-side p50 of a lookup from
# /toolcache/stats. Usage: bench/serve/run.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
secs=${2:-10}
bin=$build/apps/toolcache/toolcache
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
cat >"$work/serve.yaml" <<'YAML'
tools:
  get_doc: {requestType: INFORMATIONAL, ttlSeconds: 3600}
YAML

start() {  # start STORE -> sets url
  "$bin" serve --listen 127.0.0.1:0 --config "$work/serve.yaml" --store "$1" \
    --log-level error --threads "${TC_THREADS:-2}" >"$work/out.$2" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do grep -q "listening on" "$work/out.$2" && break; sleep 0.1; done
  url=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$work/out.$2")
}

run() {  # run LABEL CONNS THREADS BODY [PATH]
  local line
  line=$(TC_PATH=${5:-/v1/lookup} TC_BODY=$4 wrk -c "$2" -t "$3" -d "${secs}s" -s "$root/bench/serve/post.lua" "$url" | grep '^p50_us')
  printf '%-28s c=%-3s %s\n' "$1" "$2" "$line"
}

bench_store() {  # bench_store LABEL STORE
  start "$2" "$1"
  hit='{"server":"bench","tool":"get_doc","arguments":{"id":1}}'
  miss='{"server":"bench","tool":"get_doc","arguments":{"id":2}}'
  curl -s -o /dev/null -H 'content-type: application/json' --data-binary \
    '{"server":"bench","tool":"get_doc","arguments":{"id":1},"result":{"content":[{"type":"text","text":"a document of about one hundred bytes, the typical small tool result."}]},"latencySeconds":0.2}' \
    "$url/v1/record"
  if [ "$1" = memory ]; then
    # Baseline: the HTTP layer and routing alone (an unknown /v1/ route,
    # answered 404 before any parsing or engine call).
    run "baseline (404 route)" 1 1 "$hit" /v1/none
    run "baseline (404 route)" 64 2 "$hit" /v1/none
  fi
  run "$1 lookup hit" 1 1 "$hit"
  run "$1 lookup miss" 1 1 "$miss"
  run "$1 lookup hit" 64 2 "$hit"
  run "$1 lookup miss" 64 2 "$miss"
  curl -s "$url/metrics" | python3 -c '
import sys
# server-side time of a lookup, from the histogram buckets
b = []
for line in sys.stdin:
    if line.startswith("toolcache_serve_request_seconds_bucket{op=\"lookup\""):
        le = line.split("le=\"")[1].split("\"")[0]
        b.append((float("inf") if le == "+Inf" else float(le), int(line.split()[-1])))
n = b[-1][1]
p50 = next(le for le, c in b if c >= n / 2)
print(f"  server-side lookup: n={n}, p50 <= {p50 * 1e6:.0f} us (bucket bound)")
'
  kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true
}

echo "toolcache serve bench: $(nproc) cores, ${secs}s per run, wrk $(wrk -v 2>&1 | head -1 | awk '{print $2}')"
bench_store memory memory
if command -v redis-server >/dev/null; then
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >/dev/null &
  pids+=($!)
  sleep 0.5
  bench_store redis "redis://127.0.0.1:$port"
fi
