// Session: the MCP proxy's protocol logic, free of I/O.
//
// The stdio proxy (proxy.cc) feeds it complete lines from the client and from
// the server; the session writes lines to either side through SessionOutput.
// Everything it does not interpret is forwarded as the exact received bytes,
// in order. It interprets:
//   client -> server  tools/call          (cache: serve a hit, join a flight,
//                                          or forward and track)
//                     notifications/cancelled (single-flight waiters)
//                     tasks/get|result|cancel|list (to see a task end)
//                     any request          (tracked so a dying server can be
//                                          answered with an error)
//   server -> client  responses to tracked requests (tools/list teaches the
//                     cache the tools; tools/call results are admitted)
//                     notifications/tools/list_changed (invalidation, and a
//                     refresh: the session lists the tools itself under
//                     proxy-internal ids whose replies never reach the client)
//                     notifications/resources/updated and
//                     notifications/resources/list_changed (invalidation)
//                     notifications/tasks/status (a task-augmented write
//                     ended: invalidation)
//                     roots/list (to see the client's answer, below)
//   client -> server  notifications/roots/list_changed, an answer to
//                     roots/list that differs from the last one, a second
//                     initialize (invalidation: what the server returns or
//                     permits may change)
//
// Roots (docs/MCP.md, "What is cached"). A server learns the client's roots
// only from the client's answers to its roots/list requests, which the session
// sees go by; entries are keyed by them (a part of the sharing scope after a
// '\x1e' separator, before the 2026 envelope's part):
//   * the server asked and the client answered: a digest of the canonical
//     answer (or "error"), so clients with other roots never share;
//   * the server asked and no answer came yet: calls bypass
//     ("roots_unknown"), since the answer they get depends on roots the
//     proxy does not know;
//   * never asked, and the client declared the roots capability:
//     "roots:unasked" (the server answered without roots; kept apart from
//     clients without the capability, whose server will never ask);
//   * never asked, no roots capability: the scope as configured.
//
// Server requests (docs/MCP.md, "What is cached"). A 2025-era server may ask
// the client something while a tools/call runs: sampling/createMessage (the
// client's LLM writes), elicitation/create (the user answers), or any other
// request but ping and roots/list (roots are keyed, above). The call's answer
// then depends on the client's answer, which is in no key: the call is
// forwarded and answered as usual but neither stored nor given to a
// single-flight follower (the flight is detached at once; followers go
// upstream on their own), bypass reason "server_requested_input". Which
// calls: on a request's own response stream (OnServerLineOnStream), that
// request; otherwise (stdio, the GET stream) every call in flight when the
// server's request arrives. A call answered before it, or started after it,
// is not concerned.
//
// Eras (docs/MCP.md, "Protocol eras"). A session is in the 2025 era after
// initialize and in the 2026-07-28 era after a request carrying a valid
// per-request envelope in params._meta (era.h). In the 2026-07-28 era:
//   * a request whose envelope the server would reject (a claim with a
//     malformed envelope; no envelope at all once the session is modern)
//     is forwarded, never served, joined or stored ("invalid_envelope"):
//     the client gets the server's own error;
//   * a multi round-trip retry (params.inputResponses / requestState) is
//     forwarded likewise ("multi_round_trip"); requestState is never read;
//   * a tools/call's key also holds the envelope's protocol version and
//     client capabilities (the sharing scope gets them appended), so a
//     client declaring other capabilities never gets another's answer;
//     a result whose resultType is not "complete" (input_required) is never
//     stored;
//   * tools/list, prompts/list, resources/list, resources/templates/list,
//     resources/read and server/discover go through the cache as
//     ToolCall::declared calls (tool = method, arguments = params without
//     _meta plus the envelope's key material): stored only when the result
//     declares ttlMs > 0 and cacheScope, for ttlMs, shared by every scope
//     when "public"; tools are learned only from the server's own answers,
//     never from a stored tools/list: until the session learned them, a
//     first-page listing that would be a hit goes upstream instead;
//   * the session's own tools/list refresh carries the envelope of the
//     client's last valid request.
// In the 2025 era lists and reads are forwarded and never cached.
//
// Request ids. Requests go upstream under the client's own id, byte for
// byte, unless a request with the same normal id (NormalizeId) is already in
// flight upstream (the client reused an id, or chose one of the proxy's own
// such as "toolcache-refresh-1"): then the later request goes upstream under
// a proxy id ("toolcache-id-N") and its answer is re-addressed to the
// client's id, so every answer reaches the request it answers. A tools/call
// takes part in caching (hit, flight, storing) only when the server is sure
// to answer it under an id the proxy recognizes: a string or safe-integer id
// and no members JSON-RPC 2.0 / MCP do not define; otherwise it bypasses
// ("nonstandard_id", "nonstandard_request") and is forwarded untouched.
//
// Lines it cannot use as they are:
//   * client line malformed (bad JSON, invalid UTF-8) or over-long: -32700
//     to the client, under the request's id when one can be recognized
//     (IdSniffer), else id null; if it was the client's answer to a server
//     request, the server also gets a -32603 error for that id so it does not
//     wait forever. The session continues.
//   * server line with invalid UTF-8: forwarded with U+FFFD replacements
//     (what a TextDecoder-based client sees anyway), logged, never cached.
//   * server line malformed: logged and not forwarded; when it carries the id
//     of a pending request, that request (and its single-flight waiters) is
//     answered with -32603 naming the cause.
//   * server line over-long: streamed to the client by the proxy; the session
//     retires the request it answers (OnServerLineTooLong) without caching.
//
// Thread-safety: none; one thread drives a session. Ownership: borrows the
// cache (may be null: pure pass-through), the clock and the output.
//
// Example:
//   Session s({.server = "fs"}, cache.get(), &clock, &out);
//   s.OnClientLine(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
//   s.OnServerLine(R"({"jsonrpc":"2.0","id":1,"result":{"tools":[]}})");
#ifndef TOOLCACHE_SRC_MCP_SESSION_H_
#define TOOLCACHE_SRC_MCP_SESSION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "src/mcp/era.h"
#include "src/mcp/json_scan.h"
#include "toolcache/classifier.h"
#include "toolcache/clock.h"
#include "toolcache/tool_cache.h"

namespace toolcache::mcp {

// JSON-RPC / MCP error codes the proxy emits.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kInternalError = -32603;
// MCP SDK's ErrorCode.ConnectionClosed.
inline constexpr int kConnectionClosed = -32000;

// One piece of a message: bytes, and the stored result they lie in, if any
// (shared so the output can queue the bytes without copying them).
struct MessagePart {
  std::string_view bytes;
  std::shared_ptr<const std::string> keep;
};

class SessionOutput {
 public:
  virtual ~SessionOutput() = default;
  // One JSON-RPC message, without the trailing newline. `line` is valid
  // during the call only.
  virtual void ToClient(std::string_view line) = 0;
  virtual void ToServer(std::string_view line) = 0;
  // One message to the client made of `parts` in order (cache hits: most of
  // it lies in the stored result). Default: concatenates and calls ToClient.
  virtual void ToClientParts(std::span<const MessagePart> parts);
};

struct SessionOptions {
  std::string server;  // server identity for cache keys
  std::string scope;   // sharing scope ("" = global)
  // Seconds after a roots change (the client's
  // notifications/roots/list_changed, or an answer to the server's roots/list
  // that differs from the last one) during which tools/call bypasses the
  // cache ("roots_changing"): MCP defines no acknowledgement that a server
  // applied new roots, and server-filesystem applies them asynchronously
  // after the answer. Choice: default 2 (it applies them within
  // milliseconds); longer costs hits after each change, shorter risks
  // storing an answer given under the old roots.
  double roots_settle_seconds = 2.0;
  // Seconds the session keeps waiting for the answer to a cached-path
  // request (tools/call, or a 2026-07-28 list or read) after forwarding the
  // client's notifications/cancelled of it: MCP servers send no answer to a
  // cancelled request, yet may still carry it out. Until the answer or this
  // deadline, a cancelled possible write keeps its server uncached
  // (ToolCache::Abandon); then the request is forgotten and its flight
  // completed as failed, which invalidates the server once more (a late
  // answer is dropped; the id stays reserved upstream). Choice:
  // default 60 (the SDK clients' default request timeout, a write that slow
  // is what a client gives up on); longer keeps the server uncached longer
  // after a cancelled write, shorter risks a write landing after it.
  double cancelled_grace_seconds = 60.0;
  // The group this session's callers share the server's public answers
  // with (ToolCall::public_group; "" = every caller of the cache).
  std::string public_group;
};

struct SessionCounters {
  uint64_t client_lines = 0;
  uint64_t server_lines = 0;
  uint64_t client_parse_errors = 0;
  // Server lines that could not be used as received: malformed, or with
  // invalid UTF-8 (then forwarded repaired).
  uint64_t server_parse_errors = 0;
  uint64_t server_lines_too_long = 0;  // streamed through unparsed
  uint64_t failed_on_exit = 0;  // requests answered with an error because
                                // the server went away
  // Client requests sent upstream under a proxy id because their own id
  // was already in flight there.
  uint64_t remapped_ids = 0;
};

class Session {
 public:
  Session(SessionOptions options, ToolCache* cache, const Clock* clock,
          SessionOutput* out);

  void OnClientLine(std::string_view line);
  // A line from the server whose transport does not say which request it
  // concerns (stdio; an HTTP server's GET stream). A server request for the
  // client's input there (see "Server requests" above) may concern any
  // call in flight: each is neither stored nor shared.
  void OnServerLine(std::string_view line);
  // A line that arrived on the response stream of the request the server
  // knows by the id `stream_id` (Streamable HTTP: that request's POST
  // answered with an SSE stream). A server request for the client's input
  // there belongs to that request alone. "" = no request named: as
  // OnServerLine.
  void OnServerLineOnStream(std::string_view line, std::string_view stream_id);
  // A client line longer than the proxy's limit was discarded; `sniffed` saw
  // its bytes go by. Answers -32700 (under its id when it was a request).
  void OnClientLineTooLong(const IdSniffer& sniffed, uint64_t bytes,
                           uint64_t limit);
  // A server line longer than the proxy's limit was streamed to the client
  // unparsed; `sniffed` saw its bytes. When it answered a pending request,
  // that request is retired and its flight completed as not cacheable;
  // single-flight waiters (who cannot be given bytes that were not kept) are
  // re-sent upstream under their own ids.
  void OnServerLineTooLong(const IdSniffer& sniffed, uint64_t bytes,
                           uint64_t limit);
  // The server is gone: answer every request still waiting for it with a
  // kConnectionClosed error whose message names `cause`.
  void FailInFlight(std::string_view cause);
  // The flight this session's follower `waiter` joined was completed by
  // another Session sharing the cache (toolcache serve runs one per HTTP
  // session): answers the follower with `result_json` under its own id, or,
  // when it is empty (an error, or an answer that was not kept), sends the
  // follower's request upstream itself. An unknown waiter is ignored.
  void OnFlightCompletedElsewhere(WaiterId waiter,
                                  std::string_view result_json);
  // Notifications the server sent may have been lost (`mcp --url`: its GET
  // event stream ended and could not be resumed): invalidates every entry
  // of the server, since any resources/updated or list_changed could have
  // been among them; `why` is logged.
  void ServerMessagesMayBeLost(std::string_view why);

  // Requests forwarded upstream (or waiting on a flight) and not answered.
  size_t in_flight() const { return pending_.size() + followers_.size(); }
  const SessionCounters& counters() const { return counters_; }
  const std::string& protocol_version() const { return protocol_version_; }
  Era era() const { return era_; }
  // True from notifications/tools/list_changed until the session's own
  // listing of the new tools completed.
  bool refreshing_tools() const { return refreshing_; }

 private:
  enum class Tracked { kOther, kInitialize, kToolsList, kToolsCall, kTasks };
  // What the session knows of one request's era (OnClientLine).
  struct RequestContext {
    RequestEra era;
    bool modern = false;  // a valid 2026-07-28 envelope, modern session
    std::string problem;  // why the server would reject the envelope
  };
  struct Pending {
    std::string raw_id;
    Tracked what = Tracked::kOther;
    double started = 0;
    TicketId ticket = 0;  // kToolsCall through the cache
    WaiterId waiter = 0;
    bool bypass = false;
    bool cancelled = false;     // the client cancelled it
    bool first_page = true;     // tools/list without a cursor
    bool task_write = false;    // kToolsCall: CallPlan::task_write
    bool declared = false;      // a ToolCall::declared request (era.h)
    bool reinitialize = false;  // kInitialize: not the session's first
    // Sent upstream under a proxy id (its pending_ key) instead of raw_id:
    // the answer is re-addressed to raw_id. client_key = NormalizeId(raw_id).
    bool remapped = false;
    std::string client_key;
    std::string method;  // kTasks: tasks/get, tasks/result, ...
    std::string tool;    // kToolsCall: params.name (for logs)
    // The server asked the client for input while this call ran
    // (ClientInputRequested): its answer is neither stored nor shared.
    bool unshared = false;
    std::string task_id;  // kTasks: params.taskId
    // A leader's notifications/cancelled held back while others wait; sent
    // upstream when the last of them leaves too.
    std::string held_cancel;
    // The cancellation went upstream: the answer is no longer waited for
    // after this time (RetireCancelled). 0 = none.
    double retire_at = 0;
    // Past retire_at: its flight is completed; the record only keeps its id
    // in flight upstream (the server may still answer it late: the answer
    // is dropped, and the client's reuse of the id goes under a proxy id).
    bool retired = false;
  };
  struct Follower {
    std::string raw_id;
    std::string line;  // the client's request, to re-send if needed
    TicketId ticket = 0;
  };

  void HandleToolsCall(std::string_view line, const RawMessage& m,
                       const RequestContext& ctx);
  // A cacheable-result request of the 2026-07-28 era (IsCacheableResultMethod)
  // through the cache as a ToolCall::declared call.
  void HandleDeclared(std::string_view line, const RawMessage& m,
                      const RequestContext& ctx);
  void HandleDeclaredResponse(std::string_view line, Pending& p,
                              std::string_view result, std::string_view error,
                              bool altered);
  // Answers a hit: the stored result under `raw_id`, with provenance.
  void ServeHit(std::string_view raw_id, const CallPlan& plan);
  // Answers every waiter of the completed flight of `p`: the leader with
  // `line`, the others with `result` / `error` under their own ids. An
  // `interim` answer (2026-07-28 `input_required`, a task handle) is the
  // leader's alone: its requestState or task belongs to the leader's
  // exchange, so every other waiter's request goes upstream itself.
  void AnswerWaiters(const Completion& c, const Pending& p,
                     std::string_view line, std::string_view result,
                     std::string_view error, bool interim);
  // Why a tools/call cannot share an answer (ToolCall::bypass_reason), or
  // "" when it can.
  std::string_view ShareBlocker(const RawMessage& m, bool other_params) const;
  // Sends a client request upstream and tracks it in pending_: under its
  // own id (the line byte for byte), or, when that id's normal form is
  // already in flight upstream, under a new proxy id. `id_span` is the id
  // inside `line`. Returns the pending_ key.
  std::string SendUpstream(Pending p, std::string_view line,
                           std::string_view id_span);
  // A string id "<prefix>N" not in flight upstream nor waiting on a flight.
  std::string NewProxyId(std::string_view prefix);
  // What the server permits may have changed with the client's roots.
  void RootsChanged(std::string_view why);
  // The client answered the server's roots/list with `result` ("" for an
  // error answer): the roots this session's entries are keyed under.
  void NoteRootsAnswer(std::string_view result);
  // Appends the roots part of the sharing scope to `scope` (see "Roots"
  // above). False when the server asked for the roots and the client has
  // not answered yet: the call may not share ("roots_unknown").
  bool AppendRoots(std::string& scope) const;
  void HandleCancelled(std::string_view line, std::string_view params);
  // The client's cancellation of the cached-path request `p` went upstream:
  // its answer may never come (SDK servers send none) while a write may
  // still land. Abandons its flight (a write keeps the server uncached) and
  // sets its deadline (SessionOptions::cancelled_grace_seconds).
  void CancelForwarded(Pending& p);
  // Stops waiting for the cancelled requests whose deadline passed: a
  // write's flight is completed as failed (invalidating its server again),
  // a read's freed; the record stays, retired, to keep the id reserved.
  void RetireCancelled();
  void HandleCallResponse(std::string_view line, Pending& p,
                          std::string_view result, std::string_view error,
                          bool altered);
  // Answers a client line that cannot be forwarded (see the top).
  void RejectClientLine(const IdSniffer& sniffed, const std::string& problem,
                        std::string_view line);
  void HandleMalformedServerLine(std::string_view line,
                                 const std::string& problem);
  void HandleServerNotification(const RawMessage& m);
  // The server sent the client the request `method`, whose answer is the
  // client's input (sampling, elicitation, ...), on the stream of the
  // request `stream_id` ("": any request in flight): every call through the
  // cache it may concern is unshared (ToolCache::Unshare), and its
  // single-flight followers are sent upstream on their own.
  void ClientInputRequested(std::string_view method,
                            std::string_view stream_id);
  // Answers the flight of `p` (already removed from pending_) with an error
  // object and completes its ticket as an error.
  void FailPending(Pending& p, int code, std::string_view message);
  // Removes the request `nid` (its pending_ key) from pending_ and returns it
  // (nullopt: none).
  std::optional<Pending> TakePending(const std::string& nid);
  // Removes the follower `waiter` (from followers_ and follower_ids_) and
  // returns it (nullopt: none).
  std::optional<Follower> TakeFollower(WaiterId waiter);
  // Sends the followers of a completed flight upstream as plain requests.
  void Resend(const std::vector<WaiterId>& waiters, WaiterId leader);
  // A task-augmented write whose task cannot be followed: its ticket stays
  // open (the server uncached) until FailInFlight.
  void KeepServerUncached(const Pending& p, std::string_view why);

  // Tool-list refresh (notifications/tools/list_changed).
  void MarkClientReady();
  void StartToolsRefresh();
  void SendRefreshPage(std::string_view cursor_literal);
  void OnRefreshReply(uint64_t generation, const RawMessage& m);

  // Task-augmented writes.
  void OnTaskQueryAnswered(const Pending& p, std::string_view result,
                           std::string_view error);
  void EndTask(const std::string& task_id, std::string_view why);

  void SendError(bool to_client, std::string_view raw_id, int code,
                 std::string_view message);

  SessionOptions options_;
  ToolCache* cache_;
  const Clock* clock_;
  SessionOutput* out_;
  // Client requests forwarded upstream, by the normal form of the id the
  // server sees (their own, or a proxy id when remapped).
  std::unordered_map<std::string, Pending> pending_;
  // Normal client id -> pending_ key of the latest request with that id that
  // went upstream under a proxy id (for notifications/cancelled).
  std::unordered_map<std::string, std::string> remapped_;
  // Single-flight followers.
  std::unordered_map<WaiterId, Follower> followers_;
  // Normalized client id -> waiter, for followers (cancellation).
  std::unordered_map<std::string, WaiterId> follower_ids_;
  // Leader waiter -> normalized id in pending_.
  std::unordered_map<WaiterId, std::string> leader_ids_;
  // The earliest Pending::retire_at in pending_ (0 = none).
  double next_retire_ = 0;
  WaiterId next_waiter_ = 1;
  // Proxy-internal requests (tools/list refresh pages): normalized id ->
  // refresh generation. Their replies are consumed, never forwarded.
  std::unordered_map<std::string, uint64_t> internal_;
  uint64_t internal_seq_ = 0;
  uint64_t refresh_generation_ = 0;
  uint32_t refresh_pages_ = 0;
  bool refreshing_ = false;
  // The client finished initialization (sent notifications/initialized, or
  // any request but initialize/ping): the session may send requests. A
  // refresh asked for earlier waits for it (refresh_deferred_).
  bool client_ready_ = false;
  bool refresh_deferred_ = false;
  // This session taught the cache its server's tools from the server's own
  // tools/list answer (a first page, or a completed refresh).
  bool tools_learned_ = false;
  std::vector<ToolInfo> refresh_tools_;
  // Task-augmented writes whose task has not ended: taskId -> ticket.
  std::unordered_map<std::string, TicketId> task_tickets_;
  // Normal ids of the server's roots/list requests not yet answered, and the
  // raw result of the last answer to one.
  std::unordered_set<std::string> roots_requests_;
  std::optional<std::string> last_roots_;
  // The client declared the roots capability in its last initialize; the
  // server asked for roots at least once; the last answer's part of the
  // scope ("roots:<sha256 of its canonical form>", "error"; "" = none yet).
  bool roots_declared_ = false;
  bool roots_asked_ = false;
  std::string roots_answer_;
  // tools/call bypasses ("roots_changing") until this time.
  double roots_quiet_until_ = 0;
  bool initialize_seen_ = false;
  std::string protocol_version_;
  Era era_ = Era::kUnknown;
  // The reserved _meta members of the client's last valid 2026-07-28
  // request (RequestEra::envelope_members), for the session's own requests.
  std::string modern_envelope_;
  SessionCounters counters_;
};

// The hit response: {"jsonrpc":"2.0","id":<raw_id>,"result":<result>} where
// `result` gets `_meta["toolcache/cache"] = {"hit":true,"ageSeconds":age}`
// spliced in; every other byte of `result` is kept.
std::string BuildHitResponse(std::string_view raw_id, std::string_view result,
                             double age_seconds);

// The same response in pieces, so the stored result need not be copied:
// head + result[0, split) + insert + result[split, end) + "}".
struct HitPieces {
  std::string head;    // {"jsonrpc":"2.0","id":<raw_id>,"result":
  size_t split = 0;    // where the provenance goes into the result
  std::string insert;  // the provenance ("" when it cannot be spliced)
};
HitPieces PlanHitResponse(std::string_view raw_id, std::string_view result,
                          double age_seconds);

// One tools/list result page: its tools and the raw `nextCursor` string
// literal ("" on the last page). ok = false when it has no tools array.
struct ToolsPage {
  bool ok = false;
  std::vector<ToolInfo> tools;
  std::string next_cursor;
};
ToolsPage ParseToolsPage(std::string_view server, std::string_view result);

// Learns the tools of one tools/list result page (declared here, defined in
// tools_list.cc).
void LearnToolsFromListResult(ToolCache* cache, std::string_view server,
                              std::string_view result, bool replace);

// Writes the stats file of a proxy face running `session` over `cache`
// (nullptr: zero stats) to `path` (WriteToolCacheStats); "" writes nothing.
// A failure is logged as a warning, never fatal. (proxy.cc)
void WriteSessionStats(const std::string& path, ToolCache* cache,
                       const Session& session);

}  // namespace toolcache::mcp

#endif  // TOOLCACHE_SRC_MCP_SESSION_H_
