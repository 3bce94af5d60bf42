// Invariants: only `command` and `args` of stdio servers change; member
// order and every other field survive (ordered_json); Wrap then Unwrap
// restores the original servers exactly; a server is treated as wrapped
// only when IsWrapped recognizes toolcache itself in front of it.
#include "src/mcp/wrap.h"

#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>

namespace toolcache {
namespace {

using Json = nlohmann::ordered_json;

Result<Json*> Servers(Json& doc, std::string_view text) {
  doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded()) {
    return InvalidArgument("not valid JSON (check for trailing commas)");
  }
  if (!doc.is_object() || !doc.contains("mcpServers") ||
      !doc["mcpServers"].is_object()) {
    return InvalidArgument(
        "no \"mcpServers\" object at the top level (expected the format of "
        ".mcp.json or claude_desktop_config.json)");
  }
  for (auto& [name, server] : doc["mcpServers"].items()) {
    if (!server.is_object()) {
      return InvalidArgument("mcpServers." + name + " is not an object");
    }
  }
  return &doc["mcpServers"];
}

// The file name of a command path ("/usr/bin/toolcache" -> "toolcache",
// "C:\\tc\\toolcache.exe" -> "toolcache").
std::string Basename(std::string path) {
  const size_t slash = path.find_last_of("/\\");
  if (slash != std::string::npos) path.erase(0, slash + 1);
  if (path.size() > 4) {
    std::string ext = path.substr(path.size() - 4);
    for (char& c : ext) {
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (ext == ".exe") path.resize(path.size() - 4);
  }
  return path;
}

// True when server `name` already runs behind toolcache: its args are
// `mcp ... -- <command>` AND either the command is toolcache (basename
// "toolcache") or the args have exactly the shape Wrap writes for this
// server (`mcp --name <name> [--config F] --`, which covers a custom
// --toolcache path). Another CLI's `mcp` subcommand (`docker mcp gateway
// run -- ...`) is not mistaken for a wrapped server.
bool IsWrapped(const std::string& name, const Json& server) {
  if (!server.contains("args") || !server["args"].is_array()) return false;
  if (!server.contains("command") || !server["command"].is_string()) {
    return false;
  }
  const Json& args = server["args"];
  if (args.empty() || args[0] != "mcp") return false;
  size_t sep = 0;
  while (sep < args.size() && args[sep] != "--") ++sep;
  if (sep == args.size()) return false;
  if (Basename(server["command"].get<std::string>()) == "toolcache") {
    return true;
  }
  const bool named = sep >= 3 && args[1] == "--name" && args[2] == name;
  const bool config = sep == 5 && args[3] == "--config" && args[4].is_string();
  return named && (sep == 3 || config);
}

}  // namespace

Result<WrapOutcome> WrapMcpServers(std::string_view json_text,
                                   const WrapOptions& options) {
  Json doc;
  Result<Json*> servers = Servers(doc, json_text);
  if (!servers.ok()) return servers.status();
  WrapOutcome out;
  for (auto& [name, server] : (*servers)->items()) {
    std::string type = server.value("type", "stdio");
    if (server.contains("url") || type != "stdio") {
      out.skipped.push_back(name + ": not a stdio server");
      continue;
    }
    if (!server.contains("command") || !server["command"].is_string()) {
      out.skipped.push_back(name + ": no string \"command\"");
      continue;
    }
    if (IsWrapped(name, server)) {
      // Choice: only a command named toolcache is retargeted; a wrapped
      // server whose command is a custom --toolcache path keeps it.
      const std::string old = server["command"].get<std::string>();
      if (Basename(old) == "toolcache" && old != options.toolcache) {
        server["command"] = options.toolcache;
        out.changed.push_back(name);
        out.retargeted.push_back(name + ": " + old + " -> " +
                                 options.toolcache);
      } else {
        out.skipped.push_back(name + ": already wrapped");
      }
      continue;
    }
    if (server.contains("args") && !server["args"].is_array()) {
      out.skipped.push_back(name + ": \"args\" is not an array");
      continue;
    }
    Json args = Json::array({"mcp", "--name", name});
    if (!options.config_path.empty()) {
      args.push_back("--config");
      args.push_back(options.config_path);
    }
    args.push_back("--");
    args.push_back(server["command"]);
    if (server.contains("args")) {
      for (const Json& a : server["args"]) args.push_back(a);
    }
    server["command"] = options.toolcache;
    server["args"] = std::move(args);
    out.changed.push_back(name);
  }
  out.text = doc.dump(2) + "\n";
  return out;
}

Result<WrapOutcome> UnwrapMcpServers(std::string_view json_text) {
  Json doc;
  Result<Json*> servers = Servers(doc, json_text);
  if (!servers.ok()) return servers.status();
  WrapOutcome out;
  for (auto& [name, server] : (*servers)->items()) {
    if (!IsWrapped(name, server)) {
      out.skipped.push_back(name + ": not wrapped");
      continue;
    }
    const Json& args = server["args"];
    size_t sep = 0;
    while (args[sep] != "--") ++sep;
    if (sep + 1 >= args.size() || !args[sep + 1].is_string()) {
      out.skipped.push_back(name + ": no command after \"--\"");
      continue;
    }
    Json command = args[sep + 1];
    Json rest = Json::array();
    for (size_t i = sep + 2; i < args.size(); ++i) rest.push_back(args[i]);
    server["command"] = command;
    server["args"] = std::move(rest);
    out.changed.push_back(name);
  }
  out.text = doc.dump(2) + "\n";
  return out;
}

ToolcacheCommand ChooseToolcacheCommand(std::string_view self_exe,
                                        std::string_view path_env,
                                        bool absolute) {
  const std::string self(self_exe);
  if (absolute) return {self, ""};
  size_t start = 0;
  while (start <= path_env.size()) {
    size_t end = path_env.find(':', start);
    if (end == std::string_view::npos) end = path_env.size();
    const std::string_view dir = path_env.substr(start, end - start);
    start = end + 1;
    // Choice: empty and relative entries ("", ".", "bin") are skipped: they
    // name a different directory in the client's working directory.
    if (dir.empty() || dir[0] != '/') continue;
    const std::filesystem::path candidate =
        std::filesystem::path(dir) / "toolcache";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(candidate, ec) ||
        access(candidate.c_str(), X_OK) != 0) {
      continue;
    }
    // The first hit is what a shell (and execvp) runs.
    if (std::filesystem::equivalent(candidate, self, ec) && !ec) {
      return {"toolcache", ""};
    }
    return {self, "'toolcache' on PATH is " + candidate.string() +
                      ", not this program; writing its absolute path " + self};
  }
  return {self,
          "no 'toolcache' on PATH; writing this program's absolute path " +
              self +
              " (it breaks when that file moves; install "
              "toolcache, see README.md 'Install')"};
}

}  // namespace toolcache
