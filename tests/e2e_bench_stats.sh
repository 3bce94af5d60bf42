#!/usr/bin/env bash
# The LLM proxy bench's added-latency statistic (bench/llm_latency_stats.mjs:
# quantile differences with bootstrap intervals) on synthetic samples with
# known answers.
set -euo pipefail
cd "${TOOLCACHE_SOURCE_DIR:-$(dirname "$0")/..}"
node bench/llm_latency_stats.mjs --self-test
