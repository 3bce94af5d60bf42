#include <gtest/gtest.h>

#include <string>

#include "src/http/http.h"

namespace toolcache::http {
namespace {

// The byte loop EqualsIgnoreCase was before hopR's eight-byte steps.
bool ByteLoop(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// Every pair of byte values at every position of a step and of the tail
// (lengths around the eight-byte step), the rest of both strings equal
// or differing only in case.
TEST(HttpUtil, EqualsIgnoreCaseMatchesTheByteLoop) {
  int mismatches = 0;
  int equal = 0;
  for (size_t len : {1u, 2u, 7u, 8u, 9u, 15u, 16u, 17u, 19u}) {
    for (size_t pos = 0; pos < len; ++pos) {
      std::string a(len, 'k');
      std::string b(len, 'K');
      for (int x = 0; x < 256; ++x) {
        for (int y = 0; y < 256; ++y) {
          a[pos] = static_cast<char>(x);
          b[pos] = static_cast<char>(y);
          const bool want = ByteLoop(a, b);
          equal += want;
          if (EqualsIgnoreCase(a, b) != want) ++mismatches;
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_GT(equal, 0);
  EXPECT_TRUE(EqualsIgnoreCase("Content-Length", "content-length"));
  EXPECT_FALSE(EqualsIgnoreCase("content-length", "content-lengti"));
  EXPECT_FALSE(EqualsIgnoreCase("x", "xy"));
  EXPECT_TRUE(EqualsIgnoreCase("", ""));
  // '@' / '[' and '`' / '{' border the letters; 0xc1 and 0xe1 differ by
  // 0x20 but are not ASCII.
  EXPECT_FALSE(EqualsIgnoreCase("@[@[@[@[@", "`{`{`{`{`"));
  EXPECT_FALSE(EqualsIgnoreCase("\xc1\xc1\xc1\xc1\xc1\xc1\xc1\xc1",
                                "\xe1\xe1\xe1\xe1\xe1\xe1\xe1\xe1"));
}

}  // namespace
}  // namespace toolcache::http
