// SHA-256 against the FIPS 180-2 test vectors, and streaming == one-shot.
#include "src/core/sha256.h"

#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace toolcache
