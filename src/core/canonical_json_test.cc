// Tests of RFC 8785 canonicalization: the published JCS vectors, the 100k
// ECMAScript number lines, every rejection class, the limits, the top-level
// member dropping, and agreement of the text and nlohmann paths.
#include "toolcache/canonical_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "src/core/canonical_json_internal.h"
#include "tests/support/test_data.h"

namespace toolcache {
namespace {

using ::testing::HasSubstr;

using ::toolcache::testing::ReadTestData;

const std::filesystem::path kJcsDir = testing::TestDataPath("jcs");

// The file name of every JCS test vector; empty (after a test failure naming
// the folder) when the folder is missing.
std::vector<std::string> VectorNames() {
  std::vector<std::string> names;
  if (!testing::TestDataDirOrFail("jcs/input")) return names;
  for (const auto& e : std::filesystem::directory_iterator(kJcsDir / "input")) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string Canon(std::string_view json, const CanonicalOptions& o = {}) {
  Result<std::string> r = CanonicalizeJson(json, o);
  EXPECT_TRUE(r.ok()) << json << " -> " << r.status().ToString();
  return r.ok() ? *r : std::string();
}

Status Err(std::string_view json, const CanonicalOptions& o = {}) {
  Result<std::string> r = CanonicalizeJson(json, o);
  EXPECT_FALSE(r.ok()) << json << " unexpectedly gave " << (r.ok() ? *r : "");
  return r.ok() ? Status() : r.status();
}

CanonicalOptions Plain() {
  CanonicalOptions o;
  o.drop_meta = false;
  return o;
}

TEST(CanonicalJson, ReproducesEveryJcsVectorByteForByte) {
  const std::vector<std::string> names = VectorNames();
  ASSERT_GE(names.size(), 6u);
  for (const std::string& name : names) {
    const std::optional<std::string> input = ReadTestData("jcs/input/" + name);
    const std::optional<std::string> expected =
        ReadTestData("jcs/output/" + name);
    ASSERT_TRUE(input && expected) << name;
    Result<std::string> got = CanonicalizeJson(*input, Plain());
    ASSERT_TRUE(got.ok()) << name << ": " << got.status().ToString();
    EXPECT_EQ(*got, *expected) << name;
    // Canonical output is a fixed point.
    EXPECT_EQ(Canon(*expected, Plain()), *expected) << name;
  }
}

TEST(CanonicalJson, TextAndValuePathsAgreeOnEveryJcsVector) {
  const std::vector<std::string> names = VectorNames();
  ASSERT_GE(names.size(), 6u);
  for (const std::string& name : names) {
    const std::optional<std::string> input = ReadTestData("jcs/input/" + name);
    const std::optional<std::string> expected =
        ReadTestData("jcs/output/" + name);
    ASSERT_TRUE(input && expected) << name;
    Result<std::string> got =
        CanonicalizeJsonValue(nlohmann::json::parse(*input), Plain());
    ASSERT_TRUE(got.ok()) << name << ": " << got.status().ToString();
    EXPECT_EQ(*got, *expected) << name;
  }
}

TEST(CanonicalJson, FormatsAll100kNumberLinesLikeEcmaScript) {
  std::ifstream in(kJcsDir / "es6-numbers-100k.txt");
  ASSERT_TRUE(in.good()) << "test data file missing: "
                         << (kJcsDir / "es6-numbers-100k.txt");
  std::string line;
  int64_t lines = 0;
  int64_t mismatches = 0;
  std::string out;
  while (std::getline(in, line)) {
    const size_t comma = line.find(',');
    ASSERT_NE(comma, std::string::npos) << line;
    const uint64_t bits = std::stoull(line.substr(0, comma), nullptr, 16);
    const std::string expected = line.substr(comma + 1);
    const double d = std::bit_cast<double>(bits);
    out.clear();
    jcs::AppendEs6Number(d, &out);
    if (out != expected && ++mismatches <= 10) {
      ADD_FAILURE() << line << " formatted as " << out;
    }
    // The text path parses the expected form back to the same double.
    Result<std::string> round = CanonicalizeJson(expected);
    if ((!round.ok() || *round != expected) && ++mismatches <= 10) {
      ADD_FAILURE() << line << " round trip failed";
    }
    ++lines;
  }
  EXPECT_EQ(lines, 100000);
  EXPECT_EQ(mismatches, 0);
}

TEST(CanonicalJson, NumbersBecomeDoubles) {
  EXPECT_EQ(Canon("-0"), "0");
  EXPECT_EQ(Canon("-0.0e-5"), "0");
  EXPECT_EQ(Canon("1.0"), "1");
  EXPECT_EQ(Canon("1E2"), "100");
  EXPECT_EQ(Canon("1e21"), "1e+21");
  EXPECT_EQ(Canon("1e20"), "100000000000000000000");
  EXPECT_EQ(Canon("0.000001"), "0.000001");
  EXPECT_EQ(Canon("0.0000001"), "1e-7");
  EXPECT_EQ(Canon("9007199254740993"), "9007199254740992");
  EXPECT_EQ(Canon("1e-400"), "0");  // underflow rounds to zero
  EXPECT_EQ(Canon("-1e-400"), "0");
  EXPECT_EQ(Canon("0.1e-320"), "1e-321");
  EXPECT_EQ(Canon("1.7976931348623157e308"), "1.7976931348623157e+308");
}

TEST(CanonicalJson, RejectsNumbersThatOverflowADouble) {
  Status s = Err("[1e400]");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("byte 1"));
  EXPECT_THAT(s.message(), HasSubstr("out of the range of an IEEE-754 double"));
  EXPECT_THAT(Err("-1e400").message(), HasSubstr("out of the range"));
  EXPECT_THAT(Err("1.8e308").message(), HasSubstr("out of the range"));
  EXPECT_THAT(Err("0.00001e999999999999999999").message(),
              HasSubstr("out of the range"));
}

TEST(CanonicalJson, RejectsNaNAndInfinity) {
  EXPECT_THAT(Err("NaN").message(), HasSubstr("NaN and Infinity"));
  EXPECT_THAT(Err("[Infinity]").message(), HasSubstr("NaN and Infinity"));
  EXPECT_THAT(Err("{\"a\":-Infinity}").message(),
              HasSubstr("column 6 (byte 5): NaN and Infinity"));
  nlohmann::json v = {{"a", std::numeric_limits<double>::quiet_NaN()}};
  Result<std::string> r = CanonicalizeJsonValue(v);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("\"/a\""));
  EXPECT_THAT(r.status().message(), HasSubstr("NaN and Infinity"));
}

TEST(CanonicalJson, RejectsMalformedNumbers) {
  EXPECT_THAT(Err("01").message(), HasSubstr("leading zeros"));
  EXPECT_THAT(Err("1.").message(), HasSubstr("digit after '.'"));
  EXPECT_THAT(Err("1e").message(), HasSubstr("digit in the exponent"));
  EXPECT_THAT(Err("-").message(), HasSubstr("expected a digit"));
  EXPECT_THAT(Err("+1").message(), HasSubstr("unexpected '+'"));
  EXPECT_THAT(Err(".5").message(), HasSubstr("unexpected '.'"));
}

TEST(CanonicalJson, RejectsInvalidUtf8WithTheReason) {
  EXPECT_THAT(Err("\"\xC0\xAF\"").message(),
              HasSubstr("byte 1): invalid UTF-8: overlong"));
  EXPECT_THAT(Err("\"\xE0\x80\xAF\"").message(), HasSubstr("overlong"));
  EXPECT_THAT(Err("\"\xF0\x80\x80\xAF\"").message(), HasSubstr("overlong"));
  EXPECT_THAT(Err("\"\xED\xA0\x80\"").message(),
              HasSubstr("encoded surrogate"));
  EXPECT_THAT(Err("\"\xF4\x90\x80\x80\"").message(),
              HasSubstr("above U+10FFFF"));
  EXPECT_THAT(Err("\"\xF5\x80\x80\x80\"").message(),
              HasSubstr("above U+10FFFF"));
  EXPECT_THAT(Err("\"\x80\"").message(), HasSubstr("continuation byte"));
  EXPECT_THAT(Err("\"\xC3\"").message(), HasSubstr("missing continuation"));
  EXPECT_THAT(Err("\"\xE2\x82").message(), HasSubstr("truncated"));
  // In member names too, and outside strings.
  EXPECT_THAT(Err("{\"a\xFF\":1}").message(), HasSubstr("invalid UTF-8"));
  EXPECT_THAT(Err("[\xC3\xA9]").message(), HasSubstr("byte 0xC3"));
  // Valid extremes pass: U+10FFFF, U+FFFF, U+0080.
  EXPECT_EQ(Canon("\"\xF4\x8F\xBF\xBF\xEF\xBF\xBF\xC2\x80\""),
            "\"\xF4\x8F\xBF\xBF\xEF\xBF\xBF\xC2\x80\"");
}

TEST(CanonicalJson, RejectsLoneSurrogateEscapes) {
  EXPECT_THAT(Err(R"("\uDE02")").message(),
              HasSubstr("byte 1): lone low surrogate \\uDE02"));
  EXPECT_THAT(Err(R"("\uD83D")").message(),
              HasSubstr("unpaired high surrogate \\uD83D"));
  EXPECT_THAT(Err(R"("\uD83Dx")").message(), HasSubstr("unpaired high"));
  EXPECT_THAT(Err(R"("\uD83D\u0041")").message(), HasSubstr("unpaired high"));
  EXPECT_THAT(Err(R"("\uD83D\uD83D")").message(), HasSubstr("unpaired high"));
  EXPECT_EQ(Canon(R"("\uD83D\uDE02")"), "\"\xF0\x9F\x98\x82\"");
}

TEST(CanonicalJson, RejectsDuplicateKeysAfterUnescaping) {
  Status s = Err(R"({"a":1,"\u0061":2})");
  EXPECT_THAT(s.message(), HasSubstr("line 1, column 8 (byte 7)"));
  EXPECT_THAT(s.message(), HasSubstr("duplicate object member name \"a\""));
  EXPECT_THAT(Err(R"({"x":{"b":1,"b":1}})").message(), HasSubstr("\"b\""));
  // Duplicates are an error even for a member that would be dropped.
  EXPECT_THAT(Err(R"({"_meta":1,"_meta":2})").message(),
              HasSubstr("duplicate"));
  // Same name in different objects is fine.
  EXPECT_EQ(Canon(R"({"a":{"a":1}})"), R"({"a":{"a":1}})");
}

TEST(CanonicalJson, RejectsRawControlCharactersAndBadEscapes) {
  EXPECT_THAT(Err("\"a\tb\"").message(),
              HasSubstr("raw control character U+0009"));
  EXPECT_THAT(Err("\"a\nb\"").message(), HasSubstr("U+000A"));
  EXPECT_THAT(Err(R"("\x")").message(), HasSubstr("invalid escape"));
  EXPECT_THAT(Err(R"("\u12G4")").message(), HasSubstr("4 hex digits"));
  EXPECT_THAT(Err("\"abc").message(), HasSubstr("unterminated string"));
  EXPECT_EQ(Canon(R"("\u0000\u001F\u007f\/")"), "\"\\u0000\\u001f\x7f/\"");
}

TEST(CanonicalJson, RejectsStructuralErrorsWithLineAndColumn) {
  Status s = Err("{\n  \"a\": 1,\n  \"b\" 2\n}");
  EXPECT_THAT(s.message(),
              HasSubstr("line 3, column 7 (byte 18): unexpected '2': expected "
                        "':' after member name"));
  EXPECT_THAT(Err("[1,]").message(), HasSubstr("unexpected ']'"));
  EXPECT_THAT(Err("{\"a\":1,}").message(),
              HasSubstr("expected a string member"));
  EXPECT_THAT(Err("[1 2]").message(), HasSubstr("expected ',' or ']'"));
  EXPECT_THAT(Err("[1").message(), HasSubstr("unclosed array"));
  EXPECT_THAT(Err("{").message(), HasSubstr("unclosed object"));
  EXPECT_THAT(Err("tru").message(), HasSubstr("expected 'true'"));
  EXPECT_THAT(Err("").message(), HasSubstr("empty input"));
  EXPECT_THAT(Err("  \n").message(), HasSubstr("only whitespace"));
  EXPECT_THAT(Err("\xEF\xBB\xBF{}").message(), HasSubstr("byte order mark"));
}

TEST(CanonicalJson, RejectsTrailingGarbage) {
  EXPECT_THAT(
      Err("{} x").message(),
      HasSubstr("column 4 (byte 3): unexpected 'x' after the JSON value"));
  EXPECT_THAT(Err("1 2").message(), HasSubstr("trailing garbage"));
  EXPECT_THAT(Err("{}{}").message(), HasSubstr("trailing garbage"));
  EXPECT_EQ(Canon(" \r\n\t{} \n"), "{}");
}

std::string Nested(int32_t depth) {
  return std::string(static_cast<size_t>(depth), '[') + "0" +
         std::string(static_cast<size_t>(depth), ']');
}

TEST(CanonicalJson, AcceptsNestingAtTheLimitAndRejectsOneDeeper) {
  EXPECT_EQ(Canon(Nested(kDefaultMaxJsonDepth)), Nested(kDefaultMaxJsonDepth));
  Status s = Err(Nested(kDefaultMaxJsonDepth + 1));
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("byte 128): nesting depth exceeds the "
                                     "limit of 128 levels"));
  CanonicalOptions o;
  o.max_depth = 2;
  EXPECT_EQ(Canon(R"({"a":[1]})", o), R"({"a":[1]})");
  EXPECT_EQ(Err(R"({"a":[{}]})", o).code(), StatusCode::kResourceExhausted);
  // A hostile depth fails fast instead of overflowing the stack.
  EXPECT_EQ(Err(std::string(1000000, '[')).code(),
            StatusCode::kResourceExhausted);
}

TEST(CanonicalJson, ValuePathEnforcesTheSameDepthLimit) {
  nlohmann::json v = 0;
  for (int i = 0; i < kDefaultMaxJsonDepth; ++i) v = nlohmann::json::array({v});
  Result<std::string> ok = CanonicalizeJsonValue(v);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, Nested(kDefaultMaxJsonDepth));
  v = nlohmann::json::array({v});
  Result<std::string> bad = CanonicalizeJsonValue(v);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kResourceExhausted);
}

TEST(CanonicalJson, RejectsInputLargerThanMaxBytes) {
  const std::string big = "\"" + std::string(5000, 'x') + "\"";
  CanonicalOptions o;
  o.max_bytes = 4096;
  Status s = Err(big, o);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("5002 bytes, larger than the limit of "
                                     "4096 bytes"));
  o.max_bytes = 5002;
  EXPECT_EQ(Canon(big, o), big);
  o.max_bytes = 0;  // unlimited
  const std::string huge = "[" + std::string(20u << 20, ' ') + "]";
  EXPECT_EQ(Canon(huge, o), "[]");
  EXPECT_EQ(Err(huge).code(),
            StatusCode::kResourceExhausted);  // 16 MiB default
  Result<std::string> v =
      CanonicalizeJsonValue(nlohmann::json(std::string(5000, 'x')),
                            CanonicalOptions{.max_bytes = 4096});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kResourceExhausted);
}

TEST(CanonicalJson, ObjectMemberOrderAndWhitespaceAreIrrelevant) {
  EXPECT_EQ(
      Canon(R"({"b":1,"a":{"d":[1, 2],"c":null}})"),
      Canon("{ \"a\" : { \"c\" : null , \"d\" : [ 1 ,2 ] } ,\n\"b\":1.0 }"));
  EXPECT_EQ(Canon(R"({"b":1,"a":2})"), R"({"a":2,"b":1})");
}

TEST(CanonicalJson, SortsMembersByUtf16CodeUnitsNotBytes) {
  // U+FB33 (UTF-8 EF AC B3) sorts AFTER U+1F602 (UTF-16 D83D DE02) although
  // its UTF-8 bytes sort before F0 9F 98 82.
  const std::string smiley = "\xF0\x9F\x98\x82";
  const std::string dalet = "\xEF\xAC\xB3";
  const std::string in = "{\"" + dalet + "\":1,\"" + smiley + "\":2}";
  const std::string want = "{\"" + smiley + "\":2,\"" + dalet + "\":1}";
  EXPECT_EQ(Canon(in), want);
  EXPECT_EQ(*CanonicalizeJsonValue(nlohmann::json::parse(in)), want);
  EXPECT_TRUE(jcs::Utf16Less("a", "ab"));
  EXPECT_FALSE(jcs::Utf16Less("ab", "ab"));
  EXPECT_TRUE(jcs::Utf16Less("\xED\x9F\xBF", smiley));  // U+D7FF < U+1F602
}

TEST(CanonicalJson, DropsMetaAndIgnoredFieldsOnlyAtTopLevel) {
  const std::string in =
      R"({"_meta":{"progressToken":7},"nonce":"x","q":{"_meta":1,"nonce":2}})";
  CanonicalOptions o;
  o.ignore_fields = {"nonce"};
  EXPECT_EQ(Canon(in, o), R"({"q":{"_meta":1,"nonce":2}})");
  EXPECT_EQ(Canon(in), R"({"nonce":"x","q":{"_meta":1,"nonce":2}})");
  EXPECT_EQ(
      Canon(in, Plain()),
      R"({"_meta":{"progressToken":7},"nonce":"x","q":{"_meta":1,"nonce":2}})");
  EXPECT_EQ(*CanonicalizeJsonValue(nlohmann::json::parse(in), o),
            R"({"q":{"_meta":1,"nonce":2}})");
  // Dropping applies to the top-level object only; arrays are untouched.
  EXPECT_EQ(Canon(R"([{"_meta":1}])"), R"([{"_meta":1}])");
  // A dropped member is still validated.
  EXPECT_THAT(Err(R"({"_meta":[1,}, "a":1})").message(),
              HasSubstr("unexpected '}'"));
}

TEST(CanonicalJson, ValuePathRejectsInvalidUtf8AndBinary) {
  nlohmann::json v = {{"k", std::string("\xC0\xAF")}};
  Result<std::string> r = CanonicalizeJsonValue(v);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("\"/k\""));
  EXPECT_THAT(r.status().message(), HasSubstr("overlong"));
  nlohmann::json b = nlohmann::json::binary({1, 2});
  EXPECT_FALSE(CanonicalizeJsonValue(b).ok());
}

TEST(CanonicalJson, ValuePathRoutesEveryIntegerThroughDouble) {
  const std::string in =
      R"([9007199254740993,-9223372036854775808,18446744073709551615,1.5,-0])";
  EXPECT_EQ(*CanonicalizeJsonValue(nlohmann::json::parse(in)), Canon(in));
  EXPECT_EQ(
      Canon(in),
      "[9007199254740992,-9223372036854776000,18446744073709552000,1.5,0]");
}

// --- NumberForm::kExactIntegers (cache keys) -----------------------------

CanonicalOptions Exact() {
  CanonicalOptions o = Plain();
  o.numbers = NumberForm::kExactIntegers;
  return o;
}

TEST(ExactIntegers, KeepIntegersADoubleCannotHold) {
  // RFC 8785 equates them (one double); a Python/Go/Rust/Java server does not.
  EXPECT_EQ(Canon("9007199254740993"), Canon("9007199254740992"));
  EXPECT_EQ(Canon("9007199254740993", Exact()), "9007199254740993");
  EXPECT_EQ(Canon("9007199254740992", Exact()), "9007199254740992");
  EXPECT_EQ(Canon("-9007199254740993", Exact()), "-9007199254740993");
  EXPECT_EQ(Canon("18446744073709551617", Exact()), "18446744073709551617");
  EXPECT_EQ(Canon("[123456789012345678901234567890]", Exact()),
            "[123456789012345678901234567890]");
}

TEST(ExactIntegers, SpellingsOfOneIntegerStillAgree) {
  for (const char* spelling :
       {"9007199254740993", "9007199254740993.0", "9.007199254740993e15",
        "90071992547409930e-1", "0.9007199254740993E+16"}) {
    EXPECT_EQ(Canon(spelling, Exact()), "9007199254740993") << spelling;
  }
  // Exactly representable integers keep their RFC 8785 text, so 1e16-style
  // and plain spellings share it.
  EXPECT_EQ(Canon("1e16", Exact()), "10000000000000000");
  EXPECT_EQ(Canon("10000000000000000", Exact()), "10000000000000000");
  EXPECT_EQ(Canon("1e300", Exact()), "1e+300");
  EXPECT_EQ(Canon("1" + std::string(300, '0'), Exact()), "1e+300");
  EXPECT_EQ(Canon("1e21", Exact()), "1e+21");
}

TEST(ExactIntegers, TextIsOneToOneOverIntegers) {
  // 2^60 is a double, but RFC 8785 prints it 1152921504606847000, which is
  // another integer: each keeps its own text.
  EXPECT_EQ(Canon("1152921504606846976", Exact()), "1152921504606846976");
  EXPECT_EQ(Canon("1152921504606847000", Exact()), "1152921504606847000");
  // Beyond 1e21 RFC 8785 writes exponents: 10^21 + 1 is not 1e+21.
  EXPECT_EQ(Canon("1000000000000000000001", Exact()), "1000000000000000000001");
}

TEST(ExactIntegers, NonIntegersKeepDoubleSemantics) {
  EXPECT_EQ(Canon("9007199254740993.5", Exact()), "9007199254740994");
  EXPECT_EQ(Canon("0.1000000000000000000001", Exact()), "0.1");
  EXPECT_EQ(Canon("1.0", Exact()), "1");
  EXPECT_EQ(Canon("-0", Exact()), "0");
  EXPECT_EQ(Canon("0e999999999", Exact()), "0");
  // Overflow is still an error, as in RFC 8785 (I-JSON).
  EXPECT_THAT(Err("1e400", Exact()).message(), HasSubstr("out of the range"));
}

// The exact value a canonical number text denotes, for the property tests.
jcs::DecimalParts Value(std::string_view number) {
  return jcs::ParseDecimal(number);
}
bool SameValue(std::string_view a, std::string_view b) {
  const jcs::DecimalParts x = Value(a);
  const jcs::DecimalParts y = Value(b);
  return x.negative == y.negative && x.digits == y.digits &&
         x.exponent == y.exponent;
}

// The proof that keys of ordinary input did not change: whenever a document
// holds no integer a double cannot hold (FindInexactIntegers is empty), the
// key form is byte for byte the RFC 8785 form; where it differs, each
// integer text denotes the input's exact value.
TEST(ExactIntegers, OrdinaryDocumentsAreByteForByteRfc8785) {
  // Every JCS vector.
  for (const std::string& name : VectorNames()) {
    const std::optional<std::string> input = ReadTestData("jcs/input/" + name);
    ASSERT_TRUE(input) << name;
    Result<std::vector<std::string>> found = FindInexactIntegers(*input);
    ASSERT_TRUE(found.ok()) << name;
    EXPECT_TRUE(found->empty()) << name;
    EXPECT_EQ(Canon(*input, Exact()), Canon(*input, Plain())) << name;
  }
  // Every one of the 100k ECMAScript number texts, and the 17-digit
  // spelling of the same double (what %.17g clients send).
  std::ifstream in(kJcsDir / "es6-numbers-100k.txt");
  ASSERT_TRUE(in.good());
  std::string line;
  int64_t checked = 0;
  int64_t changed = 0;
  while (std::getline(in, line)) {
    const size_t comma = line.find(',');
    const std::string shown = line.substr(comma + 1);
    const double d =
        std::bit_cast<double>(std::stoull(line.substr(0, comma), nullptr, 16));
    char g17[40];
    std::snprintf(g17, sizeof g17, "%.17g", d);
    for (const std::string& literal : {shown, std::string(g17)}) {
      const std::string rfc = Canon(literal, Plain());
      const std::string key = Canon(literal, Exact());
      const Result<std::vector<std::string>> found =
          FindInexactIntegers(literal);
      ASSERT_TRUE(found.ok()) << literal;
      if (found->empty()) {
        if (key != rfc && ++changed <= 5) ADD_FAILURE() << literal;
      } else if (!SameValue(key, literal) && ++changed <= 5) {
        ADD_FAILURE() << literal << " -> " << key;
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 200000);
  EXPECT_EQ(changed, 0);
}

TEST(ExactIntegers, EveryIntegerGetsATextDenotingExactlyIt) {
  std::mt19937_64 rng(20261122);
  std::vector<std::string> literals;
  for (int64_t base :
       {int64_t{1} << 53, int64_t{1} << 60, int64_t{1} << 62,
        int64_t{999999999999999}, int64_t{1000000000000000000}}) {
    for (int64_t d = -3; d <= 3; ++d) {
      literals.push_back(std::to_string(base + d));
      literals.push_back(std::to_string(-(base + d)));
    }
  }
  literals.push_back("18446744073709551615");
  literals.push_back("-9223372036854775808");
  for (int i = 0; i < 20000; ++i) {
    literals.push_back(std::to_string(rng() >> (rng() % 64)));
  }
  std::set<std::string> texts;
  std::set<std::string> values;
  for (const std::string& literal : literals) {
    const std::string key = Canon(literal, Exact());
    EXPECT_TRUE(SameValue(key, literal)) << literal << " -> " << key;
    // One-to-one: distinct integers, distinct texts.
    const jcs::DecimalParts v = Value(literal);
    const std::string value_id =
        (v.negative ? "-" : "") + v.digits + "e" + std::to_string(v.exponent);
    if (values.insert(value_id).second) {
      EXPECT_TRUE(texts.insert(key).second) << literal << " -> " << key;
    }
    // The value path writes nlohmann's exact integers the same way.
    EXPECT_EQ(*CanonicalizeJsonValue(nlohmann::json::parse(literal), Exact()),
              key)
        << literal;
  }
}

TEST(ExactIntegers, DefaultOptionsStayPlainRfc8785) {
  EXPECT_EQ(CanonicalOptions().numbers, NumberForm::kRfc8785);
  EXPECT_EQ(Canon("[9007199254740993]"), "[9007199254740992]");
  EXPECT_EQ(*CanonicalizeJsonValue(nlohmann::json::parse("9007199254740993")),
            "9007199254740992");
}

TEST(ExactIntegers, ValuePathRefusesIntegersTheParserRounded) {
  // nlohmann stores these as doubles: their digits are gone.
  for (const char* in : {"9007199254740993.0", "18446744073709551617", "1e16",
                         "-9223372036854775809"}) {
    Result<std::string> r =
        CanonicalizeJsonValue(nlohmann::json::parse(in), Exact());
    ASSERT_FALSE(r.ok()) << in;
    EXPECT_THAT(r.status().message(), HasSubstr("may have lost digits"));
    // Plain RFC 8785 has nothing to lose.
    EXPECT_TRUE(CanonicalizeJsonValue(nlohmann::json::parse(in)).ok());
  }
  EXPECT_EQ(
      *CanonicalizeJsonValue(nlohmann::json::parse("[1.5,1e15]"), Exact()),
      "[1.5,1000000000000000]");
}

TEST(ExactIntegers, FindInexactIntegersNamesPointersInDocumentOrder) {
  Result<std::vector<std::string>> found = FindInexactIntegers(
      R"({"x~/y":18014398509481985,"a":[1,9007199254740993.0,2],)"
      R"("_meta":{"n":9007199254740993},"ok":9007199254740992})");
  ASSERT_TRUE(found.ok());
  // _meta is dropped from keys by default, so it is not reported.
  EXPECT_EQ(*found, (std::vector<std::string>{"/x~0~1y", "/a/1"}));
  EXPECT_EQ(*FindInexactIntegers("9007199254740993"),
            std::vector<std::string>{""});
  EXPECT_FALSE(FindInexactIntegers("[1,").ok());
}

}  // namespace
}  // namespace toolcache

namespace toolcache {
namespace {

// Short plain integers are copied as they are written (a fast path): the
// result must be exactly what converting to double and printing the
// ECMAScript form gives, for every length up to 15 digits and both signs.
TEST(CanonicalizeJsonFastPath, ShortIntegersMatchTheirEs6Form) {
  std::mt19937_64 rng(7);
  std::vector<std::string> literals = {"0",
                                       "-0",
                                       "1",
                                       "-1",
                                       "9",
                                       "10",
                                       "999999999999999",
                                       "-999999999999999",
                                       "100000000000000"};
  for (int digits = 1; digits <= 16; ++digits) {
    for (int i = 0; i < 2000; ++i) {
      std::string s(1, static_cast<char>('1' + rng() % 9));
      for (int d = 1; d < digits; ++d) {
        s.push_back(static_cast<char>('0' + rng() % 10));
      }
      literals.push_back(rng() % 2 ? s : "-" + s);
    }
  }
  for (const std::string& lit : literals) {
    std::string want;
    jcs::AppendEs6Number(std::stod(lit), &want);
    Result<std::string> got = CanonicalizeJson("[" + lit + "]");
    ASSERT_TRUE(got.ok()) << lit;
    EXPECT_EQ(*got, "[" + want + "]") << lit;
  }
}

}  // namespace
}  // namespace toolcache
