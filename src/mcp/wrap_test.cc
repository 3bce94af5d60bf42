#include "src/mcp/wrap.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

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

TEST(WrapTest, RetargetsServersWrappedWithAnotherToolcacheCommand) {
  // Wrapped earlier from a build tree; now toolcache is installed.
  constexpr const char* kOld = R"({"mcpServers": {
    "m": {"command": "/src/build/apps/toolcache/toolcache",
          "args": ["mcp", "--name", "m", "--", "srv", "-v"]},
    "n": {"command": "srv2"}
  }})";
  Result<WrapOutcome> w = WrapMcpServers(kOld, {.toolcache = "toolcache"});
  ASSERT_TRUE(w.ok());
  json j = json::parse(w->text)["mcpServers"];
  EXPECT_EQ(j["m"]["command"], "toolcache");
  EXPECT_EQ(j["m"]["args"], json({"mcp", "--name", "m", "--", "srv", "-v"}));
  EXPECT_EQ(j["n"]["command"], "toolcache");
  EXPECT_EQ(w->changed, (std::vector<std::string>{"m", "n"}));
  EXPECT_EQ(w->retargeted,
            (std::vector<std::string>{
                "m: /src/build/apps/toolcache/toolcache -> toolcache"}));
  // Same command again: nothing to do.
  Result<WrapOutcome> again =
      WrapMcpServers(w->text, {.toolcache = "toolcache"});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->changed.empty());
  EXPECT_TRUE(again->retargeted.empty());
}

// A scratch directory tree for PATH lookups, removed at the end.
class ToolcacheCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "toolcache-wrap-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  // Writes an executable (or not) file at root_/rel and returns its path.
  std::string File(const std::string& rel, bool executable = true) {
    std::filesystem::path p = root_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << "#!/bin/sh\n";
    chmod(p.c_str(), executable ? 0755 : 0644);
    return p.string();
  }
  std::string Dir(const std::string& rel) {
    std::filesystem::create_directories(root_ / rel);
    return (root_ / rel).string();
  }
  std::filesystem::path root_;
};

TEST_F(ToolcacheCommandTest, BareNameWhenPathFindsThisProgram) {
  const std::string self = File("usr/bin/toolcache");
  ToolcacheCommand c =
      ChooseToolcacheCommand(self, Dir("bin") + ":" + Dir("usr/bin"), false);
  EXPECT_EQ(c.command, "toolcache");
  EXPECT_EQ(c.note, "");
}

TEST_F(ToolcacheCommandTest, BareNameThroughASymlinkOnPath) {
  const std::string self = File("opt/toolcache/bin/toolcache");
  std::filesystem::create_directories(root_ / "local/bin");
  std::filesystem::create_symlink(self, root_ / "local/bin/toolcache");
  EXPECT_EQ(ChooseToolcacheCommand(self, Dir("local/bin"), false).command,
            "toolcache");
}

TEST_F(ToolcacheCommandTest, AbsolutePathWhenAsked) {
  const std::string self = File("usr/bin/toolcache");
  ToolcacheCommand c = ChooseToolcacheCommand(self, Dir("usr/bin"), true);
  EXPECT_EQ(c.command, self);
  EXPECT_EQ(c.note, "");
}

TEST_F(ToolcacheCommandTest, AbsolutePathWithANoteWhenNotOnPath) {
  const std::string self = File("build/apps/toolcache/toolcache");
  ToolcacheCommand c =
      ChooseToolcacheCommand(self, Dir("usr/bin") + "::.:bin", false);
  EXPECT_EQ(c.command, self);
  EXPECT_NE(c.note.find("no 'toolcache' on PATH"), std::string::npos) << c.note;
  EXPECT_EQ(ChooseToolcacheCommand(self, "", false).command, self);
}

TEST_F(ToolcacheCommandTest, AbsolutePathWhenPathFindsAnotherToolcacheFirst) {
  const std::string self = File("build/toolcache");
  const std::string other = File("usr/local/bin/toolcache");
  File("usr/bin/toolcache");
  std::filesystem::remove(root_ / "usr/bin/toolcache");
  std::filesystem::create_symlink(self, root_ / "usr/bin/toolcache");
  // usr/local/bin comes first: a shell would run `other`, not this program.
  ToolcacheCommand c = ChooseToolcacheCommand(
      self, Dir("usr/local/bin") + ":" + Dir("usr/bin"), false);
  EXPECT_EQ(c.command, self);
  EXPECT_NE(c.note.find(other), std::string::npos) << c.note;
  // The other order finds this program.
  EXPECT_EQ(ChooseToolcacheCommand(
                self, Dir("usr/bin") + ":" + Dir("usr/local/bin"), false)
                .command,
            "toolcache");
}

TEST_F(ToolcacheCommandTest, SkipsNonExecutableFilesAndDirectories) {
  const std::string self = File("usr/bin/toolcache");
  File("a/toolcache", /*executable=*/false);
  Dir("b/toolcache");
  EXPECT_EQ(ChooseToolcacheCommand(
                self, Dir("a") + ":" + Dir("b") + ":" + Dir("usr/bin"), false)
                .command,
            "toolcache");
}

}  // namespace
}  // namespace toolcache
