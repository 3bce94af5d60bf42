#!/usr/bin/env bash
# Adversarial cases for session 12's read-evidence and stated-purpose rules
# (issue 31), through the built binary's `toolcache classify --no-model
# --no-annotations`: a server author who names a write with a noun or an
# ambiguous verb and adds a "Returns ..." sentence must not get it cached.
set -uo pipefail
bin=${TOOLCACHE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
verdict() {  # verdict CASE WANT FILE  (WANT: the tool's "cacheable")
  local case=$1 want=$2 file=$3
  local got
  got=$("$bin" classify --format json --no-model --no-annotations "$file" |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{
      const v=JSON.parse(s.trim().split("\n")[0]);
      console.log(String(v.cacheable) + " (" + v.detail + ")")})')
  echo "$case: cacheable=$got (want $want)"
  [ "${got%% *}" = "$want" ] || fail=1
}
one() {  # one FILE NAME DESCRIPTION PROPERTIES-JSON
  printf '{"tools":[{"name":"%s","description":"%s","inputSchema":{"type":"object","properties":%s}}]}\n' \
    "$2" "$3" "$4" >"$1"
}

# 1. A noun-named sender with a reading sentence: the recipient
#    parameter keeps it out.
one "$tmp/1.json" mail_relay "Mail relay. Returns a delivery receipt." \
  '{"to":{"type":"string"},"subject":{"type":"string"}}'
verdict "noun-named sender with 'Returns'" false "$tmp/1.json"

# 2. A write word anywhere, even as a participle: "Returns the created ...".
one "$tmp/2.json" ticket_intake "Ticket intake. Returns the created ticket." \
  '{"queue_id":{"type":"string"}}'
verdict "'Returns the created ticket'" false "$tmp/2.json"

# 3. A conjoined action after the reading verb of a later sentence (n8n's
#    autofix shape).
one "$tmp/3.json" config_fixer "Config fixer. Preview fixes or apply them." \
  '{"id":{"type":"string"}}'
verdict "'Preview fixes or apply them'" false "$tmp/3.json"

# 4. A write stated as a requirement under a reading name (fresh4's
#    MasterGo shape).
one "$tmp/4.json" getComponentGenerator \
  "Get the component workflow. You must provide an absolute rootPath to save workflow files." \
  '{"rootPath":{"type":"string"}}'
verdict "requirement 'to save' under a get name" false "$tmp/4.json"

# 5. A generator whose output is random, and one that asks a model.
one "$tmp/5.json" generate_token "Generate a random access token." \
  '{"length":{"type":"integer"}}'
verdict "generate with random output" false "$tmp/5.json"
one "$tmp/6.json" generate_copy "Generate marketing copy." \
  '{"prompt":{"type":"string"}}'
verdict "generate from a prompt" false "$tmp/6.json"

# 6. Control: the shape the rule is for still reads (so the cases above
#    test the guards, not a rule that never fires).
one "$tmp/7.json" flightbox_summary \
  "Entry point for debugging. Returns trace overview with root span and errors." \
  '{"trace_id":{"type":"string"}}'
verdict "control: noun-named trace reader" true "$tmp/7.json"

exit $fail
