// Era detection and the 2026-07-28 envelope checks (era.h).
#include "src/mcp/era.h"

#include <gtest/gtest.h>

#include <string>

namespace toolcache::mcp {
namespace {

constexpr const char* kCaps =
    R"("io.modelcontextprotocol/clientCapabilities":{"roots":{},"elicitation":{}})";

std::string Params(const std::string& meta, const std::string& rest = "") {
  return "{" + rest + (rest.empty() ? "" : ",") + R"("_meta":{)" + meta + "}}";
}

TEST(EraTest, NoClaimWithoutTheProtocolVersionKey) {
  EXPECT_FALSE(ReadRequestEra("").claim);
  EXPECT_FALSE(ReadRequestEra(R"({"name":"x"})").claim);
  // Other reserved keys alone are no claim (the SDK's hasEnvelopeClaim).
  EXPECT_FALSE(ReadRequestEra(Params(kCaps)).claim);
  EXPECT_EQ(ReadRequestEra("").params_without_meta, "{}");
}

TEST(EraTest, AValidEnvelopeGivesKeyMaterialWithoutVolatileMembers) {
  const RequestEra a = ReadRequestEra(Params(
      std::string(
          R"("io.modelcontextprotocol/protocolVersion":"2026-07-28",)") +
          kCaps +
          R"(,"progressToken":7,"traceparent":"00-ab","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"})",
      R"("cursor":"p2")"));
  ASSERT_TRUE(a.claim);
  EXPECT_EQ(a.problem, "");
  EXPECT_EQ(a.protocol_version, "2026-07-28");
  EXPECT_EQ(
      a.key_material,
      R"({"clientCapabilities":{"elicitation":{},"roots":{}},"protocolVersion":"2026-07-28"})");
  EXPECT_EQ(a.params_without_meta, R"({"cursor":"p2"})");
  EXPECT_NE(a.envelope_members.find("clientInfo"), std::string::npos);
  EXPECT_EQ(a.envelope_members.find("progressToken"), std::string::npos);
  // Another progress token, the same key; other capabilities, another key.
  const RequestEra b = ReadRequestEra(Params(
      std::string(
          R"("progressToken":"x","io.modelcontextprotocol/protocolVersion":"2026-07-28",)") +
      R"("io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"roots":{}})"));
  EXPECT_EQ(b.key_material, a.key_material);
  const RequestEra c = ReadRequestEra(Params(
      R"("io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{})"));
  EXPECT_NE(c.key_material, a.key_material);
}

TEST(EraTest, EnvelopesTheServerRejectsNameTheirProblem) {
  const std::string v =
      R"("io.modelcontextprotocol/protocolVersion":"2026-07-28")";
  struct Case {
    std::string meta;
    std::string problem;
  } cases[] = {
      {v, "clientCapabilities is missing"},
      {v + R"(,"io.modelcontextprotocol/clientCapabilities":[])",
       "clientCapabilities is not an object"},
      {v + R"(,"io.modelcontextprotocol/clientCapabilities":{"roots":true})",
       "clientCapabilities.roots is not an object"},
      {R"("io.modelcontextprotocol/protocolVersion":7,)" + std::string(kCaps),
       "protocolVersion is not a string"},
      {R"("io.modelcontextprotocol/protocolVersion":"2027-01-01",)" +
           std::string(kCaps),
       "unsupported protocol version \"2027-01-01\""},
      {v + "," + kCaps + R"(,"io.modelcontextprotocol/clientInfo":{"name":1})",
       "clientInfo is not an implementation {name, version}"},
      {v + "," + kCaps + R"(,"io.modelcontextprotocol/logLevel":"loud")",
       "logLevel is not a logging level"},
      {v + "," + kCaps + R"(,"progressToken":{})",
       "progressToken is not a string or number"},
  };
  for (const Case& c : cases) {
    const RequestEra e = ReadRequestEra(Params(c.meta));
    EXPECT_TRUE(e.claim) << c.meta;
    EXPECT_EQ(e.problem, c.problem) << c.meta;
    EXPECT_EQ(e.key_material, "") << c.meta;
  }
}

TEST(EraTest, RetriesAreSeenButRequestStateIsNeverRead) {
  const RequestEra e = ReadRequestEra(
      R"({"name":"t","requestState":"{\"uri\":\"secret\"}","inputResponses":{"a":{}}})");
  EXPECT_TRUE(e.retry);
  EXPECT_EQ(e.params_without_meta, R"({"name":"t"})");
  EXPECT_TRUE(ReadRequestEra(R"({"requestState":"s"})").retry);
}

TEST(EraTest, CacheHintsNeedACompleteResultAPositiveTtlAndAScope) {
  CacheHints h = ReadCacheHints(
      R"({"tools":[],"resultType":"complete","ttlMs":60000,"cacheScope":"public"})");
  EXPECT_TRUE(h.cacheable());
  EXPECT_DOUBLE_EQ(h.ttl_seconds, 60);
  EXPECT_TRUE(h.shared);
  h = ReadCacheHints(
      R"({"resultType":"complete","ttlMs":60000,"cacheScope":"private"})");
  EXPECT_TRUE(h.cacheable());
  EXPECT_FALSE(h.shared);
  EXPECT_FALSE(
      ReadCacheHints(
          R"({"resultType":"complete","ttlMs":0,"cacheScope":"public"})")
          .cacheable());
  EXPECT_FALSE(
      ReadCacheHints(
          R"({"resultType":"complete","ttlMs":-5,"cacheScope":"public"})")
          .cacheable());
  EXPECT_FALSE(
      ReadCacheHints(
          R"({"resultType":"complete","ttlMs":1.5,"cacheScope":"public"})")
          .cacheable());
  EXPECT_FALSE(
      ReadCacheHints(
          R"({"resultType":"complete","ttlMs":1000,"cacheScope":"everyone"})")
          .cacheable());
  EXPECT_FALSE(
      ReadCacheHints(R"({"ttlMs":1000,"cacheScope":"public"})").cacheable());
  EXPECT_FALSE(
      ReadCacheHints(
          R"({"resultType":"input_required","ttlMs":1000,"cacheScope":"public","requestState":"x"})")
          .cacheable());
}

// Lone surrogate escapes pass the scanner (RFC 8259 allows them) but are
// not UTF-8: reading them must neither throw nor accept the envelope.
TEST(EraTest, LoneSurrogatesNeitherThrowNorPass) {
  const RequestEra e = ReadRequestEra(
      R"({"\ud800":1,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
      R"("io.modelcontextprotocol/clientCapabilities":{"x\ud800":{}}}})");
  EXPECT_TRUE(e.claim);
  EXPECT_NE(e.problem, "");
  EXPECT_EQ(e.key_material, "");
  // Only a param name has one: the envelope is fine, the name is kept in a
  // form that is valid JSON (no exception from the re-encoding).
  const RequestEra f = ReadRequestEra(
      R"({"\ud800x":1,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
      R"("io.modelcontextprotocol/clientCapabilities":{}}})");
  EXPECT_EQ(f.problem, "");
  EXPECT_FALSE(f.params_without_meta.empty());
}

TEST(EraTest, ModernRevisionsCompareAsDates) {
  EXPECT_TRUE(IsModernProtocolVersion("2026-07-28"));
  EXPECT_TRUE(IsModernProtocolVersion("2027-01-01"));
  EXPECT_FALSE(IsModernProtocolVersion("2025-11-25"));
  // Only a date compares as a revision (review: "draft" sorts after it).
  for (const char* v : {"draft", "latest", "9", "v1", "2026-07-28x",
                        "2026-7-28", "2026-07-2a", ""}) {
    EXPECT_FALSE(IsModernProtocolVersion(v)) << v;
  }
  EXPECT_TRUE(IsCacheableResultMethod("resources/read"));
  EXPECT_FALSE(IsCacheableResultMethod("tools/call"));
  EXPECT_FALSE(IsCacheableResultMethod("prompts/get"));
}

}  // namespace
}  // namespace toolcache::mcp
