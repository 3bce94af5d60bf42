// ByteBuffer growth (malloc, then its own mapping) and OutQueue ordering.
#include "src/mcp/byte_buffer.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace toolcache::mcp {
namespace {

std::string Pattern(size_t n) {
  std::string s;
  s.reserve(n);
  for (size_t i = 0; i < n; ++i) s.push_back(static_cast<char>('a' + i % 23));
  return s;
}

TEST(ByteBufferTest, GrowsPastTheMappingThresholdKeepingEveryByte) {
  const std::string want = Pattern(5u << 20);  // 5 MiB in 64 KiB steps
  ByteBuffer b;
  for (size_t at = 0; at < want.size(); at += 65536) {
    b.Append(std::string_view(want).substr(at, 65536));
  }
  EXPECT_EQ(b.size(), want.size());
  EXPECT_GE(b.capacity(), want.size());
  EXPECT_TRUE(b.view() == want);
  // Moving hands over the block itself.
  const char* at = b.view().data();
  ByteBuffer moved = std::move(b);
  EXPECT_EQ(moved.view().data(), at);
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.capacity(), 0u);
  // Clear keeps a small block, frees a big one.
  moved.Clear(size_t{1} << 20);
  EXPECT_EQ(moved.capacity(), 0u);
  ByteBuffer small;
  small.Append("abc");
  small.Clear(size_t{1} << 20);
  EXPECT_TRUE(small.empty());
  EXPECT_GT(small.capacity(), 0u);
  small.Append("de");
  EXPECT_EQ(small.view(), "de");
}

TEST(OutQueueTest, WritesCopiesOwnedBlocksAndSharedBytesInOrder) {
  OutQueue q;
  q.Push("one\n");
  ByteBuffer block;
  block.Append("two");
  q.PushOwned(std::move(block));
  q.Push("\n");
  auto stored = std::make_shared<const std::string>("<three>");
  q.PushShared(std::string_view(*stored).substr(1, 5), stored);
  OutQueue later;
  later.Push("four");
  q.Splice(later);
  EXPECT_TRUE(later.empty());
  EXPECT_EQ(q.size(), 17u);
  // Drain in uneven writes of at most 3 bytes.
  std::string written;
  while (!q.empty()) {
    const std::string_view f = q.Front();
    const size_t n = f.size() < 3 ? f.size() : 3;
    written.append(f.substr(0, n));
    q.Consume(n);
  }
  EXPECT_EQ(written, "one\ntwo\nthreefour");
  EXPECT_EQ(q.size(), 0u);
}

TEST(OutQueueTest, SharedBytesStayAliveWhileQueued) {
  OutQueue q;
  {
    auto stored = std::make_shared<const std::string>(std::string(1000, 'x'));
    q.PushShared(*stored, stored);
  }  // the store dropped its reference (e.g. evicted)
  EXPECT_EQ(q.Front(), std::string(1000, 'x'));
}

}  // namespace
}  // namespace toolcache::mcp
