// An incremental parser for Server-Sent Events (the WHATWG HTML "event
// stream" format), fed the bytes of a response body in any pieces.
//
// Lines end with CRLF, LF or CR (a CR at the end of one piece and an LF at
// the start of the next are one line end); "data" lines are joined with
// "\n"; a blank line dispatches the event; lines starting with ':' are
// comments; a leading UTF-8 BOM is skipped. An event is dispatched even when
// it has no data field (the provider streams always have one; consumers
// decide). An event larger than max_event_bytes, or with a line longer than
// that, is dropped and counted, however its bytes are split into pieces.
//
// Thread-safety: none (one parser per stream). Ownership: the event handed
// to the callback is valid during the callback only.
//
// Example:
//   SseParser p;
//   p.Feed("event: ping\ndata: {}\n\n", [](const SseEvent& e) { ... });
//   if (p.mid_event()) { /* the stream ended inside an event */ }
#ifndef TOOLCACHE_SRC_HTTP_SSE_H_
#define TOOLCACHE_SRC_HTTP_SSE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace toolcache::http {

struct SseEvent {
  std::string event;  // "" = the default "message"
  std::string data;
  std::string id;
};

class SseParser {
 public:
  // Choice: 16 MiB; a provider event carries one delta, far smaller.
  explicit SseParser(size_t max_event_bytes = 16u << 20)
      : max_event_bytes_(max_event_bytes) {}

  using Callback = std::function<void(const SseEvent&)>;
  void Feed(std::string_view bytes, const Callback& on_event);

  // True when bytes of an event (or a line) were fed but not dispatched:
  // a stream that ends now was truncated.
  bool mid_event() const { return !line_.empty() || has_fields_; }
  uint64_t events() const { return events_; }
  uint64_t dropped_events() const { return dropped_; }

 private:
  void Line(std::string_view line, const Callback& on_event);
  // A line longer than max_event_bytes_: its event is dropped.
  void OversizedLine();

  size_t max_event_bytes_;
  std::string line_;
  SseEvent current_;
  bool has_fields_ = false;
  bool oversized_ = false;
  bool skipping_line_ = false;  // inside an over-long line: skip to its end
  bool skip_lf_ = false;        // the last piece ended with CR
  bool started_ = false;        // BOM check done
  uint64_t events_ = 0;
  uint64_t dropped_ = 0;
};

}  // namespace toolcache::http

#endif  // TOOLCACHE_SRC_HTTP_SSE_H_
