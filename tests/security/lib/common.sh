# tests/security/lib/common.sh: the set-up every security group repeated
# (issue 30). Sourced by a group, never run on its own: tests/e2e_security.sh
# runs only tests/security/*.sh and *.mjs, not this folder.
#
#   source "$(dirname "$0")/lib/common.sh"
#   start_bg "$work/out" "$work/err" "$TOOLCACHE_BIN" serve --listen 127.0.0.1:0
#   wait_listening "$work/out" "$work/err" || exit 1   # sets $url
#   ...; stop
#
# Gives: strict mode; $TOOLCACHE_BIN checked; $src (the source tree); $work
# (a temporary folder, removed on exit); every process started by start_bg
# killed on exit; fail / pass; start_bg, wait_listening, stop, exit_status.
set -euo pipefail
: "${TOOLCACHE_BIN:?TOOLCACHE_BIN must point at the built toolcache binary}"
src="${TOOLCACHE_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}"
work=$(mktemp -d)
pids=()  # every process start_bg started and stop has not reaped
pid=""   # the last one
url=""   # what the last wait_listening found

cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "PASS $*"; }

# Choice: 30 s to start listening. A loaded clean clone once saw no
# "listening on" from serve within 10 s (and an empty log); a server that
# dies is noticed at once, so the long limit only costs time when
# something hangs.
: "${SECURITY_START_TIMEOUT:=30}"

# start_bg OUT ERR CMD...: runs CMD in the background, stdout to OUT, stderr
# to ERR (ERR "" = into OUT); sets $pid and remembers it for the clean-up.
start_bg() {
  local out=$1 err=$2
  shift 2
  if [ -n "$err" ]; then
    "$@" >"$out" 2>"$err" &
  else
    "$@" >"$out" 2>&1 &
  fi
  pid=$!
  pids+=("$pid")
}

# exit_status PID: sets $status to "running" or to the status PID exited
# with (not in a $(...): a subshell cannot wait for its parent's child).
status=""
exit_status() {
  if kill -0 "$1" 2>/dev/null; then
    status=running
  else
    status=0
    wait "$1" 2>/dev/null || status=$?
  fi
}

# mono_cs: centiseconds since boot (/proc/uptime, CLOCK_BOOTTIME). Bash's
# SECONDS follows the wall clock, which this project's VMs have seen jump by
# minutes: a start-up limit measured with it expired after 14 s of real
# time ("did not start listening within 30 s" from serve_api.sh and
# serve_mcp.sh, which then passed on re-run). Limits use this clock.
mono_cs() {
  local up _
  read -r up _ </proc/uptime
  echo $((10#${up%.*} * 100 + 10#${up#*.}))
}

# wait_for FILE PID PATTERN: 0 once PATTERN is in FILE; 1 when PID exits
# first or SECURITY_START_TIMEOUT passes.
wait_for() {
  local deadline=$(($(mono_cs) + SECURITY_START_TIMEOUT * 100))
  while true; do
    grep -q -- "$3" "$1" 2>/dev/null && return 0
    if ! kill -0 "$2" 2>/dev/null; then
      grep -q -- "$3" "$1" 2>/dev/null  # printed just before it exited
      return
    fi
    [ "$(mono_cs)" -lt "$deadline" ] || return 1
    sleep 0.05
  done
}

# wait_listening OUT ERR [PID]: waits for PID (default $pid) to print
# "listening on http://..." to OUT and sets $url; otherwise prints why
# (still running after the limit, or the status it exited with, and both
# logs) and returns 1.
wait_listening() {
  local out=$1 err=$2 p=${3:-$pid}
  url=""
  if wait_for "$out" "$p" "listening on"; then
    url=$(sed -n 's/^.*listening on \(http:[^ ]*\).*/\1/p' "$out" | head -n 1)
  fi
  [ -n "$url" ] && return 0
  exit_status "$p"
  local why="exited with status $status before it listened"
  [ "$status" = running ] &&
    why="did not start listening within ${SECURITY_START_TIMEOUT} s (status: running)"
  echo "FAIL: process $p $why: $(cat "$err" 2>/dev/null) $(cat "$out" 2>/dev/null)" >&2
  return 1
}

# stop [PID]: ends PID (default $pid) and reaps it.
stop() {
  local p=${1:-$pid} q kept=()
  [ -n "$p" ] || return 0
  kill "$p" 2>/dev/null || true
  wait "$p" 2>/dev/null || true
  for q in "${pids[@]}"; do [ "$q" = "$p" ] || kept+=("$q"); done
  pids=("${kept[@]}")
  [ "$p" = "$pid" ] && pid=""
  return 0
}
