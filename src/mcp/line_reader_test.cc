#include "src/mcp/line_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace toolcache::mcp {
namespace {

struct Collected {
  std::vector<std::string> lines;
  std::vector<uint64_t> long_lines;  // total size, once per over-long line
  std::string long_bytes;            // their bytes, '\n' after each
  std::vector<bool> truncated;
};

void Feed(LineReader& r, std::string_view bytes, Collected& c) {
  r.Feed(
      bytes, [&](std::string_view l) { c.lines.emplace_back(l); },
      [&](std::string_view part, bool end, uint64_t total) {
        c.long_bytes.append(part);
        if (end) {
          c.long_bytes.push_back('\n');
          c.long_lines.push_back(total);
        }
      });
}

void Finish(LineReader& r, Collected& c) {
  r.Finish([&](std::string_view l) { c.lines.emplace_back(l); },
           [&](std::string_view part, bool end, uint64_t total) {
             c.long_bytes.append(part);
             if (end) {
               c.long_lines.push_back(total);
               c.truncated.push_back(r.truncated());
             }
           });
}

TEST(LineReaderTest, ReassemblesLinesSplitAcrossChunks) {
  LineReader r(100);
  Collected c;
  Feed(r, "{\"a\":", c);
  Feed(r, "1}\n{\"b\"", c);
  Feed(r, ":2}\n\n{\"c\":3}\n", c);
  EXPECT_EQ(c.lines, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "",
                                               "{\"c\":3}"}));
  EXPECT_TRUE(c.long_lines.empty());
}

TEST(LineReaderTest, FinalLineWithoutNewlineIsDeliveredAtFinish) {
  LineReader r(100);
  Collected c;
  Feed(r, "one\ntail", c);
  EXPECT_EQ(c.lines, (std::vector<std::string>{"one"}));
  Finish(r, c);
  EXPECT_EQ(c.lines, (std::vector<std::string>{"one", "tail"}));
  Finish(r, c);  // nothing left
  EXPECT_EQ(c.lines.size(), 2u);
}

TEST(LineReaderTest, OverlongLineSpreadOverReadsGoesToOnLongInOrder) {
  LineReader r(8);
  Collected c;
  Feed(r, "0123456789", c);
  EXPECT_TRUE(r.in_long_line());
  Feed(r, "abc\nok\n", c);
  EXPECT_EQ(c.long_lines, (std::vector<uint64_t>{13}));
  EXPECT_EQ(c.long_bytes, "0123456789abc\n");
  EXPECT_EQ(c.lines, (std::vector<std::string>{"ok"}));
  EXPECT_FALSE(r.in_long_line());
}

TEST(LineReaderTest, OverlongLineInsideOneReadIsOverlongToo) {
  // The limit holds however the bytes arrive (a 5000-byte line read at once
  // used to be handed out as a normal line).
  LineReader r(2048);
  Collected c;
  std::string big(5000, 'x');
  Feed(r, "short\n" + big + "\nafter\n", c);
  EXPECT_EQ(c.lines, (std::vector<std::string>{"short", "after"}));
  EXPECT_EQ(c.long_lines, (std::vector<uint64_t>{5000}));
  EXPECT_EQ(c.long_bytes, big + "\n");
}

TEST(LineReaderTest, LineOfExactlyTheLimitIsNormal) {
  LineReader r(4);
  Collected c;
  Feed(r, "ab", c);
  Feed(r, "cd", c);
  Feed(r, "\nabcd\n", c);
  EXPECT_EQ(c.lines, (std::vector<std::string>{"abcd", "abcd"}));
  EXPECT_TRUE(c.long_lines.empty());
}

TEST(LineReaderTest, BufferedStartOfALineThatBecomesOverlongIsHandedOver) {
  LineReader r(4);
  Collected c;
  Feed(r, "abc", c);  // fits so far: buffered
  Feed(r, "defgh", c);
  Feed(r, "\nxy\n", c);
  EXPECT_EQ(c.long_bytes, "abcdefgh\n");
  EXPECT_EQ(c.long_lines, (std::vector<uint64_t>{8}));
  EXPECT_EQ(c.lines, (std::vector<std::string>{"xy"}));
}

TEST(LineReaderTest, OverlongLineCutOffByEndOfInputIsReportedTruncated) {
  LineReader r(4);
  Collected c;
  Feed(r, "abcdefgh", c);
  Finish(r, c);
  EXPECT_EQ(c.long_bytes, "abcdefgh");
  EXPECT_EQ(c.long_lines, (std::vector<uint64_t>{8}));
  EXPECT_EQ(c.truncated, (std::vector<bool>{true}));
  EXPECT_FALSE(r.truncated());
}

TEST(LineReaderTest, ABufferedLineCanBeTakenWithoutACopy) {
  LineReader r(1 << 20);
  std::vector<std::string> lines;
  ByteBuffer taken;
  const char* taken_at = nullptr;
  auto on_line = [&](std::string_view l) {
    lines.emplace_back(l);
    ByteBuffer b = r.TakeLine(l);
    if (!b.empty() && taken.empty()) {
      taken_at = l.data();
      taken = std::move(b);
    }
  };
  auto on_long = [](std::string_view, bool, uint64_t) { FAIL(); };
  // A line inside one chunk lies in the caller's bytes: nothing to take.
  r.Feed("short\n", on_line, on_long);
  EXPECT_TRUE(taken.empty());
  // A line assembled from pieces lies in the reader's buffer: taken whole,
  // at the address the line had.
  r.Feed("pie", on_line, on_long);
  r.Feed("ces\nnext", on_line, on_long);
  ASSERT_FALSE(taken.empty());
  EXPECT_EQ(taken.view(), "pieces");
  EXPECT_EQ(taken.view().data(), taken_at);
  // The reader goes on with a fresh buffer.
  r.Feed(" line\n", on_line, on_long);
  EXPECT_EQ(lines, (std::vector<std::string>{"short", "pieces", "next line"}));
  EXPECT_EQ(taken.view(), "pieces");
}

}  // namespace
}  // namespace toolcache::mcp
