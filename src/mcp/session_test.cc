// Session behaviour against a scripted in-process upstream: the test plays
// the server by reading what the session sends it and answering with
// OnServerLine. End-to-end tests with the real npm servers live in
// tests/e2e_mcp.sh.
#include "src/mcp/session.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "toolcache/classifier.h"
#include "toolcache/config.h"
#include "toolcache/tool_cache.h"

namespace toolcache::mcp {
namespace {

using nlohmann::json;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

class Recorder final : public SessionOutput {
 public:
  void ToClient(std::string_view line) override {
    to_client.emplace_back(line);
  }
  void ToServer(std::string_view line) override {
    to_server.emplace_back(line);
  }
  std::vector<std::string> to_client;
  std::vector<std::string> to_server;
};

constexpr const char* kToolsList =
    R"({"jsonrpc":"2.0","id":"tl","result":{"tools":[)"
    R"({"name":"read_file","description":"Read a file","annotations":{"readOnlyHint":true,"openWorldHint":false}},)"
    R"({"name":"write_file","description":"Write a file","annotations":{"readOnlyHint":false}},)"
    R"({"name":"list_dir","description":"List a directory","annotations":{"readOnlyHint":true,"openWorldHint":false}},)"
    R"({"name":"web_search","description":"Search the web","annotations":{"readOnlyHint":true,"openWorldHint":true}},)"
    R"({"name":"bash","description":"Show things","annotations":{"readOnlyHint":true,"openWorldHint":false}})"
    R"(]}})";

std::string Call(const std::string& id, const std::string& tool,
                 const std::string& args, const std::string& extra = "") {
  return R"({"jsonrpc":"2.0","id":)" + id +
         R"(,"method":"tools/call","params":{"name":")" + tool +
         R"(","arguments":)" + args + extra + "}}";
}

std::string Result(const std::string& id, const std::string& result) {
  return R"({"jsonrpc":"2.0","id":)" + id + R"(,"result":)" + result + "}";
}

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override { Build(Config()); }

  void Build(Config config) {
    config.policy = "lru";  // deterministic admission for these tests
    auto made = NewToolCache(config, &clock_);
    ASSERT_TRUE(made.ok()) << made.status().message();
    cache_ = std::move(*made);
    out_ = Recorder();
    session_ =
        std::make_unique<Session>(SessionOptions{.server = "srv", .scope = ""},
                                  cache_.get(), &clock_, &out_);
    session_->OnClientLine(
        R"({"jsonrpc":"2.0","id":"tl","method":"tools/list"})");
    session_->OnServerLine(kToolsList);
    out_.to_client.clear();
    out_.to_server.clear();
  }

  // Client sends `call`; if it reaches the server, the server answers
  // `result` for `id`. Returns what the client received.
  std::string RoundTrip(const std::string& id, const std::string& tool,
                        const std::string& args, const std::string& result) {
    size_t sent = out_.to_server.size();
    size_t got = out_.to_client.size();
    session_->OnClientLine(Call(id, tool, args));
    if (out_.to_server.size() > sent) {
      clock_.Advance(0.25);
      session_->OnServerLine(Result(id, result));
    }
    EXPECT_EQ(out_.to_client.size(), got + 1);
    return out_.to_client.empty() ? "" : out_.to_client.back();
  }

  size_t ServerCalls(const std::string& tool) const {
    size_t n = 0;
    for (const std::string& l : out_.to_server) {
      json j = json::parse(l);
      if (j.value("method", "") == "tools/call" &&
          j["params"]["name"] == tool) {
        ++n;
      }
    }
    return n;
  }

  ManualClock clock_{1000};
  std::unique_ptr<ToolCache> cache_;
  Recorder out_;
  std::unique_ptr<Session> session_;
};

constexpr const char* kFileResult =
    R"({"content":[{"type":"text","text":"caf\u00e9 1.0"}],"structuredContent":{"n":1.0}})";

TEST_F(SessionTest, ForwardsUninterpretedMessagesByteForByte) {
  std::vector<std::string> client = {
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2099-01-01","x-unknown":{"a" : 1.0}}})",
      R"( {"jsonrpc":"2.0","method":"notifications/initialized"} )",
      R"({"jsonrpc":"2.0","id":"s1","result":{"roots":[]},"_meta":{"k":1}})",
      R"({"jsonrpc":"2.0","id":9,"method":"server/discover"})",
      R"([{"jsonrpc":"2.0","id":3,"method":"ping"}])",
  };
  for (const std::string& l : client) session_->OnClientLine(l);
  EXPECT_EQ(out_.to_server, client);
  EXPECT_EQ(session_->protocol_version(), "2099-01-01");
  std::vector<std::string> server = {
      R"({"jsonrpc":"2.0","id":"s1","method":"roots/list"})",
      R"({"jsonrpc":"2.0","id":2,"method":"sampling/createMessage","params":{}})",
      R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}})",
      R"({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2099-01-01" }})",
      R"({"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"no"}})",
  };
  for (const std::string& l : server) session_->OnServerLine(l);
  EXPECT_EQ(out_.to_client, server);
  EXPECT_EQ(session_->in_flight(), 0u);
}

TEST_F(SessionTest, RepeatedReadIsServedFromCacheWithItsOwnId) {
  std::string first =
      RoundTrip("1", "read_file", R"({"path":"/a"})", kFileResult);
  EXPECT_EQ(first, Result("1", kFileResult));  // the server's exact bytes
  std::string second =
      RoundTrip(R"("two")", "read_file", R"({ "path" : "/a" })", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 1u);
  json j = json::parse(second);
  EXPECT_EQ(j["id"], "two");
  EXPECT_EQ(j["result"]["_meta"]["toolcache/cache"]["hit"], true);
  // Content bytes are identical to the stored result: only _meta was added.
  EXPECT_THAT(
      second,
      HasSubstr(
          R"("content":[{"type":"text","text":"caf\u00e9 1.0"}],"structuredContent":{"n":1.0})"));
  ToolCacheStats s = cache_->Stats();
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.misses, 1u);
  EXPECT_DOUBLE_EQ(s.latency_saved_seconds, 0.25);
}

TEST_F(SessionTest, MetaAndOtherFieldsNeverChangeTheKey) {
  RoundTrip("1", "read_file", R"({"path":"/a","b":[1,2]})", kFileResult);
  session_->OnClientLine(
      Call("2", "read_file",
           R"({"b":[1.0,2],"path":"/a","_meta":{"progressToken":7}})",
           R"(,"_meta":{"progressToken":8})"));
  EXPECT_EQ(ServerCalls("read_file"), 1u);
  EXPECT_EQ(json::parse(out_.to_client.back())["id"], 2);
}

TEST(BuildHitResponseTest, SplicesProvenanceIntoExistingOrNewMeta) {
  EXPECT_EQ(
      BuildHitResponse("5", R"({"content":[]})", 1.5),
      R"({"jsonrpc":"2.0","id":5,"result":{"_meta":{"toolcache/cache":{"hit":true,"ageSeconds":1.500}},"content":[]}})");
  EXPECT_EQ(
      BuildHitResponse("5", R"({"_meta":{"a":1},"content":[]})", 0),
      R"({"jsonrpc":"2.0","id":5,"result":{"_meta":{"toolcache/cache":{"hit":true,"ageSeconds":0.000},"a":1},"content":[]}})");
  EXPECT_EQ(
      BuildHitResponse("\"x\"", R"({"_meta":{ }})", 0),
      R"({"jsonrpc":"2.0","id":"x","result":{"_meta":{"toolcache/cache":{"hit":true,"ageSeconds":0.000} }}})");
  EXPECT_EQ(
      BuildHitResponse("1", "{}", 0),
      R"({"jsonrpc":"2.0","id":1,"result":{"_meta":{"toolcache/cache":{"hit":true,"ageSeconds":0.000}}}})");
}

TEST(BuildHitResponseTest, NeverSplicesIntoAStringOrAnArrayElement) {
  // Issue 27.6: the splice went after the first '{' of the stored bytes.
  for (std::string_view stored :
       {R"("a{b")", R"([{"x":1}])", "7", "null", R"(  "}{" )"}) {
    const std::string out = BuildHitResponse("3", stored, 0);
    json j = json::parse(out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << stored << " -> " << out;
    EXPECT_EQ(j["result"], json::parse(stored)) << out;
  }
  EXPECT_EQ(
      BuildHitResponse("1", R"( {"content":["{"]})", 0),
      R"({"jsonrpc":"2.0","id":1,"result": {"_meta":{"toolcache/cache":{"hit":true,"ageSeconds":0.000}},"content":["{"]}})");
}

TEST_F(SessionTest, WriteInvalidatesAndTheNextReadSeesIt) {
  RoundTrip("1", "read_file", R"({"path":"/a"})", kFileResult);
  RoundTrip("2", "read_file", R"({"path":"/a"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 1u);
  RoundTrip("3", "write_file", R"({"path":"/a","content":"new"})",
            R"({"content":[{"type":"text","text":"ok"}]})");
  std::string after =
      RoundTrip("4", "read_file", R"({"path":"/a"})",
                R"({"content":[{"type":"text","text":"new"}]})");
  EXPECT_EQ(ServerCalls("read_file"), 2u);
  EXPECT_THAT(after, HasSubstr("new"));
}

TEST_F(SessionTest, ReadOverlappingAWriteIsAnsweredButNotStored) {
  session_->OnClientLine(Call("1", "read_file", R"({"path":"/a"})"));
  session_->OnClientLine(
      Call("2", "write_file", R"({"path":"/a","content":"x"})"));
  session_->OnServerLine(Result("1", kFileResult));  // may predate the write
  session_->OnServerLine(Result("2", R"({"content":[]})"));
  ASSERT_EQ(out_.to_client.size(), 2u);
  RoundTrip("3", "read_file", R"({"path":"/a"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 2u);
}

TEST_F(SessionTest, ErrorResultsAreNeverCached) {
  RoundTrip("1", "read_file", R"({"path":"/x"})",
            R"({"content":[{"type":"text","text":"ENOENT"}],"isError":true})");
  RoundTrip("2", "read_file", R"({"path":"/x"})",
            R"({"content":[{"type":"text","text":"ENOENT"}],"isError":true})");
  EXPECT_EQ(ServerCalls("read_file"), 2u);
  session_->OnClientLine(Call("3", "read_file", R"({"path":"/y"})"));
  session_->OnServerLine(
      R"({"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"boom"}})");
  RoundTrip("4", "read_file", R"({"path":"/y"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 4u);
}

TEST_F(SessionTest, TaskAugmentedCallsAndIncompleteResultsBypass) {
  session_->OnClientLine(
      Call("1", "read_file", R"({"path":"/a"})", R"(,"task":{"ttl":1000})"));
  session_->OnServerLine(
      Result("1", R"({"task":{"taskId":"t1","status":"working"}})"));
  RoundTrip("2", "read_file", R"({"path":"/a"})",
            R"({"task":{"taskId":"t2","status":"working"}})");
  RoundTrip("3", "read_file", R"({"path":"/a"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 3u);
  EXPECT_EQ(cache_->Stats().bypasses.at("incomplete_result"), 1u);
}

TEST_F(SessionTest, HardExcludedToolIsNeverCachedDespiteAnnotations) {
  RoundTrip("1", "bash", "{}", kFileResult);
  RoundTrip("2", "bash", "{}", kFileResult);
  EXPECT_EQ(ServerCalls("bash"), 2u);
  EXPECT_EQ(cache_->Stats().bypasses.at("hard_excluded"), 2u);
}

TEST_F(SessionTest, OpenWorldReadNeedsAnOperatorTtl) {
  RoundTrip("1", "web_search", R"({"q":"x"})", kFileResult);
  RoundTrip("2", "web_search", R"({"q":"x"})", kFileResult);
  EXPECT_EQ(ServerCalls("web_search"), 2u);
  Config config;
  config.per_tool_ttl["web_search"] = 600;
  Build(config);
  RoundTrip("1", "web_search", R"({"q":"x"})", kFileResult);
  RoundTrip("2", "web_search", R"({"q":"x"})", kFileResult);
  EXPECT_EQ(ServerCalls("web_search"), 1u);
}

TEST_F(SessionTest, ExpiredEntryGoesUpstreamAgain) {
  Config config;
  config.per_tool_ttl["read_file"] = 120;
  Build(config);
  RoundTrip("1", "read_file", R"({"path":"/a"})", kFileResult);
  clock_.Advance(100);
  RoundTrip("2", "read_file", R"({"path":"/a"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 1u);
  clock_.Advance(30);
  RoundTrip("3", "read_file", R"({"path":"/a"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 2u);
}

TEST_F(SessionTest, SingleFlightAnswersEachWaiterWithItsOwnId) {
  session_->OnClientLine(Call("1", "read_file", R"({"path":"/a"})"));
  session_->OnClientLine(Call(R"("b")", "read_file", R"({"path":"/a"})"));
  session_->OnClientLine(Call("3", "read_file", R"({"path":"/a"})"));
  EXPECT_EQ(ServerCalls("read_file"), 1u);
  EXPECT_EQ(session_->in_flight(), 3u);
  session_->OnServerLine(Result("1", kFileResult));
  ASSERT_EQ(out_.to_client.size(), 3u);
  EXPECT_EQ(out_.to_client[0], Result("1", kFileResult));
  EXPECT_EQ(out_.to_client[1], Result(R"("b")", kFileResult));
  EXPECT_EQ(out_.to_client[2], Result("3", kFileResult));
  EXPECT_EQ(session_->in_flight(), 0u);
  EXPECT_EQ(cache_->Stats().coalesced, 2u);
}

constexpr const char* kSampling =
    R"({"jsonrpc":"2.0","id":"srv-1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":10}})";
constexpr const char* kElicitation =
    R"({"jsonrpc":"2.0","id":"srv-2","method":"elicitation/create","params":{"message":"Delete?","requestedSchema":{"type":"object","properties":{}}}})";

TEST_F(SessionTest, ACallDuringWhichTheServerAskedTheClientIsNotStored) {
  // stdio names no call: both calls in flight may hold the user's answer.
  session_->OnClientLine(Call("1", "read_file", R"({"path":"/a"})"));
  session_->OnClientLine(Call("2", "read_file", R"({"path":"/b"})"));
  session_->OnServerLine(kElicitation);
  EXPECT_EQ(out_.to_client.back(), kElicitation) << "forwarded as is";
  session_->OnClientLine(
      R"({"jsonrpc":"2.0","id":"srv-2","result":{"action":"accept","content":{}}})");
  session_->OnServerLine(Result("1", kFileResult));
  session_->OnServerLine(Result("2", kFileResult));
  EXPECT_EQ(out_.to_client.back(), Result("2", kFileResult));
  // The next identical calls go to the server, whose request reaches the
  // client again.
  RoundTrip("3", "read_file", R"({"path":"/a"})", kFileResult);
  RoundTrip("4", "read_file", R"({"path":"/b"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 4u);
  // Sampling too.
  session_->OnClientLine(Call("5", "list_dir", R"({"path":"/d"})"));
  session_->OnServerLine(kSampling);
  session_->OnServerLine(Result("5", kFileResult));
  RoundTrip("6", "list_dir", R"({"path":"/d"})", kFileResult);
  EXPECT_EQ(ServerCalls("list_dir"), 2u);
  EXPECT_EQ(cache_->Stats().bypasses.at("server_requested_input"), 3u);
}

TEST_F(SessionTest, AServerRequestConcernsOnlyCallsInFlightWhenItArrives) {
  // Before any call, and after the call's answer: it concerns no call.
  session_->OnServerLine(kSampling);
  RoundTrip("1", "read_file", R"({"path":"/a"})", kFileResult);
  session_->OnServerLine(kElicitation);
  EXPECT_THAT(RoundTrip("2", "read_file", R"({"path":"/a"})", kFileResult),
              HasSubstr(R"("hit":true)"));
  // ping asks the client nothing.
  session_->OnClientLine(Call("3", "read_file", R"({"path":"/p"})"));
  session_->OnServerLine(R"({"jsonrpc":"2.0","id":"srv-3","method":"ping"})");
  session_->OnServerLine(Result("3", kFileResult));
  EXPECT_THAT(RoundTrip("4", "read_file", R"({"path":"/p"})", kFileResult),
              HasSubstr(R"("hit":true)"));
  EXPECT_FALSE(cache_->Stats().bypasses.contains("server_requested_input"));
}

TEST_F(SessionTest, OnACallsOwnStreamAServerRequestConcernsThatCallAlone) {
  // Streamable HTTP: a request on call 1's response stream is part of it.
  session_->OnClientLine(Call("1", "read_file", R"({"path":"/a"})"));
  session_->OnClientLine(Call("2", "read_file", R"({"path":"/b"})"));
  session_->OnServerLineOnStream(kSampling, "1");
  session_->OnServerLineOnStream(Result("1", kFileResult), "1");
  session_->OnServerLineOnStream(Result("2", kFileResult), "2");
  EXPECT_THAT(RoundTrip("3", "read_file", R"({"path":"/b"})", kFileResult),
              HasSubstr(R"("hit":true)"));
  RoundTrip("4", "read_file", R"({"path":"/a"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 3u);
  // The GET stream names no request: every call in flight.
  session_->OnClientLine(Call("5", "list_dir", R"({"path":"/x"})"));
  session_->OnServerLineOnStream(kElicitation, "");
  session_->OnServerLine(Result("5", kFileResult));
  RoundTrip("6", "list_dir", R"({"path":"/x"})", kFileResult);
  EXPECT_EQ(ServerCalls("list_dir"), 2u);
}

TEST_F(SessionTest, AFollowerNeverGetsAnAnswerMadeWithTheLeadersInput) {
  session_->OnClientLine(Call("1", "read_file", R"({"path":"/a"})"));
  session_->OnClientLine(Call("2", "read_file", R"({"path":"/a"})"));
  ASSERT_EQ(ServerCalls("read_file"), 1u) << "2 joined 1's flight";
  session_->OnServerLine(kElicitation);
  // The follower asks the server itself, at once; a new identical call
  // joins nothing.
  EXPECT_EQ(ServerCalls("read_file"), 2u);
  session_->OnClientLine(Call("3", "read_file", R"({"path":"/a"})"));
  EXPECT_EQ(ServerCalls("read_file"), 3u);
  const std::string a = R"({"content":[{"type":"text","text":"A"}]})";
  const std::string b = R"({"content":[{"type":"text","text":"B"}]})";
  const std::string c = R"({"content":[{"type":"text","text":"C"}]})";
  session_->OnServerLine(Result("1", a));
  session_->OnServerLine(Result("2", b));
  session_->OnServerLine(Result("3", c));
  EXPECT_THAT(out_.to_client, ElementsAre(kElicitation, Result("1", a),
                                          Result("2", b), Result("3", c)));
  EXPECT_EQ(session_->in_flight(), 0u);
}

TEST_F(SessionTest, ALeaderCancelledForItsFollowersIsCancelledWhenTheyLeave) {
  session_->OnClientLine(Call("1", "read_file", R"({"path":"/a"})"));
  session_->OnClientLine(Call("2", "read_file", R"({"path":"/a"})"));
  const std::string cancel =
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})";
  session_->OnClientLine(cancel);
  ASSERT_EQ(out_.to_server.size(), 1u) << "held back: 2 still waits";
  session_->OnServerLine(kSampling);
  // 2 goes upstream on its own; nobody waits on 1 any more.
  EXPECT_THAT(out_.to_server,
              ElementsAre(Call("1", "read_file", R"({"path":"/a"})"), cancel,
                          Call("2", "read_file", R"({"path":"/a"})")));
  session_->OnServerLine(Result("1", kFileResult));  // dropped: cancelled
  session_->OnServerLine(Result("2", kFileResult));
  EXPECT_THAT(out_.to_client, ElementsAre(kSampling, Result("2", kFileResult)));
}

TEST_F(SessionTest, CancelledWaiterIsDroppedWithoutCancellingTheUpstreamCall) {
  session_->OnClientLine(Call("1", "read_file", R"({"path":"/a"})"));
  session_->OnClientLine(Call("2", "read_file", R"({"path":"/a"})"));
  // The follower cancels: the server never saw id 2, nothing is forwarded.
  session_->OnClientLine(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}})");
  EXPECT_EQ(out_.to_server.size(), 1u);
  // The leader cancels while nobody else waits... but first a third joins.
  session_->OnClientLine(Call("3", "read_file", R"({"path":"/a"})"));
  session_->OnClientLine(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})");
  EXPECT_EQ(out_.to_server.size(), 1u) << "id 3 still waits: not forwarded";
  session_->OnServerLine(Result("1", kFileResult));
  ASSERT_EQ(out_.to_client.size(), 1u);
  EXPECT_EQ(out_.to_client[0], Result("3", kFileResult));
}

TEST_F(SessionTest, CancelledLoneLeaderForwardsAndDetachesTheFlight) {
  session_->OnClientLine(Call("1", "read_file", R"({"path":"/a"})"));
  std::string cancel =
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"x"}})";
  session_->OnClientLine(cancel);
  EXPECT_EQ(out_.to_server.back(), cancel);
  // An identical new call does not join the cancelled one.
  session_->OnClientLine(Call("2", "read_file", R"({"path":"/a"})"));
  EXPECT_EQ(ServerCalls("read_file"), 2u);
  session_->OnServerLine(Result("1", kFileResult));  // late: dropped
  EXPECT_THAT(out_.to_client, IsEmpty());
  session_->OnServerLine(Result("2", kFileResult));
  EXPECT_THAT(out_.to_client, ElementsAre(Result("2", kFileResult)));
}

// A cancelled write is never answered by an SDK server, yet it may still
// land: a read that ran meanwhile must not be served after it, and the
// session must not wait for the answer forever (attackK finding 2).
TEST_F(SessionTest, ACancelledWriteKeepsTheServerUncachedUntilItsDeadline) {
  const std::string v1 = R"({"content":[{"type":"text","text":"v1"}]})";
  const std::string v2 = R"({"content":[{"type":"text","text":"v2"}]})";
  RoundTrip("1", "read_file", R"({"path":"/a"})", v1);
  session_->OnClientLine(
      Call("2", "write_file", R"({"path":"/a","content":"v2"})"));
  // A read while the write runs: answered before it landed, and stored.
  RoundTrip("3", "read_file", R"({"path":"/a"})", v1);
  session_->OnClientLine(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}})");
  EXPECT_THAT(out_.to_server.back(), HasSubstr("notifications/cancelled"));
  EXPECT_EQ(session_->in_flight(), 1u);
  // The write lands in the server, which never answers it: reads go to the
  // server (not the read that raced it) and nothing is stored meanwhile.
  EXPECT_THAT(RoundTrip("4", "read_file", R"({"path":"/a"})", v2),
              HasSubstr("v2"));
  EXPECT_THAT(RoundTrip("5", "read_file", R"({"path":"/a"})", v2),
              Not(HasSubstr("toolcache/cache")));
  EXPECT_EQ(ServerCalls("read_file"), 4u);
  EXPECT_GE(cache_->Stats().bypasses["write_cancelled"], 2u);
  // Past the deadline the write is no longer waited for: its flight is
  // completed (the server invalidated once more) and caching resumes.
  clock_.Advance(SessionOptions().cancelled_grace_seconds + 1);
  RoundTrip("6", "read_file", R"({"path":"/a"})", v2);
  EXPECT_THAT(RoundTrip("7", "read_file", R"({"path":"/a"})", v2),
              HasSubstr("toolcache/cache"));
  EXPECT_EQ(ServerCalls("read_file"), 5u);
  // A late answer to the cancelled write is dropped, and retires the record.
  const size_t got = out_.to_client.size();
  session_->OnServerLine(Result("2", R"({"content":[]})"));
  EXPECT_EQ(out_.to_client.size(), got);
  EXPECT_EQ(session_->in_flight(), 0u);
}

// A cancelled read the server never answers stops being waited for after
// the deadline (before, its flight stayed for the session's life); its id
// stays reserved upstream, so a late answer never reaches a new request the
// client sent under the same id (found by fuzz_replay_mcp_session).
TEST_F(SessionTest, ACancelledReadNeverAnsweredIsRetiredAndItsIdKept) {
  session_->OnClientLine(Call("1", "read_file", R"({"path":"/a"})"));
  session_->OnClientLine(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})");
  // A cancelled read is no write: caching goes on meanwhile.
  RoundTrip("2", "read_file", R"({"path":"/b"})", kFileResult);
  EXPECT_THAT(RoundTrip("3", "read_file", R"({"path":"/b"})", kFileResult),
              HasSubstr("toolcache/cache"));
  clock_.Advance(SessionOptions().cancelled_grace_seconds + 1);
  // The client reuses id 1: it goes upstream under a proxy id, and the
  // server's late answer to the cancelled request is not given to it.
  session_->OnClientLine(Call("1", "read_file", R"({"path":"/a"})"));
  const json resent = json::parse(out_.to_server.back());
  ASSERT_NE(resent["id"], 1);
  const size_t got = out_.to_client.size();
  session_->OnServerLine(
      Result("1", R"({"content":[{"type":"text","text":"old"}]})"));
  EXPECT_EQ(out_.to_client.size(), got);
  session_->OnServerLine(Result(resent["id"].dump(), kFileResult));
  ASSERT_EQ(out_.to_client.size(), got + 1);
  EXPECT_EQ(out_.to_client.back(), Result("1", kFileResult));
  EXPECT_EQ(session_->in_flight(), 0u);
  // The cancelled flight was completed: the new read was stored.
  EXPECT_THAT(RoundTrip("4", "read_file", R"({"path":"/a"})", kFileResult),
              HasSubstr("toolcache/cache"));
}

TEST_F(SessionTest, MalformedClientLineGetsParseErrorAndSessionContinues) {
  session_->OnClientLine("this is { not json");
  ASSERT_EQ(out_.to_client.size(), 1u);
  json e = json::parse(out_.to_client[0]);
  EXPECT_TRUE(e["id"].is_null());
  EXPECT_EQ(e["error"]["code"], kParseError);
  EXPECT_THAT(e["error"]["message"].get<std::string>(), HasSubstr("byte"));
  EXPECT_THAT(out_.to_server, IsEmpty());
  RoundTrip("1", "read_file", R"({"path":"/a"})", kFileResult);
  EXPECT_EQ(session_->counters().client_parse_errors, 1u);
}

TEST_F(SessionTest, OverlongClientLineGetsParseErrorUnderItsOwnId) {
  IdSniffer request;
  request.Feed(
      R"({"jsonrpc":"2.0","id":"big","method":"tools/call","params":)");
  request.Feed(std::string(100, ' '));
  session_->OnClientLineTooLong(request, 100, 10);
  json e = json::parse(out_.to_client.at(0));
  EXPECT_EQ(e["id"], "big");
  EXPECT_EQ(e["error"]["code"], kParseError);
  EXPECT_THAT(e["error"]["message"].get<std::string>(), HasSubstr("100 bytes"));
  IdSniffer junk;
  junk.Feed("xxxxxxxx");
  session_->OnClientLineTooLong(junk, 100, 10);
  EXPECT_TRUE(json::parse(out_.to_client.at(1))["id"].is_null());
  EXPECT_THAT(out_.to_server, IsEmpty());
}

TEST_F(SessionTest, InvalidUtf8FromClientGetsParseErrorAndIsNotForwarded) {
  session_->OnClientLine(
      "{\"jsonrpc\":\"2.0\",\"id\":\"u8\",\"method\":\"tools/call\","
      "\"params\":{\"name\":\"read_file\",\"arguments\":{\"path\":\"\xFF\"}}}");
  EXPECT_THAT(out_.to_server, IsEmpty());
  ASSERT_EQ(out_.to_client.size(), 1u);
  json e = json::parse(out_.to_client[0]);
  EXPECT_EQ(e["id"], "u8");
  EXPECT_EQ(e["error"]["code"], kParseError);
  EXPECT_THAT(e["error"]["message"].get<std::string>(),
              HasSubstr("invalid UTF-8"));
  RoundTrip("1", "read_file", R"({"path":"/a"})", kFileResult);  // continues
  EXPECT_EQ(session_->counters().client_parse_errors, 1u);
}

TEST_F(SessionTest, MalformedClientAnswerToAServerRequestIsReportedToBoth) {
  // The server asked roots/list as "s1"; the client's answer is broken.
  session_->OnServerLine(
      R"({"jsonrpc":"2.0","id":"s1","method":"roots/list"})");
  out_.to_client.clear();
  session_->OnClientLine(R"({"jsonrpc":"2.0","id":"s1","result":{"roots":[}})");
  ASSERT_EQ(out_.to_server.size(), 1u) << "the server must not wait forever";
  json to_server = json::parse(out_.to_server[0]);
  EXPECT_EQ(to_server["id"], "s1");
  EXPECT_EQ(to_server["error"]["code"], kInternalError);
  ASSERT_EQ(out_.to_client.size(), 1u);
  EXPECT_TRUE(json::parse(out_.to_client[0])["id"].is_null());
}

TEST_F(SessionTest, MalformedServerLineIsDroppedNotForwarded) {
  session_->OnServerLine("Server started on stdio");
  EXPECT_THAT(out_.to_client, IsEmpty());
  EXPECT_EQ(session_->counters().server_parse_errors, 1u);
}

// The proxy's own error messages are quoted by the core toolkit: RFC 8785
// short escapes (a newline is \n, not \u000a) and ill-formed UTF-8 in a
// cause repaired to U+FFFD, so the line stays valid JSON.
TEST_F(SessionTest, ErrorMessagesAreQuotedByTheJsonToolkit) {
  session_->OnClientLine(Call("1", "read_file", R"({"path":"/a"})"));
  session_->FailInFlight("status 1\nstderr: \"bad\" \xFF\x01");
  ASSERT_EQ(out_.to_client.size(), 1u);
  const std::string& line = out_.to_client[0];
  EXPECT_THAT(line, HasSubstr(R"(status 1\nstderr: \"bad\" )"
                              "\xEF\xBF\xBD"  // U+FFFD, written verbatim
                              R"(\u0001)"))
      << line;
  EXPECT_THAT(line, Not(HasSubstr("u000a")));
  json j = json::parse(line);  // throws on ill-formed UTF-8
  EXPECT_THAT(j["error"]["message"].get<std::string>(),
              HasSubstr("status 1\nstderr: \"bad\" \xEF\xBF\xBD\x01"));
}

TEST_F(SessionTest, ServerDeathFailsEveryInFlightRequest) {
  session_->OnClientLine(Call("1", "read_file", R"({"path":"/a"})"));
  session_->OnClientLine(Call(R"("w")", "read_file", R"({"path":"/a"})"));
  session_->OnClientLine(
      R"({"jsonrpc":"2.0","id":7,"method":"resources/list"})");
  session_->FailInFlight("server killed by signal 9");
  ASSERT_EQ(out_.to_client.size(), 3u);
  std::vector<json> ids;
  for (const std::string& l : out_.to_client) {
    json j = json::parse(l);
    EXPECT_EQ(j["error"]["code"], kConnectionClosed);
    EXPECT_THAT(j["error"]["message"].get<std::string>(),
                HasSubstr("signal 9"));
    ids.push_back(j["id"]);
  }
  EXPECT_THAT(ids,
              ::testing::UnorderedElementsAre(json(1), json("w"), json(7)));
  EXPECT_EQ(session_->in_flight(), 0u);
}

// The session's own tools/list requests (internal ids) since `from`.
std::vector<json> InternalListRequests(const Recorder& out, size_t from = 0) {
  std::vector<json> found;
  for (size_t i = from; i < out.to_server.size(); ++i) {
    json j = json::parse(out.to_server[i]);
    if (j.value("method", "") == "tools/list" && j["id"].is_string() &&
        j["id"].get<std::string>().starts_with("toolcache-refresh-")) {
      found.push_back(j);
    }
  }
  return found;
}

TEST_F(SessionTest, ToolListChangeRefreshesTheToolsBeforeCachingAgain) {
  RoundTrip("1", "read_file", R"({"path":"/a"})", kFileResult);
  std::string changed =
      R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})";
  session_->OnServerLine(changed);
  EXPECT_EQ(out_.to_client.back(), changed);
  EXPECT_TRUE(session_->refreshing_tools());
  std::vector<json> asked = InternalListRequests(out_);
  ASSERT_EQ(asked.size(), 1u) << "the proxy lists the tools itself";
  EXPECT_FALSE(asked[0].contains("params"));
  // Until the new list is in, nothing is served or stored (the entry was
  // also invalidated).
  RoundTrip("2", "read_file", R"({"path":"/a"})", kFileResult);
  RoundTrip("3", "read_file", R"({"path":"/a"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 3u);
  EXPECT_EQ(cache_->Stats().bypasses.at("tools_refreshing"), 2u);
  // Page 1 (with a cursor): read_file is now a write per its annotations.
  size_t client_lines = out_.to_client.size();
  size_t server_lines = out_.to_server.size();
  session_->OnServerLine(
      R"({"jsonrpc":"2.0","id":)" + asked[0]["id"].dump() +
      R"(,"result":{"tools":[{"name":"read_file","annotations":{"readOnlyHint":false}}],"nextCursor":"c2"}})");
  std::vector<json> page2 = InternalListRequests(out_, server_lines);
  ASSERT_EQ(page2.size(), 1u);
  EXPECT_EQ(page2[0]["params"]["cursor"], "c2");
  EXPECT_TRUE(session_->refreshing_tools());
  session_->OnServerLine(
      R"({"jsonrpc":"2.0","id":)" + page2[0]["id"].dump() +
      R"(,"result":{"tools":[{"name":"list_dir","annotations":{"readOnlyHint":true,"openWorldHint":false}}]}})");
  EXPECT_FALSE(session_->refreshing_tools());
  EXPECT_EQ(out_.to_client.size(), client_lines)
      << "replies to the proxy's own requests never reach the client";
  // read_file, named like a read, is not cached: the new list says it
  // writes. list_dir (page 2) is cached again.
  RoundTrip("4", "read_file", R"({"path":"/a"})", kFileResult);
  RoundTrip("5", "read_file", R"({"path":"/a"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 5u);
  RoundTrip("6", "list_dir", R"({"path":"/d"})", kFileResult);
  RoundTrip("7", "list_dir", R"({"path":"/d"})", kFileResult);
  EXPECT_EQ(ServerCalls("list_dir"), 1u);
}

TEST(SessionRefreshTest, RefreshWaitsUntilTheClientFinishedInitializing) {
  ManualClock clock{0};
  Config config;
  config.policy = "lru";
  auto cache = NewToolCache(config, &clock);
  ASSERT_TRUE(cache.ok());
  Recorder out;
  Session s({.server = "srv"}, cache->get(), &clock, &out);
  s.OnClientLine(
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{}})");
  s.OnServerLine(
      R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
  EXPECT_TRUE(InternalListRequests(out).empty()) << "too early to ask";
  EXPECT_TRUE(s.refreshing_tools());
  s.OnClientLine(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  ASSERT_EQ(InternalListRequests(out).size(), 1u);
  EXPECT_EQ(json::parse(out.to_server.back())["method"], "tools/list");
}

TEST_F(SessionTest, FailedToolListRefreshKeepsTheServerUncached) {
  session_->OnServerLine(
      R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
  std::vector<json> asked = InternalListRequests(out_);
  ASSERT_EQ(asked.size(), 1u);
  size_t client_lines = out_.to_client.size();
  session_->OnServerLine(R"({"jsonrpc":"2.0","id":)" + asked[0]["id"].dump() +
                         R"(,"error":{"code":-32603,"message":"busy"}})");
  EXPECT_EQ(out_.to_client.size(), client_lines);
  EXPECT_TRUE(session_->refreshing_tools());
  RoundTrip("1", "list_dir", R"({"path":"/d"})", kFileResult);
  RoundTrip("2", "list_dir", R"({"path":"/d"})", kFileResult);
  EXPECT_EQ(ServerCalls("list_dir"), 2u);
  // A client's own listing meanwhile does not end the refresh.
  session_->OnClientLine(R"({"jsonrpc":"2.0","id":"l","method":"tools/list"})");
  session_->OnServerLine(kToolsList);
  RoundTrip("3", "list_dir", R"({"path":"/d"})", kFileResult);
  RoundTrip("4", "list_dir", R"({"path":"/d"})", kFileResult);
  EXPECT_EQ(ServerCalls("list_dir"), 4u);
}

TEST_F(SessionTest, ResourceUpdateInvalidates) {
  RoundTrip("1", "read_file", R"({"path":"/a"})", kFileResult);
  RoundTrip("2", "read_file", R"({"path":"/a"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 1u);
  session_->OnServerLine(
      R"({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///a"}})");
  RoundTrip("3", "read_file", R"({"path":"/a"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 2u);
}

TEST_F(SessionTest, ResourceScopeInvalidatesOnlyOverlappingPaths) {
  Config config;
  config.invalidation = InvalidationScope::kResource;
  Build(config);
  RoundTrip("1", "read_file", R"({"path":"/d/a.txt"})", kFileResult);
  RoundTrip("2", "read_file", R"({"path":"/e/b.txt"})", kFileResult);
  RoundTrip("3", "list_dir", R"({"path":"/d"})", kFileResult);
  RoundTrip("4", "write_file", R"({"path":"/d/a.txt","content":"x"})",
            R"({"content":[]})");
  RoundTrip("5", "read_file", R"({"path":"/e/b.txt"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 2u) << "/e/b.txt stayed cached";
  RoundTrip("6", "read_file", R"({"path":"/d/a.txt"})", kFileResult);
  RoundTrip("7", "list_dir", R"({"path":"/d"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 3u);
  EXPECT_EQ(ServerCalls("list_dir"), 2u) << "the parent directory listing";
}

TEST_F(SessionTest, ResourceScopeMatchesFileUrisAndNormalizedPaths) {
  Config config;
  config.invalidation = InvalidationScope::kResource;
  Build(config);
  RoundTrip("1", "read_file", R"({"path":"/d/x"})", kFileResult);
  RoundTrip("2", "read_file", R"({"path":"/d/../d/y"})", kFileResult);
  RoundTrip("3", "read_file", R"({"path":"/e/z"})", kFileResult);
  session_->OnServerLine(
      R"({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///d/x"}})");
  RoundTrip("4", "read_file", R"({"path":"/d/x"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 4u) << "file:///d/x is /d/x";
  RoundTrip("5", "write_file", R"({"path":"/d/y","content":"x"})",
            R"({"content":[]})");
  RoundTrip("6", "read_file", R"({"path":"/d/../d/y"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 5u) << "/d/../d/y is /d/y";
  RoundTrip("7", "read_file", R"({"path":"/e/z"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 5u) << "/e/z untouched so far";
  // A URI that names no local path could be anything: the whole server.
  session_->OnServerLine(
      R"({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"db://tables/t1"}})");
  RoundTrip("8", "read_file", R"({"path":"/e/z"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 6u);
}

TEST_F(SessionTest, TaskAugmentedWriteKeepsTheServerUncachedUntilItsTaskEnds) {
  RoundTrip("1", "read_file", R"({"path":"/a"})", kFileResult);
  session_->OnClientLine(
      Call("2", "write_file", R"({"path":"/a"})", R"(,"task":{"ttl":60000})"));
  std::string handle = Result(
      "2", R"({"task":{"taskId":"t-9","status":"working","ttl":60000}})");
  session_->OnServerLine(handle);
  EXPECT_EQ(out_.to_client.back(), handle);
  // The write goes on: reads are neither served nor stored.
  RoundTrip("3", "read_file", R"({"path":"/a"})", kFileResult);
  RoundTrip("4", "read_file", R"({"path":"/a"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 3u);
  EXPECT_EQ(cache_->Stats().bypasses.at("task_in_progress"), 2u);
  // A non-terminal status changes nothing; a terminal one ends the task.
  session_->OnServerLine(
      R"({"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t-9","status":"input_required"}})");
  RoundTrip("5", "read_file", R"({"path":"/a"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 4u);
  session_->OnServerLine(
      R"({"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t-9","status":"completed"}})");
  RoundTrip("6", "read_file", R"({"path":"/a"})", kFileResult);
  RoundTrip("7", "read_file", R"({"path":"/a"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 5u) << "cached again after the task";
}

TEST_F(SessionTest, TaskEndIsAlsoSeenInTasksGetAndTasksResultAnswers) {
  session_->OnClientLine(
      Call("1", "write_file", R"({"path":"/a"})", R"(,"task":{})"));
  session_->OnServerLine(
      Result("1", R"({"task":{"taskId":"A","status":"working"}})"));
  session_->OnClientLine(
      R"({"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"A"}})");
  session_->OnServerLine(Result("2", R"({"taskId":"A","status":"working"})"));
  RoundTrip("3", "read_file", R"({"path":"/a"})", kFileResult);
  RoundTrip("4", "read_file", R"({"path":"/a"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 2u) << "still running";
  session_->OnClientLine(
      R"({"jsonrpc":"2.0","id":5,"method":"tasks/result","params":{"taskId":"A"}})");
  session_->OnServerLine(Result("5", kFileResult));
  RoundTrip("6", "read_file", R"({"path":"/a"})", kFileResult);
  RoundTrip("7", "read_file", R"({"path":"/a"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 3u);
  EXPECT_EQ(session_->in_flight(), 0u);
}

TEST_F(SessionTest, OverlongServerAnswerRetiresItsRequestAndItsFlight) {
  // Leader 1 and waiter 2 share a flight; the answer is too long to parse.
  session_->OnClientLine(Call("1", "read_file", R"({"path":"/big"})"));
  session_->OnClientLine(Call("2", "read_file", R"({"path":"/big"})"));
  ASSERT_EQ(ServerCalls("read_file"), 1u);
  IdSniffer streamed;
  streamed.Feed(R"({"result":{"content":[{"type":"text","text":")");
  streamed.Feed(std::string(5000, 'z'));
  streamed.Feed(R"("}]},"jsonrpc":"2.0","id":1})");
  session_->OnServerLineTooLong(streamed, 5060, 2048);
  // The waiter's own request went upstream (the streamed bytes were not
  // kept); the leader's request is answered and no longer in flight.
  EXPECT_EQ(ServerCalls("read_file"), 2u);
  EXPECT_EQ(json::parse(out_.to_server.back())["id"], 2);
  EXPECT_EQ(session_->in_flight(), 1u);
  // An identical call gets an answer (it neither hangs on the old flight
  // nor is served from cache).
  session_->OnClientLine(Call("3", "read_file", R"({"path":"/big"})"));
  EXPECT_EQ(ServerCalls("read_file"), 3u);
  session_->OnServerLine(Result("3", kFileResult));
  session_->OnServerLine(Result("2", kFileResult));
  ASSERT_EQ(out_.to_client.size(), 2u);
  EXPECT_EQ(out_.to_client[0], Result("3", kFileResult));
  EXPECT_EQ(out_.to_client[1], Result("2", kFileResult));
  // Nothing is left to fail twice when the server goes away.
  session_->FailInFlight("server exited with status 0");
  EXPECT_EQ(out_.to_client.size(), 2u);
  EXPECT_EQ(session_->counters().server_lines_too_long, 1u);
}

TEST_F(SessionTest,
       MalformedServerAnswerToAPendingRequestIsAnsweredWithAnError) {
  session_->OnClientLine(Call("1", "read_file", R"({"path":"/a"})"));
  session_->OnClientLine(Call(R"("w")", "read_file", R"({"path":"/a"})"));
  session_->OnServerLine(
      R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text",)");
  ASSERT_EQ(out_.to_client.size(), 2u);
  std::vector<json> ids;
  for (const std::string& l : out_.to_client) {
    json e = json::parse(l);
    EXPECT_EQ(e["error"]["code"], kInternalError);
    EXPECT_THAT(e["error"]["message"].get<std::string>(),
                HasSubstr("not valid JSON"));
    ids.push_back(e["id"]);
  }
  EXPECT_THAT(ids, ::testing::UnorderedElementsAre(json(1), json("w")));
  EXPECT_EQ(session_->in_flight(), 0u);
  EXPECT_EQ(session_->counters().server_parse_errors, 1u);
}

TEST_F(SessionTest, InvalidUtf8FromServerIsRepairedForwardedAndNotCached) {
  std::string bad =
      "{\"content\":[{\"type\":\"text\",\"text\":\"caf\xE9\"}]}";  // Latin-1
  RoundTrip("1", "read_file", R"({"path":"/l1"})", bad);
  json j = json::parse(out_.to_client.back());
  EXPECT_EQ(j["result"]["content"][0]["text"], "caf\xEF\xBF\xBD");
  RoundTrip("2", "read_file", R"({"path":"/l1"})", bad);
  EXPECT_EQ(ServerCalls("read_file"), 2u) << "a repaired result is not stored";
  EXPECT_EQ(session_->counters().server_parse_errors, 2u);
}

TEST_F(SessionTest, LastWaiterLeavingSendsTheHeldBackCancellationUpstream) {
  session_->OnClientLine(Call("1", "read_file", R"({"path":"/a"})"));
  session_->OnClientLine(Call("2", "read_file", R"({"path":"/a"})"));
  std::string cancel_leader =
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})";
  session_->OnClientLine(cancel_leader);
  EXPECT_EQ(out_.to_server.size(), 1u) << "id 2 still waits";
  session_->OnClientLine(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}})");
  ASSERT_EQ(out_.to_server.size(), 2u);
  EXPECT_EQ(out_.to_server[1], cancel_leader)
      << "nobody waits any more: the server is told";
  session_->OnServerLine(Result("1", kFileResult));  // late: nobody gets it
  EXPECT_THAT(out_.to_client, IsEmpty());
}

TEST_F(SessionTest, PassThroughWithoutCacheForwardsToolCalls) {
  Session plain({.server = "srv"}, nullptr, &clock_, &out_);
  std::string c = Call("1", "read_file", R"({"path":"/a"})");
  plain.OnClientLine(c);
  plain.OnClientLine(c);
  EXPECT_EQ(ServerCalls("read_file"), 2u);
}

// --- issue 10: no false hits, no hangs, nothing stale ---------------------

TEST_F(SessionTest, IntegersBeyondADoubleAreDifferentCalls) {
  RoundTrip("1", "read_file", R"({"n":9007199254740993})",
            R"({"content":[{"type":"text","text":"odd"}]})");
  const std::string second =
      RoundTrip("2", "read_file", R"({"n":9007199254740992})",
                R"({"content":[{"type":"text","text":"even"}]})");
  EXPECT_EQ(ServerCalls("read_file"), 2u) << "a Python server tells them apart";
  EXPECT_THAT(second, HasSubstr("even"));
  // Another spelling of the first integer is the same call.
  const std::string third =
      RoundTrip("3", "read_file", R"({"n":9.007199254740993e15})", "{}");
  EXPECT_EQ(ServerCalls("read_file"), 2u);
  EXPECT_THAT(third, HasSubstr("odd"));
}

// For each request that a server may leave unanswered or answer under
// another id, an identical call with a plain id must not wait on it.
TEST_F(SessionTest, NoCallerWaitsOnACallTheServerMayNotAnswerUnderItsId) {
  const std::vector<std::string> leaders = {
      // Ids JSON-RPC / MCP do not allow, or that are echoed differently.
      Call("1.5", "read_file", R"({"path":"/a"})"),
      Call("null", "read_file", R"({"path":"/a"})"),
      Call("true", "read_file", R"({"path":"/a"})"),
      Call("9007199254740993", "read_file", R"({"path":"/a"})"),
      Call(R"({"x":1})", "read_file", R"({"path":"/a"})"),
      Call("1.0", "read_file", R"({"path":"/a"})"),
      // Envelopes a strict server drops.
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/a"}},"extra":1})",
      R"({"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/a"}}})",
      R"({"id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/a"}}})",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/a"},"unknown":1}})",
  };
  for (const std::string& leader : leaders) {
    Build(Config());
    session_->OnClientLine(leader);
    ASSERT_EQ(out_.to_server.size(), 1u) << leader;
    EXPECT_EQ(out_.to_server[0], leader) << "forwarded untouched";
    // The server never answers it. An identical plain call is still
    // answered, as on a direct connection.
    session_->OnClientLine(Call(R"("plain")", "read_file", R"({"path":"/a"})"));
    ASSERT_EQ(out_.to_server.size(), 2u) << "joined the flight of " << leader;
    session_->OnServerLine(Result(R"("plain")", kFileResult));
    ASSERT_EQ(out_.to_client.size(), 1u) << leader;
    EXPECT_EQ(out_.to_client[0], Result(R"("plain")", kFileResult));
    EXPECT_EQ(cache_->Stats().coalesced, 0u) << leader;
    const auto& by = cache_->Stats().bypasses;
    EXPECT_EQ(by.count("nonstandard_id") + by.count("nonstandard_request"), 1u)
        << leader;
  }
}

TEST_F(SessionTest, ACallWithAnOddIdNeverJoinsNorIsServed) {
  RoundTrip("1", "read_file", R"({"path":"/a"})", kFileResult);
  // Stored: a plain id is served, an odd one goes to the server (which
  // decides what to do with it, as on a direct connection).
  RoundTrip("2", "read_file", R"({"path":"/a"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 1u);
  session_->OnClientLine(Call("2.5", "read_file", R"({"path":"/a"})"));
  EXPECT_EQ(ServerCalls("read_file"), 2u);
  EXPECT_EQ(out_.to_server.back(),
            Call("2.5", "read_file", R"({"path":"/a"})"));
  // Its answer, if any, reaches the client as the server sent it.
  session_->OnServerLine(Result("2.5", kFileResult));
  EXPECT_EQ(out_.to_client.back(), Result("2.5", kFileResult));
  // And it never joins a flight either.
  session_->OnClientLine(Call("3", "read_file", R"({"path":"/b"})"));
  session_->OnClientLine(Call("3.5", "read_file", R"({"path":"/b"})"));
  EXPECT_EQ(ServerCalls("read_file"), 4u);
  EXPECT_EQ(cache_->Stats().bypasses.at("nonstandard_id"), 2u);
}

TEST_F(SessionTest, AClientIdEqualToTheProxysOwnGetsItsOwnAnswer) {
  session_->OnServerLine(
      R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
  std::vector<json> asked = InternalListRequests(out_);
  ASSERT_EQ(asked.size(), 1u);
  const std::string internal_id = asked[0]["id"].dump();
  ASSERT_EQ(internal_id, R"("toolcache-refresh-1")");
  // The client picks the same id for its own tools/list.
  const std::string mine = R"({"jsonrpc":"2.0","id":)" + internal_id +
                           R"(,"method":"tools/list","params":{}})";
  session_->OnClientLine(mine);
  json sent = json::parse(out_.to_server.back());
  ASSERT_NE(sent["id"].dump(), internal_id) << "sent under another id";
  EXPECT_EQ(out_.to_server.back(), R"({"jsonrpc":"2.0","id":)" +
                                       sent["id"].dump() +
                                       R"(,"method":"tools/list","params":{}})")
      << "only the id differs";
  EXPECT_EQ(session_->counters().remapped_ids, 1u);
  // The server answers both; the client gets exactly its own answer, under
  // its own id, and the proxy's listing completes.
  const std::string client_tools =
      R"({"tools":[{"name":"client_view","annotations":{"readOnlyHint":true}}]})";
  session_->OnServerLine(Result(sent["id"].dump(), client_tools));
  session_->OnServerLine(
      std::string(kToolsList)
          .replace(std::string(kToolsList).find(R"("tl")"), 4, internal_id));
  ASSERT_EQ(out_.to_client.size(), 2u);  // list_changed + the answer
  EXPECT_EQ(out_.to_client[1], Result(internal_id, client_tools));
  EXPECT_FALSE(session_->refreshing_tools()) << "the refresh got its list";
  EXPECT_EQ(session_->in_flight(), 0u);
  // Caching works again with the refreshed list.
  RoundTrip("7", "read_file", R"({"path":"/a"})", kFileResult);
  RoundTrip("8", "read_file", R"({"path":"/a"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 1u);
}

TEST_F(SessionTest, AReusedIdInFlightNeverMixesUpAnswers) {
  // Leader 1 and waiter 2 share a flight for /a; the client then reuses id 1
  // for /b (MCP forbids it; a direct connection would still answer both).
  session_->OnClientLine(Call("1", "read_file", R"({"path":"/a"})"));
  session_->OnClientLine(Call("2", "read_file", R"({"path":"/a"})"));
  session_->OnClientLine(Call("1", "read_file", R"({"path":"/b"})"));
  ASSERT_EQ(ServerCalls("read_file"), 2u);
  json dup = json::parse(out_.to_server.back());
  ASSERT_NE(dup["id"], 1) << "the second id 1 must not reach the server as 1";
  const std::string b = R"({"content":[{"type":"text","text":"B"}]})";
  // The server answers /b first.
  session_->OnServerLine(Result(dup["id"].dump(), b));
  session_->OnServerLine(Result("1", kFileResult));
  ASSERT_EQ(out_.to_client.size(), 3u);
  EXPECT_EQ(out_.to_client[0], Result("1", b));
  EXPECT_EQ(out_.to_client[1], Result("1", kFileResult));
  EXPECT_EQ(out_.to_client[2], Result("2", kFileResult)) << "/a, not /b";
  // /a's entry holds /a's content.
  EXPECT_THAT(RoundTrip("3", "read_file", R"({"path":"/a"})", "{}"),
              HasSubstr("caf"));
  EXPECT_EQ(ServerCalls("read_file"), 2u);
}

TEST_F(SessionTest, IdsThatOneServerEchoesAlikeAreNeverInFlightTogether) {
  // A JavaScript server echoes 9007199254740993 as 9007199254740992: while
  // the first is in flight, the second goes upstream under a proxy id.
  session_->OnClientLine(
      R"({"jsonrpc":"2.0","id":9007199254740993,"method":"ping"})");
  session_->OnClientLine(
      R"({"jsonrpc":"2.0","id":9007199254740992,"method":"ping"})");
  json second = json::parse(out_.to_server.back());
  ASSERT_TRUE(second["id"].is_string());
  session_->OnServerLine(
      R"({"jsonrpc":"2.0","id":9007199254740992,"result":{"a":1}})");
  session_->OnServerLine(Result(second["id"].dump(), R"({"b":2})"));
  ASSERT_EQ(out_.to_client.size(), 2u);
  // The first answer is the server's own line; the second is re-addressed.
  EXPECT_EQ(out_.to_client[0],
            R"({"jsonrpc":"2.0","id":9007199254740992,"result":{"a":1}})");
  EXPECT_EQ(out_.to_client[1], Result("9007199254740992", R"({"b":2})"));
}

TEST_F(SessionTest, CancellingARemappedRequestNamesTheIdTheServerSaw) {
  session_->OnClientLine(R"({"jsonrpc":"2.0","id":"r","method":"ping"})");
  session_->OnClientLine(Call(R"("r")", "read_file", R"({"path":"/a"})"));
  json sent = json::parse(out_.to_server.back());
  ASSERT_NE(sent["id"], "r");
  session_->OnClientLine(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r"}})");
  EXPECT_EQ(
      out_.to_server.back(),
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":)" +
          sent["id"].dump() + "}}");
}

// Regression (fuzz/corpus/mcp_session/crash-cancel-proxy-id): a late
// cancellation of a client request whose id is the proxy id another
// request went upstream under cancelled that other request.
TEST_F(SessionTest, CancellingAnIdThatIsOnlyAProxyIdCancelsNothing) {
  session_->OnClientLine(R"({"jsonrpc":"2.0","id":"r","method":"ping"})");
  session_->OnClientLine(Call(R"("r")", "read_file", R"({"path":"/a"})"));
  const json sent = json::parse(out_.to_server.back());
  ASSERT_NE(sent["id"], "r");
  const size_t to_server = out_.to_server.size();
  // The client cancels a (finished) request of its own that used the id
  // the proxy chose: nothing goes upstream, nothing is cancelled.
  session_->OnClientLine(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":)" +
      sent["id"].dump() + "}}");
  EXPECT_EQ(out_.to_server.size(), to_server);
  session_->OnServerLine(Result(sent["id"].dump(), kFileResult));
  ASSERT_EQ(out_.to_client.size(), 1u);
  EXPECT_EQ(json::parse(out_.to_client[0])["id"], "r");
}

TEST_F(SessionTest, OverlongAnswerToARemappedRequestStillAnswersItsId) {
  session_->OnClientLine(R"({"jsonrpc":"2.0","id":"r","method":"ping"})");
  session_->OnClientLine(Call(R"("r")", "read_file", R"({"path":"/big"})"));
  json sent = json::parse(out_.to_server.back());
  IdSniffer streamed;
  streamed.Feed(R"({"jsonrpc":"2.0","result":{"content":[]},"id":)" +
                sent["id"].dump() + "}");
  session_->OnServerLineTooLong(streamed, 5000, 2048);
  ASSERT_EQ(out_.to_client.size(), 1u);
  json e = json::parse(out_.to_client[0]);
  EXPECT_EQ(e["id"], "r");
  EXPECT_EQ(e["error"]["code"], kInternalError);
}

TEST_F(SessionTest, ARootsChangeInvalidatesAndStoresNothingUntilApplied) {
  RoundTrip("1", "read_file", R"({"path":"/old/a"})", kFileResult);
  RoundTrip("2", "read_file", R"({"path":"/old/a"})", kFileResult);
  ASSERT_EQ(ServerCalls("read_file"), 1u);
  // The client's roots change; the server asks for them and gets new ones.
  session_->OnClientLine(
      R"({"jsonrpc":"2.0","method":"notifications/roots/list_changed"})");
  session_->OnServerLine(R"({"jsonrpc":"2.0","id":0,"method":"roots/list"})");
  session_->OnClientLine(
      R"({"jsonrpc":"2.0","id":0,"result":{"roots":[{"uri":"file:///new"}]}})");
  // Until the server has had time to apply them, nothing is served or
  // stored (its answers may still reflect the old roots).
  RoundTrip("3", "read_file", R"({"path":"/old/a"})", kFileResult);
  RoundTrip("4", "read_file", R"({"path":"/old/a"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 3u);
  EXPECT_EQ(cache_->Stats().bypasses.at("roots_changing"), 2u);
  clock_.Advance(2.5);
  const std::string denied =
      R"({"content":[{"type":"text","text":"Access denied"}],"isError":true})";
  EXPECT_THAT(RoundTrip("5", "read_file", R"({"path":"/old/a"})", denied),
              HasSubstr("Access denied"));
  RoundTrip("6", "read_file", R"({"path":"/new/b"})", kFileResult);
  RoundTrip("7", "read_file", R"({"path":"/new/b"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 5u) << "cached again";
  // The same roots answered again change nothing.
  session_->OnServerLine(R"({"jsonrpc":"2.0","id":1,"method":"roots/list"})");
  session_->OnClientLine(
      R"({"jsonrpc":"2.0","id":1,"result":{"roots":[{"uri":"file:///new"}]}})");
  RoundTrip("8", "read_file", R"({"path":"/new/b"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 5u);
}

// Roots key the entries (session 18, attackV finding 5): a client is served
// only what was stored under the roots it gave its server.
class RootsSessionTest : public SessionTest {
 protected:
  struct Client {
    Recorder out;
    std::unique_ptr<Session> session;
  };
  // A session whose client declares roots (or not) and, when `roots` is
  // set, answers the server's roots/list with them.
  std::unique_ptr<Client> Connect(bool declares,
                                  std::optional<std::string> roots) {
    auto c = std::make_unique<Client>();
    c->session =
        std::make_unique<Session>(SessionOptions{.server = "srv", .scope = ""},
                                  cache_.get(), &clock_, &c->out);
    const std::string caps =
        declares ? R"({"roots":{"listChanged":true}})" : "{}";
    c->session->OnClientLine(
        R"({"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":)" +
        caps + "}}");
    c->session->OnServerLine(Result(R"("i")", "{}"));
    c->session->OnClientLine(
        R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    if (roots) {
      c->session->OnServerLine(
          R"({"jsonrpc":"2.0","id":"r","method":"roots/list"})");
      c->session->OnClientLine(
          R"({"jsonrpc":"2.0","id":"r","result":{"roots":[{"uri":"file://)" +
          *roots + R"("}]}})");
    }
    return c;
  }
  // The client reads `path`; the server (if asked) answers `text`.
  std::string Read(Client& c, const std::string& id, const std::string& path,
                   const std::string& text) {
    const size_t got = c.out.to_client.size();
    const size_t sent = c.out.to_server.size();
    c.session->OnClientLine(
        Call(id, "read_file", R"({"path":")" + path + R"("})"));
    if (c.out.to_server.size() > sent) {
      c.session->OnServerLine(Result(
          id, R"({"content":[{"type":"text","text":")" + text + R"("}]})"));
    }
    EXPECT_EQ(c.out.to_client.size(), got + 1);
    return c.out.to_client.back();
  }
};

TEST_F(RootsSessionTest, ClientsWithOtherRootsNeverShareAnEntry) {
  auto a = Connect(true, "/w/a");
  auto b = Connect(true, "/w/b");
  auto a2 = Connect(true, "/w/a");
  clock_.Advance(2.5);  // past the roots settle time
  (void)Read(*a, "1", "/w/a/secret", "SECRET_OF_A");
  ASSERT_THAT(Read(*a, "2", "/w/a/secret", "SECRET_OF_A"),
              HasSubstr("toolcache/cache"));
  // B's server would refuse: B gets its own server's answer.
  EXPECT_THAT(Read(*b, "3", "/w/a/secret", "Access denied"),
              AllOf(HasSubstr("Access denied"), Not(HasSubstr("SECRET"))));
  // The same roots share.
  EXPECT_THAT(Read(*a2, "4", "/w/a/secret", "x"), HasSubstr("SECRET_OF_A"));
  EXPECT_TRUE(a2->out.to_server.size() == 3u) << "initialized, roots, no call";
}

TEST_F(RootsSessionTest, CallsBypassWhileTheServerWaitsForTheRoots) {
  auto a = Connect(true, std::nullopt);
  a->session->OnServerLine(
      R"({"jsonrpc":"2.0","id":"r","method":"roots/list"})");
  (void)Read(*a, "1", "/w/a/f", "v1");
  (void)Read(*a, "2", "/w/a/f", "v1");
  EXPECT_EQ(cache_->Stats().bypasses.at("roots_unknown"), 2u);
  a->session->OnClientLine(
      R"({"jsonrpc":"2.0","id":"r","result":{"roots":[{"uri":"file:///w/a"}]}})");
  clock_.Advance(2.5);
  (void)Read(*a, "3", "/w/a/f", "v1");
  EXPECT_THAT(Read(*a, "4", "/w/a/f", "v1"), HasSubstr("toolcache/cache"));
}

TEST_F(RootsSessionTest, ClientsWithoutRootsKeepTheirScope) {
  auto a = Connect(false, std::nullopt);
  auto b = Connect(false, std::nullopt);
  auto c = Connect(true, std::nullopt);  // declared, never asked
  auto d = Connect(true, std::nullopt);
  (void)Read(*a, "1", "/f", "v1");
  EXPECT_THAT(Read(*b, "2", "/f", "v2"), HasSubstr("toolcache/cache"));
  EXPECT_THAT(Read(*c, "3", "/f", "v3"), Not(HasSubstr("toolcache/cache")));
  EXPECT_THAT(Read(*d, "4", "/f", "v4"), HasSubstr("v3"));
}

TEST_F(SessionTest, ResourceListChangesAndReinitializeInvalidate) {
  session_->OnClientLine(
      R"({"jsonrpc":"2.0","id":"i1","method":"initialize","params":{}})");
  session_->OnServerLine(Result(R"("i1")", "{}"));
  RoundTrip("1", "read_file", R"({"path":"/a"})", kFileResult);
  RoundTrip("2", "read_file", R"({"path":"/a"})", kFileResult);
  ASSERT_EQ(ServerCalls("read_file"), 1u)
      << "the first initialize is no change";
  session_->OnServerLine(
      R"({"jsonrpc":"2.0","method":"notifications/resources/list_changed"})");
  RoundTrip("3", "read_file", R"({"path":"/a"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 2u);
  RoundTrip("4", "read_file", R"({"path":"/a"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 2u);
  // A read in flight across a second initialize is answered, not stored.
  session_->OnClientLine(Call("5", "read_file", R"({"path":"/a"})"));
  EXPECT_EQ(ServerCalls("read_file"), 2u) << "served";
  session_->OnClientLine(Call("6", "read_file", R"({"path":"/c"})"));
  session_->OnClientLine(
      R"({"jsonrpc":"2.0","id":"i2","method":"initialize","params":{}})");
  session_->OnServerLine(Result("6", kFileResult));
  session_->OnServerLine(Result(R"("i2")", "{}"));
  RoundTrip("7", "read_file", R"({"path":"/a"})", kFileResult);
  RoundTrip("8", "read_file", R"({"path":"/c"})", kFileResult);
  EXPECT_EQ(ServerCalls("read_file"), 5u);
}

// --- MCP 2026-07-28 (era.h): per-request envelopes, declared caching ---

constexpr const char* kEnvelope =
    R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
    R"("io.modelcontextprotocol/clientCapabilities":{"roots":{}},)"
    R"("io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}})";

std::string ModernRequest(const std::string& id, const std::string& method,
                          const std::string& params = "",
                          const std::string& envelope = kEnvelope) {
  std::string p = params;
  if (!envelope.empty()) p += (p.empty() ? "" : ",") + envelope;
  return R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":")" + method +
         R"(","params":{)" + p + "}}";
}

std::string ModernCall(const std::string& id, const std::string& tool,
                       const std::string& args,
                       const std::string& envelope = kEnvelope,
                       const std::string& extra = "") {
  return ModernRequest(
      id, "tools/call",
      R"("name":")" + tool + R"(","arguments":)" + args + extra, envelope);
}

constexpr const char* kModernTools =
    R"({"tools":[{"name":"frobnicate","description":"Frobnicate",)"
    R"("inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"openWorldHint":false}}],)"
    R"("resultType":"complete","ttlMs":60000,"cacheScope":"private"})";
constexpr const char* kModernRead =
    R"({"content":[{"type":"text","text":"v1"}],"resultType":"complete"})";

class ModernSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Config config;
    config.policy = "lru";
    auto made = NewToolCache(config, &clock_);
    ASSERT_TRUE(made.ok()) << made.status().message();
    cache_ = std::move(*made);
    session_ = NewSession("", &out_);
  }
  std::unique_ptr<Session> NewSession(const std::string& scope, Recorder* out) {
    return std::make_unique<Session>(
        SessionOptions{.server = "srv", .scope = scope}, cache_.get(), &clock_,
        out);
  }
  // The client sends `line`; when it reaches the server, the server answers
  // `result` (a result object, or an error object when it starts with
  // "error:"). Returns what the client got.
  std::string Exchange(Session& s, Recorder& out, const std::string& line,
                       const std::string& result) {
    const size_t sent = out.to_server.size();
    const size_t got = out.to_client.size();
    s.OnClientLine(line);
    if (out.to_server.size() > sent) {
      const json req = json::parse(out.to_server.back());
      const std::string id = req["id"].dump();
      if (result.rfind("error:", 0) == 0) {
        s.OnServerLine(R"({"jsonrpc":"2.0","id":)" + id + R"(,"error":)" +
                       result.substr(6) + "}");
      } else {
        s.OnServerLine(Result(id, result));
      }
    }
    EXPECT_EQ(out.to_client.size(), got + 1) << line;
    return out.to_client.size() > got ? out.to_client.back() : "";
  }
  std::string Exchange(const std::string& line, const std::string& result) {
    return Exchange(*session_, out_, line, result);
  }
  size_t Sent(const Recorder& out, const std::string& method) const {
    size_t n = 0;
    for (const std::string& l : out.to_server) {
      if (json::parse(l).value("method", "") == method) ++n;
    }
    return n;
  }
  void LearnList() {
    (void)Exchange(ModernRequest("\"tl\"", "tools/list"), kModernTools);
  }

  ManualClock clock_{1000};
  std::unique_ptr<ToolCache> cache_;
  Recorder out_;
  std::unique_ptr<Session> session_;
};

TEST_F(ModernSessionTest, AModernRequestSetsTheEra) {
  EXPECT_EQ(session_->era(), Era::kUnknown);
  LearnList();
  EXPECT_EQ(session_->era(), Era::kModern);
}

// The issue's reproduction: a call the server rejects for its envelope
// (no clientCapabilities) is not answered from cache; the client gets the
// server's -32602.
TEST_F(ModernSessionTest, AnEnvelopeTheServerRejectsReachesTheServer) {
  LearnList();
  std::string got =
      Exchange(ModernCall("1", "frobnicate", R"({"a":1})"), kModernRead);
  got = Exchange(ModernCall("2", "frobnicate", R"({"a":1})"), kModernRead);
  ASSERT_THAT(got, HasSubstr("toolcache/cache")) << "the read is cached";
  const std::string rejected =
      R"(error:{"code":-32602,"message":"Invalid _meta envelope"})";
  const std::string no_caps =
      R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"})";
  got =
      Exchange(ModernCall("3", "frobnicate", R"({"a":1})", no_caps), rejected);
  EXPECT_THAT(got, HasSubstr("-32602"));
  EXPECT_EQ(Sent(out_, "tools/call"), 2u);
  // No envelope at all in a modern session: the server rejects it too.
  got = Exchange(ModernCall("4", "frobnicate", R"({"a":1})", ""), rejected);
  EXPECT_THAT(got, HasSubstr("-32602"));
  EXPECT_EQ(Sent(out_, "tools/call"), 3u);
  const ToolCacheStats st = cache_->Stats();
  EXPECT_EQ(st.bypasses.at("invalid_envelope"), 2u);
  EXPECT_EQ(st.hits, 1u);
}

TEST_F(ModernSessionTest, TheKeyHoldsCapabilitiesButNotVolatileMeta) {
  LearnList();
  (void)Exchange(ModernCall("1", "frobnicate", "{}"), kModernRead);
  // Another progress token and clientInfo: the same key.
  const std::string same =
      R"("_meta":{"progressToken":9,"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
      R"("io.modelcontextprotocol/clientCapabilities":{"roots":{}},)"
      R"("io.modelcontextprotocol/clientInfo":{"name":"other","version":"2"}})";
  EXPECT_THAT(Exchange(ModernCall("2", "frobnicate", "{}", same), kModernRead),
              HasSubstr("toolcache/cache"));
  // Other capabilities: what the server answers may differ.
  const std::string other =
      R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
      R"("io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}})";
  EXPECT_THAT(Exchange(ModernCall("3", "frobnicate", "{}", other), kModernRead),
              Not(HasSubstr("toolcache/cache")));
  EXPECT_EQ(Sent(out_, "tools/call"), 2u);
}

TEST_F(ModernSessionTest, InputRequiredIsNeverStoredNorARetryServed) {
  LearnList();
  const std::string interim =
      R"({"resultType":"input_required","inputRequests":{"c":{"method":"elicitation/create","params":{}}},"requestState":"s1"})";
  (void)Exchange(ModernCall("1", "frobnicate", "{}"), interim);
  std::string got = Exchange(ModernCall("2", "frobnicate", "{}"), interim);
  EXPECT_THAT(got, Not(HasSubstr("toolcache/cache")));
  // The retry carries the answers and the state: forwarded, not stored.
  const std::string retry =
      R"(,"inputResponses":{"c":{"action":"accept"}},"requestState":"s1")";
  (void)Exchange(ModernCall("3", "frobnicate", "{}", kEnvelope, retry),
                 kModernRead);
  (void)Exchange(ModernCall("4", "frobnicate", "{}", kEnvelope, retry),
                 kModernRead);
  EXPECT_EQ(Sent(out_, "tools/call"), 4u);
  // A complete answer to the plain request is stored; a retry is still
  // never served from it.
  (void)Exchange(ModernCall("5", "frobnicate", "{}"), kModernRead);
  EXPECT_THAT(Exchange(ModernCall("6", "frobnicate", "{}"), kModernRead),
              HasSubstr("toolcache/cache"));
  EXPECT_THAT(Exchange(ModernCall("7", "frobnicate", "{}", kEnvelope, retry),
                       kModernRead),
              Not(HasSubstr("toolcache/cache")));
  EXPECT_EQ(cache_->Stats().bypasses.at("multi_round_trip"), 3u);
}

TEST_F(ModernSessionTest, ListsAndReadsAreCachedPerTheServersHints) {
  const std::string list = ModernRequest("\"a\"", "tools/list");
  (void)Exchange(list, kModernTools);
  std::string got =
      Exchange(ModernRequest("\"b\"", "tools/list"), kModernTools);
  EXPECT_EQ(Sent(out_, "tools/list"), 1u);
  // Byte-identical result under the client's id, with provenance.
  const json j = json::parse(got);
  EXPECT_EQ(j["id"], "b");
  EXPECT_EQ(j["result"]["ttlMs"], 60000);
  EXPECT_EQ(j["result"]["cacheScope"], "private");
  EXPECT_TRUE(j["result"]["_meta"]["toolcache/cache"]["hit"]);
  // Another cursor is another request.
  (void)Exchange(ModernRequest("\"c\"", "tools/list", R"("cursor":"p2")"),
                 kModernTools);
  EXPECT_EQ(Sent(out_, "tools/list"), 2u);
  // After ttlMs the list is fetched again.
  clock_.Advance(61);
  (void)Exchange(ModernRequest("\"d\"", "tools/list"), kModernTools);
  EXPECT_EQ(Sent(out_, "tools/list"), 3u);
  // ttlMs 0: never stored.
  const std::string stale =
      R"({"contents":[],"resultType":"complete","ttlMs":0,"cacheScope":"public"})";
  const std::string read =
      ModernRequest("\"r\"", "resources/read", R"("uri":"test://x")");
  (void)Exchange(read, stale);
  (void)Exchange(read, stale);
  EXPECT_EQ(Sent(out_, "resources/read"), 2u);
}

TEST_F(ModernSessionTest, LegacyListsAreNeverCached) {
  for (int i = 0; i < 2; ++i) {
    (void)Exchange(R"({"jsonrpc":"2.0","id":"l)" + std::to_string(i) +
                       R"(","method":"prompts/list"})",
                   R"({"prompts":[],"ttlMs":60000,"cacheScope":"public"})");
  }
  EXPECT_EQ(Sent(out_, "prompts/list"), 2u);
}

// Tools are learned only from the server's own answers (session 18,
// attackV finding 2): a new session (as after a restart with a shared store)
// asks the server for its first listing instead of serving the stored one,
// and learns the tools from it; its next listing may be served.
TEST_F(ModernSessionTest, ANewSessionLearnsTheToolsFromTheServerNotTheStore) {
  LearnList();
  cache_->LearnTools("srv", {}, /*replace=*/true);
  Recorder out2;
  auto s2 = NewSession("", &out2);
  EXPECT_THAT(
      Exchange(*s2, out2, ModernRequest("\"t2\"", "tools/list"), kModernTools),
      Not(HasSubstr("toolcache/cache")));
  EXPECT_EQ(Sent(out2, "tools/list"), 1u);
  (void)Exchange(*s2, out2, ModernCall("3", "frobnicate", "{}"), kModernRead);
  EXPECT_THAT(
      Exchange(*s2, out2, ModernCall("4", "frobnicate", "{}"), kModernRead),
      HasSubstr("toolcache/cache"));
  EXPECT_THAT(
      Exchange(*s2, out2, ModernRequest("\"t3\"", "tools/list"), kModernTools),
      HasSubstr("toolcache/cache"));
  EXPECT_EQ(Sent(out2, "tools/list"), 1u);
}

// A stored tools/list is served but teaches nothing: the tools stay as the
// server last told them (here: frobnicate became a write).
TEST_F(ModernSessionTest, AStoredToolsListNeverTeachesTheTools) {
  LearnList();
  ToolInfo write{.name = "frobnicate", .description = "Frobnicate"};
  write.annotations = ToolAnnotations{.read_only = false};
  cache_->LearnTools("srv", std::vector<ToolInfo>{write}, /*replace=*/true);
  ASSERT_THAT(Exchange(ModernRequest("\"t2\"", "tools/list"), kModernTools),
              HasSubstr("toolcache/cache"));
  (void)Exchange(ModernCall("3", "frobnicate", "{}"), kModernRead);
  EXPECT_THAT(Exchange(ModernCall("4", "frobnicate", "{}"), kModernRead),
              Not(HasSubstr("toolcache/cache")));
  EXPECT_EQ(Sent(out_, "tools/call"), 2u);
}

TEST_F(ModernSessionTest, PrivateStaysInItsScopePublicIsShared) {
  Recorder out_a, out_b;
  auto a = NewSession("tenant-a", &out_a);
  auto b = NewSession("tenant-b", &out_b);
  const std::string priv =
      R"({"resources":[],"resultType":"complete","ttlMs":60000,"cacheScope":"private"})";
  const std::string pub =
      R"({"contents":[{"uri":"test://p","text":"x"}],"resultType":"complete","ttlMs":60000,"cacheScope":"public"})";
  (void)Exchange(*a, out_a, ModernRequest("1", "resources/list"), priv);
  (void)Exchange(*b, out_b, ModernRequest("1", "resources/list"), priv);
  EXPECT_EQ(Sent(out_b, "resources/list"), 1u) << "private reached tenant-b";
  EXPECT_THAT(Exchange(*a, out_a, ModernRequest("2", "resources/list"), priv),
              HasSubstr("toolcache/cache"));
  const std::string read =
      ModernRequest("3", "resources/read", R"("uri":"test://p")");
  (void)Exchange(*a, out_a, read, pub);
  EXPECT_THAT(Exchange(*b, out_b, read, pub), HasSubstr("toolcache/cache"));
  EXPECT_EQ(Sent(out_b, "resources/read"), 0u);
}

TEST_F(ModernSessionTest, WritesAndNotificationsDropDeclaredEntries) {
  LearnList();
  const std::string read =
      ModernRequest("\"r\"", "resources/read", R"("uri":"test://doc")");
  const std::string doc =
      R"({"contents":[],"resultType":"complete","ttlMs":60000,"cacheScope":"public"})";
  const std::string prompts = ModernRequest("\"p\"", "prompts/list");
  const std::string plist =
      R"({"prompts":[],"resultType":"complete","ttlMs":60000,"cacheScope":"public"})";
  auto cached = [&](const std::string& line, const std::string& result) {
    return Exchange(line, result).find("toolcache/cache") != std::string::npos;
  };
  (void)Exchange(read, doc);
  ASSERT_TRUE(cached(read, doc));
  session_->OnServerLine(
      R"({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://doc"}})");
  EXPECT_FALSE(cached(read, doc)) << "resources/updated kept the read";
  (void)Exchange(prompts, plist);
  ASSERT_TRUE(cached(prompts, plist));
  session_->OnServerLine(
      R"({"jsonrpc":"2.0","method":"notifications/prompts/list_changed"})");
  EXPECT_FALSE(cached(prompts, plist)) << "prompts/list_changed kept the list";
  (void)Exchange(read, doc);
  ASSERT_TRUE(cached(read, doc));
  // A write (an unknown tool is a possible one) drops lists and reads.
  (void)Exchange(ModernCall("9", "delete_everything", "{}"), kModernRead);
  EXPECT_FALSE(cached(read, doc)) << "a write kept the read";
}

TEST_F(ModernSessionTest, TheToolsRefreshCarriesTheEnvelope) {
  LearnList();
  out_.to_server.clear();
  session_->OnServerLine(
      R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
  ASSERT_EQ(out_.to_server.size(), 1u);
  const json refresh = json::parse(out_.to_server[0]);
  EXPECT_EQ(refresh["method"], "tools/list");
  EXPECT_EQ(
      refresh["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
      "2026-07-28");
  EXPECT_TRUE(
      refresh["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
          .is_object());
  // And the cached tools/list is gone.
  (void)Exchange(ModernRequest("\"t9\"", "tools/list"), kModernTools);
  EXPECT_EQ(Sent(out_, "tools/list"), 2u);
}

TEST_F(ModernSessionTest, InitializeMakesTheSessionLegacy) {
  (void)Exchange(
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}})",
      R"({"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}})");
  EXPECT_EQ(session_->era(), Era::kLegacy);
  // A 2025-era server ignores an envelope: no invalid_envelope bypass, and
  // lists stay uncached.
  const std::string no_caps =
      R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"})";
  (void)Exchange(ModernRequest("1", "tools/list", "", no_caps), kModernTools);
  (void)Exchange(ModernRequest("2", "tools/list", "", no_caps), kModernTools);
  EXPECT_EQ(Sent(out_, "tools/list"), 2u);
  EXPECT_FALSE(cache_->Stats().bypasses.contains("invalid_envelope"));
}

TEST_F(ModernSessionTest, ARejectedInitializeKeepsTheEnvelopeChecks) {
  LearnList();
  (void)Exchange(ModernCall("1", "frobnicate", "{}"), kModernRead);
  // A 2026-07-28 server rejects a legacy initialize: the session stays
  // modern, so a call without an envelope is still not answered from cache.
  (void)Exchange(
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}})",
      R"(error:{"code":-32022,"message":"Unsupported protocol version"})");
  EXPECT_EQ(session_->era(), Era::kModern);
  const std::string got =
      Exchange(ModernCall("2", "frobnicate", "{}", ""),
               R"(error:{"code":-32602,"message":"missing envelope"})");
  EXPECT_THAT(got, HasSubstr("-32602"));
}

TEST_F(ModernSessionTest, IdenticalListsInFlightShareOneUpstreamRequest) {
  session_->OnClientLine(ModernRequest("\"x\"", "resources/list"));
  session_->OnClientLine(ModernRequest("\"y\"", "resources/list"));
  ASSERT_EQ(Sent(out_, "resources/list"), 1u) << "the second did not join";
  session_->OnServerLine(Result(
      "\"x\"",
      R"({"resources":[],"resultType":"complete","ttlMs":60000,"cacheScope":"private"})"));
  ASSERT_EQ(out_.to_client.size(), 2u);
  EXPECT_EQ(json::parse(out_.to_client[0])["id"], "x");
  EXPECT_EQ(json::parse(out_.to_client[1])["id"], "y");
  EXPECT_EQ(json::parse(out_.to_client[1])["result"]["ttlMs"], 60000);
  // And a retry never joins: it goes upstream itself.
  session_->OnClientLine(
      ModernRequest("\"z\"", "resources/list", R"("requestState":"s")"));
  EXPECT_EQ(Sent(out_, "resources/list"), 2u);
}

// An input_required answer is the leader's next step: its requestState
// belongs to the leader's exchange (in serve's pooled child, another
// client's). A caller that joined the flight gets no share of it: its own
// request goes to the server.
TEST_F(ModernSessionTest, AnInterimAnswerIsTheLeadersAlone) {
  LearnList();
  session_->OnClientLine(ModernCall("\"a\"", "frobnicate", "{}"));
  session_->OnClientLine(ModernCall("\"b\"", "frobnicate", "{}"));
  ASSERT_EQ(Sent(out_, "tools/call"), 1u) << "the second did not join";
  const size_t got = out_.to_client.size();
  session_->OnServerLine(Result(
      "\"a\"",
      R"({"resultType":"input_required","inputRequests":{"c":{"method":"elicitation/create","params":{}}},"requestState":"state-of-a"})"));
  ASSERT_EQ(out_.to_client.size(), got + 1);
  EXPECT_EQ(json::parse(out_.to_client.back())["id"], "a");
  EXPECT_EQ(Sent(out_, "tools/call"), 2u)
      << "b was not sent to the server itself";
  EXPECT_EQ(json::parse(out_.to_server.back())["id"], "b");
  session_->OnServerLine(Result("\"b\"", kModernRead));
  ASSERT_EQ(out_.to_client.size(), got + 2);
  const json b = json::parse(out_.to_client.back());
  EXPECT_EQ(b["id"], "b");
  EXPECT_THAT(b.dump(), Not(HasSubstr("state-of-a")));
}

}  // namespace
}  // namespace toolcache::mcp
