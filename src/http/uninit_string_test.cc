// Invariants: ResizeForOverwrite gives the size asked, keeps the bytes
// below the old size, keeps a terminator, and does not lose capacity the
// caller reserved (the server's kBodyPadding contract, http.h).
#include "src/http/uninit_string.h"

#include <gtest/gtest.h>

#include <string>

#include "src/http/http.h"

namespace toolcache::http {
namespace {

TEST(ResizeForOverwrite, GrowsKeepsThePrefixAndTheReservedPadding) {
  std::string s = "head";
  s.reserve(200000 + kBodyPadding);
  const char* data = s.data();
  ResizeForOverwrite(&s, 200000);
  EXPECT_EQ(s.size(), 200000u);
  EXPECT_EQ(s.data(), data);  // no reallocation within the reservation
  EXPECT_GE(s.capacity(), s.size() + kBodyPadding);
  EXPECT_EQ(s.compare(0, 4, "head"), 0);
  EXPECT_EQ(s.c_str()[200000], '\0');
  for (size_t i = 4; i < s.size(); ++i) s[i] = static_cast<char>('a' + i % 26);
  EXPECT_EQ(s[4], 'e');
  EXPECT_EQ(s[199999], static_cast<char>('a' + 199999 % 26));
}

TEST(ResizeForOverwrite, GrowsBeyondTheCapacityAndShrinks) {
  std::string s = "abc";
  ResizeForOverwrite(&s, 1000);  // past the capacity: reallocates
  EXPECT_EQ(s.size(), 1000u);
  EXPECT_EQ(s.compare(0, 3, "abc"), 0);
  EXPECT_EQ(s.c_str()[1000], '\0');
  ResizeForOverwrite(&s, 2);
  EXPECT_EQ(s, "ab");
  ResizeForOverwrite(&s, 0);
  EXPECT_TRUE(s.empty());
}

}  // namespace
}  // namespace toolcache::http
