#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "toolcache/mcp_wrap.h"

namespace toolcache {
namespace {

using nlohmann::json;

constexpr const char* kConfig = R"({
  "mcpServers": {
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],
               "env": {"MEMORY_FILE_PATH": "/tmp/m.jsonl"}},
    "remote": {"type": "http", "url": "https://example.com/mcp"},
    "fs": {"type": "stdio", "command": "mcp-fs", "args": ["/tmp"], "x-extra": 1}
  },
  "other": true
})";

TEST(WrapTest, WrapsEveryStdioServerKeepingCommandArgsAndEnv) {
  Result<WrapOutcome> w = WrapMcpServers(
      kConfig, {.toolcache = "/bin/tc", .config_path = "/c.yaml"});
  ASSERT_TRUE(w.ok()) << w.status().message();
  json j = json::parse(w->text);
  EXPECT_EQ(j["mcpServers"]["memory"]["command"], "/bin/tc");
  EXPECT_EQ(j["mcpServers"]["memory"]["args"],
            json({"mcp", "--name", "memory", "--config", "/c.yaml", "--", "npx",
                  "-y", "@modelcontextprotocol/server-memory"}));
  EXPECT_EQ(j["mcpServers"]["memory"]["env"]["MEMORY_FILE_PATH"],
            "/tmp/m.jsonl");
  EXPECT_EQ(j["mcpServers"]["remote"],
            json::parse(kConfig)["mcpServers"]["remote"]);
  EXPECT_EQ(j["mcpServers"]["fs"]["x-extra"], 1);
  EXPECT_EQ(j["other"], true);
  EXPECT_EQ(w->changed, (std::vector<std::string>{"memory", "fs"}));
  ASSERT_EQ(w->skipped.size(), 1u);
  EXPECT_EQ(w->skipped[0], "remote: not a stdio server");
}

TEST(WrapTest, WrapIsIdempotentAndUnwrapRestores) {
  Result<WrapOutcome> w = WrapMcpServers(kConfig, {.toolcache = "tc"});
  ASSERT_TRUE(w.ok());
  Result<WrapOutcome> again = WrapMcpServers(w->text, {.toolcache = "tc"});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->changed.empty());
  EXPECT_EQ(again->text, w->text);
  Result<WrapOutcome> u = UnwrapMcpServers(w->text);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(json::parse(u->text), json::parse(kConfig));
  // Member order survives the round trip.
  EXPECT_EQ(u->text, nlohmann::ordered_json::parse(kConfig).dump(2) + "\n");
}

TEST(WrapTest, RejectsFilesWithoutMcpServers) {
  Result<WrapOutcome> bad = WrapMcpServers("{\"servers\":{}}", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("mcpServers"), std::string::npos);
  EXPECT_FALSE(WrapMcpServers("{,}", {}).ok());
  EXPECT_FALSE(UnwrapMcpServers("[]").ok());
  EXPECT_FALSE(WrapMcpServers(R"({"mcpServers":{"a":1}})", {}).ok());
}

TEST(WrapTest, AnotherCliMcpSubcommandIsNotMistakenForAWrappedServer) {
  constexpr const char* kDocker = R"({"mcpServers": {
    "gateway": {"command": "docker", "args": ["mcp", "gateway", "run", "--", "--verbose"]}
  }})";
  Result<WrapOutcome> u = UnwrapMcpServers(kDocker);
  ASSERT_TRUE(u.ok());
  EXPECT_TRUE(u->changed.empty());
  EXPECT_EQ(json::parse(u->text), json::parse(kDocker));
  Result<WrapOutcome> w = WrapMcpServers(kDocker, {.toolcache = "/bin/tc"});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->changed, (std::vector<std::string>{"gateway"}));
  json j = json::parse(w->text)["mcpServers"]["gateway"];
  EXPECT_EQ(j["args"], json({"mcp", "--name", "gateway", "--", "docker", "mcp",
                             "gateway", "run", "--", "--verbose"}));
  Result<WrapOutcome> back = UnwrapMcpServers(w->text);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(json::parse(back->text), json::parse(kDocker));
}

TEST(WrapTest, RecognizesToolcacheByNameOrByTheShapeWrapWrites) {
  // Hand-written toolcache entry (basename toolcache, any flags).
  constexpr const char* kByName = R"({"mcpServers": {
    "a": {"command": "/opt/bin/toolcache", "args": ["mcp", "--scope", "u", "--", "srv"]},
    "b": {"command": "C:\\tc\\toolcache.exe", "args": ["mcp", "--", "srv"]}
  }})";
  Result<WrapOutcome> u = UnwrapMcpServers(kByName);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->changed, (std::vector<std::string>{"a", "b"}));
  // A custom --toolcache command: recognized by `mcp --name <key> [--config
  // F] --`, but only under its own key.
  Result<WrapOutcome> w =
      WrapMcpServers(R"({"mcpServers": {"m": {"command": "srv"}}})",
                     {.toolcache = "/x/tc-wrapper", .config_path = "/c.yaml"});
  ASSERT_TRUE(w.ok());
  Result<WrapOutcome> again = WrapMcpServers(w->text, {.toolcache = "/x/y"});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->changed.empty());
  Result<WrapOutcome> back = UnwrapMcpServers(w->text);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(json::parse(back->text)["mcpServers"]["m"]["command"], "srv");
  constexpr const char* kOtherKey = R"({"mcpServers": {
    "m": {"command": "tc-wrapper", "args": ["mcp", "--name", "other", "--", "srv"]}
  }})";
  EXPECT_TRUE(UnwrapMcpServers(kOtherKey)->changed.empty());
}

}  // namespace
}  // namespace toolcache
