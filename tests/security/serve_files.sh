#!/usr/bin/env bash
# Attacks on the files `toolcache serve` writes and shares (issue 27): a
# link planted where the stats file's temporary used to be (27.11), and
# several servers opening one new SQLite store at once (27.16).
set -euo pipefail
: "${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the built toolcache binary}"
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "PASS $*"; }

# waitlisten OUTFILE PID: 0 once "listening on" is printed, 1 if it exits.
waitlisten() {
  for _ in $(seq 200); do
    grep -q "listening on" "$1" 2>/dev/null && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# --- 27.11: --stats never writes through a planted link ------------------
echo "precious" >"$work/victim"
ln -s "$work/victim" "$work/stats.json.tmp"
"$TOOLCACHE_BIN" serve --listen 127.0.0.1:0 --stats "$work/stats.json" \
  --log-level error >"$work/out" 2>"$work/err" &
pid=$!
pids+=("$pid")
waitlisten "$work/out" "$pid" || fail "serve did not start: $(cat "$work/err")"
kill -USR1 "$pid"
for _ in $(seq 100); do [ -s "$work/stats.json" ] && break; sleep 0.05; done
kill "$pid"; wait "$pid" 2>/dev/null || true
echo "victim: $(cat "$work/victim"); stats: $(head -c 60 "$work/stats.json" | tr '\n' ' ')"
[ "$(cat "$work/victim")" = precious ] || fail "the link's target was overwritten"
[ -f "$work/stats.json" ] && [ ! -L "$work/stats.json" ] || fail "no stats file"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/stats.json" || fail "stats not JSON"
ls "$work" | grep -q '^stats.json.tmp\.' && fail "a temporary file was left: $(ls "$work")"
pass "27.11 --stats writes a fresh temporary file; the planted link's target is untouched"

# --- 27.16: several servers on one new SQLite store all start -----------
rounds=8
procs=3
failed=0
for r in $(seq "$rounds"); do
  db="$work/store$r.db"
  round_pids=()
  for i in $(seq "$procs"); do
    "$TOOLCACHE_BIN" serve --listen 127.0.0.1:0 --store "sqlite:$db" \
      --log-level error >"$work/o$r.$i" 2>"$work/e$r.$i" &
    round_pids+=($!)
  done
  pids+=("${round_pids[@]}")
  for i in $(seq "$procs"); do
    if ! waitlisten "$work/o$r.$i" "${round_pids[$((i - 1))]}"; then
      echo "round $r process $i did not start: $(cat "$work/e$r.$i")"
      failed=$((failed + 1))
    fi
  done
  for p in "${round_pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
done
echo "$((rounds * procs)) starts, $failed failed"
[ "$failed" -eq 0 ] || fail "$failed of $((rounds * procs)) servers could not open the shared store"
pass "27.16 $((rounds * procs)) servers opening one new SQLite file three at a time all started"
echo "serve_files: ok"
