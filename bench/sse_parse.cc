// SSE parsing throughput (src/http/sse.cc), what the LLM proxy and the
// MCP HTTP client pay for every byte of a streamed response.
//
// The stream is a provider-like one (about 200 KB: message_start, then
// text deltas of ~150 bytes each, LF line ends as Anthropic and OpenAI send
// them), fed in pieces of 1 KiB, 16 KiB, 64 KiB and whole: a socket read
// hands the parser whatever arrived. Baseline in the same run: counting the
// stream's lines with memchr (the cost of touching the bytes once).
//
//   bench_sse_parse --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

#include "src/http/sse.h"

namespace toolcache::http {
namespace {

std::string ProviderStream(size_t bytes) {
  std::string s =
      "event: message_start\ndata: {\"type\":\"message_start\",\"message\":"
      "{\"id\":\"msg_1\",\"role\":\"assistant\",\"content\":[]}}\n\n";
  for (int i = 0; s.size() < bytes; ++i) {
    s += "event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
         "\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"word ";
    s += std::to_string(i);
    s += " of the answer\"}}\n\n";
  }
  s += "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
  return s;
}

const std::string& Stream() {
  static const std::string s = ProviderStream(200 << 10);
  return s;
}

// Arg: piece size in bytes (0 = the whole stream in one piece).
void BM_SseParse(benchmark::State& state) {
  const std::string& s = Stream();
  const size_t piece = state.range(0) ? state.range(0) : s.size();
  size_t events = 0;
  const SseParser::Callback on_event = [&](const SseEvent&) { ++events; };
  for (auto _ : state) {
    SseParser parser;
    for (size_t at = 0; at < s.size(); at += piece) {
      parser.Feed(std::string_view(s).substr(at, piece), on_event);
    }
    benchmark::DoNotOptimize(events);
  }
  state.SetBytesProcessed(state.iterations() * s.size());
}

void BM_CountLinesBaseline(benchmark::State& state) {
  const std::string& s = Stream();
  for (auto _ : state) {
    size_t lines = 0;
    const char* p = s.data();
    const char* end = p + s.size();
    while (const void* lf = std::memchr(p, '\n', end - p)) {
      ++lines;
      p = static_cast<const char*>(lf) + 1;
    }
    benchmark::DoNotOptimize(lines);
  }
  state.SetBytesProcessed(state.iterations() * s.size());
}

BENCHMARK(BM_CountLinesBaseline);
BENCHMARK(BM_SseParse)->Arg(1 << 10)->Arg(16 << 10)->Arg(64 << 10)->Arg(0);

}  // namespace
}  // namespace toolcache::http

BENCHMARK_MAIN();
