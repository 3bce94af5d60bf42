#include "src/http/sse.h"

#include <gtest/gtest.h>

#include <vector>

namespace toolcache::http {
namespace {

std::vector<SseEvent> FeedAll(SseParser& p,
                              const std::vector<std::string>& pieces) {
  std::vector<SseEvent> out;
  for (const auto& piece : pieces) {
    p.Feed(piece, [&](const SseEvent& e) { out.push_back(e); });
  }
  return out;
}

TEST(SseParser, ParsesEventsSplitAnywhere) {
  const std::string stream =
      "event: message_start\r\ndata: {\"a\":1}\r\n\r\n: comment\n"
      "data: line1\ndata: line2\n\nevent: ping\rdata: x\r\r";
  // Every split point gives the same events.
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    SseParser p;
    auto events = FeedAll(p, {stream.substr(0, cut), stream.substr(cut)});
    ASSERT_EQ(events.size(), 3u) << "cut " << cut;
    EXPECT_EQ(events[0].event, "message_start");
    EXPECT_EQ(events[0].data, "{\"a\":1}");
    EXPECT_EQ(events[1].event, "");
    EXPECT_EQ(events[1].data, "line1\nline2");
    EXPECT_EQ(events[2].event, "ping");
    EXPECT_EQ(events[2].data, "x");
    EXPECT_FALSE(p.mid_event()) << "cut " << cut;
  }
}

TEST(SseParser, OneByteAtATime) {
  const std::string stream =
      "\xEF\xBB\xBF"
      "data: [DONE]\n\n";
  SseParser p;
  std::vector<std::string> pieces;
  for (char c : stream) pieces.emplace_back(1, c);
  auto events = FeedAll(p, pieces);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "[DONE]");
}

TEST(SseParser, ReportsATruncatedEvent) {
  SseParser p;
  auto events = FeedAll(p, {"data: {\"partial\":"});
  EXPECT_TRUE(events.empty());
  EXPECT_TRUE(p.mid_event());
  SseParser q;
  events = FeedAll(q, {"data: x\n"});  // no blank line yet
  EXPECT_TRUE(events.empty());
  EXPECT_TRUE(q.mid_event());
}

TEST(SseParser, DropsAnOversizedEventAndGoesOn) {
  SseParser p(16);
  auto events = FeedAll(
      p, {"data: " + std::string(100, 'x') + "\n\n", "data: small\n\n"});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "small");
  EXPECT_EQ(p.dropped_events(), 1u);
}

// Regression (fuzz/corpus/sse/crash-overlong-line-split): an over-long line
// split before its line end left its end to be read as a blank line, which
// dispatched the rest of the dropped event as an event of its own.
TEST(SseParser, OverLongLineDropsItsEventHoweverItIsSplit) {
  const std::string line = "data: " + std::string(30, 'x');
  const std::string stream = line + "\ndata: injected\n\ndata: ok\n\n";
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    SseParser p(16);
    auto events = FeedAll(p, {stream.substr(0, cut), stream.substr(cut)});
    ASSERT_EQ(events.size(), 1u) << "cut " << cut;
    EXPECT_EQ(events[0].data, "ok") << "cut " << cut;
    EXPECT_EQ(p.dropped_events(), 1u) << "cut " << cut;
    EXPECT_FALSE(p.mid_event()) << "cut " << cut;
  }
}

// An over-long line that is not data (here an event name) drops its event
// too, also when it arrives in one piece.
TEST(SseParser, OverLongEventNameDropsItsEvent) {
  SseParser p(16);
  auto events = FeedAll(
      p, {"event: " + std::string(30, 'e') + "\ndata: x\n\ndata: ok\n\n"});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "ok");
  EXPECT_EQ(p.dropped_events(), 1u);
}

}  // namespace
}  // namespace toolcache::http
