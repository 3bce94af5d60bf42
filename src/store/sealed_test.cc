// SealValue/UnsealValue: round trips, and every damage is refused.
#include "src/store/sealed.h"

#include <gtest/gtest.h>

#include <string>

namespace toolcache {
namespace {

TEST(SealedValue, RoundTripsAnyBytes) {
  for (const std::string& p :
       {std::string(), std::string("x"), std::string("a\0b\n\xff", 5),
        std::string(100000, 'z')}) {
    const std::string sealed = SealValue(p);
    EXPECT_EQ(sealed.size(), p.size() + 8);
    std::optional<std::string_view> back = UnsealValue(sealed);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, p);
  }
}

TEST(SealedValue, EveryFlippedByteCutOrExtensionIsRefused) {
  const std::string sealed = SealValue(R"([{"role":"assistant"}])");
  for (size_t i = 0; i < sealed.size(); ++i) {
    std::string bad = sealed;
    bad[i] ^= 0x5a;
    EXPECT_FALSE(UnsealValue(bad).has_value()) << "byte " << i;
  }
  for (size_t n = 0; n < sealed.size(); ++n) {
    EXPECT_FALSE(UnsealValue(sealed.substr(0, n)).has_value()) << n;
  }
  EXPECT_FALSE(UnsealValue(sealed + "x").has_value());
  // A value written without a seal (an older version, another writer).
  EXPECT_FALSE(UnsealValue(R"([{"role":"assistant"}])").has_value());
}

}  // namespace
}  // namespace toolcache
