// Tests for ParseConfig / LoadConfigFile: every key, defaults, and errors
// that name the line and give a hint.
#include "toolcache/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace toolcache {
namespace {

using ::testing::HasSubstr;

TEST(ConfigTest, EmptyDocumentYieldsDocumentedDefaults) {
  Result<Config> c = ParseConfig("", "empty.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->capacity_bytes, 64ull << 20);
  EXPECT_EQ(c->max_entries, 0u);
  EXPECT_EQ(c->policy, "vaac");
  EXPECT_EQ(c->ttl_seconds, 300);
  EXPECT_EQ(c->min_cacheable_ttl_seconds, 60);
  EXPECT_TRUE(c->trust_annotations);
  EXPECT_EQ(c->invalidation, InvalidationScope::kServer);
  EXPECT_EQ(c->scope, SharingScope::kGlobal);
  EXPECT_TRUE(c->exclude_tools.empty());
  EXPECT_EQ(c->source, "empty.yaml");
}

TEST(ConfigTest, ParsesEveryKey) {
  Result<Config> c = ParseConfig(R"(
capacityBytes: 64MiB
maxEntries: 1000
policy: lru
policyParams: {lambda1: 0.5, lambda3: -1}
ttlSeconds: 120
minCacheableTtlSeconds: 0
excludeTools: [foo, bar]
perToolTtl: {read_file: 30, git_log: 300}
trustAnnotations: false
invalidation: resource
scope: user
tools:
  get_weather: {requestType: INFORMATIONAL, ttlSeconds: 600, parameterCategory: location}
  send_digest: {requestType: COMMAND}
servers:
  github:
    trustAnnotations: true
    ttlSeconds: 900
    excludeTools: [star_repository]
    perToolTtl: {list_issues: 30}
    tools:
      search_code: {ttlSeconds: 1200}
)",
                                 "full.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->capacity_bytes, 64ull * 1024 * 1024);
  EXPECT_EQ(c->max_entries, 1000u);
  EXPECT_EQ(c->policy, "lru");
  EXPECT_EQ(c->policy_line, 4);
  EXPECT_EQ(c->policy_params.at("lambda1"), 0.5);
  EXPECT_EQ(c->policy_params.at("lambda3"), -1);
  EXPECT_EQ(c->ttl_seconds, 120);
  EXPECT_EQ(c->min_cacheable_ttl_seconds, 0);
  EXPECT_THAT(c->exclude_tools, ::testing::ElementsAre("foo", "bar"));
  EXPECT_EQ(c->per_tool_ttl.at("read_file"), 30);
  EXPECT_FALSE(c->trust_annotations);
  EXPECT_EQ(c->invalidation, InvalidationScope::kResource);
  EXPECT_EQ(c->scope, SharingScope::kUser);
  const ToolConfig& w = c->tools.at("get_weather");
  EXPECT_EQ(w.request_type, RequestType::kInformational);
  EXPECT_EQ(w.ttl_seconds, 600);
  EXPECT_EQ(w.parameter_category, "location");
  EXPECT_EQ(c->tools.at("send_digest").request_type, RequestType::kCommand);
  const ServerConfig& g = c->servers.at("github");
  EXPECT_EQ(g.trust_annotations, true);
  EXPECT_EQ(g.ttl_seconds, 900);
  EXPECT_THAT(g.exclude_tools, ::testing::ElementsAre("star_repository"));
  EXPECT_EQ(g.per_tool_ttl.at("list_issues"), 30);
  EXPECT_EQ(g.tools.at("search_code").ttl_seconds, 1200);
}

TEST(ConfigTest, ParsesTheProxyBlockNextToThePrxyKeys) {
  Result<Config> c = ParseConfig(R"(tool-cache:
  ttlSeconds: 60
  excludeTools: [send_email]
  perToolTtl: {Read: 120}
  proxy:
    upstream: http://127.0.0.1:9000
    openaiUpstream: https://api.openai.com
    scope: global
    clientName: claude-code
    maxBodyBytes: 8MiB
    maxDepth: 64
    responseTimeoutSeconds: 30
)",
                                 "p.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->ttl_seconds, 60);
  EXPECT_EQ(c->per_tool_ttl.at("Read"), 120);
  EXPECT_EQ(*c->proxy.upstream, "http://127.0.0.1:9000");
  EXPECT_EQ(*c->proxy.openai_upstream, "https://api.openai.com");
  EXPECT_FALSE(c->proxy.anthropic_upstream.has_value());
  EXPECT_EQ(*c->proxy.scope, "global");
  EXPECT_EQ(*c->proxy.client_name, "claude-code");
  EXPECT_EQ(*c->proxy.max_body_bytes, 8u << 20);
  EXPECT_EQ(*c->proxy.max_depth, 64u);
  EXPECT_EQ(*c->proxy.response_timeout_seconds, 30);
  Result<Config> bad = ParseConfig("proxy:\n  scope: shared\n", "p.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              ::testing::HasSubstr("p.yaml:2: 'proxy.scope' must be one of"));
  Result<Config> typo = ParseConfig("proxy:\n  upstrem: x\n", "p.yaml");
  ASSERT_FALSE(typo.ok());
  EXPECT_THAT(typo.status().message(),
              ::testing::HasSubstr("did you mean 'upstream'"));
}

TEST(ConfigTest, ProxyCredentialHeaders) {
  Result<Config> c = ParseConfig(
      "proxy:\n  credentialHeaders: [x-gateway-user, X-Tenant]\n", "p.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->proxy.credential_headers,
            (std::vector<std::string>{"x-gateway-user", "X-Tenant"}));
  EXPECT_TRUE(
      ParseConfig("proxy: {}\n", "p.yaml")->proxy.credential_headers.empty());
  Result<Config> bad =
      ParseConfig("proxy:\n  credentialHeaders: ['x-a: b']\n", "p.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              ::testing::HasSubstr("not a header name"));
}

// Session 19 (attackK finding 3): a gateway's query parameter of any name.
TEST(ConfigTest, ProxyCredentialQuery) {
  Result<Config> c =
      ParseConfig("proxy:\n  credentialQuery: [tenant, X-Gw]\n", "p.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->proxy.credential_query,
            (std::vector<std::string>{"tenant", "X-Gw"}));
  EXPECT_TRUE(
      ParseConfig("proxy: {}\n", "p.yaml")->proxy.credential_query.empty());
  EXPECT_FALSE(ParseConfig("proxy:\n  credentialQuery: ['']\n", "p.yaml").ok());
  for (const char* bad : {"'a=b'", "'?key'", "'a&b'", "'a b'"}) {
    Result<Config> r = ParseConfig(
        std::string("proxy:\n  credentialQuery: [") + bad + "]\n", "p.yaml");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_THAT(r.status().message(),
                ::testing::HasSubstr("not a query parameter name"));
  }
}

TEST(ConfigTest, ProxyDrainTimeout) {
  Result<Config> c =
      ParseConfig("proxy:\n  drainTimeoutSeconds: 2.5\n", "p.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(*c->proxy.drain_timeout_seconds, 2.5);
  EXPECT_FALSE(ParseConfig("proxy:\n  upstream: x\n", "p.yaml")
                   ->proxy.drain_timeout_seconds.has_value());
  Result<Config> bad =
      ParseConfig("proxy:\n  drainTimeoutSeconds: -1\n", "p.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              ::testing::HasSubstr("'proxy.drainTimeoutSeconds' must be >= 0"));
}

TEST(ConfigTest, ParsesThePromptCacheBlock) {
  Result<Config> c = ParseConfig(R"(promptCache:
  stabilizeTools: true
  placeCacheControl: true
  cacheLastTurn: false
  ttl: 1h
  minCacheableTokens: 2048
  detectBreaks: true
  breakMinFraction: 0.1
  keepBreaks: 5
)",
                                 "p.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(*c->prompt_cache.stabilize_tools);
  EXPECT_TRUE(*c->prompt_cache.place_cache_control);
  EXPECT_FALSE(*c->prompt_cache.cache_last_turn);
  EXPECT_FALSE(c->prompt_cache.cache_system.has_value());
  EXPECT_EQ(*c->prompt_cache.ttl, "1h");
  EXPECT_EQ(*c->prompt_cache.min_cacheable_tokens, 2048u);
  EXPECT_EQ(*c->prompt_cache.break_min_fraction, 0.1);
  EXPECT_EQ(*c->prompt_cache.keep_breaks, 5u);
  Result<Config> bad = ParseConfig("promptCache:\n  ttl: 10m\n", "p.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              ::testing::HasSubstr("'promptCache.ttl' must be one of"));
  Result<Config> typo =
      ParseConfig("promptCache:\n  stabiliseTools: true\n", "p.yaml");
  ASSERT_FALSE(typo.ok());
  EXPECT_THAT(typo.status().message(),
              ::testing::HasSubstr("did you mean 'stabilizeTools'"));
}

TEST(ConfigTest, CapacityAcceptsDecimalAndBinaryUnits) {
  struct Case {
    const char* text;
    uint64_t bytes;
  } cases[] = {{"123", 123},
               {"\"1.5KB\"", 1500},
               {"2 GiB", 2ull << 30},
               {"10mb", 10000000},
               {"512KiB", 512 * 1024}};
  for (const Case& k : cases) {
    Result<Config> c =
        ParseConfig(std::string("capacityBytes: ") + k.text, "c.yaml");
    ASSERT_TRUE(c.ok()) << k.text << ": " << c.status().message();
    EXPECT_EQ(c->capacity_bytes, k.bytes) << k.text;
  }
  Result<Config> bad = ParseConfig("capacityBytes: 64 parsecs", "c.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("c.yaml:1:"));
  EXPECT_THAT(bad.status().message(), HasSubstr("64MiB"));
}

TEST(ConfigTest, UnknownKeyNamesFileLineAndClosestKey) {
  Result<Config> c =
      ParseConfig("policy: vaac\nttlSeconds: 60\nperTooTtl: {read_file: 30}\n",
                  "config.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.status().message(),
            "config.yaml:3: unknown key 'perTooTtl' (did you mean "
            "'perToolTtl'?)");
}

TEST(ConfigTest, UnknownNestedKeyIsReportedWithItsPath) {
  Result<Config> c = ParseConfig("tools:\n  get_weather:\n    ttlSecond: 600\n",
                                 "config.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "config.yaml:3: unknown key 'ttlSecond' in tools.get_weather (did "
            "you mean 'ttlSeconds'?)");
}

TEST(ConfigTest, FarOffUnknownKeyListsKnownKeys) {
  Result<Config> c = ParseConfig("zzzzzzzzzzzzzz: 1\n", "config.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("config.yaml:1: unknown key"));
  EXPECT_THAT(c.status().message(), HasSubstr("known keys:"));
  EXPECT_THAT(c.status().message(), HasSubstr("perToolTtl"));
}

TEST(ConfigTest, WrongTypeNamesLineAndExpectedType) {
  Result<Config> c =
      ParseConfig("policy: vaac\nttlSeconds: soon\n", "config.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "config.yaml:2: 'ttlSeconds' must be a number, got 'soon'");

  Result<Config> list = ParseConfig("excludeTools: bash\n", "config.yaml");
  ASSERT_FALSE(list.ok());
  EXPECT_THAT(list.status().message(),
              HasSubstr("config.yaml:1: 'excludeTools' must be a list"));

  Result<Config> b = ParseConfig("\n\ntrustAnnotations: maybe\n", "c.yaml");
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.status().message(),
              HasSubstr("c.yaml:3: 'trustAnnotations' must be true or false"));
}

TEST(ConfigTest, NegativeTtlIsRejected) {
  Result<Config> c =
      ParseConfig("perToolTtl:\n  read_file: -5\n", "config.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("config.yaml:2:"));
  EXPECT_THAT(c.status().message(), HasSubstr("must be >= 0"));
}

TEST(ConfigTest, BadEnumValueSuggestsTheClosestValue) {
  Result<Config> c = ParseConfig("invalidation: servr\n", "config.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(),
              HasSubstr("'invalidation' must be one of server resource"));
  EXPECT_THAT(c.status().message(), HasSubstr("(did you mean 'server'?)"));

  Result<Config> t =
      ParseConfig("tools:\n  x: {requestType: READ}\n", "config.yaml");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("config.yaml:2:"));
  EXPECT_THAT(t.status().message(), HasSubstr("INFORMATIONAL COMMAND"));
}

TEST(ConfigTest, InvalidYamlReportsTheLine) {
  Result<Config> c =
      ParseConfig("policy: vaac\ntools: {a: [1, 2\n", "broken.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("broken.yaml:"));
  EXPECT_THAT(c.status().message(), HasSubstr("invalid YAML"));
}

TEST(ConfigTest, NonMappingDocumentIsAnError) {
  Result<Config> c = ParseConfig("- a\n- b\n", "list.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("must be a mapping"));
}

TEST(ConfigTest, AcceptsTheSeedModuleWrapper) {
  Result<Config> c = ParseConfig(R"(
tool-cache:
  ttlSeconds: 60
  excludeTools: [bash, shell_exec, send_email, write_file]
  perToolTtl:
    read_file: 30
    git_log: 300
)",
                                 "seed.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->ttl_seconds, 60);
  EXPECT_EQ(c->exclude_tools.size(), 4u);
  EXPECT_EQ(c->per_tool_ttl.at("git_log"), 300);
}

TEST(ConfigTest, MissingFileIsNotFound) {
  Result<Config> c = LoadConfigFile("/nonexistent/toolcache.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(c.status().message(), HasSubstr("/nonexistent/toolcache.yaml"));
}

TEST(ConfigTest, DirectoryOrHugeFileIsRejectedWithoutReadingIt) {
  Result<Config> dir = LoadConfigFile("/tmp");
  ASSERT_FALSE(dir.ok());
  EXPECT_THAT(dir.status().message(), HasSubstr("is a directory"));
  // /dev/zero never ends: the read must stop at the size limit.
  Result<Config> endless = LoadConfigFile("/dev/zero");
  ASSERT_FALSE(endless.ok());
  EXPECT_THAT(endless.status().message(), HasSubstr("larger than 4 MiB"));
}

TEST(ConfigTest, DuplicateKeyNamesBothLines) {
  Result<Config> c =
      ParseConfig("ttlSeconds: 60\npolicy: lru\nttlSeconds: 600\n", "c.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "c.yaml:3: duplicate key 'ttlSeconds' (first given on line 1; "
            "keep one of them)");
}

TEST(ConfigTest, DuplicateKeysInNestedMapsAreErrorsToo) {
  Result<Config> tool = ParseConfig(
      "tools:\n  a:\n    ttlSeconds: 1\n    ttlSeconds: 2\n", "c.yaml");
  ASSERT_FALSE(tool.ok());
  EXPECT_THAT(tool.status().message(),
              HasSubstr("c.yaml:4: duplicate key 'ttlSeconds' in tools.a"));
  Result<Config> ttl =
      ParseConfig("perToolTtl:\n  read_file: 30\n  read_file: 60\n", "c.yaml");
  ASSERT_FALSE(ttl.ok());
  EXPECT_THAT(ttl.status().message(),
              HasSubstr("c.yaml:3: duplicate key 'read_file' in perToolTtl"));
  Result<Config> knob =
      ParseConfig("policyParams:\n  lambda1: 1\n  lambda1: 2\n", "c.yaml");
  ASSERT_FALSE(knob.ok());
  EXPECT_THAT(knob.status().message(), HasSubstr("c.yaml:3: duplicate key"));
}

TEST(ConfigTest, ZeroCapacityIsRejectedWithAHint) {
  Result<Config> c = ParseConfig("capacityBytes: 0\n", "c.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(),
              HasSubstr("c.yaml:1: 'capacityBytes' must be > 0"));
  EXPECT_THAT(c.status().message(), HasSubstr("--no-cache"));
  EXPECT_FALSE(ParseConfig("capacityBytes: 0MiB\n", "c.yaml").ok());
}

// A registry stand-in: CheckPolicyConfig only reads names, kinds and knobs.
constexpr PolicyInfo kRows[] = {
    {"lru", "", PolicyKind::kOnline, nullptr, ""},
    {"vaac", "", PolicyKind::kOnline, nullptr, "lambda1,lambda2,t1=0:"},
    {"belady", "", PolicyKind::kOffline, nullptr, ""},
};

TEST(ConfigTest, UnknownPolicyNamesFileLineAndClosestPolicy) {
  Result<Config> c = ParseConfig("ttlSeconds: 60\npolicy: vaacc\n", "c.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  Status s = CheckPolicyConfig(*c, kRows, /*online_only=*/true);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "c.yaml:2: unknown policy 'vaacc' (did you mean 'vaac'?); usable "
            "policies: lru, vaac");
  c->policy = "belady";
  Status offline = CheckPolicyConfig(*c, kRows, true);
  EXPECT_THAT(offline.message(),
              HasSubstr("c.yaml:2: policy 'belady' is a simulator limit"));
  EXPECT_TRUE(CheckPolicyConfig(*c, kRows, /*online_only=*/false).ok());
}

TEST(ConfigTest, UnknownPolicyKnobNamesItsLineAndClosestKnob) {
  Result<Config> c = ParseConfig(
      "policy: vaac\npolicyParams:\n  lambda2: 1\n  lamda1: 0.5\n", "c.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  Status s = CheckPolicyConfig(*c, kRows, true);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "c.yaml:4: policy 'vaac' has no knob 'lamda1' (did you mean "
            "'lambda1'?); its knobs: lambda1,lambda2,t1=0:");
  c->policy = "lru";
  c->policy_params.erase("lamda1");
  EXPECT_THAT(CheckPolicyConfig(*c, kRows, true).message(),
              HasSubstr("its knobs: (none)"));
}

TEST(ConfigTest, PolicyKnobOutsideItsRangeNamesItsLine) {
  Result<Config> c = ParseConfig(
      "policy: vaac\npolicyParams:\n  lambda2: 1\n  t1: -3\n", "c.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  Status s = CheckPolicyConfig(*c, kRows, true);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "c.yaml:4: policy 'vaac': knob 't1' is outside its range [0, inf]");
}

}  // namespace
}  // namespace toolcache

namespace toolcache {
namespace {

// Session 19: the operator's token is named by an environment variable in
// both server blocks, never written in the file.
TEST(ConfigTest, ParsesTheAdminTokenEnvOfBothServers) {
  Result<Config> c = ParseConfig(
      "serve:\n  adminTokenEnv: OPS_TOKEN\nproxy:\n  adminTokenEnv: "
      "PROXY_OPS\n",
      "s.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->serve.admin_token_env, "OPS_TOKEN");
  EXPECT_EQ(c->serve.admin_token_env_line, 2);
  EXPECT_EQ(c->proxy.admin_token_env, "PROXY_OPS");
  EXPECT_FALSE(ParseConfig("serve:\n  adminToken: x\n", "s.yaml").ok());
}

// Session 19: a tenant's name (its cache scope, which an MCP session extends
// after a control character) holds no control character.
TEST(ConfigTest, RefusesAControlCharacterInATenantsName) {
  Result<Config> ctl = ParseConfig(
      "serve:\n  tenants:\n    \"a\\x1eb\": {token: x}\n", "s.yaml");
  ASSERT_FALSE(ctl.ok());
  EXPECT_THAT(ctl.status().message(),
              ::testing::HasSubstr("control character"));
}

TEST(ConfigTest, ParsesTheServeBlockWithTenants) {
  Result<Config> c = ParseConfig(R"(serve:
  listen: 127.0.0.1:9100
  maxWaitSeconds: 5
  leaseSeconds: 60
  maxOpenTickets: 500
  allowedOrigins: [http://dash.local]
  tenants:
    alice: {token: a-secret}
    bob: {tokenEnv: BOB_TOKEN}
)",
                                 "s.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(*c->serve.listen, "127.0.0.1:9100");
  EXPECT_EQ(*c->serve.max_wait_seconds, 5);
  EXPECT_EQ(*c->serve.lease_seconds, 60);
  EXPECT_EQ(*c->serve.max_open_tickets, 500u);
  ASSERT_EQ(c->serve.allowed_origins.size(), 1u);
  ASSERT_EQ(c->serve.tenants.size(), 2u);
  EXPECT_EQ(c->serve.tenants[0].name, "alice");
  EXPECT_EQ(c->serve.tenants[0].token, "a-secret");
  EXPECT_EQ(c->serve.tenants[1].token_env, "BOB_TOKEN");
  EXPECT_EQ(c->serve.tenants[1].line, 9);
  for (const char* bad : {"0", "1.5", "-3", "many"}) {
    Result<Config> r = ParseConfig(
        std::string("serve:\n  maxOpenTickets: ") + bad + "\n", "s.yaml");
    EXPECT_FALSE(r.ok()) << bad;
  }
  Result<Config> both = ParseConfig(
      "serve:\n  tenants:\n    a: {token: x, tokenEnv: Y}\n", "s.yaml");
  ASSERT_FALSE(both.ok());
  EXPECT_THAT(both.status().message(),
              ::testing::HasSubstr("exactly one of 'token' and 'tokenEnv'"));
  // A tenant's name is its scope: '@' opens the scopes toolcache composes
  // (the reserved public scope "@public;" among them).
  Result<Config> reserved = ParseConfig(
      "serve:\n  tenants:\n    \"@public;\": {token: x}\n", "s.yaml");
  ASSERT_FALSE(reserved.ok());
  EXPECT_THAT(reserved.status().message(),
              ::testing::HasSubstr("starts with '@', which is reserved"));
  Result<Config> typo =
      ParseConfig("serve:\n  tenant:\n    a: {token: x}\n", "s.yaml");
  ASSERT_FALSE(typo.ok());
  EXPECT_THAT(typo.status().message(),
              ::testing::HasSubstr("did you mean 'tenants'"));
  Result<Config> scoped = ParseConfig(
      "servers:\n  mail: {scope: user}\n  fs: {scope: global}\n", "s.yaml");
  ASSERT_TRUE(scoped.ok()) << scoped.status().message();
  EXPECT_EQ(scoped->servers.at("mail").scope, SharingScope::kUser);
  EXPECT_EQ(scoped->servers.at("fs").scope, SharingScope::kGlobal);
  EXPECT_FALSE(
      ParseConfig("servers:\n  mail: {scope: tenant}\n", "s.yaml").ok());
  // Issue 27.12: two tenants with one token were silently the last one.
  Result<Config> shared = ParseConfig(
      "serve:\n  tenants:\n    alice: {token: s3cret-tok}\n"
      "    bob: {token: s3cret-tok}\n",
      "s.yaml");
  ASSERT_FALSE(shared.ok());
  EXPECT_THAT(shared.status().message(),
              ::testing::HasSubstr("tenants 'alice' and 'bob' have the same"));
  EXPECT_THAT(shared.status().message(),
              ::testing::Not(::testing::HasSubstr("s3cret-tok")));
  Result<Config> shared_env = ParseConfig(
      "serve:\n  tenants:\n    a: {tokenEnv: T}\n    b: {tokenEnv: T}\n",
      "s.yaml");
  ASSERT_FALSE(shared_env.ok());
  EXPECT_THAT(shared_env.status().message(),
              ::testing::HasSubstr("tenants 'a' and 'b' have the same"));
}

}  // namespace
}  // namespace toolcache

namespace toolcache {
namespace {

TEST(ConfigTest, ParsesARemoteServersUrlAndHeadersInFileOrder) {
  Result<Config> c = ParseConfig(R"(
servers:
  github:
    url: https://api.example.com/mcp
    headers:
      Authorization: Bearer ${GITHUB_TOKEN}
      X-Team: tools
    ttlSeconds: 60
)",
                                 "remote.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const ServerConfig& g = c->servers.at("github");
  ASSERT_TRUE(g.url.has_value());
  EXPECT_EQ(*g.url, "https://api.example.com/mcp");
  ASSERT_EQ(g.headers.size(), 2u);
  // Kept as written: ${VAR} is read when the proxy starts.
  EXPECT_EQ(g.headers[0].first, "Authorization");
  EXPECT_EQ(g.headers[0].second, "Bearer ${GITHUB_TOKEN}");
  EXPECT_EQ(g.headers[1].first, "X-Team");
  Result<Config> bad =
      ParseConfig("servers:\n  g:\n    headers: [a, b]\n", "h.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("h.yaml:3"));
  EXPECT_THAT(bad.status().message(),
              ::testing::HasSubstr("servers.g.headers"));
}

TEST(ConfigTest, ParsesCredentialSharingPerServer) {
  Result<Config> c = ParseConfig(R"(
servers:
  github:
    command: [github-mcp-server, stdio]
    credentialEnv: [GITHUB_ORG]
    shareAcrossCredentials: true
  other:
    url: https://example.com/mcp
)",
                                 "share.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(c->servers.at("github").share_across_credentials);
  EXPECT_EQ(c->servers.at("github").credential_env,
            std::vector<std::string>{"GITHUB_ORG"});
  // Default: not shared.
  EXPECT_FALSE(c->servers.at("other").share_across_credentials);
  Result<Config> bad = ParseConfig(
      "servers:\n  g:\n    shareAcrossCredential: true\n", "t.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("unknown key"));
  bad = ParseConfig("servers:\n  g:\n    credentialEnv: X\n", "t.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              ::testing::HasSubstr("servers.g.credentialEnv"));
}

}  // namespace
}  // namespace toolcache
