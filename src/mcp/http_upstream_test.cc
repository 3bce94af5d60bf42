#include "src/mcp/http_upstream.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace toolcache::mcp {
namespace {

const char* FakeEnv(const char* name) {
  if (std::strcmp(name, "TOKEN") == 0) return "s3cret";
  if (std::strcmp(name, "EMPTY") == 0) return "";
  return nullptr;
}

TEST(ParseHeaderArgTest, SplitsNameAndTrimmedValue) {
  Result<http::Header> h = ParseHeaderArg("Authorization:  Bearer x y ");
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(h->name, "Authorization");
  EXPECT_EQ(h->value, "Bearer x y");
  // Colons in the value stay.
  h = ParseHeaderArg("X-Url: http://a:1/");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->value, "http://a:1/");
}

TEST(ParseHeaderArgTest, RejectsMalformedHeadersWithoutQuotingTheValue) {
  Result<http::Header> h = ParseHeaderArg("Authorization Bearer s3cret");
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().message().find("s3cret"), std::string::npos);
  EXPECT_FALSE(ParseHeaderArg(": value").ok());
  EXPECT_FALSE(ParseHeaderArg("Bad Name: v").ok());
  h = ParseHeaderArg("X-A: s3cret\r\nX-Injected: 1");
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().message().find("s3cret"), std::string::npos);
  // Framing headers are the client's.
  EXPECT_FALSE(ParseHeaderArg("Content-Length: 5").ok());
  EXPECT_FALSE(ParseHeaderArg("Host: evil").ok());
}

TEST(ExpandEnvTest, ReplacesVariablesAndKeepsOtherDollars) {
  EXPECT_EQ(*ExpandEnv("Bearer ${TOKEN}", FakeEnv), "Bearer s3cret");
  EXPECT_EQ(*ExpandEnv("${TOKEN}${TOKEN}", FakeEnv), "s3crets3cret");
  EXPECT_EQ(*ExpandEnv("a$b $$ ${EMPTY}$", FakeEnv), "a$b $ $");
  EXPECT_EQ(*ExpandEnv("$${TOKEN}", FakeEnv), "${TOKEN}");
}

TEST(ExpandEnvTest, UnsetOrUnclosedVariableIsAnErrorNamingIt) {
  Result<std::string> r = ExpandEnv("Bearer ${MISSING_VAR}", FakeEnv);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("MISSING_VAR"), std::string::npos);
  EXPECT_FALSE(ExpandEnv("${TOKEN", FakeEnv).ok());
  EXPECT_FALSE(ExpandEnv("${}", FakeEnv).ok());
}

TEST(ParseMcpEndpointTest, KeepsPathAndQueryVerbatim) {
  Result<McpEndpoint> e = ParseMcpEndpoint("https://mcp.example.com/v1/mcp");
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_TRUE(e->origin.tls);
  EXPECT_EQ(e->origin.host, "mcp.example.com");
  EXPECT_EQ(e->origin.port, 443);
  EXPECT_EQ(e->origin.path_prefix, "");
  EXPECT_EQ(e->target, "/v1/mcp");
  e = ParseMcpEndpoint("http://127.0.0.1:3001/mcp?token=abc");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->origin.port, 3001);
  EXPECT_EQ(e->target, "/mcp?token=abc");
  // The query (which may hold a token) stays out of messages and logs.
  EXPECT_EQ(e->display, "http://127.0.0.1:3001/mcp");
  e = ParseMcpEndpoint("http://localhost:8080");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->target, "/");
}

// Session 18 (attackV finding 1): hosted servers put the account's secret
// in the path. It is sent as it is, but never shown: `display` is the
// identity without --name, logged and stored as every entry's server name.
TEST(ParseMcpEndpointTest, DisplayRedactsSecretsInThePath) {
  Result<McpEndpoint> e = ParseMcpEndpoint(
      "https://mcp.zapier.com/api/mcp/s/SECRET-ALICE-7f3a/mcp");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->target, "/api/mcp/s/SECRET-ALICE-7f3a/mcp");
  EXPECT_EQ(e->display, "https://mcp.zapier.com/api/mcp/s/<redacted>");
  e = ParseMcpEndpoint(
      "https://remote.mcp.pipedream.net/"
      "3c8e5f7a-1b2d-4e6f-8a9b-0c1d2e3f4a5b/gmail?x=1");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->display, "https://remote.mcp.pipedream.net/<redacted>/gmail");
  e = ParseMcpEndpoint("http://127.0.0.1:3001/v1/mcp");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->display, "http://127.0.0.1:3001/v1/mcp");
}

TEST(ParseMcpEndpointTest, RejectsWhatIsNotAnHttpUrl) {
  EXPECT_FALSE(ParseMcpEndpoint("localhost:3001/mcp").ok());
  EXPECT_FALSE(ParseMcpEndpoint("ftp://host/mcp").ok());
  EXPECT_FALSE(ParseMcpEndpoint("http:///mcp").ok());
  EXPECT_FALSE(ParseMcpEndpoint("http://host/mcp#frag").ok());
  EXPECT_FALSE(ParseMcpEndpoint("http://user:pw@host/mcp").ok());
}

struct Read {
  std::vector<std::string> messages;
  Status status;
};

// Feeds `body` in pieces of `piece` bytes.
Read ReadResponse(int status, http::Headers headers, std::string_view body,
                  size_t piece = 3, Status transport = Status::Ok()) {
  ResponseReader r;
  Read out;
  auto emit = [&](std::string_view m) { out.messages.emplace_back(m); };
  r.OnHead(status, headers);
  for (size_t i = 0; i < body.size(); i += piece) {
    r.OnData(body.substr(i, piece), emit);
  }
  out.status = r.OnEnd(transport, emit);
  return out;
}

TEST(ResponseReaderTest, JsonBodyIsOneMessageOnOneLine) {
  Read r =
      ReadResponse(200, {{"Content-Type", "application/json; charset=utf-8"}},
                   "{\"jsonrpc\":\"2.0\",\n  \"id\":1,\r\n \"result\":{}}\n");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0], R"({"jsonrpc":"2.0",  "id":1, "result":{}})");
}

TEST(ResponseReaderTest, BatchBodyIsSplitIntoMessages) {
  Read r = ReadResponse(200, {{"content-type", "application/json"}},
                        R"([{"jsonrpc":"2.0","id":1,"result":{}},
                            {"jsonrpc":"2.0","method":"n"}])");
  ASSERT_TRUE(r.status.ok());
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[1], R"({"jsonrpc":"2.0","method":"n"})");
}

TEST(ResponseReaderTest, SseStreamEmitsMessageEventsOnly) {
  std::string body =
      "id: 1\ndata: \n\n"  // the SDK's priming event: no message
      "event: message\nid: 2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n\n"
      ": comment\n\n"
      "event: other\ndata: {\"x\":1}\n\n"
      "data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1,\"result\":{}}\r\n\r\n";
  for (size_t piece : {1u, 7u, 1000u}) {
    Read r =
        ReadResponse(200, {{"Content-Type", "text/event-stream"}}, body, piece);
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    ASSERT_EQ(r.messages.size(), 2u) << piece;
    EXPECT_EQ(r.messages[0], R"({"jsonrpc":"2.0","method":"a"})");
    // Two data lines joined by "\n", which is whitespace: removed.
    EXPECT_EQ(r.messages[1], R"({"jsonrpc":"2.0","id":1,"result":{}})");
  }
}

TEST(ResponseReaderTest, AcceptedWithoutBodyIsFineAndEmitsNothing) {
  Read r = ReadResponse(202, {}, "");
  EXPECT_TRUE(r.status.ok());
  EXPECT_TRUE(r.messages.empty());
}

TEST(ResponseReaderTest, HttpErrorNamesStatusAndBodyAndEmitsNothing) {
  Read r = ReadResponse(
      500, {{"content-type", "application/json"}},
      R"({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}})");
  EXPECT_EQ(r.status.code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status.message().find("HTTP 500 Internal Server Error"),
            std::string::npos)
      << r.status.message();
  EXPECT_NE(r.status.message().find("boom"), std::string::npos);
  EXPECT_TRUE(r.messages.empty());
}

TEST(ResponseReaderTest, GarbageIsDataLoss) {
  Read r = ReadResponse(200, {{"content-type", "application/json"}},
                        "{\"jsonrpc\":\"2.0\",\"id\":1,");
  EXPECT_EQ(r.status.code(), StatusCode::kDataLoss);
  EXPECT_TRUE(r.messages.empty());
  r = ReadResponse(200, {{"content-type", "text/html"}}, "<html></html>");
  EXPECT_EQ(r.status.code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status.message().find("text/html"), std::string::npos);
  r = ReadResponse(200, {{"content-type", "application/json"}}, "[1,");
  EXPECT_EQ(r.status.code(), StatusCode::kDataLoss);
}

TEST(ResponseReaderTest, TruncatedStreamIsAnErrorAfterWhatArrived) {
  Read r = ReadResponse(200, {{"content-type", "text/event-stream"}},
                        "data: {\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n\n"
                        "data: {\"jsonrpc\"");
  EXPECT_FALSE(r.status.ok());
  EXPECT_EQ(r.messages.size(), 1u);
  r = ReadResponse(200, {{"content-type", "text/event-stream"}}, "", 3,
                   Unavailable("upstream closed the connection"));
  EXPECT_EQ(r.status.message(), "upstream closed the connection");
}

TEST(ResponseReaderTest, RemembersSessionIdAndLastEventId) {
  ResponseReader r;
  r.OnHead(200, {{"Mcp-Session-Id", "abc-123"},
                 {"content-type", "text/event-stream"}});
  EXPECT_EQ(r.session_id(), "abc-123");
  r.OnData("id: ev-9\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n\n",
           [](std::string_view) {});
  EXPECT_EQ(r.last_event_id(), "ev-9");
  EXPECT_EQ(r.messages(), 1u);
}

}  // namespace
}  // namespace toolcache::mcp

namespace toolcache::mcp {
namespace {

TEST(McpHeaderValue, PlainAsciiGoesAsIsAnythingElseAsBase64Sentinel) {
  EXPECT_EQ(EncodeMcpHeaderValue("read_text_file"), "read_text_file");
  EXPECT_EQ(EncodeMcpHeaderValue("file:///tmp/a b"), "file:///tmp/a b");
  // Non-ASCII, CR/LF, surrounding blanks and empty values are wrapped (the
  // SDK's needsBase64), so a header never carries a raw line break.
  EXPECT_EQ(EncodeMcpHeaderValue("h\xc3\xa9"), "=?base64?aMOp?=");
  EXPECT_EQ(EncodeMcpHeaderValue("a\r\nX: y"), "=?base64?YQ0KWDogeQ==?=");
  EXPECT_EQ(EncodeMcpHeaderValue(" x"), "=?base64?IHg=?=");
  EXPECT_EQ(EncodeMcpHeaderValue(""),
            "=?base64?"
            "?=");  // no trigraph
  for (std::string_view v : {"h\xc3\xa9", "a\r\nX: y", " x", "ab", "abc", ""}) {
    std::optional<std::string> back =
        DecodeMcpHeaderValue(EncodeMcpHeaderValue(v));
    ASSERT_TRUE(back.has_value()) << v;
    EXPECT_EQ(*back, v);
  }
  EXPECT_EQ(DecodeMcpHeaderValue("plain"), "plain");
  EXPECT_FALSE(DecodeMcpHeaderValue("=?base64?a*b=?=").has_value());
  EXPECT_FALSE(DecodeMcpHeaderValue("=?base64?abc?=").has_value());
}

TEST(ModernHeaders, OnlyAMessageClaimingTheStatelessRevision) {
  ModernHeaders h = ModernHeadersOf(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",)"
      R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})");
  EXPECT_TRUE(h.modern);
  EXPECT_EQ(h.version, "2026-07-28");
  EXPECT_EQ(h.method, "tools/call");
  EXPECT_EQ(h.name, "echo");
  h = ModernHeadersOf(
      R"({"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"a://b",)"
      R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})");
  EXPECT_EQ(h.name, "a://b");
  h = ModernHeadersOf(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{)"
      R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})");
  EXPECT_TRUE(h.modern);
  EXPECT_EQ(h.name, "");
  EXPECT_FALSE(ModernHeadersOf(
                   R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":)"
                   R"({"name":"echo"}})")
                   .modern);
  EXPECT_FALSE(ModernHeadersOf(
                   R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{)"
                   R"("_meta":{"io.modelcontextprotocol/protocolVersion":)"
                   R"("2025-11-25"}}})")
                   .modern);
  EXPECT_FALSE(ModernHeadersOf("not json").modern);
}

}  // namespace
}  // namespace toolcache::mcp
