// Tests for the name / description / schema heuristic.
#include "src/classify/heuristic.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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

// Issue 18, the writes left cacheable on real servers: the side effect is
// said only in a parameter's description.
TEST(HeuristicTest, ParameterTextThatExecutesTheValueVetoes) {
  // "The WIQL query string to execute." (a reading name and description).
  const std::string wiql =
      R"({"properties":{"action":{"type":"string","enum":["get","wiql"]},
         "wiql":{"type":"string","description":
         "The WIQL query string to execute. Required for: wiql."}}})";
  EXPECT_EQ(TypeOf("wit_query", "", "Retrieve work item query data.", wiql),
            kCmd);
  EXPECT_THAT(DetailOf("wit_query", "Retrieve work item query data.", wiql),
              ::testing::HasSubstr("parameter-text execution rule: parameter "
                                   "'wiql' described '... to execute'"));
  EXPECT_EQ(TypeOf("get_rows", "", "Get rows.",
                   R"({"properties":{"q":{"type":"string","description":
                      "Statement to be executed against the database"}}})"),
            kCmd);
  // One level down too.
  EXPECT_EQ(TypeOf("get_rows", "", "Get rows.",
                   R"({"properties":{"params":{"type":"object","properties":{
                      "expr":{"type":"string","description":
                      "JavaScript to evaluate."}}}}})"),
            kCmd);
  // Where something runs, not what: the verb has its own object. (Each
  // schema is checked to parse: a malformed one would be ignored.)
  const std::string against =
      R"({"properties":{"connectionId":{"type":"string","description":)"
      R"("The connection to run the operation against."}}})";
  ASSERT_TRUE(nlohmann::json::accept(against));
  EXPECT_EQ(
      TypeOf("find_documents", "", "Find documents in a collection.", against),
      kInfo);
  // A past description ("was executed") and a noun ("a workflow run").
  const std::string past =
      R"({"properties":{"explain":{"type":"boolean","description":)"
      R"("Whether to include explanation of how the query was executed"},)"
      R"("runId":{"type":"string","description":"The workflow run to read"}}})";
  ASSERT_TRUE(nlohmann::json::accept(past));
  EXPECT_EQ(TypeOf("search", "", "Search an index.", past), kInfo);
}

TEST(HeuristicTest, BooleanOptionThatChangesStateVetoes) {
  auto option = [](std::string description, std::string type = "boolean") {
    return R"({"properties":{"type":{"type":"string"},"opt":{"type":")" + type +
           R"(","description":")" + description + R"("}}})";
  };
  // "clear": "Clear after returning"; "prune": "Prune remote-tracking
  // references"; "Whether to delete ...".
  EXPECT_EQ(TypeOf("get_diagnostics", "", "Retrieves browser diagnostics.",
                   option("Clear after returning (default: false)")),
            kCmd);
  EXPECT_THAT(DetailOf("get_diagnostics", "Retrieves browser diagnostics.",
                       option("Clear after returning")),
              ::testing::HasSubstr("option rule: boolean parameter 'opt' "
                                   "described 'clear ...'"));
  EXPECT_EQ(TypeOf("fetch_updates", "", "Fetch updates from a remote.",
                   option("Prune remote-tracking references.")),
            kCmd);
  EXPECT_EQ(TypeOf("get_branch", "", "Get a branch.",
                   option("Whether to delete the branch after reading")),
            kCmd);
  // Options that shape the output, and descriptions of state, do not act.
  EXPECT_EQ(TypeOf("get_visible_html", "", "Get the page HTML.",
                   option("Remove all script tags from the HTML")),
            kInfo);
  EXPECT_EQ(TypeOf("search_web", "", "Search the web.",
                   option("Enable summary generation for results")),
            kInfo);
  EXPECT_EQ(TypeOf("list_projects", "", "List projects.",
                   option("Archived projects only")),
            kInfo);
  // Only a boolean option: a string "Clear ..." is not a switch.
  EXPECT_EQ(TypeOf("get_diagnostics", "", "Retrieves browser diagnostics.",
                   option("Clear text to match", "string")),
            kInfo);
}

// An action enum that allows a mutating value outranks a reading name verb
// at tool level ("box_preview" is a noun phrase; its operations include
// create and delete); the call's own action still refines it.
TEST(HeuristicTest, MutatingActionEnumOutranksAReadingNameVerb) {
  const std::string schema =
      R"({"properties":{"action":{"type":"string",)"
      R"("enum":["create","list","delete"]},"box_id":{"type":"string"}}})";
  EXPECT_EQ(TypeOf("box_preview", "", "Manage preview URLs of a box.", schema),
            kCmd);
  EXPECT_THAT(DetailOf("box_preview", "Manage preview URLs of a box.", schema),
              ::testing::HasSubstr("action-enum rule: 'action' allows "
                                   "'create'"));
  EXPECT_EQ(TypeOf("box_preview", "", "Manage preview URLs of a box.", schema,
                   R"({"action":"list","box_id":"b1"})"),
            kInfo);
  EXPECT_EQ(TypeOf("box_preview", "", "Manage preview URLs of a box.", schema,
                   R"({"action":"delete","box_id":"b1"})"),
            kCmd);
}

TEST(HeuristicTest, FreshSetDefectsAreFixed) {
  // "-ies" is "-y": "Stories" (a title's noun) is not a form of "store".
  EXPECT_EQ(ClassifyVerb("stories", true), VerbClass::kNone);
  EXPECT_EQ(ClassifyVerb("replies", true), VerbClass::kCommand);
  EXPECT_EQ(
      TypeOf("stories-search", "Stories: Search", "Find stories by text."),
      kInfo);
  // A parameter named "code" is no program because the tool says "code".
  EXPECT_EQ(TypeOf("list_discounts", "", "List discounts by discount code.",
                   R"({"properties":{"code":{"type":"string",
                      "description":"Discount code"},"id":{}}})"),
            kInfo);
  EXPECT_EQ(TypeOf("get_result", "", "Get a result.",
                   R"({"properties":{"code":{"type":"string",
                      "description":"JavaScript source"},"id":{}}})"),
            kCmd);
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
  // A history is static only without a change context.
  history.description = "Get the change history for a story";
  EXPECT_EQ(ToolTtlCategory(history), TtlCategory::kRealtime);
  history.description = "Get the history of a channel's commits";
  EXPECT_EQ(ToolTtlCategory(history), TtlCategory::kStatic);
  history.name = "european_history.get_event_date";  // events of the past
  history.description = "Retrieve the date of a historical event";
  EXPECT_EQ(ToolTtlCategory(history), TtlCategory::kStatic);
  // Plurals of live words, and live nouns the lexicon lacked.
  EXPECT_EQ(TtlCategoryOf(TokenizeName("list_credit_balances")),
            TtlCategory::kRealtime);
  EXPECT_EQ(TtlCategoryOf(TokenizeName("list_incidents")),
            TtlCategory::kRealtime);
  EXPECT_EQ(TtlCategoryOf(TokenizeName("get-freebusy")),
            TtlCategory::kRealtime);
  // Session 16: waiting for an event is about a moment, not stored data.
  ToolInfo wait;
  wait.name = "playwright_assert_response";
  wait.description =
      "Wait for and validate a previously initiated HTTP response wait "
      "operation.";
  EXPECT_EQ(ToolTtlCategory(wait), TtlCategory::kRealtime);
  wait.description = "Validate a previously initiated HTTP response.";
  EXPECT_NE(ToolTtlCategory(wait), TtlCategory::kRealtime);
  wait.name = "wait_for_deployment";
  wait.description = "";
  EXPECT_EQ(ToolTtlCategory(wait), TtlCategory::kRealtime);
  // Later sentences say how to use a tool; a wait there is not the call's.
  ToolInfo retry;
  retry.name = "search-records";
  retry.description =
      "Search an index for records. If recent data is missing, wait briefly "
      "and retry.";
  EXPECT_NE(ToolTtlCategory(retry), TtlCategory::kRealtime);
  // Statistics of a live system vs. statistics computed from the input.
  ToolInfo stats;
  stats.name = "describe-index-stats";
  EXPECT_EQ(ToolTtlCategory(stats), TtlCategory::kRealtime);
  stats.name = "get_player_stats";  // not said to be live
  EXPECT_EQ(ToolTtlCategory(stats), TtlCategory::kComputational);
  stats.name = "get_statistics";
  stats.description = "Get usage statistics of a database";
  EXPECT_EQ(ToolTtlCategory(stats), TtlCategory::kRealtime);
  // Two live words beyond the first sentence; one is not enough, nor is
  // "status" there (mostly a field name).
  ToolInfo flaky;
  flaky.name = "find_flaky_tests";
  flaky.description = "Retrieves flaky tests. The logs are truncated.";
  EXPECT_EQ(ToolTtlCategory(flaky), TtlCategory::kNone);
  flaky.description += " Only the most recent entries are shown.";
  EXPECT_EQ(ToolTtlCategory(flaky), TtlCategory::kRealtime);
  flaky.description = "Lists subscriptions. Filter by status or price.";
  EXPECT_EQ(ToolTtlCategory(flaky), TtlCategory::kNone);
  EXPECT_EQ(TtlCategorySeconds(TtlCategory::kRealtime), 60);
  EXPECT_EQ(TtlCategorySeconds(TtlCategory::kComputational), 300);
  EXPECT_EQ(TtlCategorySeconds(TtlCategory::kStatic), 3600);
}

TEST(HeuristicPhrase, AnActionAddedInALaterSentenceIsAWrite) {
  const char* kNoArgs = R"({"type":"object","properties":{}})";
  // resend-mcp (fresh2, seen since session 9): the side effect is the
  // second sentence.
  EXPECT_EQ(TypeOf("get-tiptap-json-content", "",
                   "Retrieve the existing TipTap JSON content of the email "
                   "being edited. Also connects the agent to the editor so "
                   "the avatar is visible.",
                   kNoArgs),
            RequestType::kCommand);
  EXPECT_EQ(TypeOf("get_folder", "",
                   "Get a folder by path. It also creates the folder when it "
                   "is missing.",
                   kNoArgs),
            RequestType::kCommand);
  EXPECT_EQ(TypeOf("read_config", "",
                   "Read the project's configuration.\nThis will overwrite "
                   "the cached copy on disk.",
                   kNoArgs),
            RequestType::kCommand);
  // A reading verb or a negation after the opener: still a read.
  EXPECT_EQ(
      TypeOf("get_items", "",
             "Get the items of a list. Also returns the total count.", kNoArgs),
      RequestType::kInformational);
  EXPECT_EQ(TypeOf("get_page", "",
                   "Get a page. It also does not modify the page's history.",
                   kNoArgs),
            RequestType::kInformational);
  // The opener in the first sentence is the first sentence's business.
  EXPECT_EQ(
      TypeOf("list_files", "",
             "List files, and also their sizes. Useful for audits.", kNoArgs),
      RequestType::kInformational);
}

TEST(HeuristicSchema, ANestedOptionThatSavesStateIsAWrite) {
  // Hyperbrowser (fresh3, seen since session 10): a scrape whose cloud
  // browser session saves its changes to a profile, two levels down.
  const char* kProfile = R"({"type":"object","properties":{
      "url":{"type":"string"},
      "sessionOptions":{"type":"object","properties":{
        "useProxy":{"type":"boolean","description":"Whether to use a proxy."},
        "profile":{"type":"object","properties":{
          "id":{"type":"string"},
          "persistChanges":{"type":"boolean","default":true,
            "description":"Whether changes made during the session should be saved to the profile"}}}}}}})";
  EXPECT_EQ(TypeOf("scrape_webpage", "",
                   "Scrape a webpage and extract its content.", kProfile),
            RequestType::kCommand);
  // The passive form at the top level too.
  EXPECT_EQ(TypeOf("get_report", "", "Get a report.",
                   R"({"type":"object","properties":{"archive":{
                       "type":"boolean","description":
                       "Whether the report is archived after reading"}}})"),
            RequestType::kCommand);
  // Under an array two levels down too (review: a.b[].persist was missed).
  EXPECT_EQ(TypeOf("scrape_webpages", "", "Scrape webpages.",
                   R"({"type":"object","properties":{
                       "options":{"type":"object","properties":{
                         "profiles":{"type":"array","items":{
                           "type":"object","properties":{
                             "persist":{"type":"boolean","description":
                               "Whether cookies should be saved"}}}}}}}})"),
            RequestType::kCommand);
  // Options that shape the answer, at any depth, do not act.
  EXPECT_EQ(
      TypeOf("scrape_webpage", "", "Scrape a webpage and extract its content.",
             R"({"type":"object","properties":{
                       "url":{"type":"string"},
                       "options":{"type":"object","properties":{
                         "format":{"type":"object","properties":{
                           "sorted":{"type":"boolean","description":
                             "Whether links should be sorted"},
                           "stealth":{"type":"boolean","description":
                             "Whether to use stealth mode"}}}}}}})"),
      RequestType::kInformational);
}

namespace toolcache::classify {
namespace {

// Issue 31, npm_servers_wide train/dev: a mutating verb joined by a
// preposition to a later reading verb is the action ("mark ... as read").
TEST(HeuristicPhrase, MutatingVerbBeforeAPrepositionDecides) {
  EXPECT_EQ(TypeOf("linear_markNotificationAsRead", "",
                   "Marks a notification as read"),
            RequestType::kCommand);
  EXPECT_EQ(TypeOf("linear_markAllNotificationsAsRead"), RequestType::kCommand);
  // No preposition: the later verb still decides.
  EXPECT_EQ(TypeOf("pull_request_read"), RequestType::kInformational);
}

// A transform verb on a record named by a required id changes the record;
// on a computed value it reads.
TEST(HeuristicPhrase, TransformingAnIdentifiedRecordIsAWrite) {
  EXPECT_EQ(
      TypeOf("linear_convertIssueToSubtask", "",
             "Convert an issue to a subtask of another issue",
             R"({"type":"object","properties":{"issueId":{"type":"string"},
                       "parentIssueId":{"type":"string"}},
                       "required":["issueId","parentIssueId"]})"),
      RequestType::kCommand);
  EXPECT_EQ(TypeOf("db-cluster-upgrade-major-version", "",
                   "Upgrade the major version of a database cluster",
                   R"({"type":"object","properties":{"ID":{"type":"string"},
                       "Version":{"type":"string"}},"required":["ID"]})"),
            RequestType::kCommand);
  EXPECT_EQ(TypeOf("convert_time", "", "Convert time between timezones.",
                   R"({"type":"object","properties":{"time":{"type":"string"},
                       "targetTimezone":{"type":"string"}},
                       "required":["time","targetTimezone"]})"),
            RequestType::kInformational);
}

// Session 9, npm_servers_wide test (seen): a snake_case prefix before a
// camelCase phrase is a namespace; the phrase's first word is the verb, so a
// participle ("Installed") or a split brand ("Word|Press") inside a
// resource-first name is not.
TEST(HeuristicPhrase, CamelPhraseAfterASnakePrefixOpensWithTheVerb) {
  EXPECT_EQ(TypeOf("hosting_listInstalledWordPressPluginsV1", "",
                   "List plugins installed on a WordPress installation"),
            RequestType::kInformational);
  EXPECT_EQ(TypeOf("reach_listEmailTemplatesV1", "",
                   "Get a list of the email templates in a profile"),
            RequestType::kInformational);
  // The verb position still decides for writes.
  EXPECT_EQ(TypeOf("hosting_installWordPressPluginV1", "",
                   "Install a plugin on a WordPress installation"),
            RequestType::kCommand);
  EXPECT_EQ(TypeOf("linear_markNotificationAsRead"), RequestType::kCommand);
  // No camelCase phrase: unchanged ("word_press_list" has no verb position
  // to take from a convention change).
  EXPECT_EQ(CamelPhraseStart("list_installed_plugins"), 0u);
  EXPECT_EQ(CamelPhraseStart("hosting_WordPressPlugins"), 0u);
  EXPECT_EQ(CamelPhraseStart("hosting_pluginsList"), 0u);
  EXPECT_EQ(CamelPhraseStart("hosting_listPlugins"), 8u);
  // A prefix that names an action is not a namespace: its verb decides
  // (review of session 9: these read as "list"/"search" with the rule alone).
  EXPECT_EQ(CamelPhraseStart("delete_listMembers"), 0u);
  EXPECT_EQ(CamelPhraseStart("srv__delete_listMembers"), 0u);
  EXPECT_EQ(TypeOf("delete_listMembers", "", "Delete members of a list"),
            RequestType::kCommand);
  EXPECT_EQ(TypeOf("create_searchIndex"), RequestType::kCommand);
  EXPECT_EQ(TypeOf("update_listSettings"), RequestType::kCommand);
}

// Session 9: a checking verb whose only input names a remote resource
// checks the remote system's state, which acts on it (ambiguous = write).
TEST(HeuristicPhrase, CheckingARemoteResourceByIdentifierIsAWrite) {
  EXPECT_EQ(TypeOf("validate_server", "", "Validate server connection",
                   R"({"type":"object","properties":{"uuid":{"type":"string"}},
                       "required":["uuid"]})"),
            RequestType::kCommand);
  EXPECT_EQ(
      TypeOf("hosting_verifyDomainOwnershipV1", "",
             "Verify ownership of a single domain and return the "
             "verification status.",
             R"({"type":"object","properties":{"domain":{"type":"string"}},
                 "required":["domain"]})"),
      RequestType::kCommand);
  // Content to check is passed in: the check is a computation, it reads.
  EXPECT_EQ(TypeOf("validate_email", "",
                   "Check whether an email address is well-formed",
                   R"({"type":"object","properties":{"email":{"type":"string"}},
                       "required":["email"]})"),
            RequestType::kInformational);
  EXPECT_EQ(TypeOf("verify_checksum", "",
                   "Verify that a text matches a SHA-256 checksum",
                   R"({"type":"object","properties":{"text":{"type":"string"},
                       "checksum":{"type":"string"}},
                       "required":["text","checksum"]})"),
            RequestType::kInformational);
  // An identifier plus content: still a computation on the content.
  EXPECT_EQ(TypeOf("validate_document", "",
                   "Validate a text against the project's style guide",
                   R"({"type":"object","properties":{
                       "projectId":{"type":"string"},
                       "text":{"type":"string"}},"required":["projectId"]})"),
            RequestType::kInformational);
  // Not a checking verb: an identifier alone still reads.
  EXPECT_EQ(TypeOf("get_server", "", "Get a server",
                   R"({"type":"object","properties":{"uuid":{"type":"string"}},
                       "required":["uuid"]})"),
            RequestType::kInformational);
}

// Session 12, read-evidence rule: a name whose verb is unknown, ambiguous
// or missing (noun-first) is decided by the rest of the definition: no
// content/path/target parameter, no write word anywhere, and a sentence
// that opens with a reading verb (or an ambiguous verb that computes from
// its inputs) -> INFORMATIONAL; otherwise no opinion (COMMAND) as before.
TEST(HeuristicEvidence, ANounFirstNameWithAReturnsSentenceReads) {
  // Flightbox (fresh4, seen since session 11): a noun after a product
  // prefix; the second sentence says what the call returns.
  EXPECT_EQ(
      TypeOf("flightbox_summary", "",
             "Entry point for debugging. Returns trace overview with "
             "root span, total spans, duration, slowest spans, and "
             "errors.",
             R"({"type":"object","properties":{"trace_id":{"type":"string"},
                       "last_n_minutes":{"type":"number"}}})"),
      kInfo);
  // TradingView (fresh4): "screen" is a verb the lexicons have no opinion
  // on; the parameters are filters, sort keys and a limit.
  EXPECT_EQ(TypeOf("screen_stocks", "",
                   "Screen stocks based on fundamental and technical "
                   "criteria. Returns stocks matching the specified filters.",
                   R"({"type":"object","properties":{
                       "filters":{"type":"array","description":"Array of filter conditions to apply"},
                       "sort_by":{"type":"string","description":"Field to sort results by."},
                       "limit":{"type":"number","description":"Number of results to return (1-200)."}}})"),
            kInfo);
  // BFCL: a label before a colon opens the clause that says what the
  // call does; the write check still covers the whole text.
  const char* kNumbers =
      R"({"type":"object","properties":{"numbers":{"type":"array"}}})";
  EXPECT_EQ(TypeOf("mean", "",
                   "This tool belongs to the Math API. Tool description: "
                   "Calculate the mean of a list of numbers.",
                   kNumbers),
            kInfo);
  EXPECT_NE(TypeOf("mean", "",
                   "This tool belongs to the Math API. Tool description: "
                   "Calculate the mean and store it in the ledger.",
                   kNumbers),
            kInfo);
  EXPECT_THAT(
      DetailOf(
          "flightbox_children",
          "Drill into a span's children. Returns child spans.",
          R"({"type":"object","properties":{"span_id":{"type":"string"}}})"),
      ::testing::HasSubstr("read-evidence rule"));
  // Counter-examples, no opinion or COMMAND: a write word anywhere...
  EXPECT_NE(
      TypeOf(
          "ticket_intake", "", "Ticket intake. Returns the created ticket.",
          R"({"type":"object","properties":{"queue_id":{"type":"string"}}})"),
      kInfo);
  EXPECT_NE(
      TypeOf("rank_pages", "",
             "Rank pages by score. Returns the ranking. Updates the "
             "stored ranking of every page.",
             R"({"type":"object","properties":{"site_id":{"type":"string"}}})"),
      kInfo);
  // ... a content, recipient or path parameter ...
  EXPECT_NE(TypeOf("mail_relay", "", "Mail relay. Returns a receipt.",
                   R"({"type":"object","properties":{"to":{"type":"string"},
                       "body":{"type":"string"}}})"),
            kInfo);
  EXPECT_NE(
      TypeOf(
          "report_builder", "", "Report builder. Returns the report.",
          R"({"type":"object","properties":{"outputPath":{"type":"string"}}})"),
      kInfo);
  // ... a conjoined action ("Preview fixes or apply them", n8n's autofix,
  // wide train) ...
  EXPECT_NE(
      TypeOf("n8n_autofix_workflow", "",
             "Automatically fix common workflow validation errors. "
             "Preview fixes or apply them.",
             R"({"type":"object","properties":{"id":{"type":"string"}}})"),
      kInfo);
  // ... or no reading sentence at all: unknown, COMMAND.
  EXPECT_EQ(
      TypeOf("flightbox_siblings", "",
             "Everything that ran under the same parent, in execution "
             "order.",
             R"({"type":"object","properties":{"span_id":{"type":"string"}}})"),
      std::nullopt);
}

TEST(HeuristicEvidence, AnAmbiguousVerbReadsOnlyWhenItComputesFromItsInputs) {
  // ECharts (fresh3) and Tailwind (fresh4): "generate" renders the given
  // data; every parameter is data, a size, a theme or a title.
  const char* kChart = R"({"type":"object","properties":{
      "data":{"type":"array","description":"Data for pie chart."},
      "width":{"type":"integer","description":"Set the width of the chart."},
      "title":{"type":"string","description":"Set the title of the chart."},
      "outputType":{"type":"string","enum":["png","svg"]}}})";
  EXPECT_EQ(
      TypeOf("generate_pie_chart", "",
             "Generate a pie chart to show the proportion of parts.", kChart),
      kInfo);
  EXPECT_EQ(
      TypeOf("generate_color_palette", "",
             "Generate a custom color palette with multiple shades from "
             "a base color",
             R"({"type":"object","properties":{"baseColor":{"type":"string"},
                       "shades":{"type":"array"}}})"),
      kInfo);
  // Grafana (fresh4): "query" with a PromQL expression, not a statement.
  EXPECT_EQ(
      TypeOf(
          "query_prometheus", "", "Query Prometheus using a PromQL expression.",
          R"({"type":"object","properties":{"datasourceUid":{"type":"string"},
                       "expr":{"type":"string","description":"The PromQL expression to query"}}})"),
      kInfo);
  // Counter-examples that stay COMMAND (or without opinion, = COMMAND):
  // a report saved to a file,
  EXPECT_NE(
      TypeOf("generate_report", "", "Generate a report and save it as a PDF.",
             R"({"type":"object","properties":{"month":{"type":"string"}}})"),
      kInfo);
  // an invoice record created for a customer (a remote record's id too),
  EXPECT_NE(
      TypeOf("generate_invoice", "",
             "Generate an invoice for a customer. The invoice is "
             "created in the billing system.",
             R"({"type":"object","properties":{"amount":{"type":"number"}}})"),
      kInfo);
  EXPECT_NE(
      TypeOf(
          "generate_invoice", "", "Generate an invoice for an order.",
          R"({"type":"object","properties":{"order_id":{"type":"string"}}})"),
      kInfo);
  // a query that runs the caller's SQL, run_query, execute,
  EXPECT_NE(
      TypeOf("query", "", "Query the database.",
             R"({"type":"object","properties":{"sql":{"type":"string"}}})"),
      kInfo);
  EXPECT_NE(
      TypeOf("run_query", "", "Run a SQL query against the warehouse.",
             R"({"type":"object","properties":{"query":{"type":"string"}}})"),
      kInfo);
  EXPECT_NE(
      TypeOf("execute", "", "Returns the result.",
             R"({"type":"object","properties":{"id":{"type":"string"}}})"),
      kInfo);
  // random output (a repeat must not be served from the cache),
  EXPECT_NE(
      TypeOf("generate_password", "", "Generate a secure random password.",
             R"({"type":"object","properties":{"length":{"type":"integer"}}})"),
      kInfo);
  // an image from a prompt (a paid model call),
  EXPECT_NE(TypeOf("generate_image", "", "Generate an image with Gemini.",
                   R"({"type":"object","properties":{"prompt":{"type":"string"},
                       "size":{"type":"string"}}})"),
            kInfo);
  // a model that writes the answer (asked a question, or "using AI"),
  EXPECT_NE(
      TypeOf(
          "query_assistant", "", "Query the assistant.",
          R"({"type":"object","properties":{"question":{"type":"string"}}})"),
      kInfo);
  EXPECT_NE(
      TypeOf("generate_summary", "",
             "Generate a summary of the period using AI.",
             R"({"type":"object","properties":{"period":{"type":"string"}}})"),
      kInfo);
  EXPECT_NE(
      TypeOf(
          "generate_logo", "", "Generate a logo.",
          R"({"type":"object","properties":{"description":{"type":"string"}}})"),
      kInfo);
  // an install that installs, a ranking that is updated,
  EXPECT_NE(
      TypeOf("install_package", "", "Install an npm package.",
             R"({"type":"object","properties":{"name":{"type":"string"}}})"),
      kInfo);
  EXPECT_NE(
      TypeOf("rank_results", "",
             "Rank the results and update the stored ranking.",
             R"({"type":"object","properties":{"limit":{"type":"integer"}}})"),
      kInfo);
  // and the other ambiguous verbs keep no opinion ("process_payment").
  EXPECT_NE(
      TypeOf("process_payment", "", "Process a payment.",
             R"({"type":"object","properties":{"amount":{"type":"number"}}})"),
      kInfo);
}

TEST(HeuristicEvidence, AWriteStatedAsARequirementIsAWrite) {
  // MasterGo (fresh4): the side effect is stated as what the call needs.
  EXPECT_EQ(TypeOf("mcp__getComponentGenerator", "",
                   "Get the component generator workflow. You must provide "
                   "an absolute rootPath of workspace to save workflow files.",
                   R"({"type":"object","properties":{"fileId":{"type":"string"},
                       "rootPath":{"type":"string"}}})"),
            kCmd);
  EXPECT_EQ(
      TypeOf("get_export", "",
             "Get the export. A directory is required: the files will "
             "be written there.",
             R"({"type":"object","properties":{"id":{"type":"string"}}})"),
      kCmd);
  // Optional output and data at rest do not (reads labelled in seen sets:
  // mobile_get_device_logs, desktop-commander's get_recent_tool_calls).
  EXPECT_EQ(
      TypeOf("get_device_logs", "",
             "Get the device logs. For large captures, pass saveTo to "
             "write logs to a file.",
             R"({"type":"object","properties":{"limit":{"type":"integer"}}})"),
      kInfo);
  EXPECT_EQ(
      TypeOf("get_recent_calls", "",
             "Get recent tool calls. History is persisted locally.",
             R"({"type":"object","properties":{"limit":{"type":"integer"}}})"),
      kInfo);
  EXPECT_EQ(
      TypeOf("get_report", "",
             "Get a report. You must provide a month; nothing needs to "
             "be saved.",
             R"({"type":"object","properties":{"month":{"type":"string"}}})"),
      kInfo);
}

TEST(HeuristicEvidence, ExamplesAfterSuchAsAreNotTheCallsAction) {
  // ECharts (fresh3): the example after "such as" named a purchase and an
  // evaluation, which vetoed the chart renderer.
  const char* kChart = R"({"type":"object","properties":{
      "data":{"type":"array","description":"Data for the chart."},
      "title":{"type":"string","description":"Set the title of the chart."}}})";
  EXPECT_EQ(TypeOf("generate_funnel_chart", "",
                   "Generate a funnel chart to visualize the progressive "
                   "reduction of data, such as, the conversion rates of users "
                   "from visiting a website to completing a purchase.",
                   kChart),
            kInfo);
  EXPECT_EQ(TypeOf("generate_radar_chart", "",
                   "Generate a radar chart to display multidimensional data, "
                   "such as, evaluate Huawei and Apple phones.",
                   kChart),
            kInfo);
  // Before the example the sentence still decides: a purchase stays a
  // purchase, an evaluation stays an execution.
  EXPECT_EQ(TypeOf("checkout", "",
                   "Purchase the items in the cart, such as books.", ""),
            kCmd);
  EXPECT_EQ(
      TypeOf("js_eval", "",
             "Evaluate JavaScript in the page, for example a selector.", ""),
      kCmd);
  // A parameter described "Start date" is a filter, not an execution
  // (European Parliament's generate_political_landscape, fresh2).
  EXPECT_EQ(TypeOf("generate_political_landscape", "",
                   "Generate a political landscape overview of the "
                   "Parliament.",
                   R"j({"type":"object","properties":{
                       "dateFrom":{"type":"string",
                         "description":"Start date (YYYY-MM-DD)"}}})j"),
            kInfo);
  // But the tool's own "Start ..." still is one.
  EXPECT_NE(TypeOf("generate_build", "", "Start a build of the project.",
                   R"({"type":"object","properties":{}})"),
            kInfo);
}

// Session 14 (issue 31): the writes fresh6 and fresh7 let through.

TEST(HeuristicEvidence, AnActionListUnderAnyNameActs) {
  // deventerprisesoftware_scrapi-mcp/scrape_url_html (fresh7): a
  // `browserCommands` JSON array that clicks, fills forms and runs JS.
  const char* kScrape =
      R"({"type":"object","properties":{"url":{"type":"string"},
          "browserCommands":{"type":"string","description":"Optional JSON array of browser commands to execute before scraping."}}})";
  const char* kDesc = "Use a URL to scrape a website and retrieve the HTML.";
  EXPECT_EQ(TypeOf("scrape_url_html", "", kDesc, kScrape), kCmd);
  EXPECT_THAT(DetailOf("scrape_url_html", kDesc, kScrape),
              ::testing::AllOf(
                  ::testing::HasSubstr("action-list rule: 'browserCommands'"),
                  ::testing::HasSubstr("(hard veto)")));
  // An array of any name whose items are browser actions.
  EXPECT_EQ(TypeOf("get_page", "", "Get the page content.",
                   R"({"type":"object","properties":{"url":{"type":"string"},
              "before":{"type":"array","items":{"type":"object","properties":{"click":{"type":"string"},"wait":{"type":"integer"}}}}}})"),
            kCmd);
  // Counter-examples: a count (maxSteps), a boolean (includeOperations,
  // n8n-mcp/search_nodes), a plain `instructions` string (tavily_crawl),
  // a list of steps nobody performs (notes).
  EXPECT_EQ(
      TypeOf(
          "search_nodes", "", "Search n8n nodes by keyword.",
          R"({"type":"object","properties":{"query":{"type":"string"},"includeOperations":{"type":"boolean"},"maxSteps":{"type":"integer"}}})"),
      kInfo);
  EXPECT_EQ(
      TypeOf(
          "get_recipe", "", "Get a recipe by id.",
          R"({"type":"object","properties":{"id":{"type":"string"},"recipeSteps":{"type":"array","description":"Which steps to include in the response","items":{"type":"string"}}}})"),
      kInfo);
}

TEST(HeuristicEvidence, APaymentOrAStorageDestinationIsAWrite) {
  // provenonce_mcp/provenonce_get_passport (fresh7): pays a reissue fee.
  const char* kPass =
      R"j({"type":"object","properties":{"payment_tx":{"type":"string","description":"Solana transaction signature for the passport reissue fee (if applicable)"}}})j";
  const char* kDesc = "Get this agent's cryptographically signed Passport.";
  EXPECT_EQ(TypeOf("provenonce_get_passport", "", kDesc, kPass), kCmd);
  EXPECT_THAT(DetailOf("provenonce_get_passport", kDesc, kPass),
              ::testing::AllOf(
                  ::testing::HasSubstr("payment rule: parameter 'payment_tx'"),
                  ::testing::HasSubstr("(hard veto)")));
  // mcp-server-pdfnoodle/html_to_pdf (fresh6): optional s3_bucket/s3_key.
  const char* kPdf =
      R"({"type":"object","properties":{"html":{"type":"string"},"s3_bucket":{"type":"string"},"s3_key":{"type":"string"}}})";
  EXPECT_EQ(TypeOf("html_to_pdf", "", "Convert HTML content to a PDF.", kPdf),
            kCmd);
  EXPECT_THAT(DetailOf("html_to_pdf", "Convert HTML content to a PDF.", kPdf),
              ::testing::HasSubstr("storage-destination rule"));
  // Counter-examples: payment fields as filters (stripe list_disputes,
  // hostinger listStoreOrders), a bucket a read names (GCS list_objects).
  EXPECT_EQ(
      TypeOf(
          "list_disputes", "", "List disputes.",
          R"({"type":"object","properties":{"payment_intent":{"type":"string"},"payment_status":{"type":"string"}}})"),
      kInfo);
  EXPECT_EQ(
      TypeOf(
          "list_objects", "", "List objects in a bucket.",
          R"({"type":"object","properties":{"bucket_name":{"type":"string"},"prefix":{"type":"string"}}})"),
      kInfo);
}

TEST(HeuristicEvidence, AOneTimeSecretOrAFreshChallengeIsNotCacheable) {
  // didit-protocol_mcp-server/didit_verify_email (fresh6).
  const char* kCode =
      R"({"type":"object","properties":{"email":{"type":"string"},"code":{"type":"string","description":"6-character alphanumeric code from email"}}})";
  const char* kDesc = "Verify email with the 6-character code.";
  EXPECT_EQ(TypeOf("didit_verify_email", "", kDesc, kCode), kCmd);
  EXPECT_THAT(
      DetailOf("didit_verify_email", kDesc, kCode),
      ::testing::AllOf(::testing::HasSubstr("verification rule: parameter "
                                            "'code' is a one-time secret"),
                       ::testing::HasSubstr("(hard veto)")));
  // trustthenverify_trust-mcp/trust_challenge (fresh7).
  const char* kChal =
      "Get a verification challenge for a specific chain. "
      "The challenge must be signed within 1 hour.";
  const char* kAgent =
      R"({"type":"object","properties":{"agent_id":{"type":"string"}}})";
  EXPECT_EQ(TypeOf("trust_challenge", "", kChal, kAgent), kCmd);
  EXPECT_THAT(DetailOf("trust_challenge", kChal, kAgent),
              ::testing::HasSubstr("fresh challenge"));
  // Counter-examples: pure checks (a signature; validating a code is a
  // check, not a redemption), and a puzzle called a challenge (leetcode,
  // fresh5).
  EXPECT_EQ(
      TypeOf(
          "verify_signature", "", "Verify a signature against a public key.",
          R"({"type":"object","properties":{"data":{"type":"string"},"signature":{"type":"string"},"public_key":{"type":"string"}}})"),
      kInfo);
  EXPECT_EQ(
      TypeOf(
          "validate_coupon", "", "Validate a discount code.",
          R"({"type":"object","properties":{"code":{"type":"string","description":"The discount code"}}})"),
      kInfo);
  EXPECT_EQ(TypeOf("get_daily_challenge", "",
                   "Retrieves today's Daily Challenge problem (read-only, no "
                   "auth).",
                   R"({"type":"object","properties":{}})"),
            kInfo);
}

TEST(HeuristicEvidence, AConversationOrASharedPageIsState) {
  // falconer_mcp/ask_falcon (fresh7).
  const char* kAsk =
      "Ask the Falconer agent a natural-language question and get a "
      "synthesized answer. Pass the returned conversationId back to ask "
      "follow-ups in the same thread.";
  const char* kQ =
      R"({"type":"object","properties":{"question":{"type":"string"},"conversationId":{"type":"string"}}})";
  EXPECT_EQ(TypeOf("ask_falcon", "", kAsk, kQ), kCmd);
  EXPECT_THAT(DetailOf("ask_falcon", kAsk, kQ),
              ::testing::AllOf(::testing::HasSubstr("session rule"),
                               ::testing::HasSubstr("(hard veto)")));
  // mzxrai_mcp-webresearch/visit_page (fresh7).
  const char* kUrl =
      R"({"type":"object","properties":{"url":{"type":"string"},"takeScreenshot":{"type":"boolean"}}})";
  EXPECT_EQ(
      TypeOf("visit_page", "", "Visit a webpage and extract its content", kUrl),
      kCmd);
  // Counter-examples: a fetch that moves no page, a thread read by id.
  EXPECT_EQ(
      TypeOf("fetch_url", "", "Fetch a URL and return its content",
             R"({"type":"object","properties":{"url":{"type":"string"}}})"),
      kInfo);
  EXPECT_EQ(
      TypeOf(
          "get_pull_request_comments", "", "Get the comments of a thread.",
          R"({"type":"object","properties":{"threadId":{"type":"string","description":"The ID of the specific thread to get comments from"}}})"),
      kInfo);
}

TEST(HeuristicEvidence, AnActionWrittenAsAnyOfConstsCounts) {
  // x64dbg-mcp-server/x64dbg_registers (fresh6): the action enum is an
  // anyOf of objects whose `action` is a const; one is "set".
  const char* kRegs =
      R"({"type":"object","properties":{"action":{"anyOf":[
          {"type":"object","properties":{"action":{"type":"string","const":"get_all"}}},
          {"type":"object","properties":{"action":{"type":"string","const":"set"},"value":{"type":"string"}}}]}}})";
  const char* kDesc = "Get or set CPU register values";
  EXPECT_EQ(TypeOf("x64dbg_registers", "", kDesc, kRegs), kCmd);
  EXPECT_THAT(DetailOf("x64dbg_registers", kDesc, kRegs),
              ::testing::HasSubstr("allows 'set'"));
  // Counter-example: only reading consts.
  EXPECT_EQ(
      TypeOf(
          "x64dbg_memory", "", "Get memory values",
          R"({"type":"object","properties":{"action":{"anyOf":[{"const":"get_all"},{"const":"get_flags"}]}}})"),
      kInfo);
}

TEST(HeuristicEvidence, ASubmissionStatedAnywhereIsAWrite) {
  // provenonce_mcp/provenonce_beats_proof (fresh7).
  const char* kDesc =
      "Compute a Beats work-proof. Computes sequential hash chains at the "
      "current network difficulty, submits to the Beats service for a "
      "signed receipt.";
  const char* kCount =
      R"({"type":"object","properties":{"count":{"type":"integer"}}})";
  EXPECT_EQ(TypeOf("provenonce_beats_proof", "", kDesc, kCount), kCmd);
  EXPECT_THAT(DetailOf("provenonce_beats_proof", kDesc, kCount),
              ::testing::AllOf(::testing::HasSubstr("submission rule"),
                               ::testing::HasSubstr("(hard veto)")));
  // Counter-example: data others uploaded, described.
  EXPECT_EQ(
      TypeOf("list_files", "", "List the files users uploaded to the bucket.",
             R"({"type":"object","properties":{"bucket":{"type":"string"}}})"),
      kInfo);
}

}  // namespace
}  // namespace toolcache::classify

// Session 12, second round: the four writes the classifier let through on
// fresh5 (seen since), each by the structure that says the call acts.
TEST(HeuristicEvidence, ADryRunSwitchSaysTheCallHasAnEffect) {
  // pabal-store-api-mcp/release-pull-notes (fresh5): a reading verb, and a
  // switch that turns the saving off.
  const char* kDryRun =
      R"({"type":"object","properties":{
          "app":{"type":"string","description":"Registered app slug"},
          "dryRun":{"type":"boolean","description":"If true, only outputs result without actually saving"}}})";
  EXPECT_EQ(TypeOf("release-pull-notes", "",
                   "Fetch release notes from App Store/Google Play.", kDryRun),
            kCmd);
  EXPECT_THAT(
      DetailOf("release-pull-notes",
               "Fetch release notes from App Store/Google Play.", kDryRun),
      ::testing::AllOf(
          ::testing::HasSubstr("switch rule: boolean parameter 'dryRun'"),
          ::testing::HasSubstr("(hard veto)")));
  EXPECT_EQ(
      TypeOf(
          "sync", "", "Fetch the remote state.",
          R"({"type":"object","properties":{"dry_run":{"type":"boolean"}}})"),
      kCmd);
  // Counter-examples: an output-format switch, a "preview" excerpt and a
  // boolean named like a saved record stay reads.
  EXPECT_EQ(TypeOf("get_release_notes", "", "Fetch release notes.",
                   R"({"type":"object","properties":{
                       "format":{"type":"string","enum":["markdown","json"]},
                       "preview":{"type":"boolean","description":"Return only a short text excerpt"}}})"),
            kInfo);
  EXPECT_EQ(
      TypeOf(
          "image_fetch", "", "Fetch images from a URL.",
          R"({"type":"object","properties":{"saveImages":{"type":"boolean"}}})"),
      kInfo);
}

TEST(HeuristicEvidence, ASwitchNamedByAStateChangingVerbTurnsAnEffectOn) {
  // qase_mcp-server/qase_discover_tools (fresh5): found tools are
  // activated by default.
  const char* kActivate =
      R"({"type":"object","properties":{
          "query":{"type":"string","description":"Search query to find tools by name or description."},
          "activate":{"type":"boolean","default":true,"description":"If true (default), found tools are activated and become available for use"}}})";
  const char* kDesc =
      "Find and switch on tools that are hidden by default. Matching tools "
      "are activated and become callable.";
  EXPECT_EQ(
      TypeOf("qase_discover_tools", "Discover more tools", kDesc, kActivate),
      kCmd);
  EXPECT_THAT(DetailOf("qase_discover_tools", kDesc, kActivate),
              ::testing::AllOf(::testing::HasSubstr(
                                   "switch rule: boolean parameter 'activate'"),
                               ::testing::HasSubstr("(hard veto)")));
  // Counter-examples: an option whose description names the output, and
  // options that only name a verb as part of a longer name.
  EXPECT_EQ(
      TypeOf(
          "search_docs", "", "Search the documentation.",
          R"({"type":"object","properties":{"save":{"type":"boolean","description":"Save the result as markdown in the response"}}})"),
      kInfo);
  EXPECT_EQ(
      TypeOf(
          "web_search", "", "Search the web.",
          R"({"type":"object","properties":{"enableSummary":{"type":"boolean","description":"Enable summary generation for results"},
                       "storeInCache":{"type":"boolean"}}})"),
      kInfo);
}

TEST(HeuristicEvidence, AnOperationListWithAWriteIsAWrite) {
  // dataiku-mcp/variable (fresh5): "get" decides the first sentence, the
  // list also holds "set".
  const char* kEmpty = R"({"type":"object","properties":{}})";
  EXPECT_EQ(TypeOf("variable", "",
                   "Project variable ops: get/set. set merges provided "
                   "standard/local keys with existing values.",
                   kEmpty),
            kCmd);
  EXPECT_THAT(DetailOf("variable", "Project variable ops: get/set.", kEmpty),
              ::testing::AllOf(::testing::HasSubstr("operation-list rule"),
                               ::testing::HasSubstr("(hard veto)")));
  EXPECT_EQ(TypeOf("credentials", "",
                   "Get n8n credentials. Actions: list, get, create, delete.",
                   kEmpty),
            kCmd);
  // Counter-examples: lists of reading operations, and shell commands an
  // agent may type (not the tool's operations).
  EXPECT_EQ(
      TypeOf("code_env", "",
             "Code env ops: list/get. get returns package summaries.", kEmpty),
      kInfo);
  EXPECT_EQ(TypeOf("project", "",
                   "Project ops: list/get/metadata/flow/map. map returns "
                   "normalized connectivity.",
                   kEmpty),
            kInfo);
  EXPECT_EQ(
      TypeOf(
          "list_items", "", "List items. Actions: list, search, get.",
          R"({"type":"object","properties":{"action":{"type":"string","enum":["list","search","get"]}}})"),
      kInfo);
  // n8n-mcp/validate_node (wide train): an example's field
  // 'operation:"create"' is a value, not the tool's list of operations.
  EXPECT_EQ(
      TypeOf(
          "validate_node", "",
          "Validate n8n node configuration. Example: "
          "nodeType=\"nodes-base.slack\", "
          "config={resource:\"channel\",operation:\"create\"}",
          R"({"type":"object","properties":{"nodeType":{"type":"string"},"config":{"type":"object"}}})"),
      kInfo);
}

TEST(HeuristicEvidence, MeasuringTestCoverageRunsTheTests) {
  // djankies_vitest-mcp/analyze_coverage (fresh5).
  const char* kTarget =
      R"({"type":"object","properties":{"target":{"type":"string"},
          "format":{"type":"string","enum":["summary","detailed"]}}})";
  const char* kDesc =
      "Perform comprehensive test coverage analysis with line-by-line gap "
      "identification, actionable insights, and detailed metrics.";
  EXPECT_EQ(TypeOf("analyze_coverage", "", kDesc, kTarget), kCmd);
  EXPECT_THAT(DetailOf("analyze_coverage", kDesc, kTarget),
              ::testing::AllOf(::testing::HasSubstr("test-run rule"),
                               ::testing::HasSubstr("(hard veto)")));
  // Counter-examples: coverage read from a stored report or a service.
  EXPECT_EQ(
      TypeOf("get_file_coverage", "",
             "Get coverage information for a file in the head commit.",
             R"({"type":"object","properties":{"file":{"type":"string"}}})"),
      kInfo);
  EXPECT_EQ(
      TypeOf(
          "coverage_summary", "",
          "Summarize the code coverage report of the last CI build.",
          R"({"type":"object","properties":{"build_id":{"type":"string"}}})"),
      kInfo);
  EXPECT_EQ(
      TypeOf("show_coverage", "", "Show test coverage for a module.",
             R"({"type":"object","properties":{"module":{"type":"string"}}})"),
      kInfo);
}

// Session 15 (issue 31): the writes fresh8 let through.

TEST(HeuristicEvidence, AnInteractionWithAPageElementOrScreenPointActs) {
  // agent-browser-mcp/browser_check (fresh8): checks a checkbox on the page.
  const char* kCheck =
      R"j({"type":"object","properties":{"selector":{"type":"string","description":"Selector for the checkbox/radio element"},"sessionId":{"type":"string","description":"Browser session ID"}},"required":["selector"]})j";
  const char* kCheckDesc = "Check a checkbox or radio button";
  EXPECT_EQ(TypeOf("browser_check", "", kCheckDesc, kCheck), kCmd);
  EXPECT_THAT(DetailOf("browser_check", kCheckDesc, kCheck),
              ::testing::AllOf(
                  ::testing::HasSubstr("element-interaction rule: "
                                       "'selector' targets a page element"),
                  ::testing::HasSubstr("(hard veto)")));
  // mobile-pixel-mcp/tap_text (fresh8): taps text on the device screen.
  const char* kTap =
      R"j({"type":"object","properties":{"text":{"type":"string","description":"Text to tap"}},"required":["text"]})j";
  const char* kTapDesc = "Tap on the text found on the screen";
  EXPECT_EQ(TypeOf("tap_text", "", kTapDesc, kTap), kCmd);
  EXPECT_THAT(DetailOf("tap_text", kTapDesc, kTap),
              ::testing::HasSubstr("element-interaction rule: 'text' is what "
                                   "the call's verb 'tap' acts on"));
  // A screen point (x, y) with a verb the lexicons do not know.
  const char* kXy =
      R"j({"type":"object","properties":{"x":{"type":"number","description":"X coordinate"},"y":{"type":"number","description":"Y coordinate"}}})j";
  EXPECT_THAT(DetailOf("focus_point", "Focus the view at (x, y).", kXy),
              ::testing::HasSubstr("'x' and 'y' target a screen point"));
  // A read word after a preposition is no verb.
  EXPECT_THAT(
      DetailOf(
          "scroll_into_view", "Scroll an element into view.",
          R"j({"type":"object","properties":{"selector":{"type":"string","description":"Selector of the element"}}})j"),
      ::testing::HasSubstr("element-interaction rule"));
  // chrome-devtools' element uid from the page snapshot.
  EXPECT_THAT(
      DetailOf(
          "highlight", "Highlight the provided element.",
          R"j({"type":"object","properties":{"uid":{"type":"string","description":"The uid of an element on the page from the page content snapshot"}}})j"),
      ::testing::HasSubstr("'uid' targets a page element"));

  // Counter-examples (reads in the seen sets, or their shapes): the name
  // says the call returns what it finds on the element or screen.
  EXPECT_EQ(
      TypeOf(
          "browser_get_text", "",
          "Get text content from an element or the entire page",
          R"j({"type":"object","properties":{"selector":{"type":"string","description":"Selector for the element (gets full page text if not provided)"}}})j"),
      kInfo);
  EXPECT_EQ(
      TypeOf(
          "query_selector", "",
          "Return the attributes of the first element matching a selector.",
          R"j({"type":"object","properties":{"selector":{"type":"string","description":"CSS selector of the element"}}})j"),
      kInfo);
  EXPECT_EQ(
      TypeOf(
          "puppeteer_screenshot", "",
          "Take a screenshot of the current page or a specific element",
          R"j({"type":"object","properties":{"name":{"type":"string"},"selector":{"type":"string","description":"CSS selector for element to screenshot"}}})j"),
      kInfo);
  EXPECT_EQ(
      TypeOf(
          "browser_snapshot", "",
          "Capture accessibility snapshot of the current page",
          R"j({"type":"object","properties":{"target":{"type":"string","description":"Exact target element reference from the page snapshot"}}})j"),
      kInfo);
  EXPECT_EQ(
      TypeOf(
          "webview_find_element", "",
          "Find elements in a running app's webview and return their HTML.",
          R"j({"type":"object","properties":{"selector":{"type":"string","description":"The selector to find: CSS selector, XPath expression or text content of the element"}}})j"),
      kInfo);
  // Waiting observes the page and changes nothing on it: the rule leaves
  // it alone ("wait" gives no read evidence either, so it stays unknown,
  // and unknown is not cached; hypothesi's webview_wait_for, a fresh3 read,
  // reads from its description).
  EXPECT_THAT(
      DetailOf(
          "wait_for_selector",
          "Wait until an element matching the selector is visible.",
          R"j({"type":"object","properties":{"selector":{"type":"string","description":"Selector of the element to wait for"}}})j"),
      ::testing::Not(::testing::HasSubstr("element-interaction")));
  // A selector-free instruction naming elements to observe (browserbase's
  // stagehand_observe, heldout2).
  EXPECT_EQ(
      TypeOf(
          "stagehand_observe", "",
          "Observes possible actions on the current web page and returns them.",
          R"j({"type":"object","properties":{"instruction":{"type":"string","description":"Detailed instruction for what specific elements or components to observe on the web page."}}})j"),
      TypeOf("stagehand_observe", "",
             "Observes possible actions on the current web page and returns "
             "them.",
             R"j({"type":"object","properties":{}})j"));
  EXPECT_EQ(TypeOf("ui_describe_point", "",
                   "Returns the accessibility element at given co-ordinates "
                   "on the simulator's screen",
                   kXy),
            kInfo);
  EXPECT_EQ(
      TypeOf(
          "find_text", "", "Find text on the screen and return its coordinates",
          R"j({"type":"object","properties":{"text":{"type":"string","description":"Text to find"}}})j"),
      kInfo);
  // "check" without a target stays a read; selectors that filter or scope
  // content name no element.
  EXPECT_EQ(
      TypeOf(
          "check_app_status", "", "Check if an application is running",
          R"j({"type":"object","properties":{"app_id":{"type":"string","description":"Package name"}}})j"),
      kInfo);
  EXPECT_EQ(
      TypeOf(
          "kubectl_get", "", "Get or list Kubernetes resources",
          R"j({"type":"object","properties":{"labelSelector":{"type":"string","description":"Filter resources by label selector (e.g. 'app=nginx')"}}})j"),
      kInfo);
  EXPECT_EQ(
      TypeOf(
          "spider_scrape", "", "Scrape a single page and extract its content.",
          R"j({"type":"object","properties":{"url":{"type":"string"},"root_selector":{"type":"string","description":"Root CSS query selector for content extraction"}}})j"),
      kInfo);
  // x, y and z address a map tile, not a screen point.
  EXPECT_THAT(
      DetailOf(
          "map_tile", "Returns a map tile image.",
          R"j({"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"integer"},"z":{"type":"integer"}}})j"),
      ::testing::Not(::testing::HasSubstr("element-interaction")));
  // A page the call only names is no place it acts on.
  EXPECT_EQ(
      TypeOf(
          "summarize_page", "", "Summarize a web page.",
          R"j({"type":"object","properties":{"url":{"type":"string","description":"URL of the page to summarize"}}})j"),
      kInfo);
}

TEST(HeuristicEvidence, AFolderTheCallPutsFilesIntoIsASideOutput) {
  // locofy_uipro-mcp/getCodeFromUIProPlugin (fresh8): returns code and
  // writes the design's images into assetPath.
  const char* kAssets =
      R"j({"type":"object","properties":{"assetPath":{"type":"string","description":"The full path to the assets directory. Should be absolute path to a folder inside the workspace where the images are placed."}},"required":["assetPath"]})j";
  const char* kDesc =
      "Retrieve generated code from UIPro Figma plugin. First generate code "
      "in the plugin by selecting a frame, then use this tool to get the "
      "code + screenshot of design and iterate further.";
  EXPECT_EQ(TypeOf("getCodeFromUIProPlugin", "", kDesc, kAssets), kCmd);
  EXPECT_THAT(DetailOf("getCodeFromUIProPlugin", kDesc, kAssets),
              ::testing::AllOf(
                  ::testing::HasSubstr("side-output rule: parameter "
                                       "'assetPath' is a local destination "
                                       "('where ... placed')"),
                  ::testing::HasSubstr("(hard veto)")));
  // A folder named for output ("outDir", "targetDir"), and one described
  // as where the call puts its files.
  EXPECT_EQ(
      TypeOf(
          "get_icons", "", "Get the icons of a design.",
          R"j({"type":"object","properties":{"outDir":{"type":"string"}}})j"),
      kCmd);
  EXPECT_EQ(
      TypeOf(
          "get_icons", "", "Get the icons of a design.",
          R"j({"type":"object","properties":{"targetDir":{"type":"string"}}})j"),
      kCmd);
  EXPECT_EQ(
      TypeOf(
          "fetch_fonts", "", "Fetch the fonts a page uses.",
          R"j({"type":"object","properties":{"fontsFolder":{"type":"string","description":"Folder to put the font files in"}}})j"),
      kCmd);
  // Counter-examples: a path the call reads or lists is its input; a folder
  // where data is stored is where it reads from; a JSONPath extracts.
  EXPECT_EQ(
      TypeOf(
          "read_file", "", "Read the contents of a file.",
          R"j({"type":"object","properties":{"path":{"type":"string","description":"Path to the file to read"}}})j"),
      kInfo);
  EXPECT_EQ(
      TypeOf(
          "list_directory", "", "List the entries of a directory.",
          R"j({"type":"object","properties":{"path":{"type":"string","description":"Directory to list"}}})j"),
      kInfo);
  EXPECT_EQ(
      TypeOf(
          "get_logs", "", "Get the server's logs.",
          R"j({"type":"object","properties":{"logDir":{"type":"string","description":"Directory where the logs are stored"}}})j"),
      kInfo);
  EXPECT_EQ(
      TypeOf(
          "get_dashboard_property", "", "Get parts of a dashboard.",
          R"j({"type":"object","properties":{"jsonPath":{"type":"string","description":"JSONPath expression to extract specific data"}}})j"),
      kInfo);
  EXPECT_EQ(
      TypeOf(
          "list_assets", "", "List the assets of a project.",
          R"j({"type":"object","properties":{"assetDir":{"type":"string","description":"The assets directory of the project"}}})j"),
      kInfo);
}

TEST(HeuristicEvidence, AskingAPersonOrPrintingToTheConsoleInteracts) {
  // bfcl_live: question.ask prompts the user and returns their answer;
  // SimpleQuestion.ask's question is "posed to the user"; print_message
  // prints to the console.
  const char* kAsk =
      R"j({"type":"object","properties":{"prompt":{"type":"string","description":"The question to be presented to the user."},"timeout":{"type":"integer"}},"required":["prompt"]})j";
  const char* kAskDesc =
      "This function prompts the user with a question and returns their "
      "response.";
  EXPECT_EQ(TypeOf("question.ask", "", kAskDesc, kAsk), kCmd);
  EXPECT_THAT(
      DetailOf("question.ask", kAskDesc, kAsk),
      ::testing::AllOf(::testing::HasSubstr("person rule: the description says "
                                            "'prompts the user'"),
                       ::testing::HasSubstr("(hard veto)")));
  const char* kSimple =
      R"j({"type":"object","properties":{"question":{"type":"string","description":"The question posed to the user."},"answer":{"type":"string","enum":["yes","no"]}}})j";
  EXPECT_EQ(TypeOf("SimpleQuestion.ask", "",
                   "Presents a simple question based on the provided context "
                   "and expects an answer.",
                   kSimple),
            kCmd);
  EXPECT_EQ(TypeOf("print_message", "",
                   "This function prints a provided message to the console."),
            kCmd);
  EXPECT_EQ(TypeOf("get_confirmation", "",
                   "Asks the user to confirm and returns the answer."),
            kCmd);
  // Counter-examples: something returned for a user, text an assistant is
  // told to show, a question put to a model or a repository, prompts as a
  // noun.
  EXPECT_EQ(TypeOf("get_user_profile", "", "Get the user's profile."), kInfo);
  EXPECT_EQ(TypeOf("get_summary", "",
                   "Returns a summary that should be shown to the user."),
            kInfo);
  EXPECT_EQ(TypeOf("ask_question", "",
                   "Ask any question about a GitHub repository and get an "
                   "AI-powered answer."),
            kInfo);
  EXPECT_EQ(TypeOf("list_prompts", "", "List the prompts users saved."), kInfo);
  // An instruction to the assistant (circleci, xero, currents, postman and
  // browserstack reads say this), not what the call does.
  EXPECT_EQ(TypeOf("list_invoices", "",
                   "List the invoices. If the tenant is not known, ask the "
                   "user for it and present the results to the user."),
            kInfo);
  EXPECT_EQ(TypeOf("list_automations", "",
                   "List automations; present them to the user as a table."),
            kInfo);
  EXPECT_EQ(
      TypeOf(
          "get_build_id", "", "Get the latest build id.",
          R"j({"type":"object","properties":{"project":{"type":"string","description":"Project name. If not given, prompt the user for it."}}})j"),
      kInfo);
  EXPECT_EQ(
      TypeOf("get_dashboard", "", "Returns the dashboard shown to the user."),
      kInfo);
  EXPECT_EQ(
      TypeOf(
          "get_prompt", "", "Get a prompt template.",
          R"j({"type":"object","properties":{"name":{"type":"string","description":"The prompt shown in the picker"}}})j"),
      kInfo);
}

TEST(HeuristicEvidence, AnOpeningVerbThatBooksOrMovesTheViewerOutranksTheName) {
  // bfcl_live: RideSharing_2_GetRide "Book a cab ..."; look "Adjust the
  // viewing angle of the camera ..."; look_at "Orients the view ...".
  const char* kRide =
      "Book a cab to travel to the specified destination with a selected "
      "number of seats and ride type.";
  EXPECT_EQ(TypeOf("RideSharing_2_GetRide", "", kRide), kCmd);
  EXPECT_THAT(DetailOf("RideSharing_2_GetRide", kRide),
              ::testing::AllOf(::testing::HasSubstr(
                                   "stated-effect rule: the description opens "
                                   "with 'book a cab'"),
                               ::testing::HasSubstr("(hard veto)")));
  EXPECT_EQ(TypeOf("look", "",
                   "Adjust the viewing angle of the camera to a specific "
                   "orientation defined by yaw and pitch values in radians."),
            kCmd);
  EXPECT_EQ(TypeOf("look_at", "",
                   "Orients the view to focus on a specific 3D coordinate in "
                   "a virtual space."),
            kCmd);
  EXPECT_EQ(TypeOf("get_table", "", "Reserves a table at a restaurant."), kCmd);
  // Counter-examples: a reading opener, "book"/"order" as nouns, "look up",
  // a rotation of something the call returns, the camera read.
  EXPECT_EQ(TypeOf("Movies_1_GetRides", "",
                   "Get available rides for booking to a destination."),
            kInfo);
  EXPECT_EQ(TypeOf("get_book", "", "Book details for an ISBN."), kInfo);
  EXPECT_EQ(TypeOf("get_order", "", "Order details for an order number."),
            kInfo);
  EXPECT_EQ(TypeOf("lookup_word", "", "Look up a word in the dictionary."),
            kInfo);
  EXPECT_EQ(TypeOf("get_rotated_image", "",
                   "Rotate an image by 90 degrees and return it."),
            kInfo);
  EXPECT_EQ(TypeOf("get_camera", "", "Get the camera's orientation."), kInfo);
}

TEST(HeuristicEvidence, ALaterSentenceSayingTheFunctionAlsoLogsIsAnEffect) {
  // bfcl_live's user_authentication: "Authenticates a user ... and returns
  // an access token if successful. This function also logs the
  // authentication attempt."
  const char* kAuth =
      "Authenticates a user by their credentials and returns an access token "
      "if successful. This function also logs the authentication attempt.";
  EXPECT_EQ(TypeOf("user_authentication", "", kAuth), kCmd);
  EXPECT_THAT(DetailOf("user_authentication", kAuth),
              ::testing::HasSubstr("added-action rule: a later sentence of "
                                   "the description says 'this function "
                                   "also logs'"));
  EXPECT_EQ(TypeOf("get_history", "",
                   "Returns the query history. It also records the query."),
            kCmd);
  // Counter-examples: a later sentence that also reads, or names logs.
  EXPECT_EQ(TypeOf("get_logs", "",
                   "Returns the service logs. This function also returns the "
                   "total count."),
            kInfo);
  EXPECT_EQ(TypeOf("get_logs", "",
                   "Returns the service logs. This function also supports "
                   "pagination. Logs are kept for a week."),
            kInfo);
}

TEST(HeuristicEvidence, AFirstSentenceThatSaysTheCallPerformsActionsMayAct) {
  // bfcl_live's hacking.query: "... providing information or performing
  // actions as needed."
  const char* kHack =
      "This function handles queries related to hacking, cybersecurity, "
      "system penetration, and related topics, providing information or "
      "performing actions as needed.";
  EXPECT_EQ(TypeOf("hacking.query", "", kHack), kCmd);
  EXPECT_THAT(DetailOf("hacking.query", kHack),
              ::testing::HasSubstr("acting-clause rule: the description says "
                                   "'performing actions'"));
  EXPECT_EQ(TypeOf("assistant_help", "",
                   "Answers questions and takes other actions for the user."),
            kCmd);
  // Counter-examples: a negation, a reading object, actions as data.
  EXPECT_EQ(TypeOf("get_info", "",
                   "Returns information without performing any actions."),
            kInfo);
  EXPECT_EQ(
      TypeOf("list_workflow_actions", "", "Lists the actions of a workflow."),
      kInfo);
  EXPECT_EQ(TypeOf("get_audit", "", "Get an audit, performing the checks."),
            kInfo);
}

TEST(HeuristicEvidence,
     AnActingMainVerbOfTheFirstSentenceOutranksAReadingName) {
  // bfcl_live2's Trains_1_GetTrainTickets: the name's verb reads ('get'),
  // the first sentence's main verb acts.
  const char* kTrain =
      "Reserve tickets for a train journey by providing journey details, the "
      "number of passengers, and seating class preferences.";
  EXPECT_EQ(TypeOf("Trains_1_GetTrainTickets", "", kTrain), kCmd);
  EXPECT_THAT(DetailOf("Trains_1_GetTrainTickets", kTrain),
              ::testing::HasSubstr("main-verb rule: the description's first "
                                   "sentence says 'reserve'"));
  // bfcl_live2's play_spotify_song: "a provided query" is a participle used
  // as an adjective; "plays" is a second main verb, coordinated with the
  // head "searches".
  const char* kPlay =
      "This function searches for a song on Spotify using a provided query "
      "and plays the selected track";
  EXPECT_EQ(TypeOf("play_spotify_song", "", kPlay), kCmd);
  EXPECT_THAT(DetailOf("play_spotify_song", kPlay),
              ::testing::HasSubstr("says 'plays' (a main verb after "
                                   "'searches ...')"));
  // bfcl_live2's todo.list_action: "A function to manage ..., including
  // adding ..., deleting ...".
  const char* kTodo =
      "A function to manage a todo list, including adding new items, "
      "deleting existing items, or marking items as completed.";
  EXPECT_EQ(TypeOf("todo.list_action", "", kTodo), kCmd);
  EXPECT_THAT(DetailOf("todo.list_action", kTodo),
              ::testing::HasSubstr("says 'manage ... adding'"));
  EXPECT_EQ(
      TypeOf("get_song", "", "Finds the song and plays it on the speaker."),
      kCmd);
  // Counter-examples (seen reads): participles, purpose clauses, a base
  // form after "and" that is a noun.
  EXPECT_EQ(
      TypeOf("RideSharing_2_GetRides", "", "Get available rides for booking."),
      kInfo);
  EXPECT_EQ(TypeOf("get_rides", "",
                   "Retrieve the list of rides to book and reserve later."),
            kInfo);
  EXPECT_EQ(
      TypeOf("get_tickets", "", "Returns the tickets booked by the user."),
      kInfo);
  EXPECT_EQ(TypeOf("get_item", "", "Returns the item with the given id."),
            kInfo);
  EXPECT_EQ(TypeOf("contact", "",
                   "Retrieve the contact details of a person, including "
                   "their phone number and email address."),
            kInfo);
  EXPECT_EQ(TypeOf("list_notifications", "",
                   "Lists all notifications, including mentions, "
                   "assignments, and updates on issues."),
            kInfo);
  EXPECT_EQ(
      TypeOf("search_songs", "", "This function searches for songs to play."),
      kInfo);
  EXPECT_EQ(
      TypeOf("list_todos", "", "A function to list the items of a todo list."),
      kInfo);
}

TEST(HeuristicEvidence, ACredentialKeptWithASessionOrAttemptCountIsALogin) {
  // bfcl_live2's user_authentication.validate/.verify.
  const char* kSchema =
      R"({"type":"object","properties":{"username":{"type":"string"},)"
      R"("password":{"type":"string"},"remember_me":{"type":"boolean"},)"
      R"("login_attempts":{"type":"integer"}}})";
  EXPECT_EQ(TypeOf("user_authentication.validate", "",
                   "Validates a user's login credentials against the stored "
                   "user database.",
                   kSchema),
            kCmd);
  EXPECT_EQ(TypeOf("user_authentication.verify", "",
                   "Verifies if the provided user credentials are valid.",
                   R"({"type":"object","properties":{"password":{},)"
                   R"("login_attempts":{"type":"integer"}}})"),
            kCmd);
  // Counter-examples: a pure credential check, a session without a
  // credential.
  EXPECT_EQ(TypeOf("validate_password", "",
                   "Validates a password against the policy.",
                   R"({"type":"object","properties":{"password":{}}})"),
            kInfo);
  EXPECT_EQ(TypeOf("get_session", "", "Get the session's details.",
                   R"({"type":"object","properties":{"session_id":{}}})"),
            kInfo);
}

}  // namespace
}  // namespace toolcache::classify
