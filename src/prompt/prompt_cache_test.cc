// The prompt-cache stage on request bodies as the providers' clients send
// them: the rewrite (stable tools, memoised bytes, breakpoints, limits) and
// break detection with attribution, on a manual clock.
#include "toolcache/prompt_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "src/metrics/metrics.h"
#include "src/prompt/span_tree.h"

namespace toolcache {
namespace {

using OJ = nlohmann::ordered_json;
using J = nlohmann::json;

// A tool with a schema big enough (padding) to pass the minimum length.
OJ Tool(const std::string& name, const std::string& desc = "does things",
        int pad = 0) {
  OJ t;
  t["name"] = name;
  t["description"] = desc + std::string(pad, '.');
  t["input_schema"] = {{"type", "object"},
                       {"properties", {{"path", {{"type", "string"}}}}},
                       {"required", {"path"}}};
  return t;
}

// The same tool serialised with its keys in another order.
OJ Reordered(const OJ& t) {
  OJ r;
  r["input_schema"] = {{"required", t["input_schema"]["required"]},
                       {"properties", t["input_schema"]["properties"]},
                       {"type", "object"}};
  r["description"] = t["description"];
  r["name"] = t["name"];
  return r;
}

OJ Body(const std::vector<OJ>& tools, int turns,
        const std::string& system = "be brief") {
  OJ b;
  b["model"] = "claude-sonnet-4-5";
  b["max_tokens"] = 100;
  b["system"] = system;
  b["tools"] = tools;
  b["messages"] = OJ::array();
  b["messages"].push_back({{"role", "user"}, {"content", "hello"}});
  for (int i = 1; i < turns; ++i) {
    b["messages"].push_back(
        {{"role", "assistant"}, {"content", "answer " + std::to_string(i)}});
    b["messages"].push_back(
        {{"role", "user"}, {"content", "more " + std::to_string(i)}});
  }
  return b;
}

std::vector<std::string> Names(const OJ& body) {
  std::vector<std::string> out;
  for (const OJ& t : body["tools"]) out.push_back(t["name"]);
  return out;
}

// The client's request and the upstream's, compared after normalising what
// the rewrite may change: cache_control removed, string content as blocks,
// tools sorted by name, keys sorted.
J Normalised(const OJ& body) {
  std::function<J(const OJ&)> norm = [&](const OJ& v) -> J {
    if (v.is_object()) {
      J o = J::object();
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (it.key() == "cache_control") continue;
        o[it.key()] = norm(it.value());
      }
      return o;
    }
    if (v.is_array()) {
      J a = J::array();
      for (const OJ& e : v) a.push_back(norm(e));
      return a;
    }
    return J::parse(v.dump());
  };
  J j = norm(body);
  if (j.contains("system") && j["system"].is_string()) {
    j["system"] = J::array({{{"type", "text"}, {"text", j["system"]}}});
  }
  for (J& m : j["messages"]) {
    if (m["content"].is_string()) {
      m["content"] = J::array({{{"type", "text"}, {"text", m["content"]}}});
    }
  }
  std::sort(j["tools"].begin(), j["tools"].end(),
            [](const J& a, const J& b) { return a["name"] < b["name"]; });
  return j;
}

int CountBreakpoints(const OJ& v) {
  int n = 0;
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      n += it.key() == "cache_control" ? 1 : CountBreakpoints(it.value());
    }
  } else if (v.is_array()) {
    for (const OJ& e : v) n += CountBreakpoints(e);
  }
  return n;
}

class PromptCacheTest : public ::testing::Test {
 protected:
  void Make(PromptCacheOptions o) {
    pc_ = NewPromptCache(o, &clock_, &registry_);
  }
  // As the proxy sends it: the rewritten body, or the client's.
  PreparedRequest Send(const OJ& body,
                       PromptApi api = PromptApi::kAnthropicMessages) {
    PreparedRequest p = pc_->Prepare(api, "cred:test", body.dump());
    if (!p.rewritten) p.body = body.dump();
    return p;
  }
  std::optional<CacheBreak> Usage(const PreparedRequest& p, int64_t read,
                                  int64_t creation = 0) {
    return pc_->Observe(p.ticket, {.input_tokens = 10,
                                   .cache_read_tokens = read,
                                   .cache_creation_tokens = creation});
  }
  ManualClock clock_{1000};
  metrics::Registry registry_;
  std::unique_ptr<PromptCache> pc_;
};

TEST_F(PromptCacheTest, SortsBuiltinsAsPrefixAndMcpToolsAsSuffix) {
  Make({.stabilize_tools = true});
  OJ body = Body({Tool("mcp__git__status"), Tool("Write"),
                  Tool("mcp__fs__read"), Tool("Read"), Tool("Bash")},
                 1);
  PreparedRequest p = Send(body);
  ASSERT_TRUE(p.rewritten);
  OJ sent = OJ::parse(p.body);
  EXPECT_EQ(Names(sent),
            (std::vector<std::string>{"Bash", "Read", "Write", "mcp__fs__read",
                                      "mcp__git__status"}));
  EXPECT_EQ(Normalised(sent), Normalised(body));
  EXPECT_EQ(p.tools_moved, 5u);
}

TEST_F(PromptCacheTest, AlreadyStableRequestIsForwardedByteForByte) {
  Make({.stabilize_tools = true});
  const std::string raw =
      "{\"model\":\"m\",  \"tools\":[{\"name\":\"A\",\"input_schema\":{}},"
      "{\"name\":\"mcp__s__b\",\"input_schema\":{}}],\"messages\":[]}";
  PreparedRequest p =
      pc_->Prepare(PromptApi::kAnthropicMessages, "cred:test", raw);
  EXPECT_FALSE(p.rewritten);
  EXPECT_EQ(p.body, "");
}

TEST_F(PromptCacheTest,
       ToolBytesStayIdenticalWhenClientReshufflesAndReserialises) {
  Make({.stabilize_tools = true});
  OJ read = Tool("Read"), grep = Tool("Grep"), mcp = Tool("mcp__db__query");
  PreparedRequest p1 = Send(Body({read, grep, mcp}, 1));
  // Turn 2: another order, every schema re-serialised with other key order.
  OJ body2 = Body({Reordered(mcp), Reordered(read), Reordered(grep)}, 2);
  PreparedRequest p2 = Send(body2);
  const std::string t1 = OJ::parse(p1.body)["tools"].dump();
  const std::string t2 = OJ::parse(p2.body)["tools"].dump();
  EXPECT_EQ(t1, t2);
  EXPECT_EQ(p2.tools_memoised, 3u);
  // The prefix bytes up to the messages are the same in both bodies.
  EXPECT_EQ(p1.body.substr(0, p1.body.find("\"messages\"")),
            p2.body.substr(0, p2.body.find("\"messages\"")));
  EXPECT_EQ(Normalised(OJ::parse(p2.body)), Normalised(body2));
}

TEST_F(PromptCacheTest, ChangedSchemaIsSentAsChanged) {
  Make({.stabilize_tools = true});
  Send(Body({Tool("Read", "reads a file")}, 1));
  OJ body2 = Body({Reordered(Tool("Read", "reads a FILE"))}, 2);
  PreparedRequest p2 = Send(body2);
  OJ sent = OJ::parse(p2.body);
  EXPECT_EQ(sent["tools"][0]["description"], "reads a FILE");
  EXPECT_EQ(p2.tools_memoised, 0u);
  EXPECT_EQ(Normalised(sent), Normalised(body2));
}

TEST_F(PromptCacheTest, MemoIsPerConversation) {
  Make({.stabilize_tools = true});
  OJ a = Body({Tool("Read")}, 1);
  Send(a);
  OJ b = Body({Reordered(Tool("Read"))}, 1);
  b["messages"][0]["content"] = "another conversation";
  PreparedRequest p = Send(b);
  EXPECT_EQ(p.tools_memoised, 0u);
  EXPECT_EQ(OJ::parse(p.body)["tools"][0].begin().key(), "input_schema");
}

TEST_F(PromptCacheTest, DeduplicatesByNameFirstWins) {
  Make({.stabilize_tools = true});
  PreparedRequest p = Send(
      Body({Tool("Read", "first"), Tool("Bash"), Tool("Read", "second")}, 1));
  OJ sent = OJ::parse(p.body);
  ASSERT_EQ(Names(sent), (std::vector<std::string>{"Bash", "Read"}));
  EXPECT_EQ(sent["tools"][1]["description"], "first");
  EXPECT_EQ(p.tools_deduplicated, 1u);
}

TEST_F(PromptCacheTest, StabilisesOpenAiFunctionTools) {
  Make({.stabilize_tools = true});
  OJ body;
  body["model"] = "gpt-4.1";
  body["messages"] = {{{"role", "user"}, {"content", "hi"}}};
  auto fn = [](const std::string& n) {
    return OJ{
        {"type", "function"},
        {"function", {{"name", n}, {"parameters", {{"type", "object"}}}}}};
  };
  body["tools"] = {fn("mcp__x__a"), fn("zeta"), fn("alpha")};
  PreparedRequest p = Send(body, PromptApi::kOpenAiChat);
  OJ sent = OJ::parse(p.body);
  EXPECT_EQ(sent["tools"][0]["function"]["name"], "alpha");
  EXPECT_EQ(sent["tools"][1]["function"]["name"], "zeta");
  EXPECT_EQ(sent["tools"][2]["function"]["name"], "mcp__x__a");
  EXPECT_EQ(CountBreakpoints(sent), 0);
}

TEST_F(PromptCacheTest, PlacesBreakpointsOnLastToolSystemAndLastTurn) {
  Make({.place_cache_control = true,
        .cache_system = true,
        .cache_last_turn = true,
        .min_cacheable_tokens = 100});
  OJ body = Body({Tool("A", "x", 300), Tool("B", "x", 300)}, 2);
  PreparedRequest p = Send(body);
  OJ sent = OJ::parse(p.body);
  EXPECT_EQ(p.breakpoints_added, 3u);
  EXPECT_EQ(sent["tools"][1]["cache_control"], OJ({{"type", "ephemeral"}}));
  EXPECT_FALSE(sent["tools"][0].contains("cache_control"));
  EXPECT_EQ(sent["system"][0]["cache_control"]["type"], "ephemeral");
  EXPECT_EQ(sent["messages"].back()["content"][0]["cache_control"]["type"],
            "ephemeral");
  EXPECT_EQ(Normalised(sent), Normalised(body));
}

TEST_F(PromptCacheTest, MarksTheLastBuiltinWhenMcpToolsFollow) {
  Make({.stabilize_tools = true,
        .place_cache_control = true,
        .min_cacheable_tokens = 100});
  PreparedRequest p = Send(Body(
      {Tool("mcp__git__log", "x", 200), Tool("Read", "x", 500), Tool("Bash")},
      1));
  OJ sent = OJ::parse(p.body);
  ASSERT_EQ(Names(sent),
            (std::vector<std::string>{"Bash", "Read", "mcp__git__log"}));
  EXPECT_FALSE(sent["tools"][0].contains("cache_control"));
  EXPECT_TRUE(sent["tools"][1].contains("cache_control"));  // last built-in
  EXPECT_TRUE(sent["tools"][2].contains("cache_control"));  // last tool
  EXPECT_EQ(p.breakpoints_added, 2u);
}

TEST_F(PromptCacheTest, BreakpointSkipsDeferredToolsAndShortPrefixes) {
  Make({.place_cache_control = true, .min_cacheable_tokens = 100});
  OJ deferred = Tool("mcp__s__late", "x", 400);
  deferred["defer_loading"] = true;
  PreparedRequest p = Send(Body({Tool("A", "x", 500), deferred}, 1));
  OJ sent = OJ::parse(p.body);
  EXPECT_TRUE(sent["tools"][0].contains("cache_control"));
  EXPECT_FALSE(sent["tools"][1].contains("cache_control"));
  // Below the minimum cacheable length: no breakpoint wasted.
  PreparedRequest small = Send(Body({Tool("A")}, 1, "other"));
  EXPECT_EQ(small.breakpoints_added, 0u);
  EXPECT_FALSE(small.rewritten);
}

TEST_F(PromptCacheTest, NeverMovesClientBreakpointsNorExceedsFour) {
  Make({.stabilize_tools = true,
        .place_cache_control = true,
        .cache_system = true,
        .cache_last_turn = true,
        .min_cacheable_tokens = 1});
  // The client marks Read (which is not last after sorting): it stays
  // there; the last tool, the system prompt and the last turn get ours.
  OJ read = Tool("Read", "x", 100);
  read["cache_control"] = {{"type", "ephemeral"}};
  OJ body = Body({Tool("Write"), read}, 1);
  OJ sent = OJ::parse(Send(body).body);
  EXPECT_EQ(sent["tools"][0]["name"], "Read");
  EXPECT_TRUE(sent["tools"][0].contains("cache_control"));
  EXPECT_TRUE(sent["tools"][1].contains("cache_control"));
  EXPECT_EQ(CountBreakpoints(sent), 4);
  EXPECT_EQ(Normalised(sent), Normalised(body));
  // Three client breakpoints in messages: only one more fits (tools).
  OJ full = Body({Tool("A"), Tool("B")}, 3, "sys");
  for (int i : {0, 2, 4}) {
    full["messages"][i]["content"] =
        OJ::array({{{"type", "text"},
                    {"text", "m"},
                    {"cache_control", {{"type", "ephemeral"}}}}});
  }
  PreparedRequest p = Send(full);
  sent = OJ::parse(p.body);
  EXPECT_EQ(CountBreakpoints(sent), 4);
  EXPECT_EQ(p.breakpoints_added, 1u);
  EXPECT_TRUE(sent["tools"][1].contains("cache_control"));
  EXPECT_TRUE(sent["system"].is_string());
  // Four already: nothing added.
  full["system"] = OJ::array({{{"type", "text"},
                               {"text", "s"},
                               {"cache_control", {{"type", "ephemeral"}}}}});
  full["messages"][0]["content"] = "other conversation";
  EXPECT_EQ(CountBreakpoints(OJ::parse(Send(full).body)), 4);
}

TEST_F(PromptCacheTest, PlacedTtlNeverPrecedesALongerClientTtl) {
  Make({.place_cache_control = true, .min_cacheable_tokens = 1});
  OJ body = Body({Tool("A")}, 1);
  body["system"] =
      OJ::array({{{"type", "text"},
                  {"text", "s"},
                  {"cache_control", {{"type", "ephemeral"}, {"ttl", "1h"}}}}});
  OJ sent = OJ::parse(Send(body).body);
  EXPECT_EQ(sent["tools"][0]["cache_control"]["ttl"], "1h");
  // Configured 1h after a client 5m breakpoint: clamped to 5m.
  Make({.cache_last_turn = true, .ttl = "1h", .min_cacheable_tokens = 1});
  body["system"][0]["cache_control"] = {{"type", "ephemeral"}};
  sent = OJ::parse(Send(body).body);
  EXPECT_FALSE(
      sent["messages"][0]["content"][0]["cache_control"].contains("ttl"));
  Make({.cache_last_turn = true, .ttl = "1h", .min_cacheable_tokens = 1});
  body["system"] = "plain";
  sent = OJ::parse(Send(body).body);
  EXPECT_EQ(sent["messages"][0]["content"][0]["cache_control"]["ttl"], "1h");
}

TEST_F(PromptCacheTest, UnreadableBodyPassesThroughUnchanged) {
  Make({.stabilize_tools = true, .detect_breaks = true});
  PreparedRequest p =
      pc_->Prepare(PromptApi::kAnthropicMessages, "s", "{not json");
  EXPECT_FALSE(p.rewritten);
  EXPECT_EQ(p.ticket, 0u);
  EXPECT_FALSE(pc_->Observe(p.ticket, {.cache_read_tokens = 0}).has_value());
}

// Issue 30: a body not in compact dump form is rewritten by splicing, not
// re-serialised: the number spellings, whitespace and escapes outside the
// edited members reach the provider as the client wrote them (the old DOM
// path sent "max_tokens": 1000.0, which a provider checking for an integer
// may reject).
TEST_F(PromptCacheTest, NonCompactBodyKeepsTheClientsSpellingOutsideEdits) {
  Make({.stabilize_tools = true,
        .place_cache_control = true,
        .min_cacheable_tokens = 0});
  const std::string raw =
      "{\n  \"model\": \"m\",\n  \"max_tokens\": 1.0e3,\n"
      "  \"temperature\": 0.50, \"note\": \"caf\\u00e9 \\/\",\n"
      "  \"tools\": [ {\"name\": \"b\", \"input_schema\": {}},\n"
      "    {\"name\": \"a\", \"input_schema\": {\"max\": 1E2}} ],\n"
      "  \"messages\": [ {\"role\": \"user\", \"content\": \"hi\"} ]\n}";
  PreparedRequest p =
      pc_->Prepare(PromptApi::kAnthropicMessages, "cred:test", raw);
  ASSERT_TRUE(p.rewritten);
  EXPECT_EQ(p.tools_moved, 2u);
  EXPECT_NE(p.body.find("\"max_tokens\": 1.0e3,"), std::string::npos) << p.body;
  EXPECT_EQ(p.body.find("1000"), std::string::npos) << p.body;
  EXPECT_NE(p.body.find("\"temperature\": 0.50, \"note\": \"caf\\u00e9 \\/\""),
            std::string::npos);
  // Before and after the tool list: the client's bytes.
  const size_t tools = raw.find("\"tools\": [");
  EXPECT_EQ(p.body.substr(0, tools + 9), raw.substr(0, tools + 9));
  EXPECT_EQ(p.body.substr(p.body.size() - 55), raw.substr(raw.size() - 55));
  // The tool list itself: the tools moved, each in its own spelling.
  EXPECT_NE(p.body.find("[{\"name\": \"a\", \"input_schema\": {\"max\": 1E2}},"
                        "{\"name\": \"b\", \"input_schema\": {},"
                        "\"cache_control\":{\"type\":\"ephemeral\"}}]"),
            std::string::npos)
      << p.body;
  // The same meaning as the compact body's rewrite.
  PreparedRequest q = pc_->Prepare(PromptApi::kAnthropicMessages, "other",
                                   OJ::parse(raw).dump());
  EXPECT_EQ(OJ::parse(p.body), OJ::parse(q.body));
}

// A tool is the same tool whatever its spelling: a later turn that spells
// it otherwise is sent with the conversation's first bytes (memoised), and
// the conversation is the same.
TEST_F(PromptCacheTest, ToolIdentityComparesMeaningNotSpelling) {
  Make({.stabilize_tools = true});
  const std::string turn1 =
      R"({"model":"m","tools":[{"name":"b","input_schema":{"x":1.5}},)"
      R"({"name":"a","input_schema":{}}],"messages":[{"role":"user","content":"hi"}]})";
  const std::string turn2 =
      R"({ "model" : "m", "tools" : [ { "input_schema" : { "x" : 15E-1 }, )"
      R"("n\u0061me" : "b" }, {"name":"a","input_schema":{ }} ], )"
      R"("messages" : [ {"role":"user","content":"h\u0069"} ] })";
  PreparedRequest a =
      pc_->Prepare(PromptApi::kAnthropicMessages, "cred:test", turn1);
  PreparedRequest b =
      pc_->Prepare(PromptApi::kAnthropicMessages, "cred:test", turn2);
  EXPECT_EQ(a.conversation, b.conversation);
  EXPECT_EQ(b.tools_memoised, 2u);
  ASSERT_TRUE(b.rewritten);
  EXPECT_NE(b.body.find(R"("tools" : [{"name":"a","input_schema":{}},)"
                        R"({"name":"b","input_schema":{"x":1.5}}], )"),
            std::string::npos)
      << b.body;
}

// Review finding: a tool's identity dropped cache_control at every depth,
// so a schema property named cache_control changed between turns and the
// memo sent turn 1's schema. Only the tool's own cache_control is aside;
// numbers the dump cannot write exactly (1e400 dumps as null, integers
// past 64 bits as doubles) are compared by their text.
TEST_F(PromptCacheTest, ToolIdentityKeepsNestedCacheControlAndExactNumbers) {
  Make({.stabilize_tools = true});
  auto turn = [](const std::string& schema) {
    return R"({"model":"m","tools":[{"name":"T","input_schema":)" + schema +
           R"(}],"messages":[{"role":"user","content":"hi"}]})";
  };
  auto sent_schema = [&](const std::string& schema) {
    PreparedRequest p =
        pc_->Prepare(PromptApi::kAnthropicMessages, "cred:test", turn(schema));
    const std::string body = p.rewritten ? p.body : turn(schema);
    prompt_internal::SpanTree t;
    EXPECT_TRUE(t.Read(body));
    const uint32_t tools = t.Find(0, "tools");
    return std::string(t.Raw(t.Find(t.first(tools), "input_schema")));
  };
  const std::string s1 =
      R"({"type":"object","properties":{"cache_control":{"type":"string"}}})";
  const std::string s2 =
      R"({"type":"object","properties":{"cache_control":{"type":"integer"}}})";
  EXPECT_EQ(sent_schema(s1), s1);
  EXPECT_EQ(sent_schema(s2), s2);
  for (const auto& [a, b] : std::vector<std::pair<std::string, std::string>>{
           {R"({"max":1e400})", R"({"max":null})"},
           {R"({"max":1e-400})", R"({"max":0.0})"},
           {R"({"max":18446744073709551616})",
            R"({"max":18446744073709551617})"},
           {R"({"max":-9223372036854775809})",
            R"({"max":-9223372036854775810})"}}) {
    EXPECT_EQ(sent_schema(a), a);
    EXPECT_EQ(sent_schema(b), b);
  }
  // The same meaning respelled is still memoised.
  EXPECT_EQ(sent_schema(R"({"max":1.5})"), R"({"max":1.5})");
  EXPECT_EQ(sent_schema(R"({"max":15E-1})"), R"({"max":1.5})");
}

// Duplicate names read as the provider reads them (the last one); an
// edited member's earlier namesake is dropped from the body sent.
TEST_F(PromptCacheTest, DuplicateMembersReadLastAndTheEditedOneIsSentOnce) {
  Make({.stabilize_tools = true});
  const std::string raw =
      R"({"model":"m","tools":[{"name":"z","input_schema":{}}], "x":1,)"
      R"("tools":[{"name":"b","input_schema":{}},{"name":"a","input_schema":{}}],)"
      R"("messages":[{"role":"user","content":"hi"}]})";
  PreparedRequest p =
      pc_->Prepare(PromptApi::kAnthropicMessages, "cred:test", raw);
  ASSERT_TRUE(p.rewritten);
  EXPECT_EQ(p.body,
            R"({"model":"m","x":1,"tools":[{"name":"a","input_schema":{}},)"
            R"({"name":"b","input_schema":{}}],)"
            R"("messages":[{"role":"user","content":"hi"}]})");
}

// ---------------------------------------------------------------- detection

class BreakTest : public PromptCacheTest {
 protected:
  void SetUp() override { Make({.detect_breaks = true}); }
  // Turn 1 writes 20000 tokens; turn 2 reads them: the baseline.
  void Warm(const OJ& body1, const OJ& body2) {
    EXPECT_FALSE(Usage(Send(body1), 0, 20000));
    EXPECT_FALSE(Usage(Send(body2), 20000, 500));
  }
  OJ base_ = Body({Tool("Bash"), Tool("Read"), Tool("mcp__a__x")}, 1);
  OJ Turn(int n) {
    OJ b = base_;
    OJ t = Body({}, n);
    b["messages"] = t["messages"];
    return b;
  }
};

TEST_F(BreakTest, SteadyConversationHasNoBreak) {
  Warm(Turn(1), Turn(2));
  EXPECT_FALSE(Usage(Send(Turn(3)), 20500, 300));
  // Small drops are not breaks: under 2000 tokens, or under 5 %.
  EXPECT_FALSE(Usage(Send(Turn(4)), 19000));
  EXPECT_FALSE(Usage(Send(Turn(5)), 17500));
}

TEST_F(BreakTest, ToolAddedMidSessionIsNamed) {
  Warm(Turn(1), Turn(2));
  OJ b = Turn(3);
  b["tools"] = {Tool("Bash"), Tool("mcp__0__new"), Tool("Read"),
                Tool("mcp__a__x")};
  std::optional<CacheBreak> br = Usage(Send(b), 0, 21000);
  ASSERT_TRUE(br);
  EXPECT_EQ(br->Label(), "tools:added mcp__0__new");
  EXPECT_EQ(br->expected_read, 20500);
  EXPECT_EQ(br->turn, 3u);
}

TEST_F(BreakTest, ToolRemovedMovedAndChangedAreNamed) {
  Warm(Turn(1), Turn(2));
  OJ b = Turn(3);
  b["tools"] = {Tool("Bash"), Tool("mcp__a__x")};
  EXPECT_EQ(Usage(Send(b), 100, 20000)->Label(), "tools:removed Read");
  b = Turn(4);
  b["tools"] = {Tool("Bash"), Tool("mcp__a__x"), Tool("Read")};
  // Same set as turn 2 minus nothing: against turn 3, Read is added back.
  EXPECT_EQ(Usage(Send(b), 100, 20000)->Label(), "tools:added Read");
  b = Turn(5);
  b["tools"] = {Tool("mcp__a__x"), Tool("Bash"), Tool("Read")};
  EXPECT_EQ(Usage(Send(b), 100, 20000)->Label(), "tools:moved mcp__a__x");
  b = Turn(6);
  b["tools"] = {Tool("mcp__a__x"), Tool("Bash"), Reordered(Tool("Read"))};
  std::optional<CacheBreak> br = Usage(Send(b), 100, 20000);
  EXPECT_EQ(br->Label(), "tools:schema_changed Read");
}

// A tool list that repeats a name: the orders compared for "moved" hold
// each name once (the old loop read past the shorter list: found by the
// random-body differential test under ASan).
TEST_F(BreakTest, ARepeatedToolNameIsNotReadPastTheList) {
  Warm(Turn(1), Turn(2));
  OJ b = Turn(3);
  b["tools"] = {Tool("Bash"), Tool("Read"), Tool("Read"), Tool("mcp__a__x")};
  std::optional<CacheBreak> br = Usage(Send(b), 100, 20000);
  ASSERT_TRUE(br);
  for (const std::string& c : br->changes) {
    EXPECT_EQ(c.rfind("tools:moved", 0), std::string::npos) << c;
  }
}

TEST_F(BreakTest, EachRequestFieldIsAttributed) {
  Warm(Turn(1), Turn(2));
  OJ b = Turn(3);
  b["system"] = "be verbose";
  EXPECT_EQ(Usage(Send(b), 0, 20000)->cause, "system");
  base_["system"] = "be verbose";
  b = Turn(4);
  b["model"] = "claude-opus-4-1";
  EXPECT_EQ(Usage(Send(b), 0, 20000)->cause, "model");
  base_["model"] = "claude-opus-4-1";
  b = Turn(5);
  b["tool_choice"] = {{"type", "any"}};
  EXPECT_EQ(Usage(Send(b), 100, 20000)->cause, "tool_choice");
  base_["tool_choice"] = {{"type", "any"}};
  b = Turn(6);
  b["thinking"] = {{"type", "enabled"}, {"budget_tokens", 2048}};
  EXPECT_EQ(Usage(Send(b), 100, 20000)->cause, "thinking");
  base_["thinking"] = b["thinking"];
  b = Turn(7);
  b["messages"][3]["content"] = "edited";
  std::optional<CacheBreak> br = Usage(Send(b), 100, 20000);
  EXPECT_EQ(br->Label(), "messages:edited 3");
}

TEST_F(BreakTest, NothingChangedAfterTheTtlIsExpiry) {
  Warm(Turn(1), Turn(2));
  clock_.Advance(301);
  std::optional<CacheBreak> br = Usage(Send(Turn(3)), 0, 21000);
  ASSERT_TRUE(br);
  EXPECT_EQ(br->cause, "ttl_expired");
  EXPECT_NEAR(br->gap_seconds, 301, 1e-6);
  // Within the TTL, an unexplained drop is "unknown".
  clock_.Advance(10);
  EXPECT_EQ(Usage(Send(Turn(4)), 0, 21500)->cause, "unknown");
}

TEST_F(BreakTest, MovedClientBreakpointIsNotAnEdit) {
  OJ b1 = Turn(1), b2 = Turn(2);
  b1["messages"][0]["content"] =
      OJ::array({{{"type", "text"},
                  {"text", "hello"},
                  {"cache_control", {{"type", "ephemeral"}}}}});
  Warm(b1, b2);
  EXPECT_FALSE(Usage(Send(Turn(3)), 20500));
}

TEST_F(BreakTest, BreaksAreKeptPerConversationAndCounted) {
  Make({.detect_breaks = true, .keep_breaks = 2});
  Warm(Turn(1), Turn(2));
  for (int i = 3; i < 7; ++i) {
    OJ b = Turn(i);
    b["system"] = "s" + std::to_string(i);
    ASSERT_TRUE(Usage(Send(b), 0, 20000));
  }
  nlohmann::json j = nlohmann::json::parse(pc_->BreaksJson());
  EXPECT_EQ(j["totalBreaks"], 4);
  ASSERT_EQ(j["breaks"].size(), 2u);
  EXPECT_EQ(j["breaks"][1]["turn"], 6);
  EXPECT_EQ(j["breaks"][1]["cause"], "system");
  EXPECT_NE(registry_.Prometheus().find(
                "toolcache_prompt_cache_breaks_total{cause=\"system\"} 4"),
            std::string::npos)
      << registry_.Prometheus();
}

// Session 18: GET /toolcache/breaks lists a caller only the breaks of the
// conversations its key owns (every workspace under the key), and a caller
// without a key only counts.
TEST_F(BreakTest, BreaksAreListedOnlyToTheirOwner) {
  const std::string alice = "@c5:alice;", alice_ws = "@c5:alice;w2:ws;",
                    bob = "@c3:bob;";
  for (const std::string& scope : {alice, alice_ws, bob}) {
    auto send = [&](const OJ& b) {
      return pc_->Prepare(PromptApi::kAnthropicMessages, scope, b.dump());
    };
    OJ changed = Turn(3);
    changed["system"] = "the system prompt of " + scope;
    changed["model"] = "model-of-" + scope;
    EXPECT_FALSE(Usage(send(Turn(1)), 0, 20000));
    EXPECT_FALSE(Usage(send(Turn(2)), 20000, 500));
    ASSERT_TRUE(Usage(send(changed), 0, 20000));
  }
  auto models = [](const nlohmann::json& j) {
    std::set<std::string> out;
    for (const auto& b : j["breaks"]) out.insert(b["model"]);
    return out;
  };
  nlohmann::json a =
      nlohmann::json::parse(pc_->BreaksJsonFor({.owners = {alice}}));
  EXPECT_EQ(models(a), (std::set<std::string>{"model-of-" + alice,
                                              "model-of-" + alice_ws}));
  EXPECT_EQ(a["conversations"], 2);
  EXPECT_EQ(a["totalBreaks"], 2);
  nlohmann::json b =
      nlohmann::json::parse(pc_->BreaksJsonFor({.owners = {bob}}));
  EXPECT_EQ(models(b), (std::set<std::string>{"model-of-" + bob}));
  EXPECT_EQ(b["totalBreaks"], 1);
  // A workspace scope is not its key's owner, nor is a stranger anyone's.
  EXPECT_TRUE(nlohmann::json::parse(
                  pc_->BreaksJsonFor({.owners = {alice_ws, "@c3:eve;"}}))
                  .at("breaks")
                  .size() == 1u);
  EXPECT_TRUE(
      nlohmann::json::parse(pc_->BreaksJsonFor({.owners = {"@c3:eve;"}}))
          .at("breaks")
          .empty());
  // No key: the counts, no id, model or tool name.
  const std::string counts = pc_->BreaksJsonFor({});
  nlohmann::json c = nlohmann::json::parse(counts);
  EXPECT_FALSE(c.contains("breaks")) << counts;
  EXPECT_EQ(c["conversations"], 3);
  EXPECT_EQ(c["totalBreaks"], 3);
  EXPECT_EQ(counts.find("model-of"), std::string::npos) << counts;
  // The operator's view is every break.
  EXPECT_EQ(nlohmann::json::parse(pc_->BreaksJson())["breaks"].size(), 3u);
}

TEST_F(BreakTest, OpenAiCachedTokensAndSystemMessages) {
  OJ b;
  b["model"] = "gpt-4.1";
  b["messages"] = {{{"role", "system"}, {"content", "rules"}},
                   {{"role", "user"}, {"content", "hi"}}};
  EXPECT_FALSE(Usage(Send(b, PromptApi::kOpenAiChat), 0));
  b["messages"].push_back({{"role", "assistant"}, {"content", "yo"}});
  EXPECT_FALSE(Usage(Send(b, PromptApi::kOpenAiChat), 8000));
  b["messages"][0]["content"] = "new rules";
  std::optional<CacheBreak> br = Usage(Send(b, PromptApi::kOpenAiChat), 0);
  ASSERT_TRUE(br);
  EXPECT_EQ(br->cause, "system");
}

TEST_F(BreakTest, ASessionStartingAgainIsNotABreak) {
  Warm(Turn(1), Turn(2));
  EXPECT_FALSE(Usage(Send(Turn(3)), 20500, 1000));
  // The same first message again, no history: a new session, not a break
  // (without the rule: "messages:removed 4").
  EXPECT_FALSE(Usage(Send(Turn(1)), 0, 20000));
  EXPECT_FALSE(Usage(Send(Turn(2)), 20000));
}

TEST_F(BreakTest, ConversationsAreSeparate) {
  Warm(Turn(1), Turn(2));
  OJ other = Turn(1);
  other["messages"][0]["content"] = "a side request";
  // A new conversation has no previous turn: never a break.
  EXPECT_FALSE(Usage(Send(other), 0));
  EXPECT_FALSE(Usage(Send(Turn(3)), 20500));
}

}  // namespace
}  // namespace toolcache
