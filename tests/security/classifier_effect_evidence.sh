#!/usr/bin/env bash
# Adversarial cases for session 12's second-round rules (issue 31),
# through the built binary's `toolcache classify --no-model`: a server
# author who opens a write with a reading verb ("Fetch ...", "Find ...",
# "Get ...") or an observation ("Perform ... analysis") must not get it
# cached when the rest of the definition says the call acts: a dry-run
# switch, a boolean named by a state-changing verb, a listed write
# operation, or measuring test coverage. Also with the author's
# readOnlyHint trusted (the MCP faces' default) and closed world: the
# evidence is a hard veto no annotation outranks.
set -uo pipefail
bin=${TOOLCACHE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
verdict() {  # verdict CASE WANT FILE [FLAGS...]  (WANT: the tool's "cacheable")
  local case=$1 want=$2 file=$3
  shift 3
  local got
  got=$("$bin" classify --format json --no-model "$@" "$file" |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{
      const v=JSON.parse(s.trim().split("\n")[0]);
      console.log(String(v.cacheable) + " (" + v.detail + ")")})')
  echo "$case: cacheable=$got (want $want)"
  [ "${got%% *}" = "$want" ] || fail=1
}
one() {  # one FILE NAME DESCRIPTION PROPERTIES-JSON [ANNOTATIONS-JSON]
  printf '{"tools":[{"name":"%s","description":"%s","inputSchema":{"type":"object","properties":%s},"annotations":%s}]}\n' \
    "$2" "$3" "$4" "${5:-{\}}" >"$1"
}
# A closed-world read-only hint: trusted, it alone would cache the tool.
ro='{"readOnlyHint":true,"openWorldHint":false}'

# 1. A reading verb and a dry-run switch (fresh5's pabal shape).
one "$tmp/1.json" pull_notes "Fetch release notes from the store." \
  '{"app":{"type":"string"},"dryRun":{"type":"boolean","description":"If true, only outputs result without actually saving"}}' "$ro"
verdict "'Fetch' with a dryRun switch" false "$tmp/1.json" --no-annotations
verdict "'Fetch' with a dryRun switch, readOnlyHint trusted" false "$tmp/1.json"

# 2. A finder whose found tools are switched on (fresh5's qase shape).
one "$tmp/2.json" discover_tools "Find tools hidden by default." \
  '{"query":{"type":"string"},"activate":{"type":"boolean","default":true,"description":"If true (default), found tools are activated"}}' "$ro"
verdict "'Find' with an activate switch" false "$tmp/2.json" --no-annotations
verdict "'Find' with an activate switch, readOnlyHint trusted" false "$tmp/2.json"

# 3. A list of operations that includes a write (fresh5's dataiku shape).
one "$tmp/3.json" variable "Project variable ops: get/set." '{}' "$ro"
verdict "'ops: get/set'" false "$tmp/3.json" --no-annotations
verdict "'ops: get/set', readOnlyHint trusted" false "$tmp/3.json"

# 4. Coverage measured by running the tests (fresh5's vitest shape).
one "$tmp/4.json" analyze_coverage \
  "Perform comprehensive test coverage analysis with detailed metrics." \
  '{"target":{"type":"string"}}'
verdict "'Perform test coverage analysis'" false "$tmp/4.json" --no-annotations

# 5. Controls: the reading shapes next to them still read (so the cases
#    above test the rules, not a classifier that refuses everything).
one "$tmp/5.json" code_env "Code env ops: list/get." '{}'
verdict "control 'ops: list/get'" true "$tmp/5.json" --no-annotations
one "$tmp/6.json" get_file_coverage "Get coverage information for a file." \
  '{"file_id":{"type":"string"}}'
verdict "control 'Get coverage information'" true "$tmp/6.json" --no-annotations

[ "$fail" -eq 0 ] && echo "classifier_effect_evidence: ok"
exit "$fail"
