#!/usr/bin/env bash
# Attacks on the admin routes the runtime mounts on every face (issue 30):
# the stdio MCP face's --metrics-listen server (DNS rebinding, cross-site
# pages, other methods and paths, a bad address) and the one dashboard on
# serve and the LLM proxy (its CSP: nothing but its own hashed script and
# style, no framing; DNS rebinding refused before the page).
source "$(dirname "$0")/lib/common.sh"
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@"; }

# --- mcp --metrics-listen ---------------------------------------------------
mkfifo "$work/in"
# (Not start_bg: the FIFO must be opened by the background process, or the
# shell would block here until a writer opens it.)
"$TOOLCACHE_BIN" mcp --metrics-listen 127.0.0.1:0 -- cat <"$work/in" >/dev/null 2>"$work/mcp.err" &
pid=$!
pids+=("$pid")
exec 3>"$work/in"
wait_for "$work/mcp.err" "$pid" "metrics on" || true
murl=$(sed -n 's|.*metrics on \(http://[^/]*\)/metrics.*|\1|p' "$work/mcp.err")
[ -n "$murl" ] || fail "no metrics URL: $(cat "$work/mcp.err")"
c=$(code -H 'Host: attacker.example' "$murl/metrics"); echo "rebinding Host on mcp /metrics: $c"
[ "$c" = 403 ] || fail "a foreign Host read mcp /metrics ($c)"
c=$(code -H 'Origin: https://attacker.example' "$murl/toolcache/stats"); echo "cross-site Origin on mcp stats: $c"
[ "$c" = 403 ] || fail "a cross-site page read mcp stats ($c)"
c=$(code -H 'Sec-Fetch-Site: cross-site' "$murl/metrics"); echo "Sec-Fetch-Site cross-site: $c"
[ "$c" = 403 ] || fail "a cross-site fetch read mcp /metrics ($c)"
c=$(code -X POST "$murl/metrics"); echo "POST /metrics: $c"
[ "$c" = 405 ] || fail "POST /metrics got $c"
c=$(code "$murl/../../etc/passwd" --path-as-is); echo "dot segments: $c"
[ "$c" = 404 ] || [ "$c" = 400 ] || fail "dot segments got $c"
c=$(code "$murl/metrics"); [ "$c" = 200 ] || fail "local /metrics got $c"
pass "mcp --metrics-listen: foreign Host, cross-site Origin/Sec-Fetch-Site 403; POST 405; other paths 404; local 200"
exec 3>&-
set +e
out=$("$TOOLCACHE_BIN" mcp --metrics-listen 127.0.0.1:99999 -- cat 2>&1 </dev/null); rc=$?
set -e
echo "port 99999: exit $rc ($out)"
[ $rc -eq 2 ] || fail "a bad --metrics-listen port exited $rc"
pass "a bad --metrics-listen address exits 2 with its reason"

# --- the dashboard on serve and the LLM proxy -------------------------------
start_bg "$work/serve.out" "" "$TOOLCACHE_BIN" serve --listen 127.0.0.1:0 --log-level error
serve_pid=$pid
start_bg "$work/proxy.out" "" "$TOOLCACHE_BIN" proxy --listen 127.0.0.1:0 --upstream http://127.0.0.1:9 --log-level error
proxy_pid=$pid
for face in serve proxy; do
  face_pid=${face}_pid
  wait_listening "$work/$face.out" "$work/$face.out" "${!face_pid}" || fail "$face did not start"
  curl -s -D "$work/$face.h" -o "$work/$face.html" "$url/dashboard"
  csp=$(tr -d '\r' <"$work/$face.h" | sed -n 's/^content-security-policy: //Ip')
  echo "$face /dashboard CSP: $csp"
  grep -q "default-src 'none'" <<<"$csp" || fail "$face: no default-src 'none'"
  grep -q "frame-ancestors 'none'" <<<"$csp" || fail "$face: can be framed"
  grep -q "unsafe-inline\|unsafe-eval\|http" <<<"$csp" && fail "$face: the CSP allows more than the page"
  # The hashes are of the page's own script and style.
  python3 - "$work/$face.html" "$csp" <<'PY' || fail "$face: CSP hashes do not match the page"
import base64, hashlib, re, sys
page, csp = open(sys.argv[1]).read(), sys.argv[2]
for tag, directive in (("script", "script-src"), ("style", "style-src")):
    body = re.search(rf"<{tag}>(.*?)</{tag}>", page, re.S).group(1)
    h = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
    assert f"{directive} 'sha256-{h}'" in csp, (tag, h)
PY
  c=$(code -H 'Host: attacker.example' "$url/dashboard"); echo "$face rebinding Host on /dashboard: $c"
  [ "$c" = 403 ] || fail "$face: a foreign Host got the dashboard ($c)"
done
pass "the dashboard on serve and proxy: CSP pins its own script and style, no framing; DNS rebinding 403"
