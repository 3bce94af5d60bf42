// SipHash against the paper's reference vectors (SipHash-2-4, key
// 00..0f, messages 00..(n-1)), and the properties the fingerprints rely on:
// the key changes every value, one byte changes the value.
#include "src/core/siphash.h"

#include <gtest/gtest.h>

#include <string>

namespace toolcache {
namespace {

SipKey PaperKey() {
  // Bytes 00..0f, read little-endian.
  return {0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL};
}

std::string Prefix(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s.push_back(static_cast<char>(i));
  return s;
}

TEST(SipHash, PaperVectors) {
  // Appendix A of the paper (15 bytes) and the reference vectors.h
  // (the empty message and 8 bytes: one whole block and the length block).
  EXPECT_EQ(SipHash24(PaperKey(), Prefix(15)), 0xa129ca6149be45e5ULL);
  EXPECT_EQ(SipHash24(PaperKey(), Prefix(0)), 0x726fdb47dd0e0e31ULL);
  EXPECT_EQ(SipHash24(PaperKey(), Prefix(8)), 0x93f5f5799a932462ULL);
}

TEST(SipHash, KeyedAndSensitive) {
  const SipKey a = SipKey::Random(), b = SipKey::Random();
  ASSERT_FALSE(a.k0 == b.k0 && a.k1 == b.k1);
  const std::string m = "{\"role\":\"user\",\"content\":\"hi\"}";
  EXPECT_NE(SipHash13(a, m), SipHash13(b, m));
  EXPECT_EQ(SipHash13(a, m), SipHash13(a, std::string(m)));
  std::string other = m;
  other[10] ^= 1;
  EXPECT_NE(SipHash13(a, m), SipHash13(a, other));
  EXPECT_NE(SipHash13(a, m), SipHash24(a, m));
  EXPECT_NE(SipHash13(a, ""), SipHash13(a, std::string(1, '\0')));
}

}  // namespace
}  // namespace toolcache
