#include "src/mcp/json_scan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

// revU: the pooled /mcp/<name> path rewrites the id ScanMessage found; with
// two "id" members a child keeping the first answered under the client's
// own id, which another client's exchange could be waiting on.
TEST(JsonScanTest, RefusesATwiceGivenJsonRpcMember) {
  for (const char* line : {
           R"({"jsonrpc":"2.0","id":"tc-7","id":5,"method":"ping"})",
           R"({"jsonrpc":"2.0","id":1,"method":"a","method":"b"})",
           R"({"jsonrpc":"2.0","id":1,"method":"a","params":{},"params":[]})",
           R"({"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"result":{}})",
           R"({"jsonrpc":"2.0","id":1,"error":{},"\u0069d":2})",
       }) {
    EXPECT_FALSE(ScanMessage(line).ok()) << line;
  }
  // Another member may repeat (the last counts), and nested ids are fine.
  Result<RawMessage> m = ScanMessage(
      R"({"jsonrpc":"2.0","id":1,"method":"a","x":1,"x":2,"params":{"id":3,"id":4}})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->id, "1");
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
  // Every echo a peer may produce maps to its request's form: a JavaScript
  // server echoes 9007199254740993 as 9007199254740992.
  EXPECT_EQ(NormalizeId("9007199254740993"), NormalizeId("9007199254740992"));
  EXPECT_EQ(NormalizeId("0.99999999999999999"), NormalizeId("1"));
  EXPECT_EQ(NormalizeId(R"({"x" : 1})"), NormalizeId(R"({"x":1})"));
  EXPECT_NE(NormalizeId("true"), NormalizeId(R"("true")"));
}

TEST(JsonScanTest, ClassifiesIdsByWhetherEveryServerEchoesThem) {
  EXPECT_EQ(ClassifyId(R"("a")"), IdKind::kString);
  EXPECT_EQ(ClassifyId("0"), IdKind::kSafeInteger);
  EXPECT_EQ(ClassifyId("-42"), IdKind::kSafeInteger);
  EXPECT_EQ(ClassifyId("9007199254740991"), IdKind::kSafeInteger);
  EXPECT_EQ(ClassifyId("-9007199254740991"), IdKind::kSafeInteger);
  EXPECT_EQ(ClassifyId("9007199254740992"), IdKind::kOtherNumber);
  EXPECT_EQ(ClassifyId("99999999999999999999"), IdKind::kOtherNumber);
  EXPECT_EQ(ClassifyId("1.5"), IdKind::kOtherNumber);
  EXPECT_EQ(ClassifyId("1.0"), IdKind::kOtherNumber);
  EXPECT_EQ(ClassifyId("1e3"), IdKind::kOtherNumber);
  EXPECT_EQ(ClassifyId("null"), IdKind::kNull);
  EXPECT_EQ(ClassifyId("true"), IdKind::kOther);
  EXPECT_EQ(ClassifyId(R"({"x":1})"), IdKind::kOther);
  EXPECT_EQ(ClassifyId("[1]"), IdKind::kOther);
}

TEST(JsonScanTest, FlagsMembersJsonRpcDoesNotDefine) {
  Result<RawMessage> plain =
      ScanMessage(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{}})");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->other_members);
  EXPECT_EQ(plain->jsonrpc, R"("2.0")");
  Result<RawMessage> extra =
      ScanMessage(R"({"jsonrpc":"2.0","id":1,"method":"m","x":[]})");
  ASSERT_TRUE(extra.ok());
  EXPECT_TRUE(extra->other_members);
}

TEST(JsonScanTest, DecodeStringHandlesEscapes) {
  EXPECT_EQ(DecodeString(R"("plain")"), "plain");
  EXPECT_EQ(DecodeString(R"("a\"b\u00e9")"), "a\"b\xc3\xa9");
  EXPECT_EQ(DecodeString("nope"), "");
}

TEST(JsonScanTest, RejectsInvalidUtf8InStringsNamingTheByte) {
  EXPECT_TRUE(
      ScanMessage("{\"t\":\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"}")
          .ok());
  for (std::string bad : {
           std::string("{\"t\":\"\xFF\"}"),              // never valid
           std::string("{\"t\":\"\xC3\"}"),              // truncated sequence
           std::string("{\"t\":\"\xC0\xAF\"}"),          // overlong '/'
           std::string("{\"t\":\"\xED\xA0\x80\"}"),      // UTF-16 surrogate
           std::string("{\"t\":\"\xF4\x90\x80\x80\"}"),  // above U+10FFFF
       }) {
    Result<RawMessage> m = ScanMessage(bad);
    ASSERT_FALSE(m.ok()) << bad;
    EXPECT_EQ(m.status().message(), "byte 6: invalid UTF-8 in string");
  }
  EXPECT_FALSE(ScanMessage("\xFF{}").ok());  // outside strings: grammar error
}

TEST(JsonScanTest, RepairReplacesEachMaximalIllFormedSubpart) {
  EXPECT_TRUE(IsValidUtf8("plain caf\xC3\xA9"));
  EXPECT_FALSE(IsValidUtf8("a\xFF"));
  EXPECT_EQ(RepairUtf8("ok \xC3\xA9"), "ok \xC3\xA9");
  // \xE2\x82 is one maximal subpart (a truncated 3-byte sequence): one
  // U+FFFD; \xFF and \xFE are one each.
  EXPECT_EQ(RepairUtf8("a\xE2\x82z\xFF\xFE"),
            "a\xEF\xBF\xBDz\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_TRUE(IsValidUtf8(RepairUtf8("\xF0\x9F\x98 \xED\xA0\x80")));
}

IdSniffer Sniff(const std::vector<std::string>& pieces) {
  IdSniffer s;
  for (const std::string& p : pieces) s.Feed(p);
  return s;
}

TEST(IdSnifferTest, FindsTheIdAfterAHugeResultFedInPieces) {
  // TypeScript SDK servers write {"result":...,"jsonrpc":"2.0","id":N}.
  IdSniffer s = Sniff({R"({"result":{"content":[{"type":"text","text":"a)",
                       std::string(10000, 'x'), R"("}],"id":"inner"},)",
                       R"("jsonrpc":"2.0","i)", R"(d" : 42 })"});
  EXPECT_EQ(s.id(), "42");
  EXPECT_TRUE(s.is_response());
  EXPECT_FALSE(s.is_request());
  EXPECT_TRUE(s.has_result());
}

TEST(IdSnifferTest, TellsRequestsFromResponsesAndIgnoresNestedMembers) {
  IdSniffer req = Sniff(
      {R"({"jsonrpc":"2.0","id":"s-1","method":"roots/list","params":{"id":9}})"});
  EXPECT_EQ(req.id(), R"("s-1")");
  EXPECT_TRUE(req.is_request());
  EXPECT_FALSE(req.is_response());
  IdSniffer note =
      Sniff({R"({"method":"notifications/x","params":{"id":1,"result":2}})"});
  EXPECT_EQ(note.id(), "");
  EXPECT_FALSE(note.is_response());
}

TEST(IdSnifferTest, RecoversTheIdOfAMessageThatIsNotValidJson) {
  IdSniffer s = Sniff({R"({"jsonrpc":"2.0","id":7,"result":{"content":[tru)"});
  EXPECT_EQ(s.id(), "7");
  EXPECT_TRUE(s.is_response());
  IdSniffer bad_utf8 = Sniff(
      {"{\"jsonrpc\":\"2.0\",\"id\":\"u8\",\"method\":\"x\",\"p\":\"\xFF\"}"});
  EXPECT_EQ(bad_utf8.id(), R"("u8")");
  EXPECT_TRUE(bad_utf8.is_request());
}

TEST(IdSnifferTest, GivesNoIdWhenItIsNotAUsableJsonRpcId) {
  EXPECT_EQ(Sniff({R"({"id":null,"error":{}})"}).id(), "");
  EXPECT_EQ(Sniff({R"({"id":{"a":1},"result":{}})"}).id(), "");
  EXPECT_EQ(Sniff({R"({"id":5x,"result":{}})"}).id(), "");
  EXPECT_EQ(Sniff({"this is { not json"}).id(), "");
  EXPECT_EQ(Sniff({R"([{"id":1,"result":{}}])"}).id(), "");
  EXPECT_EQ(
      Sniff({R"({"id":")" + std::string(1000, 'a') + R"(","result":1})"}).id(),
      "");
  EXPECT_EQ(Sniff({R"({"result":{},"id":)"}).id(), "") << "cut off";
}

}  // namespace
}  // namespace toolcache::mcp
