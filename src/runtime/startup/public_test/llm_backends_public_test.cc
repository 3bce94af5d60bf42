// A program that links only the public library (include/toolcache,
// toolcache::toolcache) and configures `classifier.llm`: without
// UseBuiltInLlmBackends() the layer fails closed (every tool COMMAND);
// after it, the model's answer decides. The provider is a fake on
// 127.0.0.1 written here with plain sockets (no internal header is used).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>

#include "toolcache/classifier.h"
#include "toolcache/config.h"

namespace {

// Answers every POST with one Anthropic Messages response whose text is
// `answer`; counts the requests.
class FakeProvider {
 public:
  explicit FakeProvider(std::string answer) : answer_(std::move(answer)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(listen(fd_, 8), 0);
    socklen_t n = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &n);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeProvider() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(port_);
  }
  int requests() const { return requests_; }

 private:
  void Serve() {
    while (!stop_) {
      const int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string in;
      char buf[4096];
      size_t need = std::string::npos;
      while (need == std::string::npos || in.size() < need) {
        const ssize_t r = read(c, buf, sizeof buf);
        if (r <= 0) break;
        in.append(buf, static_cast<size_t>(r));
        const size_t head = in.find("\r\n\r\n");
        if (need == std::string::npos && head != std::string::npos) {
          size_t len = 0;
          const size_t cl = in.find("ontent-Length:");
          const size_t cl2 = in.find("ontent-length:");
          const size_t at = cl != std::string::npos ? cl : cl2;
          if (at != std::string::npos && at < head) {
            len = std::strtoul(in.c_str() + at + 14, nullptr, 10);
          }
          need = head + 4 + len;
        }
      }
      ++requests_;
      std::string text;  // the answer as a JSON string literal's contents
      for (char ch : answer_) {
        if (ch == '"' || ch == '\\') text.push_back('\\');
        text.push_back(ch);
      }
      const std::string body =
          R"({"type":"message","role":"assistant","content":[{"type":"text","text":")" +
          text + R"("}],"stop_reason":"end_turn"})";
      const std::string out =
          "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
          "connection: close\r\ncontent-length: " +
          std::to_string(body.size()) + "\r\n\r\n" + body;
      (void)!write(c, out.data(), out.size());
      close(c);
    }
  }

  std::string answer_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

toolcache::Config LlmConfig(const FakeProvider& p) {
  toolcache::Result<toolcache::Config> c =
      toolcache::ParseConfig("classifier:\n  llm:\n    url: " + p.url() +
                                 "\n    model: fake-model\n"
                                 "    timeoutSeconds: 5\n",
                             "test.yaml");
  EXPECT_TRUE(c.ok()) << c.status().message();
  return *c;
}

// A read-only tool the heuristic caches.
toolcache::ToolInfo Book() {
  return {.name = "get_book_details",
          .description = "Returns the details of a book by its ISBN.",
          .input_schema_json =
              R"({"type":"object","properties":{"isbn":{"type":"string"}}})"};
}

// One test, in order: the install is process-wide and cannot be undone.
TEST(PublicLibraryLlmBackends, FailClosedUntilInstalledThenTheModelDecides) {
  FakeProvider p(R"({"request_type":"INFORMATIONAL","ttl_seconds":60,)"
                 R"("reason":"reads a book record"})");
  const toolcache::Verdict plain = toolcache::Classifier().Classify(Book());
  ASSERT_TRUE(plain.cacheable);
  ASSERT_EQ(plain.ttl_seconds, 300);

  // Without the call: the configured layer cannot be built; fail closed.
  const toolcache::Verdict closed =
      toolcache::Classifier(LlmConfig(p), {.llm_wait = true}).Classify(Book());
  EXPECT_FALSE(closed.cacheable) << closed.detail;
  EXPECT_EQ(closed.request_type, toolcache::RequestType::kCommand);
  EXPECT_NE(closed.detail.find("unavailable"), std::string::npos)
      << closed.detail;
  EXPECT_EQ(p.requests(), 0);

  toolcache::UseBuiltInLlmBackends();
  toolcache::UseBuiltInLlmBackends();  // idempotent
  const toolcache::Verdict asked =
      toolcache::Classifier(LlmConfig(p), {.llm_wait = true}).Classify(Book());
  // The model's answer, as one conservative layer: read-only agreed (not
  // the fail-closed COMMAND), its shorter TTL (60 s) caps the heuristic's
  // default (300 s).
  EXPECT_EQ(asked.request_type, toolcache::RequestType::kInformational)
      << asked.detail;
  EXPECT_EQ(asked.detail.find("unavailable"), std::string::npos)
      << asked.detail;
  EXPECT_NE(asked.detail.find("llm extractor: INFORMATIONAL, TTL 60 s"),
            std::string::npos)
      << asked.detail;
  EXPECT_EQ(asked.ttl_seconds, 60) << asked.detail;
  EXPECT_EQ(p.requests(), 1);
}

}  // namespace
