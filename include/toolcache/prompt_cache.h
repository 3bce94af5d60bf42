// PromptCache: keeps the provider's prompt cache warm for the requests that
// pass through `toolcache proxy` (issue 14; docs/PROMPT_CACHE.md).
//
// The provider caches a prompt by prefix, in the order tools -> system ->
// messages: a shifted tool list or one changed schema byte invalidates
// everything after it. Per conversation, a PromptCache
//   1. rewrites each request (Prepare): a stable tool list (built-ins as a
//      sorted prefix, `mcp__*` tools as a sorted suffix, duplicates dropped
//      first-wins, each tool's serialised bytes memoised for the
//      conversation while its meaning is unchanged) and `cache_control`
//      breakpoints (Anthropic) at places the client left unmarked: the last
//      tool, the last built-in tool when only MCP tools follow it, and as
//      configured the system prompt and the last turn; never more than the
//      provider's 4, never moving one the client set, never below the
//      minimum cacheable length;
//   2. detects prompt-cache breaks (Observe): the response's cache-read
//      tokens dropped by more than 5 % and more than 2,000 tokens against
//      what the previous turn had cached, and attributes the break to what
//      changed between the two requests (model, tools: which tool was
//      added / removed / moved / changed, system, tool_choice, thinking, an
//      edit to an earlier message) or to TTL expiry;
//   3. keeps the last N breaks per conversation (BreaksJson) and counts
//      everything in the metrics registry it is given.
// The rewrites never change what the model is told: same tools and schemas
// (semantically), same messages; only order, bytes and breakpoints.
//
// A conversation is identified by a hash of the credential scope, the API,
// whether the request offers tools, and the first message (cache_control
// removed): stable across the turns of one agent session, distinct for an
// agent's side requests (titles, summaries) that start differently.
//
// Thread-safety: thread-safe (one mutex around the per-conversation state).
// Ownership: borrows the clock and the registry, which must outlive it.
//
// Example:
//   PromptCacheOptions o;
//   o.stabilize_tools = o.place_cache_control = o.detect_breaks = true;
//   std::unique_ptr<PromptCache> pc = NewPromptCache(o, &clock, &registry);
//   PreparedRequest p = pc->Prepare(PromptApi::kAnthropicMessages, scope,
//                                   body);
//   ... send p.rewritten ? p.body : body upstream, read its usage ...
//   std::optional<CacheBreak> b = pc->Observe(p.ticket, usage);
#ifndef TOOLCACHE_PROMPT_CACHE_H_
#define TOOLCACHE_PROMPT_CACHE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolcache/clock.h"

namespace toolcache {

namespace metrics {
class Registry;
}

struct PromptCacheOptions {
  // Stable tool list (docs/PROMPT_CACHE.md section 1). Default off: every
  // switch is opt-in.
  bool stabilize_tools = false;
  // A cache_control breakpoint on the last (non-deferred) tool, and on the
  // last built-in tool when only MCP tools follow it, where the client put
  // none (Anthropic only; OpenAI caches automatically).
  bool place_cache_control = false;
  // ... and on the last system block, when the system prompt has none.
  bool cache_system = false;
  // ... and on the last block of the last message, when no message has one
  // (the provider finds the previous turn's entry by its lookback).
  bool cache_last_turn = false;
  // TTL of the breakpoints placed: "" (the provider's default, 5 minutes)
  // or "1h" (cache writes cost more). A placed breakpoint never gets a
  // longer TTL than a client breakpoint before it (the provider's order).
  std::string ttl;
  // No breakpoint is placed where the prefix up to it is shorter than this
  // (tokens estimated as bytes / 4). Choice: 1024, the provider's minimum
  // for most models; a breakpoint below it would only waste one of four.
  uint64_t min_cacheable_tokens = 1024;

  // Break detection and attribution (docs/PROMPT_CACHE.md section 3).
  bool detect_breaks = false;
  // A break: cache-read tokens fell by more than this fraction AND more
  // than this many tokens below the previous turn's cached prefix.
  double break_min_fraction = 0.05;
  int64_t break_min_tokens = 2000;
  // Cache TTL the attribution assumes; 0 = from the request's breakpoints
  // (300 s, or 3600 s when one has ttl "1h").
  double ttl_seconds = 0;
  // Breaks kept per conversation (oldest dropped first).
  uint32_t keep_breaks = 20;
  // Conversations remembered (least recently used forgotten first).
  // Choice: 1024; each holds its tools' bytes and per-message hashes.
  uint32_t max_conversations = 1024;
};

enum class PromptApi : uint8_t {
  kAnthropicMessages,
  kOpenAiChat,
  kOpenAiResponses,
};

// An edit of a request body: bytes [begin, end) become `text` (begin ==
// end: an insertion). The LLM proxy's stages describe their rewrites so.
struct BodyEditView {
  uint32_t begin = 0;
  uint32_t end = 0;
  std::string_view text;
};

struct PromptEdit {
  uint32_t begin = 0;
  uint32_t end = 0;
  std::string text;
};

struct PreparedRequest {
  // When `rewritten`, the body to send upstream; otherwise empty (send the
  // client's bytes: nothing needed changing, or the body was unreadable).
  // PrepareEdited leaves it empty and fills `edits` instead.
  std::string body;
  bool rewritten = false;
  // PrepareEdited: the rewrite as edits over the client's bytes, each a
  // whole value (the tool list, the system prompt, the last message's
  // content) or an earlier duplicate member to drop. A stage edit inside
  // one of them is already in its text (it supersedes that edit); every
  // other stage edit is disjoint from them.
  std::vector<PromptEdit> edits;
  // PrepareEdited: false when the stage edits could not be read in place;
  // nothing was done or remembered (call Prepare on the edited body).
  bool composed = false;
  // Pass to Observe with the response's usage; 0 = nothing to observe.
  uint64_t ticket = 0;
  // What the rewrite did (for logs and tests).
  uint32_t tools_moved = 0;  // tools whose position changed
  uint32_t tools_deduplicated = 0;
  uint32_t tools_memoised = 0;  // tools sent with the memoised bytes
  uint32_t breakpoints_added = 0;
  std::string conversation;  // 16 hex digits
};

// Token usage a response reports; -1 = not reported.
struct PromptUsage {
  int64_t input_tokens = -1;
  int64_t cache_read_tokens = -1;      // OpenAI: cached_tokens
  int64_t cache_creation_tokens = -1;  // Anthropic only
};

struct CacheBreak {
  std::string conversation;
  uint64_t turn = 0;  // the conversation's request number, from 1
  // The primary cause, earliest in the provider's prefix order: "model",
  // "tools", "system", "tool_choice", "thinking", "messages",
  // "ttl_expired" (nothing changed, the gap exceeded the TTL) or "unknown".
  std::string cause;
  // For tools: "added|removed|moved|schema_changed <tool>"; for messages:
  // "edited <index>" or "removed <count>"; else "".
  std::string detail;
  // Every change found, "<cause>" or "<cause>:<detail>", in prefix order.
  std::vector<std::string> changes;
  int64_t expected_read = 0;  // previous turn's read + creation
  int64_t cache_read = 0;
  double gap_seconds = 0;
  std::string model;
  // "<cause>" or "<cause>:<detail>" (the response header's value).
  std::string Label() const {
    return detail.empty() ? cause : cause + ":" + detail;
  }
};

// Who asks for the breaks: the scopes (ScopeOf) the caller holds, e.g. the
// LLM proxy's credential scopes of the key it presented; none = a caller
// without a credential.
struct BreaksReader {
  std::vector<std::string> owners;
};

class PromptCache {
 public:
  virtual ~PromptCache() = default;
  // Rewrites `body` (a request of `api`) as the options say and remembers
  // its fingerprint under the returned ticket. `scope` separates
  // credentials (a hash, never the credential). A body that cannot be read
  // is returned unchanged with ticket 0 (never an error: the request goes
  // through as the client sent it).
  virtual PreparedRequest Prepare(PromptApi api, std::string_view scope,
                                  const std::string& body) = 0;
  // Prepare for `body` with `stage_edits` (the proxy's splice and offload,
  // over body's bytes, disjoint) applied, without applying them: the body
  // is read once and the stage edits' texts are read into that reading
  // (issue 30), and the rewrite comes back as `edits` for the caller's one
  // writer. Applying the stage edits not superseded and `edits` to `body`
  // gives the bytes Prepare gives for the edited body. `composed` false
  // when the edits cannot be read so (an edit that does not replace whole
  // values, the client's body unreadable); the default does not compose.
  virtual PreparedRequest PrepareEdited(
      PromptApi api, std::string_view scope, const std::string& body,
      const std::vector<BodyEditView>& stage_edits) {
    (void)api, (void)scope, (void)body, (void)stage_edits;
    return {};
  }
  // The response to the request of `ticket` reported `usage`: compares it
  // with the conversation's previous turn; returns the break, if any.
  // Unknown tickets (0, already observed, forgotten) return nullopt. Call
  // at most once per ticket; a ticket never observed is forgotten later.
  virtual std::optional<CacheBreak> Observe(uint64_t ticket,
                                            const PromptUsage& usage) = 0;
  // {"breaks": [...], "conversations": N, "totalBreaks": N}: the kept
  // breaks of every conversation, oldest first (the operator's view).
  virtual std::string BreaksJson() const = 0;
  // What `reader` may see of the breaks (GET /toolcache/breaks):
  //   - `owners` non-empty: {"breaks": [...], "conversations": N,
  //     "totalBreaks": N} over the conversations whose Prepare `scope` is
  //     one of `owners` or is composed from one with the workspace added
  //     (ScopeOf appends that field last, so such a scope starts with the
  //     owner's); "totalBreaks" counts their breaks, kept or not, while
  //     the conversation is remembered.
  //   - `owners` empty: {"conversations": N, "totalBreaks": N} over every
  //     conversation, and no "breaks": no conversation id, model or tool
  //     name.
  // The default gives the counts only.
  virtual std::string BreaksJsonFor(const BreaksReader& reader) const {
    (void)reader;
    return "{}\n";
  }
};

// `registry` may be nullptr (nothing counted).
std::unique_ptr<PromptCache> NewPromptCache(const PromptCacheOptions& options,
                                            const Clock* clock,
                                            metrics::Registry* registry);

}  // namespace toolcache

#endif  // TOOLCACHE_PROMPT_CACHE_H_
