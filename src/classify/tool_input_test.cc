// Tests for reading tool definitions and for the evaluation, including the
// pinned metrics on the GitHub MCP server tool list (a change to these
// numbers must be deliberate).
#include "src/classify/tool_input.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/support/test_data.h"

namespace toolcache::classify {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Names(const std::vector<LabeledTool>& tools) {
  std::vector<std::string> out;
  for (const LabeledTool& t : tools) out.push_back(t.info.name);
  return out;
}

TEST(ToolInputTest, ReadsToolsListResultAndJsonRpcResponse) {
  const char* list = R"({"tools":[
      {"name":"get_a","annotations":{"readOnlyHint":true}},
      {"name":"b","inputSchema":{"type":"object","properties":{"z":{},"a":{}}}}]})";
  Result<std::vector<LabeledTool>> t = ParseToolDefinitions(list, "l.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_THAT(Names(*t), ElementsAre("get_a", "b"));
  EXPECT_EQ((*t)[0].info.annotations->read_only, true);
  // Property order is the file's (ordered), so "z" comes first.
  EXPECT_EQ(Classifier().Classify((*t)[1].info).parameter_category, "z");

  Result<std::vector<LabeledTool>> rpc = ParseToolDefinitions(
      R"({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"x"}]}})", "r");
  ASSERT_TRUE(rpc.ok());
  EXPECT_THAT(Names(*rpc), ElementsAre("x"));
  Result<std::vector<LabeledTool>> arr =
      ParseToolDefinitions(R"([{"name":"x"},{"name":"y"}])", "a");
  ASSERT_TRUE(arr.ok());
  EXPECT_EQ(arr->size(), 2u);
}

TEST(ToolInputTest, ReadsJsonLinesWithLineNumbers) {
  Result<std::vector<LabeledTool>> t = ParseToolDefinitions(
      "{\"name\":\"a\"}\n\n{\"name\":\"b\",\"description\":\"d\"}\n",
      "t.jsonl");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_THAT(Names(*t), ElementsAre("a", "b"));
  EXPECT_EQ((*t)[1].line, 3u);
  Result<std::vector<LabeledTool>> bad =
      ParseToolDefinitions("{\"name\":\"a\"}\n{\"name\":\n", "t.jsonl");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("t.jsonl:2:"));
  Result<std::vector<LabeledTool>> noname =
      ParseToolDefinitions("{\"name\":\"a\"}\n{\"title\":\"b\"}\n", "t.jsonl");
  ASSERT_FALSE(noname.ok());
  EXPECT_THAT(noname.status().message(), HasSubstr("t.jsonl:2:"));
  EXPECT_THAT(noname.status().message(), HasSubstr("'name'"));
}

TEST(ToolInputTest, ReadsCsvWithQuotedMultiLineFields) {
  const char* csv =
      "tool,snap,readOnlyHint,openWorldHint,description\n"
      "get_a,x,True,,\"Line one,\nline \"\"two\"\"\"\n"
      "b,y,False,false,plain\n";
  Result<std::vector<LabeledTool>> t = ParseToolDefinitions(csv, "t.csv");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_THAT(Names(*t), ElementsAre("get_a", "b"));
  EXPECT_EQ((*t)[0].info.description, "Line one,\nline \"two\"");
  EXPECT_EQ((*t)[0].info.annotations->read_only, true);
  EXPECT_FALSE((*t)[0].info.annotations->open_world.has_value());
  EXPECT_EQ((*t)[1].line, 4u);
  EXPECT_EQ((*t)[1].info.annotations->open_world, false);
}

TEST(ToolInputTest, BadInputGetsAMessageNamingTheProblem) {
  auto message = [](std::string_view text) {
    Result<std::vector<LabeledTool>> r = ParseToolDefinitions(text, "in");
    return r.ok() ? std::string("OK") : r.status().message();
  };
  EXPECT_THAT(message(""), HasSubstr("empty input"));
  EXPECT_THAT(message("just some words\nmore"), HasSubstr("'name'"));
  EXPECT_THAT(message("[1, 2"), HasSubstr("invalid JSON"));
  EXPECT_THAT(message(R"({"tools": []})"), HasSubstr("no tool definitions"));
  EXPECT_THAT(message(R"({"jsonrpc":"2.0","id":1,"error":{"code":-1}})"),
              HasSubstr("error"));
  EXPECT_THAT(message("name,readOnlyHint\nx,perhaps\n"),
              HasSubstr("in:2: column 'readOnlyHint'"));
  EXPECT_THAT(message("name,description\nx\n"), HasSubstr("in:2: 1 fields"));
  EXPECT_THAT(message("name\n\"unterminated\n"), HasSubstr("unterminated"));
}

TEST(ToolInputTest, BinaryAndNonUtf8InputIsRejectedWithItsLine) {
  auto message = [](std::string_view text) {
    Result<std::vector<LabeledTool>> r = ParseToolDefinitions(text, "in");
    return r.ok() ? std::string("OK") : r.status().message();
  };
  using namespace std::string_view_literals;
  EXPECT_THAT(message("name\nx\0y\n"sv),
              HasSubstr("in:2: NUL byte at byte 6: this looks like a binary"));
  EXPECT_THAT(message("\x7f"
                      "ELF\x02\x01\x01\0\0"sv),
              HasSubstr("binary file"));
  // CSV: a Latin-1 e-acute on line 3.
  EXPECT_THAT(message("name,description\nget_a,ok\nget_b,caf\xe9\n"),
              HasSubstr("in:3: invalid UTF-8: missing continuation byte at "
                        "byte 35 (tool definitions must be UTF-8 text)"));
  // JSON Lines: an overlong '/' and a UTF-8-encoded surrogate.
  EXPECT_THAT(message("{\"name\":\"a\"}\n{\"name\":\"\xC0\xAF\"}\n"),
              HasSubstr("in:2: invalid UTF-8: overlong"));
  EXPECT_THAT(message("{\"name\":\"\xED\xA0\x80\"}\n"),
              HasSubstr("in:1: invalid UTF-8: encoded surrogate"));
}

TEST(ToolInputTest, SkipsAUtf8ByteOrderMark) {
  Result<std::vector<LabeledTool>> json =
      ParseToolDefinitions("\xEF\xBB\xBF{\"tools\":[{\"name\":\"a\"}]}", "j");
  ASSERT_TRUE(json.ok()) << json.status().message();
  EXPECT_THAT(Names(*json), ElementsAre("a"));
  Result<std::vector<LabeledTool>> csv =
      ParseToolDefinitions("\xEF\xBB\xBFname\nb\n", "c");
  ASSERT_TRUE(csv.ok()) << csv.status().message();
  EXPECT_THAT(Names(*csv), ElementsAre("b"));
}

TEST(ToolInputTest, ConfusionMetrics) {
  Confusion c{.tp = 30, .fp = 1, .tn = 19, .fn = 0};  // the paper's Table 2
  EXPECT_DOUBLE_EQ(c.Accuracy(), 0.98);
  EXPECT_NEAR(c.Precision(), 0.968, 5e-4);
  EXPECT_DOUBLE_EQ(c.Recall(), 1.0);
  EXPECT_NEAR(c.F1(), 0.984, 5e-4);
  EXPECT_EQ(Confusion().Precision(), 0);
  EXPECT_EQ(Confusion().F1(), 0);
}

std::vector<LabeledTool> GithubTools() {
  const std::string path =
      testing::TestDataPath("classify/github-mcp-server-tools.csv");
  const std::optional<std::string> text = testing::ReadFileOrFail(path);
  if (!text) return {};
  Result<std::vector<LabeledTool>> t = ParseToolDefinitions(*text, path);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? *t : std::vector<LabeledTool>();
}

TEST(ToolInputTest, EvaluationIgnoresTheAnnotationsItScoresAgainst) {
  // A tool the heuristic cannot read, labeled read-only: the evaluation must
  // not see the label, so it is a (safe) lost opportunity.
  std::vector<LabeledTool> tools(1);
  tools[0].info.name = "frobnicate";
  tools[0].info.annotations =
      ToolAnnotations{.read_only = true, .open_world = false};
  Evaluation e = Evaluate(Classifier(), tools);
  EXPECT_EQ(e.command_positive.fp, 1u);
  EXPECT_THAT(e.lost, ElementsAre("frobnicate"));
}

// Pinned: the heuristic on the GitHub MCP server's 117 tools (readOnlyHint is
// the ground truth; positive class = COMMAND).
TEST(ToolInputTest, GithubMcpServerMetricsArePinned) {
  std::vector<LabeledTool> tools = GithubTools();
  ASSERT_EQ(tools.size(), 117u);
  Evaluation e = Evaluate(Classifier(), tools);
  EXPECT_EQ(e.skipped, 0u);
  EXPECT_EQ(e.command_positive.tp, 59u);
  EXPECT_EQ(e.command_positive.fp, 0u);
  EXPECT_EQ(e.command_positive.tn, 58u);
  EXPECT_EQ(e.command_positive.fn, 0u);
  EXPECT_TRUE(e.costly.empty());
}

// Pinned ablation: with every name replaced by "tool", only title and
// description speak.
TEST(ToolInputTest, GithubMetricsWithoutToolNamesArePinned) {
  std::vector<LabeledTool> tools = GithubTools();
  for (LabeledTool& t : tools) t.info.name = "tool";
  Evaluation e = Evaluate(Classifier(), tools);
  EXPECT_EQ(e.command_positive.tp, 59u);
  EXPECT_EQ(e.command_positive.fp, 0u);
  EXPECT_EQ(e.command_positive.fn, 0u);
  for (LabeledTool& t : tools) t.info.title.clear();
  Evaluation d = Evaluate(Classifier(), tools);
  EXPECT_EQ(d.command_positive.tp, 59u);
  EXPECT_EQ(d.command_positive.fp, 1u);
  EXPECT_EQ(d.command_positive.tn, 57u);
  EXPECT_EQ(d.command_positive.fn, 0u);
}

}  // namespace
}  // namespace toolcache::classify
