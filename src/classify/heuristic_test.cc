// Tests for the name / description / schema heuristic.
#include "src/classify/heuristic.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace toolcache::classify {
namespace {

using ::testing::ElementsAre;

std::optional<RequestType> TypeOf(std::string name, std::string title = "",
                                  std::string description = "",
                                  std::string schema = "",
                                  std::string args = "") {
  ToolInfo t;
  t.name = std::move(name);
  t.title = std::move(title);
  t.description = std::move(description);
  t.input_schema_json = std::move(schema);
  std::optional<Features> f = MakeHeuristicExtractor()->Extract(t, args);
  return f ? f->request_type : std::nullopt;
}

constexpr auto kInfo = RequestType::kInformational;
constexpr auto kCmd = RequestType::kCommand;

TEST(HeuristicTest, TokenizeSplitsSnakeCamelKebabAndAcronyms) {
  EXPECT_THAT(TokenizeName("get_issue"), ElementsAre("get", "issue"));
  EXPECT_THAT(TokenizeName("getHTTPStatus-v2"),
              ElementsAre("get", "http", "status", "v2"));
  EXPECT_THAT(TokenizeName("mcp__gh__listIssues"),
              ElementsAre("mcp", "gh", "list", "issues"));
  EXPECT_TRUE(TokenizeName("__").empty());
}

TEST(HeuristicTest, VerbsAcceptInflectionsAndMutatingPrefixes) {
  EXPECT_EQ(ClassifyVerb("gets", true), VerbClass::kInformational);
  EXPECT_EQ(ClassifyVerb("gets", false), VerbClass::kNone);
  EXPECT_EQ(ClassifyVerb("retrieves", true), VerbClass::kInformational);
  EXPECT_EQ(ClassifyVerb("searches", true), VerbClass::kInformational);
  EXPECT_EQ(ClassifyVerb("creating", true), VerbClass::kCommand);
  EXPECT_EQ(ClassifyVerb("submitted", true), VerbClass::kCommand);
  EXPECT_EQ(ClassifyVerb("running", true), VerbClass::kCommand);
  EXPECT_EQ(ClassifyVerb("unstar", false), VerbClass::kCommand);
  EXPECT_EQ(ClassifyVerb("rerun", false), VerbClass::kCommand);
  EXPECT_EQ(ClassifyVerb("manage", false), VerbClass::kDispatch);
  EXPECT_EQ(ClassifyVerb("repository", true), VerbClass::kNone);
}

TEST(HeuristicTest, NameVerbIsFirstTokenElseLastToken) {
  EXPECT_EQ(TypeOf("get_pull_request"), kInfo);  // 'request' is the object
  EXPECT_EQ(TypeOf("pull_request_read"), kInfo);
  EXPECT_EQ(TypeOf("issue_write"), kCmd);
  EXPECT_EQ(TypeOf("create_or_update_file"), kCmd);
  EXPECT_EQ(TypeOf("get_or_create_user"), kCmd);  // conjoined verbs count
  EXPECT_EQ(TypeOf("repo_get_info"), kInfo);      // a verb in between
  EXPECT_EQ(TypeOf("unstar_repository"), kCmd);
  EXPECT_EQ(TypeOf("frobnicate"), std::nullopt);  // no opinion
  // Namespaced: the function part's verb first.
  EXPECT_EQ(TypeOf("grocery_store.find_nearby"), kInfo);
  EXPECT_EQ(TypeOf("mcp__shop__order"), kCmd);
  EXPECT_EQ(TypeOf("get_things.frobnicate"), kInfo);  // falls back to whole
}

TEST(HeuristicTest, TitleAndDescriptionDecideWhenTheNameHasNoVerb) {
  EXPECT_EQ(TypeOf("weather", "Weather lookup"), kInfo);
  EXPECT_EQ(TypeOf("x", "", "Retrieves the current forecast."), kInfo);
  EXPECT_EQ(TypeOf("x", "", "Use this tool to send an email."), kCmd);
  // Noun-like verbs count only as the sentence's first word.
  EXPECT_EQ(TypeOf("x", "", "Details of a pull request."), std::nullopt);
  EXPECT_EQ(TypeOf("x", "", "Post a message to a channel."), kCmd);
  // Only the first sentence is read.
  EXPECT_EQ(TypeOf("x", "", "Frobnicates. Then deletes everything."),
            std::nullopt);
}

TEST(HeuristicTest, MutatingEvidenceWinsAtEqualStrength) {
  // A mutating name verb beats a reading description verb.
  EXPECT_EQ(TypeOf("delete_thing", "", "Get rid of a thing."), kCmd);
  // Same strength, conflicting: COMMAND.
  EXPECT_EQ(TypeOf("get_or_delete_thing"), kCmd);
  EXPECT_EQ(TypeOf("delete_or_get_thing"), kCmd);
  // Issue 18: a strong mutation verb in the description vetoes a reading
  // name or title (was kInfo: "the name verb wins", an unsafe rule).
  EXPECT_EQ(TypeOf("get_thing", "", "Create a thing."), kCmd);
  EXPECT_EQ(TypeOf("x", "Get thing", "Delete a thing."), kCmd);
  // But a past participle only describes: "created by" reads.
  EXPECT_EQ(TypeOf("list_things", "", "List things created by a user."), kInfo);
}

TEST(HeuristicTest, ExecutionEvidenceVetoesReading) {
  // Issue 18: the costly mistakes on real servers.
  EXPECT_EQ(TypeOf("db_query", "", "Execute a SQL query against a database."),
            kCmd);
  EXPECT_EQ(TypeOf("page_evaluate", "", "Evaluate JavaScript on the page."),
            kCmd);
  EXPECT_EQ(TypeOf("x_search_feedback", "",
                   "Send structured feedback on a previous search result."),
            kCmd);
  EXPECT_EQ(TypeOf("analyze_site", "", "Starts a remote analysis run."), kCmd);
  // Parameters that carry code or a statement veto a reading name.
  EXPECT_EQ(TypeOf("get_result", "", "Get a result.",
                   R"({"properties":{"script":{"type":"string"}}})"),
            kCmd);
  EXPECT_EQ(TypeOf("query", "", "Query the catalogue.",
                   R"({"properties":{"query":{"type":"string",
                      "description":"A SQL SELECT statement"}}})"),
            kCmd);
  // ... but a search query is not a statement.
  EXPECT_EQ(TypeOf("search_docs", "", "Search the docs.",
                   R"({"properties":{"query":{"type":"string",
                      "description":"Search keywords or a question"}}})"),
            kInfo);
  // A parameter naming where a file is saved makes the tool write.
  EXPECT_EQ(TypeOf("take_screenshot", "", "Take a screenshot of the page.",
                   R"({"properties":{"filePath":{"type":"string",
                      "description":"Where to save the image"}}})"),
            kCmd);
  // The ambiguous verb alone decides nothing (unknown -> COMMAND later).
  EXPECT_EQ(TypeOf("evaluate"), std::nullopt);
}

// Detail of the heuristic's verdict, to check that `reason` names the rule.
std::string DetailOf(std::string name, std::string description,
                     std::string schema = "") {
  ToolInfo t;
  t.name = std::move(name);
  t.description = std::move(description);
  t.input_schema_json = std::move(schema);
  std::optional<Features> f = MakeHeuristicExtractor()->Extract(t, "");
  return f ? f->detail : "";
}

TEST(HeuristicTest, ToolsThatStartAgentsOrActVeto) {
  // A verbless name headed by an agent noun starts an agent, even when the
  // description's first reading-like word ("research") would say read.
  EXPECT_EQ(TypeOf("web_agent", "", "Autonomous web research agent."), kCmd);
  EXPECT_THAT(DetailOf("web_agent", ""),
              ::testing::HasSubstr("agent-noun rule: name head 'agent'"));
  // The same first sentence under a neutral name vetoes by itself.
  EXPECT_EQ(TypeOf("web_helper", "", "Autonomous web research agent."), kCmd);
  // Not an agent noun: "user agent" (a header), a status of an agent, a
  // list of agents, agents as an object.
  EXPECT_EQ(TypeOf("get_user_agent", "", "Get the browser's user agent."),
            kInfo);
  EXPECT_EQ(TypeOf("web_agent_status", "", "Get the status of an agent job."),
            kInfo);
  EXPECT_EQ(TypeOf("list_agents", "", "Lists agents you can message."), kInfo);
  // A description that returns the id of a job started elsewhere.
  EXPECT_EQ(TypeOf("site_map", "",
                   "Maps a site. This runs in the background: it returns a "
                   "job ID immediately, and you poll for the result."),
            kCmd);
  EXPECT_THAT(DetailOf("site_map", "Maps a site. It returns a job ID."),
              ::testing::HasSubstr("async-job rule"));
  EXPECT_EQ(TypeOf("get_job", "", "Returns the job with the given job ID."),
            kInfo);
  // A list of steps whose type allows an action: the tool acts ("scrape"
  // that clicks), one level down in the schema.
  const std::string actions =
      R"({"properties":{"url":{"type":"string"},"actions":{"type":"array",
         "items":{"type":"object","properties":{"type":{"type":"string",
         "enum":["wait","screenshot","click","executeJavascript"]}}}}}})";
  EXPECT_EQ(
      TypeOf("page_scrape", "", "Scrape content from a single URL.", actions),
      kCmd);
  EXPECT_THAT(DetailOf("page_scrape", "Scrape a URL.", actions),
              ::testing::HasSubstr("action-list rule: 'actions[].type' allows "
                                   "'click'"));
  // Only reading step types: no veto.
  EXPECT_EQ(TypeOf("page_scrape", "", "Scrape content from a single URL.",
                   R"({"properties":{"actions":{"type":"array","items":{
                      "properties":{"type":{"enum":["wait","screenshot"]}}}}}})"),
            kInfo);
  // Code one level down: "params.sql", "steps[].script".
  EXPECT_EQ(TypeOf("get_rows", "", "Get rows.",
                   R"({"properties":{"params":{"type":"object","properties":{
                      "sql":{"type":"string"}}}}})"),
            kCmd);
  // Two levels down (an option object's own action list) is not the tool's
  // own action: a search whose scrape options could click still reads.
  EXPECT_EQ(TypeOf("web_search", "", "Search the web.",
                   R"({"properties":{"scrapeOptions":{"type":"object",
                      "properties":{"actions":{"type":"array","items":{
                      "properties":{"type":{"enum":["click"]},
                      "script":{"type":"string"}}}}}}}})"),
            kInfo);
}

TEST(HeuristicTest, ObservationPhrasesRead) {
  EXPECT_EQ(TypeOf("browser_take_screenshot", "",
                   "Take a screenshot of the current page."),
            kInfo);
  EXPECT_EQ(TypeOf("git_log"), kInfo);
  EXPECT_EQ(TypeOf("db-stats"), kInfo);
  EXPECT_EQ(TypeOf("run_accessibility_audit", "",
                   "Run an accessibility audit on the current page."),
            kInfo);
  EXPECT_EQ(TypeOf("run_pipeline", "", "Run a pipeline."), kCmd);
  // A noun-like verb is not the name's verb when a real one is there.
  EXPECT_EQ(TypeOf("api_retrieve_a_block"), kInfo);
  EXPECT_EQ(
      TypeOf("browser_network_request", "", "Show network request details."),
      kInfo);
}

TEST(HeuristicTest, SchemaActionEnumDecidesMultiPurposeTools) {
  const std::string writes =
      R"({"properties":{"method":{"enum":["get","create","delete"]},"id":{}}})";
  const std::string reads =
      R"({"properties":{"method":{"enum":["get","get_comments","list"]},"id":{}}})";
  EXPECT_EQ(TypeOf("issues", "", "", writes), kCmd);
  EXPECT_EQ(TypeOf("issues", "", "", reads), kInfo);
  // The call's own action value refines a mixed schema.
  EXPECT_EQ(TypeOf("issues", "", "", writes, R"({"method":"get","id":1})"),
            kInfo);
  EXPECT_EQ(TypeOf("issues", "", "", writes, R"({"method":"create"})"), kCmd);
  // Malformed schema: ignored.
  EXPECT_EQ(TypeOf("issues", "", "", "{oops"), std::nullopt);
}

TEST(HeuristicTest, TtlClassesFollowThePaperDefaults) {
  EXPECT_EQ(TtlCategoryOf(TokenizeName("get_weather")), TtlCategory::kRealtime);
  EXPECT_EQ(TtlCategoryOf(TokenizeName("convert_currency_units")),
            TtlCategory::kComputational);
  EXPECT_EQ(TtlCategoryOf(TokenizeName("search_wikipedia")),
            TtlCategory::kStatic);
  // Several classes: the shortest TTL wins.
  EXPECT_EQ(TtlCategoryOf(TokenizeName("get_latest_wiki_file")),
            TtlCategory::kRealtime);
  EXPECT_EQ(TtlCategoryOf(TokenizeName("list_branches")), TtlCategory::kNone);
  // Issue 18: TTL from evidence, not one word of the name.
  ToolInfo process;
  process.name = "read_process_output";
  EXPECT_EQ(ToolTtlCategory(process), TtlCategory::kRealtime);
  ToolInfo history;
  history.name = "get_channel_history";
  EXPECT_EQ(ToolTtlCategory(history), TtlCategory::kStatic);
  history.description = "Get recent messages from a channel";
  EXPECT_EQ(ToolTtlCategory(history), TtlCategory::kRealtime);
  EXPECT_EQ(TtlCategorySeconds(TtlCategory::kRealtime), 60);
  EXPECT_EQ(TtlCategorySeconds(TtlCategory::kComputational), 300);
  EXPECT_EQ(TtlCategorySeconds(TtlCategory::kStatic), 3600);
}

}  // namespace
}  // namespace toolcache::classify
