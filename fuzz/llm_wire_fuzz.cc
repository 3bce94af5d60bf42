// Fuzz target: the LLM proxy's readers (src/llm/wire.cc) and the observer
// they feed.
//
// Input: a byte choosing the API (Anthropic Messages, Chat Completions,
// Responses), then '\xff'-separated parts, read in turn as a request body,
// a whole response body, an SSE response stream and the sizes to cut that
// stream into (repeating for more turns). Every request is parsed
// (ParseRequest), every response read whole (ParseResponse) and as a
// stream (SseParser -> StreamReader), and all of it observed by one
// Observer over a real ToolCache, as the proxy does.
// Invariants: no crash, no sanitizer report; every span of a parsed request
// lies inside the body and indexes the right things (message and turn
// indexes in range); NormalizedResult of every tool result is one JSON
// object (nlohmann accepts it); every
// failure the stream reports has a reason. Every parsed request is also
// offloaded (Offloader::Rewrite, threshold 8 tokens so that fuzzed results
// reach it, a memory store per input): a rewrite of valid JSON is valid
// JSON that reads back with the same messages and tool results (and one
// tool more when the retrieval tool was added), and rewriting the same
// request again gives the same bytes (the prompt-cache safety of the
// memoised previews).
#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_input.h"
#include "src/http/sse.h"
#include "src/llm/observer.h"
#include "src/llm/offload.h"
#include "src/llm/wire.h"
#include "toolcache/clock.h"
#include "toolcache/config.h"
#include "toolcache/store.h"
#include "toolcache/tool_cache.h"

namespace {

using toolcache::llm::Api;
using toolcache::llm::Span;

void CheckSpan(const Span& s, size_t size) {
  FUZZ_CHECK(s.begin <= size && s.end <= size, "span outside the body");
}

void CheckRequest(const toolcache::llm::ParsedRequest& r,
                  const std::string& body) {
  const size_t n = body.size();
  for (const Span& s : {r.model_span, r.system, r.tools, r.tool_choice,
                        r.thinking, r.messages}) {
    CheckSpan(s, n);
  }
  for (const auto& t : r.tool_defs) {
    CheckSpan(t.span, n);
    CheckSpan(t.description, n);
    CheckSpan(t.schema, n);
  }
  for (const auto& m : r.message_list) {
    CheckSpan(m.span, n);
    CheckSpan(m.content, n);
  }
  const size_t messages = r.message_list.size();
  FUZZ_CHECK(r.turn_begin <= messages, "turn_begin past the messages");
  for (const auto& u : r.tool_uses) {
    CheckSpan(u.span, n);
    FUZZ_CHECK(u.message < messages, "tool use in no message");
  }
  for (const auto& t : r.tool_results) {
    CheckSpan(t.span, n);
    CheckSpan(t.content, n);
    FUZZ_CHECK(t.message < messages, "tool result in no message");
    const std::string normalized = toolcache::llm::NormalizedResult(body, t);
    const nlohmann::json j = nlohmann::json::parse(normalized, nullptr, false);
    FUZZ_CHECK(!j.is_discarded() && j.is_object(),
               "NormalizedResult is not a JSON object");
  }
}

void CheckOffload(const toolcache::llm::ParsedRequest& r,
                  const std::string& body, toolcache::llm::Offloader* off) {
  toolcache::llm::OffloadReport report;
  const std::string out = off->Rewrite(r, body, "tenant", &report);
  toolcache::llm::OffloadReport again;
  FUZZ_CHECK(off->Rewrite(r, body, "tenant", &again) == out,
             "the same request offloaded twice gives other bytes");
  // simdjson On Demand does not validate what it skips: only a body that
  // is JSON throughout must stay JSON.
  if (out == body || !nlohmann::json::accept(body)) return;
  FUZZ_CHECK(nlohmann::json::accept(out), "offload made invalid JSON");
  auto read = toolcache::llm::ParseRequest(r.api, out);
  FUZZ_CHECK(read.ok(), "offload made an unreadable request");
  FUZZ_CHECK(read->message_list.size() == r.message_list.size() &&
                 read->tool_results.size() == r.tool_results.size() &&
                 read->tool_uses.size() == r.tool_uses.size(),
             "offload changed the messages or tool calls");
  FUZZ_CHECK(read->tool_defs.size() ==
                 r.tool_defs.size() + (report.tool_added ? 1 : 0),
             "offload changed the tool list other than adding its tool");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Logs cost most of the time and say nothing a failed check would not.
  static const bool quiet = [] {
    spdlog::set_level(spdlog::level::off);
    return true;
  }();
  (void)quiet;
  toolcache::fuzz::FuzzInput in(data, size);
  const Api api = static_cast<Api>(in.Byte() % 3);
  toolcache::ManualClock clock(1000);
  toolcache::Config config;
  auto cache = toolcache::NewToolCache(config, &clock);
  FUZZ_CHECK(cache.ok(), "default engine");
  toolcache::metrics::Registry registry;
  toolcache::llm::Observer observer(cache->get(), &clock, &registry, {});
  auto store = toolcache::OpenStore("memory");
  FUZZ_CHECK(store.ok(), "memory store");
  toolcache::llm::Offloader offloader(
      store->get(), {.threshold_tokens = 8, .head_bytes = 16, .tail_bytes = 8});
  while (!in.empty()) {
    const std::string body(in.Part());
    auto request = toolcache::llm::ParseRequest(api, body);
    if (request.ok()) {
      CheckRequest(*request, body);
      CheckOffload(*request, body, &offloader);
      // The provider accepts every request here (a 2xx head).
      observer.OnAccepted(
          observer.OnRequest(*request, body, "tenant").to_remember);
    } else {
      FUZZ_CHECK(!request.status().message().empty(), "no message");
    }
    clock.Advance(0.5);

    const std::string_view whole = in.Part();
    auto response = toolcache::llm::ParseResponse(api, whole);
    if (response.ok()) {
      observer.OnResponse(api, response->tool_uses, "tenant");
    }

    const std::string_view stream = in.Part();
    const std::string_view sizes = in.Part();
    toolcache::llm::StreamReader reader(api);
    toolcache::http::SseParser sse;
    for (std::string_view piece : toolcache::fuzz::Chunks(stream, sizes)) {
      sse.Feed(piece, [&](const toolcache::http::SseEvent& e) {
        reader.OnEvent(e.event, e.data);
      });
    }
    if (reader.failed()) {
      FUZZ_CHECK(!reader.failure().empty(), "a failure without a reason");
    }
    observer.OnResponse(api, reader.tool_uses(), "tenant");
    clock.Advance(0.5);
  }
  return 0;
}
