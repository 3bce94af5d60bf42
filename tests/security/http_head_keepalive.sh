#!/usr/bin/env bash
# A forwarded HEAD must not wedge its keep-alive connection (issue 28 item
# 1; Claude Code sends `HEAD /` at every start). A real
# `python3 -m http.server -p HTTP/1.1` behind `toolcache proxy`: HEAD / then
# GET / on one socket must get two answers at once (direct: two), the HEAD
# answer with the upstream's Content-Length and no chunked framing; the
# proxy must log no upstream failure; SIGTERM must not wait for a drain.
source "$(dirname "$0")/lib/common.sh"
# This group checks each status itself: no -e, no pipefail.
set +e +o pipefail
fail() { echo "FAIL http_head_keepalive: $*" >&2; exit 1; }

mkdir "$work/www" && echo "hello from the upstream" >"$work/www/index.html"
upport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
(cd "$work/www" && exec python3 -m http.server -p HTTP/1.1 --bind 127.0.0.1 "$upport") \
  >"$work/up.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$upport/" && break; sleep 0.1; done
start_bg "$work/out" "$work/err" "$TOOLCACHE_BIN" proxy --listen 127.0.0.1:0 \
  --upstream "http://127.0.0.1:$upport" --log-level info
ppid=$pid
wait_listening "$work/out" "$work/err" || fail "proxy did not start"

# pair PORT -> "ANSWERS SECONDS" then the raw bytes
pair() {
  python3 - "$1" <<'PY'
import socket, sys, time
s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
t0 = time.time()
s.sendall(b'HEAD / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
s.settimeout(0.2)
got = b''
while time.time() - t0 < 3 and got.count(b'hello from the upstream') < 1:
    try:
        d = s.recv(65536)
        if not d: break
        got += d
    except socket.timeout:
        pass
print(got.count(b'HTTP/1.'), round(time.time() - t0, 2))
print(got.decode('latin1'))
PY
}
direct=$(pair "$upport")
echo "direct: $(head -1 <<<"$direct")"
via=$(pair "${url##*:}")
read -r n secs <<<"$(head -1 <<<"$via")"
echo "through the proxy: $n answers in $secs s"
[ "$n" = 2 ] || fail "through the proxy $n answer(s), want 2: $via"
python3 -c "import sys; sys.exit(0 if $secs < 2 else 1)" || fail "the answers took $secs s"
head_answer=$(sed -n '2,/^\r$/p' <<<"$via")
grep -qi '^content-length: 24' <<<"$head_answer" || fail "the HEAD answer lost its Content-Length: $head_answer"
grep -qi 'transfer-encoding' <<<"$head_answer" && fail "the HEAD answer is chunked: $head_answer"
t0=$(date +%s%N)
kill -TERM "$ppid"; wait "$ppid" 2>/dev/null
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "SIGTERM -> exit in $ms ms"
[ "$ms" -lt 3000 ] || fail "SIGTERM waited $ms ms"
grep -qiE 'failed mid-response|client_gone' "$work/err" && fail "the proxy logged: $(grep -iE 'failed mid-response|client_gone' "$work/err")"
echo "http_head_keepalive: ok"
