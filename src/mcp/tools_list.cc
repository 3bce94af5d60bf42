// Learning tool definitions from tools/list results.
//
// Invariants: a page that cannot be parsed teaches nothing (the tools stay
// classified by name only, which is the conservative side); one malformed
// tool definition does not hide the others on the page.
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "src/mcp/session.h"
#include "toolcache/classifier.h"

namespace toolcache::mcp {

void LearnToolsFromListResult(ToolCache* cache, std::string_view server,
                              std::string_view result, bool replace) {
  nlohmann::json j = nlohmann::json::parse(result, nullptr, false);
  if (!j.is_object() || !j.contains("tools") || !j["tools"].is_array()) {
    spdlog::warn("tools/list result without a tools array: not learned");
    return;
  }
  std::vector<ToolInfo> tools;
  for (const nlohmann::json& t : j["tools"]) {
    Result<ToolInfo> info = ToolInfoFromJson(t, server);
    if (!info.ok()) {
      spdlog::warn("tools/list: skipping a tool definition: {}",
                   info.status().message());
      continue;
    }
    tools.push_back(std::move(*info));
  }
  spdlog::debug("learned {} tool(s) from tools/list", tools.size());
  cache->LearnTools(server, tools, replace);
}

}  // namespace toolcache::mcp
