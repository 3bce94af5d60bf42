# The per-target libFuzzer settings, sourced by fuzz/run.sh and fuzz/rate.sh
# so that a measured rate is the rate of the runs it describes.
#
# Choice: -entropic_feature_frequency_threshold=8 (libFuzzer's default is
# 255). Entropic scheduling keeps a list of "rare" features: the 100 rarest
# plus every feature seen fewer times than the threshold, and for every
# feature an execution hits it searches that list linearly. With 255 the
# list holds most of a 10,000-27,000-feature corpus for the first hundreds
# of thousands of executions, and that search took 33-56 % of the CPU of
# canonical_json, mcp_scan and llm_wire and most of the corpus loading
# (fuzz/README.md, session 3). With 8 the schedule is still entropic (the
# 100 rarest features steer it) and the search is short.
fuzz_entropic_flag=-entropic_feature_frequency_threshold=8

# Choice: -max_len per target, a cap on the work one input can make.
# mcp_session's programs run the whole engine per step; sse parses every
# input six times (two event limits, three ways of cutting it, one of them
# byte by byte): 2048 bytes is 8 times its corpus's median input and 32
# times its small event limit (fuzz/README.md, session 5).
max_len_for() {
  case $1 in
    mcp_session) echo 512 ;;
    sse) echo 2048 ;;
    *) echo 8192 ;;
  esac
}

# dict_for TARGET SCRATCH_DIR: the dictionary's path (llm_wire's, JSON and
# SSE together, is written into SCRATCH_DIR).
dict_for() {
  case $1 in
    canonical_json | trace_convert) echo fuzz/dict/json.dict ;;
    mcp_scan | mcp_session) echo fuzz/dict/jsonrpc.dict ;;
    sse) echo fuzz/dict/sse.dict ;;
    config) echo fuzz/dict/yaml.dict ;;
    llm_wire)
      cat fuzz/dict/json.dict fuzz/dict/sse.dict >"$2/llm_wire.dict"
      echo "$2/llm_wire.dict" ;;
  esac
}
