// Invariants:
// - A rewrite only reorders tools, drops duplicate names (first wins),
//   replaces a tool's bytes by the conversation's memoised bytes of the
//   SAME tool (equal in meaning: keys sorted, its own cache_control aside,
//   strings and numbers compared as values, not spellings, save numbers
//   the dump cannot write exactly, compared as text), and adds cache_control
//   members (Anthropic). It is spliced into the client's bytes: only the
//   tool list, the system prompt and the last message's content can
//   change (and an earlier duplicate of an edited member goes); every
//   other byte -- whitespace, escapes, number spellings -- is the
//   client's. A body with nothing to change is sent as the client's bytes.
// - One implementation over any body: SpanTree (span_tree.h) reads every
//   valid JSON body; what the rewrite compares (tool identity, conversation
//   id, fingerprints, sizes against min_cacheable_tokens) is the value's
//   compact dump (WriteDump), so a body means the same whatever its
//   spelling. No request body is parsed into a DOM; a body SpanTree
//   refuses (not JSON, a lone surrogate escape, nesting past 512) or one
//   with a non-string role / type / text / model is "unreadable" and
//   passed through unchanged.
// - Duplicate member names read as the provider and src/llm/wire.cc read
//   them: the last one wins.
// - PrepareEdited reads the client's body once and grafts the proxy's
//   other stage edits into that reading (SpanTree::Graft); what it decides
//   and writes is what Prepare decides and writes for the applied body,
//   and its edits index the client's bytes. It returns "not composed"
//   before touching any state, or not at all.
// - The client's breakpoints stay where the client put them; the request
//   never carries more than kMaxBreakpoints after the rewrite.
// - A fingerprint (what the provider's prefix is made of) is taken of the
//   body as sent upstream, with cache_control removed (a moved breakpoint
//   is not a content change). Its hashes are keyed (SipHash-1-3, a random
//   key per PromptCache) and never leave the process; the conversation id
//   is SHA-256 of its pieces (stable across processes).
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
#include <charconv>
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
#include "src/core/siphash.h"
#include "src/metrics/metrics.h"
#include "src/prompt/span_tree.h"

namespace toolcache {
namespace prompt_internal {
namespace {
thread_local uint64_t body_reads = 0;
thread_local uint64_t body_writes = 0;
}  // namespace
// No request body is parsed into a DOM any more (span_tree.h).
uint64_t DomParseCount() { return 0; }
uint64_t BodyReadCount() { return body_reads; }
uint64_t BodyWriteCount() { return body_writes; }
}  // namespace prompt_internal

namespace {

using OJ = nlohmann::ordered_json;

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

std::string Dump(const OJ& v) {
  return v.dump(-1, ' ', false, OJ::error_handler_t::strict);
}

// ---- Reading a body through its span tree (span_tree.h). What the
// rewrite compares (tool identity, conversation ids, fingerprints) is the
// value's meaning, written as nlohmann's compact dump would write it
// (WriteDump); what it sends is the client's bytes with the edited members
// spliced in.
using prompt_internal::SpanTree;
constexpr uint32_t kNoNode = SpanTree::kNone;

// A string's block form, dumped: [{"type":"text","text":<s>}] (`sorted`:
// the keys in canonical order).
void AppendTextBlock(std::string_view literal, std::string_view extra,
                     std::string* out, bool sorted = false) {
  if (sorted) {
    out->append("[{\"text\":");
    out->append(literal);
    out->append(",\"type\":\"text\"}]");
    return;
  }
  out->append("[{\"type\":\"text\",\"text\":");
  out->append(literal);
  out->append(extra);
  out->append("}]");
}

struct DumpForm {
  bool sorted = false;  // keys sorted (the canonical form)
  bool strip = false;   // cache_control members removed at every depth
  // cache_control members removed from the top object only (a tool's own
  // breakpoint; one nested in its schema is part of its meaning).
  bool strip_top = false;
  // A number the dump would not write back exactly (past the 64-bit
  // integers, or out of double range: 1e400 dumps as null) kept as its
  // text, so two such numbers are one only when spelled alike.
  bool exact_numbers = false;
  // The top object's string "content" as one text block.
  bool content_blocks = false;
};

// Whether the dump of number literal `r` loses its value: an integer
// outside int64/uint64 (read as a double) or a double out of range.
bool InexactNumber(std::string_view r) {
  const char* b = r.data();
  const char* e = r.data() + r.size();
  if (r.find_first_of(".eE") == std::string_view::npos) {
    if (r.front() == '-') {
      int64_t v;
      return std::from_chars(b, e, v).ec != std::errc();
    }
    uint64_t v;
    return std::from_chars(b, e, v).ec != std::errc();
  }
  double v;
  return std::from_chars(b, e, v).ec != std::errc();
}

// Node `n` as nlohmann's compact dump of its DOM, in `form`.
void WriteDump(const SpanTree& t, uint32_t n, DumpForm form, std::string* out) {
  const char kind = t.kind(n);
  if (kind != 'o' && kind != 'a') {
    if (form.exact_numbers && kind == 'n' && !t.canon(n) &&
        InexactNumber(t.Raw(n))) {
      out->append(t.Raw(n));
      return;
    }
    t.AppendDump(n, out);
    return;
  }
  if (t.canon(n) && !form.sorted && !form.strip && !form.strip_top &&
      !form.content_blocks) {
    out->append(t.Raw(n));
    return;
  }
  const bool blocks = form.content_blocks;
  const bool strip = form.strip || form.strip_top;
  form.content_blocks = false;
  form.strip_top = false;
  if (kind == 'a') {
    out->push_back('[');
    for (uint32_t m = t.first(n); m != kNoNode; m = t.next(m)) {
      if (m != t.first(n)) out->push_back(',');
      WriteDump(t, m, form, out);
    }
    out->push_back(']');
    return;
  }
  struct K {
    std::string name;
    uint32_t node;
  };
  if (!form.sorted && !t.dups(n)) {
    // The members in order, each once: no list to build.
    out->push_back('{');
    bool first = true;
    for (uint32_t m = t.first(n); m != kNoNode; m = t.next(m)) {
      if (strip && t.NameIs(m, "cache_control")) continue;
      if (!first) out->push_back(',');
      first = false;
      t.AppendName(m, out);
      out->push_back(':');
      if (blocks && t.kind(m) == 's' && t.NameIs(m, "content")) {
        std::string s;
        t.AppendDump(m, &s);
        AppendTextBlock(s, "", out);
      } else {
        WriteDump(t, m, form, out);
      }
    }
    out->push_back('}');
    return;
  }
  std::vector<uint32_t> members;
  t.DumpMembers(n, &members);
  std::vector<K> keys;
  keys.reserve(members.size());
  for (uint32_t m : members) {
    if (strip && t.NameIs(m, "cache_control")) continue;
    keys.push_back({form.sorted ? t.Name(m) : std::string(), m});
  }
  if (form.sorted) {
    std::sort(keys.begin(), keys.end(),
              [](const K& a, const K& b) { return a.name < b.name; });
  }
  out->push_back('{');
  bool first = true;
  for (const K& k : keys) {
    if (!first) out->push_back(',');
    first = false;
    t.AppendName(k.node, out);
    out->push_back(':');
    if (blocks && t.kind(k.node) == 's' && t.NameIs(k.node, "content")) {
      std::string s;
      t.AppendDump(k.node, &s);
      AppendTextBlock(s, "", out, form.sorted);
    } else {
      WriteDump(t, k.node, form, out);
    }
  }
  out->push_back('}');
}

std::string Dumped(const SpanTree& t, uint32_t n, DumpForm form = {}) {
  std::string s;
  WriteDump(t, n, form, &s);
  return s;
}

// The size of node `n`'s compact dump.
uint64_t DumpSize(const SpanTree& t, uint32_t n) {
  return t.canon(n) ? t.end(n) - t.begin(n) : Dumped(t, n).size();
}

bool IsMcpTool(std::string_view name) { return name.substr(0, 5) == "mcp__"; }

// The request's messages (Anthropic, Chat) or input items (Responses).
const char* MessagesKey(PromptApi api) {
  return api == PromptApi::kOpenAiResponses ? "input" : "messages";
}

void SpanCollectBreakpoints(const SpanTree& t, uint32_t n, int ordinal,
                            std::vector<std::pair<int, double>>* out) {
  if (t.kind(n) == 'a') {
    for (uint32_t m = t.first(n); m != kNoNode; m = t.next(m)) {
      SpanCollectBreakpoints(t, m, ordinal, out);
    }
    return;
  }
  if (t.kind(n) != 'o') return;
  auto visit = [&](uint32_t m) {
    if (t.NameIs(m, "cache_control")) {
      double ttl = 300;
      if (uint32_t x = t.Find(m, "ttl"); x != kNoNode && t.TextIs(x, "1h")) {
        ttl = 3600;
      }
      out->push_back({ordinal, ttl});
    } else {
      SpanCollectBreakpoints(t, m, ordinal, out);
    }
  };
  if (!t.dups(n)) {
    for (uint32_t m = t.first(n); m != kNoNode; m = t.next(m)) visit(m);
    return;
  }
  std::vector<uint32_t> members;
  t.DumpMembers(n, &members);
  for (uint32_t m : members) visit(m);
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
  return r != kNoNode && (t.TextIs(r, "system") || t.TextIs(r, "developer"));
}

// `object` (an object's bytes, any spelling) with `"cache_control":<cc>`
// as its last member; the object's other bytes are kept.
std::string WithMember(std::string_view object, std::string_view cc) {
  size_t close = object.size() - 1;  // the '}'
  size_t last = close;
  while (last > 0 && (object[last - 1] == ' ' || object[last - 1] == '\t' ||
                      object[last - 1] == '\n' || object[last - 1] == '\r')) {
    --last;
  }
  std::string s(object.substr(0, last));
  if (last > 1) s.push_back(',');
  s.append("\"cache_control\":");
  s.append(cc);
  s.append(object.substr(last));
  return s;
}

// A member that must be a string (or absent): the rewrite reads it as text.
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
  std::string bytes;  // the first-seen tool's bytes, cache_control removed
};

struct Conversation {
  std::map<std::string, ToolMemo, std::less<>> memo;
  bool has_prev = false;
  Fingerprint prev;
  int64_t prev_cached = 0;
  uint64_t turns = 0;
  std::deque<std::pair<uint64_t, CacheBreak>> breaks;  // (sequence, break)
  uint64_t total_breaks = 0;                           // found, kept or not
  // Prepare's scope (part of the id): whose breaks these are.
  std::string scope;
  std::list<std::string>::iterator lru;
};

// True when `scope` is `owner` or composed from it with later fields added
// (ScopeOf writes '@', then <tag><length>':'<value>';' per field in a fixed
// order, workspace last): the LLM proxy's credential scope is a prefix of
// that credential's workspace scopes, and of no other principal's scope.
bool OwnedBy(std::string_view scope, std::string_view owner) {
  if (scope == owner) return true;
  return !owner.empty() && owner.front() == '@' && owner.back() == ';' &&
         scope.substr(0, owner.size()) == owner;
}

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
    if (!SpanPrepare(api, scope, body, nullptr, &out)) {
      Count(requests_, {ApiLabel(api), "unreadable"});
      return PreparedRequest{};
    }
    Count(requests_,
          {ApiLabel(api), out.rewritten ? "rewritten" : "unchanged"});
    return out;
  }

  PreparedRequest PrepareEdited(
      PromptApi api, std::string_view scope, const std::string& body,
      const std::vector<BodyEditView>& stage_edits) override {
    PreparedRequest out;
    if (!SpanPrepare(api, scope, body, &stage_edits, &out)) {
      return PreparedRequest{};  // not composed: the caller calls Prepare
    }
    out.composed = true;
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
        ++conv.total_breaks;
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

  std::string BreaksJson() const override { return Breaks(nullptr); }

  std::string BreaksJsonFor(const BreaksReader& reader) const override {
    if (!reader.owners.empty()) return Breaks(&reader.owners);
    std::lock_guard<std::mutex> l(mu_);
    OJ j;
    j["conversations"] = conversations_.size();
    j["totalBreaks"] = sequence_;
    return j.dump(2) + "\n";
  }

 private:
  // The kept breaks of every conversation (`owners` null) or of those
  // owned by one of `owners`, oldest first.
  std::string Breaks(const std::vector<std::string>* owners) const {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<std::pair<uint64_t, const CacheBreak*>> all;
    size_t conversations = 0;
    uint64_t total = 0;
    for (const auto& [id, conv] : conversations_) {
      if (owners != nullptr && std::none_of(owners->begin(), owners->end(),
                                            [&](const std::string& o) {
                                              return OwnedBy(conv.scope, o);
                                            })) {
        continue;
      }
      ++conversations;
      total += conv.total_breaks;
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
    j["conversations"] = owners ? conversations : conversations_.size();
    j["totalBreaks"] = owners ? total : sequence_;
    return j.dump(2, ' ', false, OJ::error_handler_t::replace) + "\n";
  }

  void Count(metrics::CounterFamily* f,
             std::initializer_list<std::string_view> labels, uint64_t n = 1) {
    if (f != nullptr) f->Get(labels)->Add(n);
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

  // Keeps `fp` (the request as sent) under a new ticket.
  void Remember(Fingerprint fp, std::string_view scope, PreparedRequest* out) {
    fp.conversation = out->conversation;
    fp.at = clock_->NowSeconds();
    std::lock_guard<std::mutex> l(mu_);
    Conversation& conv = Touch(out->conversation);
    if (conv.scope != scope) conv.scope = scope;
    out->ticket = ++next_ticket_;
    pending_[out->ticket] = std::move(fp);
    pending_order_.push_back(out->ticket);
    while (pending_order_.size() > kMaxPending) {
      pending_.erase(pending_order_.front());
      pending_order_.pop_front();
    }
  }

  // ---- The rewrite: conversation id, tool stabilisation, breakpoints and
  // fingerprint read from the body's span tree, the result spliced (tools,
  // system, last message's content) instead of serialised. False, with
  // nothing changed or remembered, when the body is not a JSON object or
  // holds what the rewrite cannot read (a non-string role / type / text /
  // model): the caller passes it through unchanged.
  // With `stage`: the body as those edits make it, read by grafting them
  // into the reading of `body` (span_tree.h), the rewrite returned as
  // out->edits over body's bytes. False, with nothing changed or
  // remembered, also when a stage edit cannot be grafted or lands where
  // the rewrite edits (a grafted tool list, system prompt, last message or
  // block of it): the caller then prepares the applied body (the path
  // without `stage`), which gives the same bytes.
  bool SpanPrepare(PromptApi api, std::string_view scope,
                   const std::string& body,
                   const std::vector<BodyEditView>* stage,
                   PreparedRequest* out) {
    SpanTree t;
    ++prompt_internal::body_reads;
    if (!t.Read(body) || t.kind(0) != 'o') return false;
    if (stage != nullptr) {
      for (const BodyEditView& e : *stage) {
        if (!t.Graft(e.begin, e.end, e.text)) return false;
      }
    }
    // Where the rewrite edits must be nodes of the client's bytes.
    auto own = [&t](uint32_t n) { return n == kNoNode || !t.grafted(n); };
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
    if (!own(msgs)) return false;
    uint32_t last_message = kNoNode, last_content = kNoNode;
    if (messages != kNoNode && t.kind(messages) == 'a') {
      for (uint32_t e = t.first(messages); e != kNoNode; e = t.next(e)) {
        last_message = e;
      }
    }
    if (want_bp && last_message != kNoNode && t.kind(last_message) == 'o') {
      last_content = t.Find(last_message, "content");
      if (!own(last_message) || !own(last_content)) return false;
      if (last_content != kNoNode && t.kind(last_content) == 'a') {
        for (uint32_t b = t.first(last_content); b != kNoNode; b = t.next(b)) {
          if (t.kind(b) == 'o' && (!StringOrAbsent(t, b, "type") ||
                                   !StringOrAbsent(t, b, "text"))) {
            return false;
          }
          if (!own(b)) return false;
        }
      }
    }
    const uint32_t tools = t.Find(0, "tools");
    const uint32_t system = anthropic ? t.Find(0, "system") : kNoNode;
    if (!own(tools) || !own(system) || (system != kNoNode && t.mixed(system))) {
      return false;
    }
    if (tools != kNoNode && t.kind(tools) == 'a') {
      for (uint32_t e = t.first(tools); e != kNoNode; e = t.next(e)) {
        if (t.mixed(e)) return false;
      }
    }
    // Committed: from here on the request is read.
    out->conversation = SpanConversationId(api, scope, t, msgs);
    std::vector<std::string> tool_bytes;  // the tool list as it will be sent
    if (tools != kNoNode && t.kind(tools) == 'a') {
      for (uint32_t e = t.first(tools); e != kNoNode; e = t.next(e)) {
        tool_bytes.emplace_back(t.Raw(e));
      }
      if (want_tools)
        SpanStabilizeTools(api, out->conversation, t, tools, &tool_bytes, out);
    }
    std::string system_bytes(system != kNoNode ? t.Raw(system) : "");
    std::string content_bytes(last_content != kNoNode ? t.Bytes(last_content)
                                                      : "");
    double placed_ttl = 0;
    bool tools_edited = false, system_edited = false, content_edited = false;
    if (want_bp) {
      SpanPlaceBreakpoints(
          t, tools != kNoNode && t.kind(tools) == 'a', &tool_bytes, system,
          &system_bytes, messages, last_message, last_content, &content_bytes,
          &tools_edited, &system_edited, &content_edited, &placed_ttl, out);
    }
    // The tool list is spliced only when an element changed, moved or
    // went (its separators are then written compactly).
    std::string tools_out;
    bool tools_changed = false;
    if (tools != kNoNode && t.kind(tools) == 'a') {
      tools_changed = tool_bytes.size() != t.count(tools);
      size_t i = 0;
      for (uint32_t e = t.first(tools); e != kNoNode && !tools_changed;
           e = t.next(e)) {
        tools_changed = tool_bytes[i++] != t.Raw(e);
      }
    }
    if (tools_changed) {
      tools_out.push_back('[');
      for (size_t i = 0; i < tool_bytes.size(); ++i) {
        if (i > 0) tools_out.push_back(',');
        tools_out.append(tool_bytes[i]);
      }
      tools_out.push_back(']');
      out->rewritten = true;
    }
    if (o_.detect_breaks) {
      // The fingerprints' hash: keyed (see key_).
      auto Hash64 = [this](std::string_view bytes) {
        return SipHash13(key_, bytes);
      };
      Fingerprint fp;
      if (model != kNoNode) fp.model = t.Text(model);
      if (anthropic && system != kNoNode) {
        SpanTree st;
        (void)st.Read(system_bytes);
        std::string s;
        if (st.kind(0) == 's') {
          std::string literal;
          st.AppendDump(0, &literal);
          AppendTextBlock(literal, "", &s);
        } else {
          s = Dumped(st, 0, {.strip = true});
        }
        fp.system = Hash64(s);
      } else if (api == PromptApi::kOpenAiResponses) {
        if (uint32_t i = t.Find(0, "instructions"); i != kNoNode) {
          fp.system = Hash64(Dumped(t, i));
        }
      }
      for (const std::string& b : tool_bytes) {
        SpanTree tt;
        (void)tt.Read(b);
        if (SpanDeferred(tt, 0)) continue;
        fp.tools.push_back({SpanToolName(api, tt, 0),
                            Hash64(Dumped(tt, 0, {.strip_top = true}))});
      }
      if (uint32_t c = t.Find(0, "tool_choice"); c != kNoNode) {
        fp.tool_choice = Hash64(Dumped(t, c));
      }
      for (const char* k : {"thinking", "reasoning", "reasoning_effort"}) {
        if (uint32_t c = t.Find(0, k); c != kNoNode) {
          fp.thinking ^= Hash64(Dumped(t, c));
        }
      }
      std::string system_messages;
      if (msgs != kNoNode && t.kind(msgs) == 'a') {
        bool leading = true;
        for (uint32_t e = t.first(msgs); e != kNoNode; e = t.next(e)) {
          if (leading && !anthropic && SpanIsSystemRole(t, e)) {
            WriteDump(t, e, {}, &system_messages);
            continue;
          }
          leading = false;
          if (t.kind(e) == 'o') {
            const uint32_t r = t.Find(e, "role"), y = t.Find(e, "type");
            if ((r != kNoNode && t.TextIs(r, "assistant")) ||
                (y != kNoNode && t.TextIs(y, "function_call"))) {
              fp.fresh = false;
            }
          }
          if (e == last_message && content_edited) {
            std::string m = t.Slice(t.begin(e), t.begin(last_content));
            m += content_bytes;
            m += t.Slice(t.end(last_content), t.end(e));
            SpanTree mt;
            (void)mt.Read(m);
            fp.messages.push_back(
                Hash64(Dumped(mt, 0, {.strip = true, .content_blocks = true})));
          } else {
            fp.messages.push_back(
                Hash64(Dumped(t, e, {.strip = true, .content_blocks = true})));
          }
        }
      } else if (msgs != kNoNode) {
        fp.messages.push_back(Hash64(Dumped(t, msgs)));
      }
      if (!system_messages.empty()) fp.system ^= Hash64(system_messages);
      std::vector<std::pair<int, double>> bps;
      SpanCollectBreakpoints(t, 0, 0, &bps);
      for (const auto& [o, ttl] : bps) fp.ttl = std::max(fp.ttl, ttl);
      fp.ttl = std::max(fp.ttl, placed_ttl);
      if (o_.ttl_seconds > 0) fp.ttl = o_.ttl_seconds;
      Remember(std::move(fp), scope, out);
    }
    if (out->rewritten) {
      // One splice of the edited members into the client's bytes.
      struct Edit {
        uint32_t begin, end;
        const std::string* text;
      };
      std::vector<Edit> edits;
      // An edited member's earlier namesakes go (a reader that takes the
      // first of two members must not see the unedited one): each from its
      // name to the next member's name.
      static const std::string kNothing;
      auto drop_earlier = [&](uint32_t parent, uint32_t member) {
        const std::string name = t.Name(member);
        for (uint32_t m = t.first(parent); m != member; m = t.next(m)) {
          if (t.NameIs(m, name)) {
            edits.push_back({t.KeyBegin(m), t.KeyBegin(t.next(m)), &kNothing});
          }
        }
      };
      if (tools_changed) {
        edits.push_back({t.begin(tools), t.end(tools), &tools_out});
        if (t.dups(0)) drop_earlier(0, tools);
      }
      if (system_edited) {
        edits.push_back({t.begin(system), t.end(system), &system_bytes});
        if (t.dups(0)) drop_earlier(0, system);
      }
      if (content_edited) {
        edits.push_back(
            {t.begin(last_content), t.end(last_content), &content_bytes});
        if (t.dups(0)) drop_earlier(0, msgs);
        if (t.dups(last_message)) drop_earlier(last_message, last_content);
      }
      std::sort(edits.begin(), edits.end(),
                [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
      if (stage != nullptr) {
        // The caller's one writer applies them (with the stage edits not
        // inside one of them).
        for (const Edit& e : edits) {
          out->edits.push_back({e.begin, e.end, *e.text});
        }
        return true;
      }
      ++prompt_internal::body_writes;
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
      WriteDump(t, first,
                {.sorted = true, .strip = true, .content_blocks = true}, &c);
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
    // A member's bytes, name to value.
    auto body_of = [](const SpanTree& tree, uint32_t m) {
      const std::string_view key = tree.KeyRaw(m), value = tree.Raw(m);
      return std::string_view(key.data(),
                              value.data() + value.size() - key.data());
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
        // The tool without its top-level cache_control (the client's bytes
        // when it has none), and that member's last value.
        uint32_t cc = kNoNode;
        int ccs = 0;
        for (uint32_t m = t.first(it.node); m != kNoNode; m = t.next(m)) {
          if (t.NameIs(m, "cache_control")) {
            cc = m;
            ++ccs;
          }
        }
        std::string bare;
        if (cc == kNoNode) {
          bare.assign(t.Raw(it.node));
        } else {
          // The client's bytes with the cache_control members cut out:
          // the text before the first name, each other member followed by
          // its separator, the text after the last member.
          const std::string_view raw = t.Raw(it.node);
          const uint32_t base = t.begin(it.node);
          std::vector<uint32_t> others;
          uint32_t last = kNoNode;
          for (uint32_t m = t.first(it.node); m != kNoNode; m = t.next(m)) {
            if (!t.NameIs(m, "cache_control")) others.push_back(m);
            last = m;
          }
          bare.assign(raw.substr(0, t.KeyBegin(t.first(it.node)) - base));
          for (size_t k = 0; k < others.size(); ++k) {
            const uint32_t m = others[k];
            bare.append(body_of(t, m));
            if (k + 1 < others.size()) {
              bare.append(raw.substr(t.end(m) - base,
                                     t.KeyBegin(t.next(m)) - t.end(m)));
            }
          }
          bare.append(raw.substr(t.end(last) - base));
        }
        std::string canonical;
        WriteDump(t, it.node,
                  {.sorted = true, .strip_top = true, .exact_numbers = true},
                  &canonical);
        auto m = conv.memo.find(it.name);
        if (m != conv.memo.end() && m->second.canonical == canonical) {
          if (m->second.bytes == bare) {
            // The client's bytes already; with a breakpoint as the one
            // last member, they are sent as they are.
            if (ccs == 1 && t.next(cc) == kNoNode && t.kind(cc) != 'z') {
              continue;
            }
          } else {
            ++out->tools_memoised;
          }
          bare = m->second.bytes;
        } else {
          conv.memo[it.name] = ToolMemo{std::move(canonical), bare};
          if (ccs == 1 && t.next(cc) == kNoNode && t.kind(cc) != 'z') {
            continue;  // the client's bytes, as above
          }
        }
        // A null cache_control is dropped (it asks for nothing).
        if (cc != kNoNode && t.kind(cc) != 'z') {
          bare = WithMember(bare, t.Raw(cc));
        }
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

  // Breakpoints over the pieces: the tool list as it will be sent
  // (`tools`), the system prompt's and the last message content's bytes.
  // Candidates in priority order (while fewer than kMaxBreakpoints): the
  // last tool, the last built-in followed only by MCP tools, the system
  // prompt, the last turn. A place the client marked is left as it is.
  // Choice: the built-in boundary ranks above the system prompt: MCP tool
  // sets change far more often than system prompts (Claude Code's client
  // ranks them so too).
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
      tool_bytes += DumpSize(tt[i], 0);
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
      prefix_bytes += DumpSize(t, system);
      uint32_t back = kNoNode;
      if (t.kind(system) == 'a') {
        for (uint32_t b = t.first(system); b != kNoNode; b = t.next(b)) {
          back = b;
        }
      }
      const bool nonempty = (t.kind(system) == 's' && !t.TextIs(system, "")) ||
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
          std::string s = t.Slice(t.begin(system), t.begin(back));
          s += WithMember(t.Bytes(back), cc);
          s += t.Slice(t.end(back), t.end(system));
          *system_bytes = std::move(s);
        }
        *system_edited = true;
      }
    }
    if (has_messages && t.count(messages) > 0 && o_.cache_last_turn &&
        message_bp == 0 && budget > 0) {
      for (uint32_t m = t.first(messages); m != kNoNode; m = t.next(m)) {
        prefix_bytes += DumpSize(t, m);
      }
      if (prefix_bytes >= min_bytes && t.kind(last_message) == 'o' &&
          last_content != kNoNode) {
        if (t.kind(last_content) == 's') {
          if (!t.TextIs(last_content, "")) {
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
            if (type == "text" && (tx == kNoNode || t.TextIs(tx, ""))) {
              continue;
            }
            const std::string cc =
                cc_for(std::numeric_limits<int>::max(), "last_turn");
            std::string s = t.Slice(t.begin(last_content), t.begin(b));
            s += WithMember(t.Bytes(b), cc);
            s += t.Slice(t.end(b), t.end(last_content));
            *content_bytes = std::move(s);
            *content_edited = true;
            break;
          }
        }
      }
    }
    if (out->breakpoints_added > 0) out->rewritten = true;
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
  // The fingerprints' key, random per PromptCache. Choice: SipHash-1-3,
  // keyed, instead of SHA-256: the fingerprints live in this process's
  // memory only and are compared with each other, so they need
  // collision resistance only against someone who cannot compute them
  // (another principal shaping a request so that a changed system prompt
  // or message hashes as before would hide a break); ~42 % of Prepare's
  // instructions went to SHA-256. The conversation id, which leaves the
  // process (logs, headers, BreaksJson), stays SHA-256.
  const SipKey key_ = SipKey::Random();
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
