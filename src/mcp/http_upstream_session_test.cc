// HttpUpstream against a scripted Streamable HTTP endpoint (src/http's
// server): what a remote server can do that the npm reference servers do
// not (expire a session with 404, answer 500, send garbage, accept a
// request with 202) and how each reaches the session. The e2e test
// (tests/e2e_mcp_url.sh) covers a real server.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "src/mcp/http_upstream.h"
#include "src/mcp/json_scan.h"

namespace toolcache::mcp {
namespace {

struct Seen {
  std::string method;  // JSON-RPC method of the POST body, or the HTTP verb
  std::string session;
  std::string protocol;
  std::string last_event_id;
};

class Fixture {
 public:
  using GetHandler = std::function<void(int n, http::Responder&)>;
  // `handler` answers JSON-RPC POSTs (method, request) itself; `get`
  // answers the n-th GET (from 1), 405 when it is not given.
  explicit Fixture(std::function<void(const std::string&, const http::Request&,
                                      http::Responder&)>
                       handler,
                   GetHandler get = nullptr)
      : handler_(std::move(handler)), get_(std::move(get)) {
    auto s = http::NewServer(
        {.port = 0, .threads = 1},
        [this](http::Request req, http::ResponderPtr res) {
          std::string method = req.method;
          if (req.method == "POST") {
            Result<RawMessage> m = ScanMessage(req.body);
            method = m.ok() ? m->method_name : "?";
          }
          int gets = 0;
          {
            std::lock_guard<std::mutex> l(mu_);
            seen_.push_back({method, std::string(req.Header("mcp-session-id")),
                             std::string(req.Header("mcp-protocol-version")),
                             std::string(req.Header("last-event-id"))});
            for (const Seen& s : seen_) gets += s.method == "GET";
          }
          if (req.method == "GET") {
            if (!get_) return res->Send(405, {}, "");
            return get_(gets, *res);
          }
          if (req.method == "DELETE") return res->Send(200, {}, "");
          handler_(method, req, *res);
        });
    EXPECT_TRUE(s.ok());
    server_ = std::move(*s);
    server_thread_ = std::thread([this] { server_->Run(); });
    loop_ = http::NewLoopThread();
    client_ = std::move(*http::NewClient({.response_timeout_seconds = 5}));
    HttpUpstreamOptions o;
    o.endpoint = *ParseMcpEndpoint(
        "http://127.0.0.1:" + std::to_string(server_->port()) + "/mcp");
    Start(o);
  }
  void Start(HttpUpstreamOptions o) {
    http::Post(loop_->loop(), [this, o] {
      up_ = std::make_unique<HttpUpstream>(
          o, client_.get(), loop_->loop(),
          [this](std::string_view m, std::string_view stream_id) {
            std::lock_guard<std::mutex> l(mu_);
            got_.emplace_back(m);
            streams_.emplace_back(stream_id);
          },
          [this](std::string_view why) {
            std::lock_guard<std::mutex> l(mu_);
            gaps_.emplace_back(why);
          });
    });
  }
  ~Fixture() {
    std::promise<void> done;
    http::Post(loop_->loop(), [&] {
      up_.reset();
      done.set_value();
    });
    done.get_future().wait();
    client_->CloseIdle();
    loop_.reset();
    server_->Stop();
    server_thread_.join();
  }
  void Send(std::string line) {
    http::Post(loop_->loop(), [this, line] { up_->Send(line); });
  }
  // Waits until the session got `n` messages; returns them.
  std::vector<std::string> Got(size_t n) {
    for (int i = 0; i < 500; ++i) {
      {
        std::lock_guard<std::mutex> l(mu_);
        if (got_.size() >= n) return got_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::lock_guard<std::mutex> l(mu_);
    return got_;
  }
  // The stream id each message of Got() came with, in the same order.
  std::vector<std::string> Streams() {
    std::lock_guard<std::mutex> l(mu_);
    return streams_;
  }
  std::vector<Seen> seen() {
    std::lock_guard<std::mutex> l(mu_);
    return seen_;
  }
  // Waits (up to 10 s: the GET stream reopens after 1 s, then 2 s) until
  // `n` gaps were reported; returns them.
  std::vector<std::string> Gaps(size_t n) {
    for (int i = 0; i < 1000; ++i) {
      {
        std::lock_guard<std::mutex> l(mu_);
        if (gaps_.size() >= n) return gaps_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::lock_guard<std::mutex> l(mu_);
    return gaps_;
  }
  // The Last-Event-ID of every GET so far, in order ("" = none).
  std::vector<std::string> GetEventIds() {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<std::string> out;
    for (const Seen& s : seen_) {
      if (s.method == "GET") out.push_back(s.last_event_id);
    }
    return out;
  }
  uint16_t port() const { return server_->port(); }

 private:
  std::function<void(const std::string&, const http::Request&,
                     http::Responder&)>
      handler_;
  GetHandler get_;
  std::unique_ptr<http::Server> server_;
  std::thread server_thread_;
  std::unique_ptr<http::LoopThread> loop_;
  std::unique_ptr<http::Client> client_;
  std::unique_ptr<HttpUpstream> up_;  // lives on the loop
  std::mutex mu_;
  std::vector<std::string> got_;      // GUARDED_BY(mu_)
  std::vector<std::string> streams_;  // GUARDED_BY(mu_)
  std::vector<Seen> seen_;            // GUARDED_BY(mu_)
  std::vector<std::string> gaps_;     // GUARDED_BY(mu_)
};

const char* kInit =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
const char* kInitialized =
    R"({"jsonrpc":"2.0","method":"notifications/initialized"})";

std::string IdOf(const std::string& m) {
  Result<RawMessage> r = ScanMessage(m);
  return r.ok() ? std::string(r->id) : "";
}
std::string ErrorCodeOf(const std::string& m) {
  Result<RawMessage> r = ScanMessage(m);
  return r.ok() ? std::string(FindMember(r->error, "code")) : "";
}

void AnswerInitialize(const http::Request& req, http::Responder& res,
                      const std::string& session) {
  Result<RawMessage> m = ScanMessage(req.body);
  res.Send(
      200, {{"content-type", "application/json"}, {"mcp-session-id", session}},
      R"({"jsonrpc":"2.0","id":)" + std::string(m->id) +
          R"(,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}})");
}

TEST(HttpUpstreamTest, ExpiredSessionIsReinitializedAndTheMessageRetriedOnce) {
  std::atomic<int> sessions{0};
  Fixture f([&](const std::string& method, const http::Request& req,
                http::Responder& res) {
    if (method == "initialize") {
      return AnswerInitialize(req, res, "s" + std::to_string(++sessions));
    }
    if (method == "notifications/initialized") return res.Send(202, {}, "");
    if (req.Header("mcp-session-id") == "s1") {
      return res.Send(404, {}, "session not found");
    }
    Result<RawMessage> m = ScanMessage(req.body);
    // An SSE answer, with a notification first.
    res.Start(200, {{"content-type", "text/event-stream"}});
    res.Write(
        "id: e1\ndata: \n\n"
        "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n");
    res.Write("data: {\"jsonrpc\":\"2.0\",\"id\":" + std::string(m->id) +
              ",\ndata: \"result\":{\"ok\":true}}\n\n");
    res.Finish();
  });
  f.Send(kInit);
  ASSERT_EQ(f.Got(1).size(), 1u);
  f.Send(kInitialized);
  f.Send(
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}})");
  std::vector<std::string> got = f.Got(3);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(IdOf(got[0]), "1");  // the client's initialize answer only
  EXPECT_EQ(got[1], R"({"jsonrpc":"2.0","method":"notifications/message"})");
  EXPECT_EQ(got[2], R"({"jsonrpc":"2.0","id":2,"result":{"ok":true}})");
  std::vector<Seen> seen = f.seen();
  std::vector<std::string> posts;
  for (const Seen& s : seen) {
    if (s.method != "GET") posts.push_back(s.method + "@" + s.session);
  }
  EXPECT_EQ(posts, (std::vector<std::string>{
                       "initialize@", "notifications/initialized@s1",
                       "tools/call@s1", "initialize@",
                       "notifications/initialized@s2", "tools/call@s2"}));
  for (const Seen& s : seen) {
    if (s.method == "tools/call") {
      EXPECT_EQ(s.protocol, "2025-06-18");
    }
    if (s.method == "initialize") {
      EXPECT_EQ(s.protocol, "");
    }
  }
}

TEST(HttpUpstreamTest, EveryFailureAnswersTheRequestUnderItsId) {
  Fixture f([&](const std::string& method, const http::Request& req,
                http::Responder& res) {
    if (method == "initialize") return AnswerInitialize(req, res, "s1");
    if (method == "notifications/initialized") return res.Send(202, {}, "");
    const std::string body = req.body;
    if (body.find("e500") != std::string::npos) {
      return res.Send(500, {{"content-type", "text/plain"}}, "oops");
    }
    if (body.find("garbage") != std::string::npos) {
      return res.Send(200, {{"content-type", "application/json"}}, "{nope");
    }
    if (body.find("accepted") != std::string::npos) {
      return res.Send(202, {}, "");
    }
    if (body.find("rpcerr") != std::string::npos) {
      return res.Send(
          400, {{"content-type", "application/json"}},
          R"({"jsonrpc":"2.0","id":"r","error":{"code":-32602,"message":"bad"}})");
    }
    if (body.find("cut") != std::string::npos) {
      res.Start(200, {{"content-type", "text/event-stream"}});
      res.Write("data: {\"jsonrpc\"");
      return res.Abort();
    }
    res.Send(200, {{"content-type", "application/json"}}, "{}");
  });
  f.Send(kInit);
  ASSERT_EQ(f.Got(1).size(), 1u);
  f.Send(kInitialized);
  auto call = [](const std::string& id, const std::string& name) {
    return R"({"jsonrpc":"2.0","id":)" + id +
           R"(,"method":"tools/call","params":{"name":")" + name + "\"}}";
  };
  f.Send(call("10", "e500"));
  f.Send(call("11", "garbage"));
  f.Send(call("12", "accepted"));
  f.Send(call("\"r\"", "rpcerr"));
  f.Send(call("13", "cut"));
  std::vector<std::string> got = f.Got(6);
  ASSERT_EQ(got.size(), 6u);
  std::map<std::string, std::string> by_id;
  for (size_t i = 1; i < got.size(); ++i) by_id[IdOf(got[i])] = got[i];
  EXPECT_EQ(ErrorCodeOf(by_id["10"]), "-32000");
  EXPECT_NE(by_id["10"].find("HTTP 500 Internal Server Error: oops"),
            std::string::npos)
      << by_id["10"];
  EXPECT_EQ(ErrorCodeOf(by_id["11"]), "-32603");
  EXPECT_NE(by_id["11"].find("not JSON"), std::string::npos);
  EXPECT_EQ(ErrorCodeOf(by_id["12"]), "-32603");
  EXPECT_NE(by_id["12"].find("HTTP 202"), std::string::npos);
  // The server's own JSON-RPC error passes as it was.
  EXPECT_EQ(
      by_id["\"r\""],
      R"({"jsonrpc":"2.0","id":"r","error":{"code":-32602,"message":"bad"}})");
  EXPECT_EQ(ErrorCodeOf(by_id["13"]), "-32000");
}

void AnswerSession(const std::string& method, const http::Request& req,
                   http::Responder& res) {
  if (method == "initialize") return AnswerInitialize(req, res, "s1");
  res.Send(202, {}, "");
}

// One event on the GET stream, then its end; `id` "" = an event without id.
void StreamOneEvent(http::Responder& res, const std::string& id) {
  res.Start(200, {{"content-type", "text/event-stream"}});
  res.Write((id.empty() ? "" : "id: " + id + "\n") +
            "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
            "message\"}\n\n");
  res.Finish();
}

// Session 18 (attackV finding 7): the server closes its GET stream (the
// SDK's closeStandaloneSSEStream polling, an idle timeout) and the proxy
// reopens it a second later. A notification sent in between
// (resources/updated) never arrived and nothing was invalidated: reads
// stayed stale after the server had announced the change.
TEST(HttpUpstreamTest, AGetStreamEndedWithoutEventIdReportsTheGap) {
  Fixture f(AnswerSession,
            [](int, http::Responder& res) { StreamOneEvent(res, ""); });
  f.Send(kInit);
  ASSERT_EQ(f.Got(1).size(), 1u);
  f.Send(kInitialized);
  // At the end of the first stream, and when the second opens fresh.
  std::vector<std::string> gaps = f.Gaps(2);
  ASSERT_GE(gaps.size(), 2u);
  EXPECT_NE(gaps[0].find("cannot be resumed"), std::string::npos) << gaps[0];
  EXPECT_NE(gaps[1].find("reopened without resuming"), std::string::npos)
      << gaps[1];
  std::vector<std::string> ids = f.GetEventIds();
  ASSERT_GE(ids.size(), 2u);
  EXPECT_EQ(ids[1], "");
}

// A stream that carried event ids is resumed with Last-Event-ID: no gap
// while the server replays. When the server refuses the resume (HTTP 409
// here), the gap is reported, the id dropped, and the fresh stream that
// opens next reports it again.
TEST(HttpUpstreamTest, AResumedGetStreamHasNoGapARefusedResumeHasOne) {
  Fixture f(AnswerSession, [](int n, http::Responder& res) {
    if (n == 1) return StreamOneEvent(res, "g1");
    if (n == 2) return StreamOneEvent(res, "g2");  // resumed from g1
    if (n == 3) return res.Send(409, {}, "unknown event id");
    StreamOneEvent(res, "");
  });
  f.Send(kInit);
  ASSERT_EQ(f.Got(1).size(), 1u);
  f.Send(kInitialized);
  std::vector<std::string> gaps = f.Gaps(2);
  ASSERT_GE(gaps.size(), 2u);
  EXPECT_NE(gaps[0].find("refused to resume"), std::string::npos) << gaps[0];
  EXPECT_NE(gaps[0].find("HTTP 409"), std::string::npos) << gaps[0];
  EXPECT_NE(gaps[1].find("reopened without resuming"), std::string::npos)
      << gaps[1];
  std::vector<std::string> ids = f.GetEventIds();
  ASSERT_GE(ids.size(), 4u);
  EXPECT_EQ(ids[0], "");
  EXPECT_EQ(ids[1], "g1");
  EXPECT_EQ(ids[2], "g2");
  EXPECT_EQ(ids[3], "");
}

TEST(HttpUpstreamTest, AMessageOnARequestsStreamNamesThatRequest) {
  // What lets the session tie a server's sampling request to the one call
  // it serves (Session::OnServerLineOnStream); the GET stream names none.
  const std::string on_get =
      R"({"jsonrpc":"2.0","id":"g1","method":"sampling/createMessage","params":{}})";
  const std::string on_post =
      R"({"jsonrpc":"2.0","id":"p1","method":"elicitation/create","params":{}})";
  Fixture f(
      [&](const std::string& method, const http::Request& req,
          http::Responder& res) {
        if (method == "initialize") return AnswerInitialize(req, res, "s1");
        if (method == "notifications/initialized") return res.Send(202, {}, "");
        Result<RawMessage> m = ScanMessage(req.body);
        res.Start(200, {{"content-type", "text/event-stream"}});
        res.Write("data: " + on_post + "\n\n");
        res.Write("data: {\"jsonrpc\":\"2.0\",\"id\":" + std::string(m->id) +
                  ",\"result\":{\"content\":[]}}\n\n");
        res.Finish();
      },
      [&](int n, http::Responder& res) {
        if (n > 1) return res.Send(405, {}, "");
        res.Start(200, {{"content-type", "text/event-stream"}});
        res.Write("data: " + on_get + "\n\n");
        res.Finish();
      });
  f.Send(kInit);
  f.Send(kInitialized);
  ASSERT_EQ(f.Got(2).size(), 2u);  // the initialize answer, the GET's
  f.Send(
      R"({"jsonrpc":"2.0","id":"c-7","method":"tools/call","params":{"name":"t"}})");
  const std::vector<std::string> got = f.Got(4);
  const std::vector<std::string> streams = f.Streams();
  ASSERT_EQ(got.size(), 4u);
  std::map<std::string, std::string> stream_of;
  for (size_t i = 0; i < got.size(); ++i) stream_of[got[i]] = streams[i];
  EXPECT_EQ(stream_of[got[0]], "1");
  EXPECT_EQ(stream_of[on_get], "");
  EXPECT_EQ(stream_of[on_post], R"("c-7")");
  EXPECT_EQ(stream_of[got[3]], R"("c-7")");
}

TEST(HttpUpstreamTest, UnreachableServerAnswersWithAConnectionError) {
  // A port that was free a moment ago: nothing listens there.
  uint16_t dead_port = 0;
  {
    Fixture probe([](const std::string&, const http::Request&,
                     http::Responder& res) { res.Send(500, {}, ""); });
    dead_port = probe.port();
  }
  Fixture f([](const std::string&, const http::Request&, http::Responder& res) {
    res.Send(500, {}, "");
  });
  HttpUpstreamOptions o;
  o.endpoint = *ParseMcpEndpoint(
      "http://127.0.0.1:" + std::to_string(dead_port) + "/mcp");
  f.Start(o);
  f.Send(kInit);
  std::vector<std::string> got = f.Got(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(IdOf(got[0]), "1");
  EXPECT_EQ(ErrorCodeOf(got[0]), "-32000");
  EXPECT_NE(got[0].find("connect"), std::string::npos) << got[0];
}

}  // namespace
}  // namespace toolcache::mcp
