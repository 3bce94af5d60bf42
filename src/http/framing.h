// The framing decision for one HTTP/1.1 request head, made on the raw bytes
// before any parser sees them: where the head ends, and whether its body
// length can be determined without ambiguity (RFC 9112 section 6.3). A
// request whose framing two parsers could read differently (request
// smuggling) is refused with 400 (or 501 for a transfer coding the server
// does not implement) and its connection closes; nothing after it on that
// connection is read as a request.
//
// The rules, each with the RFC 9112 text it implements:
//   - Transfer-Encoding whose final coding is not chunked (6.3 rule 4: "If
//     a Transfer-Encoding header field is present in a request and the
//     chunked transfer coding is not the final encoding, the message body
//     length cannot be determined reliably; the server MUST respond with
//     the 400 (Bad Request) status code and then close the connection.")
//   - chunked applied twice (6.1: "A sender MUST NOT apply the chunked
//     transfer coding more than once to a message body") -> 400.
//   - a coding other than chunked before it (6.1: "A server that receives
//     a request message with a transfer coding it does not understand
//     SHOULD respond with 501 (Not Implemented).") -> 501.
//   - Transfer-Encoding with Content-Length (6.3 rule 3: "might indicate an
//     attempt to perform request smuggling ... ought to be handled as an
//     error") -> 400, and Transfer-Encoding in an HTTP/1.0 request (6.1:
//     "MUST treat the message as if the framing is faulty") -> 400.
//   - several Content-Length field lines or a list value, or a value that
//     is not 1*DIGIT (6.3 rule 5: "invalid Content-Length ... the server
//     MUST respond with a 400 (Bad Request) status code and then close the
//     connection"; the MAY of merging identical values is not taken).
//   - obsolete line folding (5.2: "MUST either reject the message by
//     sending a 400 (Bad Request) ...") -> 400.
//   - whitespace between a field name and its colon (5.1: "A server MUST
//     reject, with a response status code of 400") -> 400.
//   - a bare LF or CR as a line terminator (2.2: "a recipient MAY recognize
//     a single LF"; not taken, a lenient and a strict hop would split
//     differently) -> 400.
//   - more than one Host field line (3.2: "MUST respond with a 400 ...
//     more than one Host header field line") -> 400.
// Empty lines before the request-line are skipped (2.2: "SHOULD ignore at
// least one empty line (CRLF) received prior to the request-line").
//
// Pure (no I/O, no allocation); thread-compatible. A HeadScanner resumes
// where its last call stopped, so a head that arrives a byte at a time is
// scanned once, not once per read.
//
// Example:
//   HeadScanner scanner(64 << 10);
//   HeadScan s = scanner.Scan(bytes);  // bytes: all of the request so far
//   if (s.verdict == FramingVerdict::kIncomplete) { read more; }
//   else if (s.verdict != FramingVerdict::kOk) { answer s.Status(); close; }
//   else { parse bytes.substr(s.head_begin, s.head_end - s.head_begin); }
#ifndef TOOLCACHE_SRC_HTTP_FRAMING_H_
#define TOOLCACHE_SRC_HTTP_FRAMING_H_

#include <cstddef>
#include <string_view>

namespace toolcache::http {

enum class FramingVerdict {
  kOk,
  kIncomplete,             // the empty line that ends the head has not come
  kHeadTooLarge,           // 431
  kBareLineTerminator,     // LF without CR, or CR without LF
  kObsoleteLineFolding,    // a field line starting with SP or HTAB
  kWhitespaceBeforeColon,  // "Name : value"
  kMalformedFieldLine,     // no colon, or an empty name
  kTransferEncodingInHttp10,
  kTransferEncodingWithContentLength,
  kChunkedNotFinal,  // the last coding is not chunked (or none)
  kChunkedTwice,
  kUnsupportedTransferCoding,  // 501: gzip, deflate, ... before chunked
  kBadContentLength,           // not 1*DIGIT, or too large for 64 bits
  kSeveralContentLengths,      // two field lines, or "5, 5"
  kSeveralHosts,
};

// The HTTP status a verdict is answered with (0 for kOk / kIncomplete).
int FramingStatus(FramingVerdict v);
// A short English reason, for the error body and logs.
std::string_view FramingReason(FramingVerdict v);

struct HeadScan {
  FramingVerdict verdict = FramingVerdict::kIncomplete;
  // Bytes of empty lines skipped before the request-line.
  size_t head_begin = 0;
  // One past the empty line that ends the head (kOk only).
  size_t head_end = 0;
};

// Scans what has arrived of one request head for its end and checks the
// framing rules above. kHeadTooLarge when no end is found within
// `max_head_bytes`.
class HeadScanner {
 public:
  explicit HeadScanner(size_t max_head_bytes) : max_(max_head_bytes) {}
  // `bytes` is the request from its first byte; between calls it only
  // grows at its end. Once the verdict is not kIncomplete it stays.
  HeadScan Scan(std::string_view bytes);

 private:
  FramingVerdict Line(std::string_view line);  // one field line, no CRLF
  FramingVerdict End() const;                  // after the empty line

  size_t max_;
  HeadScan result_;
  size_t pos_ = 0;      // the next line starts here
  bool begun_ = false;  // past the empty lines before the request-line
  bool request_line_ = false;
  bool http10_ = false;
  bool te_ = false;
  bool te_last_chunked_ = false;
  int te_chunked_ = 0;
  int te_other_ = 0;
  int content_lengths_ = 0;
  int hosts_ = 0;
};

// A HeadScanner's verdict on a whole buffer, for tests and one-shot use.
HeadScan ScanRequestHead(std::string_view bytes, size_t max_head_bytes);

}  // namespace toolcache::http

#endif  // TOOLCACHE_SRC_HTTP_FRAMING_H_
