#!/usr/bin/env bash
# Session 18 attackV repros (docs: /tmp/s18/attackV_findings.md). Not part of
# e2e_security (a subfolder is not run there). Each script exits non-zero
# while its hole exists. The node scripts resolve the SDKs from a
# node_modules next to them, so this copies the folder to a temporary one
# with a node_modules link to tests/peers/node_modules (never committed).
#   TOOLCACHE_BIN=build/apps/toolcache/toolcache tests/security/attackV/run.sh [script ...]
set -u
src=$(cd "$(dirname "$0")/../../.." && pwd)
export TOOLCACHE_SOURCE_DIR=$src
export TOOLCACHE_BIN=${TOOLCACHE_BIN:-/tmp/s18/atk_tc}
tmp=$(mktemp -d /tmp/attackV-run-XXXX)
trap 'rm -rf "$tmp"' EXIT
cp "$src"/tests/security/attackV/* "$tmp"/
ln -s "$src/tests/peers/node_modules" "$tmp/node_modules"
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(url_path_secret.mjs learn_poison.mjs llm_gateway_header.mjs llm_learn_race.mjs roots_serve.mjs roots_stdio.mjs pooled_numbers.sh "resume_lost.mjs --gap")
status=0
for c in "${cases[@]}"; do
  read -r f args <<<"$c"
  echo "== $c"
  if [[ $f == *.mjs ]]; then timeout 120 node "$tmp/$f" $args; else timeout 120 "$tmp/$f" $args; fi || status=1
done
exit $status
