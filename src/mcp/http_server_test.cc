// The MCP endpoint's pure pieces: splitting a POST body into messages,
// choosing the response type from Accept, protocol versions, SSE framing.
// The endpoint itself (sessions, child processes, the SDK client) is
// covered end to end by tests/e2e_mcp_http_serve.sh.
#include "src/mcp/http_server.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace toolcache::mcp_http {
namespace {

TEST(SplitPostBodyTest, OneObjectIsOneMessageKeptByteForByte) {
  const std::string body =
      " {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
  SplitBody s = SplitPostBody(body, false);
  ASSERT_EQ(s.error_code, 0) << s.error;
  EXPECT_FALSE(s.batch);
  ASSERT_EQ(s.messages.size(), 1u);
  EXPECT_EQ(s.messages[0], body);
}

TEST(SplitPostBodyTest, MalformedJsonIsAParseError) {
  for (std::string_view bad : {"", "{", "{\"a\":}", "[1,", "nul", "{} {}"}) {
    SplitBody s = SplitPostBody(bad, true);
    EXPECT_EQ(s.error_code, -32700) << bad;
    EXPECT_FALSE(s.error.empty());
  }
}

TEST(SplitPostBodyTest, ScalarsAreInvalidRequests) {
  for (std::string_view bad : {"7", "\"x\"", "null", "true"}) {
    EXPECT_EQ(SplitPostBody(bad, true).error_code, -32600) << bad;
  }
}

TEST(SplitPostBodyTest, BatchSplitsAtTopLevelCommasOnly) {
  const std::string body =
      "[ {\"id\":1,\"method\":\"a\",\"params\":{\"x\":[1,2],\"s\":\"],{\\\"\"}}"
      " ,\n{\"method\":\"n\"} ]";
  SplitBody s = SplitPostBody(body, true);
  ASSERT_EQ(s.error_code, 0) << s.error;
  EXPECT_TRUE(s.batch);
  ASSERT_EQ(s.messages.size(), 2u);
  EXPECT_EQ(
      s.messages[0],
      "{\"id\":1,\"method\":\"a\",\"params\":{\"x\":[1,2],\"s\":\"],{\\\"\"}}");
  EXPECT_EQ(s.messages[1], "{\"method\":\"n\"}");
}

TEST(SplitPostBodyTest, BatchesAreRefusedWhenTheRevisionHasNone) {
  SplitBody s = SplitPostBody("[{\"id\":1,\"method\":\"ping\"}]", false);
  EXPECT_EQ(s.error_code, -32600);
  EXPECT_NE(s.error.find("2025-06-18"), std::string::npos);
}

TEST(SplitPostBodyTest, EmptyBatchesAndNonObjectElementsAreInvalid) {
  EXPECT_EQ(SplitPostBody("[]", true).error_code, -32600);
  EXPECT_EQ(SplitPostBody(" [ ] ", true).error_code, -32600);
  EXPECT_EQ(SplitPostBody("[{\"method\":\"a\"}, 3]", true).error_code, -32600);
  EXPECT_EQ(SplitPostBody("[[{\"method\":\"a\"}]]", true).error_code, -32600);
}

TEST(ChooseResponseTest, EventStreamWhenListedElseJson) {
  EXPECT_EQ(ChooseResponse("application/json, text/event-stream"),
            McpAccept::kSse);
  EXPECT_EQ(ChooseResponse("text/event-stream"), McpAccept::kSse);
  EXPECT_EQ(ChooseResponse("application/json"), McpAccept::kJson);
  EXPECT_EQ(ChooseResponse("*/*"), McpAccept::kJson);
  EXPECT_EQ(ChooseResponse(""), McpAccept::kJson);
  EXPECT_EQ(ChooseResponse("text/html"), McpAccept::kNone);
}

TEST(ProtocolVersionTest, KnowsThePublishedRevisionsOnly) {
  for (std::string_view v :
       {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}) {
    EXPECT_TRUE(IsKnownProtocolVersion(v)) << v;
  }
  EXPECT_TRUE(IsModernProtocolVersion("2026-07-28"));
  EXPECT_FALSE(IsModernProtocolVersion("2025-11-25"));
  for (std::string_view v : {"", "2025-06-19", "1999-01-01", "2025-06-18 "}) {
    EXPECT_FALSE(IsKnownProtocolVersion(v)) << v;
  }
}

// A modern tools/call as the 2.4.0 client sends it.
constexpr std::string_view kModernCall =
    R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo",)"
    R"("arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":)"
    R"("2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})";

TEST(CheckEraTest, AModernRequestWithMatchingHeadersIsModern) {
  EraCheck e = CheckEra(kModernCall, "2026-07-28", "tools/call", "echo");
  EXPECT_EQ(e.status, 0) << e.message;
  EXPECT_TRUE(e.modern);
}

TEST(CheckEraTest, ALegacyRequestIsNotCheckedForModernHeaders) {
  EraCheck e = CheckEra(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}})",
      "2025-11-25", "", "");
  EXPECT_EQ(e.status, 0);
  EXPECT_FALSE(e.modern);
  e = CheckEra(R"({"jsonrpc":"2.0","id":1,"method":"initialize"})", "", "", "");
  EXPECT_EQ(e.status, 0);
  EXPECT_FALSE(e.modern);
}

TEST(CheckEraTest, HeaderBodyDisagreementsAre32020) {
  // Mcp-Method disagrees with the body method.
  EraCheck e = CheckEra(kModernCall, "2026-07-28", "tools/list", "echo");
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.code, -32020);
  EXPECT_NE(e.message.find("Mcp-Method"), std::string::npos) << e.message;
  // Mcp-Name disagrees with params.name.
  e = CheckEra(kModernCall, "2026-07-28", "tools/call", "other");
  EXPECT_EQ(e.code, -32020);
  // Missing Mcp-Method / Mcp-Name / protocol version header.
  EXPECT_EQ(CheckEra(kModernCall, "2026-07-28", "", "echo").code, -32020);
  EXPECT_EQ(CheckEra(kModernCall, "2026-07-28", "tools/call", "").code, -32020);
  EXPECT_EQ(CheckEra(kModernCall, "", "tools/call", "echo").code, -32020);
  // The header names another revision than the body.
  EXPECT_EQ(CheckEra(kModernCall, "2025-11-25", "tools/call", "echo").code,
            -32020);
}

TEST(CheckEraTest, AnUnknownRevisionInTheBodyIs32022WithTheSupportedOnes) {
  EraCheck e = CheckEra(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":)"
      R"({"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}})",
      "", "tools/list", "");
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.code, -32022);
  EXPECT_NE(e.data.find("\"2026-07-28\""), std::string::npos) << e.data;
  EXPECT_NE(e.data.find("\"requested\":\"2099-01-01\""), std::string::npos);
}

TEST(CheckEraTest, AModernHeaderOnARequestWithoutEnvelopeIs32602) {
  EraCheck e = CheckEra(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})",
                        "2026-07-28", "tools/list", "");
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.code, -32602);
  // A notification has no envelope: the header decides its era.
  e = CheckEra(R"({"jsonrpc":"2.0","method":"notifications/cancelled"})",
               "2026-07-28", "", "");
  EXPECT_EQ(e.status, 0);
  EXPECT_TRUE(e.modern);
}

// One definition with the SDK's meaning (isModernProtocolVersion: version >=
// "2026-07-28"): a later revision in the header is modern too, so a request
// without the envelope is refused as the SDK server refuses it
// (modern-header-without-claim, -32602), not passed to the 2025 path.
TEST(CheckEraTest, ALaterRevisionInTheHeaderIsModernToo) {
  EXPECT_TRUE(IsModernProtocolVersion("2027-01-01"));
  EraCheck e = CheckEra(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})",
                        "2027-01-01", "tools/list", "");
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.code, -32602);
  EXPECT_NE(e.message.find("params._meta"), std::string::npos) << e.message;
}

TEST(SseEventTest, OneMessageOneEvent) {
  EXPECT_EQ(SseEvent("{\"id\":1}"), "event: message\ndata: {\"id\":1}\n\n");
}

TEST(McpHttpTest, MatchesItsPathsOnly) {
  EXPECT_TRUE(McpHttp::Matches("/mcp"));
  EXPECT_TRUE(McpHttp::Matches("/mcp/fs"));
  EXPECT_FALSE(McpHttp::Matches("/mcpx"));
  EXPECT_FALSE(McpHttp::Matches("/v1/lookup"));
}

}  // namespace
}  // namespace toolcache::mcp_http
