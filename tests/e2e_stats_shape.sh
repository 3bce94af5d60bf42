#!/usr/bin/env bash
# One stats shape for every face (src/runtime/stats.h): `serve`'s
# /toolcache/stats, the LLM proxy's /toolcache/stats and `mcp --stats FILE`
# each carry "face" and a "cache" object with exactly the keys of
# runtime::kCacheStatsKeys, in that order (no "cachedEntries" here and
# "entries" there). The key list is read from the header, not copied.
set -euo pipefail
: "${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the built toolcache binary}"
src="${TOOLCACHE_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
work=$(mktemp -d)
# start() runs in a $(...) subshell, so a pids array it filled would be lost
# and the servers left running: each writes its pid to a file instead.
cleanup() {
  for f in "$work"/*.pid; do [ -e "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

start() {  # start NAME ARGS...: a server face on a free port; prints its URL
  local name=$1; shift
  "$TOOLCACHE_BIN" "$@" --listen 127.0.0.1:0 --log-level warn >"$work/$name.out" 2>"$work/$name.err" &
  echo $! >"$work/$name.pid"
  for _ in $(seq 100); do grep -q "listening on" "$work/$name.out" 2>/dev/null && break; sleep 0.1; done
  sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$work/$name.out"
}

serve_url=$(start serve serve)
[ -n "$serve_url" ] || fail "serve did not start: $(cat "$work/serve.err")"
proxy_url=$(start proxy proxy --upstream http://127.0.0.1:9)
[ -n "$proxy_url" ] || fail "proxy did not start: $(cat "$work/proxy.err")"
curl -sf "$serve_url/toolcache/stats" >"$work/serve.json" || fail "serve stats"
curl -sf "$proxy_url/toolcache/stats" >"$work/proxy.json" || fail "proxy stats"
# `mcp` writes its file when the session ends (client EOF).
"$TOOLCACHE_BIN" mcp --stats "$work/mcp.json" -- cat </dev/null 2>"$work/mcp.err" \
  || fail "mcp: $(cat "$work/mcp.err")"

python3 - "$src/src/runtime/stats.h" "$work" <<'PY'
import json, re, sys
header, work = sys.argv[1], sys.argv[2]
block = re.search(r'kCacheStatsKeys\[\] = \{(.*?)\};', open(header).read(), re.S).group(1)
want = re.findall(r'"(\w+)"', block)
assert len(want) >= 20, want
bad = False
for face in ('serve', 'proxy', 'mcp'):
    d = json.load(open(f'{work}/{face}.json'))
    keys = list(d.get('cache', {}).keys())
    ok = d.get('face') == face and keys == want
    print(f"{face}: face={d.get('face')} cache keys={len(keys)} {'same shape' if ok else 'DIFFERENT: ' + str(keys)}")
    bad |= not ok
sys.exit(1 if bad else 0)
PY
echo "PASS: serve, proxy and mcp write the one stats shape"
