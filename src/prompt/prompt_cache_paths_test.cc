// The prompt-cache stage reads any spelling of a body the same way: seeded
// random conversations (three APIs; tools in random order and key order,
// duplicated, deferred, non-objects, client breakpoints with and without
// "1h" or null; system as a string, empty, or blocks; messages with text,
// thinking and empty blocks; odd strings and numbers; random switches) go
// through one PromptCache as nlohmann's compact dump and through another
// re-spelled (whitespace around every token, escaped name bytes, '/',
// control and non-ASCII characters, doubles in exponent form, a duplicate
// "model" member before the real one). For every turn (a) the upstream
// bodies parse to the same DOM, (b) outside the members the rewrite
// splices (tools, system, the last message's content) the re-spelled
// upstream body holds the client's bytes, and (c) counters, conversation,
// tickets, break attribution and metrics are equal.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "src/metrics/metrics.h"
#include "src/prompt/span_tree.h"
#include "toolcache/clock.h"
#include "toolcache/prompt_cache.h"

namespace toolcache {
namespace {

using OJ = nlohmann::ordered_json;
using prompt_internal::SpanTree;

class StepClock final : public Clock {
 public:
  double NowSeconds() const override { return now; }
  double now = 1000;
};

struct Gen {
  std::mt19937 rng;
  int Pick(int n) { return static_cast<int>(rng() % n); }
  bool Coin(int percent) { return Pick(100) < percent; }

  OJ Text() {
    static const char* kTexts[] = {
        "hello",   "",         "caf\xc3\xa9", "tab\tnl\n",
        "q\"b\\s", "\x01\x7f", "/path",       "\xf0\x9f\x98\x80"};
    return kTexts[Pick(8)];
  }
  OJ Number() {
    switch (Pick(6)) {
      case 0:
        return 0.1;
      case 1:
        return 1e300;
      case 2:
        return -0.0;
      case 3:
        return 18446744073709551615ull;
      case 4:
        return -42;
      default:
        return 3;
    }
  }
  OJ CacheControl() {
    if (Coin(10)) return nullptr;
    OJ cc = {{"type", "ephemeral"}};
    if (Coin(30)) cc["ttl"] = "1h";
    return cc;
  }
  OJ Schema() {
    OJ props = OJ::object();
    const int n = Pick(3);
    for (int i = 0; i < n; ++i) {
      props["p" + std::to_string(i)] = {{"type", "string"},
                                        {"default", Number()}};
    }
    if (Coin(20)) props["deep"] = {{"x", {{"cache_control", CacheControl()}}}};
    return {{"type", "object"}, {"properties", props}};
  }
  OJ Tool(PromptApi api, const std::string& name) {
    if (Coin(5)) return Number();
    std::vector<std::pair<std::string, OJ>> members;
    if (api == PromptApi::kOpenAiChat) {
      members.push_back({"type", "function"});
      members.push_back({"function",
                         {{"name", name},
                          {"description", Text()},
                          {"parameters", Schema()}}});
    } else {
      if (!Coin(5)) members.push_back({"name", name});
      if (Coin(5)) members.push_back({"type", "web_search"});
      members.push_back({"description", Text()});
      members.push_back({"input_schema", Schema()});
      if (Coin(15)) members.push_back({"defer_loading", Coin(70)});
    }
    if (Coin(25)) members.push_back({"cache_control", CacheControl()});
    std::shuffle(members.begin(), members.end(), rng);
    OJ t = OJ::object();
    for (auto& [k, v] : members) t[k] = v;
    return t;
  }
  OJ Block(bool last) {
    OJ b;
    switch (Pick(last ? 4 : 2)) {
      case 0:
      case 1:
        b = {{"type", "text"}, {"text", Text()}};
        break;
      case 2:
        b = {{"type", "thinking"}, {"thinking", "hm"}, {"signature", "s"}};
        break;
      default:
        b = {{"type", "text"}, {"text", ""}};
    }
    if (Coin(8)) b["cache_control"] = CacheControl();
    return b;
  }
  OJ Message(PromptApi api, int i, bool last) {
    if (api == PromptApi::kOpenAiResponses && i > 0 && Coin(30)) {
      return {{"type", "function_call"},
              {"call_id", "c" + std::to_string(i)},
              {"name", "a"},
              {"arguments", "{}"}};
    }
    OJ m = {{"role", i % 2 == 0 ? "user" : "assistant"}};
    if (api != PromptApi::kAnthropicMessages && i == 0 && Coin(30)) {
      m["role"] = Coin(50) ? "system" : "developer";
    }
    if (i == 0 || Coin(40)) {
      m["content"] = i == 0 ? OJ("first") : Text();
    } else {
      OJ blocks = OJ::array();
      const int n = 1 + Pick(3);
      for (int k = 0; k < n; ++k) blocks.push_back(Block(last));
      m["content"] = blocks;
    }
    return m;
  }
};

std::string Turn(Gen& g, PromptApi api, std::vector<std::string>* names,
                 int turn) {
  OJ b = OJ::object();
  b["model"] = g.Coin(90) ? "m1" : "m2";
  if (g.Coin(20)) b["unknown_field"] = {{"n", g.Number()}};
  if (api == PromptApi::kAnthropicMessages && g.Coin(80)) {
    switch (g.Pick(3)) {
      case 0:
        b["system"] = g.Text();
        break;
      case 1:
        b["system"] = "be brief";
        break;
      default: {
        OJ s = OJ::array();
        s.push_back({{"type", "text"}, {"text", "sys"}});
        if (g.Coin(30)) s.back()["cache_control"] = g.CacheControl();
        b["system"] = s;
      }
    }
  }
  if (api == PromptApi::kOpenAiResponses && g.Coin(70)) {
    b["instructions"] = "be brief";
  }
  if (g.Coin(85)) {
    // The conversation's tools, reshuffled, sometimes one added / dropped.
    if (g.Coin(20)) names->push_back("t" + std::to_string(g.Pick(5)));
    if (g.Coin(10) && !names->empty()) names->pop_back();
    std::vector<std::string> order = *names;
    std::shuffle(order.begin(), order.end(), g.rng);
    OJ tools = OJ::array();
    for (const std::string& n : order) tools.push_back(g.Tool(api, n));
    b["tools"] = tools;
  }
  if (g.Coin(15)) b["tool_choice"] = {{"type", "auto"}};
  if (g.Coin(15))
    b["thinking"] = {{"type", "enabled"}, {"budget_tokens", 1024}};
  const char* key = api == PromptApi::kOpenAiResponses ? "input" : "messages";
  if (api == PromptApi::kOpenAiResponses && g.Coin(10)) {
    b[key] = "first";
  } else {
    OJ msgs = OJ::array();
    const int n = 1 + 2 * turn + g.Pick(2);
    for (int i = 0; i < n; ++i) msgs.push_back(g.Message(api, i, i == n - 1));
    b[key] = msgs;
  }
  if (g.Coin(5)) b["max_tokens"] = g.Number();
  return b.dump();
}

// A string literal with every byte the dump writes plainly spelled
// otherwise where JSON allows: '/', control and non-ASCII characters as
// \u escapes (uppercase hex, surrogate pairs above U+FFFF); in a member
// name the first character too.
void RespellString(const std::string& s, bool name, std::string* out) {
  auto u = [out](unsigned v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "\\u%04X", v);
    out->append(buf);
  };
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    unsigned cp = c;
    int len = 1;
    if (c >= 0xf0) {
      cp = c & 7, len = 4;
    } else if (c >= 0xe0) {
      cp = c & 15, len = 3;
    } else if (c >= 0xc0) {
      cp = c & 31, len = 2;
    }
    for (int k = 1; k < len; ++k) cp = (cp << 6) | (s[i + k] & 0x3f);
    if ((name && i == 0) || cp < 0x20 || (cp >= 0x7f && cp < 0x10000)) {
      u(cp);
    } else if (cp >= 0x10000) {
      u(0xd800 + ((cp - 0x10000) >> 10));
      u(0xdc00 + ((cp - 0x10000) & 0x3ff));
    } else if (c == '/') {
      out->append("\\/");
    } else if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else {
      out->push_back(static_cast<char>(c));
    }
    i += len;
  }
  out->push_back('"');
}

// `v` spelled non-compactly; a pure function of the value, so a tool is
// spelled the same on every turn (the memo sees the same bytes).
void Respell(const OJ& v, bool top, std::string* out) {
  if (v.is_object()) {
    out->append("{\n");
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!first) out->append(" ,\n");
      first = false;
      if (top && it.key() == "model") {
        out->append("  \"model\" : \"decoy\",\n");  // read last: dropped
      }
      out->append("  ");
      RespellString(it.key(), true, out);
      out->append(" :\t");
      Respell(it.value(), false, out);
    }
    out->append("\n}");
  } else if (v.is_array()) {
    out->append("[ ");
    for (size_t i = 0; i < v.size(); ++i) {
      if (i > 0) out->append(" , ");
      Respell(v[i], false, out);
    }
    out->append(" ]");
  } else if (v.is_string()) {
    RespellString(v.get<std::string>(), false, out);
  } else if (v.is_number_float()) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17E", v.get<double>());
    out->append(buf);
  } else {
    out->append(v.dump());
  }
}

// The bodies as the provider receives them.
std::string Sent(const PreparedRequest& p, const std::string& body) {
  return p.rewritten ? p.body : body;
}

// (b): outside tools, system and the last message's content, `sent` holds
// the bytes of `client` (both read by SpanTree; same members in order).
void ExpectClientBytesKept(const std::string& client, const std::string& sent,
                           const char* messages_key) {
  SpanTree a, b;
  ASSERT_TRUE(a.Read(client));
  ASSERT_TRUE(b.Read(sent));
  ASSERT_EQ(a.count(0), b.count(0));
  for (uint32_t x = a.first(0), y = b.first(0); x != SpanTree::kNone;
       x = a.next(x), y = b.next(y)) {
    ASSERT_EQ(a.KeyRaw(x), b.KeyRaw(y));
    const std::string name = a.Name(x);
    if (name == "tools" || name == "system") continue;
    if (name != messages_key || a.kind(x) != 'a' ||
        x != a.Find(0, messages_key)) {
      EXPECT_EQ(a.Raw(x), b.Raw(y)) << name;
      continue;
    }
    ASSERT_EQ(a.count(x), b.count(y));
    for (uint32_t m = a.first(x), n = b.first(y); m != SpanTree::kNone;
         m = a.next(m), n = b.next(n)) {
      if (a.next(m) != SpanTree::kNone || a.kind(m) != 'o') {
        EXPECT_EQ(a.Raw(m), b.Raw(n));
        continue;
      }
      ASSERT_EQ(a.count(m), b.count(n));
      for (uint32_t i = a.first(m), j = b.first(n); i != SpanTree::kNone;
           i = a.next(i), j = b.next(j)) {
        if (a.Name(i) == "content") continue;
        EXPECT_EQ(a.Raw(i), b.Raw(j));
      }
    }
  }
}

TEST(PromptCachePaths, AnySpellingGivesTheSameRewriteAndKeepsTheClientsBytes) {
  Gen g{std::mt19937(20261128)};
  int rewritten = 0, turns = 0;
  for (int conv = 0; conv < 400; ++conv) {
    const PromptApi api = static_cast<PromptApi>(g.Pick(3));
    PromptCacheOptions o;
    o.stabilize_tools = g.Coin(80);
    o.place_cache_control = g.Coin(70);
    o.cache_system = g.Coin(60);
    o.cache_last_turn = g.Coin(60);
    o.detect_breaks = g.Coin(85);
    o.ttl = g.Coin(30) ? "1h" : "";
    o.min_cacheable_tokens = g.Coin(50) ? 0 : 60;
    StepClock clock;
    metrics::Registry rc, rs;
    std::unique_ptr<PromptCache> compact = NewPromptCache(o, &clock, &rc);
    std::unique_ptr<PromptCache> spelled = NewPromptCache(o, &clock, &rs);
    std::vector<std::string> names = {"bash", "edit", "mcp__git__log",
                                      "mcp__fs__read", "bash"};
    names.resize(g.Pick(6));
    std::string body, other;
    const char* key = api == PromptApi::kOpenAiResponses ? "input" : "messages";
    for (int turn = 0; turn < 4; ++turn) {
      // Sometimes the same request again: only the gap can explain a
      // break (TTL expiry against the breakpoints' TTL).
      if (turn == 0 || !g.Coin(30)) {
        body = Turn(g, api, &names, turn);
        other.clear();
        Respell(OJ::parse(body), true, &other);
      }
      SCOPED_TRACE(other);
      ASSERT_NE(body, other);
      PreparedRequest a = compact->Prepare(api, "s", body);
      PreparedRequest b = spelled->Prepare(api, "s", other);
      ++turns;
      ASSERT_EQ(a.rewritten, b.rewritten) << body << "\n" << b.body;
      // (a) the same request for the provider.
      ASSERT_EQ(OJ::parse(Sent(a, body)), OJ::parse(Sent(b, other)))
          << Sent(b, other);
      // (b) the client's bytes outside the spliced members.
      ExpectClientBytesKept(other, Sent(b, other), key);
      // (c) the same decisions.
      EXPECT_EQ(a.tools_moved, b.tools_moved);
      EXPECT_EQ(a.tools_deduplicated, b.tools_deduplicated);
      EXPECT_EQ(a.tools_memoised, b.tools_memoised);
      EXPECT_EQ(a.breakpoints_added, b.breakpoints_added);
      EXPECT_EQ(a.conversation, b.conversation);
      EXPECT_EQ(a.ticket != 0, b.ticket != 0);
      rewritten += a.rewritten;
      PromptUsage u;
      u.cache_read_tokens = turn == 0 ? 0 : (g.Coin(50) ? 100 : 9000);
      u.cache_creation_tokens = turn == 0 ? 10000 : 500;
      clock.now += g.Coin(20) ? (g.Coin(50) ? 4000 : 1000) : 10;
      std::optional<CacheBreak> ba = compact->Observe(a.ticket, u);
      std::optional<CacheBreak> bb = spelled->Observe(b.ticket, u);
      ASSERT_EQ(ba.has_value(), bb.has_value());
      if (ba) {
        EXPECT_EQ(ba->Label(), bb->Label());
        EXPECT_EQ(ba->changes, bb->changes);
      }
    }
    EXPECT_EQ(compact->BreaksJson(), spelled->BreaksJson());
    EXPECT_EQ(rc.Prometheus(), rs.Prometheus());
  }
  EXPECT_EQ(prompt_internal::DomParseCount(), 0u);
  EXPECT_EQ(turns, 1600);
  EXPECT_GT(rewritten, 300);
}

// Issue 30: the prompt cache composed with the proxy's other stages. Each
// random turn gets random stage edits of the kinds splice and offload make
// (a tool appended to the tool list; messages inserted before a message or
// replacing a run of them; a message's or a block's member value
// replaced), in the client's spelling or respelled. PrepareEdited reads
// them into its reading of the client's body; its edits, with the stage
// edits not inside them, applied once, must be the bytes Prepare gives for
// the applied body (the former path), with the same decisions, breaks and
// metrics. Where it does not compose it says so before doing anything, and
// the former path runs.
struct StageEdit {
  uint32_t begin, end;
  std::string text;
};

std::string ApplyEdits(const std::string& body, std::vector<StageEdit> edits) {
  std::stable_sort(
      edits.begin(), edits.end(),
      [](const StageEdit& a, const StageEdit& b) { return a.begin < b.begin; });
  std::string out;
  uint32_t from = 0;
  for (const StageEdit& e : edits) {
    out.append(body, from, e.begin - from);
    out.append(e.text);
    from = e.end;
  }
  out.append(body, from);
  return out;
}

std::vector<StageEdit> RandomStageEdits(Gen& g, PromptApi api,
                                        const std::string& body) {
  SpanTree t;
  std::vector<StageEdit> out;
  if (!t.Read(body)) return out;
  const uint32_t tools = t.Find(0, "tools");
  if (tools != SpanTree::kNone && t.kind(tools) == 'a' && t.count(tools) > 0 &&
      g.Coin(60)) {
    uint32_t last = t.first(tools);
    while (t.next(last) != SpanTree::kNone) last = t.next(last);
    out.push_back(
        {t.end(last), t.end(last),
         R"(,{"name":"toolcache_read","input_schema":{"type":"object"}})"});
  }
  const uint32_t msgs =
      t.Find(0, api == PromptApi::kOpenAiResponses ? "input" : "messages");
  if (msgs == SpanTree::kNone || t.kind(msgs) != 'a') return out;
  std::vector<uint32_t> list;
  for (uint32_t m = t.first(msgs); m != SpanTree::kNone; m = t.next(m)) {
    list.push_back(m);
  }
  std::vector<bool> used(list.size(), false);
  const std::string hidden =
      R"({"role":"assistant","content":[{"type":"text","text":"hidden"}]},{"role":"user","content":"r"})";
  if (list.size() > 1 && g.Coin(60)) {
    const size_t k = 1 + g.Pick(static_cast<int>(list.size() - 1));
    if (g.Coin(70)) {
      out.push_back({t.begin(list[k]), t.begin(list[k]), hidden + ","});
      used[k] = true;
    } else {
      const size_t j =
          k + g.Pick(static_cast<int>(std::min<size_t>(2, list.size() - k)));
      out.push_back({t.begin(list[k]), t.end(list[j]), hidden});
      for (size_t i = k; i <= j; ++i) used[i] = true;
    }
  }
  // A member value replaced (offload's preview), in a message the
  // edits above left alone.
  for (size_t i = 0; i < list.size(); ++i) {
    if (used[i] || t.kind(list[i]) != 'o' || !g.Coin(40)) continue;
    const uint32_t c = t.Find(list[i], "content");
    if (c == SpanTree::kNone) continue;
    if (t.kind(c) == 'a' && t.count(c) > 0 && g.Coin(70)) {
      const uint32_t b = t.first(c);
      if (t.kind(b) != 'o') continue;
      const uint32_t x = t.Find(b, "text");
      if (x == SpanTree::kNone) continue;
      out.push_back({t.begin(x), t.end(x), R"("[offloaded] head ... tail")"});
    } else {
      out.push_back({t.begin(c), t.end(c), R"("[offloaded] preview")"});
    }
  }
  std::shuffle(out.begin(), out.end(), g.rng);
  return out;
}

TEST(PromptCachePaths, StageEditsReadInPlaceGiveTheFormerPathsBytes) {
  Gen g{std::mt19937(20261130)};
  int composed = 0, fell_back = 0, turns = 0, edited = 0;
  for (int conv = 0; conv < 300; ++conv) {
    const PromptApi api = static_cast<PromptApi>(g.Pick(3));
    PromptCacheOptions o;
    o.stabilize_tools = g.Coin(80);
    o.place_cache_control = g.Coin(70);
    o.cache_system = g.Coin(60);
    o.cache_last_turn = g.Coin(60);
    o.detect_breaks = g.Coin(85);
    o.ttl = g.Coin(30) ? "1h" : "";
    o.min_cacheable_tokens = g.Coin(50) ? 0 : 60;
    StepClock clock;
    metrics::Registry ra, rb;
    std::unique_ptr<PromptCache> former = NewPromptCache(o, &clock, &ra);
    std::unique_ptr<PromptCache> one = NewPromptCache(o, &clock, &rb);
    std::vector<std::string> names = {"bash", "edit", "mcp__git__log",
                                      "mcp__fs__read", "bash"};
    names.resize(g.Pick(6));
    for (int turn = 0; turn < 4; ++turn) {
      std::string body = Turn(g, api, &names, turn);
      if (g.Coin(30)) {
        std::string other;
        Respell(OJ::parse(body), true, &other);
        body = other;
      }
      const std::vector<StageEdit> stage = RandomStageEdits(g, api, body);
      edited += !stage.empty();
      SCOPED_TRACE(body);
      const std::string applied = ApplyEdits(body, stage);
      ASSERT_FALSE(OJ::parse(applied, nullptr, false).is_discarded())
          << applied;
      PreparedRequest a = former->Prepare(api, "s", applied);
      const std::string want = a.rewritten ? a.body : applied;
      std::vector<BodyEditView> views;
      for (const StageEdit& e : stage)
        views.push_back({e.begin, e.end, e.text});
      const uint64_t writes = prompt_internal::BodyWriteCount();
      PreparedRequest b = one->PrepareEdited(api, "s", body, views);
      std::string got;
      if (b.composed) {
        ++composed;
        EXPECT_EQ(prompt_internal::BodyWriteCount(), writes);
        // The stage edits inside a rewritten value are in its text.
        std::vector<StageEdit> all;
        for (const StageEdit& e : stage) {
          bool inside = false;
          for (const PromptEdit& p : b.edits) {
            inside |=
                p.begin <= e.begin && e.end <= p.end &&
                !(e.begin == e.end && (e.begin == p.begin || e.end == p.end));
          }
          if (!inside) all.push_back(e);
        }
        for (const PromptEdit& p : b.edits) {
          all.push_back({p.begin, p.end, p.text});
        }
        got = ApplyEdits(body, all);
      } else {
        ++fell_back;
        EXPECT_EQ(b.ticket, 0u);
        EXPECT_TRUE(b.edits.empty());
        b = one->Prepare(api, "s", applied);
        got = b.rewritten ? b.body : applied;
      }
      ++turns;
      ASSERT_EQ(got, want) << applied;
      EXPECT_EQ(a.rewritten, b.rewritten);
      EXPECT_EQ(a.tools_moved, b.tools_moved);
      EXPECT_EQ(a.tools_deduplicated, b.tools_deduplicated);
      EXPECT_EQ(a.tools_memoised, b.tools_memoised);
      EXPECT_EQ(a.breakpoints_added, b.breakpoints_added);
      EXPECT_EQ(a.conversation, b.conversation);
      EXPECT_EQ(a.ticket != 0, b.ticket != 0);
      PromptUsage u;
      u.cache_read_tokens = turn == 0 ? 0 : (g.Coin(50) ? 100 : 9000);
      u.cache_creation_tokens = turn == 0 ? 10000 : 500;
      clock.now += g.Coin(20) ? 4000 : 10;
      std::optional<CacheBreak> x = former->Observe(a.ticket, u);
      std::optional<CacheBreak> y = one->Observe(b.ticket, u);
      ASSERT_EQ(x.has_value(), y.has_value());
      if (x) {
        EXPECT_EQ(x->changes, y->changes);
      }
    }
    EXPECT_EQ(former->BreaksJson(), one->BreaksJson());
    EXPECT_EQ(ra.Prometheus(), rb.Prometheus());
  }
  EXPECT_EQ(turns, 1200);
  EXPECT_GT(edited, 600);
  EXPECT_GT(composed, 900) << fell_back << " fell back";
}

}  // namespace
}  // namespace toolcache
