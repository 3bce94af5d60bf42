// Invariants:
// - Every line the session did not interpret is forwarded byte for byte, in
//   the order received; interpreted lines are forwarded byte for byte too
//   unless the session answers them itself (hit, follower, parse error) or
//   repairs invalid UTF-8 in a server line.
// - A client request id is in at most one of pending_ (forwarded upstream)
//   and follower_ids_ (waiting on a flight); each is answered exactly once:
//   by the server's response (also one streamed through over-long), by a
//   Completion, by an error naming why the server's answer is unusable, or
//   by FailInFlight. A request leaves pending_ the moment it is answered.
// - leader_ids_ maps the waiter of every tools/call forwarded through the
//   cache to its pending_ key, so a Completion's waiters resolve to ids.
// - Replies to ids in internal_ (the session's own tools/list requests) are
//   consumed here and never reach the client.
// - The keys of pending_ and internal_ (normal forms of the ids the server
//   sees) never collide: a client request whose id is taken goes upstream
//   under a fresh proxy id (SendUpstream), so an answer always belongs to
//   exactly one request. A remapped request's answer reaches the client
//   under the client's own id.
// - Only a tools/call whose answer is sure to come back under an id the
//   session recognizes (ShareBlocker: string or safe-integer id, a plain
//   JSON-RPC 2.0 envelope) may be served, lead or join a flight, so no
//   waiter ever waits on an answer that cannot be matched.
// - A call during which the server asked the client for input (Pending::
//   unshared) is never stored, and its answer never reaches another
//   request: its flight is detached and its followers re-sent upstream
//   (ClientInputRequested; AnswerWaiters again at completion).
// - Every ticket the cache handed out is completed exactly once: on the
//   response, or (task-augmented writes) when the task ends, or in
//   FailInFlight; task_tickets_ holds the ones waiting for their task.
#include "src/mcp/session.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/core/json.h"
#include "src/core/sha256.h"
#include "src/mcp/json_scan.h"
#include "toolcache/canonical_json.h"

namespace toolcache::mcp {
namespace {

// `line` with the id value `id_span` (a view into `line`) replaced by
// `new_id`. REQUIRES: id_span points into line.
std::string WithId(std::string_view line, std::string_view id_span,
                   std::string_view new_id) {
  const size_t at = static_cast<size_t>(id_span.data() - line.data());
  std::string out;
  out.reserve(line.size() - id_span.size() + new_id.size());
  out.append(line.substr(0, at));
  out.append(new_id);
  out.append(line.substr(at + id_span.size()));
  return out;
}

bool IsTerminalTaskStatus(std::string_view status) {
  return status == "completed" || status == "failed" || status == "cancelled";
}

// The bypass reason of a call during which the server asked the client for
// input (ClientInputRequested).
constexpr std::string_view kServerRequestedInput = "server_requested_input";

std::string Truncated(std::string_view line) {
  // Choice: log at most 200 bytes of an offending line (invalid UTF-8
  // replaced, so the log stays text).
  constexpr size_t kMaxLogged = 200;
  if (line.size() <= kMaxLogged) return RepairUtf8(line);
  return RepairUtf8(line.substr(0, kMaxLogged)) + "...";
}

}  // namespace

HitPieces PlanHitResponse(std::string_view raw_id, std::string_view result,
                          double age_seconds) {
  char age[64];
  std::snprintf(age, sizeof age, "%.3f", age_seconds < 0 ? 0.0 : age_seconds);
  const std::string provenance =
      std::string(R"("toolcache/cache":{"hit":true,"ageSeconds":)") + age + "}";
  HitPieces h;
  h.head = R"({"jsonrpc":"2.0","id":)";
  h.head += raw_id;
  h.head += R"(,"result":)";
  // The result's own opening brace: a '{' further in may sit inside a
  // string or an array element (a stored "a{b" got _meta spliced into the
  // string, an invalid answer no client could read: issue 27.6). A result
  // that is not an object is answered as stored, without provenance.
  const size_t first = result.find_first_not_of(" \t\r\n");
  const bool is_object =
      first != std::string_view::npos && result[first] == '{';
  std::string_view meta =
      is_object ? FindMember(result, "_meta") : std::string_view();
  const size_t open = is_object ? first : std::string_view::npos;
  if (!meta.empty() && meta.front() == '{') {
    // Splice into the existing _meta object.
    h.split = static_cast<size_t>(meta.data() - result.data()) + 1;
    bool empty = meta.find_first_not_of(" \t\r\n", 1) == meta.size() - 1;
    h.insert = provenance;
    if (!empty) h.insert += ',';
  } else if (meta.empty() && open != std::string_view::npos) {
    bool empty =
        result.find_first_not_of(" \t\r\n", open + 1) == result.rfind('}');
    h.split = open + 1;
    h.insert = R"("_meta":{)" + provenance + "}";
    if (!empty) h.insert += ',';
  } else {
    // Choice: a non-object _meta is left alone; provenance is then omitted.
    h.split = result.size();
  }
  return h;
}

std::string BuildHitResponse(std::string_view raw_id, std::string_view result,
                             double age_seconds) {
  const HitPieces h = PlanHitResponse(raw_id, result, age_seconds);
  std::string out;
  out.reserve(h.head.size() + result.size() + h.insert.size() + 1);
  out += h.head;
  out.append(result.substr(0, h.split));
  out += h.insert;
  out.append(result.substr(h.split));
  out += '}';
  return out;
}

void SessionOutput::ToClientParts(std::span<const MessagePart> parts) {
  std::string line;
  for (const MessagePart& p : parts) line.append(p.bytes);
  ToClient(line);
}

Session::Session(SessionOptions options, ToolCache* cache, const Clock* clock,
                 SessionOutput* out)
    : options_(std::move(options)), cache_(cache), clock_(clock), out_(out) {}

void Session::SendError(bool to_client, std::string_view raw_id, int code,
                        std::string_view message) {
  std::string line = R"({"jsonrpc":"2.0","id":)";
  line += raw_id.empty() ? std::string_view("null") : raw_id;
  line += R"(,"error":{"code":)" + std::to_string(code) + R"(,"message":)";
  // The message goes only onto the wire (never into a key or an entry):
  // RFC 8785 escapes, ill-formed UTF-8 repaired (core/json.h).
  json::AppendQuoted(message, &line);
  line += "}}";
  if (to_client) {
    out_->ToClient(line);
  } else {
    out_->ToServer(line);
  }
}

void Session::OnClientLineTooLong(const IdSniffer& sniffed, uint64_t bytes,
                                  uint64_t limit) {
  ++counters_.client_lines;
  RejectClientLine(sniffed,
                   "message of " + std::to_string(bytes) +
                       " bytes exceeds the limit of " + std::to_string(limit) +
                       " bytes (--max-line-bytes)",
                   "");
}

void Session::RejectClientLine(const IdSniffer& sniffed,
                               const std::string& problem,
                               std::string_view line) {
  ++counters_.client_parse_errors;
  spdlog::warn("client line rejected ({}){}{}", problem,
               line.empty() ? "" : ": ", Truncated(line));
  const std::string id = sniffed.id();
  if (sniffed.is_response()) {
    // The client's answer to a server request cannot be forwarded: tell the
    // server, or its request would wait forever.
    SendError(
        false, id, kInternalError,
        "toolcache: the client's response could not be forwarded: " + problem);
    if (auto r = roots_requests_.find(NormalizeId(id));
        r != roots_requests_.end()) {
      // The server's roots/list got an error: it has no roots from it.
      roots_requests_.erase(r);
      NoteRootsAnswer("");
    }
  }
  // Choice: a rejected request is answered under its own id when the
  // sniffer recognized one (so it cannot hang), else id null (JSON-RPC 5.1).
  SendError(true, sniffed.is_request() ? std::string_view(id) : "", kParseError,
            "Parse error: toolcache: " + problem);
}

void Session::OnClientLine(std::string_view line) {
  ++counters_.client_lines;
  RetireCancelled();
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  Result<RawMessage> scanned = ScanMessage(line);
  if (!scanned.ok()) {
    IdSniffer sniffed;
    sniffed.Feed(line);
    RejectClientLine(sniffed, scanned.status().message(), line);
    return;
  }
  const RawMessage& m = *scanned;
  switch (m.kind()) {
    case MessageKind::kRequest: {
      if (m.method_name != "initialize" && m.method_name != "ping") {
        MarkClientReady();
      }
      const bool declarable = IsCacheableResultMethod(m.method_name);
      RequestContext ctx;
      ctx.era = ReadRequestEra(m.params, /*with_params=*/declarable);
      // Choice: initialize makes the session 2025-era only once the server
      // accepts it (OnServerLine): a 2026-07-28 server rejects it, and a
      // rejected initialize must not turn the envelope checks off.
      if (m.method_name != "initialize" && era_ != Era::kLegacy) {
        // Choice: in a 2025-era session an envelope in _meta is ignored
        // (the server's 2025 codec ignores it too).
        if (ctx.era.claim && !ctx.era.problem.empty()) {
          ctx.problem = ctx.era.problem;
        } else if (ctx.era.claim) {
          if (era_ == Era::kUnknown) {
            spdlog::info("client speaks MCP {} (per-request envelope)",
                         ctx.era.protocol_version);
          }
          era_ = Era::kModern;
          ctx.modern = true;
          modern_envelope_ = ctx.era.envelope_members;
        } else if (era_ == Era::kModern) {
          ctx.problem =
              "no 2026-07-28 _meta envelope "
              "(io.modelcontextprotocol/protocolVersion)";
        }
      }
      if (m.method_name == "tools/call" && cache_ != nullptr &&
          !m.params.empty() && m.params.front() == '{') {
        HandleToolsCall(line, m, ctx);
        return;
      }
      if (declarable && cache_ != nullptr &&
          (ctx.modern || !ctx.problem.empty()) &&
          (m.params.empty() || m.params.front() == '{')) {
        HandleDeclared(line, m, ctx);
        return;
      }
      Pending p;
      p.raw_id = std::string(m.id);
      p.started = clock_->NowSeconds();
      if (m.method_name == "tools/list") {
        p.what = Tracked::kToolsList;
        p.first_page =
            m.params.empty() || FindMember(m.params, "cursor").empty();
      } else if (m.method_name == "initialize") {
        p.what = Tracked::kInitialize;
        if (!m.params.empty()) {
          std::string_view v = FindMember(m.params, "protocolVersion");
          if (!v.empty()) protocol_version_ = DecodeString(v);
          std::string_view caps = FindMember(m.params, "capabilities");
          roots_declared_ = !caps.empty() && caps.front() == '{' &&
                            !FindMember(caps, "roots").empty();
          spdlog::info("client initialize protocolVersion={}",
                       protocol_version_);
        }
        // A new initialize may bring other capabilities and roots: what the
        // server returns or permits may change (invalidated again when it
        // answers, so reads in flight across it are not stored).
        p.reinitialize = initialize_seen_;
        initialize_seen_ = true;
        if (p.reinitialize && cache_ != nullptr) {
          spdlog::info("client initializes again: invalidating server={}",
                       options_.server);
          cache_->Invalidate(options_.server, "");
        }
      } else if (m.method_name == "tools/call") {
        p.what = Tracked::kToolsCall;
      } else if (m.method_name == "tasks/get" ||
                 m.method_name == "tasks/result" ||
                 m.method_name == "tasks/cancel" ||
                 m.method_name == "tasks/list") {
        p.what = Tracked::kTasks;
        p.method = m.method_name;
        if (!m.params.empty() && m.params.front() == '{') {
          p.task_id = DecodeString(FindMember(m.params, "taskId"));
        }
      }
      SendUpstream(std::move(p), line, m.id);
      return;
    }
    case MessageKind::kNotification:
      if (m.method_name == "notifications/cancelled" && !m.params.empty() &&
          m.params.front() == '{') {
        HandleCancelled(line, m.params);
        return;
      }
      if (m.method_name == "notifications/roots/list_changed") {
        // MCP 2025-11-25 RootsListChangedNotification: "sent whenever the
        // client adds, removes, or modifies any root"; the server then
        // re-reads them and may permit less than before.
        RootsChanged("the client's roots changed");
      }
      out_->ToServer(line);
      if (m.method_name == "notifications/initialized") MarkClientReady();
      return;
    case MessageKind::kResponse:
      if (!roots_requests_.empty()) {
        if (auto r = roots_requests_.find(NormalizeId(m.id));
            r != roots_requests_.end()) {
          roots_requests_.erase(r);
          NoteRootsAnswer(m.result);
          if (!m.result.empty() && (!last_roots_ || *last_roots_ != m.result)) {
            const bool first = !last_roots_;
            last_roots_ = std::string(m.result);
            RootsChanged(first ? "the client answered roots/list"
                               : "the client answered roots/list with "
                                 "different roots");
          }
        }
      }
      out_->ToServer(line);
      return;
    case MessageKind::kOther:
      out_->ToServer(line);
      return;
  }
}

std::string Session::NewProxyId(std::string_view prefix) {
  std::string id;
  do {
    id = "\"" + std::string(prefix) + std::to_string(++internal_seq_) + "\"";
  } while (pending_.contains(id) || internal_.contains(id) ||
           follower_ids_.contains(id));
  return id;
}

std::string Session::SendUpstream(Pending p, std::string_view line,
                                  std::string_view id_span) {
  std::string key = NormalizeId(id_span);
  if (!pending_.contains(key) && !internal_.contains(key)) {
    p.client_key = key;
    pending_[key] = std::move(p);
    out_->ToServer(line);
    return key;
  }
  // Choice: the id is taken upstream (the client reused an id in flight,
  // against MCP's "MUST NOT have been previously used", or picked one of
  // the proxy's own): two answers with one id could not be told apart, so
  // this request goes upstream under a fresh proxy id and its answer is
  // re-addressed to the client's id. A direct connection would hand the
  // client both answers under its id; it still gets both.
  const std::string wire = NewProxyId("toolcache-id-");
  ++counters_.remapped_ids;
  spdlog::info(
      "request id {} is already in flight upstream ({}): sent as id {}",
      p.raw_id, internal_.contains(key) ? "the proxy's own" : "the client's",
      wire);
  p.remapped = true;
  p.client_key = key;
  remapped_[key] = wire;
  out_->ToServer(WithId(line, id_span, wire));
  pending_[wire] = std::move(p);
  return wire;
}

std::string_view Session::ShareBlocker(const RawMessage& m,
                                       bool other_params) const {
  // JSON-RPC 2.0 section 4: an id "MUST contain a String, Number, or NULL
  // value"; "Numbers SHOULD NOT contain fractional parts". MCP (basic,
  // "Requests"): "Requests MUST include a string or integer ID. Unlike base
  // JSON-RPC, the ID MUST NOT be null." A server may drop a request with
  // another id (the TypeScript SDK does), answer it with id null (JSON-RPC
  // 5: "If there was an error in detecting the id ... it MUST be Null") or
  // echo it in another spelling (a JavaScript server echoes
  // 9007199254740993 as 9007199254740992, 1.0 as 1; Python rejects 1.0).
  // Such a request is forwarded untouched, as on a direct connection, and
  // nobody may wait on its answer.
  const IdKind kind = ClassifyId(m.id);
  if (kind != IdKind::kString && kind != IdKind::kSafeInteger) {
    return "nonstandard_id";
  }
  // JSON-RPC 2.0 section 4: "jsonrpc ... MUST be exactly "2.0"", and a
  // request has jsonrpc, method, params and id only. A server validating
  // strictly drops anything else (the TypeScript SDK's schema is strict),
  // so such a request could leave its waiters without an answer. MCP's
  // tools/call params are name, arguments, _meta and task.
  if (m.other_members || !m.result.empty() || !m.error.empty() ||
      DecodeString(m.jsonrpc) != "2.0" || other_params) {
    return "nonstandard_request";
  }
  if (clock_->NowSeconds() < roots_quiet_until_) return "roots_changing";
  return {};
}

void Session::ServerMessagesMayBeLost(std::string_view why) {
  if (cache_ == nullptr) return;
  // Choice: the whole server, as notifications/resources/list_changed
  // does: which notifications were lost is unknown, and one of them may
  // have been a list_changed. Not a tools/list refresh: tool definitions
  // are learned again from the client's next tools/list.
  spdlog::info("{}: invalidating server={}", why, options_.server);
  cache_->Invalidate(options_.server, "");
}

void Session::RootsChanged(std::string_view why) {
  if (cache_ == nullptr) return;
  roots_quiet_until_ = clock_->NowSeconds() + options_.roots_settle_seconds;
  spdlog::info(
      "{}: invalidating server={}; calls bypass (roots_changing) for {}s "
      "while the server applies the new roots",
      why, options_.server, options_.roots_settle_seconds);
  cache_->Invalidate(options_.server, "");
}

void Session::NoteRootsAnswer(std::string_view result) {
  std::string answer = "error";
  if (!result.empty()) {
    // Canonical, so a re-spelled equal answer keeps the same roots; an
    // answer without a canonical form is taken byte for byte.
    Result<std::string> canonical = CanonicalizeJson(result);
    answer =
        "roots:" + ToHex(ComputeSha256(canonical.ok() ? *canonical : result));
  }
  if (answer != roots_answer_) {
    spdlog::debug("client roots for server={}: {}", options_.server, answer);
  }
  roots_answer_ = std::move(answer);
}

bool Session::AppendRoots(std::string& scope) const {
  if (roots_asked_ && roots_answer_.empty()) return false;
  if (!roots_answer_.empty()) {
    scope += "\x1e";
    scope += roots_answer_;
  } else if (roots_declared_) {
    scope += "\x1eroots:unasked";
  }
  return true;
}

void Session::HandleToolsCall(std::string_view line, const RawMessage& m,
                              const RequestContext& ctx) {
  const std::string_view raw_id = m.id;
  std::string name;
  std::string_view arguments;
  bool task = false;
  bool other_params = false;
  ForEachMember(m.params, [&](const std::string& key, std::string_view value) {
    if (key == "name") {
      name = DecodeString(value);
    } else if (key == "arguments") {
      arguments = value;
    } else if (key == "task") {
      task = value != "null";
    } else if (key != "_meta" && key != "inputResponses" &&
               key != "requestState") {
      other_params = true;
    }
  });
  Pending p;
  p.raw_id = std::string(raw_id);
  p.what = Tracked::kToolsCall;
  p.started = clock_->NowSeconds();
  p.tool = name;
  if (name.empty()) {
    // Not a well-formed call: the server answers it.
    SendUpstream(std::move(p), line, raw_id);
    return;
  }
  WaiterId waiter = next_waiter_++;
  // A 2026-07-28 answer may depend on the envelope's protocol version and
  // client capabilities: they join the sharing scope (after a separator no
  // configured scope contains), so only identical envelopes share.
  std::string scope = options_.scope;
  const bool roots_known = AppendRoots(scope);
  if (ctx.modern) {
    scope += "\x1f";
    scope += ctx.era.key_material;
  }
  std::string_view blocker;
  if (!ctx.problem.empty()) {
    blocker = "invalid_envelope";
  } else if (ctx.era.retry) {
    blocker = "multi_round_trip";
  } else {
    blocker = ShareBlocker(m, other_params);
  }
  if (blocker.empty() && !roots_known) blocker = "roots_unknown";
  ToolCall call{.server = options_.server,
                .scope = scope,
                .tool = name,
                .arguments_json = arguments,
                .task_augmented = task,
                .bypass_reason = blocker};
  CallPlan plan = cache_->Begin(call, waiter);
  switch (plan.action) {
    case CallAction::kServe:
      spdlog::debug("hit tool={} age={:.3f}s", name, plan.age_seconds);
      ServeHit(raw_id, plan);
      return;
    case CallAction::kWait:
      spdlog::debug("coalesced tool={} id={}", name, raw_id);
      followers_[waiter] = Follower{.raw_id = std::string(raw_id),
                                    .line = std::string(line),
                                    .ticket = plan.ticket};
      follower_ids_[NormalizeId(raw_id)] = waiter;
      return;
    case CallAction::kForward:
      if (plan.bypass) {
        const std::string& detail =
            ctx.problem.empty() ? plan.verdict.detail : ctx.problem;
        spdlog::info("bypass tool={} reason={}{}{}", name, plan.bypass_reason,
                     detail.empty() ? "" : " detail=", detail);
      } else {
        spdlog::debug("miss tool={}", name);
      }
      p.ticket = plan.ticket;
      p.waiter = waiter;
      p.bypass = plan.bypass;
      p.task_write = plan.task_write;
      leader_ids_[waiter] = SendUpstream(std::move(p), line, raw_id);
      return;
  }
}

void Session::ServeHit(std::string_view raw_id, const CallPlan& plan) {
  // The stored bytes are queued where they are, never copied.
  const std::string_view result = *plan.result_json;
  const HitPieces h = PlanHitResponse(raw_id, result, plan.age_seconds);
  const MessagePart parts[] = {{h.head, nullptr},
                               {result.substr(0, h.split), plan.result_json},
                               {h.insert, nullptr},
                               {result.substr(h.split), plan.result_json},
                               {"}", nullptr}};
  out_->ToClientParts(parts);
}

void Session::HandleDeclared(std::string_view line, const RawMessage& m,
                             const RequestContext& ctx) {
  Pending p;
  p.raw_id = std::string(m.id);
  p.started = clock_->NowSeconds();
  p.declared = true;
  p.method = m.method_name;
  if (m.method_name == "tools/list") {
    p.what = Tracked::kToolsList;
    p.first_page = m.params.empty() || FindMember(m.params, "cursor").empty();
  }
  // The key: the method and the params that affect the result (the
  // caching page: "the request method together with the request parameters
  // that affect the result"), plus the envelope's protocol version and
  // client capabilities. A client param of the same name makes a duplicate
  // member: no canonical form, so a bypass, never a collision.
  std::string args;
  if (ctx.modern && !ctx.era.params_without_meta.empty()) {
    args = ctx.era.params_without_meta;
    args.pop_back();
    if (args.size() > 1) args += ',';
    args += R"("toolcache/envelope":)";
    args += ctx.era.key_material;
    args += '}';
  }
  std::string_view blocker;
  if (!ctx.problem.empty()) {
    blocker = "invalid_envelope";
  } else if (ctx.era.retry) {
    blocker = "multi_round_trip";
  } else if (args.empty()) {
    blocker = "nonstandard_request";
  } else {
    blocker = ShareBlocker(m, /*other_params=*/false);
  }
  std::string scope = options_.scope;
  if (!AppendRoots(scope) && blocker.empty()) blocker = "roots_unknown";
  const WaiterId waiter = next_waiter_++;
  ToolCall call{.server = options_.server,
                .scope = scope,
                .tool = m.method_name,
                .arguments_json = args,
                .bypass_reason = blocker,
                .declared = true,
                .public_group = options_.public_group};
  CallPlan plan = cache_->Begin(call, waiter);
  switch (plan.action) {
    case CallAction::kServe:
      spdlog::debug("hit method={} age={:.3f}s", m.method_name,
                    plan.age_seconds);
      if (p.what == Tracked::kToolsList && p.first_page && !tools_learned_) {
        // Tools are learned only from the server's own answer, never from a
        // stored one (another session, tenant or process put it there):
        // until this session learned them, its listing goes upstream as a
        // plain request (learned when answered, not stored again). Choice:
        // the engine still counts the lookup as a hit.
        spdlog::debug(
            "tools/list hit not served: learning the tools from "
            "the server first");
        p.declared = false;
        SendUpstream(std::move(p), line, m.id);
        return;
      }
      // A stored tools/list teaches nothing (SECURITY.md, session 18).
      ServeHit(m.id, plan);
      return;
    case CallAction::kWait:
      followers_[waiter] = Follower{.raw_id = std::string(m.id),
                                    .line = std::string(line),
                                    .ticket = plan.ticket};
      follower_ids_[NormalizeId(m.id)] = waiter;
      return;
    case CallAction::kForward:
      if (plan.bypass) {
        spdlog::info("bypass method={} reason={}{}{}", m.method_name,
                     plan.bypass_reason,
                     ctx.problem.empty() ? "" : " detail=", ctx.problem);
      }
      p.ticket = plan.ticket;
      p.waiter = waiter;
      p.bypass = plan.bypass;
      leader_ids_[waiter] = SendUpstream(std::move(p), line, m.id);
      return;
  }
}

void Session::HandleDeclaredResponse(std::string_view line, Pending& p,
                                     std::string_view result,
                                     std::string_view error, bool altered) {
  UpstreamResult r;
  r.latency_seconds = clock_->NowSeconds() - p.started;
  bool interim = false;
  if (!error.empty() || result.empty() || result.front() != '{') {
    r.is_error = true;
  } else {
    r.result_json = result;
    const CacheHints h = ReadCacheHints(result);
    // Interim results (input_required) are not cacheable; a result without
    // resultType is not a 2026-07-28 result.
    if (h.result_type != "complete") r.complete = false;
    interim = !h.result_type.empty() && h.result_type != "complete";
    if (h.cacheable()) {
      r.declared =
          DeclaredHints{.ttl_seconds = h.ttl_seconds, .shared = h.shared};
    }
  }
  if (altered || p.unshared) r.complete = false;
  leader_ids_.erase(p.waiter);
  const Completion c = cache_->Complete(p.ticket, r);
  if (c.admitted) {
    spdlog::debug("stored method={} ttl={}s public={}", p.method,
                  r.declared->ttl_seconds, r.declared->shared);
  }
  AnswerWaiters(c, p, line, result, error, interim);
}

void Session::AnswerWaiters(const Completion& c, const Pending& p,
                            std::string_view line, std::string_view result,
                            std::string_view error, bool interim) {
  bool leader_answered = false;
  for (WaiterId w : c.waiters) {
    if (w == p.waiter) {
      if (!p.cancelled) out_->ToClient(line);
      leader_answered = true;
      continue;
    }
    if (p.unshared || interim) {
      // Made with this session's client's input (ClientInputRequested; a
      // cache without Unshare kept the follower), or the leader's own next
      // step (its requestState, its task: in serve's pooled child another
      // client's): it asks the server itself.
      Resend({w}, p.waiter);
      continue;
    }
    std::optional<Follower> f = TakeFollower(w);
    if (!f) continue;
    // Choice: a coalesced waiter gets the upstream answer verbatim under its
    // own id (no provenance: it was not served from the store).
    std::string reply = R"({"jsonrpc":"2.0","id":)" + f->raw_id;
    if (!error.empty()) {
      reply += R"(,"error":)";
      reply.append(error);
    } else {
      reply += R"(,"result":)";
      reply.append(result);
    }
    reply += '}';
    out_->ToClient(reply);
  }
  if (!leader_answered && !p.cancelled) {
    // The cache did not list the leader (e.g. a bypass ticket it already
    // retired): the client still gets the server's answer.
    out_->ToClient(line);
  }
}

void Session::HandleCancelled(std::string_view line, std::string_view params) {
  std::string_view request_id = FindMember(params, "requestId");
  std::string nid = NormalizeId(request_id);
  if (auto f = follower_ids_.find(nid); f != follower_ids_.end()) {
    // The server never saw this id: drop the waiter, do not forward.
    const WaiterId waiter = f->second;
    follower_ids_.erase(f);
    std::optional<Follower> taken = TakeFollower(waiter);
    const TicketId ticket = taken ? taken->ticket : 0;
    CancelOutcome c;
    if (cache_ != nullptr) c = cache_->Cancel(waiter);
    spdlog::debug("cancelled coalesced waiter id={}", request_id);
    if (c.found && c.others_waiting == 0) {
      // The last waiter left a flight whose leader was cancelled earlier:
      // now the server may stop working on it.
      for (auto& [pid, p] : pending_) {
        if (p.ticket == ticket && !p.held_cancel.empty()) {
          spdlog::debug("last waiter gone: forwarding the cancellation of {}",
                        p.raw_id);
          out_->ToServer(p.held_cancel);
          p.held_cancel.clear();
          CancelForwarded(p);
          break;
        }
      }
    }
    return;
  }
  // MCP cancellation: requestId "MUST correspond to the ID of a request
  // previously issued in the same direction": for a request sent under a
  // proxy id, that is the proxy id (the latest such request of this id).
  std::string wire = nid;
  std::string rewritten;
  std::string_view forward = line;
  if (auto r = remapped_.find(nid); r != remapped_.end()) {
    wire = r->second;
    rewritten = WithId(line, request_id, wire);
    forward = rewritten;
  } else if (auto q = pending_.find(nid);
             q != pending_.end() && q->second.remapped) {
    // The id names the proxy's id of another client request (found by
    // fuzz/mcp_session): the client's own request with this id is not in
    // flight (a proxy id is never one in flight), so the cancellation is
    // late; forwarding it would cancel the other request upstream.
    spdlog::debug("cancellation of {} (not in flight) dropped", request_id);
    return;
  }
  auto p = pending_.find(wire);
  if (p != pending_.end() && p->second.ticket != 0 && cache_ != nullptr) {
    CancelOutcome c = cache_->Cancel(p->second.waiter);
    p->second.cancelled = true;
    if (c.found && c.others_waiting > 0) {
      // Choice: the upstream call keeps running for the other waiters; the
      // cancellation is held back (sent when the last of them leaves too)
      // and the leader's answer is dropped.
      p->second.held_cancel = std::string(forward);
      spdlog::debug("cancelled leader id={}; {} waiter(s) keep the call",
                    request_id, c.others_waiting);
      return;
    }
    out_->ToServer(forward);
    CancelForwarded(p->second);
    return;
  }
  out_->ToServer(forward);
}

void Session::CancelForwarded(Pending& p) {
  if (p.ticket == 0 || cache_ == nullptr || p.retire_at != 0) return;
  p.retire_at = clock_->NowSeconds() + options_.cancelled_grace_seconds;
  if (next_retire_ == 0 || p.retire_at < next_retire_) {
    next_retire_ = p.retire_at;
  }
  cache_->Abandon(p.ticket);
}

void Session::RetireCancelled() {
  if (next_retire_ == 0) return;
  const double now = clock_->NowSeconds();
  if (now < next_retire_) return;
  next_retire_ = 0;
  std::vector<std::string> due;
  for (const auto& [nid, p] : pending_) {
    if (p.retire_at == 0) continue;
    if (p.retire_at <= now) {
      due.push_back(nid);
    } else if (next_retire_ == 0 || p.retire_at < next_retire_) {
      next_retire_ = p.retire_at;
    }
  }
  for (const std::string& nid : due) {
    auto it = pending_.find(nid);
    if (it == pending_.end()) continue;
    Pending& p = it->second;
    // Choice: the record stays (retired), not the flight: a conforming
    // server never answers, but one that answers late must not have its
    // answer taken for a new request the client sent under the same id.
    spdlog::info(
        "cancelled request id={} got no answer within {}s: no longer waited "
        "for; server {} invalidated if it may have written",
        p.raw_id, options_.cancelled_grace_seconds, options_.server);
    p.retire_at = 0;
    p.retired = true;
    if (p.task_write) {
      KeepServerUncached(p, "it was cancelled and never answered");
      p.ticket = 0;
      continue;
    }
    const TicketId ticket = std::exchange(p.ticket, 0);
    leader_ids_.erase(p.waiter);
    UpstreamResult r;
    r.is_error = true;
    r.latency_seconds = now - p.started;
    const Completion c = cache_->Complete(ticket, r);
    // Nobody can still wait on it (the cancellation went upstream only once
    // the last waiter left); any that does gets its own request sent.
    Resend(c.waiters, p.waiter);
  }
}

void Session::OnServerLine(std::string_view line) {
  OnServerLineOnStream(line, "");
}

void Session::OnServerLineOnStream(std::string_view line,
                                   std::string_view stream_id) {
  ++counters_.server_lines;
  RetireCancelled();
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  Result<RawMessage> scanned = ScanMessage(line);
  std::string repaired;
  bool altered = false;
  if (!scanned.ok() && !IsValidUtf8(line)) {
    repaired = RepairUtf8(line);
    Result<RawMessage> again = ScanMessage(repaired);
    if (again.ok()) {
      // Choice: invalid UTF-8 from the server is replaced by U+FFFD and
      // forwarded (a TextDecoder-based client would see exactly that; a
      // strict one would fail on the raw bytes); such a result is not cached.
      ++counters_.server_parse_errors;
      spdlog::warn(
          "line from server has invalid UTF-8 ({}): forwarded with U+FFFD "
          "replacements, not cached",
          scanned.status().message());
      scanned = std::move(again);
      line = repaired;
      altered = true;
    }
  }
  if (!scanned.ok()) {
    HandleMalformedServerLine(line, scanned.status().message());
    return;
  }
  const RawMessage& m = *scanned;
  switch (m.kind()) {
    case MessageKind::kResponse: {
      const std::string nid = NormalizeId(m.id);
      if (auto in = internal_.find(nid); in != internal_.end()) {
        const uint64_t generation = in->second;
        internal_.erase(in);
        OnRefreshReply(generation, m);
        return;
      }
      std::optional<Pending> taken = TakePending(nid);
      if (!taken) {
        out_->ToClient(line);
        return;
      }
      Pending& p = *taken;
      if (p.retired) return;  // cancelled, no longer waited for: dropped
      // The answer to a request sent under a proxy id goes back under the
      // client's own id; every other byte is the server's.
      std::string readdressed;
      std::string_view to_client = line;
      if (p.remapped) {
        readdressed = WithId(line, m.id, p.raw_id);
        to_client = readdressed;
      }
      if (p.what == Tracked::kInitialize && !m.result.empty()) {
        era_ = Era::kLegacy;
      }
      if (p.what == Tracked::kInitialize && p.reinitialize &&
          cache_ != nullptr) {
        cache_->Invalidate(options_.server, "");
      }
      if (p.what == Tracked::kToolsList && cache_ != nullptr &&
          !m.result.empty()) {
        if (refreshing_) {
          // The session's own listing of the new tools is authoritative.
          spdlog::debug("tools/list answer during a refresh: not learned");
        } else {
          LearnToolsFromListResult(cache_, options_.server, m.result,
                                   p.first_page);
          if (p.first_page) tools_learned_ = true;
        }
      }
      if (p.what == Tracked::kTasks) OnTaskQueryAnswered(p, m.result, m.error);
      if (p.what == Tracked::kToolsCall && p.ticket != 0) {
        HandleCallResponse(to_client, p, m.result, m.error, altered);
        return;
      }
      if (p.declared && p.ticket != 0) {
        HandleDeclaredResponse(to_client, p, m.result, m.error, altered);
        return;
      }
      out_->ToClient(to_client);
      return;
    }
    case MessageKind::kNotification:
      HandleServerNotification(m);
      out_->ToClient(line);
      return;
    case MessageKind::kRequest:
      if (m.method_name == "roots/list") {
        roots_requests_.insert(NormalizeId(m.id));
        roots_asked_ = true;
      } else if (m.method_name != "ping") {
        ClientInputRequested(m.method_name, stream_id);
      }
      out_->ToClient(line);
      return;
    case MessageKind::kOther:
      out_->ToClient(line);
      return;
  }
}

void Session::ClientInputRequested(std::string_view method,
                                   std::string_view stream_id) {
  if (cache_ == nullptr) return;
  std::vector<std::string> concerned;
  if (!stream_id.empty()) {
    if (std::string nid = NormalizeId(stream_id); pending_.contains(nid)) {
      concerned.push_back(std::move(nid));
    }
  } else {
    // Choice: stdio (and an HTTP server's GET stream) says nothing of which
    // call a server request serves, so every call in flight is concerned:
    // an answer that may hold the client's input is never kept.
    for (const auto& [nid, p] : pending_) concerned.push_back(nid);
  }
  std::vector<std::pair<std::vector<WaiterId>, WaiterId>> resend;
  for (const std::string& nid : concerned) {
    Pending& p = pending_.at(nid);
    if (p.ticket == 0 || p.bypass || p.unshared) continue;
    p.unshared = true;
    spdlog::info(
        "bypass tool={} id={} reason={} detail=the server sent {} while the "
        "call ran: its answer depends on the client's and is neither stored "
        "nor shared",
        p.declared ? p.method : p.tool, p.raw_id, kServerRequestedInput,
        Truncated(method));
    std::vector<WaiterId> others =
        cache_->Unshare(p.ticket, kServerRequestedInput);
    if (!p.held_cancel.empty() && !others.empty()) {
      // The client cancelled this call while others waited on it; they
      // now ask the server themselves, so nobody waits any more.
      out_->ToServer(p.held_cancel);
      p.held_cancel.clear();
    }
    resend.emplace_back(std::move(others), p.waiter);
  }
  // After the loop: Resend adds to pending_.
  for (const auto& [others, leader] : resend) Resend(others, leader);
}

void Session::HandleServerNotification(const RawMessage& m) {
  if (cache_ == nullptr) return;
  const bool object_params = !m.params.empty() && m.params.front() == '{';
  if (m.method_name == "notifications/tools/list_changed") {
    spdlog::info(
        "tool list changed: invalidating server={} and fetching the new list",
        options_.server);
    StartToolsRefresh();
  } else if (m.method_name == "notifications/resources/updated") {
    std::string uri;
    if (object_params) uri = DecodeString(FindMember(m.params, "uri"));
    spdlog::info("resource updated uri={}: invalidating", uri);
    cache_->Invalidate(options_.server, uri);
  } else if (m.method_name == "notifications/prompts/list_changed") {
    // The cached prompts/list (2026-07-28) is outdated.
    spdlog::info("prompt list changed: invalidating server={}",
                 options_.server);
    cache_->Invalidate(options_.server, "");
  } else if (m.method_name == "notifications/resources/list_changed") {
    // MCP: "the list of resources it can read from has changed": what a
    // tool lists or reads may differ now.
    spdlog::info("resource list changed: invalidating server={}",
                 options_.server);
    cache_->Invalidate(options_.server, "");
  } else if (m.method_name == "notifications/tasks/status" && object_params &&
             !task_tickets_.empty()) {
    const std::string id = DecodeString(FindMember(m.params, "taskId"));
    const std::string status = DecodeString(FindMember(m.params, "status"));
    if (task_tickets_.contains(id) && IsTerminalTaskStatus(status)) {
      EndTask(id, "notifications/tasks/status " + status);
    }
  }
}

void Session::HandleMalformedServerLine(std::string_view line,
                                        const std::string& problem) {
  ++counters_.server_parse_errors;
  IdSniffer sniffed;
  sniffed.Feed(line);
  if (sniffed.is_response()) {
    const std::string nid = NormalizeId(sniffed.id());
    if (internal_.erase(nid) > 0) {
      spdlog::error(
          "malformed answer to the proxy's tools/list ({}): calls to server "
          "{} stay uncached until the next tool list change",
          problem, options_.server);
      return;
    }
    if (std::optional<Pending> p = TakePending(nid)) {
      spdlog::error(
          "malformed response from server for id {} ({}): answered with "
          "an error: {}",
          p->raw_id, problem, Truncated(line));
      FailPending(*p, kInternalError,
                  "toolcache: the MCP server's response to this request was "
                  "not valid JSON (" +
                      problem + "); it could not be forwarded");
      return;
    }
  }
  // Choice: a malformed server line that answers no pending request cannot
  // be answered or forwarded usefully: it is logged, counted and dropped.
  spdlog::error("malformed line from server dropped ({}): {}", problem,
                Truncated(line));
}

void Session::OnServerLineTooLong(const IdSniffer& sniffed, uint64_t bytes,
                                  uint64_t limit) {
  ++counters_.server_lines;
  ++counters_.server_lines_too_long;
  const std::string nid =
      sniffed.is_response() ? NormalizeId(sniffed.id()) : std::string();
  if (sniffed.is_response() && internal_.erase(nid) > 0) {
    // It already went to the client (streamed before its id was seen).
    spdlog::error(
        "the server's answer to the proxy's tools/list ({} bytes) exceeds "
        "--max-line-bytes: calls to server {} stay uncached until the next "
        "tool list change",
        bytes, options_.server);
    return;
  }
  std::optional<Pending> taken =
      sniffed.is_response() ? TakePending(nid) : std::nullopt;
  if (!taken) {
    spdlog::warn(
        "server line of {} bytes exceeds --max-line-bytes ({}): streamed "
        "through unparsed",
        bytes, limit);
    return;
  }
  Pending& p = *taken;
  spdlog::warn(
      "server answer to id {} ({} bytes) exceeds --max-line-bytes ({}): "
      "streamed through unparsed, not cached",
      p.raw_id, bytes, limit);
  if (p.remapped && !p.cancelled) {
    // Choice: the streamed bytes carried the proxy's id (its own id was
    // taken upstream) and could not be re-addressed: the client gets an
    // error under its own id instead of waiting forever.
    SendError(true, p.raw_id, kInternalError,
              "toolcache: the server's answer (" + std::to_string(bytes) +
                  " bytes) exceeded --max-line-bytes and was streamed under "
                  "the proxy's id " +
                  nid + " (this request's id was already in flight)");
  }
  if (p.what == Tracked::kTasks) OnTaskQueryAnswered(p, "", "");
  if (p.ticket == 0 || cache_ == nullptr) return;
  if (p.task_write) {
    KeepServerUncached(p, "its task handle was not readable");
    return;
  }
  leader_ids_.erase(p.waiter);
  UpstreamResult r;
  r.is_error = sniffed.has_error();
  r.complete = false;
  r.latency_seconds = clock_->NowSeconds() - p.started;
  Completion c = cache_->Complete(p.ticket, r);
  Resend(c.waiters, p.waiter);
}

std::optional<Session::Pending> Session::TakePending(const std::string& nid) {
  auto it = pending_.find(nid);
  if (it == pending_.end()) return std::nullopt;
  Pending p = std::move(it->second);
  pending_.erase(it);
  if (p.remapped) {
    auto r = remapped_.find(p.client_key);
    if (r != remapped_.end() && r->second == nid) remapped_.erase(r);
  }
  return p;
}

std::optional<Session::Follower> Session::TakeFollower(WaiterId waiter) {
  auto it = followers_.find(waiter);
  if (it == followers_.end()) return std::nullopt;
  Follower f = std::move(it->second);
  followers_.erase(it);
  follower_ids_.erase(NormalizeId(f.raw_id));
  return f;
}

void Session::Resend(const std::vector<WaiterId>& waiters, WaiterId leader) {
  for (WaiterId w : waiters) {
    if (w == leader) continue;
    std::optional<Follower> f = TakeFollower(w);
    if (!f) continue;
    // Choice: the streamed answer was not kept, so a coalesced waiter's own
    // request goes upstream (uncached) and gets its own answer.
    spdlog::info("re-sending coalesced request id={} upstream", f->raw_id);
    Result<RawMessage> m = ScanMessage(f->line);
    if (!m.ok()) continue;  // cannot happen: the line was scanned before
    Pending p;
    p.raw_id = f->raw_id;
    p.what = Tracked::kToolsCall;
    p.started = clock_->NowSeconds();
    SendUpstream(std::move(p), f->line, m->id);
  }
}

void Session::KeepServerUncached(const Pending& p, std::string_view why) {
  // Choice: the task of a task-augmented write cannot be followed, so its
  // work may still be going on: the server stays uncached (the flight
  // stays open) until the session ends.
  spdlog::warn(
      "task-augmented call id={}: {}; calls to server {} stay uncached for "
      "this session",
      p.raw_id, why, options_.server);
  leader_ids_.erase(p.waiter);
  task_tickets_["\x01untracked:" + NormalizeId(p.raw_id)] = p.ticket;
}

void Session::FailPending(Pending& p, int code, std::string_view message) {
  if (p.ticket != 0 && cache_ != nullptr) {
    if (p.task_write) {
      KeepServerUncached(p, "its answer was unusable");
    } else {
      leader_ids_.erase(p.waiter);
      UpstreamResult r;
      r.is_error = true;
      r.latency_seconds = clock_->NowSeconds() - p.started;
      Completion c = cache_->Complete(p.ticket, r);
      for (WaiterId w : c.waiters) {
        if (w == p.waiter) continue;
        if (std::optional<Follower> f = TakeFollower(w)) {
          SendError(true, f->raw_id, code, message);
        }
      }
    }
  }
  if (!p.cancelled) SendError(true, p.raw_id, code, message);
}

void Session::HandleCallResponse(std::string_view line, Pending& p,
                                 std::string_view result,
                                 std::string_view error, bool altered) {
  UpstreamResult r;
  r.latency_seconds = clock_->NowSeconds() - p.started;
  std::string_view task;
  bool interim = false;
  if (!error.empty() || result.empty() || result.front() != '{') {
    r.is_error = true;
  } else {
    r.result_json = result;
    bool has_content = false;
    ForEachMember(result, [&](const std::string& key, std::string_view v) {
      if (key == "isError") {
        r.is_error = v == "true";
      } else if (key == "content") {
        has_content = true;
      } else if (key == "task") {
        r.complete = false;
        interim = true;
        task = v;
      } else if (key == "resultType") {
        // MCP 2026-07-28: only a "complete" result is final; an
        // input_required one asks the client for more and is never stored.
        if (DecodeString(v) != "complete") {
          r.complete = false;
          interim = true;
        }
      }
    });
    // Choice: a result without `content` (e.g. a task handle) is incomplete.
    if (!has_content) r.complete = false;
  }
  // Repaired bytes are not what the server sent: never stored; nor an
  // answer made with the client's input.
  if (altered || p.unshared) r.complete = false;
  if (p.task_write && !task.empty() && task.front() == '{') {
    const std::string task_id = DecodeString(FindMember(task, "taskId"));
    const std::string status = DecodeString(FindMember(task, "status"));
    if (!task_id.empty() && !IsTerminalTaskStatus(status)) {
      // The write goes on in the background: complete the flight (and
      // invalidate again) only when the task ends.
      if (auto old = task_tickets_.find(task_id); old != task_tickets_.end()) {
        EndTask(task_id, "its id was reused");
      }
      leader_ids_.erase(p.waiter);
      task_tickets_[task_id] = p.ticket;
      spdlog::info(
          "task-augmented write id={} runs as task {}: calls to server {} are "
          "not cached until it ends",
          p.raw_id, task_id, options_.server);
      if (!p.cancelled) out_->ToClient(line);
      return;
    }
  }
  leader_ids_.erase(p.waiter);
  const Completion c = cache_->Complete(p.ticket, r);
  AnswerWaiters(c, p, line, result, error, interim);
}

void Session::OnFlightCompletedElsewhere(WaiterId waiter,
                                         std::string_view result_json) {
  if (result_json.empty()) {
    Resend({waiter}, 0);
    return;
  }
  std::optional<Follower> f = TakeFollower(waiter);
  if (!f) return;
  // As for a follower of this session's own flight: the upstream answer
  // verbatim under the follower's id.
  std::string reply = R"({"jsonrpc":"2.0","id":)" + f->raw_id;
  reply += R"(,"result":)";
  reply.append(result_json);
  reply += '}';
  out_->ToClient(reply);
}

void Session::MarkClientReady() {
  if (client_ready_) return;
  client_ready_ = true;
  if (refresh_deferred_) {
    refresh_deferred_ = false;
    SendRefreshPage("");
  }
}

void Session::StartToolsRefresh() {
  ++refresh_generation_;
  refresh_tools_.clear();
  refresh_pages_ = 0;
  refreshing_ = true;
  cache_->ToolsRefreshing(options_.server);
  // Choice: a server that announces a change before the client finished
  // initializing is asked only once the session is up (a server may refuse
  // requests before notifications/initialized).
  if (!client_ready_) {
    refresh_deferred_ = true;
    return;
  }
  SendRefreshPage("");
}

void Session::SendRefreshPage(std::string_view cursor_literal) {
  ++refresh_pages_;
  // Choice: internal ids are strings "toolcache-refresh-N", skipping any
  // in flight; a client request that later picks the same id is remapped
  // (SendUpstream), so the two answers can never be confused.
  const std::string id = NewProxyId("toolcache-refresh-");
  internal_[id] = refresh_generation_;
  std::string line =
      R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"tools/list")";
  // A 2026-07-28 server rejects a request without the per-request envelope:
  // the refresh carries the client's last one.
  const bool modern = era_ == Era::kModern && !modern_envelope_.empty();
  if (!cursor_literal.empty() || modern) {
    line += R"(,"params":{)";
    if (!cursor_literal.empty()) {
      line += R"("cursor":)";
      line.append(cursor_literal);
      if (modern) line += ',';
    }
    if (modern) line += R"("_meta":{)" + modern_envelope_ + "}";
    line += '}';
  }
  line += '}';
  out_->ToServer(line);
}

void Session::OnRefreshReply(uint64_t generation, const RawMessage& m) {
  if (generation != refresh_generation_ || !refreshing_) {
    spdlog::debug("stale tools/list refresh page ignored");
    return;
  }
  ToolsPage page;
  if (m.error.empty() && !m.result.empty()) {
    page = ParseToolsPage(options_.server, m.result);
  }
  if (!page.ok) {
    // Choice: without the new list nothing is known about the tools: calls
    // keep bypassing until the next list change starts a new refresh.
    spdlog::warn(
        "fetching the changed tool list failed ({}): calls to server {} stay "
        "uncached (tools_refreshing) until the next tool list change",
        m.error.empty() ? std::string("no tools array") : Truncated(m.error),
        options_.server);
    return;
  }
  for (ToolInfo& t : page.tools) refresh_tools_.push_back(std::move(t));
  if (!page.next_cursor.empty()) {
    // Choice: at most 1000 pages, so a server that repeats its cursor
    // cannot keep the proxy listing forever.
    constexpr uint32_t kMaxRefreshPages = 1000;
    if (refresh_pages_ >= kMaxRefreshPages) {
      spdlog::warn(
          "the changed tool list of server {} has more than {} pages: calls "
          "stay uncached (tools_refreshing)",
          options_.server, kMaxRefreshPages);
      return;
    }
    SendRefreshPage(page.next_cursor);
    return;
  }
  spdlog::info("tool list of server {} refreshed: {} tool(s)", options_.server,
               refresh_tools_.size());
  cache_->LearnTools(options_.server, refresh_tools_, /*replace=*/true);
  refresh_tools_.clear();
  refreshing_ = false;
  tools_learned_ = true;
}

void Session::OnTaskQueryAnswered(const Pending& p, std::string_view result,
                                  std::string_view error) {
  if (task_tickets_.empty()) return;
  if (p.method == "tasks/list") {
    if (result.empty()) return;
    nlohmann::json j = nlohmann::json::parse(result, nullptr, false);
    if (!j.is_object() || !j.contains("tasks") || !j["tasks"].is_array()) {
      return;
    }
    for (const nlohmann::json& t : j["tasks"]) {
      if (!t.is_object() || !t.contains("taskId") || !t["taskId"].is_string() ||
          !t.contains("status") || !t["status"].is_string()) {
        continue;
      }
      const std::string id = t["taskId"].get<std::string>();
      const std::string status = t["status"].get<std::string>();
      if (task_tickets_.contains(id) && IsTerminalTaskStatus(status)) {
        EndTask(id, "tasks/list status " + status);
      }
    }
    return;
  }
  if (p.task_id.empty() || !task_tickets_.contains(p.task_id)) return;
  if (p.method == "tasks/result") {
    // tasks/result answers only once the task is terminal (MCP 2025-11-25).
    EndTask(p.task_id, "tasks/result answered");
  } else if (!error.empty()) {
    // Choice: an error about the task (not found, expired, already
    // terminal) means the server no longer runs it.
    EndTask(p.task_id, p.method + " answered with an error");
  } else {
    const std::string status = DecodeString(FindMember(result, "status"));
    if (IsTerminalTaskStatus(status)) {
      EndTask(p.task_id, p.method + " status " + status);
    }
  }
}

void Session::EndTask(const std::string& task_id, std::string_view why) {
  auto t = task_tickets_.find(task_id);
  if (t == task_tickets_.end()) return;
  const TicketId ticket = t->second;
  task_tickets_.erase(t);
  UpstreamResult r;
  r.complete = false;
  (void)cache_->Complete(ticket, r);
  spdlog::info("task {} ended ({}): invalidated server {}", task_id, why,
               options_.server);
}

void Session::FailInFlight(std::string_view cause) {
  std::string msg = "toolcache: the MCP server went away before answering (" +
                    std::string(cause) + ")";
  std::vector<std::string> ids;
  for (auto& [nid, p] : pending_) {
    if (!p.cancelled) ids.push_back(p.raw_id);
    if (p.ticket != 0 && cache_ != nullptr) {
      UpstreamResult gone;
      gone.is_error = true;
      (void)cache_->Complete(p.ticket, gone);
    }
  }
  for (auto& [w, f] : followers_) ids.push_back(f.raw_id);
  for (const std::string& id : ids) {
    ++counters_.failed_on_exit;
    SendError(true, id, kConnectionClosed, msg);
  }
  if (cache_ != nullptr) {
    for (auto& [task_id, ticket] : task_tickets_) {
      UpstreamResult gone;
      gone.is_error = true;
      (void)cache_->Complete(ticket, gone);
    }
  }
  task_tickets_.clear();
  internal_.clear();
  pending_.clear();
  remapped_.clear();
  roots_requests_.clear();
  followers_.clear();
  follower_ids_.clear();
  leader_ids_.clear();
}

}  // namespace toolcache::mcp
