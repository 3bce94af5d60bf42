// Uses the installed headers and libraries: prints the cache key digest of
// a call (which `toolcache key` must agree with) and whether the engine
// serves the repeat of a read-only call from cache.
//
// Usage: consumer SERVER TOOL 'ARGS_JSON'
#include <iostream>
#include <memory>

#include "toolcache/canonical_json.h"
#include "toolcache/clock.h"
#include "toolcache/config.h"
#include "toolcache/key.h"
#include "toolcache/tool_cache.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: consumer SERVER TOOL ARGS_JSON\n";
    return 2;
  }
  toolcache::Result<std::string> args = toolcache::CanonicalizeJson(argv[3]);
  if (!args.ok()) {
    std::cerr << args.status().message() << "\n";
    return 2;
  }
  toolcache::CacheKey key{
      .scope = "", .server = argv[1], .tool = argv[2], .canonical_args = *args};
  std::cout << "digest " << key.DigestHex() << "\n";

  toolcache::SystemClock clock;
  auto cache = toolcache::NewToolCache(toolcache::Config{}, &clock);
  if (!cache.ok()) {
    std::cerr << cache.status().message() << "\n";
    return 1;
  }
  const toolcache::ToolCall call{
      .server = argv[1], .tool = argv[2], .arguments_json = argv[3]};
  toolcache::CallPlan first = (*cache)->Begin(call, 1);
  if (first.action != toolcache::CallAction::kForward || first.bypass) {
    std::cerr << "first call not forwarded for caching: " << first.bypass_reason
              << "\n";
    return 1;
  }
  (*cache)->Complete(first.ticket, {.result_json = R"({"content":[]})",
                                    .latency_seconds = 0.1});
  toolcache::CallPlan second = (*cache)->Begin(call, 2);
  std::cout << "second "
            << (second.action == toolcache::CallAction::kServe ? "hit" : "miss")
            << "\n";
  return 0;
}
