// The cache server over real sockets (127.0.0.1, port 0): replies, a
// coalesced begin answered across connections and event loops, a waiter
// whose client hangs up, and limits answered as JSON.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "toolcache/config.h"
#include "toolcache/serve.h"
#include "toolcache/tool_cache.h"

namespace toolcache {
namespace {

using nlohmann::json;

int Connect(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

void Write(int fd, const std::string& method, const std::string& path,
           const std::string& body, const std::string& host = "127.0.0.1") {
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: " + host +
                    "\r\nContent-Type: application/json\r\n"
                    "Content-Length: " +
                    std::to_string(body.size()) + "\r\n\r\n" + body;
  size_t off = 0;
  while (off < req.size()) {
    ssize_t n = write(fd, req.data() + off, req.size() - off);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

// Reads one response with a Content-Length; returns {status, body}.
std::pair<int, std::string> Read(int fd) {
  std::string buf;
  char tmp[4096];
  size_t head_end = std::string::npos;
  size_t length = 0;
  while (true) {
    if (head_end == std::string::npos) {
      head_end = buf.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        size_t p = buf.find("Content-Length: ");
        if (p == std::string::npos) p = buf.find("content-length: ");
        if (p != std::string::npos) length = std::stoul(buf.substr(p + 16));
      }
    }
    if (head_end != std::string::npos && buf.size() >= head_end + 4 + length) {
      break;
    }
    ssize_t n = read(fd, tmp, sizeof(tmp));
    if (n <= 0) return {0, ""};
    buf.append(tmp, static_cast<size_t>(n));
  }
  return {std::stoi(buf.substr(9, 3)), buf.substr(head_end + 4, length)};
}

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<Config> config = ParseConfig(
        "tools:\n  get_doc: {requestType: INFORMATIONAL, ttlSeconds: 600}\n",
        "t.yaml");
    ASSERT_TRUE(config.ok());
    auto cache = NewToolCache(*config, &clock_);
    ASSERT_TRUE(cache.ok());
    cache_ = std::move(*cache);
    ServeOptions o;
    o.listen_port = 0;
    o.cache = cache_.get();
    o.max_body_bytes = 4096;
    auto s = NewCacheServer(o);
    ASSERT_TRUE(s.ok()) << s.status().message();
    server_ = std::move(*s);
    thread_ = std::thread([this] { server_->Run(); });
  }
  void TearDown() override {
    server_->Stop();
    thread_.join();
    server_.reset();
    if (waiting_fd_ >= 0) close(waiting_fd_);
  }
  std::pair<int, std::string> Http(const std::string& method,
                                   const std::string& path,
                                   const std::string& body = "") {
    int fd = Connect(server_->port());
    EXPECT_GE(fd, 0);
    Write(fd, method, path, body);
    auto r = Read(fd);
    close(fd);
    return r;
  }
  json Stats() { return json::parse(Http("GET", "/toolcache/stats").second); }

  SystemClock clock_;
  std::unique_ptr<ToolCache> cache_;
  std::unique_ptr<CacheServer> server_;
  std::thread thread_;
  int waiting_fd_ = -1;
};

const std::string kCall =
    R"({"server":"s","tool":"get_doc","arguments":{"id":1}})";

TEST_F(ServerTest, AnswersLookupsAndServesTheDashboard) {
  auto [status, body] = Http("POST", "/v1/lookup", kCall);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(json::parse(body)["hit"], false);
  auto [s2, page] = Http("GET", "/");
  EXPECT_EQ(s2, 200);
  // The one dashboard of every face (src/runtime/dashboard.h).
  EXPECT_NE(page.find("<svg id=\"chart\""), std::string::npos);
  auto [s3, err] = Http("POST", "/v1/lookup", std::string(5000, ' '));
  EXPECT_EQ(s3, 413);
  EXPECT_EQ(json::parse(err)["error"]["code"], "bad_request");
  // A DNS-rebinding page reaches the loopback server under its own name.
  int fd = Connect(server_->port());
  Write(fd, "GET", "/toolcache/stats", "", "rebound.example:80");
  auto [s4, refused] = Read(fd);
  close(fd);
  EXPECT_EQ(s4, 403);
  EXPECT_EQ(json::parse(refused)["error"]["code"], "forbidden_host");
}

TEST_F(ServerTest, ACoalescedBeginIsAnsweredByAnotherConnectionsComplete) {
  auto [s1, leader] = Http("POST", "/v1/begin", kCall);
  ASSERT_EQ(s1, 200);
  const json l = json::parse(leader);
  ASSERT_EQ(l["action"], "forward");
  // Several waiters on their own connections (spread over the loops).
  std::vector<int> fds;
  for (int i = 0; i < 4; ++i) {
    fds.push_back(Connect(server_->port()));
    Write(fds.back(), "POST", "/v1/begin", kCall);
  }
  for (int i = 0; i < 200 && Stats()["waiting"] != 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(Stats()["waiting"], 4);
  json complete = {{"ticket", l["ticket"]}, {"result", {{"doc", 1}}}};
  auto [s2, done] = Http("POST", "/v1/complete", complete.dump());
  ASSERT_EQ(s2, 200) << done;
  EXPECT_EQ(json::parse(done)["waitersAnswered"], 4);
  for (int fd : fds) {
    auto [s, b] = Read(fd);
    EXPECT_EQ(s, 200);
    json j = json::parse(b);
    EXPECT_EQ(j["action"], "coalesced");
    EXPECT_EQ(j["result"]["doc"], 1);
    close(fd);
  }
}

TEST_F(ServerTest, AWaiterWhoseClientHangsUpIsCancelled) {
  auto [s1, leader] = Http("POST", "/v1/begin", kCall);
  const json l = json::parse(leader);
  ASSERT_EQ(l["action"], "forward");
  int fd = Connect(server_->port());
  Write(fd, "POST", "/v1/begin", kCall);
  for (int i = 0; i < 200 && Stats()["waiting"] != 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(Stats()["waiting"], 1);
  close(fd);
  for (int i = 0; i < 200 && Stats()["waiting"] != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(Stats()["waiting"], 0);
  json complete = {{"ticket", l["ticket"]}, {"result", {{"v", 1}}}};
  auto [s2, done] = Http("POST", "/v1/complete", complete.dump());
  EXPECT_EQ(json::parse(done)["waitersAnswered"], 0);
}

TEST_F(ServerTest, StopsWhileABeginIsStillWaiting) {
  auto [s1, leader] = Http("POST", "/v1/begin", kCall);
  ASSERT_EQ(json::parse(leader)["action"], "forward");
  waiting_fd_ = Connect(server_->port());
  Write(waiting_fd_, "POST", "/v1/begin", kCall);
  for (int i = 0; i < 200 && Stats()["waiting"] != 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(Stats()["waiting"], 1);
  // TearDown stops and destroys the server with the waiter pending (an
  // ASan build catches a connection outliving its loop).
}

}  // namespace
}  // namespace toolcache
