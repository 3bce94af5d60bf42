// CallPreparer: the preparation stage ToolCache and the simulator share.
#include "src/cache/prepare.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "toolcache/canonical_json.h"
#include "toolcache/classifier.h"
#include "toolcache/config.h"

namespace toolcache::cache_internal {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

ToolInfo ReadOnly(std::string name) {
  ToolInfo t;
  t.name = std::move(name);
  t.annotations = ToolAnnotations{.read_only = true, .open_world = false};
  return t;
}

TEST(CallPreparerTest, CacheableCallGetsTheFaceKeyAndFeatures) {
  CallPreparer prep{Config()};
  const ToolInfo tool = ReadOnly("get_value");
  PreparedCall p = prep.Prepare({.server = "kv",
                                 .scope = "tenant",
                                 .tool = "get_value",
                                 .arguments_json = R"({"b":2, "a":1})"},
                                &tool);
  ASSERT_TRUE(p.verdict.cacheable) << p.verdict.detail;
  ASSERT_FALSE(p.refusal);
  ASSERT_TRUE(p.key);
  Result<CacheKey> want =
      MakeCacheKey("tenant", "kv", "get_value", R"({"a":1,"b":2})");
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(*p.key, *want);
  EXPECT_EQ(p.user, "tenant");  // no user: the scope groups
  EXPECT_NE(p.category, 0u);    // two arguments: the first in byte order
}

TEST(CallPreparerTest, ReorderedArgumentsShareKeyAndCategory) {
  CallPreparer prep{Config()};
  const ToolInfo tool = ReadOnly("get_value");
  PreparedCall a = prep.Prepare({.server = "kv",
                                 .tool = "get_value",
                                 .arguments_json = R"({"x":1,"y":2})"},
                                &tool);
  PreparedCall b = prep.Prepare({.server = "kv",
                                 .tool = "get_value",
                                 .arguments_json = R"({"y":2,"x":1})"},
                                &tool);
  ASSERT_TRUE(a.key && b.key);
  EXPECT_EQ(*a.key, *b.key);
  EXPECT_EQ(a.category, b.category);
}

TEST(CallPreparerTest, AbsentAndNullArgumentsAreTheEmptyObject) {
  CallPreparer prep{Config()};
  const ToolInfo tool = ReadOnly("list");
  for (std::string_view args : {"", "null", "  null \n", "{}"}) {
    PreparedCall p = prep.Prepare(
        {.server = "s", .tool = "list", .arguments_json = args}, &tool);
    EXPECT_EQ(p.args, "{}") << args;
    ASSERT_TRUE(p.key) << args;
    EXPECT_EQ(p.key->canonical_args, "{}");
  }
}

TEST(CallPreparerTest, CommandListsTheNormalizedResourcesItTouches) {
  CallPreparer prep{Config()};
  PreparedCall p = prep.Prepare(
      {.server = "fs",
       .tool = "write_file",
       .arguments_json =
           R"({"content":"x","path":"/d/../d/y","paths":["file:///a%20b"]})"},
      nullptr);
  EXPECT_FALSE(p.verdict.cacheable);
  EXPECT_EQ(p.verdict.request_type, RequestType::kCommand);
  EXPECT_THAT(p.resources, ElementsAre("/d/y", "/a b"));
  EXPECT_FALSE(p.key);
}

TEST(CallPreparerTest, ReadResourcesOnlyWhenAsked) {
  CallPreparer prep{Config()};
  const ToolInfo tool = ReadOnly("read_file");
  const ToolCall call{.server = "fs",
                      .tool = "read_file",
                      .arguments_json = R"({"path":"/x/./y"})"};
  EXPECT_THAT(prep.Prepare(call, &tool).resources, IsEmpty());
  EXPECT_THAT(prep.Prepare(call, &tool, /*read_resources=*/true).resources,
              ElementsAre("/x/y"));
}

TEST(CallPreparerTest, UserScopeWithoutUserIsRefusedWithItsReason) {
  Config config;
  config.servers["mail"].scope = SharingScope::kUser;
  CallPreparer prep(config);
  const ToolInfo tool = ReadOnly("list_mail");
  PreparedCall p = prep.Prepare(
      {.server = "mail", .tool = "list_mail", .arguments_json = "{}"}, &tool);
  EXPECT_EQ(p.sharing, SharingScope::kUser);
  ASSERT_TRUE(p.refusal);
  EXPECT_EQ(p.refusal->reason, VerdictReason::kUserRequired);
  EXPECT_EQ(p.refusal->name, "user_required");
  EXPECT_FALSE(p.refusal->before_state);
  // Another server keeps the global scope: no refusal, the scope as given.
  PreparedCall q = prep.Prepare(
      {.server = "kv", .tool = "list_mail", .arguments_json = "{}"}, &tool);
  EXPECT_EQ(q.sharing, SharingScope::kGlobal);
  ASSERT_TRUE(q.key);
  EXPECT_EQ(q.key->scope, "");
  // With users, two users never share a key scope.
  PreparedCall u1 = prep.Prepare({.server = "mail",
                                  .tool = "list_mail",
                                  .arguments_json = "{}",
                                  .user = "ann"},
                                 &tool);
  PreparedCall u2 = prep.Prepare({.server = "mail",
                                  .tool = "list_mail",
                                  .arguments_json = "{}",
                                  .user = "bob"},
                                 &tool);
  ASSERT_TRUE(u1.key && u2.key);
  EXPECT_NE(u1.key->scope, u2.key->scope);
}

TEST(CallPreparerTest, TaskAugmentedCallIsRefusedBeforeTheServerState) {
  CallPreparer prep{Config()};
  const ToolInfo tool = ReadOnly("get_value");
  PreparedCall p = prep.Prepare({.server = "kv",
                                 .tool = "get_value",
                                 .arguments_json = "{}",
                                 .task_augmented = true},
                                &tool);
  ASSERT_TRUE(p.refusal);
  EXPECT_EQ(p.refusal->reason, VerdictReason::kIncompleteResult);
  EXPECT_TRUE(p.refusal->before_state);
}

TEST(CallPreparerTest, ArgumentsWithoutCanonicalFormAreRefused) {
  CallPreparer prep{Config()};
  const ToolInfo tool = ReadOnly("get_value");
  PreparedCall p = prep.Prepare(
      {.server = "kv", .tool = "get_value", .arguments_json = "[1,2]"}, &tool);
  ASSERT_TRUE(p.refusal);
  EXPECT_EQ(p.refusal->reason, VerdictReason::kInvalidArguments);
  EXPECT_EQ(p.refusal->name, "invalid_arguments");
}

// A repeated call takes its verdict from the memo of the definitions it
// was classified against; with an extra classifier layer (which the memo
// cannot see into) nothing is remembered.
TEST(CallPreparerTest, VerdictMemoRemembersDeterministicVerdictsOnly) {
  const ToolInfo tool = ReadOnly("get_value");
  const ToolCall call{
      .server = "kv", .tool = "get_value", .arguments_json = R"({"k":1})"};
  CallPreparer prep{Config()};
  VerdictMemo memo;
  EXPECT_FALSE(memo.Find("kv", "get_value", R"({"k":1})"));
  PreparedCall first = prep.Prepare(call, &tool, false, &memo);
  std::optional<Verdict> kept = memo.Find("kv", "get_value", R"({"k":1})");
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->cacheable, first.verdict.cacheable);
  EXPECT_EQ(kept->detail, first.verdict.detail);
  // The memo's verdict is the one used: a planted entry shows through.
  Verdict planted = first.verdict;
  planted.detail = "from the memo";
  memo.Put("kv", "get_value", R"({"k":1})", planted);
  EXPECT_EQ(prep.Prepare(call, &tool, false, &memo).verdict.detail,
            "from the memo");
  // Long arguments are not remembered.
  const std::string big =
      R"({"k":")" + std::string(VerdictMemo::kMaxArgs, 'x') + R"("})";
  prep.Prepare({.server = "kv", .tool = "get_value", .arguments_json = big},
               &tool, false, &memo);
  EXPECT_FALSE(memo.Find("kv", "get_value", big));

  struct Opinionless : FeatureExtractor {
    FeatureSource source() const override { return FeatureSource::kHeuristic; }
    std::optional<Features> Extract(const ToolInfo&,
                                    std::string_view) const override {
      return std::nullopt;
    }
  };
  std::vector<std::unique_ptr<FeatureExtractor>> extra;
  extra.push_back(std::make_unique<Opinionless>());
  CallPreparer with_extra{Config(), std::move(extra)};
  VerdictMemo untouched;
  with_extra.Prepare(call, &tool, false, &untouched);
  EXPECT_FALSE(untouched.Find("kv", "get_value", R"({"k":1})"));
}

TEST(CallPreparerTest, IsAFunctionOfItsInputs) {
  Config config;
  config.ttl_seconds = 77;
  CallPreparer prep(config);
  const ToolInfo tool = ReadOnly("get_value");
  const ToolCall call{.server = "kv",
                      .tool = "get_value",
                      .arguments_json = R"({"k":"v","n":3})"};
  PreparedCall a = prep.Prepare(call, &tool);
  PreparedCall b = prep.Prepare(call, &tool);
  ASSERT_TRUE(a.key && b.key);
  EXPECT_EQ(*a.key, *b.key);
  EXPECT_EQ(a.category, b.category);
  EXPECT_EQ(a.verdict.cacheable, b.verdict.cacheable);
  EXPECT_EQ(a.verdict.ttl_seconds, b.verdict.ttl_seconds);
  EXPECT_EQ(a.verdict.reason, b.verdict.reason);
}

// Session 18: /v1/invalidate counts the caller's own entries: a key scope
// belongs to the call scope it was made from (itself, or one of its users'
// under `scope: user`), never to a scope whose name merely starts alike.
TEST(KeyScopeOf, OwnsItsScopeAndItsUsersScopesOnly) {
  Result<Config> config = ParseConfig("scope: user\n", "t.yaml");
  ASSERT_TRUE(config.ok());
  CallPreparer prep(*config);
  auto key_scope = [&](std::string scope, std::string user) {
    ToolCall c{.server = "s", .tool = "get_doc", .arguments_json = "{}"};
    c.scope = scope;
    c.user = user;
    const ToolInfo tool = ReadOnly("get_doc");
    PreparedCall p = prep.Prepare(c, &tool);
    return p.key ? p.key->scope : std::string("<none>");
  };
  EXPECT_TRUE(KeyScopeOf("alice", "alice"));
  EXPECT_TRUE(KeyScopeOf(key_scope("alice", "u1"), "alice"));
  EXPECT_TRUE(KeyScopeOf(key_scope("alice", "2:bob"), "alice"));
  EXPECT_FALSE(KeyScopeOf(key_scope("alice", "u1"), "alic"));
  EXPECT_FALSE(KeyScopeOf(key_scope("alice2", "u1"), "alice"));
  EXPECT_FALSE(KeyScopeOf(key_scope("bob", "u1"), "alice"));
  EXPECT_FALSE(KeyScopeOf("alice2", "alice"));
  EXPECT_FALSE(KeyScopeOf("", "alice"));
  // The global scope (serve without tenants) owns its users' entries.
  EXPECT_TRUE(KeyScopeOf(key_scope("", "u1"), ""));
  EXPECT_FALSE(KeyScopeOf(key_scope("a", "u1"), ""));
}

// Session 19: an /mcp/<name> session's entries are its tenant's (the
// tenant's scope, then its roots after '\x1e' or its envelope's era after
// '\x1f'), so /v1/invalidate's entriesDropped counts them.
TEST(KeyScopeOf, OwnsItsMcpSessionsEntries) {
  EXPECT_TRUE(KeyScopeOf("alice\x1e[\"file:///w\"]", "alice"));
  EXPECT_TRUE(
      KeyScopeOf("alice\x1f"
                 "era-2026",
                 "alice"));
  EXPECT_TRUE(KeyScopeOf("\x1froots:unasked", ""));
  EXPECT_FALSE(
      KeyScopeOf("alice2\x1f"
                 "era",
                 "alice"));
  EXPECT_FALSE(KeyScopeOf("bob\x1e[]", "alice"));
  EXPECT_FALSE(KeyScopeOf("alice\x1dx", "alice"));
}

}  // namespace
}  // namespace toolcache::cache_internal
