// SpanTree reads exactly the texts nlohmann's dump writes back unchanged:
// every text it accepts is a dump fixed point, and each way a text can
// differ from its dump (whitespace, escapes, number forms, duplicate names,
// ill-formed UTF-8, depth) is refused.
#include "src/prompt/span_tree.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace toolcache::prompt_internal {
namespace {

bool DumpFixedPoint(const std::string& s) {
  auto j = nlohmann::ordered_json::parse(s, nullptr, false);
  return !j.is_discarded() && j.dump() == s;
}

TEST(SpanTree, AcceptsOnlyTextsTheDumpWritesBackUnchanged) {
  const std::string accepted[] = {
      R"({"a":1,"b":[true,false,null],"c":{"d":"e"}})",
      R"({"s":"tab\tnl\n\u0001 \"q\" \\ caf)"
      "\xc3\xa9"
      R"( /"})",
      R"({"n":-9223372036854775808,"u":18446744073709551615,"f":0.1,"g":1e+300,"h":-0.0})",
      R"([])",
      R"("x")",
      "{\"e\":\"\xf0\x9f\x98\x80\x7f\"}",
  };
  for (const std::string& s : accepted) {
    SpanTree t;
    EXPECT_TRUE(t.Read(s)) << s;
    EXPECT_TRUE(DumpFixedPoint(s)) << s;
  }
  const std::string refused[] = {
      R"({"a": 1})",                    // whitespace
      R"({"a":1,"a":2})",               // duplicate names
      R"({"a":"\u00e9"})",              // escape the dump does not write
      R"({"a":"\/"})",                  // idem
      R"({"a":"\u001F"})",              // uppercase hex
      R"({"a":"\u0009"})",              // the dump writes \t
      R"({"a":1.0e3})",                 // the dump writes 1000.0
      R"({"a":1.50})",                  // 1.5
      R"({"a":-0})",                    // 0
      R"({"a":18446744073709551616})",  // beyond uint64: a double
      R"({"a":-9223372036854775809})",  // beyond int64
      "{\"a\":\"\xc0\xaf\"}",           // overlong UTF-8
      "{\"a\":\"\xed\xa0\x80\"}",       // a surrogate in UTF-8
      R"({"a":"\ud800"})",              // a lone surrogate escape
      R"({"a":1)",                      // unterminated
      R"({"a":1}x)",                    // trailing bytes
  };
  for (const std::string& s : refused) {
    SpanTree t;
    EXPECT_FALSE(t.Read(s)) << s;
  }
  std::string deep(600, '[');
  deep += std::string(600, ']');
  SpanTree t;
  EXPECT_FALSE(t.Read(deep));  // deeper than 512
  EXPECT_TRUE(t.Read(deep, 1000));
}

TEST(SpanTree, MembersAndSpans) {
  const std::string s = R"({"a":[1,{"x\"y":2}],"b":"t\u0001"})";
  SpanTree t;
  ASSERT_TRUE(t.Read(s));
  EXPECT_EQ(t.kind(0), 'o');
  EXPECT_EQ(t.count(0), 2u);
  const uint32_t a = t.Find(0, "a");
  ASSERT_NE(a, SpanTree::kNone);
  EXPECT_EQ(t.Raw(a), R"([1,{"x\"y":2}])");
  EXPECT_EQ(t.KeyRaw(a), R"("a")");
  const uint32_t obj = t.next(t.first(a));
  EXPECT_NE(t.Find(obj, "x\"y"), SpanTree::kNone);
  EXPECT_EQ(t.Text(t.Find(0, "b")), std::string("t\x01"));
  EXPECT_EQ(t.Find(0, "c"), SpanTree::kNone);
}

}  // namespace
}  // namespace toolcache::prompt_internal
