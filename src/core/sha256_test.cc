// SHA-256 against the FIPS 180-2 test vectors, and streaming == one-shot.
#include "src/core/sha256.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace toolcache {
namespace {

TEST(Sha256, MatchesFipsVectors) {
  EXPECT_EQ(ToHex(ComputeSha256("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(ToHex(ComputeSha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(ToHex(ComputeSha256(
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, StreamingEqualsOneShot) {
  const std::string msg(1000, 'a');
  Sha256 h;
  for (size_t i = 0; i < msg.size(); i += 7) h.Update(msg.substr(i, 7));
  EXPECT_EQ(h.Finish(), ComputeSha256(msg));
}

// Contexts are kept per thread and re-initialised (sha256.cc): a digest
// started on a kept context must not see anything of its last use --
// abandoned half-way, finished, copied into, many alive at once, another
// thread's.
TEST(Sha256, KeptContextsStartFresh) {
  const std::string abc =
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  auto check = [&] {
    {
      Sha256 abandoned;  // updated, never finished, given back
      abandoned.Update("left over");
    }
    EXPECT_EQ(ToHex(ComputeSha256("abc")), abc);
    std::vector<std::unique_ptr<Sha256>> alive;
    for (int i = 0; i < 9; ++i) {  // more than the thread keeps
      alive.push_back(std::make_unique<Sha256>());
      alive.back()->Update(std::string(static_cast<size_t>(i), 'x'));
    }
    alive.clear();
    for (int i = 0; i < 9; ++i) {
      Sha256 h;
      h.Update("a");
      h.Update("bc");
      EXPECT_EQ(ToHex(h.Finish()), abc) << i;
    }
    Sha256 base;
    base.Update("ab");
    {
      Sha256 copy;
      copy.Update("junk");
      copy.CopyFrom(base);
      copy.Update("c");
      EXPECT_EQ(ToHex(copy.Finish()), abc);
    }
    Sha256 after;  // the copy's context, given back, starts fresh
    after.Update("abc");
    EXPECT_EQ(ToHex(after.Finish()), abc);
  };
  check();
  std::thread other(check);
  other.join();
  check();
}

}  // namespace
}  // namespace toolcache
