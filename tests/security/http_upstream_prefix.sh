#!/usr/bin/env bash
# The proxy's upstream path prefix is a boundary (issue 27 item 9): with
# --upstream http://up/gw/tenant-a, no request may reach a path outside
# /gw/tenant-a/ (another tenant's gateway route). A fake upstream records
# every path it sees; dot segments (raw, %2e in any case), encoded slashes
# and targets not starting with '/' must get 400 and reach nothing.
source "$(dirname "$0")/lib/common.sh"
# This group checks each status itself: no -e, no pipefail.
set +e +o pipefail
fail() { echo "FAIL http_upstream_prefix: $*" >&2; exit 1; }

node -e '
const http = require("http"), fs = require("fs");
const s = http.createServer((req, res) => {
  fs.appendFileSync(process.argv[1], req.url + "\n");
  res.writeHead(200, {"content-type": "application/json"}); res.end("{\"data\":[]}");
});
s.listen(0, "127.0.0.1", () => console.log(s.address().port));
' "$work/paths" >"$work/up.port" &
pids+=($!)
wait_for "$work/up.port" "$!" "[0-9]" || fail "the upstream did not start"
up=$(cat "$work/up.port")
start_bg "$work/out" "$work/err" "$TOOLCACHE_BIN" proxy --listen 127.0.0.1:0 \
  --upstream "http://127.0.0.1:$up/gw/tenant-a" --log-level warn
wait_listening "$work/out" "$work/err" || fail "proxy did not start"
port=${url##*:}

# raw TARGET -> status line (curl would normalise the path)
raw() {
  python3 - "$port" "$1" <<'PY'
import socket, sys
s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
s.sendall(('GET ' + sys.argv[2] + ' HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n').encode())
s.settimeout(5)
got = b''
while True:
    d = s.recv(65536)
    if not d: break
    got += d
print(got.split(b'\r\n')[0].decode())
PY
}
for t in '/../tenant-b/v1/models' '/%2e%2e/tenant-b/v1/models' '/%2E%2e/tenant-b/v1/models' \
         '/v1/../../tenant-b/v1/models' '/.%2e/tenant-b/v1/models' '/..%2ftenant-b/v1/models' \
         '-admin/v1/models' '/v1/models/..'; do
  got=$(raw "$t")
  echo "GET $t -> $got"
  [[ "$got" == "HTTP/1.1 400"* ]] || fail "GET $t answered: $got"
done
got=$(raw '/v1/models')
echo "GET /v1/models -> $got"
[[ "$got" == "HTTP/1.1 200"* ]] || fail "a plain request failed: $got"
echo "upstream saw: $(tr '\n' ' ' <"$work/paths")"
while read -r p; do
  case "$p" in
    /gw/tenant-a/*) ;;
    *) fail "a request left the prefix: $p" ;;
  esac
  case "$p" in *..*|*%2e*|*%2E*) fail "a dot segment reached the upstream: $p" ;; esac
done <"$work/paths"
[ "$(wc -l <"$work/paths")" = 1 ] || fail "the upstream saw $(wc -l <"$work/paths") requests, want 1"
echo "http_upstream_prefix: ok"
