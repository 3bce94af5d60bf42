// Tests for the trace converters, the tool table and the Python-call parser.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "src/sim/convert_bfcl.h"
#include "src/sim/convert_sources.h"
#include "src/sim/trace_convert.h"
#include "tests/support/test_data.h"
#include "toolcache/trace.h"

namespace toolcache {
namespace {

using ::testing::HasSubstr;

const std::string kFixtures = testing::TestDataPath("traces/");

// Converts the file at `path`; a missing file is a test failure naming it
// and an error Result (callers ASSERT on ok() before using the trace).
Result<ConvertResult> ConvertFile(TraceSource source, const std::string& path,
                                  ConvertOptions opts = {}) {
  std::ifstream in(path);
  if (!in.good()) {
    ADD_FAILURE() << "test data file missing: " << path;
    return NotFound("test data file missing: " + path);
  }
  opts.input_path = path;
  return ConvertTrace(source, in, path, opts);
}

Result<ConvertResult> ConvertText(TraceSource source, const std::string& text,
                                  ConvertOptions opts = {}) {
  std::istringstream in(text);
  return ConvertTrace(source, in, "in", opts);
}

double RepeatedFraction(const Trace& t) {
  std::set<std::string> keys;
  for (const TraceRecord& r : t.records)
    keys.insert(r.tool + '\0' + r.arguments);
  return 1.0 - static_cast<double>(keys.size()) /
                   static_cast<double>(t.records.size());
}

// ---------------------------------------------------------------- tool table

TEST(ToolTableTest, BuiltinTableFollowsPaperTable1ByName) {
  ToolTable t;
  EXPECT_EQ(t.Lookup("google_search").row, "search");
  EXPECT_DOUBLE_EQ(t.Lookup("google_search").profile.latency, 1.35);
  EXPECT_DOUBLE_EQ(t.Lookup("google_search").profile.cost, 0.005);
  EXPECT_EQ(t.Lookup("wikipedia_search").row, "wikipedia_fetch");
  EXPECT_DOUBLE_EQ(t.Lookup("wikipedia_search").profile.cost, 0);
  EXPECT_EQ(t.Lookup("get_weather").row, "weather");
  EXPECT_DOUBLE_EQ(t.Lookup("get_weather").profile.cost, 0.0016);
  EXPECT_EQ(t.Lookup("plan_route").row, "map_planning");
  EXPECT_EQ(t.Lookup("cd").row, "other");
  EXPECT_FALSE(t.Lookup("cd").from_user_table);
  EXPECT_EQ(t.Lookup("search", "wikipedia_fetch").row, "wikipedia_fetch");
  EXPECT_EQ(t.default_result_size(), 1024u);
}

TEST(ToolTableTest, CsvRowsThenStarThenBuiltin) {
  Result<ToolTable> t = ToolTable::Load(kFixtures + "tool_table.csv");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ToolTable::Match w = t->Lookup("get_weather");
  EXPECT_TRUE(w.from_user_table);
  EXPECT_DOUBLE_EQ(w.profile.latency, 0.25);
  EXPECT_DOUBLE_EQ(w.profile.ttl, 600);
  EXPECT_FALSE(w.profile.result_size.has_value());
  EXPECT_TRUE(std::isnan(t->Lookup("search_web").profile.ttl));
  ToolTable::Match other = t->Lookup("anything");
  EXPECT_EQ(other.row, "*");
  EXPECT_DOUBLE_EQ(other.profile.latency, 0.05);
}

TEST(ToolTableTest, JsonTableWithoutStarFallsBackToBuiltin) {
  Result<ToolTable> t = ToolTable::Load(kFixtures + "tool_table.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->Lookup("ls").profile.result_size, 512u);
  EXPECT_DOUBLE_EQ(t->Lookup("ls").profile.ttl, 0);
  EXPECT_FALSE(t->Lookup("get_weather").from_user_table);
}

TEST(ToolTableTest, RejectsBadTablesNamingThePlace) {
  struct Case {
    const char* text;
    const char* reason;
  } cases[] = {
      {"tool,latency,cost\nf,abc,0\n", "in:2: 'latency' must be a number"},
      {"tool,latency,cost\nf,1\n", "in:2: expected 3 columns, got 2"},
      {"name,latency\n", "in:1: the CSV header must name a 'tool' column"},
      {"tool,latency,cost,speed\nf,1,0,3\n", "unknown column 'speed'"},
      {"tool,latency,cost\nf,1,0\nf,2,0\n", "in:3: tool 'f' listed twice"},
      {"tool,latency,cost\nf,-1,0\n", "must be a non-negative number"},
      {R"([{"tool":"f","latency":1}])", "row 0: tool 'f' needs both"},
      {R"([{"latency":1}])", "row 0: must be an object with a string 'tool'"},
      {R"({"f": 3})", "tool 'f': must map to an object"},
      {"[1,", "in: not valid JSON"},
      {"tool,latency,cost\nf,1e7,0\n", "'latency' of tool 'f' exceeds"},
      {"tool,latency,cost,request_type\nf,1,0,READ\n",
       "'request_type' of tool 'f' must be INFORMATIONAL or COMMAND"},
      {R"([{"tool":"f","latency":1,"cost":1e9}])", "'cost' of tool 'f'"},
  };
  for (const Case& c : cases) {
    Result<ToolTable> t = ToolTable::Parse(c.text, "in");
    ASSERT_FALSE(t.ok()) << c.text;
    EXPECT_THAT(t.status().message(), HasSubstr(c.reason)) << c.text;
  }
}

TEST(ToolTableTest, SourceNamesParseAndUnknownIsAnError) {
  EXPECT_EQ(*ParseTraceSource("openai-chat"), TraceSource::kOpenAiChat);
  EXPECT_EQ(*ParseTraceSource("llmcompiler-parallelqa"),
            TraceSource::kLlmCompilerParallelQa);
  Result<TraceSource> bad = ParseTraceSource("openai");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("unknown trace source 'openai'"));
}

// ---------------------------------------------------------------- OpenAI

TEST(OpenAiConverterTest, PairsCallsWithToolMessagesExactly) {
  Result<ConvertResult> r =
      ConvertFile(TraceSource::kOpenAiChat, kFixtures + "openai_chat.json");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& recs = r->trace.records;
  ASSERT_EQ(recs.size(), 5u);
  // Parallel calls keep call order, although results came back reversed.
  EXPECT_EQ(recs[0].tool, "get_weather");
  EXPECT_EQ(recs[0].session, "conv-a");
  EXPECT_EQ(recs[0].user, "alice");
  EXPECT_EQ(recs[0].arguments, R"({"city":"Paris","units":"metric"})");
  EXPECT_EQ(recs[0].result_size, 10u);  // "18C, sunny"
  EXPECT_FALSE(recs[0].error);
  EXPECT_EQ(recs[1].tool, "search_web");
  EXPECT_EQ(recs[1].result_size, 16u);      // "9:00-18:00" + " daily"
  EXPECT_DOUBLE_EQ(recs[1].latency, 1.35);  // default table: search row
  // Same call with reordered keys and spaces: same canonical arguments and
  // the same result digest.
  EXPECT_EQ(recs[2].arguments, recs[0].arguments);
  EXPECT_EQ(recs[2].result_digest, recs[0].result_digest);
  EXPECT_THAT(recs[0].result_digest, ::testing::StartsWith("sha256:"));
  EXPECT_EQ(recs[0].result_digest.size(), 7u + 64u);
  // The source says is_error -> error; error-looking text alone does not.
  EXPECT_EQ(recs[3].tool, "send_email");
  EXPECT_TRUE(recs[3].error);
  EXPECT_EQ(recs[4].tool, "get_time");
  EXPECT_EQ(recs[4].session, "traj-1");  // no id: index
  EXPECT_EQ(recs[4].arguments, "{}");    // "" arguments
  EXPECT_FALSE(recs[4].error);
  // Chat logs do not say: the engine's classifier decides (by name here).
  EXPECT_EQ(recs[4].request_type, RequestType::kInformational);
  EXPECT_DOUBLE_EQ(recs[4].ttl, 60);  // real-time class: not cacheable
  EXPECT_EQ(recs[1].request_type, RequestType::kInformational);
  EXPECT_DOUBLE_EQ(recs[1].ttl, 300);  // search_web: the default TTL
  EXPECT_EQ(recs[3].request_type, RequestType::kCommand);  // hard list
  EXPECT_EQ(r->report.classified_calls, 5u);
  EXPECT_EQ(r->report.classified_tools, 4u);
  EXPECT_THAT(r->report.Summary(),
              HasSubstr("send_email: COMMAND (hard_list:"));
  EXPECT_EQ(r->report.calls_without_result, 1u);  // book_table
  EXPECT_EQ(r->report.results_without_call, 1u);  // call_9
  EXPECT_EQ(r->report.sessions, 2u);
  EXPECT_EQ(r->report.assigned_from_default, 5u);
  EXPECT_EQ(r->report.tools_from_default, 4u);
}

TEST(OpenAiConverterTest, UserToolTableIsUsedAndReported) {
  ConvertOptions opts;
  Result<ToolTable> table = ToolTable::Load(kFixtures + "tool_table.csv");
  ASSERT_TRUE(table.ok());
  opts.tool_table = std::make_shared<const ToolTable>(std::move(*table));
  Result<ConvertResult> r = ConvertFile(TraceSource::kOpenAiChat,
                                        kFixtures + "openai_chat.json", opts);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_DOUBLE_EQ(r->trace.records[0].latency, 0.25);
  EXPECT_DOUBLE_EQ(r->trace.records[0].ttl, 600);
  EXPECT_DOUBLE_EQ(r->trace.records[3].latency, 0.05);  // "*" row
  EXPECT_EQ(r->report.assigned_from_user, 5u);
  EXPECT_EQ(r->report.assigned_from_default, 0u);
  EXPECT_THAT(r->report.Summary(),
              HasSubstr("assigned latency/cost from --tool-table to 5 calls "
                        "of 4 tools"));
}

TEST(OpenAiConverterTest, ToolDefinitionsFeedTheClassifier) {
  // "frobnicate" means nothing to the name heuristic (unknown = COMMAND);
  // its definition's description ("Gets ...") makes it INFORMATIONAL.
  const std::string call =
      R"("messages":[{"role":"assistant","tool_calls":[{"id":"c1","function":{"name":"frobnicate","arguments":"{\"id\":1}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}])";
  Result<ConvertResult> bare =
      ConvertText(TraceSource::kOpenAiChat, "[{" + call + "}]");
  ASSERT_TRUE(bare.ok()) << bare.status().message();
  EXPECT_EQ(bare->trace.records[0].request_type, RequestType::kCommand);
  EXPECT_TRUE(std::isnan(bare->trace.records[0].ttl));
  Result<ConvertResult> defined = ConvertText(
      TraceSource::kOpenAiChat,
      R"([{"tools":[{"type":"function","function":{"name":"frobnicate","description":"Gets the widget's manual page.","parameters":{"type":"object","properties":{"id":{"type":"integer"}}}}}],)" +
          call + "}]");
  ASSERT_TRUE(defined.ok()) << defined.status().message();
  EXPECT_EQ(defined->trace.records[0].request_type,
            RequestType::kInformational);
  EXPECT_DOUBLE_EQ(defined->trace.records[0].ttl, 300);
  EXPECT_EQ(defined->report.classified_with_definition, 1u);
  EXPECT_THAT(defined->report.Summary(),
              HasSubstr("(1 with the source's tool definition"));
}

TEST(OpenAiConverterTest, ToolTableRequestTypeOverridesEverything) {
  Result<ToolTable> table = ToolTable::Parse(
      "tool,latency,cost,request_type\nget_weather,0.2,0,COMMAND\n"
      "send_email,0.1,0,INFORMATIONAL\n",
      "types.csv");
  ASSERT_TRUE(table.ok()) << table.status().message();
  ConvertOptions opts;
  opts.tool_table = std::make_shared<const ToolTable>(std::move(*table));
  Result<ConvertResult> r = ConvertFile(TraceSource::kOpenAiChat,
                                        kFixtures + "openai_chat.json", opts);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->trace.records[0].request_type, RequestType::kCommand);
  EXPECT_EQ(r->trace.records[3].request_type, RequestType::kInformational);
  EXPECT_EQ(r->report.typed_from_table, 3u);  // 2 get_weather + send_email
  EXPECT_THAT(r->report.Summary(),
              HasSubstr("request_type from --tool-table for 3 calls"));
  // BFCL ground truth yields to the table too.
  Result<ToolTable> cd = ToolTable::Parse(
      R"([{"tool":"cd","latency":0.1,"cost":0,"request_type":"INFORMATIONAL"}])",
      "cd.json");
  ASSERT_TRUE(cd.ok()) << cd.status().message();
  ConvertOptions bopts;
  bopts.tool_table = std::make_shared<const ToolTable>(std::move(*cd));
  Result<ConvertResult> b = ConvertFile(
      TraceSource::kBfcl,
      kFixtures + "bfcl/possible_answer_BFCL_v3_multi_turn_base.json", bopts);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->trace.records[0].tool, "cd");
  EXPECT_EQ(b->trace.records[0].request_type, RequestType::kInformational);
}

TEST(OpenAiConverterTest, AcceptsJsonLinesOfTrajectories) {
  Result<ConvertResult> r =
      ConvertFile(TraceSource::kOpenAiChat, kFixtures + "openai_chat.jsonl");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->trace.records.size(), 2u);
  EXPECT_EQ(r->trace.records[0].session, "7");
  EXPECT_EQ(r->trace.records[1].session, "8");
  // Same call, different results: the digests tell them apart.
  EXPECT_NE(r->trace.records[0].result_digest,
            r->trace.records[1].result_digest);
}

TEST(OpenAiConverterTest, BadArgumentsNameTrajectoryAndMessage) {
  Result<ConvertResult> r = ConvertFile(
      TraceSource::kOpenAiChat, kFixtures + "openai_bad_arguments.json");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("trajectory 1, message 1, tool_calls[0]: "
                        "'function.arguments' is not valid JSON"));
}

TEST(OpenAiConverterTest, RejectsMalformedInputClearly) {
  struct Case {
    const char* text;
    const char* reason;
  } cases[] = {
      {"[{\"foo\": 1}]", "trajectory 0: no message list"},
      {"42", "expected a JSON array of trajectories"},
      {"{\"messages\": []}\nnot json\n", "in:2: not valid JSON"},
      {R"([{"messages":[{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]}]}])",
       "missing 'id'"},
      {R"([{"messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f","arguments":"[1]"}}]}]}])",
       "arguments must be a JSON object"},
      {R"([{"messages":[{"role":"tool","content":"x"}]}])",
       "tool message without 'tool_call_id'"},
  };
  for (const Case& c : cases) {
    Result<ConvertResult> r = ConvertText(TraceSource::kOpenAiChat, c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_THAT(r.status().message(), HasSubstr(c.reason)) << c.text;
  }
}

// ---------------------------------------------------------------- Anthropic

TEST(AnthropicConverterTest, PairsToolUseWithToolResultExactly) {
  Result<ConvertResult> r = ConvertFile(TraceSource::kAnthropic,
                                        kFixtures + "anthropic_messages.jsonl");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& recs = r->trace.records;
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].tool, "list_dir");
  EXPECT_EQ(recs[0].arguments, R"({"path":"."})");
  EXPECT_EQ(recs[0].result_size, 13u);  // "README.md\nsrc"
  EXPECT_EQ(recs[1].tool, "read_file");
  EXPECT_EQ(recs[1].result_size, 7u);  // text block "# Title"
  EXPECT_FALSE(recs[1].error);
  EXPECT_EQ(recs[2].tool, "run_tests");
  EXPECT_EQ(recs[2].arguments, "{}");
  EXPECT_TRUE(recs[2].error);  // is_error
  EXPECT_TRUE(std::isnan(recs[0].time));
  EXPECT_EQ(r->report.calls_without_result, 1u);  // missing.md
}

TEST(AnthropicConverterTest, ClaudeCodeSessionMeasuresLatencyFromTimestamps) {
  Result<ConvertResult> r = ConvertFile(
      TraceSource::kAnthropic, kFixtures + "claude_code_session.jsonl");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& recs = r->trace.records;
  ASSERT_EQ(recs.size(), 2u);  // the repeated tool_use line is one call
  EXPECT_EQ(recs[0].session, "s-1");
  EXPECT_EQ(recs[0].tool, "Read");
  EXPECT_DOUBLE_EQ(recs[0].time, 0.0);
  EXPECT_DOUBLE_EQ(recs[0].latency, 0.25);
  EXPECT_EQ(recs[1].tool, "Bash");
  EXPECT_EQ(recs[1].arguments, R"({"command":"make","timeout":60000})");
  EXPECT_DOUBLE_EQ(recs[1].time, 1.5);
  EXPECT_DOUBLE_EQ(recs[1].latency, 3.0);
  EXPECT_TRUE(recs[1].error);
  EXPECT_THAT(r->report.Summary(), HasSubstr("skipped 1 lines"));
}

TEST(AnthropicConverterTest, AcceptsAMessagesRequestBody) {
  Result<ConvertResult> r = ConvertText(TraceSource::kAnthropic, R"({
    "model": "x", "messages": [
      {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "get_weather", "input": {"city": "Oslo"}}]},
      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "cold"}]}]})");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->trace.records.size(), 1u);
  EXPECT_EQ(r->trace.records[0].result_size, 4u);
  EXPECT_DOUBLE_EQ(r->trace.records[0].cost, 0.0016);  // weather row
}

TEST(AnthropicConverterTest, RequestBodyToolsFeedTheClassifier) {
  const std::string body =
      R"({"tools":[{"name":"frobnicate","description":"Gets the widget's manual page.","input_schema":{"type":"object"}}],)"
      R"("messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"frobnicate","input":{}}]},)"
      R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}]})";
  Result<ConvertResult> r = ConvertText(TraceSource::kAnthropic, body);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->trace.records.size(), 1u);
  EXPECT_EQ(r->trace.records[0].request_type, RequestType::kInformational);
  EXPECT_EQ(r->report.classified_with_definition, 1u);
}

TEST(AnthropicConverterTest, RejectsMalformedBlocks) {
  Result<ConvertResult> r = ConvertText(
      TraceSource::kAnthropic,
      "{\"role\":\"user\",\"content\":\"hi\"}\n"
      R"({"role":"assistant","content":[{"type":"tool_use","name":"f","input":{}}]})"
      "\n");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("in:2, content[0]: tool_use without a string 'id'"));
  r = ConvertText(TraceSource::kAnthropic, "{\"role\":\"user\"\n");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("in:1: not valid JSON"));
}

// ---------------------------------------------------------------- Python calls

TEST(PythonCallTest, ParsesBfclCallSyntax) {
  struct Case {
    const char* call;
    const char* name;
    const char* args;
  } cases[] = {
      {"cd(folder='document')", "cd", R"({"folder":"document"})"},
      {"grep(file_name='final_report.pdf',pattern='budget analysis')", "grep",
       R"({"file_name":"final_report.pdf","pattern":"budget analysis"})"},
      {"sort('final_report.pdf')", "sort", R"({"$0":"final_report.pdf"})"},
      {"ls(a=True)", "ls", R"({"a":true})"},
      {"tail(file_name='log.txt',lines=20)", "tail",
       R"({"file_name":"log.txt","lines":20})"},
      {R"(post_tweet(content='Can\'t wait', tags=["#a", '#b'], mentions=[]))",
       "post_tweet",
       R"({"content":"Can't wait","mentions":[],"tags":["#a","#b"]})"},
      {"f(x=-3.5e2, y=None, z=(1, 2,), d={'k': [1, {'n': False}], 2: 'two'})",
       "f",
       R"({"d":{"2":"two","k":[1,{"n":false}]},"x":-350.0,"y":null,"z":[1,2]})"},
      {"math.factorial(number=5)", "math.factorial", R"({"number":5})"},
      {"  g ( )  ", "g", "{}"},
      {R"(echo(content="a\nb\u00e9\\"))", "echo", R"({"content":"a\nbé\\"})"},
  };
  for (const Case& c : cases) {
    Result<PythonCall> p = ParsePythonCall(c.call);
    ASSERT_TRUE(p.ok()) << c.call << ": " << p.status().message();
    EXPECT_EQ(p->name, c.name) << c.call;
    EXPECT_EQ(nlohmann::json::parse(p->arguments_json),
              nlohmann::json::parse(c.args))
        << c.call;
  }
}

TEST(PythonCallTest, RejectsWhatIsNotALiteralCall) {
  struct Case {
    const char* call;
    const char* reason;
  } cases[] = {
      {"cd(folder=x)", "'x' is not a literal"},
      {"cd(folder='a'", "unterminated argument list"},
      {"cd(folder='a)", "unterminated string"},
      {"cd(folder='a') + 1", "unexpected text after the call"},
      {"cd(folder='a', 'b')", "positional argument after a keyword"},
      {"cd(a=1, a=2)", "keyword argument 'a' repeated"},
      {"(1)", "expected a function name"},
      {"f(x=[1 2])", "expected ',' or ']'"},
      {"f(x={1.5: 2})", "dict keys must be strings or integers"},
      {"f(x=1e)", "bad exponent"},
      // Found by fuzz/trace_convert_fuzz.cc (corpus
      // trace_convert/crash-invalid-utf8-in-python-string): these threw
      // from nlohmann's dump() instead of failing.
      {"f(unit='c\xaa')", "not valid UTF-8"},
      {"f(s='\\ud800')", "not valid UTF-8"},
      {"f(d={'\xff': 1})", "not valid UTF-8"},
  };
  for (const Case& c : cases) {
    Result<PythonCall> p = ParsePythonCall(c.call);
    ASSERT_FALSE(p.ok()) << c.call;
    EXPECT_THAT(p.status().message(), HasSubstr(c.reason)) << c.call;
  }
  // Deep nesting is refused, not a stack overflow.
  std::string deep =
      "f(x=" + std::string(10000, '[') + std::string(10000, ']') + ")";
  Result<PythonCall> p = ParsePythonCall(deep);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), HasSubstr("nested too deeply"));
}

TEST(PythonCallTest, EveryTruncationOfACallIsRejectedCleanly) {
  const std::string call =
      R"(f(a='x\'y', b=[1, -2.5e3, (3,), {'k': None}], c="""t""", d=True))";
  ASSERT_TRUE(ParsePythonCall(call).ok());
  for (size_t n = 0; n < call.size(); ++n) {
    Result<PythonCall> p = ParsePythonCall(call.substr(0, n));
    EXPECT_FALSE(p.ok()) << call.substr(0, n);
    if (!p.ok()) {
      EXPECT_THAT(p.status().message(), HasSubstr("at offset"));
    }
  }
}

// ---------------------------------------------------------------- BFCL

TEST(BfclConverterTest, RequestTypeRuleOverTheFuncDocs) {
  Result<std::map<std::string, trace_internal::BfclToolDoc>> docs =
      trace_internal::LoadBfclFuncDocs(kFixtures + "bfcl/multi_turn_func_doc");
  ASSERT_TRUE(docs.ok()) << docs.status().message();
  using Type = trace_internal::BfclToolDoc::Type;
  auto type = [&](const char* name) { return docs->at(name).type; };
  EXPECT_EQ(type("cd"), Type::kCommand);  // changes what ls returns
  EXPECT_EQ(type("ls"), Type::kInformational);
  EXPECT_EQ(type("cat"), Type::kInformational);
  EXPECT_EQ(type("sort"), Type::kInformational);
  EXPECT_EQ(type("mkdir"), Type::kCommand);
  EXPECT_EQ(type("echo"), Type::kCommand);
  EXPECT_EQ(type("add"), Type::kInformational);  // math_api: arithmetic
  EXPECT_EQ(type("archival_memory_add"), Type::kCommand);
  EXPECT_EQ(type("send_message"), Type::kCommand);
  EXPECT_EQ(type("get_stock_info"), Type::kInformational);
  EXPECT_EQ(type("authenticate_twitter"), Type::kCommand);
  EXPECT_EQ(type("search_engine_query"), Type::kInformational);
  EXPECT_EQ(type("notify_price_change"), Type::kCommand);  // unknown verb
  EXPECT_EQ(docs->at("sort").params, (std::vector<std::string>{"file_name"}));
  size_t informational = 0;
  for (const auto& [name, doc] : *docs) {
    informational += doc.type == Type::kInformational;
  }
  // Pinned: a change to the rule or the docs must be deliberate.
  EXPECT_EQ(docs->size(), 154u);  // 163 docs; 9 names in two memory files
  EXPECT_EQ(informational, 87u);
}

TEST(BfclConverterTest, MultiTurnGroundTruthCountsArePinned) {
  Result<ConvertResult> r = ConvertFile(
      TraceSource::kBfcl,
      kFixtures + "bfcl/possible_answer_BFCL_v3_multi_turn_base.json");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Trace& t = r->trace;
  ASSERT_EQ(t.records.size(), 1161u);
  EXPECT_EQ(r->report.sessions, 200u);
  size_t commands = 0;
  for (const TraceRecord& rec : t.records) {
    ASSERT_TRUE(rec.request_type.has_value()) << rec.tool;
    commands += *rec.request_type == RequestType::kCommand;
    EXPECT_EQ(rec.result_size, 1024u);
    EXPECT_TRUE(rec.result_digest.empty());
  }
  EXPECT_EQ(commands, 670u);
  EXPECT_NEAR(RepeatedFraction(t), 516.0 / 1161.0, 1e-12);
  // First entry, exactly.
  EXPECT_EQ(t.records[0].session, "multi_turn_base_0");
  EXPECT_EQ(t.records[0].tool, "cd");
  EXPECT_EQ(t.records[0].arguments, R"({"folder":"document"})");
  EXPECT_EQ(t.records[0].request_type, RequestType::kCommand);
  EXPECT_EQ(t.records[4].tool, "grep");
  EXPECT_EQ(t.records[4].request_type, RequestType::kInformational);
  // sort('final_report.pdf'): the positional argument named from the doc.
  EXPECT_EQ(t.records[5].tool, "sort");
  EXPECT_EQ(t.records[5].arguments, R"({"file_name":"final_report.pdf"})");
  EXPECT_EQ(r->report.assigned_result_size, 1161u);
}

TEST(BfclConverterTest, PositionalArgumentWithoutDocsIsAnError) {
  Result<ConvertResult> r =
      ConvertText(TraceSource::kBfcl,
                  R"j({"id": "x", "ground_truth": [["sort('a.txt')"]]})j");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("in:1: call 'sort('a.txt')' has positional argument 0 "
                        "and no function doc names it"));
}

TEST(BfclConverterTest, RejectsQuestionFileAndBadCalls) {
  Result<ConvertResult> r = ConvertFile(
      TraceSource::kBfcl, kFixtures + "bfcl/BFCL_v3_multi_turn_base.json");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr(":1: no 'ground_truth'"));
  r = ConvertText(TraceSource::kBfcl,
                  "{\"id\":\"a\",\"ground_truth\":[[\"cd(\"]]}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("in:1: cannot parse call 'cd('"));
}

TEST(BfclConverterTest, TenantIsTheInitialWorldPlusTheCommandsSoFar) {
  Result<ConvertResult> r = ConvertFile(
      TraceSource::kBfcl,
      kFixtures + "bfcl/possible_answer_BFCL_v3_multi_turn_base.json");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& recs = r->trace.records;
  // Episode 0 starts with cd (COMMAND): cd reads the initial world; the
  // next call reads the world after cd.
  ASSERT_EQ(recs[0].tool, "cd");
  EXPECT_THAT(recs[0].tenant, ::testing::MatchesRegex("bfcl:[0-9a-f]{12}"));
  EXPECT_EQ(recs[1].tenant.substr(0, 17), recs[0].tenant);
  EXPECT_EQ(recs[1].tenant.size(), 17u + 1 + 12);  // world+history
  // Episodes 66 and 70 share an initial world; 63 and 83 share the
  // initial_config but not the classes (63 also has MessageAPI); 0 and 1
  // share nothing.
  std::map<std::string, std::string> first_tenant;
  std::set<std::string> worlds;
  for (const TraceRecord& rec : recs) {
    first_tenant.try_emplace(rec.session, rec.tenant);
    worlds.insert(rec.tenant.substr(0, 17));
  }
  EXPECT_EQ(first_tenant["multi_turn_base_66"],
            first_tenant["multi_turn_base_70"]);
  EXPECT_NE(first_tenant["multi_turn_base_63"],
            first_tenant["multi_turn_base_83"]);
  EXPECT_NE(first_tenant["multi_turn_base_0"],
            first_tenant["multi_turn_base_1"]);
  // Pinned: 200 episodes, 195 distinct (initial_config, classes) worlds.
  EXPECT_EQ(worlds.size(), 195u);
  // Only one INFORMATIONAL call repeats in the same tool state.
  std::map<std::string, int> seen;
  int repeats = 0;
  for (const TraceRecord& rec : recs) {
    if (rec.request_type != RequestType::kInformational) continue;
    repeats += seen[rec.tenant + '\x1f' + rec.tool + rec.arguments]++ > 0;
  }
  EXPECT_EQ(repeats, 1);
  EXPECT_THAT(r->report.Summary(), HasSubstr("195 distinct initial worlds"));
}

TEST(BfclConverterTest, QuestionFileIsFoundOrGivenOrEpisodesStayApart) {
  namespace fs = std::filesystem;
  const std::string answers =
      kFixtures + "bfcl/possible_answer_BFCL_v3_multi_turn_base.json";
  const std::string questions = kFixtures + "bfcl/BFCL_v3_multi_turn_base.json";
  EXPECT_EQ(trace_internal::LocateBfclQuestions(answers), questions);
  // BFCL's own layout: possible_answer/X.json below X.json.
  const fs::path dir =
      fs::temp_directory_path() / ("tc_bfcl_" + std::to_string(::getpid()));
  fs::create_directories(dir / "possible_answer");
  std::ofstream(dir / "X.json") << "{}\n";
  std::ofstream(dir / "possible_answer" / "X.json") << "{}\n";
  EXPECT_EQ(trace_internal::LocateBfclQuestions(
                (dir / "possible_answer" / "X.json").string()),
            (dir / "X.json").string());
  EXPECT_EQ(trace_internal::LocateBfclQuestions((dir / "X.json").string()), "");
  fs::remove_all(dir);

  // stdin: no question file -> every episode is its own tenant.
  const std::string two = R"j({"id":"a","ground_truth":[["ls()"]]})j"
                          "\n"
                          R"j({"id":"b","ground_truth":[["ls()"]]})j"
                          "\n";
  Result<ConvertResult> r = ConvertText(TraceSource::kBfcl, two);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->trace.records[0].tenant, "bfcl-episode:a");
  EXPECT_EQ(r->trace.records[1].tenant, "bfcl-episode:b");
  EXPECT_THAT(r->report.Summary(), HasSubstr("pass --bfcl-questions FILE"));
  // Given explicitly: episodes a and b must be in it.
  ConvertOptions opts;
  opts.bfcl_questions_path = questions;
  r = ConvertText(TraceSource::kBfcl, two, opts);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("episode 'a' is not in the question file"));
  opts.bfcl_questions_path = kFixtures + "bfcl/nope.json";
  r = ConvertText(TraceSource::kBfcl, two, opts);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("cannot open the BFCL question"));
  // The answers file given as the question file: no initial_config.
  opts.bfcl_questions_path = answers;
  r = ConvertText(TraceSource::kBfcl, two, opts);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("no 'initial_config'"));
}

TEST(BfclConverterTest, SimpleSetTakesFirstAcceptableValueAndClassifies) {
  Result<ConvertResult> r =
      ConvertFile(TraceSource::kBfcl,
                  kFixtures + "bfcl/possible_answer_BFCL_v3_simple.json");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->trace.records.size(), 400u);
  const TraceRecord& first = r->trace.records[0];
  EXPECT_EQ(first.tool, "calculate_triangle_area");
  EXPECT_EQ(first.arguments, R"({"base":10,"height":5,"unit":"units"})");
  // simple_2: z accepts ["", 0]: "" first means omitted.
  EXPECT_EQ(r->trace.records[2].arguments, R"({"x":4,"y":5})");
  // No ground truth: the classifier types every call, fed the function
  // definitions of the question file beside the answers.
  size_t informational = 0;
  for (const TraceRecord& rec : r->trace.records) {
    ASSERT_TRUE(rec.request_type.has_value());
    informational += rec.request_type == RequestType::kInformational;
    EXPECT_TRUE(rec.tenant.empty());  // stateless single calls
  }
  EXPECT_EQ(r->report.classified_calls, 400u);
  EXPECT_GT(r->report.classified_with_definition, 300u);
  EXPECT_GT(informational, 300u);
}

// ---------------------------------------------------------------- LLMCompiler

TEST(LlmCompilerConverterTest, MovieWorkloadCountsAndRepeatsArePinned) {
  Result<ConvertResult> r = ConvertFile(
      TraceSource::kLlmCompiler,
      kFixtures + "llmcompiler/movie_recommendations_formatted.json");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Trace& t = r->trace;
  ASSERT_EQ(t.records.size(), 4000u);  // 500 questions x 8 titles
  EXPECT_EQ(r->report.sessions, 500u);
  std::set<std::string> titles;
  for (const TraceRecord& rec : t.records) {
    EXPECT_EQ(rec.tool, "search");
    EXPECT_EQ(rec.request_type, RequestType::kInformational);
    EXPECT_DOUBLE_EQ(rec.latency, 0.6);  // Table 1: Wikipedia fetch
    EXPECT_DOUBLE_EQ(rec.ttl, 3600);
    titles.insert(rec.arguments);
  }
  EXPECT_EQ(titles.size(), 1530u);
  // The paper: "over 40% of tool invocations are repeated".
  EXPECT_NEAR(RepeatedFraction(t), 1.0 - 1530.0 / 4000.0, 1e-12);
  EXPECT_GT(RepeatedFraction(t), 0.40);
  // Titles with a comma stay whole.
  EXPECT_TRUE(titles.contains(R"({"entity":"Monsters, Inc"})"));
  EXPECT_TRUE(
      titles.contains(R"({"entity":"Lock, Stock & Two Smoking Barrels"})"));
  EXPECT_FALSE(titles.contains(R"({"entity":"Inc"})"));
  EXPECT_EQ(t.records[0].session, "movie-0");
  EXPECT_EQ(t.records[0].arguments, R"({"entity":"Mission Impossible"})");
  EXPECT_EQ(t.records[7].arguments, R"({"entity":"Rosetta"})");
}

TEST(LlmCompilerConverterTest, ParallelQaCountsArePinned) {
  Result<ConvertResult> r =
      ConvertFile(TraceSource::kLlmCompiler,
                  kFixtures + "llmcompiler/parallelqa_dataset.json");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Trace& t = r->trace;
  size_t searches = 0, maths = 0;
  std::set<std::string> entities;
  for (const TraceRecord& rec : t.records) {
    if (rec.tool == "search") {
      ++searches;
      entities.insert(rec.arguments);
    } else {
      ASSERT_EQ(rec.tool, "math");
      ++maths;
      EXPECT_DOUBLE_EQ(rec.ttl, 300);
      EXPECT_DOUBLE_EQ(rec.latency, 1.0);
    }
  }
  EXPECT_EQ(maths, 113u);
  EXPECT_EQ(searches, 429u);
  EXPECT_EQ(entities.size(), 61u);
  EXPECT_EQ(r->report.sessions, 113u);
}

TEST(LlmCompilerConverterTest, EntityHeuristicOnDatasetQuestions) {
  using trace_internal::ExtractParallelQaEntities;
  EXPECT_EQ(ExtractParallelQaEntities(
                "If Mariana Trench was 20% shallower and the Puerto Rico "
                "Trench was 20% deeper, which one would be shallower?"),
            (std::vector<std::string>{"Mariana Trench", "Puerto Rico Trench"}));
  EXPECT_EQ(
      ExtractParallelQaEntities(
          "After increasing the height of Christ the Redeemer by 60% "
          "and decreasing the height of the Statue of Unity by 30%, "
          "which statue would dominate in height?"),
      (std::vector<std::string>{"Christ the Redeemer", "Statue of Unity"}));
  EXPECT_EQ(ExtractParallelQaEntities(
                "Considering a cheetah that runs 20% faster and a peregrine "
                "falcon flying 30% slower compared to their maximum velocity, "
                "which one is faster?"),
            (std::vector<std::string>{"peregrine falcon", "cheetah"}));
  EXPECT_EQ(ExtractParallelQaEntities(
                "Given that South Korea's population grows by 20%, Japan's "
                "grows by 5%, and China's grows by 10%, which country has the "
                "least populous count?"),
            (std::vector<std::string>{"South Korea", "Japan", "China"}));
}

TEST(LlmCompilerConverterTest, RejectsWhatIsNotTheDataset) {
  Result<ConvertResult> r =
      ConvertText(TraceSource::kLlmCompilerMovie,
                  R"([{"id":"1","question":"What is 2+2?","answer":"4"}])");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("question 1: not a movie-recommendation question"));
  r = ConvertText(TraceSource::kLlmCompiler, "{}");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("expected a JSON array"));
}

// ---------------------------------------------------------------- round trip

TEST(ConvertRoundTripTest, ConvertedTracesReadBackUnchanged) {
  Result<ConvertResult> r = ConvertFile(
      TraceSource::kBfcl,
      kFixtures + "bfcl/possible_answer_BFCL_v3_multi_turn_base.json");
  ASSERT_TRUE(r.ok());
  std::stringstream buf;
  WriteTrace(r->trace, buf);
  Result<Trace> back = ReadTrace(buf, "bfcl");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->records.size(), r->trace.records.size());
  for (size_t i = 0; i < back->records.size(); ++i) {
    EXPECT_EQ(back->records[i].arguments, r->trace.records[i].arguments);
    EXPECT_EQ(back->records[i].request_type, r->trace.records[i].request_type);
  }
}

}  // namespace
}  // namespace toolcache
