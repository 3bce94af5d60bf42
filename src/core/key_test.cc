// CacheKey: the pinned digest encoding (golden digests computed once with an
// independent implementation: Python hashlib over the documented encoding),
// field separation, and the key builders.
#include "toolcache/key.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "src/core/key_internal.h"
#include "src/core/sha256.h"
#include "toolcache/canonical_json.h"

namespace toolcache {
namespace {

using ::testing::HasSubstr;

CacheKey Key(std::string scope, std::string server, std::string tool,
             std::string args) {
  return CacheKey{.scope = std::move(scope),
                  .server = std::move(server),
                  .tool = std::move(tool),
                  .canonical_args = std::move(args)};
}

// If one of these fails, the key encoding changed: every stored entry and
// every shared cache would silently miss. Do not update the constants; add a
// new key version instead (docs/KEYS.md).
TEST(CacheKey, GoldenDigestsAreStable) {
  EXPECT_EQ(Key("", "fs", "read_file", R"({"path":"/etc/hosts"})").DigestHex(),
            "fdbd8abc53b81eef74154ac4f132b0a81296b5e5a4cca72bf3240204903da4e2");
  EXPECT_EQ(
      Key("tenant-a", "weather", "get_forecast", R"({"city":"Paris","days":3})")
          .DigestHex(),
      "2a4e83c324db0ab71d3e044300cedba61f042ffef094839946e709f26ee92ec6");
  EXPECT_EQ(Key("", "", "", "").DigestHex(),
            "7ffc418044d979b0b49fd2d9d9f19a645d4fe6bfa1554e296ad898714fb1a63f");
}

TEST(CacheKey, EncodingIsTagThenBigEndianLengthPrefixedFields) {
  const std::string enc = EncodeKeyForDigest(Key("s", "ab", "", "{}"));
  const std::string want = std::string("toolcache.key.v1") +
                           std::string("\0\0\0\0\0\0\0\1s", 9) +
                           std::string("\0\0\0\0\0\0\0\2ab", 10) +
                           std::string("\0\0\0\0\0\0\0\0", 8) +
                           std::string("\0\0\0\0\0\0\0\2{}", 10);
  EXPECT_EQ(enc, want);
  EXPECT_EQ(ComputeSha256(enc), Key("s", "ab", "", "{}").Digest());
}

// Digest() hashes a short key's encoding in one piece and a long one's
// field by field: both must be SHA-256 of the documented encoding, on
// either side of the 512-byte switch.
TEST(CacheKey, DigestIsSha256OfTheEncodingForShortAndLongKeys) {
  for (size_t n : {0u, 1u, 400u, 447u, 448u, 449u, 450u, 511u, 512u, 4096u}) {
    const CacheKey k =
        Key("tenant", "srv", "tool", "{\"a\":\"" + std::string(n, 'x') + "\"}");
    EXPECT_EQ(k.Digest(), ComputeSha256(EncodeKeyForDigest(k))) << n;
  }
}

TEST(CacheKey, IdIsFirstEightDigestBytesBigEndian) {
  const CacheKey k = Key("", "fs", "read_file", R"({"path":"/etc/hosts"})");
  EXPECT_EQ(k.Id(), uint64_t{0xfdbd8abc53b81eef});
}

TEST(CacheKey, FieldBoundariesCannotBeShifted) {
  EXPECT_NE(Key("", "ab", "c", "{}").Digest(),
            Key("", "a", "bc", "{}").Digest());
  EXPECT_NE(Key("a", "b", "", "{}").Digest(), Key("", "ab", "", "{}").Digest());
  EXPECT_NE(Key("", "", "t", "{}").Digest(), Key("", "", "", "t{}").Digest());
  EXPECT_NE(Key("x", "", "", "").Digest(), Key("", "x", "", "").Digest());
}

TEST(CacheKey, EveryFieldTakesPartInEqualityAndDigest) {
  const CacheKey base = Key("u1", "srv", "tool", R"({"a":1})");
  for (CacheKey other : {Key("u2", "srv", "tool", R"({"a":1})"),
                         Key("u1", "srv2", "tool", R"({"a":1})"),
                         Key("u1", "srv", "tool2", R"({"a":1})"),
                         Key("u1", "srv", "tool", R"({"a":2})")}) {
    EXPECT_FALSE(base == other);
    EXPECT_NE(base.DigestHex(), other.DigestHex());
  }
  EXPECT_TRUE(base == Key("u1", "srv", "tool", R"({"a":1})"));
}

TEST(MakeCacheKey, EquivalentArgumentsShareAKey) {
  Result<CacheKey> a = MakeCacheKey("", "fs", "read", R"({"b":1.0,"a":"x"})");
  Result<CacheKey> b = MakeCacheKey(
      "", "fs", "read", "{ \"a\" : \"x\", \"b\" : 1, \"_meta\": {\"t\":1} }");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->canonical_args, R"({"a":"x","b":1})");
  EXPECT_TRUE(*a == *b);
  EXPECT_EQ(a->DigestHex(), b->DigestHex());
}

TEST(MakeCacheKey, HonoursIgnoredFields) {
  CanonicalOptions o;
  o.ignore_fields = {"request_id"};
  Result<CacheKey> a =
      MakeCacheKey("", "s", "t", R"({"q":1,"request_id":1})", o);
  Result<CacheKey> b =
      MakeCacheKey("", "s", "t", R"({"q":1,"request_id":2})", o);
  Result<CacheKey> c = MakeCacheKey("", "s", "t", R"({"q":1,"request_id":2})");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->Id(), b->Id());
  EXPECT_NE(a->Id(), c->Id());
}

TEST(MakeCacheKey, TextAndValueBuildersAgree) {
  const std::string args = R"({"z":[1e2,"\u00e9"],"a":{"y":null,"x":true}})";
  Result<CacheKey> a = MakeCacheKey("t", "s", "tool", args);
  Result<CacheKey> b =
      MakeCacheKeyFromValue("t", "s", "tool", nlohmann::json::parse(args));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(*a == *b);
}

TEST(MakeCacheKey, BadArgumentsNameTheProblem) {
  Result<CacheKey> k = MakeCacheKey("", "s", "t", R"({"a":1,"a":2})");
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(k.status().message(),
              HasSubstr("arguments: line 1, column 8 (byte 7): duplicate"));
}

// Tool arguments are an object in MCP and the LLM APIs; the simulator's
// replay rejects anything else, so the key builders do too.
TEST(MakeCacheKey, RejectsArgumentsThatAreNotAnObject) {
  const std::pair<const char*, const char*> cases[] = {
      {"[1]", "got an array"}, {" \"x\" ", "got a string"},
      {"3.0", "got a number"}, {"true", "got a boolean"},
      {"null", "got null"},    {"[{\"a\":1}]", "got an array"}};
  for (const auto& [args, want] : cases) {
    Result<CacheKey> text = MakeCacheKey("", "s", "t", args);
    ASSERT_FALSE(text.ok()) << args;
    EXPECT_EQ(text.status().code(), StatusCode::kInvalidArgument) << args;
    EXPECT_THAT(text.status().message(),
                HasSubstr("arguments: must be a JSON object"))
        << args;
    EXPECT_THAT(text.status().message(), HasSubstr(want)) << args;
    Result<CacheKey> value =
        MakeCacheKeyFromValue("", "s", "t", nlohmann::json::parse(args));
    ASSERT_FALSE(value.ok()) << args;
    EXPECT_EQ(value.status().message(), text.status().message()) << args;
  }
  // Bad JSON is still reported as such, not as a type problem.
  Result<CacheKey> bad = MakeCacheKey("", "s", "t", "[1,");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("arguments: line 1"));
  EXPECT_TRUE(MakeCacheKey("", "s", "t", " {} ").ok());
}

TEST(MakeCacheKey, NeverKeepsMetaEvenWhenAskedTo) {
  CanonicalOptions keep;
  keep.drop_meta = false;
  const std::string args = R"({"_meta":{"progressToken":1},"q":"a"})";
  Result<CacheKey> text = MakeCacheKey("", "s", "t", args, keep);
  Result<CacheKey> value =
      MakeCacheKeyFromValue("", "s", "t", nlohmann::json::parse(args), keep);
  ASSERT_TRUE(text.ok() && value.ok());
  EXPECT_EQ(text->canonical_args, R"({"q":"a"})");
  EXPECT_EQ(value->canonical_args, R"({"q":"a"})");
  // Plain canonicalization still keeps it when asked to.
  Result<std::string> plain = CanonicalizeJson(args, keep);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(*plain, R"({"_meta":{"progressToken":1},"q":"a"})");
}

TEST(MakeCacheKey, IntegersADoubleCannotHoldGetDifferentKeys) {
  Result<CacheKey> a = MakeCacheKey("", "s", "t", R"({"n":9007199254740993})");
  Result<CacheKey> b = MakeCacheKey("", "s", "t", R"({"n":9007199254740992})");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->canonical_args, b->canonical_args);
  EXPECT_NE(a->Digest(), b->Digest());
  EXPECT_EQ(a->canonical_args, R"({"n":9007199254740993})");
  // Spellings of the same integer share the key.
  Result<CacheKey> c =
      MakeCacheKey("", "s", "t", R"({"n":9.007199254740993e15})");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->canonical_args, a->canonical_args);
  // The value path agrees where the parser kept the integer...
  Result<CacheKey> v = MakeCacheKeyFromValue(
      "", "s", "t", nlohmann::json::parse(R"({"n":9007199254740993})"));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, *a);
  // ...and refuses (the call bypasses) where it did not.
  EXPECT_FALSE(
      MakeCacheKeyFromValue(
          "", "s", "t", nlohmann::json::parse(R"({"n":9007199254740993.0})"))
          .ok());
}

TEST(MakeCacheKey, OrdinaryArgumentsKeepTheirV1Digest) {
  // The pinned v1 digests still come out of the builder itself.
  Result<CacheKey> fs =
      MakeCacheKey("", "fs", "read_file", R"({ "path" : "/etc/hosts" })");
  ASSERT_TRUE(fs.ok());
  EXPECT_EQ(fs->DigestHex(),
            "fdbd8abc53b81eef74154ac4f132b0a81296b5e5a4cca72bf3240204903da4e2");
  Result<CacheKey> w = MakeCacheKey("tenant-a", "weather", "get_forecast",
                                    R"({"days":3.0,"city":"Paris"})");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->DigestHex(),
            "2a4e83c324db0ab71d3e044300cedba61f042ffef094839946e709f26ee92ec6");
}

}  // namespace
}  // namespace toolcache
