// Invariants:
// - line_ holds only the bytes of the current, unterminated line; a
//   complete line never stays in it.
// - current_ holds the fields of the event being built; it is reset after
//   each dispatch (the last event id is kept, as the spec says).
// - Memory per parser is bounded by max_event_bytes_ (plus one line of the
//   same bound): past it the event is dropped, not buffered.
// - A line longer than max_event_bytes_ drops its event, whether it arrives
//   in one piece or in many: the rest of it is skipped up to its line end
//   (skipping_line_), never read as a line of its own, so what follows it
//   in the event cannot be dispatched as an event (found by fuzz/sse).
#include "src/http/sse.h"

#include <algorithm>
#include <cstring>

namespace toolcache::http {

void SseParser::Feed(std::string_view bytes, const Callback& on_event) {
  if (!started_ && !bytes.empty()) {
    // Wait for enough bytes to see a whole BOM.
    std::string_view bom = "\xEF\xBB\xBF";
    std::string probe = line_ + std::string(bytes.substr(0, 3));
    if (probe.size() < 3 && bom.substr(0, probe.size()) == probe) {
      line_ = probe;
      return;
    }
    started_ = true;
    if (probe.substr(0, 3) == bom) {
      const size_t from_line = std::min<size_t>(line_.size(), 3);
      line_.erase(0, from_line);
      bytes.remove_prefix(3 - from_line);
    }
  }
  size_t i = 0;
  if (skip_lf_ && !bytes.empty()) {
    if (bytes[0] == '\n') i = 1;
    skip_lf_ = false;
  }
  // The next LF and CR at or after i (nullptr: none left in `bytes`). Each
  // is searched for again only once i has passed it: a piece of many
  // LF-only lines is scanned once, not once per line for its absent CR
  // (which made a 200 KB piece 50 times slower to parse than 1 KiB ones).
  const auto next = [&](char c) -> const char* {
    if (i >= bytes.size()) return nullptr;
    return static_cast<const char*>(
        std::memchr(bytes.data() + i, c, bytes.size() - i));
  };
  const char* lf = next('\n');
  const char* cr = next('\r');
  while (i < bytes.size()) {
    const char* start = bytes.data() + i;
    const size_t left = bytes.size() - i;
    if (lf != nullptr && lf < start) lf = next('\n');
    if (cr != nullptr && cr < start) cr = next('\r');
    const char* end = nullptr;
    if (lf && cr) {
      end = std::min(lf, cr);
    } else {
      end = lf ? lf : cr;
    }
    if (end == nullptr) {
      if (skipping_line_) return;
      if (line_.size() + left <= max_event_bytes_) {
        line_.append(start, left);
      } else {
        OversizedLine();
        skipping_line_ = true;
      }
      return;
    }
    const size_t n = static_cast<size_t>(end - start);
    if (skipping_line_) {
      skipping_line_ = false;  // the over-long line ends here
    } else if (line_.size() + n > max_event_bytes_) {
      OversizedLine();
    } else if (line_.empty()) {
      Line(std::string_view(start, n), on_event);
    } else {
      line_.append(start, n);
      std::string line = std::move(line_);
      line_.clear();
      Line(line, on_event);
    }
    i += n + 1;
    if (*end == '\r') {
      if (i < bytes.size()) {
        if (bytes[i] == '\n') ++i;
      } else {
        skip_lf_ = true;
      }
    }
  }
}

void SseParser::OversizedLine() {
  oversized_ = true;
  has_fields_ = true;
  line_.clear();
  line_.shrink_to_fit();
  current_.data.clear();
}

void SseParser::Line(std::string_view line, const Callback& on_event) {
  if (line.empty()) {
    if (has_fields_) {
      if (oversized_) {
        ++dropped_;
      } else {
        ++events_;
        if (!current_.data.empty() && current_.data.back() == '\n') {
          current_.data.pop_back();
        }
        on_event(current_);
      }
    }
    // Cleared, not replaced: the strings keep their buffers, so a stream
    // of events allocates for its first event only (2 mallocs and frees
    // per event before). The id carries over (the last event ID).
    current_.event.clear();
    current_.data.clear();
    has_fields_ = false;
    oversized_ = false;
    return;
  }
  if (line[0] == ':') return;  // comment
  const size_t colon = line.find(':');
  std::string_view field = line.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  }
  has_fields_ = true;
  if (oversized_) return;
  if (field == "data") {
    if (current_.data.size() + value.size() + 1 > max_event_bytes_) {
      oversized_ = true;
      current_.data.clear();
      return;
    }
    current_.data.append(value);
    current_.data.push_back('\n');
  } else if (field == "event") {
    current_.event.assign(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) {
      current_.id = std::string(value);
    }
  }
  // "retry" and unknown fields are ignored.
}

}  // namespace toolcache::http
