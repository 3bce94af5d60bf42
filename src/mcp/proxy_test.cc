// RunMcpProxy with real pipes and a scripted `sh` server: what only the
// poll loop can get wrong (framing of streamed lines, shutdown).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "toolcache/mcp_proxy.h"

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
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return;
    out.append(buf, static_cast<size_t>(n));
  }
}

TEST(McpProxyTest, OverlongServerLineIsNotInterleavedWithTheProxysOwnAnswers) {
  int to_proxy[2], from_proxy[2];
  ASSERT_EQ(pipe2(to_proxy, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(from_proxy, O_CLOEXEC), 0);
  // The server answers request 1 with a 3000-byte line in two parts, a
  // second apart, then waits for EOF.
  const std::string script = R"(read l
printf '%s' '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"'
head -c 3000 /dev/zero | tr '\000' a
sleep 1
printf '%s\n' '"}]}}'
while read l; do :; done)";
  McpProxyOptions o;
  o.command = {"sh", "-c", script};
  o.max_line_bytes = 1024;
  o.grace_seconds = 5;
  o.client_in_fd = to_proxy[0];
  o.client_out_fd = from_proxy[1];
  Result<int> code = InvalidArgument("not run");
  std::thread proxy([&] { code = RunMcpProxy(o); });
  // However the test ends: client EOF, then wait for the proxy to stop.
  int client_in = to_proxy[1];
  struct Stop {
    std::thread& proxy;
    int& client_in;
    ~Stop() {
      if (client_in >= 0) close(client_in);
      client_in = -1;
      if (proxy.joinable()) proxy.join();
    }
  } stop{proxy, client_in};

  const std::string request =
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}})"
      "\n";
  ASSERT_EQ(write(client_in, request.data(), request.size()),
            static_cast<ssize_t>(request.size()));
  std::string out;
  ReadUntil(from_proxy[0], out, 0, 1100);  // the first part is streaming
  ASSERT_GE(out.size(), 1100u);
  ASSERT_EQ(out.find('\n'), std::string::npos);
  // The proxy answers this one itself, while the long line is half sent.
  const std::string junk = "not json\n";
  ASSERT_EQ(write(client_in, junk.data(), junk.size()),
            static_cast<ssize_t>(junk.size()));
  ReadUntil(from_proxy[0], out, 2);
  close(client_in);  // client EOF: the server's read loop ends
  client_in = -1;
  proxy.join();
  close(to_proxy[0]);
  close(from_proxy[1]);
  ReadUntil(from_proxy[0], out, 3);  // anything written after the exit
  close(from_proxy[0]);

  ASSERT_TRUE(code.ok()) << code.status().message();
  EXPECT_EQ(*code, 0);
  std::vector<json> lines;
  size_t start = 0;
  for (size_t nl; (nl = out.find('\n', start)) != std::string::npos;
       start = nl + 1) {
    lines.push_back(json::parse(out.substr(start, nl - start)));
  }
  ASSERT_EQ(lines.size(), 2u) << out.substr(0, 300);
  EXPECT_EQ(lines[0]["id"], 1);
  EXPECT_EQ(lines[0]["result"]["content"][0]["text"].get<std::string>(),
            std::string(3000, 'a'));
  EXPECT_EQ(lines[1]["error"]["code"], -32700);
  // Request 1 was answered by the streamed line: no second answer (an
  // error for a "request in flight") when the server exits.
}

}  // namespace
}  // namespace toolcache
