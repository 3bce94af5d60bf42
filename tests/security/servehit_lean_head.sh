#!/usr/bin/env bash
# Attacks on the lean head parse of `toolcache serve` (issue 32 item 6,
# src/http/server.cc LeanParseHead): the common request head is read
# without Beast, so every head of that shape must still be framed, limited
# and refused exactly as before. Raw bytes over one socket per case (a
# Python client, so no HTTP library tidies them); each case prints what it
# saw.
source "$(dirname "$0")/lib/common.sh"

printf 'tools:\n  get_doc: {requestType: INFORMATIONAL, ttlSeconds: 3600}\n' \
  >"$work/serve.yaml"
start_bg "$work/out" "$work/err" "$TOOLCACHE_BIN" serve --listen 127.0.0.1:0 \
  --config "$work/serve.yaml" --store memory --log-level error
wait_listening "$work/out" "$work/err" || exit 1
port=${url##*:}

# raw BYTES(python literal) -> what the server sent until it closed or 2 s
# of silence, then "|closed" or "|open".
raw() {
  python3 - "$port" "$1" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(eval(sys.argv[2]))
s.settimeout(2)
got, closed = b"", False
try:
    while True:
        c = s.recv(65536)
        if not c:
            closed = True
            break
        got += c
except socket.timeout:
    pass
sys.stdout.write(got.decode("latin-1") + ("|closed" if closed else "|open"))
PY
}
count() { grep -o "$1" <<<"$2" | wc -l; }

rec='{"server":"bench","tool":"get_doc","arguments":{"id":1},"result":{"content":[{"type":"text","text":"doc"}]}}'
hit='{"server":"bench","tool":"get_doc","arguments":{"id":1}}'
post() {  # post PATH BODY [EXTRA_HEADER_LINES] -> a python bytes literal
  printf "b'POST %s HTTP/1.1\\\\r\\\\nHost: 127.0.0.1\\\\r\\\\nContent-Type: application/json\\\\r\\\\n%sContent-Length: %d\\\\r\\\\n\\\\r\\\\n%s'" \
    "$1" "${3:-}" "${#2}" "$2"
}
r=$(raw "$(post /v1/record "$rec")"); echo "record: ${r:0:40}"
grep -q ' 200 ' <<<"$r" || fail "record: $r"

# 1. Two lean requests in one packet: both answered, in order, kept alive.
r=$(raw "$(post /v1/lookup "$hit")+$(post /v1/lookup '{"server":"bench","tool":"get_doc","arguments":{"id":2}}')")
echo "pipelined: $(count '"hit":true' "$r") hit, $(count '"hit":false' "$r") miss, ${r: -6}"
[[ "$r" == *'"hit":true'*'"hit":false'*'|open' ]] || fail "pipelined lean requests: $r"
pass "two pipelined lean heads are two requests, answered in order"

# 2. A body that holds a request is a body, never a second request.
smuggled='GET /v1/stats HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'  # 43 bytes
r=$(raw "b'POST /v1/lookup HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nContent-Type: application/json\\r\\nContent-Length: 43\\r\\n\\r\\n$smuggled'")
echo "request in a body: $(head -c 60 <<<"$r" | tr -d '\r')..."
[[ "$(count 'HTTP/1.1 ' "$r")" == 1 ]] || fail "a body ran as a request: $r"
grep -q ' 400 ' <<<"$r" || fail "the body was not read as JSON: $r"
pass "a request inside a Content-Length body is not run"

# 3. Content-Length with Transfer-Encoding, two lengths, a list: refused.
for extra in 'Transfer-Encoding: chunked\r\n' 'Content-Length: 7\r\n' \
  'Content-Length: 57, 57\r\n' 'Content-Length: +57\r\n'; do
  r=$(raw "$(post /v1/lookup "$hit" "$extra")")
  echo "framing '$extra': $(head -1 <<<"$r" | tr -d '\r') ${r: -7}"
  grep -q '^HTTP/1.1 400 ' <<<"$r" && [[ "$r" == *'|closed' ]] ||
    fail "ambiguous framing '$extra' not refused and closed: $r"
done
pass "ambiguous lengths are refused with 400 and the connection closes"

# 4. Control bytes in a value (NUL, a bare CR, DEL) and a non-token name.
for extra in 'X-A: a\x00b\r\n' 'X-A: a\rb\r\n' 'X-A: a\x7fb\r\n' \
  'X(A): b\r\n'; do
  r=$(raw "$(post /v1/lookup "$hit" "$extra")")
  echo "field '$extra': $(head -1 <<<"$r" | tr -d '\r') ${r: -7}"
  grep -q '^HTTP/1.1 400 ' <<<"$r" && [[ "$r" == *'|closed' ]] ||
    fail "bad field '$extra' not refused and closed: $r"
done
pass "control bytes in a value and separators in a name are refused"

# 5. A body over the limit (serve's 8 MiB) is refused before it is read.
r=$(raw "b'POST /v1/lookup HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nContent-Type: application/json\\r\\nContent-Length: 8388609\\r\\n\\r\\n'")
echo "over the body limit: $(head -1 <<<"$r" | tr -d '\r') ${r: -7}"
grep -q '^HTTP/1.1 413 ' <<<"$r" && [[ "$r" == *'|closed' ]] ||
  fail "a body over 8 MiB not refused with 413: $r"
pass "a Content-Length over the body limit is a 413"

# 6. Connection: close is honoured; HTTP/1.0 closes after its answer.
r=$(raw "$(post /v1/lookup "$hit" 'Connection: close\r\n')")
echo "connection close: $(head -1 <<<"$r" | tr -d '\r') ${r: -7}"
grep -q '"hit":true' <<<"$r" && grep -qi '^connection: close' <<<"$r" &&
  [[ "$r" == *'|closed' ]] || fail "Connection: close not honoured: $r"
r=$(raw "b'POST /v1/lookup HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\nContent-Type: application/json\\r\\nContent-Length: ${#hit}\\r\\n\\r\\n$hit'")
echo "HTTP/1.0: $(head -1 <<<"$r" | tr -d '\r') ${r: -7}"
grep -q '^HTTP/1.0 200 ' <<<"$r" && [[ "$r" == *'|closed' ]] ||
  fail "HTTP/1.0 request not answered and closed: $r"
pass "Connection: close and HTTP/1.0 end the connection after the answer"

# 7. A browser page is still kept out (the guard reads the lean fields).
r=$(raw "$(post /v1/lookup "$hit" 'Origin: http://evil.example\r\n')")
echo "foreign Origin: $(head -1 <<<"$r" | tr -d '\r')"
grep -q '^HTTP/1.1 403 ' <<<"$r" || fail "a foreign Origin was answered: $r"
pass "a foreign Origin is refused with 403"
