// Instructions per rewritten request, for callgrind (docs/PROMPT_CACHE.md
// "Cost"): a Claude Code-sized Anthropic request (30 tools out of order,
// a 4 KB system prompt, 40 messages, ~78 KB) through Prepare, 50 times,
// compact (what the SDKs send) and pretty-printed (indent 2).
// Disabled: run it under callgrind by hand, e.g.
//   valgrind --tool=callgrind --toggle-collect='*PromptCacheImpl::Prepare*'
//     build/src/prompt/toolcache_prompt_test --gtest_also_run_disabled_tests
//     --gtest_filter='*RewrittenRequestCost*'
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "toolcache/clock.h"
#include "toolcache/prompt_cache.h"

namespace toolcache {
namespace {

class FixedClock final : public Clock {
 public:
  double NowSeconds() const override { return 1; }
};

std::string ClaudeCodeSizedBody() {
  std::string tools = "[";
  for (int i = 0; i < 30; ++i) {
    const std::string name =
        (i % 3 == 0 ? "mcp__srv__tool" : "Tool") + std::to_string(29 - i);
    if (i > 0) tools += ",";
    tools +=
        R"({"name":")" + name + R"(","description":")" + std::string(600, 'd') +
        R"(","input_schema":{"type":"object","properties":{"path":{"type":"string","description":"a path"},"limit":{"type":"integer"}},"required":["path"]}})";
  }
  tools += "]";
  std::string messages = R"([{"role":"user","content":"start"})";
  for (int i = 0; i < 20; ++i) {
    messages += R"(,{"role":"assistant","content":[{"type":"text","text":")" +
                std::string(1200, 'a') +
                R"("}]},{"role":"user","content":[{"type":"text","text":")" +
                std::string(1200, 'u') + R"("}]})";
  }
  messages += "]";
  return R"({"model":"claude-sonnet-4-5","max_tokens":4096,"system":")" +
         std::string(4000, 's') + R"(","tools":)" + tools + R"(,"messages":)" +
         messages + "}";
}

void PrepareFiftyTimes(const std::string& body) {
  PromptCacheOptions o;
  o.stabilize_tools = o.place_cache_control = o.cache_system =
      o.cache_last_turn = o.detect_breaks = true;
  FixedClock clock;
  std::unique_ptr<PromptCache> pc = NewPromptCache(o, &clock, nullptr);
  size_t out = 0;
  for (int i = 0; i < 50; ++i) {
    PreparedRequest p = pc->Prepare(PromptApi::kAnthropicMessages, "s", body);
    ASSERT_TRUE(p.rewritten);
    out += p.body.size();
  }
  EXPECT_GT(out, body.size());
  std::printf("body %zu bytes\n", body.size());
}

TEST(PromptCacheCost, DISABLED_RewrittenRequestCost) {
  PrepareFiftyTimes(ClaudeCodeSizedBody());
}

TEST(PromptCacheCost, DISABLED_RewrittenPrettyRequestCost) {
  PrepareFiftyTimes(
      nlohmann::ordered_json::parse(ClaudeCodeSizedBody()).dump(2));
}

}  // namespace
}  // namespace toolcache
