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

# The working corpora (every input the fuzzers kept, 24,292 files and
# 101 MB by session 6) live outside git in build-fuzz/work/<target>/; the
# repository keeps seeds, regression inputs and an edge-minimised set
# (fuzz/minimize.sh). Their archive is the repository's own history: the
# last commit that held the whole corpora. restore_work_corpus TARGET DIR
# fills an empty DIR from it (a shallow clone without that commit starts
# from fuzz/corpus/<target> alone and says so).
fuzz_corpus_archive=3f21bf1d10a2676a68211fdbfaf7c3da862f29c5
restore_work_corpus() {
  local t=$1 work=$2
  mkdir -p "$work"
  [ -z "$(ls -A "$work" 2>/dev/null)" ] || return 0
  if git cat-file -e "$fuzz_corpus_archive^{commit}" 2>/dev/null; then
    git archive "$fuzz_corpus_archive" "fuzz/corpus/$t" |
      tar -x -C "$work" --strip-components=3
    echo "fuzz: working corpus of $t restored from $fuzz_corpus_archive ($(ls "$work" | wc -l) inputs)" >&2
  else
    echo "fuzz: no archive commit $fuzz_corpus_archive here (shallow clone?); $t starts from fuzz/corpus/$t" >&2
  fi
}
