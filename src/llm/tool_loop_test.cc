// The server-side tool loop against the real engine and a real (memory)
// store: serving only fresh cacheable hits paired by id, the partial-turn
// rule, splicing hidden turns back byte-identically, missing state, usage.
#include "src/llm/tool_loop.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "src/prompt/span_tree.h"
#include "toolcache/clock.h"
#include "toolcache/prompt_cache.h"
#include "toolcache/store.h"

namespace toolcache::llm {
namespace {

using nlohmann::json;

std::string Padded(std::string s) {
  s.reserve(s.size() + 64);
  return s;
}

// An Anthropic response asking for `calls` ({id, name, input JSON}).
std::string AnthropicToolResponse(
    const std::vector<std::array<std::string, 3>>& calls, int in = 10,
    int out = 5) {
  std::string content = R"([{"type":"text","text":"Reading."})";
  for (const auto& c : calls) {
    content += R"(,{"type":"tool_use","id":")" + c[0] + R"(","name":")" + c[1] +
               R"(","input":)" + c[2] + "}";
  }
  content += "]";
  return R"({"id":"msg_1","type":"message","role":"assistant","content":)" +
         content + R"(,"stop_reason":"tool_use","usage":{"input_tokens":)" +
         std::to_string(in) + R"(,"output_tokens":)" + std::to_string(out) +
         R"(,"cache_read_input_tokens":0}})";
}

std::string AnthropicTextResponse(const std::string& text, int in = 20,
                                  int out = 7) {
  return R"({"id":"msg_2","type":"message","role":"assistant","content":[{"type":"text","text":)" +
         json(text).dump() +
         R"(}],"stop_reason":"end_turn","usage":{"input_tokens":)" +
         std::to_string(in) + R"(,"output_tokens":)" + std::to_string(out) +
         R"(,"cache_read_input_tokens":3}})";
}

class ToolLoopTest : public ::testing::Test {
 protected:
  // Read is a client-local tool (agent_tools.h): served only when named.
  void SetUp() override {
    Build(Config(), ServeOptions{.all_tools = true, .tools = {"Read"}});
  }

  void Build(const Config& config, ServeOptions so) {
    auto made = NewToolCache(config, &clock_);
    ASSERT_TRUE(made.ok()) << made.status().message();
    cache_ = std::move(*made);
    auto store = OpenStore("memory", {.clock = &clock_});
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    registry_ = std::make_unique<metrics::Registry>();
    obs_ = std::make_unique<Observer>(cache_.get(), &clock_, registry_.get(),
                                      ObserverOptions{});
    loop_ = std::make_unique<ToolLoop>(cache_.get(), store_.get(), obs_.get(),
                                       std::move(so));
  }

  // The client ran `name`(args) itself and sends the result back: the
  // observer records it (ask, then answer).
  void ClientRan(const std::string& id, const std::string& name,
                 const std::string& args, const std::string& content,
                 bool is_error = false, const ToolScopes& scope = "s") {
    ClientRanJson(id, name, args, json(content).dump(), is_error, scope);
  }
  // The same with the result's content as raw JSON (a block array).
  void ClientRanJson(const std::string& id, const std::string& name,
                     const std::string& args, const std::string& content_json,
                     bool is_error = false, const ToolScopes& scope = "s") {
    ToolUse u{.id = id, .name = name, .arguments = args};
    obs_->OnResponse(Api::kAnthropicMessages, {&u, 1}, scope);
    clock_.Advance(0.5);
    std::string body = Padded(
        R"({"model":"m","messages":[{"role":"user","content":"go"},)"
        R"({"role":"assistant","content":[{"type":"tool_use","id":")" +
        id + R"(","name":")" + name + R"(","input":)" + args +
        R"(}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":")" +
        id + R"(","is_error":)" + (is_error ? "true" : "false") +
        R"(,"content":)" + content_json + "}]}]}");
    Result<ParsedRequest> r = ParseRequest(Api::kAnthropicMessages, body);
    ASSERT_TRUE(r.ok()) << r.status().message();
    obs_->OnRequest(*r, body, scope);
  }

  std::optional<ServedTurn> Serve(const std::string& response,
                                  const ToolScopes& scope = "s") {
    Result<ParsedResponse> p = ParseResponse(Api::kAnthropicMessages, response);
    EXPECT_TRUE(p.ok());
    return loop_->TryServe(Api::kAnthropicMessages, response, *p, scope);
  }

  ManualClock clock_{1000};
  std::unique_ptr<ToolCache> cache_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<metrics::Registry> registry_;
  std::unique_ptr<Observer> obs_;
  std::unique_ptr<ToolLoop> loop_;
};

const std::string kA = R"({"file_path":"/w/a.txt"})";
const std::string kB = R"({"file_path":"/w/b.txt"})";

TEST_F(ToolLoopTest, ServesAllHitsPairedById) {
  ClientRan("toolu_1", "Read", kA, "alpha");
  ClientRan("toolu_2", "Read", kB, "beta");
  auto turn = Serve(AnthropicToolResponse(
      {{"toolu_9", "Read", kB}, {"toolu_8", "Read", kA}}));
  ASSERT_TRUE(turn.has_value());
  EXPECT_EQ(turn->calls, 2u);
  json msgs = json::parse("[" + turn->messages + "]");
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[0]["role"], "assistant");
  EXPECT_EQ(msgs[0]["content"][1]["id"], "toolu_9");
  EXPECT_EQ(msgs[1]["role"], "user");
  ASSERT_EQ(msgs[1]["content"].size(), 2u);
  // Each result answers its own call with its own (recorded) content.
  EXPECT_EQ(msgs[1]["content"][0]["tool_use_id"], "toolu_9");
  EXPECT_EQ(msgs[1]["content"][0]["content"], "beta");
  EXPECT_EQ(msgs[1]["content"][1]["tool_use_id"], "toolu_8");
  EXPECT_EQ(msgs[1]["content"][1]["content"], "alpha");
  EXPECT_EQ(cache_->Stats().hits, 2u);
  // The client-side latency recorded with the results is what was saved.
  EXPECT_NEAR(turn->latency_saved_seconds, 1.0, 1e-9);
}

// Issue 28: `serve: true` serves what runs remotely (an MCP tool), never
// a tool of the client's own machine (Read) unless the operator names it.
TEST_F(ToolLoopTest, AllToolsNeverServesClientLocalTools) {
  Build(Config(), ServeOptions{.all_tools = true});
  ClientRan("toolu_1", "Read", kA, "alpha");
  EXPECT_FALSE(
      Serve(AnthropicToolResponse({{"toolu_9", "Read", kA}})).has_value());
  EXPECT_FALSE(loop_->Serves("Read", "s"));
  EXPECT_FALSE(loop_->Serves("apply_patch", "s"));
  const std::string q = R"({"path":"/w/a.txt"})";
  ClientRan("toolu_2", "mcp__fs__read_text_file", q, "alpha");
  EXPECT_TRUE(
      Serve(AnthropicToolResponse({{"toolu_8", "mcp__fs__read_text_file", q}}))
          .has_value());
}

// API version 2026-10-21 answers 400 to a cited text block in a user
// message, also inside a search_result: such a recorded result is not put
// in a hidden turn of a request with that version (the client answers the
// call itself); 2023-06-01 requests are served as before.
TEST_F(ToolLoopTest, CitedResultsAreNotServedToAVersionThatRefusesThem) {
  const std::string cite =
      R"([{"type":"char_location","cited_text":"a","document_index":0,)"
      R"("start_char_index":0,"end_char_index":1}])";
  const std::string in_search =
      R"([{"type":"search_result","source":"https://x/a","title":"a",)"
      R"("content":[{"type":"text","text":"alpha","citations":)" +
      cite + "}]}]";
  const std::string direct = R"([{"type":"text","text":"beta","citations":)" +
                             cite + R"(},{"type":"text","text":"more"}])";
  const std::string plain =
      R"([{"type":"search_result","source":"https://x/c","title":"c",)"
      R"("content":[{"type":"text","text":"gamma","citations":[]}]}])";
  const std::string kC = R"({"file_path":"/w/c.txt"})";
  ClientRanJson("toolu_1", "Read", kA, in_search);
  ClientRanJson("toolu_2", "Read", kB, direct);
  ClientRanJson("toolu_3", "Read", kC, plain);
  const ServeRules strict = AnthropicServeRules("2026-10-21");
  auto serve = [&](const std::string& args, const ServeRules& rules) {
    const std::string r = AnthropicToolResponse({{"toolu_9", "Read", args}});
    Result<ParsedResponse> p = ParseResponse(Api::kAnthropicMessages, r);
    EXPECT_TRUE(p.ok());
    return loop_->TryServe(Api::kAnthropicMessages, r, *p, "s", std::nullopt,
                           rules);
  };
  EXPECT_FALSE(serve(kA, strict).has_value());
  EXPECT_FALSE(serve(kB, strict).has_value());
  EXPECT_EQ(cache_->Stats().hits, 0u);  // nothing was served
  // Without citations (an empty array is none), 2026-10-21 is served.
  auto c = serve(kC, strict);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(json::parse("[" + c->messages + "]")[1]["content"][0]["content"],
            json::parse(plain));
  // 2023-06-01 (and a request without the header) get the result as stored.
  for (const char* version : {"2023-06-01", ""}) {
    auto a = serve(kA, AnthropicServeRules(version));
    ASSERT_TRUE(a.has_value()) << version;
    EXPECT_EQ(json::parse("[" + a->messages + "]")[1]["content"][0]["content"],
              json::parse(in_search));
  }
  EXPECT_TRUE(AnthropicServeRules("2023-06-01").user_citations);
  EXPECT_TRUE(AnthropicServeRules("").user_citations);
  EXPECT_TRUE(AnthropicServeRules("latest").user_citations);
  EXPECT_FALSE(AnthropicServeRules("2026-10-21").user_citations);
  EXPECT_FALSE(AnthropicServeRules("2027-03-01").user_citations);
}

// Session 19 (attackK finding 5): a client's prompt-cache breakpoints
// inside a tool_result's blocks were recorded with the result and served
// back into hidden rounds: a request the client made valid (its four
// breakpoints) went upstream with five and the provider answered 400.
// Neither a result recorded now (NormalizedResult drops them) nor an entry
// an older version recorded verbatim (RenderResult drops them) carries one.
TEST_F(ToolLoopTest, ServedResultsCarryNoCacheControl) {
  const std::string blocks =
      R"([{"type":"text","text":"part 1"},)"
      R"({"type":"search_result","source":"https://x/a","title":"a",)"
      R"("content":[{"type":"text","text":"alpha",)"
      R"("cache_control":{"type":"ephemeral","ttl":"1h"}}]},)"
      R"({"type":"text","text":"part 2","cache_control":{"type":"ephemeral"}}])";
  const json expected = json::parse(
      R"([{"type":"text","text":"part 1"},)"
      R"({"type":"search_result","source":"https://x/a","title":"a",)"
      R"("content":[{"type":"text","text":"alpha"}]},)"
      R"({"type":"text","text":"part 2"}])");
  // Recorded through the observer, as the proxy records now.
  ClientRanJson("toolu_1", "Read", kA, blocks);
  // Recorded as before session 19: the blocks verbatim.
  const auto [server, routed] = obs_->Route("Read");
  const CallKey k = KeyCall("Read", routed, kB, false);
  const std::string verbatim = R"({"content":)" + blocks + "}";
  RecordOutcome o = cache_->Record(
      {.server = server,
       .scope = "s",
       .tool = k.tool,
       .arguments_json = k.arguments},
      {.result_json = verbatim, .is_error = false, .complete = true});
  ASSERT_TRUE(o.admitted);
  for (const std::string& args : {kA, kB}) {
    auto t = Serve(AnthropicToolResponse({{"toolu_9", "Read", args}}));
    ASSERT_TRUE(t.has_value()) << args;
    EXPECT_EQ(t->messages.find("cache_control"), std::string::npos) << args;
    EXPECT_EQ(json::parse("[" + t->messages + "]")[1]["content"][0]["content"],
              expected)
        << args;
  }
}

TEST_F(ToolLoopTest, PartialTurnGoesToTheClientWhole) {
  ClientRan("toolu_1", "Read", kA, "alpha");
  EXPECT_FALSE(Serve(AnthropicToolResponse(
                         {{"toolu_9", "Read", kA}, {"toolu_8", "Read", kB}}))
                   .has_value());
  // Nothing was served (no hit counted) for the hit in the partial turn.
  EXPECT_EQ(cache_->Stats().hits, 0u);
}

TEST_F(ToolLoopTest, NeverServesUnsafeResults) {
  // Not cacheable: Bash is a command, never recorded.
  ClientRan("toolu_1", "Bash", R"({"command":"ls"})", "a b");
  EXPECT_FALSE(
      Serve(AnthropicToolResponse({{"toolu_2", "Bash", R"({"command":"ls"})"}}))
          .has_value());
  // An error result is never stored, so never served.
  ClientRan("toolu_3", "Read", kB, "no such file", /*is_error=*/true);
  EXPECT_FALSE(
      Serve(AnthropicToolResponse({{"toolu_4", "Read", kB}})).has_value());
  // Another scope's entry.
  ClientRan("toolu_5", "Read", kA, "alpha", false, "other");
  EXPECT_FALSE(
      Serve(AnthropicToolResponse({{"toolu_6", "Read", kA}}), "s").has_value());
  EXPECT_TRUE(Serve(AnthropicToolResponse({{"toolu_7", "Read", kA}}), "other")
                  .has_value());
  // Older than its TTL (the heuristic gives Read a long one: ask for 120 s).
  Config c;
  c.per_tool_ttl["Read"] = 120;
  Build(c, ServeOptions{.all_tools = true, .tools = {"Read"}});
  ClientRan("toolu_9", "Read", kA, "alpha", false, "other");
  EXPECT_TRUE(Serve(AnthropicToolResponse({{"toolu_10", "Read", kA}}), "other")
                  .has_value());
  clock_.Advance(121);
  EXPECT_FALSE(Serve(AnthropicToolResponse({{"toolu_8", "Read", kA}}), "other")
                   .has_value());
}

TEST_F(ToolLoopTest, WriteInTheConversationInvalidates) {
  ClientRan("toolu_1", "Read", kA, "alpha");
  ASSERT_TRUE(
      Serve(AnthropicToolResponse({{"toolu_2", "Read", kA}})).has_value());
  ClientRan("toolu_3", "Write", R"({"file_path":"/w/a.txt","content":"new"})",
            "ok");
  EXPECT_FALSE(
      Serve(AnthropicToolResponse({{"toolu_4", "Read", kA}})).has_value());
}

TEST_F(ToolLoopTest, OnlyConfiguredTools) {
  Build(Config(), ServeOptions{.tools = {"Grep"}});
  ClientRan("toolu_1", "Read", kA, "alpha");
  EXPECT_FALSE(
      Serve(AnthropicToolResponse({{"toolu_2", "Read", kA}})).has_value());
}

TEST_F(ToolLoopTest, TextStopIsNeverServed) {
  ClientRan("toolu_1", "Read", kA, "alpha");
  std::string r = AnthropicToolResponse({{"toolu_2", "Read", kA}});
  r.replace(r.find("\"tool_use\",\"usage\""), 10, "\"max_tokens\"");
  EXPECT_FALSE(Serve(r).has_value());
}

// hopS: a session keeps the client's parse, whose text is views into the
// body (wire.h), after the caller's body is gone: the proxy moves both in
// and puts the spliced body in its place; a caller may pass copies. Either
// way the views must index the session's own body (ASan:
// heap-use-after-free when they still point into the caller's string).
TEST_F(ToolLoopTest, SessionOutlivesTheCallersBodyAndParse) {
  const std::string text = Padded(
      R"({"model":"m","max_tokens":100,"messages":[{"role":"user","content":"read a twice"}]})");
  for (const bool moved : {false, true}) {
    SCOPED_TRACE(moved ? "moved in" : "copies");
    Build(Config(), ServeOptions{.all_tools = true, .tools = {"Read"}});
    ClientRan("toolu_1", "Read", kA, "alpha");
    std::unique_ptr<ServeSession> s;
    {
      std::string body = Padded(text);  // read in place: views into it
      auto p = ParseRequest(Api::kAnthropicMessages, body);
      ASSERT_TRUE(p.ok());
      const std::string upstream = body;
      if (moved) {
        s = std::make_unique<ServeSession>(loop_.get(), std::move(*p),
                                           std::move(body), upstream, "s");
        body = std::string(text.size(), 'x');  // the proxy's *body = upstream
      } else {
        s = std::make_unique<ServeSession>(loop_.get(), *p, body, upstream,
                                           "s");
        body.assign(body.size(), 'x');
      }
    }
    // The parse the session keeps reads its own body.
    ASSERT_EQ(s->client().message_list.size(), 1u);
    EXPECT_EQ(s->client().message_list[0].role, "user");
    const std::string r1 =
        AnthropicToolResponse({{"toolu_9", "Read", kA}}, 10, 5);
    auto pr1 = ParseResponse(Api::kAnthropicMessages, r1);
    ASSERT_TRUE(s->OnResponse(r1, *pr1).has_value());
    const std::string r2 = AnthropicTextResponse("a says alpha", 30, 8);
    auto pr2 = ParseResponse(Api::kAnthropicMessages, r2);
    EXPECT_FALSE(s->OnResponse(r2, *pr2).has_value());
    (void)s->Finish(r2, *pr2);  // saves: reads the client's messages
    ASSERT_TRUE(s->saved());
    // Saved under the client's real messages: the next request splices.
    const std::string client2 = Padded(
        R"({"model":"m","max_tokens":100,"messages":[{"role":"user","content":"read a twice"},)"
        R"({"role":"assistant","content":[{"type":"text","text":"a says alpha"}]},)"
        R"({"role":"user","content":"thanks"}]})");
    auto p2 = ParseRequest(Api::kAnthropicMessages, client2);
    ASSERT_TRUE(p2.ok());
    SpliceReport rep;
    (void)loop_->Splice(*p2, client2, "s", &rep);
    EXPECT_EQ(rep.spliced, 1u);
  }
}

// A whole conversation: served rounds, the client's next request spliced
// byte-identically, usage summed, missing state forwarded as sent.
TEST_F(ToolLoopTest, SessionSplicesHiddenTurnsBack) {
  ClientRan("toolu_1", "Read", kA, "alpha");
  const std::string client1 = Padded(
      R"({"model":"m","max_tokens":100,"messages":[{"role":"user","content":"read a twice"}]})");
  auto p1 = ParseRequest(Api::kAnthropicMessages, client1);
  ASSERT_TRUE(p1.ok());
  ServeSession s(loop_.get(), *p1, client1, client1, "s");
  // Round 1: the model asks for a hit.
  const std::string r1 =
      AnthropicToolResponse({{"toolu_9", "Read", kA}}, 10, 5);
  auto pr1 = ParseResponse(Api::kAnthropicMessages, r1);
  std::optional<std::string> up2 = s.OnResponse(r1, *pr1);
  ASSERT_TRUE(up2.has_value());
  json b2 = json::parse(*up2);
  ASSERT_EQ(b2["messages"].size(), 3u);
  EXPECT_EQ(b2["messages"][2]["content"][0]["tool_use_id"], "toolu_9");
  EXPECT_EQ(b2["max_tokens"], 100);
  // Round 2: the model ends its turn.
  const std::string r2 = AnthropicTextResponse("a says alpha", 30, 8);
  auto pr2 = ParseResponse(Api::kAnthropicMessages, r2);
  EXPECT_FALSE(s.OnResponse(r2, *pr2).has_value());
  json final_body = json::parse(s.Finish(r2, *pr2));
  EXPECT_TRUE(s.saved());
  EXPECT_EQ(s.served_calls(), 1u);
  EXPECT_EQ(final_body["usage"]["input_tokens"], 40);
  EXPECT_EQ(final_body["usage"]["output_tokens"], 13);
  EXPECT_EQ(final_body["usage"]["cache_read_input_tokens"], 3);
  EXPECT_EQ(final_body["content"][0]["text"], "a says alpha");

  // The client's next request: its own messages as it sent them before,
  // the assistant message re-serialized its own way (spaces).
  const std::string client2 = Padded(
      R"({"model":"m","max_tokens":100,"messages":[{"role":"user","content":"read a twice"},)"
      R"({"role": "assistant", "content": [{"type": "text", "text": "a says alpha"}]}, )"
      R"({"role":"user","content":"thanks"}]})");
  auto p2 = ParseRequest(Api::kAnthropicMessages, client2);
  ASSERT_TRUE(p2.ok());
  SpliceReport rep;
  std::string spliced = loop_->Splice(*p2, client2, "s", &rep);
  EXPECT_EQ(rep.spliced, 1u);
  EXPECT_EQ(rep.missing, 0u);
  // Prefix-stable: what the upstream saw in round 2, up to the end of the
  // hidden turns, is a byte-identical prefix of the spliced request.
  const size_t hidden_end = up2->rfind("]}");  // end of messages array
  ASSERT_NE(hidden_end, std::string::npos);
  EXPECT_EQ(spliced.substr(0, hidden_end), up2->substr(0, hidden_end));
  json j2 = json::parse(spliced);
  ASSERT_EQ(j2["messages"].size(), 5u);
  EXPECT_EQ(j2["messages"][1]["role"], "assistant");
  EXPECT_EQ(j2["messages"][2]["role"], "user");
  EXPECT_EQ(j2["messages"][3]["content"][0]["text"], "a says alpha");
  EXPECT_EQ(j2["messages"][4]["content"], "thanks");
  // Another scope finds nothing.
  SpliceReport other;
  EXPECT_EQ(loop_->Splice(*p2, client2, "t", &other), client2);
  EXPECT_EQ(other.spliced, 0u);
  // Another process reads the state through a store that damages every
  // value: the request goes as sent, counted corrupt, nothing spliced.
  auto plan = std::make_shared<FaultPlan>();
  plan->corrupt_values = true;
  std::unique_ptr<Store> damaged = NewFaultInjectionStore(store_.get(), plan);
  ToolLoop reader(cache_.get(), damaged.get(), obs_.get(),
                  ServeOptions{.all_tools = true, .tools = {"Read"}});
  SpliceReport bad;
  EXPECT_EQ(reader.Splice(*p2, client2, "s", &bad), client2);
  EXPECT_EQ(bad.corrupt, 1u);
  EXPECT_EQ(bad.spliced, 0u);
  // State gone (expired): forwarded as sent, counted missing.
  clock_.Advance(loop_->options().state_ttl_seconds + 1);
  SpliceReport gone;
  EXPECT_EQ(loop_->Splice(*p2, client2, "s", &gone), client2);
  EXPECT_EQ(gone.missing, 1u);
  EXPECT_EQ(gone.spliced, 0u);
}

// Issue 30: the stages edit the one parse of a request. A request with a
// hidden turn to splice back is parsed once; splice and offload add edits,
// one writer applies them, and the session finds its insertion point by
// mapping that parse through the edits: no second ParseRequest, and the
// same bytes upstream as the former splice-then-parse path.
TEST_F(ToolLoopTest, StagesEditTheOneParseOfARequest) {
  ClientRan("toolu_1", "Read", kA, "alpha");
  const std::string client1 = Padded(
      R"({"model":"m","max_tokens":100,"tools":[{"name":"Read","input_schema":{"type":"object"}}],)"
      R"("messages":[{"role":"user","content":"read a twice"}]})");
  auto p1 = ParseRequest(Api::kAnthropicMessages, client1);
  ASSERT_TRUE(p1.ok());
  ServeSession s(loop_.get(), *p1, client1, client1, "s");
  const std::string r1 =
      AnthropicToolResponse({{"toolu_9", "Read", kA}}, 10, 5);
  auto pr1 = ParseResponse(Api::kAnthropicMessages, r1);
  ASSERT_TRUE(s.OnResponse(r1, *pr1).has_value());
  const std::string r2 = AnthropicTextResponse("a says alpha", 30, 8);
  auto pr2 = ParseResponse(Api::kAnthropicMessages, r2);
  EXPECT_FALSE(s.OnResponse(r2, *pr2).has_value());
  (void)s.Finish(r2, *pr2);
  ASSERT_TRUE(s.saved());

  const std::string client2 = Padded(
      R"({"model":"m","max_tokens":100,"tools":[{"name":"Read","input_schema":{"type":"object"}}],)"
      R"("messages":[{"role":"user","content":"read a twice"},)"
      R"({"role":"assistant","content":[{"type":"text","text":"a says alpha"}]},)"
      R"({"role":"user","content":"thanks"}]})");
  auto p2 = ParseRequest(Api::kAnthropicMessages, client2);
  ASSERT_TRUE(p2.ok());
  Offloader off(store_.get(), {});
  const uint64_t parses = RequestParseCount();
  BodyEdits edits;
  SpliceReport rep;
  loop_->SplicePlan(*p2, client2, "s", &rep, &edits);
  OffloadReport orep;
  off.Plan(*p2, client2, "s", &orep, &edits);
  EXPECT_EQ(rep.spliced, 1u);
  EXPECT_TRUE(orep.tool_added);
  const std::string upstream = edits.Apply(client2);
  EXPECT_EQ(edits.skipped(), 0u);
  ServeSession once(loop_.get(), *p2, client2, upstream, "s", std::nullopt,
                    &edits);
  EXPECT_EQ(RequestParseCount(), parses) << "a stage parsed the body again";

  // The former path: splice, parse the spliced body, offload over it.
  SpliceReport rep2;
  const std::string spliced = loop_->Splice(*p2, client2, "s", &rep2);
  const std::string padded_spliced = Padded(spliced);  // the views' body
  auto again = ParseRequest(Api::kAnthropicMessages, padded_spliced);
  ASSERT_TRUE(again.ok());
  OffloadReport orep2;
  const std::string before = off.Rewrite(*again, padded_spliced, "s", &orep2);
  EXPECT_EQ(upstream, before);
  // The session's hidden rounds go to the same place as with a parse.
  ServeSession parsed(loop_.get(), *p2, client2, upstream, "s");
  const std::string r3 =
      AnthropicToolResponse({{"toolu_7", "Read", kA}}, 10, 5);
  auto pr3 = ParseResponse(Api::kAnthropicMessages, r3);
  std::optional<std::string> a = once.OnResponse(r3, *pr3);
  std::optional<std::string> b = parsed.OnResponse(r3, *pr3);
  ASSERT_TRUE(a.has_value());
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(json::parse(*a)["messages"].size(), 7u);
}

// The proxy's order (proxy.cc): splice and offload edit the one parse, then
// the prompt-cache stage rewrites what goes upstream (tools sorted,
// breakpoints placed). No stage parses the body again: not ParseRequest,
// and not the prompt cache's DOM (it reads the dump-form bytes).
TEST_F(ToolLoopTest, PromptCacheRewriteDoesNotParseTheBodyAgain) {
  const std::string client = Padded(
      R"({"model":"m","max_tokens":100,"tools":[{"name":"Write","input_schema":{"type":"object"}},)"
      R"({"name":"Read","input_schema":{"type":"object"}}],)"
      R"("messages":[{"role":"user","content":"read a"}]})");
  auto parsed = ParseRequest(Api::kAnthropicMessages, client);
  ASSERT_TRUE(parsed.ok());
  Offloader off(store_.get(), {});
  PromptCacheOptions po;
  po.stabilize_tools = po.place_cache_control = po.cache_last_turn =
      po.detect_breaks = true;
  po.min_cacheable_tokens = 0;
  SystemClock clock;
  std::unique_ptr<PromptCache> pc = NewPromptCache(po, &clock, nullptr);
  const uint64_t parses = RequestParseCount();
  const uint64_t doms = prompt_internal::DomParseCount();
  BodyEdits edits;
  SpliceReport rep;
  loop_->SplicePlan(*parsed, client, "s", &rep, &edits);
  OffloadReport orep;
  off.Plan(*parsed, client, "s", &orep, &edits);
  const std::string upstream = edits.empty() ? client : edits.Apply(client);
  PreparedRequest p = pc->Prepare(PromptApi::kAnthropicMessages, "s", upstream);
  EXPECT_TRUE(p.rewritten);
  EXPECT_GT(p.tools_moved, 0u);
  EXPECT_GT(p.breakpoints_added, 0u);
  EXPECT_NE(p.ticket, 0u);
  EXPECT_EQ(RequestParseCount(), parses);
  EXPECT_EQ(prompt_internal::DomParseCount(), doms)
      << "the prompt-cache stage parsed the body into a DOM";
  const auto j = json::parse(p.body);
  EXPECT_EQ(j["tools"][0]["name"], "Read");
}

// Issue 30, the last item: with promptCache on, the prompt-cache stage
// reads the one reading of the client's body with the splice's and
// offload's edits grafted in (no read of the spliced body) and its rewrite
// joins their edits: one ParseRequest, one SpanTree read of one body, one
// writer. The bytes are the former path's (apply, then Prepare on the
// result, then its own splice), turn after turn: tools sorted with
// offload's toolcache_read among them, breakpoints on the last tool and on
// the last block of a message whose result offload replaced. On main the
// session parsed the rewritten body again (RequestParseCount + 1) and the
// body was written twice.
TEST_F(ToolLoopTest, PromptCacheEditsJoinTheOneWriter) {
  ClientRan("toolu_1", "Read", kA, "alpha");
  const std::string tools =
      R"("tools":[{"name":"mcp__x__y","input_schema":{"type":"object"}},{"name":"Write","input_schema":{"type":"object"}},{"name":"Read","input_schema":{"type":"object"}}],)";
  const std::string client1 = Padded(
      R"({"model":"m","max_tokens":100,"system":[{"type":"text","text":"be brief"}],)" +
      tools + R"("messages":[{"role":"user","content":"read a twice"}]})");
  auto p1 = ParseRequest(Api::kAnthropicMessages, client1);
  ASSERT_TRUE(p1.ok());
  ServeSession s(loop_.get(), *p1, client1, client1, "s");
  const std::string r1 =
      AnthropicToolResponse({{"toolu_9", "Read", kA}}, 10, 5);
  auto pr1 = ParseResponse(Api::kAnthropicMessages, r1);
  ASSERT_TRUE(s.OnResponse(r1, *pr1).has_value());
  const std::string r2 = AnthropicTextResponse("a says alpha", 30, 8);
  auto pr2 = ParseResponse(Api::kAnthropicMessages, r2);
  EXPECT_FALSE(s.OnResponse(r2, *pr2).has_value());
  (void)s.Finish(r2, *pr2);
  ASSERT_TRUE(s.saved());

  PromptCacheOptions po;
  po.stabilize_tools = po.place_cache_control = po.cache_system =
      po.cache_last_turn = po.detect_breaks = true;
  po.min_cacheable_tokens = 0;
  ManualClock clock;
  std::unique_ptr<PromptCache> former = NewPromptCache(po, &clock, nullptr);
  std::unique_ptr<PromptCache> one = NewPromptCache(po, &clock, nullptr);
  const std::string big(12000, 'z');
  // Turn 2 (a hidden turn to splice back, an oversized result in the
  // last message) and turn 3 (one more exchange after it).
  const std::string history =
      R"("messages":[{"role":"user","content":"read a twice"},)"
      R"({"role":"assistant","content":[{"type":"text","text":"a says alpha"}]},)"
      R"({"role":"user","content":"thanks"},)"
      R"({"role":"assistant","content":[{"type":"tool_use","id":"toolu_5","name":"Bash","input":{"command":"ls"}}]},)"
      R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_5","content":")" +
      big + R"("},{"type":"text","text":"thanks"}]})";
  const std::string turns[] = {
      R"({"model":"m","max_tokens":100,"system":[{"type":"text","text":"be brief"}],)" +
          tools + history + "]}",
      R"({"model":"m", "max_tokens":100,"system":[{"type":"text","text":"be brief"}],)" +
          tools + history +
          R"(,{"role":"assistant","content":"listed"},{"role":"user","content":[{"type":"text","text":"again"},{"type":"tool_result","tool_use_id":"toolu_6","content":")" +
          big + R"(y"}]}]})",
  };
  Offloader off(store_.get(), {});
  int n = 0;
  for (const std::string& t : turns) {
    SCOPED_TRACE(n++);
    const std::string client = Padded(t);
    auto parsed = ParseRequest(Api::kAnthropicMessages, client);
    ASSERT_TRUE(parsed.ok());
    // The former path, on the bytes the stages wrote.
    BodyEdits stage;
    SpliceReport rep;
    loop_->SplicePlan(*parsed, client, "s", &rep, &stage);
    OffloadReport orep;
    off.Plan(*parsed, client, "s", &orep, &stage);
    EXPECT_TRUE(orep.tool_added);
    EXPECT_GT(orep.offloaded + orep.reused, 0u);
    const std::string applied = stage.Apply(client);
    PreparedRequest a =
        former->Prepare(PromptApi::kAnthropicMessages, "s", applied);
    ASSERT_TRUE(a.rewritten);
    const std::string want = a.body;

    // The one reading, the one writer.
    const uint64_t parses = RequestParseCount();
    const uint64_t reads = prompt_internal::BodyReadCount();
    const uint64_t writes = prompt_internal::BodyWriteCount();
    const uint64_t applies = BodyEdits::ApplyCount();
    BodyEdits edits;
    SpliceReport rep2;
    loop_->SplicePlan(*parsed, client, "s", &rep2, &edits);
    OffloadReport orep2;
    off.Plan(*parsed, client, "s", &orep2, &edits);
    EXPECT_EQ(rep2.spliced, rep.spliced);
    if (n == 1) {
      EXPECT_EQ(rep.spliced, 1u);
    }
    std::vector<BodyEditView> views;
    for (const BodyEdits::Edit& e : edits.edits()) {
      views.push_back({e.begin, e.end, e.text});
    }
    PreparedRequest b =
        one->PrepareEdited(PromptApi::kAnthropicMessages, "s", client, views);
    ASSERT_TRUE(b.composed);
    EXPECT_TRUE(b.rewritten);
    EXPECT_TRUE(b.body.empty());
    for (PromptEdit& e : b.edits) {
      edits.ReplaceOver(e.begin, e.end, std::move(e.text));
    }
    const std::string upstream = edits.Apply(client);
    EXPECT_EQ(edits.skipped(), 0u);
    EXPECT_EQ(upstream, want);
    // What the case is about: offload's tool in the sorted list, the
    // breakpoint on the last block (turn 3: the offloaded result).
    const json up = json::parse(upstream);
    EXPECT_EQ(up["tools"].size(), 4u);
    EXPECT_EQ(up["tools"][2]["name"], "toolcache_read");
    EXPECT_TRUE(
        up["messages"].back()["content"].back().contains("cache_control"));
    EXPECT_EQ(b.conversation, a.conversation);
    EXPECT_EQ(b.tools_moved, a.tools_moved);
    EXPECT_EQ(b.tools_memoised, a.tools_memoised);
    EXPECT_EQ(b.breakpoints_added, a.breakpoints_added);
    // The session maps the one parse through every edit, the prompt
    // cache's included: its hidden rounds go where a parse would put them.
    ServeSession mapped(loop_.get(), *parsed, client, upstream, "s",
                        std::nullopt, &edits);
    EXPECT_EQ(RequestParseCount(), parses) << "the body was parsed again";
    EXPECT_EQ(prompt_internal::BodyReadCount(), reads + 1);
    EXPECT_EQ(prompt_internal::BodyWriteCount(), writes)
        << "the prompt cache wrote a body itself";
    EXPECT_EQ(BodyEdits::ApplyCount(), applies + 1);
    ServeSession reparsed(loop_.get(), *parsed, client, upstream, "s");
    const std::string r3 =
        AnthropicToolResponse({{"toolu_7", "Read", kA}}, 10, 5);
    auto pr3 = ParseResponse(Api::kAnthropicMessages, r3);
    std::optional<std::string> x = mapped.OnResponse(r3, *pr3);
    std::optional<std::string> y = reparsed.OnResponse(r3, *pr3);
    ASSERT_TRUE(x.has_value());
    ASSERT_TRUE(y.has_value());
    EXPECT_EQ(*x, *y);
    // The breaks the two see are the same too.
    const PromptUsage usage{.input_tokens = 10,
                            .cache_read_tokens = n == 1 ? 9000 : 100,
                            .cache_creation_tokens = 0};
    std::optional<CacheBreak> ba = former->Observe(a.ticket, usage);
    std::optional<CacheBreak> bb = one->Observe(b.ticket, usage);
    ASSERT_EQ(ba.has_value(), bb.has_value());
    if (ba) {
      EXPECT_EQ(ba->Label(), bb->Label());
    }
    if (n == 2) {
      ASSERT_TRUE(bb.has_value());
    }
    clock.Advance(1);
  }
}

// Issue 27, item 3: conversation state is bound to the whole prefix it
// continues. Agent A (system A) says "Start.", a Read is served in a
// hidden round, A answers "Done."; agent B (system B, same scope) sends
// the same visible messages: nothing of A's reaches B. A's own next
// request, re-serialized with a moved cache_control breakpoint, still
// gets its hidden turn.
TEST_F(ToolLoopTest, StateIsBoundToTheWholePrefix) {
  ClientRan("toolu_1", "Read", kA, "alpha");
  auto request = [](const std::string& system, const std::string& tail) {
    return Padded(
        R"({"model":"m","max_tokens":100,"system":")" + system +
        R"(","tools":[{"name":"Read","input_schema":{"type":"object"}}],)"
        R"("messages":[{"role":"user","content":"Start."})" +
        tail + "]}");
  };
  const std::string a1 = request("You are agent A.", "");
  auto pa1 = ParseRequest(Api::kAnthropicMessages, a1);
  ASSERT_TRUE(pa1.ok());
  ServeSession s(loop_.get(), *pa1, a1, a1, "s");
  const std::string r1 = AnthropicToolResponse({{"toolu_9", "Read", kA}});
  auto pr1 = ParseResponse(Api::kAnthropicMessages, r1);
  ASSERT_TRUE(s.OnResponse(r1, *pr1).has_value());
  const std::string r2 = AnthropicTextResponse("Done.");
  auto pr2 = ParseResponse(Api::kAnthropicMessages, r2);
  EXPECT_FALSE(s.OnResponse(r2, *pr2).has_value());
  (void)s.Finish(r2, *pr2);
  ASSERT_TRUE(s.saved());
  const std::string tail =
      R"(,{"role":"assistant","content":[{"type":"text","text":"Done."}]},)"
      R"({"role":"user","content":"Next."})";
  // B: another system prompt, the same visible turns, the same scope.
  const std::string b2 = request("You are agent B.", tail);
  auto pb2 = ParseRequest(Api::kAnthropicMessages, b2);
  ASSERT_TRUE(pb2.ok());
  SpliceReport rb;
  EXPECT_EQ(loop_->Splice(*pb2, b2, "s", &rb), b2);
  EXPECT_EQ(rb.spliced, 0u);
  // Another tool list is another conversation too.
  std::string t2 = request("You are agent A.", tail);
  t2.replace(t2.find("\"Read\""), 6, "\"Grep\"");
  auto pt2 = ParseRequest(Api::kAnthropicMessages, t2);
  ASSERT_TRUE(pt2.ok());
  SpliceReport rt;
  EXPECT_EQ(loop_->Splice(*pt2, t2, "s", &rt), t2);
  EXPECT_EQ(rt.spliced, 0u);
  // An earlier message B had and A did not.
  const std::string e2 = Padded(
      R"({"model":"m","max_tokens":100,"system":"You are agent A.",)"
      R"("tools":[{"name":"Read","input_schema":{"type":"object"}}],)"
      R"("messages":[{"role":"user","content":"Earlier."},)"
      R"({"role":"assistant","content":"Ok."},{"role":"user","content":"Start."})" +
      tail + "]}");
  auto pe2 = ParseRequest(Api::kAnthropicMessages, e2);
  ASSERT_TRUE(pe2.ok());
  SpliceReport re;
  EXPECT_EQ(loop_->Splice(*pe2, e2, "s", &re), e2);
  EXPECT_EQ(re.spliced, 0u);
  // A itself: the first message now a text block with a cache_control
  // breakpoint and keys in another order; the same prefix.
  std::string a2 = request("You are agent A.", tail);
  a2.replace(a2.find(R"({"role":"user","content":"Start."})"),
             std::string(R"({"role":"user","content":"Start."})").size(),
             R"({"content":[{"text":"Start.","type":"text",)"
             R"("cache_control":{"type":"ephemeral"}}],"role":"user"})");
  auto pa2 = ParseRequest(Api::kAnthropicMessages, a2);
  ASSERT_TRUE(pa2.ok());
  SpliceReport ra;
  json j = json::parse(loop_->Splice(*pa2, a2, "s", &ra));
  EXPECT_EQ(ra.spliced, 1u);
  ASSERT_EQ(j["messages"].size(), 5u);
  EXPECT_EQ(j["messages"][1]["content"][1]["id"], "toolu_9");
}

// The same through Chat Completions ids: an upstream that numbers calls
// call_0, call_1... in every conversation gives two conversations the
// same anchor identity; their prefixes still tell them apart, even where
// the system prompts differ further back than the last two messages.
TEST_F(ToolLoopTest, ReusedChatIdsDoNotCrossConversations) {
  ClientRan("call_x", "Read", kA, "alpha");
  auto request = [](const std::string& system, const std::string& tail) {
    return Padded(R"({"model":"m","messages":[{"role":"system","content":")" +
                  system +
                  R"("},{"role":"user","content":"Hi."},)"
                  R"({"role":"assistant","content":"Hello."},)"
                  R"({"role":"user","content":"Start."})" +
                  tail + "]}");
  };
  auto chat_calls = [](const std::string& id, const std::string& name) {
    return R"({"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[)"
           R"({"id":")" +
           id + R"(","type":"function","function":{"name":")" + name +
           R"(","arguments":"{\"file_path\":\"/w/a.txt\"}"}}]},"finish_reason":"tool_calls"}],)"
           R"("usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}})";
  };
  const std::string a1 = request("A", "");
  auto pa1 = ParseRequest(Api::kOpenAiChat, a1);
  ASSERT_TRUE(pa1.ok());
  ServeSession s(loop_.get(), *pa1, a1, a1, "s");
  const std::string r1 = chat_calls("call_0", "Read");  // served
  auto pr1 = ParseResponse(Api::kOpenAiChat, r1);
  ASSERT_TRUE(s.OnResponse(r1, *pr1).has_value());
  const std::string r2 = chat_calls("call_0", "Write");  // the client's
  auto pr2 = ParseResponse(Api::kOpenAiChat, r2);
  EXPECT_FALSE(s.OnResponse(r2, *pr2).has_value());
  (void)s.Finish(r2, *pr2);
  ASSERT_TRUE(s.saved());
  const std::string tail =
      R"(,{"role":"assistant","content":null,"tool_calls":[{"id":"call_0","type":"function","function":{"name":"Write","arguments":"{}"}}]},)"
      R"({"role":"tool","tool_call_id":"call_0","content":"ok"})";
  const std::string b2 = request("B", tail);
  auto pb2 = ParseRequest(Api::kOpenAiChat, b2);
  ASSERT_TRUE(pb2.ok());
  SpliceReport rb;
  EXPECT_EQ(loop_->Splice(*pb2, b2, "s", &rb), b2);
  EXPECT_EQ(rb.spliced, 0u);
  const std::string a2 = request("A", tail);
  auto pa2 = ParseRequest(Api::kOpenAiChat, a2);
  ASSERT_TRUE(pa2.ok());
  SpliceReport ra;
  json j = json::parse(loop_->Splice(*pa2, a2, "s", &ra));
  EXPECT_EQ(ra.spliced, 1u);
  ASSERT_EQ(j["messages"].size(), 8u);
  EXPECT_EQ(j["messages"][4]["tool_calls"][0]["function"]["name"], "Read");
}

TEST_F(ToolLoopTest, RoundLimit) {
  Build(Config(),
        ServeOptions{.all_tools = true, .tools = {"Read"}, .max_rounds = 1});
  ClientRan("toolu_1", "Read", kA, "alpha");
  const std::string client1 =
      Padded(R"({"model":"m","messages":[{"role":"user","content":"x"}]})");
  auto p1 = ParseRequest(Api::kAnthropicMessages, client1);
  ServeSession s(loop_.get(), *p1, client1, client1, "s");
  const std::string r1 = AnthropicToolResponse({{"toolu_9", "Read", kA}});
  auto pr1 = ParseResponse(Api::kAnthropicMessages, r1);
  EXPECT_FALSE(s.OnResponse(r1, *pr1).has_value());
  EXPECT_EQ(s.Finish(r1, *pr1), r1);  // untouched: nothing hidden
}

TEST_F(ToolLoopTest, ChatCompletionsToolMessagesPerCall) {
  ClientRan("call_1", "Read", kA, "alpha");
  const std::string resp =
      R"({"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[)"
      R"({"id":"call_7","type":"function","function":{"name":"Read","arguments":"{\"file_path\":\"/w/a.txt\"}"}}]},"finish_reason":"tool_calls"}],)"
      R"("usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11,"prompt_tokens_details":{"cached_tokens":0}}})";
  auto pr = ParseResponse(Api::kOpenAiChat, resp);
  ASSERT_TRUE(pr.ok());
  auto turn = loop_->TryServe(Api::kOpenAiChat, resp, *pr, "s");
  ASSERT_TRUE(turn.has_value());
  json msgs = json::parse("[" + turn->messages + "]");
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[0]["tool_calls"][0]["id"], "call_7");
  EXPECT_EQ(msgs[1]["role"], "tool");
  EXPECT_EQ(msgs[1]["tool_call_id"], "call_7");
  EXPECT_EQ(msgs[1]["content"], "alpha");
}

TEST_F(ToolLoopTest, ResponsesServedFromStringInputAndSplicedBeforeReasoning) {
  ClientRan("call_1", "Read", kA, "alpha");
  const std::string client1 = Padded(
      R"({"model":"m","input":"read a","tools":[{"type":"function","name":"Read"}]})");
  auto p1 = ParseRequest(Api::kOpenAiResponses, client1);
  ASSERT_TRUE(p1.ok());
  EXPECT_EQ(ToolLoop::BypassReason(*p1), "");
  ServeSession s(loop_.get(), *p1, client1, client1, "s");
  const std::string r1 =
      R"({"id":"resp_1","object":"response","status":"completed","output":[)"
      R"({"type":"reasoning","id":"rs_1","summary":[]},)"
      R"({"type":"function_call","id":"fc_1","call_id":"call_7","name":"Read","arguments":"{\"file_path\":\"/w/a.txt\"}","status":"completed"}],)"
      R"("usage":{"input_tokens":9,"output_tokens":2,"total_tokens":11,"input_tokens_details":{"cached_tokens":0}}})";
  auto pr1 = ParseResponse(Api::kOpenAiResponses, r1);
  ASSERT_TRUE(pr1.ok());
  std::optional<std::string> up2 = s.OnResponse(r1, *pr1);
  ASSERT_TRUE(up2.has_value());
  // The string input became its user message; items paired by call_id.
  json in = json::parse(*up2)["input"];
  ASSERT_EQ(in.size(), 4u);
  EXPECT_EQ(in[0]["role"], "user");
  EXPECT_EQ(in[0]["content"], "read a");
  EXPECT_EQ(in[1]["type"], "reasoning");
  EXPECT_EQ(in[2]["call_id"], "call_7");
  EXPECT_EQ(in[3]["type"], "function_call_output");
  EXPECT_EQ(in[3]["call_id"], "call_7");
  EXPECT_EQ(in[3]["output"], "alpha");
  const std::string r2 =
      R"({"id":"resp_2","object":"response","status":"completed","output":[)"
      R"({"type":"reasoning","id":"rs_2","summary":[]},)"
      R"({"type":"message","id":"msg_2","role":"assistant","status":"completed","content":[{"type":"output_text","text":"alpha it is","annotations":[]}]}],)"
      R"("usage":{"input_tokens":20,"output_tokens":3,"total_tokens":23,"input_tokens_details":{"cached_tokens":8}}})";
  auto pr2 = ParseResponse(Api::kOpenAiResponses, r2);
  EXPECT_FALSE(s.OnResponse(r2, *pr2).has_value());
  json final_body = json::parse(s.Finish(r2, *pr2));
  EXPECT_TRUE(s.saved());
  EXPECT_EQ(final_body["usage"]["input_tokens"], 29);
  EXPECT_EQ(final_body["usage"]["input_tokens_details"]["cached_tokens"], 8);
  // The client sends its input back with the visible output items (the
  // reasoning item first) and a new message.
  const std::string client2 = Padded(
      R"({"model":"m","input":[{"role":"user","content":"read a"},)"
      R"({"type":"reasoning","id":"rs_2","summary":[]},)"
      R"({"type":"message","id":"msg_2","role":"assistant","status":"completed","content":[{"type":"output_text","text":"alpha it is","annotations":[]}]},)"
      R"({"role":"user","content":"thanks"}],)"
      R"("tools":[{"type":"function","name":"Read"}]})");
  auto p2 = ParseRequest(Api::kOpenAiResponses, client2);
  ASSERT_TRUE(p2.ok());
  SpliceReport rep;
  json j2 = json::parse(loop_->Splice(*p2, client2, "s", &rep));
  EXPECT_EQ(rep.spliced, 1u);
  ASSERT_EQ(j2["input"].size(), 7u);
  EXPECT_EQ(j2["input"][1]["id"], "rs_1");  // hidden, before rs_2
  EXPECT_EQ(j2["input"][3]["type"], "function_call_output");
  EXPECT_EQ(j2["input"][4]["id"], "rs_2");
  EXPECT_EQ(j2["input"][5]["id"], "msg_2");
  // State held by the provider: never served.
  const std::string prev =
      Padded(R"({"model":"m","previous_response_id":"resp_2","input":"more"})");
  auto p3 = ParseRequest(Api::kOpenAiResponses, prev);
  ASSERT_TRUE(p3.ok());
  EXPECT_EQ(ToolLoop::BypassReason(*p3), "previous_response_id");
  const std::string conv =
      Padded(R"({"model":"m","conversation":{"id":"conv_1"},"input":"more"})");
  auto p4 = ParseRequest(Api::kOpenAiResponses, conv);
  ASSERT_TRUE(p4.ok());
  EXPECT_EQ(ToolLoop::BypassReason(*p4), "conversation");
  EXPECT_TRUE(ToolLoop::Supports(Api::kOpenAiResponses, /*stream=*/true));
}

TEST_F(ToolLoopTest, ResponsesStreamShowingHiddenRoundItemsIsReplacedWhole) {
  ClientRan("call_1", "Read", kA, "alpha");
  const std::string client1 = Padded(
      R"({"model":"m","input":[{"role":"user","content":"read a"}],"stream":true})");
  auto p1 = ParseRequest(Api::kOpenAiResponses, client1);
  ASSERT_TRUE(p1.ok());
  ServeSession s(loop_.get(), *p1, client1, client1, "s");
  const std::string r1 =
      R"({"id":"resp_1","object":"response","status":"completed","output":[)"
      R"({"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Reading.","annotations":[]}]},)"
      R"({"type":"function_call","id":"fc_1","call_id":"call_7","name":"Read","arguments":"{\"file_path\":\"/w/a.txt\"}","status":"completed"}],)"
      R"("usage":{"input_tokens":9,"output_tokens":2,"total_tokens":11}})";
  auto pr1 = ParseResponse(Api::kOpenAiResponses, r1);
  ASSERT_TRUE(pr1.ok());
  ASSERT_TRUE(s.OnResponse(r1, *pr1).has_value());
  const std::string msg2 =
      R"({"type":"message","id":"msg_2","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Done.","annotations":[]}]})";
  const std::string r2 =
      R"({"id":"resp_2","object":"response","status":"completed","output":[)" +
      msg2 +
      R"(],"usage":{"input_tokens":20,"output_tokens":3,"total_tokens":23}})";
  auto pr2 = ParseResponse(Api::kOpenAiResponses, r2);
  ASSERT_TRUE(pr2.ok());
  EXPECT_FALSE(s.OnResponse(r2, *pr2).has_value());
  // The client was shown msg_1 (round 1's text) and msg_2, as one response.
  const std::string msg1_client =
      R"({"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Reading.","annotations":[]}]})";
  const std::string shown =
      R"({"id":"resp_1","object":"response","status":"completed","output":[)" +
      msg1_client + "," + msg2 + "]}";
  s.FinishStream(r2, shown, /*relayed_earlier=*/true);
  EXPECT_TRUE(s.saved());
  const std::string client2 = Padded(
      R"({"model":"m","input":[{"role":"user","content":"read a"},)" +
      msg1_client + "," + msg2 + R"(,{"role":"user","content":"thanks"}]})");
  auto p2 = ParseRequest(Api::kOpenAiResponses, client2);
  ASSERT_TRUE(p2.ok());
  SpliceReport rep;
  json j2 = json::parse(loop_->Splice(*p2, client2, "s", &rep));
  EXPECT_EQ(rep.spliced, 1u);
  // Both client items replaced by the upstream's four: no duplicate msg_1.
  ASSERT_EQ(j2["input"].size(), 6u) << j2.dump();
  EXPECT_EQ(j2["input"][1]["id"], "msg_1");
  EXPECT_EQ(j2["input"][2]["call_id"], "call_7");
  EXPECT_EQ(j2["input"][3]["type"], "function_call_output");
  EXPECT_EQ(j2["input"][4]["id"], "msg_2");
  EXPECT_EQ(j2["input"][5]["content"], "thanks");
  // A history without all of them (msg_2 dropped): forwarded as sent.
  const std::string client3 =
      Padded(R"({"model":"m","input":[{"role":"user","content":"read a"},)" +
             msg1_client + R"(,{"role":"user","content":"thanks"}]})");
  auto p3 = ParseRequest(Api::kOpenAiResponses, client3);
  ASSERT_TRUE(p3.ok());
  SpliceReport rep3;
  EXPECT_EQ(loop_->Splice(*p3, client3, "s", &rep3), client3);
  EXPECT_EQ(rep3.spliced, 0u);
  EXPECT_EQ(rep3.missing, 1u);
}

TEST(ToolLoopWire, AppendToEmptyMessagesAndSumUsage) {
  const std::string body = Padded(R"({"model":"m","messages":[ ]})");
  auto p = ParseRequest(Api::kAnthropicMessages, body);
  ASSERT_TRUE(p.ok());
  auto out = AppendMessages(*p, body, R"({"role":"user","content":"x"})");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(json::parse(*out)["messages"].size(), 1u);
  nlohmann::ordered_json total;
  AddUsage(R"({"usage":{"prompt_tokens":3,"d":{"cached_tokens":1}}})", &total);
  AddUsage(R"({"usage":{"prompt_tokens":4,"d":{"cached_tokens":2}}})", &total);
  json j = json::parse(WithUsage(R"({"a":1,"usage":{}})", total));
  EXPECT_EQ(j["usage"]["prompt_tokens"], 7);
  EXPECT_EQ(j["usage"]["d"]["cached_tokens"], 3);
  EXPECT_EQ(j["a"], 1);
}

// Chat with n > 1: the client picks one of the choices, so the loop never
// answers for it, even when every call of every choice is a fresh hit.
TEST_F(ToolLoopTest, ChatWithSeveralChoicesIsNeverServed) {
  ClientRan("call_1", "Read", kA, "alpha");
  const std::string call =
      R"({"role":"assistant","content":null,"tool_calls":[{"id":"call_7","type":"function","function":{"name":"Read","arguments":"{\"file_path\":\"/w/a.txt\"}"}}]})";
  const std::string one =
      R"({"id":"c1","object":"chat.completion","choices":[{"index":0,"message":)" +
      call + R"(,"finish_reason":"tool_calls"}]})";
  const std::string two =
      R"({"id":"c1","object":"chat.completion","choices":[{"index":0,"message":)" +
      call + R"(,"finish_reason":"tool_calls"},{"index":1,"message":)" + call +
      R"(,"finish_reason":"tool_calls"}]})";
  auto p1 = ParseResponse(Api::kOpenAiChat, one);
  auto p2 = ParseResponse(Api::kOpenAiChat, two);
  ASSERT_TRUE(p1.ok() && p2.ok());
  EXPECT_EQ(p2->tool_uses.size(), 2u);
  EXPECT_TRUE(loop_->TryServe(Api::kOpenAiChat, one, *p1, "s").has_value());
  EXPECT_FALSE(loop_->TryServe(Api::kOpenAiChat, two, *p2, "s").has_value());
}

// Session 16 (wsO): a result read on the client (Read, an `mcp__*` tool of
// the agent's own MCP server) is served only to the same workspace (same
// API key, other folder or container: not served), and never to a request
// whose workspace is unknown.
TEST_F(ToolLoopTest, ClientToolResultsAreServedOnlyInTheirWorkspace) {
  const ToolScopes a("key", std::string("key+wsA"));
  const ToolScopes b("key", std::string("key+wsB"));
  const ToolScopes unknown("key", std::nullopt);
  const std::string fs = "mcp__filesystem__read_text_file";
  const std::string main_py = R"({"path":"/workspace/src/main.py"})";
  ClientRan("toolu_1", "Read", kA, "alpha", false, a);
  ClientRan("toolu_2", fs, main_py, "print('A')", false, a);
  for (const auto& [tool, args] :
       {std::pair{std::string("Read"), kA}, std::pair{fs, main_py}}) {
    const std::string resp = AnthropicToolResponse({{"toolu_9", tool, args}});
    EXPECT_FALSE(Serve(resp, b).has_value()) << tool;
    EXPECT_FALSE(Serve(resp, unknown).has_value()) << tool;
    auto turn = Serve(resp, a);
    ASSERT_TRUE(turn.has_value()) << tool;
  }
}

// Session 17: `serve: true` never answers a coding agent's own tool that
// the agent table does not name (Claude Code 2.1.328's ListAgents lists
// this session's agents, WebFetch fetches from the client's network, a
// served ToolSearch would never load the tools it names): before, such a
// tool was served, under the API key alone, to every machine sharing it.
TEST_F(ToolLoopTest, AllToolsNeverServesAnAgentsOwnToolsTheTableDoesNotName) {
  Build(Config(), ServeOptions{.all_tools = true});
  ToolScopes a("key", std::string("key+wsA"));
  a.agent = true;
  ToolScopes b("key", std::string("key+wsB"));
  b.agent = true;
  const std::string none = "{}";
  const std::string url = R"({"url":"http://localhost:3000/admin"})";
  ClientRan("toolu_1", "ListAgents", none, "agent 1: refactor (running)", false,
            a);
  ClientRan("toolu_2", "WebFetch", url, "admin page of machine A", false, a);
  for (const auto& [tool, args] : {std::pair{std::string("ListAgents"), none},
                                   std::pair{std::string("WebFetch"), url}}) {
    const std::string resp = AnthropicToolResponse({{"toolu_9", tool, args}});
    EXPECT_FALSE(Serve(resp, a).has_value()) << tool;
    EXPECT_FALSE(Serve(resp, b).has_value()) << tool;
  }
  // An MCP server's tool is still served, in its own workspace only.
  const std::string q = R"({"path":"/w/a.txt"})";
  ClientRan("toolu_3", "mcp__fs__read_text_file", q, "alpha", false, a);
  const std::string mcp =
      AnthropicToolResponse({{"toolu_8", "mcp__fs__read_text_file", q}});
  EXPECT_TRUE(Serve(mcp, a).has_value());
  EXPECT_FALSE(Serve(mcp, b).has_value());
  // An SDK script's own function (no agent headers) is served as before.
  const ToolScopes sdk("key", std::string("key+wsA"));
  ClientRan("toolu_4", "get_order", R"({"id":"7"})", "order 7: shipped", false,
            sdk);
  EXPECT_TRUE(
      Serve(AnthropicToolResponse({{"toolu_7", "get_order", R"({"id":"7"})"}}),
            sdk)
          .has_value());
}

}  // namespace
}  // namespace toolcache::llm
