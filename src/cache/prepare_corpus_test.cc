// Arguments parsed once: the preparation stage's outputs for a corpus of
// edge-case arguments (big integers, -0, 1e400, duplicate member names,
// unicode escapes, deep nesting, a byte order mark, 17 MiB) are pinned to
// what the previous path (three parsers: the heuristic's, the
// canonicalizer's, the feature builder's) produced, so keys, verdicts and
// policy features stay byte-identical and entries written by an earlier
// binary are still hits.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "src/cache/prepare.h"
#include "toolcache/canonical_json.h"
#include "toolcache/classifier.h"
#include "toolcache/config.h"
#include "toolcache/request_features.h"

namespace toolcache::cache_internal {
namespace {

std::string Nest(int levels) {
  std::string s = R"({"a":)";
  for (int i = 0; i < levels; ++i) s += "[";
  s += "1";
  for (int i = 0; i < levels; ++i) s += "]";
  return s + R"(,"b":2})";
}

// The corpus: a name and the arguments text.
std::vector<std::pair<std::string, std::string>> Corpus() {
  std::vector<std::pair<std::string, std::string>> c = {
      {"big_integer", R"({"id":9007199254740993,"q":"x"})"},
      {"beyond_uint64", R"({"n":18446744073709551617,"z":1})"},
      {"beyond_int64", R"({"n":-9223372036854775809,"z":1})"},
      {"thirty_digits", R"({"big":123456789012345678901234567890,"k":1})"},
      {"minus_zero", R"({"n":-0,"m":-0.0})"},
      {"overflow", R"({"x":1e400,"y":1})"},
      {"duplicate", R"({"a":1,"a":2})"},
      {"duplicate_escaped", R"({"a":1,"\u0061":2})"},
      {"duplicate_action", R"({"action":"send","action":"read"})"},
      {"unicode_escapes",
       R"({"s":"\u00e9\ud83d\ude00","t":"\u0000\u001f\u007f"})"},
      {"escapes", R"({"a":"\"\\\/\b\f\n\r\t","b":0})"},
      {"floats", R"({"f":0.000001,"g":1e21,"h":1e-7})"},
      {"exponents", R"({"c":-1.5e-3,"d":1.0,"e":1E+2})"},
      {"nested_category",
       R"({"a":{"\ue000":1,"\ud83d\ude00":[0.5,1e21]},"b":1})"},
      {"non_bmp_names", R"({"\ud83d\ude00":1,"\ue000":2})"},
      {"meta_first", R"({"_meta":{"progressToken":1},"q":"x"})"},
      {"action_send", R"({"action":"send","to":"x"})"},
      {"action_read", R"({"action":"read","id":1})"},
      {"action_escaped", R"({"\u0061ction":"\u0073end","id":1})"},
      {"whitespace", " \n{\"b\" : [ 1 , 2 ] ,\t\"a\" : null }\r\n"},
      {"deep_ok", Nest(100)},
      {"deep_too_deep", Nest(130)},
      {"bom", "\xEF\xBB\xBF{\"a\":1}"},
      {"array", "[1,2]"},
      {"string", R"("s")"},
      {"number", "1"},
      {"lone_surrogate", R"({"a":"\ud800"})"},
      {"invalid_utf8", "{\"a\":\"\xC0\xAF\"}"},
      {"trailing", R"({"a":1} x)"},
      {"empty", "{}"},
  };
  // Larger than the canonicalizer's 16 MiB limit, with an action argument.
  c.emplace_back("seventeen_mib", R"({"action":"send","content":")" +
                                      std::string(17u << 20, 'x') + "\"}");
  return c;
}

Config CorpusConfig() {
  Config c;
  c.tools["get_configured"].parameter_category = "f";
  c.tools["get_configured"].cost = 2;
  return c;
}

ToolInfo ReadOnly(std::string name) {
  ToolInfo t;
  t.name = std::move(name);
  t.annotations = ToolAnnotations{.read_only = true, .open_world = false};
  return t;
}

// Everything Prepare derives, as one line.
std::string Fingerprint(const PreparedCall& p) {
  std::string s =
      std::string(VerdictReasonName(p.verdict.reason)) +
      (p.verdict.cacheable ? " cacheable" : " bypass") +
      " type=" + std::to_string(static_cast<int>(p.verdict.request_type)) +
      " pc=" + p.verdict.parameter_category + " detail=" + p.verdict.detail;
  if (p.refusal) s += " refusal=" + p.refusal->name + ":" + p.refusal->detail;
  if (p.key) {
    s += " key=" + p.key->DigestHex() +
         " canonical=" + p.key->canonical_args.substr(0, 120);
  }
  s += " category=" + std::to_string(p.category) +
       " cost=" + std::to_string(p.cost);
  for (const std::string& r : p.resources) s += " res=" + r;
  return s;
}

std::vector<std::string> Fingerprints() {
  CallPreparer prep{CorpusConfig()};
  const ToolInfo read_only = ReadOnly("get_value");
  const ToolInfo configured = ReadOnly("get_configured");
  std::vector<std::string> out;
  for (const auto& [name, args] : Corpus()) {
    for (const ToolInfo* tool : {&read_only, &configured}) {
      out.push_back(name + " " + tool->name + ": " +
                    Fingerprint(prep.Prepare({.server = "s",
                                              .scope = "t",
                                              .tool = tool->name,
                                              .arguments_json = args},
                                             tool, /*read_resources=*/true)));
    }
    // A multi-purpose tool classified from its name and its action argument.
    out.push_back(name + " manage_messages: " +
                  Fingerprint(prep.Prepare({.server = "s",
                                            .scope = "t",
                                            .tool = "manage_messages",
                                            .arguments_json = args},
                                           nullptr)));
  }
  return out;
}

// testdata/prepare_corpus.golden holds what the three-parser path gave
// (bff0b8e1). Regenerate only for a deliberate, reviewed change:
//   TOOLCACHE_PRINT_CORPUS=1 toolcache_cache_test
//     --gtest_filter=PrepareCorpusTest.* | grep '^[a-z]' > golden
TEST(PrepareCorpusTest, OutputsMatchThePreviousPathByteForByte) {
  const std::vector<std::string> got = Fingerprints();
  if (getenv("TOOLCACHE_PRINT_CORPUS") != nullptr) {
    for (const std::string& f : got) printf("%s\n", f.c_str());
    return;
  }
  std::ifstream in(std::string(TOOLCACHE_SOURCE_DIR) +
                   "/src/cache/testdata/prepare_corpus.golden");
  ASSERT_TRUE(in) << "missing golden file";
  std::vector<std::string> want;
  for (std::string line; std::getline(in, line);) want.push_back(line);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], want[i]);
}

// The same corpus through the two paths of each reader: the feature
// builder's text path (nlohmann over the canonical text) against its
// parsed path, and the classifier's text path (the heuristic's own parse)
// against the parsed one, for every document the canonicalizer accepts.
TEST(PrepareCorpusTest, ParsedAndTextPathsOfEachReaderAgree) {
  const Config config = CorpusConfig();
  FeatureBuilder features(config);
  Classifier classifier(config);
  const ToolInfo tools[] = {ReadOnly("get_value"), ReadOnly("get_configured"),
                            ToolInfo{.name = "manage_messages"}};
  size_t accepted = 0;
  for (const auto& [name, args] : Corpus()) {
    Result<CanonicalArguments> parsed = CanonicalizeArguments(args);
    if (!parsed.ok()) continue;
    ++accepted;
    for (const ToolInfo& tool : tools) {
      Result<RequestFeatures> text =
          features.Build({.server = "s",
                          .tool = tool.name,
                          .arguments_json = parsed->canonical});
      Result<RequestFeatures> once =
          features.Build({.server = "s",
                          .tool = tool.name,
                          .arguments_json = parsed->canonical,
                          .parsed = &*parsed});
      ASSERT_TRUE(text.ok() && once.ok()) << name;
      EXPECT_EQ(text->category, once->category) << name << " " << tool.name;
      EXPECT_EQ(text->category_feature, once->category_feature) << name;
      const Verdict a = classifier.ClassifyCall(tool, args);
      const Verdict b = classifier.ClassifyCall(tool, args, &*parsed);
      EXPECT_EQ(a.cacheable, b.cacheable) << name << " " << tool.name;
      EXPECT_EQ(a.reason, b.reason) << name << " " << tool.name;
      EXPECT_EQ(a.request_type, b.request_type) << name << " " << tool.name;
      EXPECT_EQ(a.parameter_category, b.parameter_category) << name;
      EXPECT_EQ(a.detail, b.detail) << name << " " << tool.name;
    }
  }
  EXPECT_GE(accepted, 15u);
}

// Nested category values whose nlohmann dump differs from their canonical
// text (numbers, member order): the parsed path writes nlohmann's form.
TEST(PrepareCorpusTest, CategoryTextIsNlohmannsDumpOfTheValue) {
  FeatureBuilder features{Config()};
  for (
      std::string_view args :
      {R"({"a":{"\ue000":1,"\ud83d\ude00":[0.5,1e21,-0,1e-7]},"b":1})",
       R"({"a":[18446744073709551615,18446744073709551616,-9223372036854775808,-9223372036854775809],"b":1})",
       R"({"a":{"z":{"y":"\u0001\"","x":[]},"é":{},"e":null},"b":1})",
       R"({"a":123456789012345680000,"b":1})"}) {
    Result<CanonicalArguments> parsed = CanonicalizeArguments(args);
    ASSERT_TRUE(parsed.ok()) << args;
    Result<RequestFeatures> text =
        features.Build({.tool = "t", .arguments_json = parsed->canonical});
    Result<RequestFeatures> once = features.Build(
        {.tool = "t", .arguments_json = parsed->canonical, .parsed = &*parsed});
    ASSERT_TRUE(text.ok() && once.ok());
    EXPECT_EQ(text->category, once->category) << args;
  }
}

// A call's arguments are parsed once on the request path: by the key's
// canonicalizer, whose members the heuristic's argument rules and the
// feature builder read. (Before: three parses -- heuristic, key, features.)
TEST(PrepareCorpusTest, ArgumentsAreParsedOncePerCall) {
  CallPreparer prep{CorpusConfig()};
  const ToolInfo tool = ReadOnly("get_value");
  for (std::string_view args :
       {R"({"action":"read","id":1,"q":{"x":[1,2]}})", R"({"q":"x"})", "{}"}) {
    const uint64_t before = ArgumentParsesOnThisThread();
    PreparedCall p = prep.Prepare(
        {.server = "s", .tool = "get_value", .arguments_json = args}, &tool,
        /*read_resources=*/true);
    ASSERT_TRUE(p.key) << args;
    EXPECT_EQ(ArgumentParsesOnThisThread() - before, 1u) << args;
    // A call classified from its name alone (the heuristic reads the
    // arguments) parses once too.
    const uint64_t before2 = ArgumentParsesOnThisThread();
    prep.Prepare(
        {.server = "s", .tool = "manage_messages", .arguments_json = args},
        nullptr);
    EXPECT_EQ(ArgumentParsesOnThisThread() - before2, 1u) << args;
  }
  // A memoized verdict: the key still needs the one parse.
  VerdictMemo memo;
  for (int i = 0; i < 2; ++i) {
    const uint64_t before = ArgumentParsesOnThisThread();
    PreparedCall p = prep.Prepare(
        {.server = "s", .tool = "get_value", .arguments_json = R"({"a":1})"},
        &tool, false, &memo);
    ASSERT_TRUE(p.key);
    EXPECT_EQ(ArgumentParsesOnThisThread() - before, 1u) << i;
  }
}

}  // namespace
}  // namespace toolcache::cache_internal
