// ToolCache contract: the request path other faces share (the MCP session
// tests in src/mcp/session_test.cc cover the protocol side).
#include "toolcache/tool_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "toolcache/classifier.h"

namespace toolcache {
namespace {

class ToolCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Config config;
    config.policy = "lru";
    auto made = NewToolCache(config, &clock_);
    ASSERT_TRUE(made.ok()) << made.status().message();
    cache_ = std::move(*made);
    ToolInfo read{.name = "get_doc", .description = "Get a document"};
    read.annotations = ToolAnnotations{.read_only = true, .open_world = false};
    ToolInfo write{.name = "put_doc", .description = "Store a document"};
    write.annotations = ToolAnnotations{.read_only = false};
    std::vector<ToolInfo> tools = {read, write};
    cache_->LearnTools("s", tools, true);
  }
  ToolCall Read(std::string_view args = R"({"id":1})") {
    return {.server = "s", .tool = "get_doc", .arguments_json = args};
  }

  ManualClock clock_{0};
  std::unique_ptr<ToolCache> cache_;
};

TEST_F(ToolCacheTest, ConcurrentIdenticalCallsMakeOneUpstreamCall) {
  constexpr int kThreads = 8;
  std::atomic<int> forwards{0}, waits{0};
  std::vector<TicketId> tickets(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      CallPlan p = cache_->Begin(Read(), static_cast<WaiterId>(i + 1));
      if (p.action == CallAction::kForward) ++forwards;
      if (p.action == CallAction::kWait) ++waits;
      tickets[i] = p.ticket;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(forwards.load(), 1);
  EXPECT_EQ(waits.load(), kThreads - 1);
  for (int i = 1; i < kThreads; ++i) EXPECT_EQ(tickets[i], tickets[0]);
  Completion c = cache_->Complete(
      tickets[0], {.result_json = R"({"content":[]})", .latency_seconds = 0.5});
  EXPECT_EQ(c.waiters.size(), static_cast<size_t>(kThreads));
  EXPECT_TRUE(c.admitted);
  CallPlan hit = cache_->Begin(Read(), 99);
  ASSERT_EQ(hit.action, CallAction::kServe);
  EXPECT_EQ(*hit.result_json, R"({"content":[]})");
}

TEST_F(ToolCacheTest, WriteDetachesInFlightReadsAndInvalidates) {
  CallPlan r1 = cache_->Begin(Read(), 1);
  ASSERT_EQ(r1.action, CallAction::kForward);
  CallPlan w = cache_->Begin(
      {.server = "s", .tool = "put_doc", .arguments_json = R"({"id":1})"}, 2);
  EXPECT_TRUE(w.bypass);
  EXPECT_EQ(w.bypass_reason, "command");
  // A read issued after the write started does not join the older read.
  CallPlan r2 = cache_->Begin(Read(), 3);
  EXPECT_EQ(r2.action, CallAction::kForward);
  EXPECT_NE(r2.ticket, r1.ticket);
  Completion c1 =
      cache_->Complete(r1.ticket, {.result_json = R"({"content":[1]})"});
  EXPECT_FALSE(c1.admitted) << "overlapped the write";
  (void)cache_->Complete(w.ticket, {.result_json = R"({"content":[]})"});
  Completion c2 =
      cache_->Complete(r2.ticket, {.result_json = R"({"content":[2]})"});
  EXPECT_FALSE(c2.admitted) << "the write completed after it started";
  CallPlan r3 = cache_->Begin(Read(), 4);
  ASSERT_EQ(r3.action, CallAction::kForward);
  EXPECT_TRUE(cache_->Complete(r3.ticket, {.result_json = R"({"content":[3]})"})
                  .admitted);
  EXPECT_EQ(cache_->Begin(Read(), 5).action, CallAction::kServe);
}

TEST_F(ToolCacheTest, InvalidArgumentsBypassWithTheirOwnReason) {
  CallPlan p = cache_->Begin(Read(R"({"a":1,"a":2})"), 1);
  EXPECT_TRUE(p.bypass);
  EXPECT_EQ(p.bypass_reason, "invalid_arguments");
  EXPECT_EQ(cache_->Stats().bypasses.at("invalid_arguments"), 1u);
}

TEST_F(ToolCacheTest, CancelReportsLeadershipAndRemainingWaiters) {
  CallPlan lead = cache_->Begin(Read(), 1);
  CallPlan follow = cache_->Begin(Read(), 2);
  ASSERT_EQ(follow.action, CallAction::kWait);
  CancelOutcome c = cache_->Cancel(1);
  EXPECT_TRUE(c.found);
  EXPECT_TRUE(c.was_leader);
  EXPECT_EQ(c.others_waiting, 1u);
  EXPECT_FALSE(cache_->Cancel(1).found);
  Completion done =
      cache_->Complete(lead.ticket, {.result_json = R"({"content":[]})"});
  EXPECT_EQ(done.waiters, std::vector<WaiterId>{2});
}

}  // namespace
}  // namespace toolcache
