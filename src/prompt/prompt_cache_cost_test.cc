// Instructions per rewritten request, for callgrind (docs/PROMPT_CACHE.md
// "Cost"): a Claude Code-sized Anthropic request (30 tools out of order,
// a 4 KB system prompt, 40 messages, ~78 KB) through Prepare, 50 times,
// compact (what the SDKs send) and pretty-printed (indent 2).
// Disabled: run it under callgrind by hand, e.g.
//   valgrind --tool=callgrind --toggle-collect='*PromptCacheImpl::Prepare*'
//     build/src/prompt/toolcache_prompt_test --gtest_also_run_disabled_tests
//     --gtest_filter='*RewrittenRequestCost*'
#include <gtest/gtest.h>

#include <algorithm>
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

// The same body with two stage edits of the proxy's (offload's tool
// appended, the last message's text replaced by a preview), 50 times each
// way: the former path (apply them, Prepare the result: a read and a write
// of the applied body, then the stage's own splice) and the composed one
// (PrepareEdited over the client's body, its edits and the stage edits
// applied once). Compare with
//   valgrind --tool=callgrind --toggle-collect='*StageEditsFormer*' ...
//   valgrind --tool=callgrind --toggle-collect='*StageEditsComposed*' ...
struct StageCase {
  std::string body;
  std::vector<std::pair<std::pair<uint32_t, uint32_t>, std::string>> edits;
};

StageCase WithStageEdits() {
  StageCase c{ClaudeCodeSizedBody(), {}};
  const uint32_t tools_end =
      static_cast<uint32_t>(c.body.find(R"(,"messages":)")) - 1;
  c.edits.push_back(
      {{tools_end, tools_end},
       R"(,{"name":"toolcache_read","input_schema":{"type":"object"}})"});
  const uint32_t last = static_cast<uint32_t>(c.body.rfind(R"("text":")")) + 7;
  const uint32_t last_end =
      static_cast<uint32_t>(c.body.find('"', last + 1)) + 1;
  c.edits.push_back({{last, last_end}, R"("[offloaded] preview")"});
  return c;
}

std::string Apply(
    const std::string& body,
    std::vector<std::pair<std::pair<uint32_t, uint32_t>, std::string>> e) {
  std::sort(e.begin(), e.end());
  std::string out;
  uint32_t from = 0;
  for (const auto& [r, t] : e) {
    out.append(body, from, r.first - from);
    out.append(t);
    from = r.second;
  }
  out.append(body, from);
  return out;
}

PromptCacheOptions AllOn() {
  PromptCacheOptions o;
  o.stabilize_tools = o.place_cache_control = o.cache_system =
      o.cache_last_turn = o.detect_breaks = true;
  return o;
}

[[gnu::noinline]] std::string StageEditsFormer(PromptCache* pc,
                                               const StageCase& c) {
  const std::string applied = Apply(c.body, c.edits);
  PreparedRequest p = pc->Prepare(PromptApi::kAnthropicMessages, "s", applied);
  return p.rewritten ? p.body : applied;
}

[[gnu::noinline]] std::string StageEditsComposed(PromptCache* pc,
                                                 const StageCase& c) {
  std::vector<BodyEditView> views;
  for (const auto& [r, t] : c.edits) views.push_back({r.first, r.second, t});
  PreparedRequest p =
      pc->PrepareEdited(PromptApi::kAnthropicMessages, "s", c.body, views);
  EXPECT_TRUE(p.composed);
  auto all = c.edits;
  for (PromptEdit& e : p.edits) {
    std::erase_if(all, [&](const auto& s) {
      return e.begin <= s.first.first && s.first.second <= e.end;
    });
    all.push_back({{e.begin, e.end}, std::move(e.text)});
  }
  return Apply(c.body, std::move(all));
}

TEST(PromptCacheCost, DISABLED_StageEditsCost) {
  const StageCase c = WithStageEdits();
  FixedClock clock;
  std::unique_ptr<PromptCache> a = NewPromptCache(AllOn(), &clock, nullptr);
  std::unique_ptr<PromptCache> b = NewPromptCache(AllOn(), &clock, nullptr);
  for (int i = 0; i < 50; ++i) {
    const std::string x = StageEditsFormer(a.get(), c);
    const std::string y = StageEditsComposed(b.get(), c);
    ASSERT_EQ(x, y);
  }
}

}  // namespace
}  // namespace toolcache
