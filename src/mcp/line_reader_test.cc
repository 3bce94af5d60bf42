#include "src/mcp/line_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace toolcache::mcp {
namespace {

struct Collected {
  std::vector<std::string> lines;
  std::vector<uint64_t> overflows;
  std::string streamed;
};

void Feed(LineReader& r, std::string_view bytes, bool stream, Collected& c) {
  r.Feed(
      bytes, stream, [&](std::string_view l) { c.lines.emplace_back(l); },
      [&](uint64_t n) { c.overflows.push_back(n); },
      [&](std::string_view part, bool end) {
        c.streamed.append(part);
        if (end) c.streamed.push_back('\n');
      });
}

TEST(LineReaderTest, ReassemblesLinesSplitAcrossChunks) {
  LineReader r(100);
  Collected c;
  Feed(r, "{\"a\":", false, c);
  Feed(r, "1}\n{\"b\"", false, c);
  Feed(r, ":2}\n\n{\"c\":3}\n", false, c);
  EXPECT_EQ(c.lines, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "",
                                               "{\"c\":3}"}));
  EXPECT_FALSE(r.has_partial());
  Feed(r, "tail", false, c);
  EXPECT_TRUE(r.has_partial());
  EXPECT_EQ(r.TakePartial(), "tail");
}

TEST(LineReaderTest, DiscardsOverlongLineAndKeepsGoing) {
  LineReader r(8);
  Collected c;
  Feed(r, "0123456789", false, c);
  Feed(r, "abc\nok\n", false, c);
  EXPECT_EQ(c.overflows, (std::vector<uint64_t>{13}));
  EXPECT_EQ(c.lines, (std::vector<std::string>{"ok"}));
  EXPECT_TRUE(c.streamed.empty());
}

TEST(LineReaderTest, StreamsOverlongLineWhenAsked) {
  LineReader r(4);
  Collected c;
  Feed(r, "abcdef", true, c);
  Feed(r, "gh\nxy\n", true, c);
  EXPECT_EQ(c.streamed, "abcdefgh\n");
  EXPECT_EQ(c.overflows, (std::vector<uint64_t>{8}));
  EXPECT_EQ(c.lines, (std::vector<std::string>{"xy"}));
}

}  // namespace
}  // namespace toolcache::mcp
