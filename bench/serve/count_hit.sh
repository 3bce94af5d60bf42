#!/usr/bin/env bash
# Instructions per cache API lookup hit (issue 32 item 6), by callgrind:
# `toolcache serve` (memory store, --threads 1) runs under
# valgrind --tool=callgrind; one entry is recorded, WARMUP lookup hits of it
# are sent over one keep-alive connection (the same request as
# bench/serve/post.lua), the counters are zeroed (callgrind_control -z),
# HITS more hits are sent, and the counts are dumped (callgrind_control -d),
# so start-up, the record and the first hits are not in the figure.
# Prints instructions per hit and the top functions (inclusive) per hit.
# Usage: bench/serve/count_hit.sh [BUILD_DIR|BINARY] [HITS] [WARMUP] [TOP]
# Environment: TC_TOKEN=<token> serves with one tenant and sends the token
# (the authenticated path); OUT=<dir> keeps the callgrind files there.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
arg=${1:-$root/build}
hits=${2:-2000}
warm=${3:-200}
top=${4:-25}
if [ -d "$arg" ]; then bin=$arg/apps/toolcache/toolcache; else bin=$arg; fi
work=${OUT:-$(mktemp -d)}
mkdir -p "$work"
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  wait 2>/dev/null || true
  [ -n "${OUT:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
{
  echo "tools:"
  echo "  get_doc: {requestType: INFORMATIONAL, ttlSeconds: 3600}"
  if [ -n "${TC_TOKEN:-}" ]; then
    echo "serve:"
    echo "  tenants:"
    echo "    bench: {token: \"$TC_TOKEN\"}"
  fi
} >"$work/serve.yaml"
rm -f "$work"/callgrind.out*
valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" \
  "$bin" serve --listen 127.0.0.1:0 --config "$work/serve.yaml" \
  --store memory --log-level error --threads 1 >"$work/serve.out" 2>&1 &
pid=$!
for _ in $(seq 600); do
  grep -q "listening on" "$work/serve.out" && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
port=$(sed -n 's/^listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/serve.out")
[ -n "$port" ] || { cat "$work/serve.out"; exit 1; }
python3 - "$port" "$warm" "$hits" "$pid" "${TC_TOKEN:-}" <<'PY'
import socket, subprocess, sys
port, warm, hits, pid, token = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
result = '{"content":[{"type":"text","text":"a document of about one hundred bytes, the typical small tool result."}]}'
def req(path, body):
    head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    if token: head += f"Authorization: Bearer {token}\r\n"
    return (head + "\r\n" + body).encode()
s = socket.create_connection(("127.0.0.1", port))
def roundtrip(data):
    s.sendall(data)
    buf = b""
    while b"\r\n\r\n" not in buf: buf += s.recv(65536)
    head, _, rest = buf.partition(b"\r\n\r\n")
    n = int([l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0].split(b":")[1])
    while len(rest) < n: rest += s.recv(65536)
    return head.split(b"\r\n")[0], rest
st, body = roundtrip(req("/v1/record", '{"server":"bench","tool":"get_doc","arguments":{"id":1},"result":%s,"latencySeconds":0.2}' % result))
assert b" 200 " in st, (st, body)
hit = req("/v1/lookup", '{"server":"bench","tool":"get_doc","arguments":{"id":1}}')
for _ in range(warm):
    st, body = roundtrip(hit); assert b'"hit":true' in body, body
subprocess.run(["callgrind_control", "-z", pid], check=True, stdout=subprocess.DEVNULL)
for _ in range(hits):
    st, body = roundtrip(hit); assert b'"hit":true' in body, body
subprocess.run(["callgrind_control", "-d", pid], check=True, stdout=subprocess.DEVNULL)
print("sample hit:", st.decode(), body.decode()[:80])
PY
dump=$(ls -t "$work"/callgrind.out.* | head -1)
total=$(callgrind_annotate "$dump" 2>/dev/null | sed -n 's/^\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
echo "instructions per hit: $((total / hits)) (total $total over $hits hits)"
callgrind_annotate --inclusive=yes --threshold=100 "$dump" 2>/dev/null |
  awk -v n="$hits" -v top="$top" '/^ *[0-9,]+ .*\(/ && c < top {
    x = $1; gsub(",", "", x); $1 = ""; printf "%8d %s\n", x / n, substr($0, 1, 160); c++ }'
