// LineReader: splits a byte stream into newline-terminated lines with a size
// limit, for the stdio proxy's JSON-RPC framing.
//
// Lines are handed out without their '\n'. A line is over-long when it has
// more than `limit` bytes (not counting the '\n'), however the bytes arrive
// (one read or many). An over-long line is never buffered whole: its bytes
// go to on_long(part, end, total) in order as they arrive, with end = true
// exactly once, on its last piece (total = the line's size); the caller
// streams or discards them. At most `limit` bytes are ever buffered, in a
// ByteBuffer (grown without a second copy); a line handed out of that buffer
// can be taken over by the caller (TakeLine) instead of being copied, and a
// block larger than 1 MiB is not kept once its line is done.
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
#include <utility>

#include "src/mcp/byte_buffer.h"

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
          on_long(buffer_.view(), false, buffer_.size());
          buffer_.Clear(kKeepBytes);
        }
        on_long(part, end, long_bytes_);
      } else if (!end) {
        buffer_.Append(part);
      } else if (buffer_.empty()) {
        on_line(part);
      } else {
        buffer_.Append(part);
        on_line(buffer_.view());
        buffer_.Clear(kKeepBytes);
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
      on_line(buffer_.view());
      buffer_.Clear(kKeepBytes);
    }
  }

  // When `line` (as just passed to on_line) is the whole content of the
  // reader's buffer, moves that buffer out to the caller, who then owns the
  // line's bytes (still at the same address); the reader starts its next
  // line in a new buffer. Otherwise (the line lies in the caller's chunk)
  // returns an empty buffer. Call only from inside on_line.
  ByteBuffer TakeLine(std::string_view line) {
    if (line.empty() || line.data() != buffer_.view().data() ||
        line.size() != buffer_.size()) {
      return ByteBuffer();
    }
    return std::exchange(buffer_, ByteBuffer());
  }

  // True while an over-long line's bytes are being handed out.
  bool in_long_line() const { return overflow_; }
  // True during Finish's on_long call for a line the input cut off.
  bool truncated() const { return truncated_; }

 private:
  // Choice: a buffer up to 1 MiB is kept for the next line; a larger one
  // (a rare big message) is freed, so it does not stay resident.
  static constexpr size_t kKeepBytes = size_t{1} << 20;
  uint64_t limit_;
  ByteBuffer buffer_;
  bool overflow_ = false;
  bool truncated_ = false;
  uint64_t long_bytes_ = 0;
};

}  // namespace toolcache::mcp

#endif  // TOOLCACHE_SRC_MCP_LINE_READER_H_
