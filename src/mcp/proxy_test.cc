// RunMcpProxy with real pipes and a scripted `sh` server: what only the
// poll loop can get wrong (framing of streamed lines, shutdown).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "toolcache/clock.h"
#include "toolcache/config.h"
#include "toolcache/mcp_proxy.h"
#include "toolcache/tool_cache.h"

namespace toolcache {
namespace {

using nlohmann::json;

// Reads from `fd` until `out` holds at least `lines` '\n' (or `bytes`
// bytes), for at most 10 s.
void ReadUntil(int fd, std::string& out, size_t lines, size_t bytes = 0) {
  auto done = [&] {
    if (bytes > 0) return out.size() >= bytes;
    return static_cast<size_t>(std::count(out.begin(), out.end(), '\n')) >=
           lines;
  };
  for (int waited = 0; !done() && waited < 10000; waited += 10) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 10) <= 0) continue;
    char buf[65536];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return;
    out.append(buf, static_cast<size_t>(n));
  }
}

// Every complete line of `out`, parsed.
std::vector<json> ParseLines(const std::string& out) {
  std::vector<json> lines;
  size_t start = 0;
  for (size_t nl; (nl = out.find('\n', start)) != std::string::npos;
       start = nl + 1) {
    lines.push_back(json::parse(out.substr(start, nl - start)));
  }
  return lines;
}

// A proxy running on pipes: `client_in` is what the test writes, `client_out`
// what it reads. The destructor closes the client's side and joins.
class PipeProxy {
 public:
  explicit PipeProxy(McpProxyOptions o) {
    EXPECT_EQ(pipe2(to_proxy_, O_CLOEXEC), 0);
    EXPECT_EQ(pipe2(from_proxy_, O_CLOEXEC), 0);
    o.client_in_fd = to_proxy_[0];
    o.client_out_fd = from_proxy_[1];
    thread_ = std::thread([this, o] {
      code_ = RunMcpProxy(o);
      done_ = true;
    });
  }
  ~PipeProxy() { (void)Finish(); }
  int client_in() const { return to_proxy_[1]; }
  int client_out() const { return from_proxy_[0]; }
  // True once RunMcpProxy returned (the real binary then exits: EOF).
  bool done() const { return done_; }
  void CloseClientIn() {
    if (to_proxy_[1] >= 0) close(to_proxy_[1]);
    to_proxy_[1] = -1;
  }
  // Client EOF, then waits for the proxy while draining what it writes
  // (appended to `rest` when given).
  Result<int> Finish(std::string* rest = nullptr) {
    CloseClientIn();
    if (thread_.joinable()) {
      std::thread drain([fd = from_proxy_[0], rest] {
        char buf[65536];
        for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) {
          if (rest != nullptr) rest->append(buf, static_cast<size_t>(n));
        }
      });
      thread_.join();
      close(from_proxy_[1]);
      drain.join();
      close(from_proxy_[0]);
      close(to_proxy_[0]);
    }
    return code_;
  }

 private:
  int to_proxy_[2] = {-1, -1};
  int from_proxy_[2] = {-1, -1};
  std::thread thread_;
  std::atomic<bool> done_{false};
  Result<int> code_ = InvalidArgument("not run");
};

std::string TempDir() {
  std::string t = ::testing::TempDir() + "proxy_test_XXXXXX";
  EXPECT_NE(mkdtemp(t.data()), nullptr);
  return t;
}

// A server script that reads one request and answers it (id 1) with a
// 3000-byte line in two parts, running `pause` between them, then reads
// until EOF.
std::string StreamedAnswerScript(const std::string& pause) {
  return R"(read l
printf '%s' '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"'
head -c 3000 /dev/zero | tr '\000' a
)" + pause +
         R"(
printf '%s\n' '"}]}}'
while read l; do :; done)";
}

constexpr std::string_view kCallRequest =
    R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}})"
    "\n";

// Writes `line` to `fd` without blocking, again and again, until the pipe
// stays full for 200 ms, `max_bytes` are written, or 5 s pass; returns the
// lines written. Lines up to PIPE_BUF are written whole or not at all.
size_t WriteUntilRefused(int fd, const std::string& line, size_t max_bytes) {
  EXPECT_LE(line.size(), size_t{PIPE_BUF});
  const int flags = fcntl(fd, F_GETFL);
  EXPECT_EQ(fcntl(fd, F_SETFL, flags | O_NONBLOCK), 0);
  size_t sent = 0;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (sent * line.size() < max_bytes &&
         std::chrono::steady_clock::now() < deadline) {
    ssize_t n = write(fd, line.data(), line.size());
    if (n == static_cast<ssize_t>(line.size())) {
      ++sent;
      continue;
    }
    if (!(n < 0 && errno == EAGAIN)) {
      ADD_FAILURE() << "write returned " << n << ": " << std::strerror(errno);
      break;
    }
    // The proxy may still be reading: give it a moment, then try again.
    pollfd p{fd, POLLOUT, 0};
    if (poll(&p, 1, 200) == 0) break;
  }
  EXPECT_EQ(fcntl(fd, F_SETFL, flags), 0);
  return sent;
}

TEST(McpProxyTest, OverlongServerLineIsNotInterleavedWithTheProxysOwnAnswers) {
  McpProxyOptions o;
  o.command = {"sh", "-c", StreamedAnswerScript("sleep 1")};
  o.max_line_bytes = 1024;
  o.grace_seconds = 5;
  PipeProxy proxy(o);
  ASSERT_EQ(write(proxy.client_in(), kCallRequest.data(), kCallRequest.size()),
            static_cast<ssize_t>(kCallRequest.size()));
  std::string out;
  ReadUntil(proxy.client_out(), out, 0, 1100);  // the first part is streaming
  ASSERT_GE(out.size(), 1100u);
  ASSERT_EQ(out.find('\n'), std::string::npos);
  // The proxy answers this one itself, while the long line is half sent.
  const std::string junk = "not json\n";
  ASSERT_EQ(write(proxy.client_in(), junk.data(), junk.size()),
            static_cast<ssize_t>(junk.size()));
  ReadUntil(proxy.client_out(), out, 2);
  // Client EOF: the server's read loop ends; anything written after the
  // exit is collected too.
  Result<int> code = proxy.Finish(&out);

  ASSERT_TRUE(code.ok()) << code.status().message();
  EXPECT_EQ(*code, 0);
  const std::vector<json> lines = ParseLines(out);
  ASSERT_EQ(lines.size(), 2u) << out.substr(0, 300);
  EXPECT_EQ(lines[0]["id"], 1);
  EXPECT_EQ(lines[0]["result"]["content"][0]["text"].get<std::string>(),
            std::string(3000, 'a'));
  EXPECT_EQ(lines[1]["error"]["code"], -32700);
  // Request 1 was answered by the streamed line: no second answer (an
  // error for a "request in flight") when the server exits.
}

// The server exits with a request in flight while a child of its own keeps
// its stdout open (no EOF), and SIGCHLD goes to another thread than the
// proxy's signalfd (an embedding process with its own SIGCHLD handler): the
// next client message still finds the exit (the loop reaps at least every
// 50 ms while messages flow, no longer on every turn), so the request is
// answered with an error instead of waiting for the grandchild.
void NoteChild(int) {}
// SIGCHLD taken by a handler of the test's own thread, as an embedding
// process would, for the lifetime of this object (then restored).
class ChildSignalElsewhere {
 public:
  ChildSignalElsewhere() {
    struct sigaction handler {};
    handler.sa_handler = NoteChild;
    sigemptyset(&handler.sa_mask);
    ok_ = sigaction(SIGCHLD, &handler, &previous_) == 0;
  }
  ~ChildSignalElsewhere() { sigaction(SIGCHLD, &previous_, nullptr); }
  bool ok() const { return ok_; }

 private:
  struct sigaction previous_ {};
  bool ok_ = false;
};
TEST(McpProxyTest, ServerExitIsNoticedWhileAGrandchildHoldsItsStdout) {
  ChildSignalElsewhere sigchld;
  ASSERT_TRUE(sigchld.ok());
  McpProxyOptions o;
  o.command = {"sh", "-c", "read l; sleep 20 2>/dev/null & exit 0"};
  o.grace_seconds = 5;
  PipeProxy proxy(o);
  ASSERT_EQ(write(proxy.client_in(), kCallRequest.data(), kCallRequest.size()),
            static_cast<ssize_t>(kCallRequest.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::string note =
      R"({"jsonrpc":"2.0","method":"notifications/progress","params":{}})"
      "\n";
  ASSERT_EQ(write(proxy.client_in(), note.data(), note.size()),
            static_cast<ssize_t>(note.size()));
  std::string out;
  ReadUntil(proxy.client_out(), out, 1);
  // Answered while the client is still connected (closing it would end
  // the session anyway).
  const std::vector<json> lines = ParseLines(out);
  Result<int> code = proxy.Finish();
  ASSERT_TRUE(code.ok()) << code.status().message();
  EXPECT_EQ(*code, 0);
  ASSERT_EQ(lines.size(), 1u) << out;
  EXPECT_EQ(lines[0]["id"], 1);
  EXPECT_TRUE(lines[0].contains("error")) << out;
}

// The server exits between two reaps of the loop (its SIGCHLD taken by
// another thread, its stdout held by a grandchild) and the client's request
// arrives right after: writing it fails (EPIPE), and the loop must not then
// block in poll() without reaping (review of session 9: it hung until the
// grandchild ended).
TEST(McpProxyTest, RequestRightAfterAServerExitIsAnswered) {
  ChildSignalElsewhere sigchld;
  ASSERT_TRUE(sigchld.ok());
  McpProxyOptions o;
  o.command = {"sh", "-c", "sleep 20 2>/dev/null & sleep 0.01; exit 0"};
  o.grace_seconds = 5;
  PipeProxy proxy(o);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  ASSERT_EQ(write(proxy.client_in(), kCallRequest.data(), kCallRequest.size()),
            static_cast<ssize_t>(kCallRequest.size()));
  // Either the request is answered with an error, or (when the exit was
  // noticed before the request arrived) the proxy has ended, which the
  // binary's client sees as EOF. Still running with no answer after 5 s
  // is the hang.
  std::string out;
  for (int waited = 0;
       waited < 5000 && out.find('\n') == std::string::npos && !proxy.done();
       waited += 10) {
    pollfd p{proxy.client_out(), POLLIN, 0};
    if (poll(&p, 1, 10) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(proxy.client_out(), buf, sizeof buf);
    if (n > 0) out.append(buf, static_cast<size_t>(n));
  }
  const bool ended = proxy.done();
  const std::vector<json> lines = ParseLines(out);
  Result<int> code = proxy.Finish();
  ASSERT_TRUE(code.ok()) << code.status().message();
  if (lines.empty()) {
    EXPECT_TRUE(ended) << "no answer and the proxy still running";
    return;
  }
  EXPECT_EQ(lines[0]["id"], 1);
  EXPECT_TRUE(lines[0].contains("error")) << out;
}

TEST(McpProxyTest, ClientThatStopsReadingStallsTheServerLosingNothing) {
  const std::string dir = TempDir();
  const int kLines = 20000;  // ~1.3 MB, far above pipes + the 4 KiB limit
  McpProxyOptions o;
  o.command = {"sh", "-c",
               "i=0; while [ $i -lt " + std::to_string(kLines) +
                   " ]; do printf "
                   "'{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                   "message\",\"params\":{\"i\":%d}}\\n' $i; i=$((i+1)); "
                   "done; : > " +
                   dir + "/done; while read l; do :; done"};
  o.max_buffered_bytes = 4096;
  PipeProxy proxy(o);
  // The client reads nothing for a while: the server must be held back.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_FALSE(std::filesystem::exists(dir + "/done"))
      << "the proxy buffered all of the server's output";
  // Then it reads: every line arrives, in order.
  std::string out;
  ReadUntil(proxy.client_out(), out, kLines);
  int expected = 0;
  for (const json& j : ParseLines(out)) {
    ASSERT_EQ(j["params"]["i"], expected) << "line " << expected;
    ++expected;
  }
  EXPECT_EQ(expected, kLines);
  EXPECT_TRUE(std::filesystem::exists(dir + "/done"));
  Result<int> code = proxy.Finish();
  ASSERT_TRUE(code.ok()) << code.status().message();
  EXPECT_EQ(*code, 0);
  std::filesystem::remove_all(dir);
}

TEST(McpProxyTest, ServerThatStopsReadingStallsTheClientLosingNothing) {
  const std::string dir = TempDir();
  McpProxyOptions o;
  // Reads nothing until `go` exists, then counts the lines it gets.
  o.command = {"sh", "-c",
               "while [ ! -e " + dir + "/go ]; do sleep 0.05; done; wc -l > " +
                   dir + "/count"};
  o.max_buffered_bytes = 4096;
  o.grace_seconds = 10;
  PipeProxy proxy(o);
  const std::string line =
      R"({"jsonrpc":"2.0","method":"notifications/x","params":{"pad":")" +
      std::string(200, 'p') + "\"}}\n";
  // Write without blocking until the pipe refuses: the proxy must stop
  // taking lines well before 8 MB.
  const size_t sent =
      WriteUntilRefused(proxy.client_in(), line, size_t{8} << 20);
  EXPECT_LT(sent * line.size(), size_t{1} << 20)
      << "the proxy buffered everything the client wrote";
  // The server starts reading: every line reaches it.
  std::ofstream(dir + "/go").put('\n');
  Result<int> code = proxy.Finish();
  ASSERT_TRUE(code.ok()) << code.status().message();
  EXPECT_EQ(*code, 0);
  std::ifstream count(dir + "/count");
  size_t got = 0;
  count >> got;
  EXPECT_EQ(got, sent);
  std::filesystem::remove_all(dir);
}

TEST(McpProxyTest, AnswersHeldBehindAStreamedLineAlsoPauseTheClient) {
  const std::string dir = TempDir();
  // Request 1 gets an over-long answer whose end waits for `go`.
  McpProxyOptions o;
  o.command = {"sh", "-c",
               StreamedAnswerScript("while [ ! -e " + dir +
                                    "/go ]; do sleep 0.05; done")};
  o.max_line_bytes = 1024;
  o.max_buffered_bytes = 4096;
  PipeProxy proxy(o);
  ASSERT_EQ(write(proxy.client_in(), kCallRequest.data(), kCallRequest.size()),
            static_cast<ssize_t>(kCallRequest.size()));
  std::string out;
  ReadUntil(proxy.client_out(), out, 0, 1100);  // the line is streaming
  ASSERT_EQ(out.find('\n'), std::string::npos);
  // Malformed lines: each one's -32700 is held until the long line ends.
  // The proxy must stop taking them well before 2 MB.
  const std::string junk = std::string(199, 'x') + "\n";
  const size_t sent =
      WriteUntilRefused(proxy.client_in(), junk, size_t{2} << 20);
  EXPECT_LT(sent * junk.size(), size_t{1} << 20)
      << "the proxy held every answer while the line streamed";
  std::ofstream(dir + "/go").put('\n');
  // Everything arrives: the long answer, then one -32700 per junk line.
  ReadUntil(proxy.client_out(), out, sent + 1);
  const std::vector<json> lines = ParseLines(out);
  ASSERT_EQ(lines.size(), sent + 1);
  EXPECT_EQ(lines[0]["id"], 1);
  EXPECT_EQ(lines.back()["error"]["code"], -32700);
  Result<int> code = proxy.Finish();
  ASSERT_TRUE(code.ok()) << code.status().message();
  std::filesystem::remove_all(dir);
}

// Writes all of `bytes` to the blocking fd `fd`.
void WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = write(fd, bytes.data(), bytes.size());
    ASSERT_GT(n, 0) << std::strerror(errno);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

// Big lines move through the proxy without being copied (the reader's
// buffer goes to the peer's queue; a hit queues the stored result itself):
// every byte must still arrive, in order, across many partial writes.
TEST(McpProxyTest, BigLinesAndHitsArriveIntact) {
  const std::string dir = TempDir();
  McpProxyOptions o;
  // The server keeps the first line it gets, answers it, then answers one
  // read with a 3 MB result and reads until EOF.
  o.command = {"sh", "-c", "head -n 1 > '" + dir + R"(/got'
printf '%s\n' '{"jsonrpc":"2.0","id":"put","result":{"content":[]}}'
head -n 1 > /dev/null
printf '%s' '{"jsonrpc":"2.0","id":"get","result":{"content":[{"type":"text","text":"'
head -c 3000000 /dev/zero | tr '\000' b
printf '%s\n' '"}]}}'
cat > /dev/null)"};
  o.grace_seconds = 5;
  ManualClock clock{0};
  Config config;
  config.policy = "lru";
  auto cache = NewToolCache(config, &clock);
  ASSERT_TRUE(cache.ok());
  o.cache = cache->get();
  PipeProxy proxy(o);

  std::string put =
      R"({"jsonrpc":"2.0","id":"put","method":"tools/call","params":{"name":"put_blob","arguments":{"data":")";
  for (int i = 0; put.size() < (size_t{3} << 20); ++i) {
    put += static_cast<char>('a' + i % 26);
  }
  put += R"("}}})";
  WriteAll(proxy.client_in(), put + "\n");
  std::string out;
  ReadUntil(proxy.client_out(), out, 1);
  ASSERT_EQ(ParseLines(out).size(), 1u);
  std::ifstream got(dir + "/got", std::ios::binary);
  const std::string received((std::istreambuf_iterator<char>(got)),
                             std::istreambuf_iterator<char>());
  EXPECT_TRUE(received == put + "\n")
      << "the server got " << received.size() << " bytes of " << put.size() + 1;

  const std::string get =
      R"(,"method":"tools/call","params":{"name":"get_blob","arguments":{}}})";
  WriteAll(proxy.client_in(), R"({"jsonrpc":"2.0","id":"get")" + get + "\n");
  ReadUntil(proxy.client_out(), out, 2);
  WriteAll(proxy.client_in(), R"({"jsonrpc":"2.0","id":"hit")" + get + "\n");
  ReadUntil(proxy.client_out(), out, 3);
  Result<int> code = proxy.Finish(&out);
  ASSERT_TRUE(code.ok()) << code.status().message();
  const std::vector<json> lines = ParseLines(out);
  ASSERT_EQ(lines.size(), 3u);
  const std::string blob(3000000, 'b');
  EXPECT_EQ(lines[1]["id"], "get");
  EXPECT_TRUE(lines[1]["result"]["content"][0]["text"] == blob);
  EXPECT_EQ(lines[2]["id"], "hit");
  EXPECT_TRUE(lines[2]["result"]["content"][0]["text"] == blob);
  EXPECT_EQ(lines[2]["result"]["_meta"]["toolcache/cache"]["hit"], true);
  EXPECT_EQ((*cache)->Stats().hits, 1u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace toolcache
