#include "src/mcp/json_scan.h"

#include <gtest/gtest.h>

#include <string>

namespace toolcache::mcp {
namespace {

TEST(JsonScanTest, FindsRequestMembersAsExactSpans) {
  std::string line = R"({ "jsonrpc":"2.0", "id" : 7 , "method":"tools/call",)"
                     R"("params":{"name":"a","arguments":{"x":[1,2]}} })";
  Result<RawMessage> m = ScanMessage(line);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->kind(), MessageKind::kRequest);
  EXPECT_EQ(m->id, "7");
  EXPECT_EQ(m->method_name, "tools/call");
  EXPECT_EQ(m->params, R"({"name":"a","arguments":{"x":[1,2]}})");
}

TEST(JsonScanTest, ClassifiesNotificationsResponsesAndOthers) {
  EXPECT_EQ(
      ScanMessage(R"({"jsonrpc":"2.0","method":"notifications/x"})")->kind(),
      MessageKind::kNotification);
  EXPECT_EQ(ScanMessage(R"({"jsonrpc":"2.0","id":"a","result":{}})")->kind(),
            MessageKind::kResponse);
  EXPECT_EQ(
      ScanMessage(R"({"jsonrpc":"2.0","id":null,"error":{"code":1}})")->kind(),
      MessageKind::kResponse);
  EXPECT_EQ(ScanMessage(R"([{"jsonrpc":"2.0","method":"a"}])")->kind(),
            MessageKind::kOther);
  EXPECT_EQ(ScanMessage("42")->kind(), MessageKind::kOther);
  // A non-string method is not a request the proxy interprets.
  EXPECT_EQ(ScanMessage(R"({"id":1,"method":5})")->kind(), MessageKind::kOther);
}

TEST(JsonScanTest, DecodesEscapedMemberNames) {
  Result<RawMessage> m = ScanMessage(R"({"\u0069d":"x","meth\u006fd":"ping"})");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->id, R"("x")");
  EXPECT_EQ(m->method_name, "ping");
}

TEST(JsonScanTest, RejectsMalformedInputNamingTheByte) {
  for (const char* bad :
       {"", "{", "{\"a\":}", "{\"a\":1,}", "[1,]", "{\"a\" 1}", "tru",
        "\"unterminated", "{\"a\":01x}", "{} {}", "{\"a\":\"\\q\"}",
        "{\"a\":1.}", "{\"a\":-}", "this is { not json"}) {
    Result<RawMessage> m = ScanMessage(bad);
    ASSERT_FALSE(m.ok()) << bad;
    EXPECT_NE(m.status().message().find("byte "), std::string::npos) << bad;
  }
}

TEST(JsonScanTest, AcceptsEveryJsonValueShape) {
  for (const char* good :
       {"{}", "[]", " {\"a\":[true,false,null,-0.5e+3,\"\\u00e9\\n\"]} ",
        "\"s\"", "-1", "1E5", "{\"a\":{\"b\":{\"c\":[[]]}}}"}) {
    EXPECT_TRUE(ScanMessage(good).ok()) << good;
  }
}

TEST(JsonScanTest, RejectsRawControlCharactersInStrings) {
  EXPECT_FALSE(ScanMessage(std::string("{\"a\":\"x\ty\"}")).ok());
}

TEST(JsonScanTest, BoundsNestingDepth) {
  std::string deep(600, '[');
  deep += std::string(600, ']');
  Result<RawMessage> m = ScanMessage(deep);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("nesting too deep"), std::string::npos);
  std::string ok(100, '[');
  ok += std::string(100, ']');
  EXPECT_TRUE(ScanMessage(ok).ok());
}

TEST(JsonScanTest, ForEachMemberVisitsTopLevelOnly) {
  std::string obj = R"({"a": {"b":1,"c":[1,{"d":2}]} , "e":"x,}" ,"f":-1.5 })";
  std::vector<std::pair<std::string, std::string>> seen;
  EXPECT_TRUE(ForEachMember(obj, [&](const std::string& n, std::string_view v) {
    seen.emplace_back(n, std::string(v));
  }));
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].second, R"({"b":1,"c":[1,{"d":2}]})");
  EXPECT_EQ(seen[1].second, R"("x,}")");
  EXPECT_EQ(seen[2].second, "-1.5");
  EXPECT_EQ(FindMember(obj, "f"), "-1.5");
  EXPECT_EQ(FindMember(obj, "d"), "");
  EXPECT_FALSE(
      ForEachMember("[1]", [](const std::string&, std::string_view) {}));
}

TEST(JsonScanTest, NormalizedIdsMatchAcrossSpellings) {
  EXPECT_EQ(NormalizeId("1"), NormalizeId("1.0"));
  EXPECT_EQ(NormalizeId("1"), NormalizeId("1e0"));
  EXPECT_NE(NormalizeId("1"), NormalizeId("\"1\""));
  EXPECT_EQ(NormalizeId(R"("a")"), NormalizeId(R"("\u0061")"));
  EXPECT_NE(NormalizeId("1.5"), NormalizeId("1"));
}

TEST(JsonScanTest, DecodeStringHandlesEscapes) {
  EXPECT_EQ(DecodeString(R"("plain")"), "plain");
  EXPECT_EQ(DecodeString(R"("a\"b\u00e9")"), "a\"b\xc3\xa9");
  EXPECT_EQ(DecodeString("nope"), "");
}

}  // namespace
}  // namespace toolcache::mcp
