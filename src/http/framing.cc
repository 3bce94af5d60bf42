// Invariants:
// - pos_ is the start of a line not yet scanned; every byte before it
//   belongs to a line that ended in CRLF and was checked once.
// - A verdict other than kIncomplete is final: later calls return it.
// - Only the head is read; the body (Content-Length bytes or chunks) is
//   the parser's, whose chunk-size, chunk-extension and length checks
//   (Beast) answer 400 / 413 the same way.
// Choice: every rule that the RFC leaves as "MAY accept" (a bare LF,
// identical duplicate Content-Lengths, obs-fold replaced by SP) is refused:
// a strict hop in front of a lenient one (or the other way round) is what
// splits one byte stream into two different request sequences.
#include "src/http/framing.h"

#include <cstdint>

#include "src/http/http.h"

namespace toolcache::http {
namespace {

bool IsOws(char c) { return c == ' ' || c == '\t'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsOws(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsOws(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

int FramingStatus(FramingVerdict v) {
  switch (v) {
    case FramingVerdict::kOk:
    case FramingVerdict::kIncomplete:
      return 0;
    case FramingVerdict::kHeadTooLarge:
      return 431;
    case FramingVerdict::kUnsupportedTransferCoding:
      return 501;
    default:
      return 400;
  }
}

std::string_view FramingReason(FramingVerdict v) {
  switch (v) {
    case FramingVerdict::kOk:
      return "ok";
    case FramingVerdict::kIncomplete:
      return "incomplete request head";
    case FramingVerdict::kHeadTooLarge:
      return "request header section larger than the limit";
    case FramingVerdict::kBareLineTerminator:
      return "a line of the request head does not end in CRLF";
    case FramingVerdict::kObsoleteLineFolding:
      return "obsolete line folding is not accepted (RFC 9112 section 5.2)";
    case FramingVerdict::kWhitespaceBeforeColon:
      return "whitespace between a field name and its colon (RFC 9112 "
             "section 5.1)";
    case FramingVerdict::kMalformedFieldLine:
      return "malformed header field line";
    case FramingVerdict::kTransferEncodingInHttp10:
      return "Transfer-Encoding in an HTTP/1.0 request (RFC 9112 section 6.1)";
    case FramingVerdict::kTransferEncodingWithContentLength:
      return "both Transfer-Encoding and Content-Length (RFC 9112 section "
             "6.3)";
    case FramingVerdict::kChunkedNotFinal:
      return "Transfer-Encoding whose final coding is not chunked (RFC 9112 "
             "section 6.3)";
    case FramingVerdict::kChunkedTwice:
      return "chunked applied more than once (RFC 9112 section 6.1)";
    case FramingVerdict::kUnsupportedTransferCoding:
      return "transfer coding not implemented (only chunked is)";
    case FramingVerdict::kBadContentLength:
      return "invalid Content-Length (RFC 9112 section 6.3)";
    case FramingVerdict::kSeveralContentLengths:
      return "more than one Content-Length value (RFC 9112 section 6.3)";
    case FramingVerdict::kSeveralHosts:
      return "more than one Host field line (RFC 9112 section 3.2)";
  }
  return "malformed request";
}

FramingVerdict HeadScanner::Line(std::string_view line) {
  if (IsOws(line.front())) return FramingVerdict::kObsoleteLineFolding;
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    return FramingVerdict::kMalformedFieldLine;
  }
  std::string_view name = line.substr(0, colon);
  if (IsOws(name.back())) return FramingVerdict::kWhitespaceBeforeColon;
  std::string_view value = Trim(line.substr(colon + 1));
  if (EqualsIgnoreCase(name, "transfer-encoding")) {
    te_ = true;
    // A list of codings; empty elements are ignored (RFC 9110 5.6.1).
    while (!value.empty()) {
      const size_t comma = value.find(',');
      std::string_view item = Trim(value.substr(0, comma));
      value = comma == std::string_view::npos ? std::string_view()
                                              : value.substr(comma + 1);
      if (item.empty()) continue;
      if (EqualsIgnoreCase(item, "chunked")) {
        ++te_chunked_;
        te_last_chunked_ = true;
      } else {
        ++te_other_;  // gzip, identity, "chunked;x=1", ...
        te_last_chunked_ = false;
      }
    }
  } else if (EqualsIgnoreCase(name, "content-length")) {
    if (++content_lengths_ > 1) return FramingVerdict::kSeveralContentLengths;
    if (value.find(',') != std::string_view::npos) {
      return FramingVerdict::kSeveralContentLengths;
    }
    // 1*DIGIT, at most 19 digits (fits in 64 bits).
    if (value.empty() || value.size() > 19) {
      return FramingVerdict::kBadContentLength;
    }
    for (char c : value) {
      if (c < '0' || c > '9') return FramingVerdict::kBadContentLength;
    }
  } else if (EqualsIgnoreCase(name, "host")) {
    if (++hosts_ > 1) return FramingVerdict::kSeveralHosts;
  }
  return FramingVerdict::kOk;
}

FramingVerdict HeadScanner::End() const {
  if (!te_) return FramingVerdict::kOk;
  if (http10_) return FramingVerdict::kTransferEncodingInHttp10;
  if (content_lengths_ > 0) {
    return FramingVerdict::kTransferEncodingWithContentLength;
  }
  if (!te_last_chunked_) return FramingVerdict::kChunkedNotFinal;
  if (te_chunked_ > 1) return FramingVerdict::kChunkedTwice;
  if (te_other_ > 0) return FramingVerdict::kUnsupportedTransferCoding;
  return FramingVerdict::kOk;
}

HeadScan HeadScanner::Scan(std::string_view bytes) {
  if (result_.verdict != FramingVerdict::kIncomplete) return result_;
  auto done = [&](FramingVerdict v) {
    result_.verdict = v;
    return result_;
  };
  for (;;) {
    const size_t lf = bytes.find('\n', pos_);
    if (lf == std::string_view::npos || lf + 1 > max_) {
      const size_t have = lf == std::string_view::npos ? bytes.size() : lf;
      // A CR inside the partial line not followed by LF is already bad.
      const size_t cr = bytes.find('\r', pos_);
      if (cr != std::string_view::npos && cr + 1 < have) {
        return done(FramingVerdict::kBareLineTerminator);
      }
      if (have >= max_) return done(FramingVerdict::kHeadTooLarge);
      return result_;
    }
    if (lf == pos_ || bytes[lf - 1] != '\r') {
      return done(FramingVerdict::kBareLineTerminator);
    }
    std::string_view line = bytes.substr(pos_, lf - 1 - pos_);
    pos_ = lf + 1;
    if (line.find('\r') != std::string_view::npos) {
      return done(FramingVerdict::kBareLineTerminator);
    }
    if (!begun_) {
      if (line.empty()) {
        result_.head_begin = pos_;
        continue;
      }
      begun_ = true;
    }
    if (!request_line_) {
      request_line_ = true;
      const size_t sp = line.rfind(' ');
      http10_ = sp != std::string_view::npos &&
                line.substr(sp + 1) == std::string_view("HTTP/1.0");
      continue;
    }
    if (line.empty()) {
      result_.head_end = pos_;
      return done(End());
    }
    FramingVerdict v = Line(line);
    if (v != FramingVerdict::kOk) return done(v);
  }
}

HeadScan ScanRequestHead(std::string_view bytes, size_t max_head_bytes) {
  HeadScanner s(max_head_bytes);
  return s.Scan(bytes);
}

}  // namespace toolcache::http
