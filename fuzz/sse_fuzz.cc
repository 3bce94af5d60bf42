// Fuzz target: the SSE parser (src/http/sse.cc) and the URL parser.
//
// Input: a byte of chunking mode, then '\xff'-separated parts: the stream,
// the chunk sizes, a URL. Invariants: the events, the dropped-event count
// and mid_event() do not depend on how the stream is cut into pieces (one
// piece, the fuzzed sizes, byte by byte), with the default event limit and
// with a 64-byte one; ParseUrl never crashes and an accepted URL has a host
// and a port.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_input.h"
#include "src/http/http.h"
#include "src/http/sse.h"

namespace {

using toolcache::http::SseEvent;
using toolcache::http::SseParser;

struct Run {
  std::vector<std::string> events;  // event '\0' data '\0' id
  uint64_t dropped = 0;
  uint64_t counted = 0;
  bool mid_event = false;
  bool operator==(const Run&) const = default;
};

// Feeds `pieces` (bytewise: every byte of pieces[0] on its own).
Run Parse(const std::vector<std::string_view>& pieces, size_t limit,
          bool bytewise = false) {
  SseParser parser(limit);
  Run run;
  // One callback for every Feed (not a std::function built per byte).
  const SseParser::Callback on_event = [&](const SseEvent& e) {
    run.events.push_back(e.event + '\0' + e.data + '\0' + e.id);
  };
  if (bytewise) {
    for (size_t i = 0; i < pieces[0].size(); ++i) {
      parser.Feed(pieces[0].substr(i, 1), on_event);
    }
  } else {
    for (std::string_view piece : pieces) parser.Feed(piece, on_event);
  }
  run.dropped = parser.dropped_events();
  run.counted = parser.events();
  run.mid_event = parser.mid_event();
  return run;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  toolcache::fuzz::FuzzInput in(data, size);
  const std::string_view stream = in.Part();
  const std::string_view sizes = in.Part();
  const std::string_view url = in.Part();
  for (size_t limit : {size_t{16} << 20, size_t{64}}) {
    const Run whole = Parse({stream}, limit);
    FUZZ_CHECK(Parse(toolcache::fuzz::Chunks(stream, sizes), limit) == whole,
               "SSE events depend on how the stream is chunked");
    FUZZ_CHECK(Parse({stream}, limit, /*bytewise=*/true) == whole,
               "SSE events differ when fed byte by byte");
  }
  auto parsed = toolcache::http::ParseUrl(url);
  if (parsed.ok()) {
    FUZZ_CHECK(!parsed->host.empty(), "an accepted URL without a host");
  }
  return 0;
}
