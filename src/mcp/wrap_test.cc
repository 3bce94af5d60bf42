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

}  // namespace
}  // namespace toolcache
