// LineReader: splits a byte stream into newline-terminated lines with a size
// limit, for the stdio proxy's JSON-RPC framing.
//
// Lines are handed out without their '\n'. A line is over-long when it has
// more than `limit` bytes (not counting the '\n'), however the bytes arrive
// (one read or many). An over-long line is never buffered whole: its bytes
// go to on_long(part, end, total) in order as they arrive, with end = true
// exactly once, on its last piece (total = the line's size); the caller
// streams or discards them. At most `limit` bytes are ever buffered.
//
// Thread-safety: none. Ownership: callbacks' views are valid during the call.
//
// Example:
//   LineReader r(1 << 20);
//   r.Feed(chunk, [&](std::string_view line) { Handle(line); },
//          [&](std::string_view part, bool end, uint64_t total) {
//            Skip(part); if (end) TooLong(total); });
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

  // Feeds bytes; calls on_line(line) per complete line of at most `limit`
  // bytes and on_long(part, end, total) for the bytes of longer lines.
  template <typename OnLine, typename OnLong>
  void Feed(std::string_view bytes, OnLine on_line, OnLong on_long) {
    while (!bytes.empty()) {
      const size_t nl = bytes.find('\n');
      const std::string_view part =
          nl == std::string_view::npos ? bytes : bytes.substr(0, nl);
      const bool end = nl != std::string_view::npos;
      if (overflow_) {
        long_bytes_ += part.size();
        on_long(part, end, long_bytes_);
        if (end) overflow_ = false;
      } else if (buffer_.size() + part.size() > limit_) {
        // The line just became over-long: hand over what was buffered.
        overflow_ = !end;
        long_bytes_ = buffer_.size() + part.size();
        if (!buffer_.empty()) {
          on_long(std::string_view(buffer_), false, buffer_.size());
          buffer_.clear();
        }
        on_long(part, end, long_bytes_);
      } else if (!end) {
        buffer_.append(part);
      } else if (buffer_.empty()) {
        on_line(part);
      } else {
        buffer_.append(part);
        on_line(std::string_view(buffer_));
        buffer_.clear();
      }
      if (!end) return;
      bytes.remove_prefix(nl + 1);
    }
  }

  // End of input: a final line without '\n' still goes to on_line; an
  // over-long line cut off by the end goes to on_long("", true, total) with
  // truncated() true during the call.
  template <typename OnLine, typename OnLong>
  void Finish(OnLine on_line, OnLong on_long) {
    if (overflow_) {
      overflow_ = false;
      truncated_ = true;
      on_long(std::string_view(), true, long_bytes_);
      truncated_ = false;
    } else if (!buffer_.empty()) {
      std::string last = std::move(buffer_);
      buffer_.clear();
      on_line(std::string_view(last));
    }
  }

  // True while an over-long line's bytes are being handed out.
  bool in_long_line() const { return overflow_; }
  // True during Finish's on_long call for a line the input cut off.
  bool truncated() const { return truncated_; }

 private:
  uint64_t limit_;
  std::string buffer_;
  bool overflow_ = false;
  bool truncated_ = false;
  uint64_t long_bytes_ = 0;
};

}  // namespace toolcache::mcp

#endif  // TOOLCACHE_SRC_MCP_LINE_READER_H_
