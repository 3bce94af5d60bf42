// SpanTree reads every JSON text nlohmann's parser reads (whitespace, every
// escape, every number spelling, duplicate names), refuses what it refuses
// (lone surrogate escapes, ill-formed UTF-8, bad grammar) and deep nesting;
// canon() says exactly when a value's bytes are their compact dump, and
// AppendDump writes what the dump would.
#include "src/prompt/span_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace toolcache::prompt_internal {
namespace {

bool DumpFixedPoint(const std::string& s) {
  auto j = nlohmann::ordered_json::parse(s, nullptr, false);
  return !j.is_discarded() && j.dump() == s;
}

TEST(SpanTree, CanonExactlyWhenTheDumpWritesTheBytesBack) {
  const std::string canon[] = {
      R"({"a":1,"b":[true,false,null],"c":{"d":"e"}})",
      R"({"s":"tab\tnl\n\u0001 \"q\" \\ caf)"
      "\xc3\xa9"
      R"( /"})",
      R"({"n":-9223372036854775808,"u":18446744073709551615,"f":0.1,"g":1e+300,"h":-0.0})",
      R"([])",
      R"("x")",
      "{\"e\":\"\xf0\x9f\x98\x80\x7f\"}",
  };
  for (const std::string& s : canon) {
    SpanTree t;
    ASSERT_TRUE(t.Read(s)) << s;
    EXPECT_TRUE(t.canon(0)) << s;
    EXPECT_TRUE(DumpFixedPoint(s)) << s;
  }
  const std::string other[] = {
      R"({"a": 1})",                    // whitespace
      R"({"a":1,"a":2})",               // duplicate names
      R"({"a":"\u00e9"})",              // an escape the dump does not write
      R"({"a":"\/"})",                  // idem
      R"({"a":"\u001F"})",              // uppercase hex
      R"({"a":"\u0009"})",              // the dump writes \t
      R"({"a":"\ud83d\ude00"})",        // a surrogate pair
      R"({"a":1.0e3})",                 // the dump writes 1000.0
      R"({"a":1.50})",                  // 1.5
      R"({"a":-0})",                    // 0
      R"({"a":18446744073709551616})",  // beyond uint64: a double
      R"({"a":-9223372036854775809})",  // beyond int64
  };
  for (const std::string& s : other) {
    SpanTree t;
    ASSERT_TRUE(t.Read(s)) << s;
    EXPECT_FALSE(t.canon(0)) << s;
    EXPECT_FALSE(DumpFixedPoint(s)) << s;
    // Each member's dump is the DOM's.
    const auto j = nlohmann::ordered_json::parse(s);
    const uint32_t a = t.Find(0, "a");
    ASSERT_NE(a, SpanTree::kNone);
    std::string d;
    t.AppendDump(a, &d);
    EXPECT_EQ(d, j["a"].dump()) << s;
  }
  const std::string refused[] = {
      "{\"a\":\"\xc0\xaf\"}",      // overlong UTF-8
      "{\"a\":\"\xed\xa0\x80\"}",  // a surrogate in UTF-8
      R"({"a":"\ud800"})",         // a lone surrogate escape
      R"({"a":"\udc00\ud800"})",   // reversed
      R"({"a":"\x"})",             // no such escape
      R"({"a":01})",               // leading zero
      R"({"a":1)",                 // unterminated
      R"({"a":1}x)",               // trailing bytes
      R"({"a" 1})",                // no colon
      R"([1,])",                   // trailing comma
  };
  for (const std::string& s : refused) {
    SpanTree t;
    EXPECT_FALSE(t.Read(s)) << s;
    EXPECT_TRUE(nlohmann::ordered_json::parse(s, nullptr, false).is_discarded())
        << s;
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

TEST(SpanTree, WhitespaceEscapedNamesAndDuplicatesReadAsTheProviderDoes) {
  const std::string s =
      " {\n \"a\" :\t1 , \"\\u0062\" : \"x\\/y\" ,\"a\" : [ 2 ] } ";
  SpanTree t;
  ASSERT_TRUE(t.Read(s));
  EXPECT_EQ(t.Raw(0), s.substr(1, s.size() - 2));
  EXPECT_TRUE(t.dups(0));
  const uint32_t a = t.Find(0, "a");  // the last one
  EXPECT_EQ(t.Raw(a), "[ 2 ]");
  EXPECT_EQ(t.KeyRaw(a), "\"a\"");
  const uint32_t b = t.Find(0, "b");
  ASSERT_NE(b, SpanTree::kNone);
  EXPECT_TRUE(t.NameIs(b, "b"));
  EXPECT_EQ(t.Name(b), "b");
  EXPECT_TRUE(t.TextIs(b, "x/y"));
  std::string name;
  t.AppendName(b, &name);
  EXPECT_EQ(name, "\"b\"");
  // As the DOM holds them: "a" at its first position with its last value.
  std::vector<uint32_t> members;
  t.DumpMembers(0, &members);
  ASSERT_EQ(members.size(), 2u);
  EXPECT_EQ(members[0], a);
  EXPECT_EQ(members[1], b);
}

// Review finding: DumpMembers looked each name up by a linear scan of the
// names seen so far, so one repeated name in a 100k-member object cost
// ~5e9 comparisons. The work is now one lookup per member.
TEST(SpanTree, DumpMembersIsLinearWithOneRepeatedName) {
  constexpr uint32_t kMembers = 100000;
  std::string s = "{";
  for (uint32_t i = 0; i < kMembers; ++i) {
    s += "\"k" + std::to_string(i) + "\":0,";
  }
  s += "\"k0\":1}";
  SpanTree t;
  ASSERT_TRUE(t.Read(s));
  ASSERT_TRUE(t.dups(0));
  std::vector<uint32_t> members;
  const uint64_t before = SpanTree::DumpMembersWork();
  t.DumpMembers(0, &members);
  const uint64_t work = SpanTree::DumpMembersWork() - before;
  EXPECT_LE(work, 2u * (kMembers + 1));
  ASSERT_EQ(members.size(), kMembers);
  EXPECT_EQ(t.Raw(members[0]), "1");  // "k0": its last value, first place
  EXPECT_EQ(t.Name(members[0]), "k0");
  EXPECT_EQ(t.Name(members[kMembers - 1]), "k99999");
}

// A structural dump of node `n`: kinds, decoded names, scalars' bytes, and
// the canon flag of every node a graft did not touch.
void Shape(const SpanTree& t, uint32_t n, std::string* out) {
  out->push_back(t.kind(n));
  if (t.kind(n) == 'o' || t.kind(n) == 'a') {
    out->append("(" + std::to_string(t.count(n)) + ")");
    for (uint32_t m = t.first(n); m != SpanTree::kNone; m = t.next(m)) {
      if (t.HasKey(m)) out->append(t.Name(m) + "=");
      Shape(t, m, out);
      out->push_back(t.mixed(m) ? '~' : (t.canon(m) ? '+' : '-'));
    }
    return;
  }
  out->append(t.Raw(n));
}

std::string Applied(
    std::string text,
    std::vector<std::tuple<uint32_t, uint32_t, std::string>> edits) {
  std::sort(edits.begin(), edits.end());
  for (size_t i = edits.size(); i-- > 0;) {
    const auto& [b, e, x] = edits[i];
    text.replace(b, e - b, x);
  }
  return text;
}

// Issue 30: grafting the proxy stages' edits into the reading of the
// client's body gives the tree of the edited body (same shape, names,
// scalars; the bytes of every node with the edits applied), without
// reading the edited body.
TEST(SpanTree, GraftedEditsReadAsTheEditedText) {
  const std::string body =
      R"({"tools":[{"name":"A"},{"name":"B"}], "messages":[{"role":"user","content":"hi"},)"
      R"({"role":"assistant","content":"ok"},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"BIG"},{"type":"text","text":"go"}]}]})";
  const uint32_t tools_end = static_cast<uint32_t>(body.find("}]")) + 1;
  const uint32_t asst =
      static_cast<uint32_t>(body.find(R"({"role":"assistant")"));
  const uint32_t big = static_cast<uint32_t>(body.find(R"("BIG")"));
  std::vector<std::tuple<uint32_t, uint32_t, std::string>> cases[] = {
      // offload: a tool appended, a result's content replaced
      {{tools_end, tools_end, R"(,{"name":"toolcache_read"})"},
       {big, big + 5, R"("preview \u00e9")"}},
      // splice: hidden turns inserted before an assistant message
      {{asst, asst,
        R"({"role":"assistant","content":[{"type":"tool_use","id":"h","name":"Read","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"h","content":"x"}]},)"}},
      // all three, given out of position order
      {{big, big + 5, R"( [ {"type":"text","text":"p"} ] )"},
       {asst, asst, R"({"role":"assistant","content":"h"},)"},
       {tools_end, tools_end, R"(,{"name":"R"})"}},
      // a run of elements replaced
      {{asst,
        static_cast<uint32_t>(body.find(R"(,{"role":"user","content":[)")),
        R"({"role":"assistant","content":"x"},{"role":"assistant","content":"y"})"}},
  };
  for (const auto& edits : cases) {
    const std::string edited = Applied(body, edits);
    SpanTree want;
    ASSERT_TRUE(want.Read(edited)) << edited;
    SpanTree got;
    ASSERT_TRUE(got.Read(body));
    for (const auto& [b, e, x] : edits) {
      ASSERT_TRUE(got.Graft(b, e, x)) << x;
    }
    std::string a, b;
    Shape(want, 0, &a);
    Shape(got, 0, &b);
    // Mixed nodes print '~' where the edited text's node printed its canon
    // flag: compare with those masked.
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
      if (b[i] == '~' && (a[i] == '+' || a[i] == '-')) b[i] = a[i];
    }
    EXPECT_EQ(a, b) << edited;
    EXPECT_EQ(got.Bytes(0), edited);
    EXPECT_EQ(got.Slice(0, static_cast<uint32_t>(body.size())), edited);
    EXPECT_TRUE(got.mixed(0));
  }
}

TEST(SpanTree, GraftRefusesWhatIsNotWholeValues) {
  const std::string body = R"({"a":[1,2,3],"b":{"c":"d","e":"f"}})";
  auto graft = [&](uint32_t b, uint32_t e, std::string_view x) {
    SpanTree t;
    EXPECT_TRUE(t.Read(body));
    return t.Graft(b, e, x);
  };
  const uint32_t two = static_cast<uint32_t>(body.find('2'));
  EXPECT_TRUE(graft(two, two + 1, "7"));
  EXPECT_FALSE(graft(two, two + 1, "7,8]")) << "not values";
  EXPECT_FALSE(graft(two - 1, two + 1, "7")) << "straddles a separator";
  const uint32_t d = static_cast<uint32_t>(body.find("\"d\""));
  EXPECT_TRUE(graft(d, d + 3, "[1]"));
  EXPECT_FALSE(graft(d, d + 3, "1,2")) << "two values for one member";
  EXPECT_FALSE(graft(d - 4, d + 3, "1")) << "a member, not its value";
  EXPECT_FALSE(graft(0, 1, "[")) << "outside every container";
  SpanTree t;
  ASSERT_TRUE(t.Read(body));
  ASSERT_TRUE(t.Graft(two, two + 1, "7"));
  EXPECT_FALSE(t.Graft(two, two, "9,")) << "touches an earlier graft";
  EXPECT_FALSE(t.Graft(two - 1, two + 2, "1,2,3")) << "overlaps one";
  EXPECT_EQ(t.Bytes(0), R"({"a":[1,7,3],"b":{"c":"d","e":"f"}})");
}

// Random edits at random positions: a graft the tree accepts must be
// exactly the applied text's tree (an accepted edit that made the text
// invalid, or read another structure, would send the provider a body the
// rewrite did not read); many are refused, none crashes.
TEST(SpanTree, AcceptedGraftsAreAlwaysTheAppliedTextsTree) {
  const std::string body =
      R"({"a":[1, 2 ,3],"b":{"c":"d","e":[{"f":null}]},"g":[ ],"h":"x"})";
  const char* kTexts[] = {
      "1", ",2", "3,",      "[4]", R"({"x":5})",   R"("s")", ",",
      "",  "]",  " 7 , 8 ", ",9,", R"({"y":[]},)", "{",      "1,,2"};
  std::mt19937 rng(30);
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    SpanTree t;
    ASSERT_TRUE(t.Read(body));
    std::vector<std::tuple<uint32_t, uint32_t, std::string>> done;
    for (int k = 0; k < 1 + static_cast<int>(rng() % 3); ++k) {
      const uint32_t b = static_cast<uint32_t>(rng() % (body.size() + 1));
      const uint32_t e = rng() % 2 ? b : b + static_cast<uint32_t>(rng() % 6);
      // The texts outlive the tree (span_tree.h): kTexts are literals.
      const std::string_view x = kTexts[rng() % std::size(kTexts)];
      if (e > body.size()) continue;
      if (t.Graft(b, e, x)) done.push_back({b, e, std::string(x)});
    }
    if (done.empty()) continue;
    ++accepted;
    const std::string edited = Applied(body, done);
    SpanTree want;
    ASSERT_TRUE(want.Read(edited)) << edited;
    std::string a, g;
    Shape(want, 0, &a);
    Shape(t, 0, &g);
    for (size_t j = 0; j < a.size() && j < g.size(); ++j) {
      if (g[j] == '~' && (a[j] == '+' || a[j] == '-')) g[j] = a[j];
    }
    ASSERT_EQ(a, g) << edited;
    ASSERT_EQ(t.Bytes(0), edited);
  }
  EXPECT_GT(accepted, 500);
}

}  // namespace
}  // namespace toolcache::prompt_internal
