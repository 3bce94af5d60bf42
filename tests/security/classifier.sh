#!/usr/bin/env bash
# Adversarial cases for the classifier (issue 31), through the built binary's
# `toolcache classify`: a server's own annotations and an operator's
# server-wide TTL must not turn a write into a cached read.
set -uo pipefail
bin=${TOOLCACHE_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
verdict() {  # verdict CASE FIELD WANT FILE [ARGS...]
  local case=$1 field=$2 want=$3 file=$4
  shift 4
  local got
  got=$("$bin" classify --format json "$@" "$file" |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{
      const v=JSON.parse(s.trim().split("\n")[0]);
      console.log(String(v[process.argv[1]]))})' "$field")
  echo "$case: $field=$got (want $want)"
  [ "$got" = "$want" ] || fail=1
}

# 1. A server marks a tool that runs caller-supplied SQL read-only.
cat >"$tmp/sql.json" <<'JSON'
{"tools":[{"name":"run_report","description":"Run a report",
  "inputSchema":{"type":"object","properties":{"sql":{"type":"string"}}},
  "annotations":{"readOnlyHint":true,"openWorldHint":false}}]}
JSON
verdict "readOnlyHint on a SQL tool" cacheable false "$tmp/sql.json"

# 2. A server marks a sending tool read-only.
cat >"$tmp/send.json" <<'JSON'
{"tools":[{"name":"notify_user","description":"Send a notification to the user.",
  "annotations":{"readOnlyHint":true,"openWorldHint":false}}]}
JSON
verdict "readOnlyHint on a sending tool" cacheable false "$tmp/send.json"

# 3. An operator's server-wide TTL on a read-only open-world tool the rest of
#    whose definition does not read (wrong annotation, issue 31).
cat >"$tmp/ow.json" <<'JSON'
{"tools":[{"name":"mailbox_digest","description":"Mailbox digest.",
  "annotations":{"readOnlyHint":true}}]}
JSON
printf 'servers:\n  mail: {ttlSeconds: 300}\n' >"$tmp/op.yaml"
verdict "server TTL on an open-world tool" cacheable false "$tmp/ow.json" \
  --config "$tmp/op.yaml" --server mail

# 4. A server-wide TTL does not lengthen a real-time class (a write the
#    heuristic misreads stays below the 60 s minimum).
cat >"$tmp/rt.json" <<'JSON'
{"tools":[{"name":"get_status_update","description":"Get the current status."}]}
JSON
verdict "server TTL over a real-time class" ttl_seconds 60 "$tmp/rt.json" \
  --config "$tmp/op.yaml" --server mail

# 5. Returning an order is a write.
cat >"$tmp/ret.json" <<'JSON'
{"tools":[{"name":"return_delivered_order_items",
  "description":"Return some items of a delivered order."}]}
JSON
verdict "return_delivered_order_items" request_type COMMAND "$tmp/ret.json"
exit $fail
