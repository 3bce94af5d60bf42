// LineReader: splits a byte stream into newline-terminated lines with a size
// limit, for the stdio proxy's JSON-RPC framing.
//
// Lines are handed out without their '\n'. A line longer than `limit` bytes
// is never buffered whole: its bytes are either streamed (on_stream) or
// discarded, and on_overflow(total_bytes) reports it once its end is seen.
//
// Thread-safety: none. Ownership: callbacks' views are valid during the call.
//
// Example:
//   LineReader r(1 << 20);
//   r.Feed(chunk, false, [&](std::string_view line) { Handle(line); },
//          [&](uint64_t n) { TooLong(n); }, [](std::string_view, bool) {});
#ifndef TOOLCACHE_SRC_MCP_LINE_READER_H_
#define TOOLCACHE_SRC_MCP_LINE_READER_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace toolcache::mcp {

// Splits a byte stream into lines with a size limit.
class LineReader {
 public:
  explicit LineReader(uint64_t limit) : limit_(limit) {}

  // Feeds bytes; calls on_line(line) per complete line, on_overflow(bytes)
  // once per over-long line (with its total size, after its end was seen),
  // and on_stream(chunk, end) for over-long line bytes when streaming.
  template <typename OnLine, typename OnOverflow, typename OnStream>
  void Feed(std::string_view bytes, bool stream_long_lines, OnLine on_line,
            OnOverflow on_overflow, OnStream on_stream) {
    while (!bytes.empty()) {
      if (overflow_) {
        size_t nl = bytes.find('\n');
        std::string_view part =
            nl == std::string_view::npos ? bytes : bytes.substr(0, nl);
        overflow_bytes_ += part.size();
        if (stream_long_lines) on_stream(part, nl != std::string_view::npos);
        if (nl == std::string_view::npos) return;
        on_overflow(overflow_bytes_);
        overflow_ = false;
        overflow_bytes_ = 0;
        bytes.remove_prefix(nl + 1);
        continue;
      }
      size_t nl = bytes.find('\n');
      if (nl == std::string_view::npos) {
        buffer_.append(bytes);
        if (buffer_.size() > limit_) {
          overflow_ = true;
          overflow_bytes_ = buffer_.size();
          if (stream_long_lines) on_stream(buffer_, false);
          buffer_.clear();
        }
        return;
      }
      if (buffer_.empty()) {
        on_line(bytes.substr(0, nl));
      } else {
        buffer_.append(bytes.substr(0, nl));
        on_line(std::string_view(buffer_));
        buffer_.clear();
      }
      bytes.remove_prefix(nl + 1);
    }
  }
  bool has_partial() const { return !buffer_.empty(); }
  std::string TakePartial() { return std::move(buffer_); }

 private:
  uint64_t limit_;
  std::string buffer_;
  bool overflow_ = false;
  uint64_t overflow_bytes_ = 0;
};

}  // namespace toolcache::mcp

#endif  // TOOLCACHE_SRC_MCP_LINE_READER_H_
