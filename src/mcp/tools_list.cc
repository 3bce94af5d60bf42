// Learning tool definitions from tools/list results.
//
// Invariants: a page that cannot be parsed teaches nothing (ok = false); one
// malformed tool definition does not hide the others on the page. Tool
// objects are parsed with ordered_json so the schema's first property (the
// tool-level parameter category) is the server's first, not the
// alphabetically first.
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "src/mcp/json_scan.h"
#include "src/mcp/session.h"
#include "toolcache/classifier.h"

namespace toolcache::mcp {

ToolsPage ParseToolsPage(std::string_view server, std::string_view result) {
  ToolsPage page;
  nlohmann::ordered_json j =
      nlohmann::ordered_json::parse(result, nullptr, false);
  if (!j.is_object() || !j.contains("tools") || !j["tools"].is_array()) {
    return page;
  }
  page.ok = true;
  for (const nlohmann::ordered_json& t : j["tools"]) {
    Result<ToolInfo> info = ToolInfoFromJson(t, server);
    if (!info.ok()) {
      spdlog::warn("tools/list: skipping a tool definition: {}",
                   info.status().message());
      continue;
    }
    page.tools.push_back(std::move(*info));
  }
  std::string_view cursor = FindMember(result, "nextCursor");
  if (!cursor.empty() && cursor.front() == '"') page.next_cursor = cursor;
  return page;
}

void LearnToolsFromListResult(ToolCache* cache, std::string_view server,
                              std::string_view result, bool replace) {
  ToolsPage page = ParseToolsPage(server, result);
  if (!page.ok) {
    spdlog::warn("tools/list result without a tools array: not learned");
    return;
  }
  spdlog::debug("learned {} tool(s) from tools/list", page.tools.size());
  cache->LearnTools(server, page.tools, replace);
}

}  // namespace toolcache::mcp
