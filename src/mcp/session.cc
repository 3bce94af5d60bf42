// Invariants:
// - Every line the session did not interpret is forwarded byte for byte, in
//   the order received; interpreted lines are forwarded byte for byte too
//   unless the session answers them itself (hit, follower, parse error).
// - A client request id is in at most one of pending_ (forwarded upstream)
//   and follower_ids_ (waiting on a flight); each is answered exactly once:
//   by the server's response, by a Completion, or by FailInFlight.
// - leader_ids_ maps the waiter of every tools/call forwarded through the
//   cache to its pending_ key, so a Completion's waiters resolve to ids.
#include "src/mcp/session.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "src/mcp/json_scan.h"

namespace toolcache::mcp {
namespace {

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

std::string Truncated(std::string_view line) {
  // Choice: log at most 200 bytes of an offending line.
  constexpr size_t kMaxLogged = 200;
  if (line.size() <= kMaxLogged) return std::string(line);
  return std::string(line.substr(0, kMaxLogged)) + "...";
}

}  // namespace

std::string BuildHitResponse(std::string_view raw_id, std::string_view result,
                             double age_seconds) {
  char age[64];
  std::snprintf(age, sizeof age, "%.3f", age_seconds < 0 ? 0.0 : age_seconds);
  std::string provenance =
      std::string(R"("toolcache/cache":{"hit":true,"ageSeconds":)") + age + "}";
  std::string out;
  out.reserve(result.size() + raw_id.size() + provenance.size() + 64);
  out += R"({"jsonrpc":"2.0","id":)";
  out += raw_id;
  out += R"(,"result":)";
  std::string_view meta = FindMember(result, "_meta");
  size_t open = result.find('{');
  if (!meta.empty() && meta.front() == '{') {
    // Splice into the existing _meta object.
    size_t at = static_cast<size_t>(meta.data() - result.data()) + 1;
    bool empty = meta.find_first_not_of(" \t\r\n", 1) == meta.size() - 1;
    out.append(result.substr(0, at));
    out += provenance;
    if (!empty) out += ',';
    out.append(result.substr(at));
  } else if (meta.empty() && open != std::string_view::npos) {
    bool empty =
        result.find_first_not_of(" \t\r\n", open + 1) == result.rfind('}');
    out.append(result.substr(0, open + 1));
    out += R"("_meta":{)" + provenance + "}";
    if (!empty) out += ',';
    out.append(result.substr(open + 1));
  } else {
    // Choice: a non-object _meta is left alone; provenance is then omitted.
    out.append(result);
  }
  out += '}';
  return out;
}

Session::Session(SessionOptions options, ToolCache* cache, const Clock* clock,
                 SessionOutput* out)
    : options_(std::move(options)), cache_(cache), clock_(clock), out_(out) {}

void Session::SendError(bool to_client, std::string_view raw_id, int code,
                        std::string_view message) {
  std::string line = R"({"jsonrpc":"2.0","id":)";
  line += raw_id.empty() ? std::string_view("null") : raw_id;
  line += R"(,"error":{"code":)" + std::to_string(code) + R"(,"message":)" +
          JsonString(message) + "}}";
  if (to_client) {
    out_->ToClient(line);
  } else {
    out_->ToServer(line);
  }
}

void Session::OnClientLineTooLong(uint64_t bytes, uint64_t limit) {
  ++counters_.client_parse_errors;
  std::string msg = "Parse error: toolcache: message of " +
                    std::to_string(bytes) + " bytes exceeds the limit of " +
                    std::to_string(limit) + " bytes (--max-line-bytes)";
  spdlog::warn("client line rejected: {}", msg);
  SendError(true, "", kParseError, msg);
}

void Session::OnClientLine(std::string_view line) {
  ++counters_.client_lines;
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  Result<RawMessage> scanned = ScanMessage(line);
  if (!scanned.ok()) {
    ++counters_.client_parse_errors;
    spdlog::warn("malformed line from client ({}): {}",
                 scanned.status().message(), Truncated(line));
    SendError(true, "", kParseError,
              "Parse error: toolcache: " + scanned.status().message());
    return;
  }
  const RawMessage& m = *scanned;
  switch (m.kind()) {
    case MessageKind::kRequest: {
      std::string nid = NormalizeId(m.id);
      if (m.method_name == "tools/call" && cache_ != nullptr &&
          !m.params.empty() && m.params.front() == '{') {
        HandleToolsCall(line, m.id, nid, m.params);
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
          spdlog::info("client initialize protocolVersion={}",
                       protocol_version_);
        }
      } else if (m.method_name == "tools/call") {
        p.what = Tracked::kToolsCall;
      }
      pending_[nid] = std::move(p);
      out_->ToServer(line);
      return;
    }
    case MessageKind::kNotification:
      if (m.method_name == "notifications/cancelled" && !m.params.empty() &&
          m.params.front() == '{') {
        HandleCancelled(line, m.params);
        return;
      }
      out_->ToServer(line);
      return;
    case MessageKind::kResponse:
    case MessageKind::kOther:
      out_->ToServer(line);
      return;
  }
}

void Session::HandleToolsCall(std::string_view line, std::string_view raw_id,
                              const std::string& nid, std::string_view params) {
  std::string name;
  std::string_view arguments;
  bool task = false;
  ForEachMember(params, [&](const std::string& key, std::string_view value) {
    if (key == "name") {
      name = DecodeString(value);
    } else if (key == "arguments") {
      arguments = value;
    } else if (key == "task") {
      task = value != "null";
    }
  });
  Pending p;
  p.raw_id = std::string(raw_id);
  p.what = Tracked::kToolsCall;
  p.started = clock_->NowSeconds();
  if (name.empty()) {
    // Not a well-formed call: the server answers it.
    pending_[nid] = std::move(p);
    out_->ToServer(line);
    return;
  }
  WaiterId waiter = next_waiter_++;
  ToolCall call{.server = options_.server,
                .scope = options_.scope,
                .tool = name,
                .arguments_json = arguments,
                .task_augmented = task};
  CallPlan plan = cache_->Begin(call, waiter);
  switch (plan.action) {
    case CallAction::kServe: {
      spdlog::debug("hit tool={} age={:.3f}s", name, plan.age_seconds);
      out_->ToClient(
          BuildHitResponse(raw_id, *plan.result_json, plan.age_seconds));
      return;
    }
    case CallAction::kWait:
      spdlog::debug("coalesced tool={} id={}", name, raw_id);
      followers_[waiter] = std::string(raw_id);
      follower_ids_[nid] = waiter;
      return;
    case CallAction::kForward:
      if (plan.bypass) {
        spdlog::info(
            "bypass tool={} reason={}{}{}", name, plan.bypass_reason,
            plan.verdict.detail.empty() ? "" : " detail=", plan.verdict.detail);
      } else {
        spdlog::debug("miss tool={}", name);
      }
      p.ticket = plan.ticket;
      p.waiter = waiter;
      p.bypass = plan.bypass;
      leader_ids_[waiter] = nid;
      pending_[nid] = std::move(p);
      out_->ToServer(line);
      return;
  }
}

void Session::HandleCancelled(std::string_view line, std::string_view params) {
  std::string_view request_id = FindMember(params, "requestId");
  std::string nid = NormalizeId(request_id);
  if (auto f = follower_ids_.find(nid); f != follower_ids_.end()) {
    // The server never saw this id: drop the waiter, do not forward.
    if (cache_ != nullptr) (void)cache_->Cancel(f->second);
    followers_.erase(f->second);
    follower_ids_.erase(f);
    spdlog::debug("cancelled coalesced waiter id={}", request_id);
    return;
  }
  auto p = pending_.find(nid);
  if (p != pending_.end() && p->second.ticket != 0 && cache_ != nullptr) {
    CancelOutcome c = cache_->Cancel(p->second.waiter);
    if (c.found && c.others_waiting > 0) {
      // Choice: the upstream call keeps running for the other waiters; the
      // cancellation is not forwarded and the leader's answer is dropped.
      p->second.cancelled = true;
      spdlog::debug("cancelled leader id={}; {} waiter(s) keep the call",
                    request_id, c.others_waiting);
      return;
    }
    p->second.cancelled = true;
  }
  out_->ToServer(line);
}

void Session::OnServerLine(std::string_view line) {
  ++counters_.server_lines;
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  Result<RawMessage> scanned = ScanMessage(line);
  if (!scanned.ok()) {
    ++counters_.server_parse_errors;
    // Choice: a malformed server line cannot be answered (it is not a
    // request we can name) and must not reach the client: log and drop.
    spdlog::error("malformed line from server dropped ({}): {}",
                  scanned.status().message(), Truncated(line));
    return;
  }
  const RawMessage& m = *scanned;
  switch (m.kind()) {
    case MessageKind::kResponse: {
      auto it = pending_.find(NormalizeId(m.id));
      if (it == pending_.end()) {
        out_->ToClient(line);
        return;
      }
      Pending p = std::move(it->second);
      pending_.erase(it);
      if (p.what == Tracked::kToolsList && cache_ != nullptr &&
          !m.result.empty()) {
        LearnToolsFromListResult(cache_, options_.server, m.result,
                                 p.first_page);
      }
      if (p.what == Tracked::kToolsCall && p.ticket != 0) {
        HandleCallResponse(line, p, m.result, m.error);
        return;
      }
      out_->ToClient(line);
      return;
    }
    case MessageKind::kNotification:
      if (cache_ != nullptr) {
        if (m.method_name == "notifications/tools/list_changed") {
          spdlog::info("tool list changed: invalidating server={}",
                       options_.server);
          cache_->ToolsChanged(options_.server);
        } else if (m.method_name == "notifications/resources/updated") {
          std::string uri;
          if (!m.params.empty() && m.params.front() == '{') {
            uri = DecodeString(FindMember(m.params, "uri"));
          }
          spdlog::info("resource updated uri={}: invalidating", uri);
          cache_->Invalidate(options_.server, uri);
        }
      }
      out_->ToClient(line);
      return;
    case MessageKind::kRequest:
    case MessageKind::kOther:
      out_->ToClient(line);
      return;
  }
}

void Session::HandleCallResponse(std::string_view line, Pending& p,
                                 std::string_view result,
                                 std::string_view error) {
  UpstreamResult r;
  r.latency_seconds = clock_->NowSeconds() - p.started;
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
      }
    });
    // Choice: a result without `content` (e.g. a task handle) is incomplete.
    if (!has_content) r.complete = false;
  }
  leader_ids_.erase(p.waiter);
  Completion c = cache_->Complete(p.ticket, r);
  bool leader_answered = false;
  for (WaiterId w : c.waiters) {
    if (w == p.waiter) {
      if (!p.cancelled) out_->ToClient(line);
      leader_answered = true;
      continue;
    }
    auto f = followers_.find(w);
    if (f == followers_.end()) continue;
    // Choice: a coalesced waiter gets the upstream answer verbatim under its
    // own id (no provenance: it was not served from the store).
    std::string reply = R"({"jsonrpc":"2.0","id":)" + f->second;
    if (!error.empty()) {
      reply += R"(,"error":)";
      reply.append(error);
    } else {
      reply += R"(,"result":)";
      reply.append(result);
    }
    reply += '}';
    out_->ToClient(reply);
    follower_ids_.erase(NormalizeId(f->second));
    followers_.erase(f);
  }
  if (!leader_answered && !p.cancelled) {
    // The cache did not list the leader (e.g. a bypass ticket it already
    // retired): the client still gets the server's answer.
    out_->ToClient(line);
  }
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
  for (auto& [w, raw] : followers_) ids.push_back(raw);
  for (const std::string& id : ids) {
    ++counters_.failed_on_exit;
    SendError(true, id, kConnectionClosed, msg);
  }
  pending_.clear();
  followers_.clear();
  follower_ids_.clear();
  leader_ids_.clear();
}

}  // namespace toolcache::mcp
