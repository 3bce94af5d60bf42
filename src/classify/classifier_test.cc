// Tests for the layered Classifier: hard list, operator config, MCP
// annotations, extra extractors, heuristic, TTL rules, call-level rules and
// the result rule.
#include "toolcache/classifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace toolcache {
namespace {

using ::testing::HasSubstr;

Config Yaml(const std::string& text) {
  Result<Config> c = ParseConfig(text, "test.yaml");
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : Config();
}

ToolInfo Tool(std::string name, std::string description = "") {
  ToolInfo t;
  t.name = std::move(name);
  t.description = std::move(description);
  return t;
}

ToolInfo Annotated(std::string name, std::optional<bool> read_only,
                   std::optional<bool> open_world,
                   std::optional<bool> destructive = std::nullopt) {
  ToolInfo t = Tool(std::move(name));
  ToolAnnotations a;
  a.read_only = read_only;
  a.open_world = open_world;
  a.destructive = destructive;
  t.annotations = a;
  return t;
}

TEST(ClassifierTest, HardListCannotBeRemovedByConfig) {
  Classifier c(Yaml(R"(
minCacheableTtlSeconds: 0
tools:
  bash: {requestType: INFORMATIONAL, ttlSeconds: 3600}
perToolTtl: {write_file: 3600}
trustAnnotations: true
)"));
  for (const char* name : {"bash", "write_file"}) {
    ToolInfo t = Annotated(name, true, false);
    Verdict v = c.Classify(t);
    EXPECT_FALSE(v.cacheable) << name;
    EXPECT_EQ(v.reason, VerdictReason::kHardExcluded) << name;
    EXPECT_EQ(v.source, FeatureSource::kHardList) << name;
    EXPECT_EQ(v.request_type, RequestType::kCommand) << name;
  }
}

TEST(ClassifierTest, HardListHoldsTheSeedDefaults) {
  EXPECT_EQ(HardExcludedTools().size(), 13u);
  for (const char* name :
       {"bash", "shell_exec", "shell", "send_email", "write_file", "edit_file",
        "create_file", "delete_file", "commit", "push", "deploy", "execute_sql",
        "http_request"}) {
    EXPECT_TRUE(Classifier::IsHardExcluded(name)) << name;
  }
}

TEST(ClassifierTest, HardListMatchesCaseSpellingAndMcpPrefixes) {
  for (const char* name : {"BASH", "Bash", "mcp__server__bash", "server.bash",
                           "server__write_file", "srv/shell", "srv:push",
                           "WriteFile", "send-email", "mcp__x__ExecuteSql"}) {
    EXPECT_TRUE(Classifier::IsHardExcluded(name)) << name;
  }
  for (const char* name : {"bashful", "my_bash", "pusher", "read_file",
                           "commit_message_lint", "bash_history_search"}) {
    EXPECT_FALSE(Classifier::IsHardExcluded(name)) << name;
  }
}

TEST(ClassifierTest, ExcludeToolsExtendsTheList) {
  Classifier c(Yaml("excludeTools: [get_secret, mcp__vault__read]\n"));
  Verdict v = c.Classify(Tool("get_secret"));
  EXPECT_FALSE(v.cacheable);
  EXPECT_EQ(v.reason, VerdictReason::kOperatorExcluded);
  EXPECT_EQ(v.source, FeatureSource::kConfig);
  EXPECT_THAT(v.detail, HasSubstr("excludeTools"));
  // Prefixed forms of an excluded name are excluded too.
  EXPECT_EQ(c.Classify(Tool("srv__get_secret")).reason,
            VerdictReason::kOperatorExcluded);
  // The built-in list is still in force.
  EXPECT_EQ(c.Classify(Tool("bash")).reason, VerdictReason::kHardExcluded);
  // Other reads stay cacheable.
  EXPECT_TRUE(c.Classify(Tool("get_wiki_page")).cacheable);
}

TEST(ClassifierTest, ServerExclusionsApplyOnlyToThatServer) {
  Classifier c(Yaml("servers:\n  gh:\n    excludeTools: [get_me]\n"));
  ToolInfo t = Tool("get_me");
  t.server = "gh";
  EXPECT_EQ(c.Classify(t).reason, VerdictReason::kOperatorExcluded);
  t.server = "other";
  EXPECT_TRUE(c.Classify(t).cacheable);
}

TEST(ClassifierTest, NeverCachesCommandEvenWithConfiguredTtl) {
  Classifier c(Yaml("perToolTtl: {create_issue: 3600}\n"));
  Verdict v = c.Classify(Tool("create_issue"));
  EXPECT_FALSE(v.cacheable);
  EXPECT_EQ(v.reason, VerdictReason::kCommand);
  EXPECT_EQ(v.request_type, RequestType::kCommand);
  EXPECT_EQ(v.ttl_seconds, 0);  // paper: COMMAND TTL is 0 s
}

TEST(ClassifierTest, UnknownToolIsCommand) {
  Verdict v = Classifier().Classify(Tool("frobnicate", "Frobnicates."));
  EXPECT_FALSE(v.cacheable);
  EXPECT_EQ(v.reason, VerdictReason::kCommand);
  EXPECT_THAT(v.detail, HasSubstr("unknown"));
}

TEST(ClassifierTest, OperatorRequestTypeOverridesTheHeuristic) {
  Classifier c(Yaml(R"(
tools:
  create_thumbnail: {requestType: INFORMATIONAL, ttlSeconds: 600}
  get_next_ticket: {requestType: COMMAND}
)"));
  Verdict thumb = c.Classify(Tool("create_thumbnail"));
  EXPECT_TRUE(thumb.cacheable);
  EXPECT_EQ(thumb.source, FeatureSource::kConfig);
  EXPECT_EQ(thumb.ttl_seconds, 600);
  Verdict next = c.Classify(Tool("get_next_ticket"));
  EXPECT_FALSE(next.cacheable);
  EXPECT_EQ(next.reason, VerdictReason::kCommand);
  EXPECT_EQ(next.source, FeatureSource::kConfig);
}

TEST(ClassifierTest, TtlAtMostSixtySecondsIsNotCacheableInPaperMode) {
  Classifier c(Yaml("perToolTtl: {get_page: 60, get_doc: 61}\n"));
  Verdict at = c.Classify(Tool("get_page"));
  EXPECT_FALSE(at.cacheable);
  EXPECT_EQ(at.reason, VerdictReason::kTtlTooShort);
  EXPECT_EQ(at.request_type, RequestType::kInformational);
  EXPECT_EQ(at.ttl_seconds, 60);
  Verdict above = c.Classify(Tool("get_doc"));
  EXPECT_TRUE(above.cacheable);
  EXPECT_EQ(above.ttl_seconds, 61);
}

TEST(ClassifierTest, RealTimeHeuristicTtlIsNotCacheableInPaperMode) {
  Verdict v = Classifier().Classify(Tool("get_weather"));
  EXPECT_EQ(v.request_type, RequestType::kInformational);
  EXPECT_EQ(v.ttl_seconds, 60);
  EXPECT_EQ(v.reason, VerdictReason::kTtlTooShort);
}

TEST(ClassifierTest, ShortTtlIsCacheableWhenTheMinimumIsZero) {
  Classifier c(Yaml(
      "minCacheableTtlSeconds: 0\nperToolTtl: {get_page: 30, get_now: 0}\n"));
  Verdict v = c.Classify(Tool("get_page"));
  EXPECT_TRUE(v.cacheable);
  EXPECT_EQ(v.ttl_seconds, 30);
  EXPECT_TRUE(c.Classify(Tool("get_weather")).cacheable);  // 60 s class
  // A TTL of 0 expires at once: never cacheable.
  EXPECT_EQ(c.Classify(Tool("get_now")).reason, VerdictReason::kTtlTooShort);
}

TEST(ClassifierTest, PerToolTtlOverridesHeuristicAndDefault) {
  Classifier c(Yaml(R"(
ttlSeconds: 500
perToolTtl: {get_file_contents: 900, mcp__fs__read_file: 120}
tools:
  get_file_contents: {ttlSeconds: 1800}
servers:
  gh:
    perToolTtl: {get_file_contents: 2400}
)"));
  // Defaults: heuristic class when known, else global ttlSeconds.
  EXPECT_EQ(c.Classify(Tool("get_wiki")).ttl_seconds, 3600);
  EXPECT_EQ(c.Classify(Tool("list_branches")).ttl_seconds, 500);
  // tools.<name>.ttlSeconds beats perToolTtl.
  EXPECT_EQ(c.Classify(Tool("get_file_contents")).ttl_seconds, 1800);
  // The server's own table beats any global entry.
  ToolInfo gh = Tool("get_file_contents");
  gh.server = "gh";
  EXPECT_EQ(c.Classify(gh).ttl_seconds, 2400);
  // A listed plain name matches prefixed tool names; a listed prefixed
  // name matches only itself.
  // (A file's contents change: no static class, the global default; issue
  // 31.)
  EXPECT_EQ(c.Classify(Tool("read_file")).ttl_seconds, 500);
  EXPECT_EQ(c.Classify(Tool("mcp__fs__read_file")).ttl_seconds, 120);
}

TEST(ClassifierTest, ServerTtlIsUsedForItsToolsOnly) {
  Classifier c(Yaml("servers:\n  gh:\n    ttlSeconds: 900\n"));
  ToolInfo t = Tool("list_branches");
  t.server = "gh";
  EXPECT_EQ(c.Classify(t).ttl_seconds, 900);
  t.server = "";
  EXPECT_EQ(c.Classify(t).ttl_seconds, 300);
}

TEST(ClassifierTest, ReadOnlyClosedWorldAnnotationIsInformational) {
  Verdict v = Classifier().Classify(Annotated("frobnicate", true, false));
  EXPECT_TRUE(v.cacheable);
  EXPECT_EQ(v.request_type, RequestType::kInformational);
  EXPECT_EQ(v.source, FeatureSource::kAnnotations);
  EXPECT_EQ(v.ttl_seconds, 300);
}

TEST(ClassifierTest, ReadOnlyOpenWorldNeedsAnOperatorTtl) {
  ToolInfo search = Annotated("web_search", true, true);
  Verdict v = Classifier().Classify(search);
  EXPECT_FALSE(v.cacheable);
  EXPECT_EQ(v.reason, VerdictReason::kOpenWorldNeedsTtl);
  EXPECT_EQ(v.request_type, RequestType::kInformational);
  // The global default TTL does not count as the operator's decision.
  EXPECT_EQ(Classifier(Yaml("ttlSeconds: 900\n")).Classify(search).reason,
            VerdictReason::kOpenWorldNeedsTtl);
  // A per-tool TTL does.
  Verdict with_ttl =
      Classifier(Yaml("perToolTtl: {web_search: 600}\n")).Classify(search);
  EXPECT_TRUE(with_ttl.cacheable);
  EXPECT_EQ(with_ttl.ttl_seconds, 600);
  // So does the server's TTL.
  search.server = "web";
  EXPECT_TRUE(Classifier(Yaml("servers: {web: {ttlSeconds: 120}}\n"))
                  .Classify(search)
                  .cacheable);
}

TEST(ClassifierTest, MissingOpenWorldHintMeansOpenWorld) {
  Verdict v =
      Classifier().Classify(Annotated("frobnicate", true, std::nullopt));
  EXPECT_EQ(v.reason, VerdictReason::kOpenWorldNeedsTtl);
}

TEST(ClassifierTest, DestructiveOrNotReadOnlyAnnotationIsCommand) {
  Classifier c;
  Verdict destructive = c.Classify(Annotated("get_thing", true, false, true));
  EXPECT_EQ(destructive.reason, VerdictReason::kCommand);
  EXPECT_EQ(destructive.source, FeatureSource::kAnnotations);
  // A reading name does not rescue a tool the server says writes.
  Verdict writes = c.Classify(Annotated("get_thing", false, false));
  EXPECT_EQ(writes.reason, VerdictReason::kCommand);
  EXPECT_EQ(writes.source, FeatureSource::kAnnotations);
  // Hints given but readOnlyHint absent: MCP default false.
  Verdict unset = c.Classify(Annotated("get_thing", std::nullopt, false));
  EXPECT_EQ(unset.reason, VerdictReason::kCommand);
  EXPECT_EQ(unset.source, FeatureSource::kAnnotations);
}

TEST(ClassifierTest, HeuristicVetoesReadOnlyAnnotationOnMutatingName) {
  Verdict v = Classifier().Classify(Annotated("send_message", true, false));
  EXPECT_FALSE(v.cacheable);
  EXPECT_EQ(v.reason, VerdictReason::kCommand);
  EXPECT_EQ(v.source, FeatureSource::kHeuristic);
}

TEST(ClassifierTest, StrayNounDoesNotOverruleATrustedReadOnlyHint) {
  // Issue 18: 'request' is a noun here; only the name's own verb vetoes.
  Verdict v =
      Classifier().Classify(Annotated("browser_network_request", true, false));
  EXPECT_TRUE(v.cacheable);
  EXPECT_EQ(v.source, FeatureSource::kAnnotations);
  EXPECT_THAT(v.detail, HasSubstr("readOnlyHint outranks"));
  // The same tool without annotations is not trusted to read.
  EXPECT_EQ(Classifier().Classify(Tool("browser_network_request")).reason,
            VerdictReason::kCommand);
}

TEST(ClassifierTest, ExecutionVetoNamesTheRuleAndTheWords) {
  Verdict v = Classifier().Classify(
      Tool("db_query", "Execute a SQL query against a database"));
  EXPECT_EQ(v.reason, VerdictReason::kCommand);
  EXPECT_THAT(v.detail, HasSubstr("execution rule"));
  EXPECT_THAT(v.detail, HasSubstr("'execute'"));
  // A trusted read-only annotation says otherwise: it stands.
  ToolInfo t = Annotated("db_query", true, false);
  t.description = "Execute a read-only SQL query against a database";
  EXPECT_EQ(Classifier().Classify(t).request_type, RequestType::kInformational);
}

TEST(ClassifierTest, OperatorTtlOverARealTimeToolIsSaidInTheVerdict) {
  ToolInfo t = Tool("slack_get_channel_history", "Get recent messages");
  Verdict plain = Classifier().Classify(t);
  EXPECT_EQ(plain.ttl_seconds, 60);  // 'recent' beats the static 'history'
  EXPECT_EQ(plain.reason, VerdictReason::kTtlTooShort);
  EXPECT_THAT(plain.detail, HasSubstr("'recent' in the description"));
  Verdict v = Classifier(Yaml("perToolTtl: {slack_get_channel_history: 600}\n"))
                  .Classify(t);
  EXPECT_TRUE(v.cacheable);
  EXPECT_EQ(v.ttl_seconds, 600);
  EXPECT_THAT(v.detail, HasSubstr("lengthens the 60 s"));
}

TEST(ClassifierTest, ReturnAsANameVerbIsAWrite) {
  // Issue 27 item 17 / issue 31: tau2-bench labels these WRITE; 'return'
  // reads only in prose ("Returns the list ...").
  Classifier c;
  for (const char* name :
       {"return_delivered_order_items", "return_order", "return_book"}) {
    Verdict v = c.Classify(Tool(name, "Return some items of an order."));
    EXPECT_EQ(v.request_type, RequestType::kCommand) << name;
    EXPECT_THAT(v.detail, HasSubstr("name-verb rule: 'return'")) << name;
  }
  Verdict reads =
      c.Classify(Tool("list_orders", "Returns the orders of a user."));
  EXPECT_EQ(reads.request_type, RequestType::kInformational);
}

TEST(ClassifierTest, ServerWideTtlNeverLengthensAJudgedRealTimeClass) {
  // Issue 31: a server-wide TTL is a duration, not a judgement of the tool;
  // the 60 s real-time class stays and so stays below the minimum.
  ToolInfo t = Tool("slack_get_channel_history", "Get recent messages");
  t.server = "slack";
  Verdict v =
      Classifier(Yaml("servers: {slack: {ttlSeconds: 600}}\n")).Classify(t);
  EXPECT_FALSE(v.cacheable);
  EXPECT_EQ(v.reason, VerdictReason::kTtlTooShort);
  EXPECT_EQ(v.ttl_seconds, 60);
  EXPECT_THAT(v.detail, HasSubstr("server-wide TTL 600 s does not lengthen"));
  // A shorter server-wide TTL still shortens.
  Verdict shorter = Classifier(Yaml("minCacheableTtlSeconds: 0\n"
                                    "servers: {slack: {ttlSeconds: 30}}\n"))
                        .Classify(t);
  EXPECT_EQ(shorter.ttl_seconds, 30);
  // A tool without a judged class takes the server's TTL.
  ToolInfo plain = Tool("list_channels", "List the channels");
  plain.server = "slack";
  EXPECT_EQ(Classifier(Yaml("servers: {slack: {ttlSeconds: 600}}\n"))
                .Classify(plain)
                .ttl_seconds,
            600);
}

TEST(ClassifierTest, ARealTimeClassNeverLengthensTheOperatorsDefault) {
  // The real-time class (60 s) says how long an answer may be kept at most;
  // an operator whose default is shorter keeps the shorter one.
  ToolInfo t = Tool("slack_get_channel_history", "Get recent messages");
  Verdict v = Classifier(Yaml("minCacheableTtlSeconds: 0\n"
                              "ttlSeconds: 30\n"))
                  .Classify(t);
  EXPECT_TRUE(v.cacheable);
  EXPECT_EQ(v.ttl_seconds, 30);
  EXPECT_THAT(v.detail, HasSubstr("TTL 30 s from default ttlSeconds"));
  // A longer default is still shortened to the class: 60 s, and so not
  // cacheable with the paper's minimum.
  Verdict longer = Classifier(Yaml("ttlSeconds: 900\n")).Classify(t);
  EXPECT_EQ(longer.ttl_seconds, 60);
  EXPECT_EQ(longer.reason, VerdictReason::kTtlTooShort);
  EXPECT_THAT(longer.detail, HasSubstr("shortened from 900 s"));
  // The operator's TTL for this tool decides, and the verdict says what it
  // overrode.
  Verdict own =
      Classifier(Yaml("minCacheableTtlSeconds: 0\nttlSeconds: 30\n"
                      "perToolTtl: {slack_get_channel_history: 45}\n"))
          .Classify(t);
  EXPECT_EQ(own.ttl_seconds, 45);
  EXPECT_TRUE(own.cacheable);
}

TEST(ClassifierTest, ServerWideTtlUnlocksOpenWorldOnlyWhenTheToolReads) {
  Classifier c(Yaml("servers: {srv: {ttlSeconds: 600}}\n"));
  // Annotated read-only but nothing else in the definition reads.
  ToolInfo t = Annotated("frobnicate", true, true);
  t.server = "srv";
  Verdict v = c.Classify(t);
  EXPECT_FALSE(v.cacheable);
  EXPECT_EQ(v.reason, VerdictReason::kOpenWorldNeedsTtl);
  EXPECT_THAT(v.detail, HasSubstr("server-wide TTL unlocks"));
  // The heuristic agrees: cacheable.
  ToolInfo search = Annotated("search_docs", true, true);
  search.server = "srv";
  EXPECT_TRUE(c.Classify(search).cacheable);
  // A per-tool TTL is the operator's decision for this tool.
  EXPECT_TRUE(
      Classifier(Yaml("servers: {srv: {perToolTtl: {frobnicate: 600}}}\n"))
          .Classify(t)
          .cacheable);
}

TEST(ClassifierTest, HardVetoContradictsAReadOnlyHintAndSaysSo) {
  // Issue 31: 8 of 575 readOnlyHints were on tools that change state.
  Classifier c;
  ToolInfo sql = Annotated("run_report", true, false);
  sql.description = "Run a report";
  sql.input_schema_json =
      R"({"type":"object","properties":{"sql":{"type":"string"}}})";
  Verdict v = c.Classify(sql);
  EXPECT_EQ(v.request_type, RequestType::kCommand);
  EXPECT_THAT(v.detail, HasSubstr("execution rule: parameter 'sql'"));
  EXPECT_THAT(v.detail, HasSubstr("contradicts the annotation"));
  ToolInfo file = Annotated("get_chart", true, false);
  file.input_schema_json =
      R"({"type":"object","properties":{"outputPath":{"type":"string"}}})";
  EXPECT_THAT(c.Classify(file).detail, HasSubstr("file-output rule"));
  EXPECT_EQ(c.Classify(file).request_type, RequestType::kCommand);
  ToolInfo send = Annotated("notify_user", true, false);
  send.description = "Send a notification to the user.";
  Verdict sv = c.Classify(send);
  EXPECT_EQ(sv.request_type, RequestType::kCommand);
  EXPECT_THAT(sv.detail, HasSubstr("hard veto"));
}

TEST(ClassifierTest, MutableDataGetsNoStaticTtl) {
  // Issue 31: 41 tools got 3600 s on data that changes.
  Classifier c;
  for (const char* name : {"read_records", "read_messages", "read_sheet",
                           "get_file_content", "get_book"}) {
    Verdict v = c.Classify(Tool(name));
    EXPECT_EQ(v.ttl_seconds, 300) << name;
    EXPECT_THAT(v.detail, HasSubstr("default ttlSeconds")) << name;
  }
  // Published, versioned text stays static, and says why.
  Verdict wiki = c.Classify(Tool("get_wiki_page"));
  EXPECT_EQ(wiki.ttl_seconds, 3600);
  EXPECT_THAT(wiki.detail, HasSubstr("static word 'wiki'"));
}

TEST(ClassifierTest, UntrustedAnnotationsAreIgnored) {
  ToolInfo t = Annotated("frobnicate", true, false);
  Classifier distrust(Yaml("trustAnnotations: false\n"));
  EXPECT_EQ(distrust.Classify(t).reason, VerdictReason::kCommand);
  EXPECT_EQ(distrust.Classify(t).source, FeatureSource::kHeuristic);
  // Per server: distrust one server, trust the rest.
  Classifier per_server(Yaml("servers: {shady: {trustAnnotations: false}}\n"));
  t.server = "shady";
  EXPECT_EQ(per_server.Classify(t).reason, VerdictReason::kCommand);
  t.server = "good";
  EXPECT_TRUE(per_server.Classify(t).cacheable);
  // And the reverse: trust only one server.
  Classifier only(Yaml(
      "trustAnnotations: false\nservers: {good: {trustAnnotations: true}}\n"));
  EXPECT_TRUE(only.Classify(t).cacheable);
  // The option used for evaluation ignores them whatever the config says.
  Classifier blind(Config(), ClassifierOptions{.use_annotations = false});
  EXPECT_FALSE(blind.Classify(t).cacheable);
}

TEST(ClassifierTest, SendingActionArgumentMakesTheCallCommand) {
  // The paper's example: message(send; Mike; "Hello") vs message(read; last).
  ToolInfo msg = Tool("message", "Messaging tool.");
  Classifier c;
  Verdict send = c.ClassifyCall(msg, R"({"action":"send","to":"Mike"})");
  EXPECT_FALSE(send.cacheable);
  EXPECT_EQ(send.reason, VerdictReason::kCommand);
  EXPECT_THAT(send.detail, HasSubstr("action='send'"));
  Verdict read = c.ClassifyCall(msg, R"({"action":"read","which":"last"})");
  EXPECT_EQ(read.request_type, RequestType::kInformational);
  EXPECT_TRUE(read.cacheable);
  // Tool level (no arguments): unknown, so COMMAND.
  EXPECT_EQ(c.Classify(msg).reason, VerdictReason::kCommand);
}

TEST(ClassifierTest, ReadingActionDoesNotOverrideMutatingName) {
  Classifier c;
  EXPECT_EQ(
      c.ClassifyCall(Tool("send_message"), R"({"action":"read"})").request_type,
      RequestType::kCommand);
  // A multi-purpose verb is decided by the action.
  EXPECT_TRUE(
      c.ClassifyCall(Tool("manage_wiki"), R"({"action":"get","page":"x"})")
          .cacheable);
  EXPECT_FALSE(
      c.ClassifyCall(Tool("manage_wiki"), R"({"action":"delete","page":"x"})")
          .cacheable);
  // A read-only annotation is vetoed by a mutating action value.
  EXPECT_FALSE(c.ClassifyCall(Annotated("notes", true, false),
                              R"({"method":"create","body":"x"})")
                   .cacheable);
}

TEST(ClassifierTest, ParameterCategoryIsFirstArgumentOfMultiArgumentCall) {
  Classifier c;
  ToolInfo w = Tool("get_wiki_page");
  EXPECT_EQ(c.ClassifyCall(w, R"({"location":"London","date":"2024-05-01"})")
                .parameter_category,
            "location");
  // The caller's key order, not alphabetical order.
  EXPECT_EQ(c.ClassifyCall(w, R"({"zeta":1,"alpha":2})").parameter_category,
            "zeta");
  // One argument: no category (each group would be one object).
  EXPECT_EQ(c.ClassifyCall(w, R"({"title":"Paris"})").parameter_category, "");
  EXPECT_EQ(c.ClassifyCall(w, "{}").parameter_category, "");
  // Malformed arguments: tool-level rules only.
  Verdict bad = c.ClassifyCall(w, "{not json");
  EXPECT_TRUE(bad.cacheable);
  EXPECT_EQ(bad.parameter_category, "");
}

TEST(ClassifierTest, ToolLevelCategoryIsFirstSchemaProperty) {
  ToolInfo t = Tool("get_wiki_page");
  t.input_schema_json =
      R"({"type":"object","properties":{"title":{"type":"string"},"lang":{"type":"string"}}})";
  EXPECT_EQ(Classifier().Classify(t).parameter_category, "title");
}

TEST(ClassifierTest, ConfiguredParameterCategoryOverridesTheFirstArgument) {
  Classifier c(Yaml("tools: {get_wiki_page: {parameterCategory: lang}}\n"));
  EXPECT_EQ(
      c.ClassifyCall(Tool("get_wiki_page"), R"({"title":"x","lang":"en"})")
          .parameter_category,
      "lang");
}

TEST(ClassifierTest, ErrorAndPartialResultsAreNeverCached) {
  Verdict ok = Classifier().Classify(Tool("get_wiki_page"));
  ASSERT_TRUE(ok.cacheable);
  Verdict err = Classifier::AdmitResult(ok, /*is_error=*/true, true);
  EXPECT_FALSE(err.cacheable);
  EXPECT_EQ(err.reason, VerdictReason::kErrorResult);
  Verdict partial = Classifier::AdmitResult(ok, false, /*is_complete=*/false);
  EXPECT_FALSE(partial.cacheable);
  EXPECT_EQ(partial.reason, VerdictReason::kIncompleteResult);
  EXPECT_TRUE(Classifier::AdmitResult(ok, false, true).cacheable);
  // A non-cacheable call keeps its own reason.
  Verdict cmd = Classifier().Classify(Tool("create_issue"));
  EXPECT_EQ(Classifier::AdmitResult(cmd, true, true).reason,
            VerdictReason::kCommand);
}

class FixedExtractor final : public FeatureExtractor {
 public:
  explicit FixedExtractor(RequestType type) : type_(type) {}
  FeatureSource source() const override { return FeatureSource::kLlm; }
  std::optional<Features> Extract(const ToolInfo&,
                                  std::string_view) const override {
    Features f;
    f.request_type = type_;
    f.ttl_seconds = 7200;
    f.detail = "llm says so";
    return f;
  }

 private:
  RequestType type_;
};

TEST(ClassifierTest, ExtraExtractorRunsBeforeTheHeuristicAfterTheHardList) {
  std::vector<std::unique_ptr<FeatureExtractor>> extra;
  extra.push_back(
      std::make_unique<FixedExtractor>(RequestType::kInformational));
  Classifier c(Config(), {}, std::move(extra));
  Verdict v = c.Classify(Tool("frobnicate"));
  EXPECT_TRUE(v.cacheable);
  EXPECT_EQ(v.source, FeatureSource::kLlm);
  EXPECT_EQ(v.ttl_seconds, 7200);
  // The heuristic may still veto an explicit mutating verb.
  EXPECT_FALSE(c.Classify(Tool("delete_repo")).cacheable);
  EXPECT_EQ(c.Classify(Tool("shell")).reason, VerdictReason::kHardExcluded);
}

TEST(ClassifierTest, ToolInfoFromJsonReadsMcpToolObjects) {
  nlohmann::json tool = nlohmann::json::parse(R"({
    "name": "get_weather", "title": "Weather", "description": "Current weather",
    "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
    "annotations": {"readOnlyHint": true, "openWorldHint": false}})");
  Result<ToolInfo> t = ToolInfoFromJson(tool, "wx");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->name, "get_weather");
  EXPECT_EQ(t->server, "wx");
  EXPECT_EQ(t->title, "Weather");
  EXPECT_THAT(t->input_schema_json, HasSubstr("city"));
  ASSERT_TRUE(t->annotations.has_value());
  EXPECT_EQ(t->annotations->read_only, true);
  EXPECT_EQ(t->annotations->open_world, false);
  EXPECT_FALSE(t->annotations->destructive.has_value());

  EXPECT_FALSE(ToolInfoFromJson(nlohmann::json::parse("[1]")).ok());
  EXPECT_THAT(ToolInfoFromJson(nlohmann::json::parse(R"({"title":"x"})"))
                  .status()
                  .message(),
              HasSubstr("'name'"));
  EXPECT_THAT(ToolInfoFromJson(
                  nlohmann::json::parse(
                      R"({"name":"x","annotations":{"readOnlyHint":"yes"}})"))
                  .status()
                  .message(),
              HasSubstr("readOnlyHint"));
}

// Session 16: a call that waits for an event is never cached, whatever the
// minimum TTL and the server's TTL (executeautomation's
// playwright_assert_response, a labelled write the retrained veto no longer
// catches); only the operator's own TTL for the tool decides otherwise.
TEST(ClassifierTest, AWaitIsNeverCachedWhateverTheMinimumOrServerTtl) {
  ToolInfo t = Tool("playwright_assert_response",
                    "Wait for and validate a previously initiated HTTP "
                    "response wait operation.");
  t.server = "pw";
  for (const char* yaml :
       {"servers: {}\n", "minCacheableTtlSeconds: 0\n",
        "minCacheableTtlSeconds: 0\nservers:\n  pw: {ttlSeconds: 300}\n",
        "ttlSeconds: 30\nminCacheableTtlSeconds: 10\n"}) {
    const Verdict v =
        Classifier(Yaml(yaml), {.use_learned_model = false}).Classify(t);
    EXPECT_FALSE(v.cacheable) << yaml << v.detail;
    EXPECT_EQ(v.ttl_seconds, 0) << yaml;
    EXPECT_THAT(v.detail, HasSubstr("waits for an event is never cached"));
  }
  const Verdict own = Classifier(Yaml("tools:\n  playwright_assert_response: "
                                      "{ttlSeconds: 120}\n"),
                                 {.use_learned_model = false})
                          .Classify(t);
  EXPECT_TRUE(own.cacheable) << own.detail;
  EXPECT_EQ(own.ttl_seconds, 120);
  // The same tool without the wait is cacheable (the rule, not the verb).
  t.description = "Validate a previously initiated HTTP response.";
  EXPECT_TRUE(Classifier(Yaml("servers: {}\n"), {.use_learned_model = false})
                  .Classify(t)
                  .cacheable);
}

}  // namespace
}  // namespace toolcache
