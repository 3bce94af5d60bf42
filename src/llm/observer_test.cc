// The observer against the real engine (ToolCache with the default config
// and a manual clock): requests and responses as the three APIs send them.
#include "src/llm/observer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "src/llm/agent_tools.h"
#include "toolcache/canonical_json.h"

namespace toolcache::llm {
namespace {

std::string Padded(std::string s) {
  s.reserve(s.size() + 64);
  return s;
}

class ObserverTest : public ::testing::Test {
 protected:
  void SetUp() override { Build(Config()); }
  void Build(const Config& config) {
    auto made = NewToolCache(config, &clock_);
    ASSERT_TRUE(made.ok()) << made.status().message();
    cache_ = std::move(*made);
    registry_ = std::make_unique<metrics::Registry>();
    obs_ = std::make_unique<Observer>(cache_.get(), &clock_, registry_.get(),
                                      ObserverOptions{});
  }

  // A response asking for one Anthropic tool call.
  ResponseReport Ask(const std::string& id, const std::string& name,
                     const std::string& args, const ToolScopes& scope = "s") {
    ToolUse u{.id = id, .name = name, .arguments = args};
    return obs_->OnResponse(Api::kAnthropicMessages, {&u, 1}, scope);
  }

  // A request whose newest turn answers `id` with `content`.
  RequestReport Answer(const std::string& id, const std::string& name,
                       const std::string& args, const std::string& content,
                       bool is_error = false, const ToolScopes& scope = "s") {
    body_ = Padded(
        R"({"model":"m","messages":[{"role":"user","content":"go"},)"
        R"({"role":"assistant","content":[{"type":"tool_use","id":")" +
        id + R"(","name":")" + name + R"(","input":)" + args +
        R"(}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":")" +
        id + R"(","is_error":)" + (is_error ? "true" : "false") +
        R"(,"content":)" + nlohmann::json(content).dump() + "}]}]}");
    Result<ParsedRequest> r = ParseRequest(Api::kAnthropicMessages, body_);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return obs_->OnRequest(*r, body_, scope);
  }

  ManualClock clock_{100};
  std::unique_ptr<ToolCache> cache_;
  std::unique_ptr<metrics::Registry> registry_;
  std::unique_ptr<Observer> obs_;
  std::string body_;
};

// Issue 28: Claude Code answers a repeated Read with a stub; the stub is
// not a result (neither recorded over the real entry nor counted stale).
TEST_F(ObserverTest, ClientDedupeStubIsNeverRecorded) {
  const std::string args = R"({"file_path":"/src/a.txt"})";
  Ask("toolu_1", "Read", args);
  ASSERT_EQ(Answer("toolu_1", "Read", args, "     1\tline 1").recorded, 1u);
  Ask("toolu_2", "Read", args);
  RequestReport stub = Answer(
      "toolu_2", "Read", args,
      "File unchanged since last read. The content from the earlier Read "
      "tool_result in this conversation is still current \xE2\x80\x94 "
      "refer to that instead of re-reading.");
  EXPECT_EQ(stub.client_markers, 1u);
  EXPECT_EQ(stub.recorded, 0u);
  EXPECT_EQ(stub.stale, 0u);
  Probe p = cache_->Peek(
      {.server = "llm", .scope = "s", .tool = "Read", .arguments_json = args});
  ASSERT_TRUE(p.would_hit);
  ASSERT_TRUE(p.result_json);
  EXPECT_NE(p.result_json->find("line 1"), std::string::npos);
}

// Claude Code's Bash carries a `description` that changes from call to
// call; the key ignores it.
TEST_F(ObserverTest, ShellDescriptionDoesNotSplitTheKey) {
  std::vector<std::unique_ptr<FeatureExtractor>> layers;
  layers.push_back(NewAgentToolExtractor("llm"));
  auto made = NewToolCache(Config(), &clock_, nullptr, std::move(layers));
  ASSERT_TRUE(made.ok());
  cache_ = std::move(*made);
  obs_ = std::make_unique<Observer>(cache_.get(), &clock_, registry_.get(),
                                    ObserverOptions{});
  Ask("toolu_1", "Bash", R"({"command":"cat a","description":"Show a"})");
  ASSERT_EQ(Answer("toolu_1", "Bash",
                   R"({"command":"cat a","description":"Show a"})", "hi")
                .recorded,
            1u);
  EXPECT_EQ(
      Ask("toolu_2", "Bash", R"({"command":"cat a","description":"Read a"})")
          .would_hit,
      1u);
}

// Session 18: after a `cd sub` in the conversation, Claude Code's Bash
// `cat main.py` reads sub/main.py. It was recorded over the root file's
// entry (stale) and counted as its would-hit; now it is neither keyed nor
// recorded, while an absolute path still is.
TEST_F(ObserverTest, ABashReadAfterACdIsNotKeyedUnlessAbsolute) {
  std::vector<std::unique_ptr<FeatureExtractor>> layers;
  layers.push_back(NewAgentToolExtractor("llm"));
  auto made = NewToolCache(Config(), &clock_, nullptr, std::move(layers));
  ASSERT_TRUE(made.ok());
  cache_ = std::move(*made);
  obs_ = std::make_unique<Observer>(cache_.get(), &clock_, registry_.get(),
                                    ObserverOptions{});
  const std::string cat = R"({"command":"cat main.py"})";
  const std::string abs = R"({"command":"cat /w/sub/main.py"})";
  Ask("toolu_1", "Bash", cat);
  ASSERT_EQ(Answer("toolu_1", "Bash", cat, "root main").recorded, 1u);
  // The conversation goes on: `cd sub`, then the same command.
  auto call = [](const std::string& id, const std::string& args) {
    return R"({"role":"assistant","content":[{"type":"tool_use","id":")" + id +
           R"(","name":"Bash","input":)" + args + "}]}";
  };
  auto result = [](const std::string& id, const std::string& text) {
    return R"({"role":"user","content":[{"type":"tool_result","tool_use_id":")" +
           id + R"(","content":)" + nlohmann::json(text).dump() + "}]}";
  };
  auto request = [&](const std::string& last_args, const std::string& text) {
    body_ =
        Padded(R"({"model":"m","messages":[{"role":"user","content":"go"},)" +
               call("toolu_1", cat) + "," + result("toolu_1", "root main") +
               "," + call("toolu_2", R"({"command":"cd sub"})") + "," +
               result("toolu_2", "") + "," + call("toolu_3", last_args) + "," +
               result("toolu_3", text) + "]}");
    Result<ParsedRequest> r = ParseRequest(Api::kAnthropicMessages, body_);
    EXPECT_TRUE(r.ok()) << r.status().message();
    ToolScopes scopes("s");
    scopes.shell_moved_at = FirstShellMove(*r);
    EXPECT_EQ(scopes.shell_moved_at, 1u);
    return std::make_pair(*r, scopes);
  };
  auto [moved_req, moved] = request(cat, "sub main");
  EXPECT_EQ(Ask("toolu_3", "Bash", cat, moved).would_hit, 0u)
      << "a read of sub/main.py counted as a hit of the root's";
  RequestReport rep = obs_->OnRequest(moved_req, body_, moved);
  EXPECT_EQ(rep.recorded, 0u);
  EXPECT_EQ(rep.bypassed, 1u);
  Probe root = cache_->Peek({.server = "llm",
                             .scope = "s",
                             .tool = "Bash#read-only",
                             .arguments_json = cat});
  ASSERT_TRUE(root.would_hit && root.result_json);
  EXPECT_NE(root.result_json->find("root main"), std::string::npos)
      << "sub/main.py was recorded over the root's entry: "
      << *root.result_json;
  EXPECT_NE(registry_->Prometheus().find(std::string(kShellMovedReason)),
            std::string::npos);
  // An absolute path is still recorded and keyed after the cd.
  auto [abs_req, abs_scopes] = request(abs, "sub main");
  EXPECT_EQ(obs_->OnRequest(abs_req, body_, abs_scopes).recorded, 1u);
  EXPECT_EQ(Ask("toolu_4", "Bash", abs, abs_scopes).would_hit, 1u);
}

// Session 19: the same after a move the session-18 scanner did not see
// (a sourced script, a case branch, a JSON-escaped or quote-split cd, a
// cd hidden behind a here-document's parenthesis): sub's main.py is
// neither a would-hit of the root's nor recorded over it.
TEST_F(ObserverTest, ABashReadAfterAnEscapedCdIsNotKeyed) {
  std::vector<std::unique_ptr<FeatureExtractor>> layers;
  layers.push_back(NewAgentToolExtractor("llm"));
  auto made = NewToolCache(Config(), &clock_, nullptr, std::move(layers));
  ASSERT_TRUE(made.ok());
  cache_ = std::move(*made);
  obs_ = std::make_unique<Observer>(cache_.get(), &clock_, registry_.get(),
                                    ObserverOptions{});
  const std::string cat = R"({"command":"cat main.py"})";
  Ask("toolu_1", "Bash", cat);
  ASSERT_EQ(Answer("toolu_1", "Bash", cat, "root main").recorded, 1u);
  auto call = [](const std::string& id, const std::string& args) {
    return R"({"role":"assistant","content":[{"type":"tool_use","id":")" + id +
           R"(","name":"Bash","input":)" + args + "}]}";
  };
  auto result = [](const std::string& id, const std::string& text) {
    return R"({"role":"user","content":[{"type":"tool_result","tool_use_id":")" +
           id + R"(","content":)" + nlohmann::json(text).dump() + "}]}";
  };
  for (const std::string mover : {
           R"({"command":". ./sub.env"})",
           R"({"command":"case x in x) cd sub;; esac"})",
           R"({"command":"\u0063d sub"})",
           R"({"command":"c''d sub"})",
           R"({"command":"cat <<EOF\n(\nEOF\ncd sub"})",
       }) {
    body_ = Padded(
        R"({"model":"m","messages":[{"role":"user","content":"go"},)" +
        call("toolu_1", cat) + "," + result("toolu_1", "root main") + "," +
        call("toolu_2", mover) + "," + result("toolu_2", "") + "," +
        call("toolu_3", cat) + "," + result("toolu_3", "sub main") + "]}");
    Result<ParsedRequest> r = ParseRequest(Api::kAnthropicMessages, body_);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ToolScopes moved("s");
    moved.shell_moved_at = FirstShellMove(*r);
    EXPECT_EQ(moved.shell_moved_at, 1u) << mover;
    EXPECT_EQ(Ask("toolu_3", "Bash", cat, moved).would_hit, 0u)
        << mover << ": a read of sub/main.py counted as a hit of the root's";
    EXPECT_EQ(obs_->OnRequest(*r, body_, moved).recorded, 0u) << mover;
    Probe root = cache_->Peek({.server = "llm",
                               .scope = "s",
                               .tool = "Bash#read-only",
                               .arguments_json = cat});
    ASSERT_TRUE(root.would_hit && root.result_json);
    EXPECT_NE(root.result_json->find("root main"), std::string::npos)
        << mover << ": sub/main.py was recorded over the root's entry";
  }
}

TEST_F(ObserverTest, SecondReadOfTheSameFileWouldHit) {
  const std::string args = R"({"file_path":"/src/a.txt"})";
  ResponseReport first = Ask("toolu_1", "Read", args);
  EXPECT_EQ(first.observed_calls, 1u);
  EXPECT_EQ(first.would_hit, 0u);
  clock_.Advance(2.5);
  RequestReport rec = Answer("toolu_1", "Read", args, "line 1\nline 2");
  EXPECT_EQ(rec.results, 1u);
  EXPECT_EQ(rec.recorded, 1u);
  // The same call again (argument order does not matter: canonical keys).
  ResponseReport second =
      Ask("toolu_2", "Read", R"({ "file_path" : "/src/a.txt" })");
  EXPECT_EQ(second.would_hit, 1u);
  ASSERT_EQ(second.hits.size(), 1u);
  EXPECT_EQ(second.hits[0].tool, "Read");
  Result<CacheKey> key = MakeCacheKey("s", "llm", "Read", args);
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(second.hits[0].key, key->DigestHex().substr(0, 16));
  // Its result equals the stored one: counted as already cached.
  RequestReport again = Answer("toolu_2", "Read", args, "line 1\nline 2");
  EXPECT_EQ(again.already_cached, 1u);
  EXPECT_EQ(again.recorded, 0u);
  // The client-side tool latency was measured (2.5 s for the first call).
  nlohmann::json m = registry_->Json();
  const auto& lat = m["toolcache_llm_tool_latency_seconds"]["series"];
  ASSERT_EQ(lat.size(), 1u);
  EXPECT_NEAR(lat[0]["sum"].get<double>(), 2.5, 1e-6);
}

TEST_F(ObserverTest, ErrorsAreNeverStored) {
  const std::string args = R"({"file_path":"/x"})";
  Ask("t1", "Read", args);
  RequestReport r = Answer("t1", "Read", args, "ENOENT", /*is_error=*/true);
  EXPECT_EQ(r.errors, 1u);
  EXPECT_EQ(r.recorded, 0u);
  EXPECT_EQ(Ask("t2", "Read", args).would_hit, 0u);
}

TEST_F(ObserverTest, AWriteInvalidatesWhatWasRead) {
  const std::string args = R"({"file_path":"/x"})";
  Ask("t1", "Read", args);
  EXPECT_EQ(Answer("t1", "Read", args, "old").recorded, 1u);
  Ask("t2", "Edit",
      R"({"file_path":"/x","old_string":"old","new_string":"new"})");
  RequestReport w = Answer(
      "t2", "Edit",
      R"({"file_path":"/x","old_string":"old","new_string":"new"})", "ok");
  EXPECT_EQ(w.bypassed, 1u);
  EXPECT_EQ(Ask("t3", "Read", args).would_hit, 0u);
}

// (A read-only shell command is keyed apart, agent_tools.h KeyTool; a
// command that may write stays `Bash`, on the hard list.)
TEST_F(ObserverTest, SideEffectingToolsAreNeverRecorded) {
  Ask("t1", "Bash", R"({"command":"make"})");
  RequestReport r = Answer("t1", "Bash", R"({"command":"make"})", "a b");
  EXPECT_EQ(r.bypassed, 1u);
  EXPECT_EQ(Ask("t2", "Bash", R"({"command":"make"})").would_hit, 0u);
  nlohmann::json m = registry_->Json();
  bool hard = false;
  for (const auto& s : m["toolcache_llm_bypass_total"]["series"]) {
    if (s["labels"]["reason"] == "hard_excluded") hard = true;
  }
  EXPECT_TRUE(hard);
}

TEST_F(ObserverTest, ARetriedRequestIsRecordedOnce) {
  const std::string args = R"({"file_path":"/x"})";
  Ask("t1", "Read", args);
  EXPECT_EQ(Answer("t1", "Read", args, "v").recorded, 1u);
  RequestReport retry = Answer("t1", "Read", args, "v");
  EXPECT_EQ(retry.duplicates, 1u);
  EXPECT_EQ(retry.recorded + retry.already_cached, 0u);
}

// Providers that number calls per response (`call_0`) reuse ids. A
// result under an id already recorded for another call (a conversation
// whose response this process did not see: another proxy replica, or a
// response relayed unobserved) is not a retry: it was dropped as a
// duplicate, so a write never invalidated and the read it changed stayed
// cached (a would-hit, served with `serve: [Read]`).
TEST_F(ObserverTest, AReusedCallIdIsNotARetryOfAnotherCall) {
  const std::string read = R"({"file_path":"/w/a.txt"})";
  Ask("call_0", "Read", read);
  ASSERT_EQ(Answer("call_0", "Read", read, "version 1").recorded, 1u);
  // Another conversation, same key: the model's write reuses call_0 (its
  // response went through another replica).
  RequestReport w = Answer(
      "call_0", "Edit",
      R"({"file_path":"/w/a.txt","old_string":"1","new_string":"2"})", "ok");
  EXPECT_EQ(w.duplicates, 0u);
  EXPECT_EQ(w.bypassed, 1u);  // the write, seen: it invalidates
  EXPECT_EQ(Ask("call_1", "Read", read).would_hit, 0u)
      << "the read the write changed is still cached";
  // Same name, other arguments: another call too.
  Ask("call_2", "Read", read);
  ASSERT_EQ(Answer("call_2", "Read", read, "version 2").recorded, 1u);
  EXPECT_EQ(
      Answer("call_2", "Read", R"({"file_path":"/w/b.txt"})", "b").recorded,
      1u);
  // The same call answered the same way again is a retry.
  EXPECT_EQ(
      Answer("call_2", "Read", R"({"file_path":"/w/b.txt"})", "b").duplicates,
      1u);
}

TEST_F(ObserverTest, ScopesDoNotShare) {
  const std::string args = R"({"file_path":"/x"})";
  Ask("t1", "Read", args, "key-a");
  EXPECT_EQ(Answer("t1", "Read", args, "v", false, "key-a").recorded, 1u);
  EXPECT_EQ(Ask("t2", "Read", args, "key-b").would_hit, 0u);
  EXPECT_EQ(Ask("t3", "Read", args, "key-a").would_hit, 1u);
}

TEST_F(ObserverTest, McpToolNamesShareTheMcpProxysKey) {
  EXPECT_EQ(obs_->Route("mcp__fs__read_file"),
            (std::pair<std::string_view, std::string_view>("fs", "read_file")));
  EXPECT_EQ(obs_->Route("Read").first, "llm");
  EXPECT_EQ(obs_->Route("mcp__broken").first, "llm");
  const std::string args = R"({"path":"/etc/hosts"})";
  Ask("t1", "mcp__fs__read_file", args, "");
  EXPECT_EQ(
      Answer("t1", "mcp__fs__read_file", args, "127.0.0.1 localhost", false, "")
          .recorded,
      1u);
  // What the MCP proxy for server "fs" would ask the engine hits the entry.
  Probe p = cache_->Peek({.server = "fs",
                          .scope = "",
                          .tool = "read_file",
                          .arguments_json = args});
  EXPECT_TRUE(p.would_hit);
  ASSERT_TRUE(p.result_json);
  EXPECT_EQ(*p.result_json,
            R"({"content":[{"type":"text","text":"127.0.0.1 localhost"}]})");
}

TEST_F(ObserverTest, UnpairedResultsAreCountedNotRecorded) {
  body_ = Padded(
      R"({"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"ghost","content":"x"}]}]})");
  Result<ParsedRequest> r = ParseRequest(Api::kAnthropicMessages, body_);
  ASSERT_TRUE(r.ok());
  RequestReport rep = obs_->OnRequest(*r, body_, "s");
  EXPECT_EQ(rep.unpaired, 1u);
  EXPECT_EQ(rep.recorded, 0u);
}

TEST_F(ObserverTest, ResponsesPairsThroughTheRememberedCall) {
  // previous_response_id: the request carries only the output.
  ToolUse u{.id = "call_1", .name = "lookup_docs", .arguments = R"({"q":"x"})"};
  obs_->OnResponse(Api::kOpenAiResponses, {&u, 1}, "s");
  body_ = Padded(
      R"({"model":"m","previous_response_id":"resp_1","input":[{"type":"function_call_output","call_id":"call_1","output":"doc text"}]})");
  Result<ParsedRequest> r = ParseRequest(Api::kOpenAiResponses, body_);
  ASSERT_TRUE(r.ok()) << r.status().message();
  RequestReport rep = obs_->OnRequest(*r, body_, "s");
  EXPECT_EQ(rep.results, 1u);
  EXPECT_EQ(rep.unpaired, 0u);
  EXPECT_EQ(rep.recorded, 1u) << "bypassed " << rep.bypassed;
  ToolUse again{
      .id = "call_2", .name = "lookup_docs", .arguments = R"({"q":"x"})"};
  EXPECT_EQ(obs_->OnResponse(Api::kOpenAiResponses, {&again, 1}, "s").would_hit,
            1u);
}

TEST_F(ObserverTest, OperatorExclusionsApply) {
  Config c;
  c.exclude_tools = {"Read"};
  Build(c);
  const std::string args = R"({"file_path":"/x"})";
  Ask("t1", "Read", args);
  RequestReport r = Answer("t1", "Read", args, "v");
  EXPECT_EQ(r.bypassed, 1u);
  EXPECT_EQ(Ask("t2", "Read", args).would_hit, 0u);
}

TEST_F(ObserverTest, PendingCallsAreBounded) {
  Config c;
  Build(c);
  obs_ = std::make_unique<Observer>(
      cache_.get(), &clock_, registry_.get(),
      ObserverOptions{.pending_ttl_seconds = 10, .max_pending = 3});
  for (int i = 0; i < 10; ++i) Ask("t" + std::to_string(i), "Read", "{}");
  EXPECT_EQ(obs_->pending(), 3u);
  clock_.Advance(11);
  Ask("late", "Read", "{}");
  EXPECT_EQ(obs_->pending(), 1u);
}

// Session 19: the table of remembered calls under a flood. The victim
// reads /w/a.txt, then continues a Responses conversation with
// previous_response_id: its Edit's result carries only the call id, paired
// through the table alone. Unpaired, the write's invalidation was skipped
// and the read stayed cached (with `serve`, served stale).
class ObserverFloodTest : public ObserverTest {
 protected:
  static constexpr size_t kMax = 64;
  void SetUp() override {
    ObserverTest::SetUp();
    obs_ = std::make_unique<Observer>(
        cache_.get(), &clock_, registry_.get(),
        ObserverOptions{.pending_ttl_seconds = 3600, .max_pending = kMax});
  }
  static constexpr const char* kRead = R"({"file_path":"/w/a.txt"})";
  static constexpr const char* kEdit =
      R"({"file_path":"/w/a.txt","old_string":"1","new_string":"2"})";

  // The victim's read is cached, and the response asking for its write
  // (a Responses call) is remembered.
  void VictimAsksForAWrite() {
    Ask("toolu_r", "Read", kRead, "victim");
    ASSERT_EQ(
        Answer("toolu_r", "Read", kRead, "version 1", false, "victim").recorded,
        1u);
    ToolUse w{.id = "call_w", .name = "Edit", .arguments = kEdit};
    obs_->OnResponse(Api::kOpenAiResponses, {&w, 1}, "victim");
  }
  // The victim's next request: previous_response_id and the write's output.
  RequestReport VictimContinues() {
    body_ = Padded(
        R"({"model":"m","previous_response_id":"resp_1","input":[)"
        R"({"type":"function_call_output","call_id":"call_w","output":"ok"}]})");
    Result<ParsedRequest> r = ParseRequest(Api::kOpenAiResponses, body_);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return obs_->OnRequest(*r, body_, "victim");
  }
  bool VictimsReadIsCached() {
    return cache_
        ->Peek({.server = "llm",
                .scope = "victim",
                .tool = "Read",
                .arguments_json = kRead})
        .would_hit;
  }
  // A request of `scope` whose newest turn answers `n` Read calls (all in
  // its history, none asked through this proxy).
  RequestReport Results(const ToolScopes& scope, int n) {
    std::string uses, results;
    for (int i = 0; i < n; ++i) {
      const std::string id = "toolu_f" + std::to_string(i);
      if (i > 0) {
        uses += ",";
        results += ",";
      }
      uses += R"({"type":"tool_use","id":")" + id +
              R"(","name":"Read","input":{"file_path":"/f)" +
              std::to_string(i) + R"("}})";
      results += R"({"type":"tool_result","tool_use_id":")" + id +
                 R"(","content":"x"})";
    }
    body_ =
        Padded(R"({"model":"m","messages":[{"role":"user","content":"go"},)"
               R"({"role":"assistant","content":[)" +
               uses + R"(]},{"role":"user","content":[)" + results + "]}]}");
    Result<ParsedRequest> r = ParseRequest(Api::kAnthropicMessages, body_);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return obs_->OnRequest(*r, body_, scope);
  }
};

// Requests under made-up keys (the provider rejects them: OnAccepted is
// never called) add nothing to the table, however many results they carry.
TEST_F(ObserverFloodTest, MadeUpKeysCannotPushOutAContinuationsCall) {
  VictimAsksForAWrite();
  for (int k = 0; k < 16; ++k) {
    RequestReport flood = Results("made-up-" + std::to_string(k), 16);
    EXPECT_EQ(flood.recorded, 16u);  // in the made-up key's own scope
  }
  EXPECT_EQ(obs_->pending_of("victim"), 2u);
  EXPECT_EQ(obs_->pending(), 2u) << "a request's word added entries";
  RequestReport w = VictimContinues();
  EXPECT_EQ(w.unpaired, 0u) << "the write's call was pushed out";
  EXPECT_EQ(w.bypassed, 1u);
  EXPECT_FALSE(VictimsReadIsCached())
      << "the write's invalidation was skipped: the pre-write read stays";
}

// One principal the provider accepts floods the table, through responses
// and through accepted requests: it evicts only its own entries.
TEST_F(ObserverFloodTest, OneValidPrincipalsFloodEvictsOnlyItsOwn) {
  VictimAsksForAWrite();
  std::vector<ToolUse> calls;
  for (size_t i = 0; i < 2 * kMax; ++i) {
    calls.push_back(
        {.id = "call_" + std::to_string(i),
         .name = "Read",
         .arguments = R"({"file_path":"/g)" + std::to_string(i) + R"("})"});
  }
  clock_.Advance(1);
  // A request's results (the flooder holds no entries yet: remembered once
  // the provider accepted it), a response's calls, and a request's results
  // again (held at once now).
  RequestReport accepted = Results("flooder", 2 * kMax);
  EXPECT_EQ(accepted.to_remember.size(), 2 * kMax);
  obs_->OnAccepted(std::move(accepted.to_remember));
  EXPECT_EQ(obs_->pending(), kMax);
  EXPECT_EQ(obs_->pending_of("victim"), 2u);
  obs_->OnResponse(Api::kOpenAiResponses, calls, "flooder");
  EXPECT_EQ(Results("flooder", 2 * kMax).to_remember.size(), 0u);
  EXPECT_EQ(obs_->pending(), kMax);
  EXPECT_EQ(obs_->pending_of("victim"), 2u);
  EXPECT_EQ(obs_->pending_of("flooder"), kMax - 2);
  RequestReport w = VictimContinues();
  EXPECT_EQ(w.unpaired, 0u) << "the flooder pushed out the write's call";
  EXPECT_EQ(w.bypassed, 1u);
  EXPECT_FALSE(VictimsReadIsCached());
}

// A retry of a request whose results had no entry (a proxy restart) is
// still recorded once, when the provider accepted the first: the entry
// comes with OnAccepted, not with the request.
TEST_F(ObserverFloodTest, AnAcceptedRequestsResultsAreRememberedForItsRetry) {
  const std::string args = R"({"file_path":"/x"})";
  RequestReport first = Answer("t1", "Read", args, "v", false, "k");
  EXPECT_EQ(first.recorded, 1u);
  ASSERT_EQ(first.to_remember.size(), 1u);
  EXPECT_EQ(obs_->pending(), 0u);
  obs_->OnAccepted(std::move(first.to_remember));
  EXPECT_EQ(obs_->pending_of("k"), 1u);
  RequestReport retry = Answer("t1", "Read", args, "v", false, "k");
  EXPECT_EQ(retry.duplicates, 1u);
  EXPECT_TRUE(retry.to_remember.empty());
  // Another principal's request under the same call id is its own.
  EXPECT_EQ(Answer("t1", "Read", args, "v", false, "k2").duplicates, 0u);
  // A principal holding entries (the provider answered it within the TTL)
  // has them remembered at once: its retry after a refused answer (a 429,
  // a 5xx: no OnAccepted) is still recorded once.
  EXPECT_EQ(Answer("t2", "Read", args, "v", false, "k").to_remember.size(), 0u);
  EXPECT_EQ(Answer("t2", "Read", args, "v", false, "k").duplicates, 1u);
}

// Under `proxy.scope: global` every result scope is "", but the table is
// still per key (ToolScopes::principal): B's response reusing A's call id
// (`call_0`) does not replace A's call, so A's continuation pairs with its
// own Read, not with B's Edit.
TEST_F(ObserverTest, UnderAGlobalScopeTheTableIsStillPerKey) {
  ToolScopes a(""), b("");
  a.principal = "key-a";
  b.principal = "key-b";
  ToolUse read{
      .id = "call_0", .name = "lookup_docs", .arguments = R"({"q":"x"})"};
  ToolUse edit{
      .id = "call_0", .name = "Edit", .arguments = R"({"file_path":"/x"})"};
  obs_->OnResponse(Api::kOpenAiResponses, {&read, 1}, a);
  obs_->OnResponse(Api::kOpenAiResponses, {&edit, 1}, b);
  body_ = Padded(
      R"({"model":"m","previous_response_id":"resp_1","input":[)"
      R"({"type":"function_call_output","call_id":"call_0","output":"doc"}]})");
  Result<ParsedRequest> r = ParseRequest(Api::kOpenAiResponses, body_);
  ASSERT_TRUE(r.ok()) << r.status().message();
  RequestReport rep = obs_->OnRequest(*r, body_, a);
  EXPECT_EQ(rep.recorded, 1u) << "A's result paired with B's call";
  EXPECT_EQ(rep.bypassed, 0u);
  EXPECT_TRUE(cache_
                  ->Peek({.server = "llm",
                          .scope = "",
                          .tool = "lookup_docs",
                          .arguments_json = R"({"q":"x"})"})
                  .would_hit);
}

// A full table: the principal holding the most gives up its oldest entry,
// the inserting one counted with its new entry; among equals, the oldest
// entry goes.
TEST_F(ObserverTest, AFullTableEvictsFromThePrincipalHoldingTheMost) {
  obs_ = std::make_unique<Observer>(
      cache_.get(), &clock_, registry_.get(),
      ObserverOptions{.pending_ttl_seconds = 3600, .max_pending = 6});
  auto ask = [&](const std::string& who, const std::string& id) {
    clock_.Advance(1);
    Ask(id, "Read", "{}", who);
  };
  for (int i = 0; i < 4; ++i) ask("a", "a" + std::to_string(i));
  ask("b", "b0");
  ask("b", "b1");
  ask("c", "c0");  // a (4) gives up a0
  EXPECT_EQ(obs_->pending_of("a"), 3u);
  EXPECT_EQ(obs_->pending_of("c"), 1u);
  ask("c", "c1");  // a (3) gives up a1: c would hold 2
  ask("c", "c2");  // a, b, c would hold 2, 2, 3: c's own oldest goes
  EXPECT_EQ(obs_->pending_of("a"), 2u);
  EXPECT_EQ(obs_->pending_of("b"), 2u);
  EXPECT_EQ(obs_->pending_of("c"), 2u);
  // Which entries: each principal's newest.
  EXPECT_FALSE(obs_->remembers("a", "a1"));
  EXPECT_TRUE(obs_->remembers("a", "a2"));
  EXPECT_TRUE(obs_->remembers("a", "a3"));
  EXPECT_FALSE(obs_->remembers("c", "c0"));
  EXPECT_TRUE(obs_->remembers("c", "c1"));
  EXPECT_TRUE(obs_->remembers("b", "b0"));
  // Equal shares: a newcomer takes the oldest entry among them (a2's).
  ask("d", "d0");
  EXPECT_FALSE(obs_->remembers("a", "a2"));
  EXPECT_EQ(obs_->pending_of("a"), 1u);
  EXPECT_EQ(obs_->pending(), 6u);
  // Expiry empties a principal's share.
  clock_.Advance(3600);
  ask("e", "e0");
  EXPECT_EQ(obs_->pending(), 1u);
  EXPECT_EQ(obs_->pending_of("a"), 0u);
}

// Session 16 (wsO): one API key, two working folders (or installations):
// `cat a.txt` / Read in one is not a would-hit in the other; the same
// folder still hits.
TEST_F(ObserverTest, ClientToolResultsBelongToTheirWorkspace) {
  const ToolScopes a("key", std::string("key+wsA"));
  const ToolScopes b("key", std::string("key+wsB"));
  const std::string cat = R"({"command":"cat a.txt"})";
  const std::string read = R"({"file_path":"a.txt"})";
  Ask("t1", "Bash", cat, a);
  Answer("t1", "Bash", cat, "folder A's a.txt", false, a);
  Ask("t2", "Read", read, a);
  Answer("t2", "Read", read, "folder A's a.txt", false, a);
  EXPECT_EQ(Ask("t3", "Bash", cat, b).would_hit, 0u);
  EXPECT_EQ(Ask("t4", "Read", read, b).would_hit, 0u);
  EXPECT_EQ(Ask("t5", "Bash", cat, a).would_hit, 1u);
  EXPECT_EQ(Ask("t6", "Read", read, a).would_hit, 1u);
}

// Session 18 (attackV finding 4): the tools a request declares decide only
// its own principal's calls. Principal A declares B's write `note` as a
// read; B's next request carries no tools (OpenAI Chat allows that): B's
// write is still a write and drops B's cached read.
constexpr const char* kFunction =
    R"({"type":"function","function":{"name":"%s","description":"%s",)"
    R"("parameters":{"type":"object","properties":{"id":{"type":"string"},)"
    R"("text":{"type":"string"}}}}})";

std::string Function(const std::string& name, const std::string& description) {
  std::string f = kFunction;
  f.replace(f.find("%s"), 2, name);
  f.replace(f.find("%s"), 2, description);
  return f;
}

class ObserverPrincipalTest : public ObserverTest {
 protected:
  // An OpenAI Chat request of `scope` whose newest turn answers call `id`
  // (`name` with `args`) with `content`; `tools` "" sends no tools list.
  RequestReport Chat(const ToolScopes& scope, const std::string& tools,
                     const std::string& id, const std::string& name,
                     const std::string& args, const std::string& content) {
    body_ = R"({"model":"m",)";
    if (!tools.empty()) body_ += R"("tools":[)" + tools + "],";
    body_ += R"("messages":[{"role":"user","content":"go"})";
    if (!id.empty()) {
      body_ += R"(,{"role":"assistant","content":null,"tool_calls":[{"id":")" +
               id + R"(","type":"function","function":{"name":")" + name +
               R"(","arguments":)" + nlohmann::json(args).dump() +
               R"(}}]},{"role":"tool","tool_call_id":")" + id +
               R"(","content":)" + nlohmann::json(content).dump() + "}";
    }
    body_ += "]}";
    body_ = Padded(body_);
    Result<ParsedRequest> r = ParseRequest(Api::kOpenAiChat, body_);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return obs_->OnRequest(*r, body_, scope);
  }
  bool WouldHit(const std::string& scope, const std::string& tool,
                const std::string& args) {
    return cache_
        ->Peek({.server = "llm",
                .scope = scope,
                .tool = tool,
                .arguments_json = args})
        .would_hit;
  }
};

TEST_F(ObserverPrincipalTest, ADeclarationDecidesOnlyItsOwnPrincipalsCalls) {
  const std::string read =
      Function("read_note", "Read the note with this id and return its text.");
  const std::string b_tools =
      read + "," +
      Function("note",
               "Stores the text as the note with this id, replacing what it "
               "held. Returns a confirmation.");
  const std::string a_tools =
      read + "," +
      Function("note",
               "Returns the text of the note with this id (read-only "
               "lookup).");
  const std::string read_args = R"({"id":"a"})";
  ASSERT_EQ(
      Chat("sB", b_tools, "c1", "read_note", read_args, "note a = alpha v1")
          .recorded,
      1u);
  ASSERT_TRUE(WouldHit("sB", "read_note", read_args));
  // A (another key) redeclares `note` as a read, for itself.
  (void)Chat("sA", a_tools, "", "", "", "");
  ASSERT_NE(obs_->Definition("sA", "llm", "note"), nullptr);
  EXPECT_NE(obs_->Definition("sA", "llm", "note")->description,
            obs_->Definition("sB", "llm", "note")->description);
  // B's write, in a request without tools: judged by B's own declaration.
  RequestReport w =
      Chat("sB", "", "c2", "note", R"({"id":"a","text":"NEW"})", "stored a");
  EXPECT_EQ(w.bypassed, 1u);
  EXPECT_FALSE(WouldHit("sB", "read_note", read_args))
      << "A's declaration kept B's write from invalidating";
  // A's own `note` is a read for A.
  EXPECT_EQ(
      Chat("sA", "", "c3", "note", R"({"id":"a","text":"x"})", "x").recorded,
      1u);
  // The engine's shared table was never taught.
  EXPECT_FALSE(cache_
                   ->Peek({.server = "llm",
                           .scope = "sC",
                           .tool = "note",
                           .arguments_json = R"({"id":"a","text":"x"})"})
                   .verdict.cacheable);
}

// Under `proxy.scope: global` every key's result scope is "", but the tools
// a request declares are still its own key's claim: another key declaring
// a write as a read must not make this key's write a read (its
// invalidation skipped, the pre-write read served to everyone).
TEST_F(ObserverPrincipalTest, UnderAGlobalScopeADeclarationStaysItsKeys) {
  auto global_of = [](const std::string& key) {
    ToolScopes s("");
    s.principal = key;
    return s;
  };
  const std::string read =
      Function("read_note", "Read the note with this id and return its text.");
  const std::string b_tools =
      read + "," +
      Function("note",
               "Stores the text as the note with this id, replacing what it "
               "held. Returns a confirmation.");
  const std::string a_tools =
      read + "," +
      Function("note",
               "Returns the text of the note with this id (read-only "
               "lookup).");
  const std::string read_args = R"({"id":"a"})";
  ASSERT_EQ(Chat(global_of("kB"), b_tools, "c1", "read_note", read_args,
                 "note a = alpha v1")
                .recorded,
            1u);
  ASSERT_TRUE(WouldHit("", "read_note", read_args));
  // A (another key) redeclares `note` as a read.
  (void)Chat(global_of("kA"), a_tools, "", "", "", "");
  // B's write, in a request without tools: judged by B's own declaration.
  RequestReport w = Chat(global_of("kB"), "", "c2", "note",
                         R"({"id":"a","text":"NEW"})", "stored a");
  EXPECT_EQ(w.bypassed, 1u);
  EXPECT_FALSE(WouldHit("", "read_note", read_args))
      << "A's declaration kept B's write from invalidating the global entry";
}

TEST_F(ObserverPrincipalTest, ToolTablesAreBounded) {
  obs_.reset();
  registry_ = std::make_unique<metrics::Registry>();
  obs_ = std::make_unique<Observer>(
      cache_.get(), &clock_, registry_.get(),
      ObserverOptions{.max_tool_principals = 3, .max_tool_bytes = 1u << 20});
  const std::string tools = Function("read_note", "Read a note.");
  for (int i = 0; i < 10; ++i) {
    (void)Chat("k" + std::to_string(i), tools, "", "", "", "");
  }
  EXPECT_EQ(obs_->tool_principals(), 3u);
  EXPECT_EQ(obs_->Definition("k0", "llm", "read_note"), nullptr);
  EXPECT_NE(obs_->Definition("k9", "llm", "read_note"), nullptr);
  // A byte budget smaller than two tables keeps one.
  const size_t one = obs_->tool_bytes() / 3;
  obs_.reset();
  registry_ = std::make_unique<metrics::Registry>();
  obs_ = std::make_unique<Observer>(
      cache_.get(), &clock_, registry_.get(),
      ObserverOptions{.max_tool_principals = 100, .max_tool_bytes = one});
  for (int i = 0; i < 10; ++i) {
    (void)Chat("k" + std::to_string(i), tools, "", "", "", "");
  }
  EXPECT_EQ(obs_->tool_principals(), 1u);
  EXPECT_EQ(obs_->tool_bytes(), one);
}

// revU: a request's tools list is the principal's whole list, so one
// principal naming new servers request after request does not grow its
// table (nor, past the byte budget, evict everyone else's); a list that
// alone exceeds the budget is not kept.
TEST_F(ObserverPrincipalTest, ARequestsToolsReplaceThePrincipalsWholeList) {
  (void)Chat("victim", Function("read_note", "Read a note."), "", "", "", "");
  for (int i = 0; i < 50; ++i) {
    const std::string server = "s" + std::to_string(i);
    (void)Chat("flood",
               Function("mcp__" + server + "__get",
                        "Get a thing. " + std::string(200, 'x')),
               "", "", "", "");
    EXPECT_EQ(obs_->Definition("flood", server, "get") != nullptr, true) << i;
    if (i > 0) {
      EXPECT_EQ(obs_->Definition("flood", "s" + std::to_string(i - 1), "get"),
                nullptr)
          << i;
    }
  }
  const size_t victim_and_one = obs_->tool_bytes();
  (void)Chat("flood", Function("mcp__s49__get", "Get a thing."), "", "", "",
             "");
  EXPECT_LT(obs_->tool_bytes(), victim_and_one);
  EXPECT_NE(obs_->Definition("victim", "llm", "read_note"), nullptr);
  // One list larger than the whole budget: not kept, nobody evicted.
  obs_.reset();
  registry_ = std::make_unique<metrics::Registry>();
  obs_ = std::make_unique<Observer>(
      cache_.get(), &clock_, registry_.get(),
      ObserverOptions{.max_tool_principals = 100, .max_tool_bytes = 4096});
  (void)Chat("victim", Function("read_note", "Read a note."), "", "", "", "");
  (void)Chat("flood", Function("huge", std::string(8192, 'y')), "", "", "", "");
  EXPECT_EQ(obs_->Definition("flood", "llm", "huge"), nullptr);
  EXPECT_NE(obs_->Definition("victim", "llm", "read_note"), nullptr);
  EXPECT_EQ(obs_->tool_principals(), 1u);
}

}  // namespace
}  // namespace toolcache::llm
