#include "toolcache/scope.h"

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "src/core/scope.h"

namespace toolcache {
namespace {

TEST(ScopeTest, EmptyPrincipalIsGlobalAndBaseAloneIsKept) {
  EXPECT_EQ(ScopeOf({}), "");
  EXPECT_EQ(ScopeOf({.base = "team-a"}), "team-a");
}

TEST(ScopeTest, DistinctPrincipalsGetDistinctScopes) {
  const std::string c1 = CredentialDigest({{"authorization", "Bearer alice"}});
  const std::string c2 = CredentialDigest({{"authorization", "Bearer bob"}});
  std::vector<Principal> all = {
      {},
      {.base = "a"},
      {.tenant = "a"},
      {.user = "a"},
      {.credential = c1},
      {.credential = c2},
      {.base = "a", .credential = c1},
      {.tenant = "a", .credential = c1},
      {.tenant = "a", .user = "a"},
      {.tenant = "a", .user = "a", .credential = c1},
      {.credential = "none"},
      {.workspace = "a"},
      {.credential = c1, .workspace = "a"},
      {.credential = c1, .workspace = "b"},
      {.credential = "none", .workspace = "a"},
  };
  std::set<std::string> seen;
  for (const Principal& p : all) {
    EXPECT_TRUE(seen.insert(ScopeOf(p)).second) << ScopeOf(p);
  }
}

TEST(ScopeTest, NoCollisionByConcatenation) {
  // Values that would run together under plain concatenation.
  EXPECT_NE(ScopeOf({.tenant = "ab", .user = "c"}),
            ScopeOf({.tenant = "a", .user = "bc"}));
  EXPECT_NE(ScopeOf({.tenant = "a;u1:b"}),
            ScopeOf({.tenant = "a", .user = "b"}));
  EXPECT_NE(ScopeOf({.tenant = "x", .user = ""}),
            ScopeOf({.tenant = "", .user = "x"}));
  // A legacy --scope that imitates the composed form is composed itself.
  const Principal forged{.base = "@t5:alice;"};
  EXPECT_NE(ScopeOf(forged), ScopeOf({.tenant = "alice"}));
  EXPECT_EQ(ScopeOf({.tenant = "alice"}), "@t5:alice;");
  // Credential pieces: name/value boundaries are length-prefixed.
  EXPECT_NE(CredentialDigest({{"ab", "c"}}), CredentialDigest({{"a", "bc"}}));
  EXPECT_NE(CredentialDigest({{"a", "b"}, {"c", "d"}}),
            CredentialDigest({{"a", "bcd"}}));
}

TEST(ScopeTest, CredentialDigestIsStableOrderFreeAndKeyed) {
  const std::string d1 = CredentialDigest({{"a", "1"}, {"b", "2"}}, "k");
  EXPECT_EQ(d1, CredentialDigest({{"b", "2"}, {"a", "1"}}, "k"));
  EXPECT_EQ(d1.size(), 32u);
  EXPECT_NE(d1, CredentialDigest({{"a", "1"}, {"b", "2"}}, "other key"));
  EXPECT_NE(d1, CredentialDigest({{"a", "1"}, {"b", "3"}}, "k"));
  EXPECT_EQ(CredentialDigest({}, "k"), "");
}

// The digest is HMAC-SHA256 (RFC 2104), truncated to 128 bits, keyed by
// "toolcache/scope/v1\0" + key over the sorted, length-prefixed pieces. The
// expected values come from Python's hmac module, so a change of the HMAC
// construction (or of its message) shows here; the second key is longer
// than SHA-256's 64-byte block, which HMAC hashes first.
TEST(ScopeTest, CredentialDigestIsRfc2104HmacSha256) {
  EXPECT_EQ(CredentialDigest(
                {{"x-api-key", "sk-alice"}, {"authorization", "Bearer t"}}, ""),
            "1c52c5020c3068385e71a3fffd9fa064");
  EXPECT_EQ(
      CredentialDigest({{"x-api-key", "sk-alice"}}, std::string(100, 'k')),
      "34b5190d6a475b769d557cf8a93fee0a");
}

// llmhop: a thread answers a call with exactly the previous call's key and
// credential bytes from its last digest. Every answer equals the digest a
// fresh thread (nothing remembered) computes, and any other byte -- one
// character of the value, the header's name, the key, one more header --
// is computed afresh: a different credential on the same connection is a
// different principal, never the previous one's scope.
TEST(ScopeTest, TheLastDigestIsReusedOnlyForTheSameBytes) {
  using Parts = std::vector<Credential>;
  const std::vector<std::pair<Parts, std::string>> calls = {
      {{{"x-api-key", "sk-alice"}}, "k"},
      {{{"x-api-key", "sk-alice"}}, "k"},  // reused
      {{{"x-api-key", "sk-alicf"}}, "k"},  // one byte, same length
      {{{"x-api-key", "sk-alic"}}, "k"},   // a prefix
      {{{"authorization", "sk-alic"}}, "k"},
      {{{"authorization", "sk-alic"}}, "k2"},
      {{{"authorization", "sk-alic"}, {"openai-project", "p"}}, "k2"},
      {{{"x-api-key", "sk-alice"}}, "k"},  // back to the first
      {{{"x-api-key", "sk-alice"}}, "k"},  // reused
  };
  std::vector<std::string> fresh;
  for (const auto& [parts, key] : calls) {
    std::thread([&, p = parts, k = key] {
      fresh.push_back(CredentialDigest(p, k));
    }).join();
  }
  const uint64_t before = internal::CredentialDigestsComputed();
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(CredentialDigest(calls[i].first, calls[i].second), fresh[i])
        << "call " << i;
  }
  EXPECT_EQ(internal::CredentialDigestsComputed() - before, 7u);
  for (size_t i = 2; i < 8; ++i) {
    EXPECT_NE(fresh[i], fresh[i - 1]) << "call " << i;
  }
}

// The key's pad blocks are absorbed once and the midstates shared: digests
// computed concurrently, and under more keys than are remembered, equal
// the ones computed alone.
TEST(ScopeTest, CredentialDigestIsTheSameConcurrentlyAndUnderManyKeys) {
  std::vector<std::string> want;
  for (int k = 0; k < 40; ++k) {
    want.push_back(CredentialDigest({{"x-api-key", "sk-" + std::to_string(k)}},
                                    "key-" + std::to_string(k % 20)));
  }
  EXPECT_EQ(want[0], CredentialDigest({{"x-api-key", "sk-0"}}, "key-0"));
  EXPECT_NE(want[0], want[20]);  // same key, another credential
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int round = 0; round < 50; ++round) {
        for (int k = 0; k < 40; ++k) {
          if (CredentialDigest({{"x-api-key", "sk-" + std::to_string(k)}},
                               "key-" + std::to_string(k % 20)) != want[k]) {
            ++mismatches;
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

// Each thread's reused digest is its own: four threads ask for different
// credentials, each twice, and a barrier between the two asks makes every
// thread's first ask land before any second one; the calls themselves are
// serialised so that a shared (not per-thread) last digest would be a
// deterministic failure rather than a data race. Every answer must equal
// the one computed alone, and every second ask must reuse the thread's own
// digest (a shared one would be overwritten by the other threads' asks).
TEST(ScopeTest, ReusedDigestsStayPerThreadUnderInterleaving) {
  constexpr int kThreads = 4, kRounds = 50;
  std::vector<std::string> want;
  for (int k = 0; k < 16; ++k) {
    want.push_back(
        CredentialDigest({{"x-api-key", "sk-" + std::to_string(k)}}, "key"));
  }
  std::barrier sync(kThreads);
  std::mutex one_at_a_time;
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  std::atomic<uint64_t> computed{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const uint64_t before = internal::CredentialDigestsComputed();
      for (int round = 0; round < kRounds; ++round) {
        const int k = (round + 4 * t) % 16;
        for (int twice = 0; twice < 2; ++twice) {
          sync.arrive_and_wait();
          std::lock_guard<std::mutex> lock(one_at_a_time);
          if (CredentialDigest({{"x-api-key", "sk-" + std::to_string(k)}},
                               "key") != want[k]) {
            ++mismatches;
          }
        }
      }
      computed += internal::CredentialDigestsComputed() - before;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(computed.load(), uint64_t{kThreads} * kRounds);
}

TEST(ScopeTest, NoSecretBytesInTheScope) {
  const std::string token = "ghp_SuperSecretTokenValue1234567890";
  const std::string scope = ScopeOf(
      {.base = "s", .credential = CredentialDigest({{"GITHUB_TOKEN", token}})});
  EXPECT_EQ(scope.find(token), std::string::npos);
  // Not even an 8-byte window of the token.
  for (size_t i = 0; i + 8 <= token.size(); ++i) {
    EXPECT_EQ(scope.find(token.substr(i, 8)), std::string::npos) << i;
  }
  for (char c : scope.substr(scope.find("c32:") + 4, 32)) {
    EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << scope;
  }
}

TEST(ScopeTest, SecretLookingNames) {
  for (const char* n :
       {"GITHUB_PERSONAL_ACCESS_TOKEN", "OPENAI_API_KEY", "APIKEY", "GH_PAT",
        "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "github_token", "SLACK_COOKIE",
        "MY_SESSION", "AUTHORIZATION", "GOOGLE_APPLICATION_CREDENTIALS",
        "PGPASS", "NOTION_AUTH"}) {
    EXPECT_TRUE(LooksLikeSecretName(n)) << n;
  }
  for (const char* n :
       {"PATH", "HOME", "USER", "LANG", "SSH_AUTH_SOCK", "XDG_SESSION_ID",
        "DBUS_SESSION_BUS_ADDRESS", "DESKTOP_SESSION", "SESSION_MANAGER",
        "TERM", "PWD", "NODE_OPTIONS", "TOOLCACHE_SCOPE_KEY"}) {
    EXPECT_FALSE(LooksLikeSecretName(n)) << n;
  }
}

TEST(ScopeTest, SecretEnvironmentTakesSecretsAndDeclaredNames) {
  const std::vector<std::string> env = {"PATH=/usr/bin", "GITHUB_TOKEN=t1",
                                        "ORG=acme", "BROKEN", "=x"};
  std::vector<Credential> got = SecretEnvironment(env);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].name, "GITHUB_TOKEN");
  EXPECT_EQ(got[0].value, "t1");
  got = SecretEnvironment(env, {"ORG"});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].name, "ORG");
  // Different tokens: different digests; the same: the same.
  EXPECT_NE(CredentialDigest(SecretEnvironment({"GITHUB_TOKEN=alice"})),
            CredentialDigest(SecretEnvironment({"GITHUB_TOKEN=bob"})));
  EXPECT_EQ(CredentialDigest(SecretEnvironment({"GITHUB_TOKEN=a", "PWD=/x"})),
            CredentialDigest(SecretEnvironment({"PWD=/y", "GITHUB_TOKEN=a"})));
}

// Session 19 (attackK finding 4): two OS users, or one user's two
// projects, running the same stdio server differ only in plain variables
// that choose the server's data (server-memory's MEMORY_FILE_PATH,
// AWS_PROFILE, HOME) and in their uid and folder: none of it was in the
// principal, so one was served the other's data.
TEST(ScopeTest, DataChoosingNames) {
  for (const char* n :
       {"MEMORY_FILE_PATH", "HOME", "USER", "LOGNAME", "KUBECONFIG",
        "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION",
        "GOOGLE_CLOUD_PROJECT", "XDG_CONFIG_HOME", "OBSIDIAN_VAULT", "PGHOST",
        "POSTGRES_DB", "ALLOWED_DIRECTORIES", "SLACK_TEAM_ID", "jira_url",
        "CLAUDE_PROJECT_DIR", "DOCKER_CONTEXT", "RAILS_ENV"}) {
    EXPECT_TRUE(LooksLikeDataSelectingName(n)) << n;
  }
  for (const char* n : {"PATH", "LANG", "SHELL", "NODE_OPTIONS", "TERM", "PWD",
                        "EDITOR", "LC_ALL", "_PATH", "PATHS"}) {
    EXPECT_FALSE(LooksLikeDataSelectingName(n)) << n;
  }
}

TEST(ScopeTest, VolatileNamesOfTerminalsAndAgentSessions) {
  for (const char* n : {"PWD",
                        "OLDPWD",
                        "SHLVL",
                        "_",
                        "TERM_SESSION_ID",
                        "SSH_CONNECTION",
                        "SSH_TTY",
                        "XDG_SESSION_ID",
                        "KITTY_WINDOW_ID",
                        "WINDOWID",
                        "TMUX_PANE",
                        "DESKTOP_STARTUP_ID",
                        "VSCODE_GIT_IPC_HANDLE",
                        "CLAUDE_CODE_SESSION_ID",
                        "CLAUDE_CODE_MESSAGING_TOKEN",
                        "CLAUDE_CODE_MESSAGING_SOCKET",
                        "CLAUDE_CODE_CHILD_NOTES_DIR",
                        "CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS",
                        "CLAUDE_CODE_SSE_PORT",
                        "STARSHIP_SESSION_KEY",
                        "KONSOLE_DBUS_SESSION",
                        "TILIX_ID"}) {
    EXPECT_TRUE(IsVolatileEnvironmentName(n)) << n;
  }
  for (const char* n :
       {"HOME", "MEMORY_FILE_PATH", "GITHUB_TOKEN", "CLAUDE_PROJECT_DIR",
        "CLAUDE_CODE_USE_BEDROCK", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR"}) {
    EXPECT_FALSE(IsVolatileEnvironmentName(n)) << n;
  }
  // A volatile secret-looking name scopes nothing; named by the operator,
  // it does.
  EXPECT_TRUE(SecretEnvironment({"CLAUDE_CODE_MESSAGING_TOKEN=t"}).empty());
  EXPECT_EQ(SecretEnvironment({"CLAUDE_CODE_MESSAGING_TOKEN=t"},
                              {"CLAUDE_CODE_MESSAGING_TOKEN"})
                .size(),
            1u);
}

namespace {

std::string StdioScope(const std::vector<std::string>& env, uint32_t uid = 1000,
                       std::string_view cwd = "/p") {
  return CredentialDigest(
      StdioServerCredentials(env, {}, {"node", "server-memory"}, uid, cwd));
}

}  // namespace

TEST(ScopeTest, TwoUsersAndTwoDataPathsAreTwoPrincipals) {
  const std::vector<std::string> alice = {
      "PATH=/usr/bin", "HOME=/home/alice", "USER=alice", "LANG=C.UTF-8",
      "MEMORY_FILE_PATH=/home/alice/m.jsonl"};
  const std::vector<std::string> bob = {"PATH=/usr/bin", "HOME=/home/bob",
                                        "USER=bob", "LANG=C.UTF-8",
                                        "MEMORY_FILE_PATH=/home/bob/m.jsonl"};
  // Before session 19 both were the global scope: nothing secret-looking.
  EXPECT_TRUE(SecretEnvironment(alice).empty());
  EXPECT_NE(StdioScope(alice), StdioScope(bob));
  // One user, two data files (two projects' configs).
  std::vector<std::string> other = alice;
  other.back() = "MEMORY_FILE_PATH=/home/alice/other.jsonl";
  EXPECT_NE(StdioScope(alice), StdioScope(other));
  // Two OS users with the very same environment: the uid tells them apart.
  EXPECT_NE(StdioScope(alice, 1000), StdioScope(alice, 1001));
  // The same configuration started in two projects' folders.
  EXPECT_NE(StdioScope(alice, 1000, "/src/a"),
            StdioScope(alice, 1000, "/src/b"));
  // AWS_PROFILE, KUBECONFIG, GOOGLE_CLOUD_PROJECT choose accounts too.
  for (const char* v : {"AWS_PROFILE", "KUBECONFIG", "GOOGLE_CLOUD_PROJECT"}) {
    std::vector<std::string> a = alice, b = alice;
    a.push_back(std::string(v) + "=x");
    b.push_back(std::string(v) + "=y");
    EXPECT_NE(StdioScope(a), StdioScope(b)) << v;
  }
  // No value is in the scope, only its digest.
  const std::string scope = ScopeOf({.credential = StdioScope(alice)});
  EXPECT_EQ(scope.find("alice"), std::string::npos);
  // No variable stands in for the uid or the folder.
  std::vector<std::string> posing = alice;
  posing.push_back("=uid=1000");
  EXPECT_EQ(StdioScope(posing, 1001), StdioScope(alice, 1001));
}

TEST(ScopeTest, OneUsersSessionsStillShareAcrossVolatileVariables) {
  // What Claude Code 2.1.332 gives a stdio server: its whole environment
  // plus per-session names (measured with a server that dumps its env).
  const std::vector<std::string> first = {
      "PATH=/usr/bin",
      "HOME=/home/alice",
      "USER=alice",
      "SHELL=/bin/bash",
      "MEMORY_FILE_PATH=/home/alice/m.jsonl",
      "CLAUDECODE=1",
      "CLAUDE_PROJECT_DIR=/src/a",
      "CLAUDE_CODE_ENTRYPOINT=cli",
      "CLAUDE_CODE_SESSION_ID=6986f739-f146-4d59-aa6d-b7bbbdeada6b",
      "CLAUDE_CODE_MESSAGING_TOKEN=4e998810b3a90e32c606b2b8028ae66c",
      "CLAUDE_CODE_MESSAGING_SOCKET=/tmp/cc-socks/23866.sock",
      "CLAUDE_CODE_CHILD_NOTES_DIR=/tmp/claude-0/-src-a/6986f739/started",
      "CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS=6986f739",
      "PWD=/src/a",
      "OLDPWD=/home/alice",
      "SHLVL=2",
      "_=/usr/bin/claude",
      "TERM=xterm-256color",
      "TERM_SESSION_ID=w0t0p0:1",
      "SSH_CONNECTION=10.0.0.1 5 10.0.0.2 22",
      "SSH_TTY=/dev/pts/3",
      "XDG_SESSION_ID=7",
      "WINDOWID=1",
      "TMUX_PANE=%1",
      "KITTY_WINDOW_ID=1"};
  const std::vector<std::string> second = {
      "PATH=/usr/bin",
      "HOME=/home/alice",
      "USER=alice",
      "SHELL=/bin/bash",
      "MEMORY_FILE_PATH=/home/alice/m.jsonl",
      "CLAUDECODE=1",
      "CLAUDE_PROJECT_DIR=/src/a",
      "CLAUDE_CODE_ENTRYPOINT=cli",
      "CLAUDE_CODE_SESSION_ID=0b1c2d3e-0000-4000-8000-000000000001",
      "CLAUDE_CODE_MESSAGING_TOKEN=0123456789abcdef0123456789abcdef",
      "CLAUDE_CODE_MESSAGING_SOCKET=/tmp/cc-socks/31337.sock",
      "CLAUDE_CODE_CHILD_NOTES_DIR=/tmp/claude-0/-src-a/0b1c2d3e/started",
      "CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS=0b1c2d3e",
      "PWD=/src/a/sub",
      "OLDPWD=/tmp",
      "SHLVL=4",
      "_=/usr/local/bin/claude",
      "TERM=screen",
      "TERM_SESSION_ID=w1t0p0:2",
      "SSH_CONNECTION=10.0.0.9 6 10.0.0.2 22",
      "SSH_TTY=/dev/pts/9",
      "XDG_SESSION_ID=12",
      "WINDOWID=2",
      "TMUX_PANE=%7",
      "KITTY_WINDOW_ID=4"};
  EXPECT_EQ(StdioScope(first), StdioScope(second));
  // What Codex gives one (its whitelist plus the config's env), in any
  // order: the same principal twice.
  const std::vector<std::string> codex = {
      "HOME=/home/alice", "LOGNAME=alice",
      "PATH=/usr/bin",    "SHELL=/bin/bash",
      "TERM=xterm",       "USER=alice",
      "LANG=C.UTF-8",     "MEMORY_FILE_PATH=/home/alice/m.jsonl"};
  std::vector<std::string> reversed(codex.rbegin(), codex.rend());
  EXPECT_EQ(StdioScope(codex), StdioScope(reversed));
}

// A credential inside a URL (DATABASE_URL, a connection string on the
// server's command line) decides what the server reads like a token does
// (session 17: two users' servers under one name shared entries).
TEST(ScopeTest, UrlUserInfoIsACredentialWhateverItsName) {
  for (const char* v :
       {"postgresql://alice:pw@db:5432/app", "redis://:pw@cache:6379/0",
        "mongodb+srv://u:p@cluster0.example.net/?retryWrites=true",
        "https://ghp_x@github.com/o/r.git", "x=amqp://u:p@mq"}) {
    EXPECT_TRUE(CarriesUrlCredential(v)) << v;
  }
  for (const char* v :
       {"https://api.example.com/v1", "http://localhost:8080", "a@b.c",
        "mailto:a@b.c", "https://example.com/p?by=a@b", "https://h#@x", ""}) {
    EXPECT_FALSE(CarriesUrlCredential(v)) << v;
  }
  const std::vector<std::string> env = {
      "DATABASE_URL=postgresql://alice:pw@db/app",
      "API_BASE_URL=https://api.example.com"};
  std::vector<Credential> got = SecretEnvironment(env);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].name, "DATABASE_URL");
  EXPECT_NE(CredentialDigest(SecretEnvironment(
                {"DATABASE_URL=postgresql://alice:pw@db/app"})),
            CredentialDigest(SecretEnvironment(
                {"DATABASE_URL=postgresql://bob:pw@db/app"})));
}

TEST(ScopeTest, SecretArgumentsAreConnectionStringsAndSecretFlags) {
  EXPECT_TRUE(SecretArguments({"npx", "-y", "@mcp/server-postgres"}).empty());
  EXPECT_TRUE(
      SecretArguments({"server", "--verbose", "--port", "8080"}).empty());
  std::vector<Credential> got = SecretArguments(
      {"npx", "server-postgres", "postgresql://alice:pw@db/app"});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].name, "argv[2]");
  EXPECT_EQ(got[0].value, "postgresql://alice:pw@db/app");
  got = SecretArguments({"srv", "--api-key", "K1", "--token=T2", "-x"});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].name, "argv[2]");
  EXPECT_EQ(got[0].value, "K1");
  EXPECT_EQ(got[1].name, "argv[3]");
  EXPECT_EQ(got[1].value, "--token=T2");
  // A secret flag last, with no value: nothing to take.
  EXPECT_TRUE(SecretArguments({"srv", "--password"}).empty());
  EXPECT_NE(CredentialDigest(SecretArguments({"srv", "--api-key", "alice"})),
            CredentialDigest(SecretArguments({"srv", "--api-key", "bob"})));
}

// Session 17: `toolcache mcp` without --name logged the server's command
// line at info level and stored it as the key's server name in every entry
// (SQLite, Redis): `--api-key sk-...` or a connection string in plain text.
TEST(ScopeTest, ARedactedCommandLineKeepsEverythingButTheSecrets) {
  EXPECT_EQ(RedactedCommandLine({"npx", "-y", "@mcp/server-postgres"}),
            "npx -y @mcp/server-postgres");
  EXPECT_EQ(
      RedactedCommandLine({"srv", "--api-key", "sk-SECRET", "--port", "8080"}),
      "srv --api-key <redacted> --port 8080");
  EXPECT_EQ(RedactedCommandLine({"srv", "--token=abc123", "-v"}),
            "srv --token=<redacted> -v");
  EXPECT_EQ(RedactedCommandLine(
                {"npx", "server-postgres", "postgresql://alice:pw@db/app"}),
            "npx server-postgres postgresql://<redacted>@db/app");
  EXPECT_EQ(RedactedCommandLine({"srv", "--db=mongodb+srv://u:p@c.net/x?a=b",
                                 "redis://:pw@cache:6379"}),
            "srv --db=mongodb+srv://<redacted>@c.net/x?a=b "
            "redis://<redacted>@cache:6379");
  // A flag that looks secret but takes no value does not hide the next
  // one (review, session 17).
  EXPECT_EQ(RedactedCommandLine({"srv", "--oauth", "--client-secret", "S3"}),
            "srv --oauth <redacted> <redacted>");
  // A secret flag's value that looks like a flag, or holds a URL.
  EXPECT_EQ(RedactedCommandLine({"srv", "--token", "-Zm9vYmFy=="}),
            "srv --token <redacted>");
  EXPECT_EQ(RedactedCommandLine({"srv", "--secret=https://u:p@h/path/TOKEN"}),
            "srv --secret=<redacted>");
  // docker -e / env assignments, a header line, a URL's secret query value.
  EXPECT_EQ(RedactedCommandLine({"docker", "run", "-e", "GITHUB_TOKEN=ghp_1",
                                 "-e", "LOG_LEVEL=debug", "img"}),
            "docker run -e GITHUB_TOKEN=<redacted> -e LOG_LEVEL=debug img");
  EXPECT_EQ(RedactedCommandLine({"npx", "mcp-remote", "https://h/mcp",
                                 "--header", "Authorization: Bearer tok"}),
            "npx mcp-remote https://h/mcp --header Authorization: <redacted>");
  EXPECT_EQ(RedactedCommandLine({"srv", "https://h/mcp?api_key=K1&region=eu"}),
            "srv https://h/mcp?api_key=<redacted>&region=eu");
  // Each of those is scoped too: another secret is another principal.
  EXPECT_NE(CredentialDigest(SecretArguments(
                {"srv", "--oauth", "--client-secret", "alice"})),
            CredentialDigest(
                SecretArguments({"srv", "--oauth", "--client-secret", "bob"})));
  EXPECT_NE(CredentialDigest(SecretArguments({"srv", "https://h/?token=a"})),
            CredentialDigest(SecretArguments({"srv", "https://h/?token=b"})));
  // A URL's path and query scope in full (session 18): the same URL is
  // the same principal, another is another.
  EXPECT_FALSE(SecretArguments({"srv", "https://h/mcp?region=eu"}).empty());
  EXPECT_TRUE(SecretArguments({"srv", "https://h/", "http://h"}).empty());
  for (const std::string& shown :
       {RedactedCommandLine({"srv", "--api-key", "sk-SECRET"}),
        RedactedCommandLine({"srv", "--password=hunter2"}),
        RedactedCommandLine({"srv", "postgresql://alice:hunter2@db/app"})}) {
    EXPECT_EQ(shown.find("SECRET"), std::string::npos) << shown;
    EXPECT_EQ(shown.find("hunter2"), std::string::npos) << shown;
  }
}

// Session 18 (attackV finding 3): behind an AI gateway that keeps the
// provider keys, the caller authenticates with the gateway's own header;
// the LLM proxy took five fixed names, so every such caller was "none".
TEST(ScopeTest, CredentialHeadersByName) {
  for (const char* h :
       {"x-api-key", "Authorization", "api-key", "openai-organization",
        "OpenAI-Project", "cf-aig-authorization", "x-portkey-api-key",
        "x-portkey-virtual-key", "x-goog-api-key", "helicone-auth",
        "ocp-apim-subscription-key", "x-amz-security-token",
        "proxy-authorization", "x-auth-token", "X-Access-Token", "x_api_key",
        "x-apikey", "x-client-secret"}) {
    EXPECT_TRUE(LooksLikeCredentialHeader(h)) << h;
  }
  // Headers that vary per request or carry no credential: counting them
  // would make every request its own principal.
  for (const char* h :
       {"idempotency-key", "content-type", "user-agent", "anthropic-version",
        "anthropic-beta", "x-stainless-retry-count", "session_id",
        "x-claude-code-session-id", "x-request-id", "openai-beta",
        "x-toolcache-workspace", "keep-alive", "x-key", "", "-"}) {
    EXPECT_FALSE(LooksLikeCredentialHeader(h)) << h;
  }
}

// Session 19 (attackK finding 3): behind a gateway that authenticates by
// the query string (Azure API Management's `?subscription-key=`, Google's
// `?key=`), the LLM proxy's principal ignored it: every such caller was
// "none" and was served the others' recorded results.
TEST(ScopeTest, CredentialQueryParametersByName) {
  for (const char* q :
       {"key", "KEY", "subscription-key", "api_key", "api-key", "apikey",
        "access_token", "token", "auth", "password", "sig", "code", "x-api-key",
        "client_secret", "Subscription-Key"}) {
    EXPECT_TRUE(LooksLikeCredentialQuery(q)) << q;
  }
  for (const char* q : {"beta", "api-version", "alt", "model", "stream",
                        "deployment", "", "v"}) {
    EXPECT_FALSE(LooksLikeCredentialQuery(q)) << q;
  }
}

TEST(ScopeTest, QueryCredentialsJoinThePrincipal) {
  const std::vector<std::string> none;
  auto digest = [&](std::string_view target,
                    const std::vector<std::string>& extra = {}) {
    std::vector<Credential> parts;
    AppendQueryCredentials(target, extra, &parts);
    return parts.empty() ? std::string("none")
                         : CredentialDigest(std::move(parts), "k");
  };
  // Two keys, two principals; the same key, one.
  EXPECT_NE(digest("/v1/chat/completions?subscription-key=KA"),
            digest("/v1/chat/completions?subscription-key=KB"));
  EXPECT_EQ(digest("/v1/chat/completions?subscription-key=KA"),
            digest("/v1/chat/completions?x=1&subscription-key=KA#f"));
  EXPECT_NE(digest("/v1/x?key=A"), digest("/v1/x?key=B"));
  // Harmless parameters, empty values and no query: no credential.
  EXPECT_EQ(digest("/v1/messages?beta=true"), "none");
  EXPECT_EQ(digest("/v1/messages?api-version=2024-10-21&alt=sse"), "none");
  EXPECT_EQ(digest("/v1/messages?key=&key"), "none");
  EXPECT_EQ(digest("/v1/messages"), "none");
  EXPECT_EQ(digest("/v1/messages?#key=A"), "none");
  // An operator-named parameter, any case.
  EXPECT_EQ(digest("/v1/x?tenant=alice"), "none");
  EXPECT_NE(digest("/v1/x?tenant=alice", {"Tenant"}),
            digest("/v1/x?tenant=bob", {"Tenant"}));
  // Named "?<name>" lowercased, value as sent: never a header's part.
  std::vector<Credential> parts;
  AppendQueryCredentials("/p?Key=V%2B1&beta=true&api_key=W", none, &parts);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].name, "?key");
  EXPECT_EQ(parts[0].value, "V%2B1");
  EXPECT_EQ(parts[1].name, "?api_key");
  EXPECT_EQ(parts[1].value, "W");
  EXPECT_NE(CredentialDigest({{"?key", "V"}}, "k"),
            CredentialDigest({{"key", "V"}}, "k"));
}

// Session 18 (attackV finding 1): hosted MCP servers put the account's
// secret in the URL's path (Zapier's /api/mcp/s/<secret>/mcp, Pipedream's
// /<uuid>/<app>). Given to a stdio server (mcp-remote), the path scopes in
// full and its secret-looking segments are redacted from the identity.
// revU: with the secret redacted, two accounts' URLs showed one identity,
// and under --share-across-credentials (no secret in the scope) they were
// one server: one account was served the other's results.
TEST(ScopeTest, RedactedIdentitiesOfDifferentSecretsStayDistinct) {
  const std::string a = "https://mcp.example.com/api/mcp/s/SECRETAAAA1111/mcp";
  const std::string b = "https://mcp.example.com/api/mcp/s/SECRETBBBB2222/mcp";
  ASSERT_EQ(RedactedUrl(a), RedactedUrl(b));
  const std::string ia = DistinctIdentity(RedactedUrl(a), a);
  const std::string ib = DistinctIdentity(RedactedUrl(b), b);
  EXPECT_NE(ia, ib);
  EXPECT_EQ(ia, DistinctIdentity(RedactedUrl(a), a));  // stable
  EXPECT_EQ(ia.find("SECRET"), std::string::npos) << ia;
  EXPECT_EQ(ia.rfind(RedactedUrl(a), 0), 0u) << ia;
  // Nothing redacted: the identity is the text itself.
  const std::string plain = "https://mcp.example.com/mcp";
  EXPECT_EQ(DistinctIdentity(RedactedUrl(plain), plain), plain);
  const std::vector<std::string> ca = {"npx", "mcp-remote", a};
  const std::vector<std::string> cb = {"npx", "mcp-remote", b};
  ASSERT_EQ(RedactedCommandLine(ca), RedactedCommandLine(cb));
  EXPECT_NE(DistinctIdentity(RedactedCommandLine(ca), "npx mcp-remote " + a),
            DistinctIdentity(RedactedCommandLine(cb), "npx mcp-remote " + b));
}

TEST(ScopeTest, AUrlPathIsACredentialAndItsSecretsAreRedacted) {
  EXPECT_EQ(
      RedactedUrl("https://mcp.zapier.com/api/mcp/s/SECRET-ALICE-7f3a/mcp"),
      "https://mcp.zapier.com/api/mcp/s/<redacted>");
  EXPECT_EQ(RedactedUrl("https://remote.mcp.pipedream.net/"
                        "3c8e5f7a-1b2d-4e6f-8a9b-0c1d2e3f4a5b/gmail"),
            "https://remote.mcp.pipedream.net/<redacted>/gmail");
  EXPECT_EQ(RedactedUrl("https://h/v1/token/abc/x?region=eu"),
            "https://h/v1/token/<redacted>?region=eu");
  EXPECT_EQ(RedactedUrl("https://h/hooks/sk_live_4eC39HqLyjWDarjt/mcp"),
            "https://h/hooks/<redacted>/mcp");
  // Words, versions and dates stay.
  for (const char* v :
       {"https://api.example.com/v1/mcp", "https://h/2025-06-18/server-fs/",
        "http://localhost:8080/mcp", "https://h/s", "unix:///var/run/x.sock"}) {
    EXPECT_EQ(RedactedUrl(v), v);
    EXPECT_FALSE(CarriesUrlCredential(v)) << v;
  }
  // A URL nested in another's query: overlapping pieces are merged into
  // one redaction (the nested path runs over the outer '&token=T').
  EXPECT_EQ(RedactedUrl("https://h/?token=https://u:p@x/y&a=b"),
            "https://h/?token=<redacted>&a=b");
  EXPECT_EQ(RedactedUrl("https://h/go?next=https://x/s/SECRET7f3a&token=T"),
            "https://h/go?next=https://x/s/<redacted>");

  const std::vector<std::string> alice = {
      "npx", "mcp-remote",
      "https://mcp.example.com/api/mcp/s/SECRET-ALICE-7f3a/mcp"};
  const std::vector<std::string> bob = {
      "npx", "mcp-remote",
      "https://mcp.example.com/api/mcp/s/SECRET-BOB-91c2/mcp"};
  EXPECT_EQ(RedactedCommandLine(alice),
            "npx mcp-remote https://mcp.example.com/api/mcp/s/<redacted>");
  EXPECT_EQ(RedactedCommandLine(alice), RedactedCommandLine(bob));
  EXPECT_NE(CredentialDigest(SecretArguments(alice)),
            CredentialDigest(SecretArguments(bob)));
  EXPECT_EQ(CredentialDigest(SecretArguments(alice)),
            CredentialDigest(SecretArguments(alice)));
  // A short token that no rule recognizes still scopes (the whole path),
  // though it is shown.
  EXPECT_NE(CredentialDigest(SecretArguments({"srv", "https://h/mcp/ab12"})),
            CredentialDigest(SecretArguments({"srv", "https://h/mcp/cd34"})));
  // An environment variable holding such a URL is a credential too.
  ASSERT_EQ(SecretEnvironment({"MCP_URL=https://h/api/mcp/s/x/mcp"}).size(),
            1u);
}

}  // namespace
}  // namespace toolcache
