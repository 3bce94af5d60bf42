// Invariants:
// - A rewrite only reorders tools, drops duplicate names (first wins),
//   replaces a tool's bytes by the conversation's memoised bytes of the
//   SAME tool (equal after sorting keys, cache_control aside), and adds
//   cache_control members (Anthropic). Everything else is the client's
//   body as its DOM would dump it; a body with nothing to change is sent as
//   the client's bytes.
// - Two paths, one output: a body already in dump form (span_tree.h) is
//   read from its bytes and the rewrite spliced (SpanPrepare); any other
//   body, or one the DOM path would refuse, goes through the DOM (Rewrite).
//   The Span* functions mirror their DOM twins line for line and return
//   the bytes those would dump; the golden corpus pins it. Both paths share
//   the conversations (memo bytes are stored as their dump).
// - The client's breakpoints stay where the client put them; the request
//   never carries more than kMaxBreakpoints after the rewrite.
// - A fingerprint (what the provider's prefix is made of) is taken of the
//   body as sent upstream, with cache_control removed (a moved breakpoint
//   is not a content change).
// - mu_ guards conversations, LRU order, pending tickets and breaks; JSON
//   parsing and serialisation happen outside it.
// Choice: tools are sorted by byte-wise name comparison (Claude Code's client
// uses localeCompare; bytes are locale-free and deterministic).
// Choice: the previous turn's cached prefix is its read + creation tokens,
// so the turn after a cold start can already show a break (Claude Code's client
// compares reads only, which misses the second turn).
// Choice: the tool attribution names the first position where the two
// tool lists differ (added / removed / moved / schema_changed): the
// provider's cache breaks exactly there; the full diff is in `changes`.
#include "toolcache/prompt_cache.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <list>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "src/core/json.h"
#include "src/core/sha256.h"
#include "src/metrics/metrics.h"
#include "src/prompt/span_tree.h"

namespace toolcache {
namespace prompt_internal {
namespace {
thread_local uint64_t g_dom_parses = 0;
thread_local bool g_span_path = true;
}  // namespace
uint64_t DomParseCount() { return g_dom_parses; }
void UseSpanPathForTesting(bool on) { g_span_path = on; }
}  // namespace prompt_internal

namespace {

using OJ = nlohmann::ordered_json;
using prompt_internal::g_dom_parses;
using prompt_internal::g_span_path;

constexpr int kMaxBreakpoints = 4;
// Choice: tickets never observed (failed upstream calls) are forgotten
// oldest first beyond this many.
constexpr size_t kMaxPending = 4096;

std::string Hex(const Sha256Digest& d, size_t bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < bytes && i < d.size(); ++i) {
    s.push_back(kHex[d[i] >> 4]);
    s.push_back(kHex[d[i] & 15]);
  }
  return s;
}

uint64_t Hash64(std::string_view bytes) {
  const Sha256Digest d = ComputeSha256(bytes);
  uint64_t h = 0;
  for (int i = 0; i < 8; ++i) h = (h << 8) | d[i];
  return h;
}

std::string Dump(const OJ& v) {
  return v.dump(-1, ' ', false, OJ::error_handler_t::strict);
}

// Keys sorted, cache_control removed: equal for the same meaning.
void WriteCanonical(const OJ& v, std::string* out) {
  if (v.is_object()) {
    std::vector<const std::string*> keys;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (it.key() != "cache_control") keys.push_back(&it.key());
    }
    std::sort(
        keys.begin(), keys.end(),
        [](const std::string* a, const std::string* b) { return *a < *b; });
    out->push_back('{');
    bool first = true;
    for (const std::string* k : keys) {
      if (!first) out->push_back(',');
      first = false;
      out->append(Dump(OJ(*k)));
      out->push_back(':');
      WriteCanonical(v.at(*k), out);
    }
    out->push_back('}');
  } else if (v.is_array()) {
    out->push_back('[');
    bool first = true;
    for (const OJ& e : v) {
      if (!first) out->push_back(',');
      first = false;
      WriteCanonical(e, out);
    }
    out->push_back(']');
  } else {
    out->append(Dump(v));
  }
}

std::string Canonical(const OJ& v) {
  std::string s;
  WriteCanonical(v, &s);
  return s;
}

// A copy without any cache_control member (at any depth).
OJ Stripped(const OJ& v) {
  if (v.is_object()) {
    OJ out = OJ::object();
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (it.key() != "cache_control") out[it.key()] = Stripped(it.value());
    }
    return out;
  }
  if (v.is_array()) {
    OJ out = OJ::array();
    for (const OJ& e : v) out.push_back(Stripped(e));
    return out;
  }
  return v;
}

// Message content as a block list (a string is one text block).
OJ AsBlocks(const OJ& content) {
  if (content.is_string()) {
    return OJ::array({OJ{{"type", "text"}, {"text", content}}});
  }
  return content;
}

bool IsMcpTool(std::string_view name) { return name.substr(0, 5) == "mcp__"; }

std::string ToolName(PromptApi api, const OJ& tool) {
  if (!tool.is_object()) return "";
  if (api == PromptApi::kOpenAiChat) {
    auto f = tool.find("function");
    if (f != tool.end() && f->is_object()) {
      auto n = f->find("name");
      if (n != f->end() && n->is_string()) return n->get<std::string>();
    }
  }
  auto n = tool.find("name");
  if (n != tool.end() && n->is_string()) return n->get<std::string>();
  auto t = tool.find("type");  // a provider tool without a name
  if (t != tool.end() && t->is_string()) return t->get<std::string>();
  return "";
}

bool Deferred(const OJ& tool) {
  if (!tool.is_object()) return false;
  auto d = tool.find("defer_loading");
  return d != tool.end() && d->is_boolean() && d->get<bool>();
}

bool HasMember(const OJ& v, std::string_view key) {
  return v.is_object() && v.find(key) != v.end();
}

// Breakpoints anywhere inside v, with their TTL in seconds.
void CollectBreakpoints(const OJ& v, int ordinal,
                        std::vector<std::pair<int, double>>* out) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (it.key() == "cache_control") {
        double ttl = 300;
        if (it->is_object()) {
          auto t = it->find("ttl");
          if (t != it->end() && t->is_string() && *t == "1h") ttl = 3600;
        }
        out->push_back({ordinal, ttl});
      } else {
        CollectBreakpoints(it.value(), ordinal, out);
      }
    }
  } else if (v.is_array()) {
    for (const OJ& e : v) CollectBreakpoints(e, ordinal, out);
  }
}

// The request's messages (Anthropic, Chat) or input items (Responses).
const char* MessagesKey(PromptApi api) {
  return api == PromptApi::kOpenAiResponses ? "input" : "messages";
}

bool IsSystemRole(const OJ& m) {
  if (!m.is_object()) return false;
  auto r = m.find("role");
  return r != m.end() && r->is_string() &&
         (*r == "system" || *r == "developer");
}

// ---- The same functions over a span tree of a body in dump form
// (span_tree.h): each returns the bytes its DOM twin above would dump.
using prompt_internal::SpanTree;
constexpr uint32_t kNoNode = SpanTree::kNone;

bool IsKey(const SpanTree& t, uint32_t m, std::string_view lit) {
  return t.KeyRaw(m) == lit;
}
constexpr std::string_view kCacheControlKey = "\"cache_control\"";
constexpr std::string_view kContentKey = "\"content\"";

// A string's AsBlocks form, dumped: [{"type":"text","text":<s>}].
void AppendTextBlock(std::string_view raw, std::string_view extra,
                     std::string* out) {
  out->append("[{\"type\":\"text\",\"text\":");
  out->append(raw);
  out->append(extra);
  out->append("}]");
}

// WriteCanonical; `content_blocks`: the top object's string "content" as
// one text block (ConversationId).
void SpanCanonical(const SpanTree& t, uint32_t n, bool content_blocks,
                   std::string* out) {
  if (t.kind(n) == 'o') {
    struct K {
      std::string name;
      uint32_t node;
    };
    std::vector<K> keys;
    for (uint32_t m = t.first(n); m != kNoNode; m = t.next(m)) {
      if (IsKey(t, m, kCacheControlKey)) continue;
      std::string_view raw = t.KeyRaw(m);
      std::string name;
      if (raw.find('\\') == std::string_view::npos) {
        name.assign(raw.substr(1, raw.size() - 2));
      } else {
        (void)json::Unquote(raw, &name);
      }
      keys.push_back({std::move(name), m});
    }
    std::sort(keys.begin(), keys.end(),
              [](const K& a, const K& b) { return a.name < b.name; });
    out->push_back('{');
    bool first = true;
    for (const K& k : keys) {
      if (!first) out->push_back(',');
      first = false;
      out->append(t.KeyRaw(k.node));
      out->push_back(':');
      if (content_blocks && t.kind(k.node) == 's' &&
          IsKey(t, k.node, kContentKey)) {
        out->append("[{\"text\":");
        out->append(t.Raw(k.node));
        out->append(",\"type\":\"text\"}]");
      } else {
        SpanCanonical(t, k.node, false, out);
      }
    }
    out->push_back('}');
  } else if (t.kind(n) == 'a') {
    out->push_back('[');
    for (uint32_t m = t.first(n); m != kNoNode; m = t.next(m)) {
      if (m != t.first(n)) out->push_back(',');
      SpanCanonical(t, m, false, out);
    }
    out->push_back(']');
  } else {
    out->append(t.Raw(n));
  }
}

// Dump(Stripped(v)); `content_blocks` as in SpanCanonical (Fingerprinted's
// messages: stripped, then content as blocks).
void SpanStripped(const SpanTree& t, uint32_t n, bool content_blocks,
                  std::string* out) {
  if (t.kind(n) == 'o') {
    out->push_back('{');
    bool first = true;
    for (uint32_t m = t.first(n); m != kNoNode; m = t.next(m)) {
      if (IsKey(t, m, kCacheControlKey)) continue;
      if (!first) out->push_back(',');
      first = false;
      out->append(t.KeyRaw(m));
      out->push_back(':');
      if (content_blocks && t.kind(m) == 's' && IsKey(t, m, kContentKey)) {
        AppendTextBlock(t.Raw(m), "", out);
      } else {
        SpanStripped(t, m, false, out);
      }
    }
    out->push_back('}');
  } else if (t.kind(n) == 'a') {
    out->push_back('[');
    for (uint32_t m = t.first(n); m != kNoNode; m = t.next(m)) {
      if (m != t.first(n)) out->push_back(',');
      SpanStripped(t, m, false, out);
    }
    out->push_back(']');
  } else {
    out->append(t.Raw(n));
  }
}

std::string SpanStripped(const SpanTree& t, uint32_t n, bool blocks = false) {
  std::string s;
  SpanStripped(t, n, blocks, &s);
  return s;
}

void SpanCollectBreakpoints(const SpanTree& t, uint32_t n, int ordinal,
                            std::vector<std::pair<int, double>>* out) {
  if (t.kind(n) != 'o' && t.kind(n) != 'a') return;
  for (uint32_t m = t.first(n); m != kNoNode; m = t.next(m)) {
    if (t.kind(n) == 'o' && IsKey(t, m, kCacheControlKey)) {
      double ttl = 300;
      if (uint32_t x = t.Find(m, "ttl");
          x != kNoNode && t.kind(x) == 's' && t.Raw(x) == "\"1h\"") {
        ttl = 3600;
      }
      out->push_back({ordinal, ttl});
    } else {
      SpanCollectBreakpoints(t, m, ordinal, out);
    }
  }
}

std::string SpanToolName(PromptApi api, const SpanTree& t, uint32_t tool) {
  if (t.kind(tool) != 'o') return "";
  if (api == PromptApi::kOpenAiChat) {
    if (uint32_t f = t.Find(tool, "function");
        f != kNoNode && t.kind(f) == 'o') {
      if (uint32_t n = t.Find(f, "name"); n != kNoNode && t.kind(n) == 's') {
        return t.Text(n);
      }
    }
  }
  if (uint32_t n = t.Find(tool, "name"); n != kNoNode && t.kind(n) == 's') {
    return t.Text(n);
  }
  if (uint32_t n = t.Find(tool, "type"); n != kNoNode && t.kind(n) == 's') {
    return t.Text(n);
  }
  return "";
}

bool SpanDeferred(const SpanTree& t, uint32_t tool) {
  if (t.kind(tool) != 'o') return false;
  const uint32_t d = t.Find(tool, "defer_loading");
  return d != kNoNode && t.kind(d) == 't';
}

bool SpanIsSystemRole(const SpanTree& t, uint32_t m) {
  if (t.kind(m) != 'o') return false;
  const uint32_t r = t.Find(m, "role");
  return r != kNoNode && t.kind(r) == 's' &&
         (t.Raw(r) == "\"system\"" || t.Raw(r) == "\"developer\"");
}

// `object` (its dump) with `"cache_control":<cc>` as its last member.
std::string WithMember(std::string_view object, std::string_view cc) {
  std::string s(object.substr(0, object.size() - 1));
  if (s.size() > 1) s.push_back(',');
  s.append("\"cache_control\":");
  s.append(cc);
  s.push_back('}');
  return s;
}

// A member that must be a string (or absent) for the DOM path's value().
bool StringOrAbsent(const SpanTree& t, uint32_t obj, std::string_view key) {
  const uint32_t m = t.Find(obj, key);
  return m == kNoNode || t.kind(m) == 's';
}

struct Fingerprint {
  std::string conversation;
  double at = 0;
  std::string model;
  uint64_t system = 0;
  uint64_t tool_choice = 0;
  uint64_t thinking = 0;
  std::vector<std::pair<std::string, uint64_t>> tools;  // not deferred
  std::vector<uint64_t> messages;
  double ttl = 300;
  // No assistant turn in the history: a session (re)starting, never
  // compared with an earlier turn.
  bool fresh = true;
};

struct ToolMemo {
  std::string canonical;
  std::string bytes;  // the first-seen tool's dump, cache_control removed
};

struct Conversation {
  std::map<std::string, ToolMemo, std::less<>> memo;
  bool has_prev = false;
  Fingerprint prev;
  int64_t prev_cached = 0;
  uint64_t turns = 0;
  std::deque<std::pair<uint64_t, CacheBreak>> breaks;  // (sequence, break)
  std::list<std::string>::iterator lru;
};

std::string_view ApiLabel(PromptApi api) {
  switch (api) {
    case PromptApi::kAnthropicMessages:
      return "anthropic_messages";
    case PromptApi::kOpenAiChat:
      return "openai_chat";
    case PromptApi::kOpenAiResponses:
      return "openai_responses";
  }
  return "unknown";
}

class PromptCacheImpl final : public PromptCache {
 public:
  PromptCacheImpl(const PromptCacheOptions& o, const Clock* clock,
                  metrics::Registry* r)
      : o_(o), clock_(clock) {
    if (r == nullptr) return;
    requests_ = &r->Counters(
        "toolcache_prompt_cache_requests_total",
        "Requests seen by the prompt-cache stage, by API and outcome "
        "(rewritten, unchanged, unreadable)",
        {"api", "outcome"});
    tools_ = &r->Counters(
        "toolcache_prompt_cache_tools_total",
        "Tool-list rewrites: moved (position changed), deduplicated, "
        "memoised (sent with the conversation's first bytes)",
        {"what"});
    breakpoints_ = &r->Counters(
        "toolcache_prompt_cache_breakpoints_added_total",
        "cache_control breakpoints placed, by where (tools, system, "
        "last_turn)",
        {"where"});
    tokens_ = &r->Counters(
        "toolcache_prompt_cache_tokens_total",
        "Prompt tokens the provider reported (read, creation, input)",
        {"what"});
    breaks_ = &r->Counters("toolcache_prompt_cache_breaks_total",
                           "Prompt-cache breaks detected, by cause", {"cause"});
    lost_ = &r->Counters(
        "toolcache_prompt_cache_break_tokens_total",
        "Cache-read tokens lost to breaks (expected minus read), by cause",
        {"cause"});
    r->Gauge("toolcache_prompt_cache_conversations",
             "Conversations the prompt-cache stage remembers", [this] {
               std::lock_guard<std::mutex> l(mu_);
               return static_cast<double>(conversations_.size());
             });
  }

  PreparedRequest Prepare(PromptApi api, std::string_view scope,
                          const std::string& body) override {
    PreparedRequest out;
    if (g_span_path && SpanPrepare(api, scope, body, &out)) {
      Count(requests_,
            {ApiLabel(api), out.rewritten ? "rewritten" : "unchanged"});
      return out;
    }
    OJ j;
    ++g_dom_parses;
    try {
      j = OJ::parse(body);
      if (!j.is_object()) throw std::invalid_argument("not an object");
      Rewrite(api, scope, &j, &out);
      if (out.rewritten) out.body = Dump(j);
    } catch (const std::exception&) {
      Count(requests_, {ApiLabel(api), "unreadable"});
      return PreparedRequest{};
    }
    Count(requests_,
          {ApiLabel(api), out.rewritten ? "rewritten" : "unchanged"});
    return out;
  }

  std::optional<CacheBreak> Observe(uint64_t ticket,
                                    const PromptUsage& usage) override {
    if (ticket == 0) return std::nullopt;
    if (usage.cache_read_tokens >= 0) {
      Count(tokens_, {"read"}, usage.cache_read_tokens);
    }
    if (usage.cache_creation_tokens > 0) {
      Count(tokens_, {"creation"}, usage.cache_creation_tokens);
    }
    if (usage.input_tokens > 0) Count(tokens_, {"input"}, usage.input_tokens);
    std::lock_guard<std::mutex> l(mu_);
    auto p = pending_.find(ticket);
    if (p == pending_.end()) return std::nullopt;
    Fingerprint fp = std::move(p->second);
    pending_.erase(p);
    if (usage.cache_read_tokens < 0) return std::nullopt;
    auto c = conversations_.find(fp.conversation);
    if (c == conversations_.end()) return std::nullopt;
    Conversation& conv = c->second;
    ++conv.turns;
    std::optional<CacheBreak> found;
    const int64_t read = usage.cache_read_tokens;
    if (conv.has_prev && !fp.fresh) {
      const int64_t expected = conv.prev_cached;
      const int64_t drop = expected - read;
      if (drop > o_.break_min_tokens &&
          static_cast<double>(drop) >
              o_.break_min_fraction * static_cast<double>(expected)) {
        CacheBreak b = Attribute(conv.prev, fp);
        b.conversation = fp.conversation;
        b.turn = conv.turns;
        b.expected_read = expected;
        b.cache_read = read;
        b.model = fp.model;
        conv.breaks.push_back({++sequence_, b});
        while (conv.breaks.size() > o_.keep_breaks) conv.breaks.pop_front();
        Count(breaks_, {b.cause});
        Count(lost_, {b.cause}, static_cast<uint64_t>(drop));
        found = std::move(b);
      }
    }
    conv.prev = std::move(fp);
    conv.prev_cached = read + std::max<int64_t>(0, usage.cache_creation_tokens);
    conv.has_prev = true;
    return found;
  }

  std::string BreaksJson() const override {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<std::pair<uint64_t, const CacheBreak*>> all;
    for (const auto& [id, conv] : conversations_) {
      for (const auto& [seq, b] : conv.breaks) all.push_back({seq, &b});
    }
    std::sort(all.begin(), all.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    OJ list = OJ::array();
    for (const auto& [seq, b] : all) {
      OJ e;
      e["conversation"] = b->conversation;
      e["turn"] = b->turn;
      e["cause"] = b->cause;
      e["detail"] = b->detail;
      e["label"] = b->Label();
      e["changes"] = b->changes;
      e["expectedCacheRead"] = b->expected_read;
      e["cacheRead"] = b->cache_read;
      e["gapSeconds"] = b->gap_seconds;
      e["model"] = b->model;
      list.push_back(std::move(e));
    }
    OJ j;
    j["breaks"] = std::move(list);
    j["conversations"] = conversations_.size();
    j["totalBreaks"] = sequence_;
    return j.dump(2, ' ', false, OJ::error_handler_t::replace) + "\n";
  }

 private:
  void Count(metrics::CounterFamily* f,
             std::initializer_list<std::string_view> labels, uint64_t n = 1) {
    if (f != nullptr) f->Get(labels)->Add(n);
  }

  // The conversation of a request: scope, API, tools or not, first message.
  static std::string ConversationId(PromptApi api, std::string_view scope,
                                    const OJ& j) {
    const OJ* first = nullptr;
    auto m = j.find(MessagesKey(api));
    OJ input_string;
    if (m != j.end() && m->is_array()) {
      for (const OJ& e : *m) {
        if (IsSystemRole(e)) continue;
        first = &e;
        break;
      }
    } else if (m != j.end() && m->is_string()) {
      first = &*m;
    }
    Sha256 h;
    h.Update(scope);
    h.Update(std::string(1, '\0'));
    h.Update(ApiLabel(api));
    h.Update(HasMember(j, "tools") ? std::string_view("\0t", 2)
                                   : std::string_view("\0n", 2));
    h.Update(std::string(1, '\0'));
    if (first != nullptr) {
      // The first message's content as blocks: a client may send it as a
      // string on one turn and as blocks (with a breakpoint) on the next.
      OJ f = *first;
      if (f.is_object() && f.contains("content")) {
        f["content"] = AsBlocks(f["content"]);
      }
      h.Update(Canonical(f));
    }
    return Hex(h.Finish(), 8);
  }

  Conversation& Touch(const std::string& id) {
    auto it = conversations_.find(id);
    if (it != conversations_.end()) {
      lru_.splice(lru_.end(), lru_, it->second.lru);
      return it->second;
    }
    while (conversations_.size() >=
           std::max<uint32_t>(1, o_.max_conversations)) {
      conversations_.erase(lru_.front());
      lru_.pop_front();
    }
    Conversation& c = conversations_[id];
    c.lru = lru_.insert(lru_.end(), id);
    return c;
  }

  void Rewrite(PromptApi api, std::string_view scope, OJ* j,
               PreparedRequest* out) {
    const bool want_tools = o_.stabilize_tools;
    const bool anthropic = api == PromptApi::kAnthropicMessages;
    const bool want_bp = anthropic && (o_.place_cache_control ||
                                       o_.cache_system || o_.cache_last_turn);
    if (!want_tools && !want_bp && !o_.detect_breaks) return;
    out->conversation = ConversationId(api, scope, *j);
    auto tools_it = j->find("tools");
    if (want_tools && tools_it != j->end() && tools_it->is_array()) {
      StabilizeTools(api, out->conversation, &*tools_it, out);
    }
    if (want_bp) PlaceBreakpoints(j, out);
    if (o_.detect_breaks) Remember(Fingerprinted(api, *j), out);
  }

  // Keeps `fp` (the request as sent) under a new ticket.
  void Remember(Fingerprint fp, PreparedRequest* out) {
    fp.conversation = out->conversation;
    fp.at = clock_->NowSeconds();
    std::lock_guard<std::mutex> l(mu_);
    Touch(out->conversation);
    out->ticket = ++next_ticket_;
    pending_[out->ticket] = std::move(fp);
    pending_order_.push_back(out->ticket);
    while (pending_order_.size() > kMaxPending) {
      pending_.erase(pending_order_.front());
      pending_order_.pop_front();
    }
  }

  // ---- The rewrite over a span tree of a body in dump form: Rewrite's
  // steps (ConversationId, StabilizeTools, PlaceBreakpoints, Fingerprinted)
  // on the client's bytes, the result spliced (tools, system, last
  // message's content) instead of serialised. False, with nothing changed
  // or remembered, when the body is not in dump form or holds what the DOM
  // path refuses (a non-string role / type / text / model): the caller
  // then takes the DOM path, so the bytes sent never differ.
  bool SpanPrepare(PromptApi api, std::string_view scope,
                   const std::string& body, PreparedRequest* out) {
    SpanTree t;
    if (!t.Read(body) || t.kind(0) != 'o') return false;
    const bool want_tools = o_.stabilize_tools;
    const bool anthropic = api == PromptApi::kAnthropicMessages;
    const bool want_bp = anthropic && (o_.place_cache_control ||
                                       o_.cache_system || o_.cache_last_turn);
    if (!want_tools && !want_bp && !o_.detect_breaks) return true;
    const uint32_t msgs = t.Find(0, MessagesKey(api));
    const uint32_t model = t.Find(0, "model");
    if (o_.detect_breaks) {
      if (model != kNoNode && t.kind(model) != 's') return false;
      if (msgs != kNoNode && t.kind(msgs) == 'a') {
        for (uint32_t e = t.first(msgs); e != kNoNode; e = t.next(e)) {
          if (t.kind(e) == 'o' && (!StringOrAbsent(t, e, "role") ||
                                   !StringOrAbsent(t, e, "type"))) {
            return false;
          }
        }
      }
    }
    const uint32_t messages = anthropic ? msgs : kNoNode;
    uint32_t last_message = kNoNode, last_content = kNoNode;
    if (messages != kNoNode && t.kind(messages) == 'a') {
      for (uint32_t e = t.first(messages); e != kNoNode; e = t.next(e)) {
        last_message = e;
      }
    }
    if (want_bp && last_message != kNoNode && t.kind(last_message) == 'o') {
      last_content = t.Find(last_message, "content");
      if (last_content != kNoNode && t.kind(last_content) == 'a') {
        for (uint32_t b = t.first(last_content); b != kNoNode; b = t.next(b)) {
          if (t.kind(b) == 'o' && (!StringOrAbsent(t, b, "type") ||
                                   !StringOrAbsent(t, b, "text"))) {
            return false;
          }
        }
      }
    }
    // Committed: from here on the span path decides.
    out->conversation = SpanConversationId(api, scope, t, msgs);
    const uint32_t tools = t.Find(0, "tools");
    std::vector<std::string> tool_bytes;  // the tool list as it will be sent
    if (tools != kNoNode && t.kind(tools) == 'a') {
      for (uint32_t e = t.first(tools); e != kNoNode; e = t.next(e)) {
        tool_bytes.emplace_back(t.Raw(e));
      }
      if (want_tools)
        SpanStabilizeTools(api, out->conversation, t, tools, &tool_bytes, out);
    }
    const uint32_t system = anthropic ? t.Find(0, "system") : kNoNode;
    std::string system_bytes(system != kNoNode ? t.Raw(system) : "");
    std::string content_bytes(last_content != kNoNode ? t.Raw(last_content)
                                                      : "");
    double placed_ttl = 0;
    bool tools_edited = false, system_edited = false, content_edited = false;
    if (want_bp) {
      SpanPlaceBreakpoints(
          t, tools != kNoNode && t.kind(tools) == 'a', &tool_bytes, system,
          &system_bytes, messages, last_message, last_content, &content_bytes,
          &tools_edited, &system_edited, &content_edited, &placed_ttl, out);
    }
    std::string tools_out;
    if (tools != kNoNode && t.kind(tools) == 'a') {
      tools_out.push_back('[');
      for (size_t i = 0; i < tool_bytes.size(); ++i) {
        if (i > 0) tools_out.push_back(',');
        tools_out.append(tool_bytes[i]);
      }
      tools_out.push_back(']');
      if (tools_out != t.Raw(tools)) out->rewritten = true;
    }
    if (o_.detect_breaks) {
      Fingerprint fp;
      if (model != kNoNode) fp.model = t.Text(model);
      if (anthropic && system != kNoNode) {
        SpanTree st;
        (void)st.Read(system_bytes);
        std::string s;
        if (st.kind(0) == 's') {
          AppendTextBlock(st.Raw(0), "", &s);
        } else {
          s = SpanStripped(st, 0);
        }
        fp.system = Hash64(s);
      } else if (api == PromptApi::kOpenAiResponses) {
        if (uint32_t i = t.Find(0, "instructions"); i != kNoNode) {
          fp.system = Hash64(t.Raw(i));
        }
      }
      for (const std::string& b : tool_bytes) {
        SpanTree tt;
        (void)tt.Read(b);
        if (SpanDeferred(tt, 0)) continue;
        fp.tools.push_back(
            {SpanToolName(api, tt, 0), Hash64(SpanStripped(tt, 0))});
      }
      if (uint32_t c = t.Find(0, "tool_choice"); c != kNoNode) {
        fp.tool_choice = Hash64(t.Raw(c));
      }
      for (const char* k : {"thinking", "reasoning", "reasoning_effort"}) {
        if (uint32_t c = t.Find(0, k); c != kNoNode) {
          fp.thinking ^= Hash64(t.Raw(c));
        }
      }
      std::string system_messages;
      if (msgs != kNoNode && t.kind(msgs) == 'a') {
        bool leading = true;
        for (uint32_t e = t.first(msgs); e != kNoNode; e = t.next(e)) {
          if (leading && !anthropic && SpanIsSystemRole(t, e)) {
            system_messages.append(t.Raw(e));
            continue;
          }
          leading = false;
          if (t.kind(e) == 'o') {
            const uint32_t r = t.Find(e, "role"), y = t.Find(e, "type");
            if ((r != kNoNode && t.Raw(r) == "\"assistant\"") ||
                (y != kNoNode && t.Raw(y) == "\"function_call\"")) {
              fp.fresh = false;
            }
          }
          if (e == last_message && content_edited) {
            std::string m(
                body.substr(t.begin(e), t.begin(last_content) - t.begin(e)));
            m += content_bytes;
            m.append(body.substr(t.end(last_content),
                                 t.end(e) - t.end(last_content)));
            SpanTree mt;
            (void)mt.Read(m);
            fp.messages.push_back(Hash64(SpanStripped(mt, 0, true)));
          } else {
            fp.messages.push_back(Hash64(SpanStripped(t, e, true)));
          }
        }
      } else if (msgs != kNoNode) {
        fp.messages.push_back(Hash64(t.Raw(msgs)));
      }
      if (!system_messages.empty()) fp.system ^= Hash64(system_messages);
      std::vector<std::pair<int, double>> bps;
      SpanCollectBreakpoints(t, 0, 0, &bps);
      for (const auto& [o, ttl] : bps) fp.ttl = std::max(fp.ttl, ttl);
      fp.ttl = std::max(fp.ttl, placed_ttl);
      if (o_.ttl_seconds > 0) fp.ttl = o_.ttl_seconds;
      Remember(std::move(fp), out);
    }
    if (out->rewritten) {
      // One splice of the edited members into the client's bytes.
      struct Edit {
        uint32_t begin, end;
        const std::string* text;
      };
      std::vector<Edit> edits;
      if (tools != kNoNode && t.kind(tools) == 'a' &&
          tools_out != t.Raw(tools)) {
        edits.push_back({t.begin(tools), t.end(tools), &tools_out});
      }
      if (system_edited) {
        edits.push_back({t.begin(system), t.end(system), &system_bytes});
      }
      if (content_edited) {
        edits.push_back(
            {t.begin(last_content), t.end(last_content), &content_bytes});
      }
      std::sort(edits.begin(), edits.end(),
                [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
      std::string& o = out->body;
      uint32_t from = 0;
      for (const Edit& e : edits) {
        o.append(body, from, e.begin - from);
        o.append(*e.text);
        from = e.end;
      }
      o.append(body, from);
    }
    return true;
  }

  std::string SpanConversationId(PromptApi api, std::string_view scope,
                                 const SpanTree& t, uint32_t msgs) const {
    uint32_t first = kNoNode;
    if (msgs != kNoNode && t.kind(msgs) == 'a') {
      for (uint32_t e = t.first(msgs); e != kNoNode; e = t.next(e)) {
        if (SpanIsSystemRole(t, e)) continue;
        first = e;
        break;
      }
    } else if (msgs != kNoNode && t.kind(msgs) == 's') {
      first = msgs;
    }
    Sha256 h;
    h.Update(scope);
    h.Update(std::string(1, '\0'));
    h.Update(ApiLabel(api));
    h.Update(t.Find(0, "tools") != kNoNode ? std::string_view("\0t", 2)
                                           : std::string_view("\0n", 2));
    h.Update(std::string(1, '\0'));
    if (first != kNoNode) {
      std::string c;
      SpanCanonical(t, first, true, &c);
      h.Update(c);
    }
    return Hex(h.Finish(), 8);
  }

  void SpanStabilizeTools(PromptApi api, const std::string& conversation,
                          const SpanTree& t, uint32_t tools,
                          std::vector<std::string>* bytes,
                          PreparedRequest* out) {
    struct Item {
      std::string name;
      std::string tool;
      uint32_t node;
    };
    std::vector<Item> kept;
    std::set<std::string, std::less<>> seen;
    std::vector<std::string> client_order;
    for (uint32_t e = t.first(tools); e != kNoNode; e = t.next(e)) {
      std::string name = SpanToolName(api, t, e);
      if (!name.empty() && !seen.insert(name).second) {
        ++out->tools_deduplicated;
        continue;
      }
      client_order.push_back(name);
      kept.push_back({std::move(name), std::string(t.Raw(e)), e});
    }
    {
      std::lock_guard<std::mutex> l(mu_);
      Conversation& conv = Touch(conversation);
      for (Item& it : kept) {
        if (it.name.empty() || t.kind(it.node) != 'o') continue;
        // The tool without its top-level cache_control, and that member.
        std::string bare = "{";
        std::string_view cc;
        for (uint32_t m = t.first(it.node); m != kNoNode; m = t.next(m)) {
          if (IsKey(t, m, kCacheControlKey)) {
            cc = t.Raw(m);
            continue;
          }
          if (bare.size() > 1) bare.push_back(',');
          bare.append(t.KeyRaw(m));
          bare.push_back(':');
          bare.append(t.Raw(m));
        }
        bare.push_back('}');
        std::string canonical;
        SpanCanonical(t, it.node, false, &canonical);
        auto m = conv.memo.find(it.name);
        if (m != conv.memo.end() && m->second.canonical == canonical) {
          if (m->second.bytes != bare) ++out->tools_memoised;
          bare = m->second.bytes;
        } else {
          conv.memo[it.name] = ToolMemo{std::move(canonical), bare};
        }
        // A null cache_control is dropped, as the DOM path does.
        if (!cc.empty() && cc != "null") bare = WithMember(bare, cc);
        it.tool = std::move(bare);
      }
    }
    std::stable_partition(kept.begin(), kept.end(),
                          [](const Item& i) { return !IsMcpTool(i.name); });
    auto mid = std::find_if(kept.begin(), kept.end(),
                            [](const Item& i) { return IsMcpTool(i.name); });
    auto by_name = [](const Item& a, const Item& b) { return a.name < b.name; };
    std::stable_sort(kept.begin(), mid, by_name);
    std::stable_sort(mid, kept.end(), by_name);
    bytes->clear();
    for (size_t i = 0; i < kept.size(); ++i) {
      if (kept[i].name != client_order[i]) ++out->tools_moved;
      bytes->push_back(std::move(kept[i].tool));
    }
    if (out->tools_moved > 0) Count(tools_, {"moved"}, out->tools_moved);
    if (out->tools_deduplicated > 0) {
      Count(tools_, {"deduplicated"}, out->tools_deduplicated);
    }
    if (out->tools_memoised > 0)
      Count(tools_, {"memoised"}, out->tools_memoised);
  }

  // PlaceBreakpoints over the pieces: the tool list as it will be sent
  // (`tools`), the system prompt's and the last message content's bytes.
  void SpanPlaceBreakpoints(const SpanTree& t, bool has_tools,
                            std::vector<std::string>* tools, uint32_t system,
                            std::string* system_bytes, uint32_t messages,
                            uint32_t last_message, uint32_t last_content,
                            std::string* content_bytes, bool* tools_edited,
                            bool* system_edited, bool* content_edited,
                            double* placed_ttl, PreparedRequest* out) {
    constexpr int kSystemBase = 100000, kMessagesBase = 200000;
    std::vector<std::pair<int, double>> client;
    std::vector<SpanTree> tt(has_tools ? tools->size() : 0);
    for (size_t i = 0; i < tt.size(); ++i) (void)tt[i].Read((*tools)[i]);
    size_t system_bp = 0, message_bp = 0;
    int ord = 0;
    for (SpanTree& x : tt) SpanCollectBreakpoints(x, 0, ++ord, &client);
    const size_t tool_bp = client.size();
    if (system != kNoNode && t.kind(system) == 'a') {
      ord = kSystemBase;
      for (uint32_t b = t.first(system); b != kNoNode; b = t.next(b)) {
        SpanCollectBreakpoints(t, b, ++ord, &client);
      }
      system_bp = client.size() - tool_bp;
    }
    const bool has_messages = messages != kNoNode && t.kind(messages) == 'a';
    if (has_messages) {
      ord = kMessagesBase;
      for (uint32_t m = t.first(messages); m != kNoNode; m = t.next(m)) {
        const uint32_t c = t.kind(m) == 'o' ? t.Find(m, "content") : kNoNode;
        if (c != kNoNode && t.kind(c) == 'a') {
          for (uint32_t b = t.first(c); b != kNoNode; b = t.next(b)) {
            SpanCollectBreakpoints(t, b, ++ord, &client);
          }
        } else {
          SpanCollectBreakpoints(t, m, ++ord, &client);
        }
      }
      message_bp = client.size() - tool_bp - system_bp;
    }
    int budget = kMaxBreakpoints - static_cast<int>(client.size());
    const uint64_t min_bytes = o_.min_cacheable_tokens * 4;
    auto cc_for = [&](int ordinal, std::string_view where) {
      OJ cc = CacheControl(client, ordinal);
      if (cc.contains("ttl")) *placed_ttl = 3600;
      --budget;
      ++out->breakpoints_added;
      Count(breakpoints_, {where});
      return Dump(cc);
    };
    int last = -1, boundary = -1;
    uint64_t tool_bytes = 0, builtin_bytes = 0;
    for (size_t i = 0; i < tt.size(); ++i) {
      if (SpanDeferred(tt[i], 0) || tt[i].kind(0) != 'o') continue;
      tool_bytes += (*tools)[i].size();
      last = static_cast<int>(i);
      if (!IsMcpTool(SpanToolName(PromptApi::kAnthropicMessages, tt[i], 0))) {
        boundary = last;
        builtin_bytes = tool_bytes;
      }
    }
    if (boundary == last) boundary = -1;
    if (o_.place_cache_control && budget > 0 && last >= 0 &&
        tt[last].Find(0, "cache_control") == kNoNode &&
        tool_bytes >= min_bytes) {
      (*tools)[last] = WithMember((*tools)[last], cc_for(last + 1, "tools"));
      *tools_edited = true;
    }
    if (o_.place_cache_control && budget > 0 && boundary >= 0 &&
        tt[boundary].Find(0, "cache_control") == kNoNode &&
        builtin_bytes >= min_bytes) {
      (*tools)[boundary] =
          WithMember((*tools)[boundary], cc_for(boundary + 1, "builtin_tools"));
      *tools_edited = true;
    }
    uint64_t prefix_bytes = tool_bytes;
    if (system != kNoNode) {
      prefix_bytes += t.end(system) - t.begin(system);
      uint32_t back = kNoNode;
      if (t.kind(system) == 'a') {
        for (uint32_t b = t.first(system); b != kNoNode; b = t.next(b)) {
          back = b;
        }
      }
      const bool nonempty =
          (t.kind(system) == 's' && t.Raw(system) != "\"\"") ||
          (back != kNoNode && t.kind(back) == 'o');
      if (o_.cache_system && system_bp == 0 && budget > 0 && nonempty &&
          prefix_bytes >= min_bytes) {
        if (t.kind(system) == 's') {
          std::string s;
          AppendTextBlock(
              t.Raw(system),
              ",\"cache_control\":" + cc_for(kSystemBase + 1, "system"), &s);
          *system_bytes = std::move(s);
        } else {
          const std::string cc =
              cc_for(kSystemBase + static_cast<int>(t.count(system)), "system");
          const uint32_t at = t.begin(back);
          std::string s(t.Raw(system).substr(0, at - t.begin(system)));
          s += WithMember(t.Raw(back), cc);
          s.append(t.Raw(system).substr(t.end(back) - t.begin(system)));
          *system_bytes = std::move(s);
        }
        *system_edited = true;
      }
    }
    if (has_messages && t.count(messages) > 0 && o_.cache_last_turn &&
        message_bp == 0 && budget > 0) {
      for (uint32_t m = t.first(messages); m != kNoNode; m = t.next(m)) {
        prefix_bytes += t.end(m) - t.begin(m);
      }
      if (prefix_bytes >= min_bytes && t.kind(last_message) == 'o' &&
          last_content != kNoNode) {
        if (t.kind(last_content) == 's') {
          if (t.Raw(last_content) != "\"\"") {
            std::string s;
            AppendTextBlock(
                t.Raw(last_content),
                ",\"cache_control\":" +
                    cc_for(std::numeric_limits<int>::max(), "last_turn"),
                &s);
            *content_bytes = std::move(s);
            *content_edited = true;
          }
        } else if (t.kind(last_content) == 'a') {
          std::vector<uint32_t> blocks;
          for (uint32_t b = t.first(last_content); b != kNoNode;
               b = t.next(b)) {
            blocks.push_back(b);
          }
          for (size_t k = blocks.size(); k-- > 0;) {
            const uint32_t b = blocks[k];
            if (t.kind(b) != 'o') continue;
            const uint32_t ty = t.Find(b, "type");
            const std::string type = ty != kNoNode ? t.Text(ty) : "";
            if (type == "thinking" || type == "redacted_thinking") continue;
            const uint32_t tx = t.Find(b, "text");
            if (type == "text" && (tx == kNoNode || t.Raw(tx) == "\"\"")) {
              continue;
            }
            const std::string cc =
                cc_for(std::numeric_limits<int>::max(), "last_turn");
            const std::string_view all = t.Raw(last_content);
            std::string s(all.substr(0, t.begin(b) - t.begin(last_content)));
            s += WithMember(t.Raw(b), cc);
            s.append(all.substr(t.end(b) - t.begin(last_content)));
            *content_bytes = std::move(s);
            *content_edited = true;
            break;
          }
        }
      }
    }
    if (out->breakpoints_added > 0) out->rewritten = true;
  }

  void StabilizeTools(PromptApi api, const std::string& conversation, OJ* tools,
                      PreparedRequest* out) {
    struct Item {
      std::string name;
      OJ tool;
    };
    std::vector<Item> kept;
    std::set<std::string, std::less<>> seen;
    std::vector<std::string> client_order;
    for (const OJ& t : *tools) {
      std::string name = ToolName(api, t);
      if (!name.empty() && !seen.insert(name).second) {
        ++out->tools_deduplicated;
        continue;
      }
      client_order.push_back(name);
      kept.push_back({std::move(name), t});
    }
    {
      std::lock_guard<std::mutex> l(mu_);
      Conversation& conv = Touch(conversation);
      for (Item& it : kept) {
        if (it.name.empty() || !it.tool.is_object()) continue;
        OJ bare = it.tool;
        OJ cc;
        if (auto c = bare.find("cache_control"); c != bare.end()) {
          cc = *c;
          bare.erase("cache_control");
        }
        std::string canonical = Canonical(bare);
        auto m = conv.memo.find(it.name);
        if (m != conv.memo.end() && m->second.canonical == canonical) {
          if (m->second.bytes != Dump(bare)) ++out->tools_memoised;
          bare = OJ::parse(m->second.bytes);
        } else {
          // First sight, or the tool's meaning changed: these bytes are
          // now the conversation's.
          conv.memo[it.name] = ToolMemo{std::move(canonical), Dump(bare)};
        }
        if (!cc.is_null()) bare["cache_control"] = std::move(cc);
        it.tool = std::move(bare);
      }
    }
    std::stable_partition(kept.begin(), kept.end(),
                          [](const Item& i) { return !IsMcpTool(i.name); });
    auto mid = std::find_if(kept.begin(), kept.end(),
                            [](const Item& i) { return IsMcpTool(i.name); });
    auto by_name = [](const Item& a, const Item& b) { return a.name < b.name; };
    std::stable_sort(kept.begin(), mid, by_name);
    std::stable_sort(mid, kept.end(), by_name);
    OJ next = OJ::array();
    for (size_t i = 0; i < kept.size(); ++i) {
      if (kept[i].name != client_order[i]) ++out->tools_moved;
      next.push_back(std::move(kept[i].tool));
    }
    if (next != *tools) {
      *tools = std::move(next);
      out->rewritten = true;
    }
    if (out->tools_moved > 0) Count(tools_, {"moved"}, out->tools_moved);
    if (out->tools_deduplicated > 0) {
      Count(tools_, {"deduplicated"}, out->tools_deduplicated);
    }
    if (out->tools_memoised > 0)
      Count(tools_, {"memoised"}, out->tools_memoised);
  }

  // The TTL member for a breakpoint placed at `ordinal`: the configured one,
  // but never longer than a client breakpoint before it nor shorter than
  // one after it (the provider requires longer TTLs first).
  OJ CacheControl(const std::vector<std::pair<int, double>>& client,
                  int ordinal) const {
    double ttl = o_.ttl == "1h" ? 3600 : 300;
    double min_before = 1e18, max_after = 0;
    for (const auto& [ord, t] : client) {
      if (ord < ordinal) min_before = std::min(min_before, t);
      if (ord > ordinal) max_after = std::max(max_after, t);
    }
    if (ttl > min_before) {
      ttl = min_before;
    } else if (ttl < max_after) {
      ttl = max_after;
    }
    OJ cc = {{"type", "ephemeral"}};
    if (ttl >= 3600) cc["ttl"] = "1h";
    return cc;
  }

  // Candidates in priority order (while fewer than kMaxBreakpoints): the
  // last tool, the last built-in followed only by MCP tools, the system
  // prompt, the last turn. A place the client marked is left as it is.
  // Choice: the built-in boundary ranks above the system prompt: MCP tool
  // sets change far more often than system prompts (Claude Code's client ranks
  // them so too).
  void PlaceBreakpoints(OJ* j, PreparedRequest* out) {
    // Ordinals in prefix order: tools 1.., system 100001.., messages
    // 200001.. (one per block; nested breakpoints share their block's).
    constexpr int kSystemBase = 100000, kMessagesBase = 200000;
    std::vector<std::pair<int, double>> client;
    OJ* tools = nullptr;
    OJ* system = nullptr;
    OJ* messages = nullptr;
    if (auto t = j->find("tools"); t != j->end() && t->is_array()) tools = &*t;
    if (auto s = j->find("system"); s != j->end()) system = &*s;
    if (auto m = j->find("messages"); m != j->end() && m->is_array()) {
      messages = &*m;
    }
    size_t system_bp = 0, message_bp = 0;
    int ord = 0;
    if (tools != nullptr) {
      for (const OJ& t : *tools) CollectBreakpoints(t, ++ord, &client);
    }
    const size_t tool_bp = client.size();
    if (system != nullptr && system->is_array()) {
      ord = kSystemBase;
      for (const OJ& b : *system) CollectBreakpoints(b, ++ord, &client);
      system_bp = client.size() - tool_bp;
    }
    if (messages != nullptr) {
      ord = kMessagesBase;
      for (const OJ& m : *messages) {
        if (m.is_object() && m.contains("content") && m["content"].is_array()) {
          for (const OJ& b : m["content"]) {
            CollectBreakpoints(b, ++ord, &client);
          }
        } else {
          CollectBreakpoints(m, ++ord, &client);
        }
      }
      message_bp = client.size() - tool_bp - system_bp;
    }
    int budget = kMaxBreakpoints - static_cast<int>(client.size());
    const uint64_t min_bytes = o_.min_cacheable_tokens * 4;
    auto place = [&](OJ& block, int ordinal, std::string_view where) {
      block["cache_control"] = CacheControl(client, ordinal);
      --budget;
      ++out->breakpoints_added;
      Count(breakpoints_, {where});
    };
    // The last tool in the prefix (deferred tools are not in it), and the
    // last built-in when only MCP tools follow it.
    int last = -1, boundary = -1;
    uint64_t tool_bytes = 0, builtin_bytes = 0;
    if (tools != nullptr) {
      for (size_t i = 0; i < tools->size(); ++i) {
        const OJ& t = (*tools)[i];
        if (Deferred(t) || !t.is_object()) continue;
        tool_bytes += Dump(t).size();
        last = static_cast<int>(i);
        if (!IsMcpTool(ToolName(PromptApi::kAnthropicMessages, t))) {
          boundary = last;
          builtin_bytes = tool_bytes;
        }
      }
      if (boundary == last) boundary = -1;
    }
    if (o_.place_cache_control && budget > 0 && last >= 0 &&
        !HasMember((*tools)[last], "cache_control") &&
        tool_bytes >= min_bytes) {
      place((*tools)[last], last + 1, "tools");
    }
    if (o_.place_cache_control && budget > 0 && boundary >= 0 &&
        !HasMember((*tools)[boundary], "cache_control") &&
        builtin_bytes >= min_bytes) {
      place((*tools)[boundary], boundary + 1, "builtin_tools");
    }
    uint64_t prefix_bytes = tool_bytes;
    if (system != nullptr) {
      prefix_bytes += Dump(*system).size();
      const bool nonempty =
          (system->is_string() && !system->get<std::string>().empty()) ||
          (system->is_array() && !system->empty() &&
           system->back().is_object());
      if (o_.cache_system && system_bp == 0 && budget > 0 && nonempty &&
          prefix_bytes >= min_bytes) {
        if (system->is_string()) *system = AsBlocks(*system);
        place(system->back(), kSystemBase + static_cast<int>(system->size()),
              "system");
      }
    }
    if (messages != nullptr && !messages->empty() && o_.cache_last_turn &&
        message_bp == 0 && budget > 0) {
      for (const OJ& m : *messages) prefix_bytes += Dump(m).size();
      OJ& last_message = messages->back();
      if (prefix_bytes >= min_bytes && last_message.is_object() &&
          last_message.contains("content")) {
        OJ content = AsBlocks(last_message["content"]);
        // The last block that may carry a breakpoint: not thinking, not an
        // empty text block (the provider rejects both).
        for (size_t k = content.is_array() ? content.size() : 0; k-- > 0;) {
          OJ& b = content[k];
          if (!b.is_object()) continue;
          const std::string type = b.value("type", "");
          if (type == "thinking" || type == "redacted_thinking") continue;
          if (type == "text" && b.value("text", "").empty()) continue;
          place(b, std::numeric_limits<int>::max(), "last_turn");
          last_message["content"] = std::move(content);
          break;
        }
      }
    }
    if (out->breakpoints_added > 0) out->rewritten = true;
  }

  Fingerprint Fingerprinted(PromptApi api, const OJ& j) const {
    Fingerprint fp;
    fp.model = j.value("model", "");
    if (api == PromptApi::kAnthropicMessages) {
      if (auto s = j.find("system"); s != j.end()) {
        fp.system = Hash64(Dump(Stripped(AsBlocks(*s))));
      }
    } else if (api == PromptApi::kOpenAiResponses) {
      if (auto s = j.find("instructions"); s != j.end()) {
        fp.system = Hash64(Dump(*s));
      }
    }
    if (auto t = j.find("tools"); t != j.end() && t->is_array()) {
      for (const OJ& tool : *t) {
        if (Deferred(tool)) continue;
        fp.tools.push_back({ToolName(api, tool), Hash64(Dump(Stripped(tool)))});
      }
    }
    if (auto t = j.find("tool_choice"); t != j.end()) {
      fp.tool_choice = Hash64(Dump(*t));
    }
    for (const char* k : {"thinking", "reasoning", "reasoning_effort"}) {
      if (auto t = j.find(k); t != j.end()) fp.thinking ^= Hash64(Dump(*t));
    }
    std::string system_messages;
    if (auto m = j.find(MessagesKey(api)); m != j.end()) {
      if (m->is_array()) {
        bool leading = true;
        for (const OJ& e : *m) {
          // Chat's leading system / developer messages are its system prompt.
          if (leading && api != PromptApi::kAnthropicMessages &&
              IsSystemRole(e)) {
            system_messages += Dump(e);
            continue;
          }
          leading = false;
          if (e.is_object() && (e.value("role", "") == "assistant" ||
                                e.value("type", "") == "function_call")) {
            fp.fresh = false;
          }
          OJ n = Stripped(e);
          if (n.is_object() && n.contains("content")) {
            n["content"] = AsBlocks(n["content"]);
          }
          fp.messages.push_back(Hash64(Dump(n)));
        }
      } else {
        fp.messages.push_back(Hash64(Dump(*m)));
      }
    }
    if (!system_messages.empty()) fp.system ^= Hash64(system_messages);
    std::vector<std::pair<int, double>> bps;
    CollectBreakpoints(j, 0, &bps);
    for (const auto& [o, t] : bps) fp.ttl = std::max(fp.ttl, t);
    if (o_.ttl_seconds > 0) fp.ttl = o_.ttl_seconds;
    return fp;
  }

  // What changed from `a` (previous turn) to `b`, in prefix order.
  static CacheBreak Attribute(const Fingerprint& a, const Fingerprint& b) {
    CacheBreak br;
    br.gap_seconds = b.at - a.at;
    auto add = [&br](std::string cause, std::string detail) {
      br.changes.push_back(detail.empty() ? cause : cause + ":" + detail);
      if (br.cause.empty()) {
        br.cause = std::move(cause);
        br.detail = std::move(detail);
      }
    };
    if (a.model != b.model) add("model", "");
    if (a.tools != b.tools) {
      // The first position where the lists differ: where the cache breaks.
      std::map<std::string, uint64_t> pa(a.tools.begin(), a.tools.end());
      std::map<std::string, uint64_t> pb(b.tools.begin(), b.tools.end());
      size_t k = 0;
      while (k < a.tools.size() && k < b.tools.size() &&
             a.tools[k] == b.tools[k]) {
        ++k;
      }
      std::string first;
      if (k < b.tools.size() && !pa.count(b.tools[k].first)) {
        first = "added " + b.tools[k].first;
      } else if (k < a.tools.size() && !pb.count(a.tools[k].first)) {
        first = "removed " + a.tools[k].first;
      } else if (k < a.tools.size() && k < b.tools.size() &&
                 a.tools[k].first == b.tools[k].first) {
        first = "schema_changed " + b.tools[k].first;
      } else if (k < b.tools.size()) {
        first = "moved " + b.tools[k].first;
      }
      add("tools", first);
      br.changes.pop_back();  // replaced by the full diff below
      for (const auto& [name, h] : b.tools) {
        if (!pa.count(name)) br.changes.push_back("tools:added " + name);
      }
      for (const auto& [name, h] : a.tools) {
        if (!pb.count(name)) br.changes.push_back("tools:removed " + name);
      }
      for (const auto& [name, h] : b.tools) {
        auto it = pa.find(name);
        if (it != pa.end() && it->second != h) {
          br.changes.push_back("tools:schema_changed " + name);
        }
      }
      // The order of the names both turns have, each name once: a tool
      // list may repeat a name (the two lists then differ in length; the
      // old loop read past the shorter one).
      std::vector<std::string> oa, ob;
      std::set<std::string> seen_a, seen_b;
      for (const auto& [n, h] : a.tools) {
        if (pb.count(n) && seen_a.insert(n).second) oa.push_back(n);
      }
      for (const auto& [n, h] : b.tools) {
        if (pa.count(n) && seen_b.insert(n).second) ob.push_back(n);
      }
      for (size_t i = 0; i < std::min(oa.size(), ob.size()); ++i) {
        if (ob[i] != oa[i]) br.changes.push_back("tools:moved " + ob[i]);
      }
    }
    if (a.system != b.system) add("system", "");
    if (a.tool_choice != b.tool_choice) add("tool_choice", "");
    if (a.thinking != b.thinking) add("thinking", "");
    const size_t n = std::min(a.messages.size(), b.messages.size());
    for (size_t i = 0; i < n; ++i) {
      if (a.messages[i] != b.messages[i]) {
        add("messages", "edited " + std::to_string(i));
        break;
      }
    }
    if (b.messages.size() < a.messages.size()) {
      add("messages",
          "removed " + std::to_string(a.messages.size() - b.messages.size()));
    }
    if (br.cause.empty()) {
      add(br.gap_seconds > a.ttl ? "ttl_expired" : "unknown", "");
    }
    return br;
  }

  const PromptCacheOptions o_;
  const Clock* clock_;
  metrics::CounterFamily* requests_ = nullptr;
  metrics::CounterFamily* tools_ = nullptr;
  metrics::CounterFamily* breakpoints_ = nullptr;
  metrics::CounterFamily* tokens_ = nullptr;
  metrics::CounterFamily* breaks_ = nullptr;
  metrics::CounterFamily* lost_ = nullptr;

  mutable std::mutex mu_;
  // GUARDED_BY(mu_):
  std::unordered_map<std::string, Conversation> conversations_;
  std::list<std::string> lru_;  // least recently used first
  std::unordered_map<uint64_t, Fingerprint> pending_;
  std::deque<uint64_t> pending_order_;
  uint64_t next_ticket_ = 0;
  uint64_t sequence_ = 0;  // breaks found so far
};

}  // namespace

std::unique_ptr<PromptCache> NewPromptCache(const PromptCacheOptions& options,
                                            const Clock* clock,
                                            metrics::Registry* registry) {
  return std::make_unique<PromptCacheImpl>(options, clock, registry);
}

}  // namespace toolcache
