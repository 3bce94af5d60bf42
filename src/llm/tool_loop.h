// ToolLoop: the LLM proxy's server-side tool loop (issue 13), free of I/O.
//
// Serving. When every tool call of a model turn is a fresh cacheable hit of
// a tool the configuration lets the proxy serve, TryServe answers them from
// the engine (ToolCache::Peek decides, ToolCache::Begin serves; nothing here
// decides cacheability) and returns the hidden turn: the assistant message
// exactly as the model produced it and the results paired by call id. The
// proxy appends it to the conversation (Append) and calls the upstream
// again, up to max_rounds. A turn with one call that is not a hit is
// returned to the client whole (Choice: the simple safe rule; a client never
// sees half a turn, and its tool runner always answers every call it sees).
//
// Splicing. The client never saw the hidden turns, so its next request
// lacks them. Save stores them in the Store under the scope, a running
// digest of the whole prefix they continue (system, tools, every earlier
// message, canonical bytes) and the fingerprint of the visible assistant
// message that followed them (its tool call ids, or the digest of its
// text); Splice finds each assistant message of a request in the Store and
// inserts the hidden turns before it, byte-identical to what the upstream
// saw. Two conversations share state only when their scopes and full
// prefixes are identical. Missing state leaves the request as sent (counted
// `missing` when this process knows it had served there).
//
// Usage: SumUsage adds every integer of each round's `usage` object, so
// the client's one response carries the cost of all hidden calls.
//
// Thread-safety: thread-safe (the cache and the store are; one mutex
// around the local fingerprint memory). Ownership: borrows the cache, the
// store and the observer (for tool routing), which must outlive it.
//
// Example:
//   ToolLoop loop(cache, store, &observer, {.all_tools = true});
//   std::string body = loop.Splice(req, client_body, scope, &rep);
//   ... upstream -> response ...
//   if (auto turn = loop.TryServe(api, response, parsed, scope))
//     hidden = Join(hidden, turn->messages); body = Append(req, body, ...);
#ifndef TOOLCACHE_SRC_LLM_TOOL_LOOP_H_
#define TOOLCACHE_SRC_LLM_TOOL_LOOP_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "src/core/sha256.h"
#include "src/llm/observer.h"
#include "src/llm/offload.h"
#include "src/llm/wire.h"
#include "toolcache/store.h"
#include "toolcache/tool_cache.h"

namespace toolcache::llm {

struct ServeOptions {
  // Serve every tool (true) or only those named in `tools`.
  bool all_tools = false;
  std::vector<std::string> tools;
  // Upstream calls one client request may make (1 = never serve).
  uint32_t max_rounds = 8;
  // Conversation state lives this long in the store. Choice: 7 days.
  double state_ttl_seconds = 7 * 86400.0;
  // Fingerprints this process remembers (for `missing`). Choice: 65536.
  size_t max_local = 65536;
};

// What the client's API version accepts in the user turns the loop adds
// (the served results). Anthropic API version 2026-10-21 answers 400 to a
// `text` block with a non-empty `citations` array in a user message,
// directly or inside a `search_result` block (docs/PROXY.md, Session 17);
// 2023-06-01 accepts it.
struct ServeRules {
  // False: a result whose blocks carry citations is not served (the turn
  // goes to the client, whose tool runner answers it).
  bool user_citations = true;
};
// The rules for an Anthropic request sent with `anthropic-version: version`.
// Choice: versions are dates; every one from 2026-10-21 on is taken to
// keep that version's rule ("" and older ones: 2023-06-01's).
ServeRules AnthropicServeRules(std::string_view version);

struct ServedTurn {
  // The hidden messages, comma-joined JSON (assistant, then the results:
  // one user message for Anthropic, one tool message per call for Chat).
  std::string messages;
  uint32_t calls = 0;
  double latency_saved_seconds = 0;  // the served entries' stored latency
  std::vector<std::string> tools;    // names of the served calls
};

struct SpliceReport {
  uint32_t spliced = 0;  // assistant messages that got hidden turns back
  uint32_t missing = 0;  // known served, state gone (forwarded as sent)
  uint32_t store_errors = 0;
  uint32_t corrupt = 0;  // stored state damaged (forwarded as sent)
};

// The identity of an assistant message, the same for the message in a
// response and as the client sends it back: "tu:" + its tool call ids, or
// "tx:" + the digest of its text ("" when it has neither).
std::string RequestFingerprint(const ParsedRequest& request,
                               std::string_view body, uint32_t message);
std::string ResponseFingerprint(Api api, std::string_view body,
                                const ParsedResponse& response);

// The assistant message of a whole response `body` as it goes back into a
// request (Anthropic: role and content; Chat: role, content and any
// tool_calls of choices[0]); "" when `body` has none.
std::string AssistantMessage(Api api, std::string_view body);

// `body` with `messages` (comma-joined JSON messages) inserted after its
// last message. INVALID_ARGUMENT when the request has no message array.
Result<std::string> AppendMessages(const ParsedRequest& request,
                                   std::string_view body,
                                   std::string_view messages);

// Adds every integer of `body`'s usage object into `total` (nested objects
// too, e.g. prompt_tokens_details.cached_tokens).
void AddUsage(std::string_view body, nlohmann::ordered_json* total);
// `body` (a JSON response) with its usage replaced by `total`; `body`
// unchanged when it is not a JSON object.
std::string WithUsage(std::string_view body,
                      const nlohmann::ordered_json& total);

class ToolLoop {
 public:
  // `offloader` (borrowed, may be null) answers retrieval calls
  // (offload.h) in the loop.
  ToolLoop(ToolCache* cache, Store* store, const Observer* router,
           ServeOptions options, Offloader* offloader = nullptr);

  const ServeOptions& options() const { return options_; }
  // The APIs and modes served: Anthropic Messages, Chat Completions and
  // Responses, streamed or not.
  static bool Supports(Api api, bool stream);
  // Why `request` is forwarded without serving although its API is
  // supported ("" when it is not): "previous_response_id" or
  // "conversation" (a Responses request continuing state the provider
  // holds, which the proxy cannot splice hidden items into).
  static std::string_view BypassReason(const ParsedRequest& request);
  // Whether `serve` covers `tool`: named by the operator, or under
  // `serve: true` not local to the client (`scopes.Local`).
  bool Serves(std::string_view tool, const ToolScopes& scopes) const;

  // The hidden turn when every call of `response` is served; nullopt when
  // the turn must go to the client.
  // `scope` keys the result entries; `state_scope` (default: `scope`) the
  // offloaded results it answers retrievals from (the request's credential
  // even when entries are shared globally).
  // `rules`: what the client's API version accepts (ServeRules).
  std::optional<ServedTurn> TryServe(
      Api api, std::string_view body, const ParsedResponse& response,
      const ToolScopes& scope,
      std::optional<std::string_view> state_scope = std::nullopt,
      const ServeRules& rules = {});

  // Remembers `hidden` (comma-joined messages) before the assistant message
  // of the final response, which the client will send after the messages
  // of `client` (its request as it sent it). `final_body` is the assistant
  // message as the client received it (its identity); a non-empty
  // `replacement` (one JSON message) replaces that message when spliced
  // (a stream that showed the client blocks of hidden rounds). Responses
  // keep the items of one response apart: a non-zero `replaced_items` says
  // the replacement stands for that many client items from the anchor's
  // first (reasoning) item on. False when the store failed or the message
  // has no identity.
  bool Save(const ParsedRequest& client, std::string_view client_body,
            std::string_view scope, std::string_view final_body,
            const ParsedResponse& final_response, std::string_view hidden,
            std::string_view replacement = {}, uint32_t replaced_items = 0);

  // `body` with every saved hidden turn spliced back; `body` itself when
  // there is none.
  std::string Splice(const ParsedRequest& request, const std::string& body,
                     std::string_view scope, SpliceReport* report);
  // Splice as edits over `body` (the bytes `request` was parsed from),
  // added to *edits for the one writer (edits.h); Splice applies them.
  void SplicePlan(const ParsedRequest& request, const std::string& body,
                  std::string_view scope, SpliceReport* report,
                  BodyEdits* edits);

 private:
  // `prefix`: the running digest of everything before the hidden turns
  // (scope included); `anchor`: the visible assistant message's identity.
  std::string StoreKeyOf(Api api, const Sha256Digest& prefix,
                         std::string_view anchor) const;
  // The SHA-256 of `raw`'s canonical bytes (sorted keys, no cache_control,
  // text-only content as text), memoised by the raw bytes' SHA-256.
  Sha256Digest Canonical(std::string_view raw);
  // Served results in the API's form; "" when it cannot carry them (or
  // `rules` forbid what they hold).
  static std::string RenderResult(Api api, std::string_view stored,
                                  const ServeRules& rules);

  ToolCache* cache_;
  Store* store_;
  const Observer* router_;
  ServeOptions options_;
  Offloader* offloader_;
  std::atomic<uint64_t> next_waiter_{1};
  std::mutex serve_mu_;  // serializes serving (see TryServe)

  mutable std::mutex mu_;
  // GUARDED_BY(mu_): store keys this process saved (for `missing`).
  std::unordered_map<std::string, bool> saved_;
  std::mutex memo_mu_;
  // GUARDED_BY(memo_mu_): raw SHA-256 -> canonical SHA-256 of prefix values.
  std::unordered_map<std::string, Sha256Digest> memo_;
};

// One client request's rounds through the loop (the proxy's Exchange owns
// it): the bodies sent upstream, the hidden messages so far, usage summed.
//
// Example:
//   ServeSession s(&loop, std::move(client_parsed), std::move(client_body),
//                  upstream_body, scope);
//   std::string body = s.upstream_body();        // send it
//   while (auto next = s.OnResponse(resp, parsed)) body = *next;  // resend
//   client_body = s.Finish(resp, parsed);        // answer the client
class ServeSession {
 public:
  // `client` / `client_body`: the request as the client sent it (the
  // parse of exactly these bytes; its views are moved onto client_body,
  // wire.h RebaseViews: move the body in to keep them where they are);
  // `upstream_body`: what goes upstream (spliced).
  // `scope`: the result entries' scope; `state_scope` (default: `scope`):
  // the conversation state's and offloaded results' (scope.h).
  // `edits`: when given, `upstream_body` is `client_body` with these edits
  // applied (edits.h), and the insertion point is found by mapping the
  // client's parse through them; without, `upstream_body` is parsed again.
  ServeSession(ToolLoop* loop, ParsedRequest client, std::string client_body,
               const std::string& upstream_body, ToolScopes scope,
               std::optional<std::string> state_scope = std::nullopt,
               const BodyEdits* edits = nullptr);

  // A whole 2xx upstream response of round rounds(): the next upstream body
  // when its tool calls were served, nullopt when it goes to the client.
  std::optional<std::string> OnResponse(std::string_view body,
                                        const ParsedResponse& response);
  // What the client's API version accepts in the hidden turns; set before
  // the first OnResponse (default: everything, as 2023-06-01).
  void SetRules(ServeRules rules) { rules_ = rules; }
  // The final response's body for the client (usage summed when rounds
  // were hidden); saves the hidden turns for the next request.
  std::string Finish(std::string_view body, const ParsedResponse& response);
  // The same for a stream (stream_relay.h): `round_body` is the final
  // round's message, `client_body` the message the client was shown over
  // all rounds; when they differ (`relayed_earlier`) the next request gets
  // the final round's message back in place of the client's (Responses:
  // the final round's items in place of every item of `client_body`).
  void FinishStream(std::string_view round_body, std::string_view client_body,
                    bool relayed_earlier);
  // The summed usage of the rounds so far (an object, maybe empty).
  const nlohmann::ordered_json& usage() const { return usage_; }
  uint32_t rounds() const { return rounds_; }  // upstream calls made
  uint32_t served_calls() const { return served_calls_; }
  double latency_saved_seconds() const { return latency_saved_; }
  const std::vector<std::string>& served_tools() const { return tools_; }
  bool saved() const { return saved_; }
  // The client's parse; its views index this session's copy of the body,
  // valid for the session's life whatever the caller did with its own.
  const ParsedRequest& client() const { return client_; }

 private:
  ToolLoop* loop_;
  ParsedRequest client_;
  std::string client_body_;
  ToolScopes scope_;
  std::string state_scope_;
  bool usable_ = false;  // the upstream body has an insertion point
  std::string prefix_;   // upstream body up to the insertion point
  std::string suffix_;   // the rest
  bool comma_ = true;    // messages precede the insertion point
  std::string hidden_;   // comma-joined hidden messages
  nlohmann::ordered_json usage_;
  ServeRules rules_;
  uint32_t rounds_ = 1;
  uint32_t served_calls_ = 0;
  double latency_saved_ = 0;
  std::vector<std::string> tools_;
  bool saved_ = false;
};

}  // namespace toolcache::llm

#endif  // TOOLCACHE_SRC_LLM_TOOL_LOOP_H_
