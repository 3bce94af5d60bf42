#include "src/core/json.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace toolcache::json {
namespace {

TEST(JsonQuote, EscapesAsNlohmannDumpDoes) {
  // Every byte below 0x80 and a few UTF-8 sequences: the spliced bytes of
  // the LLM stages must equal what a DOM round trip would write.
  std::string all;
  for (int c = 1; c < 0x80; ++c) all.push_back(static_cast<char>(c));
  all += "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80/";
  all.push_back('\0');
  EXPECT_EQ(Quote(all), nlohmann::json(all).dump());
}

TEST(JsonQuote, ReplacesIllFormedUtf8UnlessVerbatim) {
  const std::string bad = "a\xC3(b\xED\xA0\x80z\xFF";
  const std::string q = Quote(bad);
  EXPECT_EQ(Validate(q), Error::kOk);
  EXPECT_NE(q.find("\xEF\xBF\xBD"), std::string::npos);
  EXPECT_EQ(Quote(bad, BadUtf8::kVerbatim), "\"" + bad + "\"");
}

// Issue 30: src/serve/service.cc and src/llm/tool_loop.cc quoted with a
// nlohmann round trip (dump with error_handler_t::replace); they now call
// Quote. Their output is unchanged: escapes, every control byte, DEL,
// non-ASCII, and ill-formed UTF-8 (each ill-formed subpart one U+FFFD).
TEST(JsonQuote, WritesWhatTheFormerNlohmannRoundTripsWrote) {
  const auto former = [](std::string_view s) {
    return nlohmann::json(std::string(s))
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  const auto former_ordered = [](std::string_view s) {
    return nlohmann::ordered_json(std::string(s))
        .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  };
  std::vector<std::string> cases = {
      "",
      "plain",
      "q\"b\\s/slash",
      "tab\tnl\nret\rbs\bff\f",
      std::string("nul\0in", 6),
      "\x01\x1f\x7f",
      "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80",
      "cut \xC3",
      "lone \xED\xA0\x80 surrogate",
      "\xFF\xFE bytes",
      "overlong \xC0\xAF",
      "a\xC3(b\xED\xA0\x80z\xFF",
      "\xF0\x9F\x98 three of four",
  };
  for (int c = 0; c < 0x20; ++c) cases.push_back(std::string(1, char(c)));
  for (const std::string& s : cases) {
    EXPECT_EQ(Quote(s), former(s)) << s;
    EXPECT_EQ(Quote(s), former_ordered(s)) << s;
  }
}

TEST(JsonUnquote, RoundTripsAndDecodesEscapes) {
  std::string out;
  ASSERT_EQ(Unquote(R"("a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00")", &out),
            Error::kOk);
  EXPECT_EQ(out, "a\"b\\c/d\b\f\n\r\t\xC3\xA9\xF0\x9F\x98\x80");
  const std::string text = "x\x01y\"\\\xE2\x82\xAC";
  ASSERT_EQ(Unquote(Quote(text), &out), Error::kOk);
  EXPECT_EQ(out, text);
}

TEST(JsonUnquote, RefusesHostileLiterals) {
  std::string out;
  EXPECT_EQ(Unquote("abc", &out), Error::kSyntax);
  EXPECT_EQ(Unquote("\"", &out), Error::kSyntax);
  EXPECT_EQ(Unquote(R"("\x")", &out), Error::kBadEscape);
  EXPECT_EQ(Unquote(R"("\u12")", &out), Error::kBadEscape);
  EXPECT_EQ(Unquote(R"("\u12g4")", &out), Error::kBadEscape);
  EXPECT_EQ(Unquote("\"a\nb\"", &out), Error::kControlCharacter);
  EXPECT_EQ(Unquote(R"("a"b")", &out), Error::kUnterminated);
  EXPECT_EQ(Unquote(R"("a\")", &out), Error::kUnterminated);
  // A lone surrogate decodes to U+FFFD (a documented choice).
  ASSERT_EQ(Unquote(R"("\ud800x")", &out), Error::kOk);
  EXPECT_EQ(out, "\xEF\xBF\xBDx");
}

TEST(JsonScan, FindsTheValueSpan) {
  const std::string s = R"(  {"a":[1,-2.5e+3,true,null,"x"],"b":{}} tail)";
  Span v;
  ASSERT_EQ(ScanValue(s, 0, {}, &v), Error::kOk);
  EXPECT_EQ(v.In(s), R"({"a":[1,-2.5e+3,true,null,"x"],"b":{}})");
  EXPECT_EQ(Validate(s), Error::kTrailing);
  EXPECT_EQ(Validate(" [ ] "), Error::kOk);
}

TEST(JsonScan, RefusesDeepNestingWithoutRecursing) {
  const std::string deep(1'000'000, '[');
  Span v;
  EXPECT_EQ(ScanValue(deep, 0, {}, &v), Error::kTooDeep);
  EXPECT_EQ(CheckLimits(deep), Error::kTooDeep);
  const std::string ok = std::string(512, '[') + std::string(512, ']');
  EXPECT_EQ(Validate(ok), Error::kOk);
  EXPECT_EQ(CheckLimits(ok), Error::kOk);
  EXPECT_EQ(Validate("[" + ok + "]"), Error::kTooDeep);
  // Brackets inside strings do not count.
  EXPECT_EQ(CheckLimits("[\"" + deep + "\\\"\"]"), Error::kOk);
}

// The byte-at-a-time CheckLimits as it was before its 16-byte blocks
// (sse200): the verdict every input must keep.
Error CheckLimitsByteLoop(std::string_view text, const Limits& limits) {
  if (text.size() > limits.max_bytes) return Error::kTooLarge;
  const char* p = text.data();
  const char* end = p + text.size();
  uint32_t depth = 0;
  while (p < end) {
    const char c = *p;
    if (c == '"') {
      ++p;
      while (true) {
        const void* q = std::memchr(p, '"', static_cast<size_t>(end - p));
        if (q == nullptr) return Error::kOk;
        const char* quote = static_cast<const char*>(q);
        size_t backslashes = 0;
        for (const char* b = quote; b > p && b[-1] == '\\'; --b) ++backslashes;
        p = quote + 1;
        if (backslashes % 2 == 0) break;
      }
      continue;
    }
    if (c == '[' || c == '{') {
      if (++depth > limits.max_depth) return Error::kTooDeep;
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    }
    ++p;
  }
  return Error::kOk;
}

TEST(JsonScan, CheckLimitsAgreesWithTheByteLoop) {
  // Random texts over the bytes the scan acts on and the brackets'
  // neighbours (0x5A-0x5E, 0x7A-0x7E: the blocks compare byte | 0x20),
  // every length across the 16-byte block edges, backslash runs before
  // quotes at every offset.
  std::mt19937 rng(32);
  const std::string alphabet = "\"\\\\\\[]{}a ;=Z^z|~";
  size_t checked = 0;
  size_t deep = 0;
  for (int i = 0; i < 200000; ++i) {
    const size_t n = rng() % 70;
    std::string t(n, ' ');
    for (char& c : t) c = alphabet[rng() % alphabet.size()];
    const Limits l{.max_depth = 1 + static_cast<uint32_t>(rng() % 6)};
    const Error want = CheckLimitsByteLoop(t, l);
    ASSERT_EQ(CheckLimits(t, l), want) << "text: " << t;
    deep += want == Error::kTooDeep;
    ++checked;
  }
  EXPECT_GT(deep, 1000u);  // both verdicts were exercised
  // Long strings with escapes where the blocks end: 15, 16 and 17
  // backslash-preceded quotes around a 16-byte boundary.
  for (size_t pad = 0; pad < 40; ++pad) {
    for (size_t slashes = 0; slashes < 5; ++slashes) {
      const std::string t = "[\"" + std::string(pad, 'x') +
                            std::string(slashes, '\\') + "\"[[[" +
                            std::string(20, 'y') + "\"]]]";
      const Limits l{.max_depth = 2};
      ASSERT_EQ(CheckLimits(t, l), CheckLimitsByteLoop(t, l))
          << "pad " << pad << " slashes " << slashes;
      ++checked;
    }
  }
  // The fuzz corpora of the JSON readers.
  for (const char* dir : {"llm_wire", "canonical_json", "mcp_scan"}) {
    const std::filesystem::path d =
        std::filesystem::path(TOOLCACHE_SOURCE_DIR) / "fuzz/corpus" / dir;
    if (!std::filesystem::exists(d)) continue;
    for (const auto& e : std::filesystem::directory_iterator(d)) {
      std::ifstream in(e.path(), std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      for (uint32_t depth : {1u, 3u, 512u}) {
        const Limits l{.max_depth = depth};
        ASSERT_EQ(CheckLimits(ss.str(), l), CheckLimitsByteLoop(ss.str(), l))
            << e.path();
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 200000u);
}

TEST(JsonScan, RefusesMalformedInput) {
  EXPECT_EQ(Validate(""), Error::kUnterminated);
  EXPECT_EQ(Validate("[1,]"), Error::kSyntax);
  EXPECT_EQ(Validate("{\"a\" 1}"), Error::kSyntax);
  EXPECT_EQ(Validate("{1:2}"), Error::kSyntax);
  EXPECT_EQ(Validate("[1}"), Error::kSyntax);
  EXPECT_EQ(Validate("[01]"), Error::kSyntax);  // 0 then a stray 1
  EXPECT_EQ(Validate("-"), Error::kBadNumber);
  EXPECT_EQ(Validate("1."), Error::kBadNumber);
  EXPECT_EQ(Validate("1e"), Error::kBadNumber);
  EXPECT_EQ(Validate("\"\xC0\xAF\""), Error::kBadUtf8);
  EXPECT_EQ(Validate("\"\xED\xA0\x80\""), Error::kBadUtf8);  // surrogate
  EXPECT_EQ(Validate("\"a\tb\""), Error::kControlCharacter);
  EXPECT_EQ(Validate("\"\\q\""), Error::kBadEscape);
  EXPECT_EQ(Validate("[\"abc"), Error::kUnterminated);
  EXPECT_EQ(Validate("{\"a\":1"), Error::kUnterminated);
  EXPECT_EQ(Validate("tru"), Error::kSyntax);
  EXPECT_EQ(Validate("x", {.max_bytes = 0}), Error::kTooLarge);
}

// error_at names the offending byte (what the MCP scanner's "byte N: ..."
// messages report), or the text's size when it ends early.
TEST(JsonScan, ReportsTheOffendingByte) {
  struct Case {
    std::string text;
    Error error;
    size_t at;
  };
  const Case cases[] = {
      {R"({"a":1,}")", Error::kSyntax, 7},
      {"[\"ab\\q\"]", Error::kBadEscape, 4},
      {"[\"ab\xC0\xAF\"]", Error::kBadUtf8, 4},
      {"[\"a\tb\"]", Error::kControlCharacter, 3},
      {"[1, -x]", Error::kBadNumber, 5},
      {R"({"a":[1,2)", Error::kUnterminated, 9},
      {"  [\"abc", Error::kUnterminated, 7},
  };
  for (const Case& c : cases) {
    Span v;
    size_t at = 12345;
    EXPECT_EQ(ScanValue(c.text, 0, {}, &v, &at), c.error) << c.text;
    EXPECT_EQ(at, c.at) << c.text;
  }
}
TEST(JsonNumbers, WritesAndRefusesHugeIntegers) {
  std::string out;
  AppendInt(INT64_MIN, &out);
  out.push_back(' ');
  AppendUint(UINT64_MAX, &out);
  out.push_back(' ');
  AppendDouble(0.1, &out);
  out.push_back(' ');
  AppendDouble(1e21, &out);
  out.push_back(' ');
  AppendDouble(1.0 / 0.0, &out);
  EXPECT_EQ(out, "-9223372036854775808 18446744073709551615 0.1 1e+21 null");
  int64_t v = 0;
  EXPECT_EQ(ParseInt("-9223372036854775808", &v), Error::kOk);
  EXPECT_EQ(v, INT64_MIN);
  EXPECT_EQ(ParseInt("9223372036854775808", &v), Error::kBadNumber);
  EXPECT_EQ(ParseInt(std::string(400, '9'), &v), Error::kBadNumber);
  EXPECT_EQ(ParseInt("1.5", &v), Error::kBadNumber);
  EXPECT_EQ(ParseInt("+1", &v), Error::kBadNumber);
  EXPECT_EQ(ParseInt("01", &v), Error::kBadNumber);
  EXPECT_EQ(Validate("1" + std::string(5000, '0') + "e99999"), Error::kOk);
}

TEST(JsonErrors, EveryErrorHasAName) {
  for (int e = 0; e <= static_cast<int>(Error::kTrailing); ++e) {
    EXPECT_NE(ErrorName(static_cast<Error>(e)), "unknown") << e;
  }
}

}  // namespace
}  // namespace toolcache::json
