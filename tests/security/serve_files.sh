#!/usr/bin/env bash
# Attacks on the files `toolcache serve` writes and shares (issue 27): a
# link planted where the stats file's temporary used to be (27.11), and
# several servers opening one new SQLite store at once (27.16).
source "$(dirname "$0")/lib/common.sh"

# waitlisten OUTFILE PID: 0 once "listening on" is printed, 1 if it exits
# first or does not listen within 30 s (lib/common.sh).
waitlisten() { wait_for "$1" "$2" "listening on"; }

# --- 27.11: --stats never writes through a planted link ------------------
echo "precious" >"$work/victim"
ln -s "$work/victim" "$work/stats.json.tmp"
start_bg "$work/out" "$work/err" "$TOOLCACHE_BIN" serve --listen 127.0.0.1:0 \
  --stats "$work/stats.json" --log-level error
wait_listening "$work/out" "$work/err" || exit 1
kill -USR1 "$pid"
for _ in $(seq 100); do [ -s "$work/stats.json" ] && break; sleep 0.05; done
stop
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
