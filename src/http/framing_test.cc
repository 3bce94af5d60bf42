// The framing rules (framing.h) on raw heads, one case per RFC 9112 rule,
// and the scanner's resumption over a head that arrives in pieces.
#include "src/http/framing.h"

#include <gtest/gtest.h>

#include <string>

namespace toolcache::http {
namespace {

FramingVerdict Verdict(std::string_view head) {
  return ScanRequestHead(head, 64 << 10).verdict;
}

TEST(HttpFraming, AcceptsOrdinaryHeads) {
  EXPECT_EQ(Verdict("GET / HTTP/1.1\r\nHost: h\r\n\r\n"), FramingVerdict::kOk);
  EXPECT_EQ(Verdict("POST /v1/messages HTTP/1.1\r\nHost: h\r\n"
                    "Content-Length: 12\r\n\r\n"),
            FramingVerdict::kOk);
  EXPECT_EQ(Verdict("POST / HTTP/1.1\r\nHost: h\r\n"
                    "Transfer-Encoding: Chunked\r\n\r\n"),
            FramingVerdict::kOk);
  // Empty list elements are ignored (RFC 9110 section 5.6.1).
  EXPECT_EQ(Verdict("POST / HTTP/1.1\r\nTransfer-Encoding: , chunked\r\n\r\n"),
            FramingVerdict::kOk);
  EXPECT_EQ(Verdict("GET / HTTP/1.0\r\nContent-Length: 0\r\n\r\n"),
            FramingVerdict::kOk);
}

TEST(HttpFraming, SkipsEmptyLinesBeforeTheRequestLine) {
  const std::string head = "\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\nrest";
  HeadScan s = ScanRequestHead(head, 1024);
  EXPECT_EQ(s.verdict, FramingVerdict::kOk);
  EXPECT_EQ(s.head_begin, 4u);
  EXPECT_EQ(head.substr(s.head_end), "rest");
}

TEST(HttpFraming, RefusesTransferEncodingsWhoseFinalCodingIsNotChunked) {
  EXPECT_EQ(Verdict("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n"),
            FramingVerdict::kChunkedNotFinal);
  EXPECT_EQ(Verdict("POST / HTTP/1.1\r\n"
                    "Transfer-Encoding: chunked, identity\r\n\r\n"),
            FramingVerdict::kChunkedNotFinal);
  EXPECT_EQ(Verdict("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
                    "Transfer-Encoding: identity\r\n\r\n"),
            FramingVerdict::kChunkedNotFinal);
  EXPECT_EQ(Verdict("POST / HTTP/1.1\r\nTransfer-Encoding:\r\n\r\n"),
            FramingVerdict::kChunkedNotFinal);
  EXPECT_EQ(
      Verdict("POST / HTTP/1.1\r\nTransfer-Encoding: chunked;x=1\r\n\r\n"),
      FramingVerdict::kChunkedNotFinal);
  EXPECT_EQ(Verdict("POST / HTTP/1.1\r\n"
                    "Transfer-Encoding: chunked, chunked\r\n\r\n"),
            FramingVerdict::kChunkedTwice);
  EXPECT_EQ(Verdict("POST / HTTP/1.1\r\n"
                    "Transfer-Encoding: gzip, chunked\r\n\r\n"),
            FramingVerdict::kUnsupportedTransferCoding);
  EXPECT_EQ(FramingStatus(FramingVerdict::kUnsupportedTransferCoding), 501);
  EXPECT_EQ(FramingStatus(FramingVerdict::kChunkedNotFinal), 400);
}

TEST(HttpFraming, RefusesTransferEncodingWithContentLengthOrInHttp10) {
  EXPECT_EQ(Verdict("POST / HTTP/1.1\r\nContent-Length: 5\r\n"
                    "Transfer-Encoding: chunked\r\n\r\n"),
            FramingVerdict::kTransferEncodingWithContentLength);
  EXPECT_EQ(Verdict("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
                    "Content-Length: 5\r\n\r\n"),
            FramingVerdict::kTransferEncodingWithContentLength);
  EXPECT_EQ(Verdict("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"),
            FramingVerdict::kTransferEncodingInHttp10);
}

TEST(HttpFraming, RefusesSeveralOrMalformedContentLengths) {
  EXPECT_EQ(Verdict("POST / HTTP/1.1\r\nContent-Length: 5\r\n"
                    "Content-Length: 5\r\n\r\n"),
            FramingVerdict::kSeveralContentLengths);
  EXPECT_EQ(Verdict("POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n"),
            FramingVerdict::kSeveralContentLengths);
  for (const char* v :
       {"+5", "-1", "0x10", "5 5", "", "1e3", "99999999999999999999"}) {
    EXPECT_EQ(Verdict(std::string("POST / HTTP/1.1\r\nContent-Length: ") + v +
                      "\r\n\r\n"),
              FramingVerdict::kBadContentLength)
        << v;
  }
}

TEST(HttpFraming, RefusesFoldingWhitespaceBeforeColonAndBareTerminators) {
  EXPECT_EQ(Verdict("POST / HTTP/1.1\r\nX-A: 1\r\n"
                    " Transfer-Encoding: chunked\r\n\r\n"),
            FramingVerdict::kObsoleteLineFolding);
  EXPECT_EQ(Verdict("POST / HTTP/1.1\r\nTransfer-Encoding : chunked\r\n\r\n"),
            FramingVerdict::kWhitespaceBeforeColon);
  EXPECT_EQ(Verdict("GET / HTTP/1.1\nHost: h\n\n"),
            FramingVerdict::kBareLineTerminator);
  EXPECT_EQ(Verdict("GET / HTTP/1.1\r\nHost: h\rX: y\r\n\r\n"),
            FramingVerdict::kBareLineTerminator);
  EXPECT_EQ(Verdict("GET / HTTP/1.1\r\nNoColon\r\n\r\n"),
            FramingVerdict::kMalformedFieldLine);
  EXPECT_EQ(Verdict("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"),
            FramingVerdict::kSeveralHosts);
}

TEST(HttpFraming, ResumesAcrossPiecesAndBoundsTheHead) {
  const std::string head =
      "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\nbody";
  HeadScanner scanner(1024);
  for (size_t n = 0; n + 4 < head.size(); ++n) {
    ASSERT_EQ(scanner.Scan(std::string_view(head).substr(0, n)).verdict,
              FramingVerdict::kIncomplete)
        << n;
  }
  EXPECT_EQ(scanner.Scan(head).verdict, FramingVerdict::kChunkedNotFinal);
  EXPECT_EQ(ScanRequestHead("GET / HTTP/1.1\r\nX: " + std::string(100, 'a'), 64)
                .verdict,
            FramingVerdict::kHeadTooLarge);
}

}  // namespace
}  // namespace toolcache::http
