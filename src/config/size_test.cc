// ParseSize: every input either former parser accepted (the configuration's
// Bytes, the store's ParseBytes) keeps its value; the refusals name why.
#include "src/config/size.h"

#include <gtest/gtest.h>

#include <string>

namespace toolcache::config {
namespace {

uint64_t Ok(std::string_view s) {
  Result<uint64_t> r = ParseSize(s);
  EXPECT_TRUE(r.ok()) << s << ": " << r.status().message();
  return r.ok() ? *r : 0;
}

std::string Err(std::string_view s) {
  Result<uint64_t> r = ParseSize(s);
  EXPECT_FALSE(r.ok()) << s << " was accepted as " << (r.ok() ? *r : 0);
  return r.ok() ? "" : std::string(r.status().message());
}

TEST(ParseSize, PlainNumbersAndEveryUnit) {
  EXPECT_EQ(Ok("0"), 0u);
  EXPECT_EQ(Ok("512"), 512u);
  EXPECT_EQ(Ok("67108864"), 67108864u);
  EXPECT_EQ(Ok("10B"), 10u);
  EXPECT_EQ(Ok("2KB"), 2000u);
  EXPECT_EQ(Ok("3MB"), 3000000u);
  EXPECT_EQ(Ok("1GB"), 1000000000u);
  EXPECT_EQ(Ok("1TB"), 1000000000000u);
  EXPECT_EQ(Ok("64KiB"), 65536u);
  EXPECT_EQ(Ok("64MiB"), 67108864u);
  EXPECT_EQ(Ok("1GiB"), 1073741824u);
  EXPECT_EQ(Ok("1TiB"), 1099511627776u);
}

TEST(ParseSize, WhatTheConfigurationParserAccepted) {
  // Case-insensitive, a blank between number and unit, fractions rounded.
  EXPECT_EQ(Ok("64mib"), 67108864u);
  EXPECT_EQ(Ok("64 MiB"), 67108864u);
  EXPECT_EQ(Ok("1.5KiB"), 1536u);
  EXPECT_EQ(Ok(".5KiB"), 512u);
  EXPECT_EQ(Ok("1.5"), 2u);
  EXPECT_EQ(Ok("64MiB "), 67108864u);
}

TEST(ParseSize, WhatTheStoreParserAccepted) {
  EXPECT_EQ(Ok("1GiB"), 1073741824u);
  EXPECT_EQ(Ok("256MiB"), 268435456u);
  EXPECT_EQ(Ok("65536"), 65536u);
  EXPECT_EQ(Ok("0.5MB"), 500000u);
}

TEST(ParseSize, RefusalsSayWhy) {
  EXPECT_NE(Err("").find("no number"), std::string::npos);
  EXPECT_NE(Err("MiB").find("no number"), std::string::npos);
  EXPECT_NE(Err("-1").find("no number"), std::string::npos);
  EXPECT_NE(Err("+1").find("no number"), std::string::npos);
  EXPECT_NE(Err("64 parsecs").find("unknown unit 'parsecs'"),
            std::string::npos);
  EXPECT_NE(Err("1e3").find("unexpected text"), std::string::npos);
  EXPECT_NE(Err("1.2.3").find("unexpected text"), std::string::npos);
  EXPECT_NE(Err("64 M iB").find("unexpected text"), std::string::npos);
  EXPECT_NE(Err("0x10").find("unexpected text"), std::string::npos);
  EXPECT_NE(Err("20000000TB").find("too large"), std::string::npos);
  EXPECT_NE(Err("12 apples").find("got '12 apples'"), std::string::npos);
}

}  // namespace
}  // namespace toolcache::config
