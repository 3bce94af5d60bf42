#!/usr/bin/env bash
# End-to-end test of `toolcache trace convert` / `trace check`: every source
# (OpenAI chat, Anthropic, Claude Code session, BFCL, LLMCompiler movie and
# ParallelQA), the tool table, the output re-read by `trace check`, and exit
# code 2 with a message on bad input.
set -u
BIN="${TOOLCACHE_BIN:?TOOLCACHE_BIN not set}"
SRC="${TOOLCACHE_SOURCE_DIR:?TOOLCACHE_SOURCE_DIR not set}"
SHARED="${TOOLCACHE_SHARED_DIR:?TOOLCACHE_SHARED_DIR not set}"
FIX="$SRC/tests/data/traces"
DATA="$SHARED/data/traces"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
expect_exit() {  # expect_exit CODE DESCRIPTION -- command...
  local want="$1" what="$2"; shift 3
  "$@" >"$TMP/out" 2>"$TMP/err"; local got=$?
  [ "$got" = "$want" ] || fail "$what: exit $got, want $want ($(head -c 300 "$TMP/err"))"
}
expect_lines() {  # expect_lines N DESCRIPTION
  local n; n=$(wc -l <"$TMP/out")
  [ "$n" = "$1" ] || fail "$2: $n lines, want $1"
}
expect_err() {  # expect_err SUBSTRING DESCRIPTION
  grep -qF -- "$1" "$TMP/err" || fail "$2: stderr lacks '$1': $(head -c 300 "$TMP/err")"
}
check_roundtrip() {  # the converted output is a valid trace
  cp "$TMP/out" "$TMP/trace.jsonl"
  "$BIN" trace check "$TMP/trace.jsonl" >"$TMP/check" 2>&1 ||
    fail "$1: trace check rejects the converted output: $(head -c 300 "$TMP/check")"
}

# 1. Each source converts, with the pinned record counts.
expect_exit 0 "openai" -- "$BIN" trace convert --from openai-chat "$FIX/openai_chat.json"
expect_lines 5 "openai"
expect_err "dropped 1 calls without a matching result" "openai"
expect_err "assigned latency/cost from the default table to 5 calls of 4 tools" "openai"
check_roundtrip openai

expect_exit 0 "openai stdin jsonl" -- sh -c "\"$BIN\" trace convert --from openai-chat - < \"$FIX/openai_chat.jsonl\""
expect_lines 2 "openai stdin jsonl"

expect_exit 0 "openai + tool table" -- "$BIN" trace convert --from openai-chat --tool-table "$FIX/tool_table.csv" "$FIX/openai_chat.json"
expect_err "assigned latency/cost from --tool-table to 5 calls of 4 tools" "tool table"
head -1 "$TMP/out" | grep -q '"latency":0.25' || fail "tool table latency not applied: $(head -1 "$TMP/out")"

expect_exit 0 "anthropic" -- "$BIN" trace convert --from anthropic "$FIX/anthropic_messages.jsonl"
expect_lines 3 "anthropic"
grep -q '"tool":"run_tests".*"error":true' "$TMP/out" || fail "anthropic: is_error not carried"
check_roundtrip anthropic

expect_exit 0 "claude code" -- "$BIN" trace convert --from anthropic "$FIX/claude_code_session.jsonl"
expect_lines 2 "claude code"
grep -q '"time":1.5,"session":"s-1".*"latency":3.0' "$TMP/out" || fail "claude code: timestamps not used: $(cat "$TMP/out")"
check_roundtrip claude-code

expect_exit 0 "bfcl" -- "$BIN" trace convert --from bfcl "$DATA/bfcl/possible_answer_BFCL_v3_multi_turn_base.json"
expect_lines 1161 "bfcl"
expect_err "request_type from the function docs" "bfcl"
check_roundtrip bfcl
grep -q "request_type COMMAND: 670" "$TMP/check" || fail "bfcl: COMMAND count: $(cat "$TMP/check")"

expect_exit 0 "bfcl -o" -- "$BIN" trace convert --from bfcl -o "$TMP/bfcl.jsonl" "$DATA/bfcl/possible_answer_BFCL_v3_multi_turn_base.json"
[ "$(wc -l <"$TMP/bfcl.jsonl")" = 1161 ] || fail "bfcl -o: wrong line count"
[ -s "$TMP/out" ] && fail "bfcl -o: stdout not empty"

expect_exit 0 "movie" -- "$BIN" trace convert --from llmcompiler-movie "$DATA/llmcompiler/movie_recommendations_formatted.json"
expect_lines 4000 "movie"
expect_err "4000 calls, 1530 distinct titles, 61.75% repeated" "movie"
check_roundtrip movie
grep -q "repeated calls: 2470" "$TMP/check" || fail "movie: repeats: $(cat "$TMP/check")"

expect_exit 0 "parallelqa (auto)" -- "$BIN" trace convert --from llmcompiler "$DATA/llmcompiler/parallelqa_dataset.json"
expect_lines 542 "parallelqa"
check_roundtrip parallelqa

# 2. Bad input: exit 2 and a message naming the place.
expect_exit 2 "unknown source" -- "$BIN" trace convert --from openai "$FIX/openai_chat.json"
expect_err "unknown trace source 'openai'" "unknown source"
expect_exit 2 "missing --from" -- "$BIN" trace convert "$FIX/openai_chat.json"
expect_exit 2 "missing file" -- "$BIN" trace convert --from bfcl "$TMP/nope.json"
expect_err "cannot open input" "missing file"
expect_exit 2 "bad arguments" -- "$BIN" trace convert --from openai-chat "$FIX/openai_bad_arguments.json"
expect_err "trajectory 1, message 1, tool_calls[0]: 'function.arguments' is not valid JSON" "bad arguments"
expect_exit 2 "bfcl question file" -- "$BIN" trace convert --from bfcl "$DATA/bfcl/BFCL_v3_multi_turn_base.json"
expect_err "no 'ground_truth'" "bfcl question file"
expect_exit 2 "movie from parallelqa" -- "$BIN" trace convert --from llmcompiler-movie "$DATA/llmcompiler/parallelqa_dataset.json"
printf 'tool,latency\nx,abc\n' >"$TMP/bad.csv"
expect_exit 2 "bad tool table" -- "$BIN" trace convert --from openai-chat --tool-table "$TMP/bad.csv" "$FIX/openai_chat.json"
expect_err "bad.csv:2: 'latency' must be a number" "bad tool table"
printf '{"tool":"a","arguments":{},"result_size":1}\n{"tool":"a","arguments":{},"result_size":-4}\n' >"$TMP/bad.jsonl"
expect_exit 2 "check bad trace" -- "$BIN" trace check "$TMP/bad.jsonl"
expect_err "bad.jsonl:2: 'result_size' must be a non-negative integer" "check bad trace"
expect_exit 2 "trace without subcommand" -- "$BIN" trace
expect_exit 0 "check valid" -- "$BIN" trace check "$FIX/valid.jsonl"
grep -q "records: 2" "$TMP/out" || fail "check valid: $(cat "$TMP/out")"

if [ "$fails" -gt 0 ]; then
  echo "e2e_trace: $fails failure(s)" >&2
  exit 1
fi
echo "e2e_trace: ok"
