#!/usr/bin/env bash
# End-to-end test of `toolcache trace convert` / `trace check`: every source
# (OpenAI chat, Anthropic, Claude Code session, BFCL, LLMCompiler movie and
# ParallelQA), the tool table, the output re-read by `trace check`, and exit
# code 2 with a message on bad input.
set -u
BIN="${TOOLCACHE_BIN:?TOOLCACHE_BIN not set}"
SRC="${TOOLCACHE_SOURCE_DIR:?TOOLCACHE_SOURCE_DIR not set}"
FIX="$SRC/tests/data/traces"
DATA="$SRC/tests/data/traces"
for f in bfcl/possible_answer_BFCL_v3_multi_turn_base.json bfcl/BFCL_v3_multi_turn_base.json \
  llmcompiler/movie_recommendations_formatted.json llmcompiler/parallelqa_dataset.json; do
  [ -r "$DATA/$f" ] || { echo "FAIL: test data file missing: $DATA/$f" >&2; exit 1; }
done
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

expect_err "request_type and ttl derived by the classifier for 5 calls of 4 tools" "openai"
expect_err "send_email: COMMAND (hard_list" "openai"
[ "$(grep -c '"request_type"' "$TMP/out")" = 5 ] || fail "openai: not every record typed"

# --tool-table request_type overrides the classifier (and says so).
printf 'tool,latency,cost,request_type\nsend_email,0.1,0,INFORMATIONAL\nget_weather,0.2,0,\n' >"$TMP/types.csv"
expect_exit 0 "openai + request_type table" -- "$BIN" trace convert --from openai-chat --tool-table "$TMP/types.csv" "$FIX/openai_chat.json"
expect_err "request_type from --tool-table for 1 calls" "request_type table"
grep -q '"tool":"send_email".*"request_type":"INFORMATIONAL"' "$TMP/out" || fail "request_type table not applied"
printf 'tool,latency,cost,request_type\nx,0.1,0,MAYBE\n' >"$TMP/badtype.csv"
expect_exit 2 "bad request_type in table" -- "$BIN" trace convert --from openai-chat --tool-table "$TMP/badtype.csv" "$FIX/openai_chat.json"
expect_err "badtype.csv:2: 'request_type' of tool 'x' must be INFORMATIONAL or COMMAND" "bad request_type"

# A converted chat trace replays with hits: the classifier typed it (an
# untyped record would replay as a COMMAND, never cached).
cat >"$TMP/repeat.json" <<'EOF'
[{"id":"r","tools":[{"type":"function","function":{"name":"lookup_doc","description":"Gets a documentation page.","parameters":{"type":"object","properties":{"page":{"type":"string"}}}}}],
  "messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"lookup_doc","arguments":"{\"page\":\"x\"}"}}]},
              {"role":"tool","tool_call_id":"a","content":"doc x"},
              {"role":"assistant","tool_calls":[{"id":"b","function":{"name":"lookup_doc","arguments":"{\"page\":\"x\"}"}}]},
              {"role":"tool","tool_call_id":"b","content":"doc x"}]}]
EOF
expect_exit 0 "openai with tool definitions" -- "$BIN" trace convert --from openai-chat -o "$TMP/repeat.jsonl" "$TMP/repeat.json"
expect_err "(1 with the source's tool definition" "openai with tool definitions"
expect_exit 0 "replay converted chat trace" -- "$BIN" sim --trace "$TMP/repeat.jsonl" --policy lru --sizes 100 --format json --out ''
grep -q '"policy":"lru".*"hits":1,' "$TMP/out" || fail "converted chat trace: no hit: $(head -c 400 "$TMP/out")"

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

expect_err "195 distinct initial worlds, 732 tenants" "bfcl tenants"
grep -q "tenants: 732" "$TMP/check" || fail "bfcl: tenant count: $(cat "$TMP/check")"
head -1 "$TMP/trace.jsonl" | grep -q '"tenant":"bfcl:[0-9a-f]\{12\}"' || fail "bfcl: no tenant: $(head -1 "$TMP/trace.jsonl")"

# The question file given explicitly; a missing one is an error; without
# one (stdin) every episode is its own tenant and stderr says so.
expect_exit 0 "bfcl --bfcl-questions" -- "$BIN" trace convert --from bfcl --bfcl-questions "$DATA/bfcl/BFCL_v3_multi_turn_base.json" "$DATA/bfcl/possible_answer_BFCL_v3_multi_turn_base.json"
expect_lines 1161 "bfcl --bfcl-questions"
expect_exit 2 "bfcl missing questions" -- "$BIN" trace convert --from bfcl --bfcl-questions "$TMP/nope.json" "$DATA/bfcl/possible_answer_BFCL_v3_multi_turn_base.json"
expect_err "cannot open the BFCL question file" "bfcl missing questions"
expect_exit 0 "bfcl stdin" -- sh -c "\"$BIN\" trace convert --from bfcl --bfcl-func-docs \"$DATA/bfcl/multi_turn_func_doc\" - < \"$DATA/bfcl/possible_answer_BFCL_v3_multi_turn_base.json\""
expect_err "pass --bfcl-questions FILE" "bfcl stdin"
grep -q '"tenant":"bfcl-episode:multi_turn_base_0"' "$TMP/out" || fail "bfcl stdin: episode tenant missing"

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
printf '{"tool":"a","arguments":{},"result_size":1,"latency":1e308}\n' >"$TMP/slow.jsonl"
expect_exit 2 "check huge latency" -- "$BIN" trace check "$TMP/slow.jsonl"
expect_err "slow.jsonl:1: 'latency' 1e+308 exceeds the maximum" "check huge latency"
expect_exit 2 "trace without subcommand" -- "$BIN" trace
expect_exit 0 "check valid" -- "$BIN" trace check "$FIX/valid.jsonl"
grep -q "records: 2" "$TMP/out" || fail "check valid: $(cat "$TMP/out")"

if [ "$fails" -gt 0 ]; then
  echo "e2e_trace: $fails failure(s)" >&2
  exit 1
fi
echo "e2e_trace: ok"
