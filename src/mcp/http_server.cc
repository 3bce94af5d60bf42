// McpHttp (http_server.h): MCP Streamable HTTP in front of stdio servers.
//
// Invariants:
// - One worker thread per session drives its mcp::Session, its child's
//   pipes and its exchanges; nothing else touches them. HTTP handlers talk to
//   a worker only through its inbox (a mutex-guarded queue and an eventfd).
// - A responder is used only on its connection's loop: the worker posts
//   every write there (http::Post); a Sink is touched only on that loop.
// - An exchange (a POST waiting for answers) is registered with the worker
//   before its messages reach the session, so an answer given synchronously
//   (a cache hit) finds it. It ends exactly once: when its last request was
//   answered, or when the session ends (abandoned: 404 or a finished
//   stream).
// - A worker that has ended accepts no more commands (Push returns false
//   under the inbox lock), so no request waits on a dead session.
//
// Choice: GET opens the server -> client stream (rather than 405): a stdio
// server's own requests (roots/list) and list_changed notifications sent
// between client requests need it to reach the client.
#include "src/mcp/http_server.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <span>
#include <thread>
#include <unordered_map>

#include "src/mcp/byte_buffer.h"
#include "src/mcp/child.h"
#include "src/mcp/http_upstream.h"
#include "src/mcp/json_scan.h"
#include "src/mcp/line_reader.h"
#include "src/mcp/session.h"
#include "toolcache/scope.h"

namespace toolcache::mcp_http {

namespace {
constexpr std::string_view kModernVersion = "2026-07-28";
constexpr std::string_view kVersionKey =
    "io.modelcontextprotocol/protocolVersion";
constexpr int kInvalidParamsCode = -32602;
constexpr int kMethodNotFoundCode = -32601;
constexpr int kHeaderMismatchCode = -32020;
constexpr int kUnsupportedVersionCode = -32022;
}  // namespace

bool IsKnownProtocolVersion(std::string_view v) {
  return v == "2024-11-05" || v == "2025-03-26" || v == "2025-06-18" ||
         v == "2025-11-25" || v == kModernVersion;
}

std::string SupportedVersionsJson() {
  return R"(["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"])";
}

EraCheck CheckEra(std::string_view message, std::string_view version_header,
                  std::string_view method_header,
                  std::string_view name_header) {
  EraCheck out;
  auto reject = [&](int code, std::string text, std::string data = "") {
    out.modern = false;
    out.status = 400;
    out.code = code;
    out.message = std::move(text);
    out.data = std::move(data);
    return out;
  };
  nlohmann::json j = nlohmann::json::parse(message, nullptr, false);
  if (!j.is_object()) return out;  // the legacy path reports it
  const bool has_method = j.contains("method") && j["method"].is_string();
  const bool request = has_method && j.contains("id");
  const std::string method = has_method ? j["method"].get<std::string>() : "";
  const nlohmann::json* params =
      j.contains("params") && j["params"].is_object() ? &j["params"] : nullptr;
  const nlohmann::json* meta =
      params && params->contains("_meta") && (*params)["_meta"].is_object()
          ? &(*params)["_meta"]
          : nullptr;
  const bool claimed = meta && meta->contains(std::string(kVersionKey));
  std::string claim;
  if (claimed) {
    const nlohmann::json& c = (*meta)[std::string(kVersionKey)];
    if (!c.is_string()) {
      return reject(kInvalidParamsCode, "Invalid params: params._meta[\"" +
                                            std::string(kVersionKey) +
                                            "\"] must be a string");
    }
    claim = c.get<std::string>();
    if (!version_header.empty() && version_header != claim) {
      return reject(kHeaderMismatchCode,
                    "Bad Request: the request headers and body disagree: "
                    "MCP-Protocol-Version is " +
                        std::string(version_header) + " but the body claims " +
                        claim);
    }
    if (!IsKnownProtocolVersion(claim)) {
      nlohmann::json requested = claim;
      // Choice: the revisions a claim may name, as server/discover's
      // supportedVersions (the 2025 ones are reached by initialize).
      return reject(kUnsupportedVersionCode,
                    "Unsupported protocol version: " + claim +
                        " (supported versions: 2026-07-28)",
                    "{\"supported\":[\"2026-07-28\"],\"requested\":" +
                        requested.dump() + "}");
    }
    out.modern = IsModernProtocolVersion(claim);
    if (out.modern && request) {
      auto caps = meta->find("io.modelcontextprotocol/clientCapabilities");
      if (caps == meta->end() || !caps->is_object()) {
        return reject(kInvalidParamsCode,
                      "Invalid params: a 2026-07-28 request must carry "
                      "params._meta[\"io.modelcontextprotocol/"
                      "clientCapabilities\"] (an object)");
      }
    }
  } else if (IsModernProtocolVersion(version_header)) {
    if (request) {
      return reject(kInvalidParamsCode,
                    "Invalid params: a 2026-07-28 request must carry "
                    "params._meta[\"" +
                        std::string(kVersionKey) + "\"]");
    }
    out.modern = has_method;  // a notification: the header decides
  }
  if (!out.modern || !request) return out;
  if (version_header.empty()) {
    return reject(kHeaderMismatchCode,
                  "Bad Request: the MCP-Protocol-Version header is required");
  }
  if (method_header.empty()) {
    return reject(kHeaderMismatchCode,
                  "Bad Request: the Mcp-Method header is required");
  }
  if (method_header != method) {
    return reject(kHeaderMismatchCode,
                  "Bad Request: the request headers and body disagree: "
                  "Mcp-Method is " +
                      std::string(method_header) + " but the body method is " +
                      method);
  }
  // Mcp-Name mirrors params.name (tools/call, prompts/get) or params.uri
  // (resources/read).
  const char* field = method == "tools/call" || method == "prompts/get" ? "name"
                      : method == "resources/read"                      ? "uri"
                                                   : nullptr;
  if (field != nullptr && params && params->contains(field) &&
      (*params)[field].is_string()) {
    const std::string want = (*params)[field].get<std::string>();
    if (name_header.empty()) {
      return reject(
          kHeaderMismatchCode,
          "Bad Request: the Mcp-Name header is required for " + method);
    }
    const std::optional<std::string> got =
        mcp::DecodeMcpHeaderValue(name_header);
    if (!got || *got != want) {
      return reject(kHeaderMismatchCode,
                    "Bad Request: the request headers and body disagree: "
                    "Mcp-Name is " +
                        std::string(name_header) + " but params." + field +
                        " is " + want);
    }
  }
  return out;
}

SplitBody SplitPostBody(std::string_view body, bool batches_allowed) {
  SplitBody out;
  Result<mcp::RawMessage> whole = mcp::ScanMessage(body);
  if (!whole.ok()) {
    out.error_code = mcp::kParseError;
    out.error = "Parse error: " + whole.status().message();
    return out;
  }
  size_t i = 0;
  while (i < body.size() && (body[i] == ' ' || body[i] == '\t' ||
                             body[i] == '\n' || body[i] == '\r')) {
    ++i;
  }
  if (whole->is_object) {
    out.messages.push_back(body);
    return out;
  }
  if (i >= body.size() || body[i] != '[') {
    out.error_code = mcp::kInvalidRequest;
    out.error = "Invalid Request: not a JSON-RPC message (an object)";
    return out;
  }
  out.batch = true;
  if (!batches_allowed) {
    out.error_code = mcp::kInvalidRequest;
    out.error =
        "Invalid Request: JSON-RPC batches are not part of MCP 2025-06-18";
    return out;
  }
  // The body is valid JSON: split the top-level array at depth-1 commas.
  int depth = 0;
  bool in_string = false;
  bool escape = false;
  size_t start = i + 1;
  for (size_t k = i; k < body.size(); ++k) {
    const char c = body[k];
    if (in_string) {
      if (escape) {
        escape = false;
      } else if (c == '\\') {
        escape = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
      if (depth == 0) {
        std::string_view e = body.substr(start, k - start);
        if (e.find_first_not_of(" \t\r\n") != std::string_view::npos) {
          out.messages.push_back(e);
        }
        break;
      }
    } else if (c == ',' && depth == 1) {
      out.messages.push_back(body.substr(start, k - start));
      start = k + 1;
    }
  }
  if (out.messages.empty()) {
    out.error_code = mcp::kInvalidRequest;
    out.error = "Invalid Request: empty batch";
    return out;
  }
  for (std::string_view& m : out.messages) {
    const size_t a = m.find_first_not_of(" \t\r\n");
    const size_t b = m.find_last_not_of(" \t\r\n");
    m = m.substr(a, b - a + 1);
    if (m.front() != '{') {
      out.error_code = mcp::kInvalidRequest;
      out.error = "Invalid Request: a batch element is not an object";
      return out;
    }
  }
  return out;
}

McpAccept ChooseResponse(std::string_view accept) {
  auto has = [&](std::string_view t) {
    return accept.find(t) != std::string_view::npos;
  };
  if (has("text/event-stream")) return McpAccept::kSse;
  if (has("application/json") || has("*/*") || accept.empty()) {
    return McpAccept::kJson;
  }
  return McpAccept::kNone;
}

std::string SseEvent(std::string_view message) {
  std::string e;
  e.reserve(message.size() + 24);
  e += "event: message\ndata: ";
  e += message;
  e += "\n\n";
  return e;
}

namespace {

double Now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string NewSessionId() {
  std::random_device rd;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 8; ++i) {
    uint32_t v = rd();
    for (int k = 0; k < 4; ++k) {
      id += kHex[(v >> (8 * k + 4)) & 15];
      id += kHex[(v >> (8 * k)) & 15];
    }
  }
  return id;
}

std::string ErrorBody(int code, std::string_view message,
                      std::string_view raw_id = "null") {
  nlohmann::json m = std::string(message);
  return "{\"jsonrpc\":\"2.0\",\"id\":" + std::string(raw_id) +
         ",\"error\":{\"code\":" + std::to_string(code) + ",\"message\":" +
         m.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
         "}}";
}

// `line` with each span (a view into `line`, none overlapping) replaced by
// its text. Choice: the pooled path edits a client's or a server's message
// in place, as the stdio Session does: re-serializing it through a parser
// would alter numbers past 64 bits or double precision, and ids spelled
// `1e2` or `-0` (session 18).
std::string ReplaceSpans(
    std::string_view line,
    std::vector<std::pair<std::string_view, std::string>> edits) {
  std::sort(edits.begin(), edits.end(), [](const auto& a, const auto& b) {
    return a.first.data() < b.first.data();
  });
  std::string out;
  out.reserve(line.size() + 64);
  size_t from = 0;
  for (const auto& [span, text] : edits) {
    const size_t at = static_cast<size_t>(span.data() - line.data());
    out.append(line.substr(from, at - from));
    out.append(text);
    from = at + span.size();
  }
  out.append(line.substr(from));
  return out;
}

// The JSON string literal of `s` (ASCII ids and tokens the proxy makes).
std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

void SendError(const http::ResponderPtr& res, int status, int code,
               std::string_view message, http::Headers extra = {}) {
  extra.push_back({"content-type", "application/json"});
  extra.push_back({"cache-control", "no-store"});
  res->Send(status, std::move(extra), ErrorBody(code, message));
}

// The reply channel of one HTTP exchange, on its connection's loop.
struct Sink {
  http::ResponderPtr res;
  http::Loop* loop = nullptr;
  http::Headers headers;  // sent with the head (session id, content type)
  bool started = false;   // loop only
};

// A POST waiting for answers, or the GET stream (worker only).
struct Exchange {
  std::shared_ptr<Sink> sink;
  bool sse = false;
  bool batch = false;
  bool get_stream = false;
  bool modern = false;  // a 2026-07-28 request: method-not-found is HTTP 404
  std::string raw_id = "null";  // modern: the request's id, for errors
  bool gone = false;
  std::vector<std::string> waiting;    // normal ids of unanswered requests
  std::vector<std::string> collected;  // JSON mode: answers so far
};

struct Command {
  enum class Kind { kMessages, kStream, kGone, kClose, kFlightDone };
  Kind kind = Kind::kMessages;
  std::vector<std::string> lines;
  std::shared_ptr<Exchange> ex;
  WaiterId waiter = 0;  // kFlightDone: the local waiter; lines[0]: result
};

void PostWrite(const std::shared_ptr<Sink>& s, std::string text) {
  http::Post(s->loop, [s, text = std::move(text)] {
    if (!s->started) {
      s->started = true;
      s->res->Start(200, s->headers);
    }
    s->res->Write(text);
  });
}

void PostFinish(const std::shared_ptr<Sink>& s) {
  http::Post(s->loop, [s] {
    if (!s->started) {
      s->started = true;
      s->res->Start(200, s->headers);
    }
    s->res->Finish();
  });
}

void PostSend(const std::shared_ptr<Sink>& s, int status, std::string body) {
  http::Post(s->loop, [s, status, body = std::move(body)] {
    if (s->started) {
      s->res->Finish();
      return;
    }
    s->started = true;
    http::Headers h = s->headers;
    for (http::Header& x : h) {
      if (http::EqualsIgnoreCase(x.name, "content-type")) {
        x.value = "application/json";
      }
    }
    s->res->Send(status, std::move(h), body);
  });
}

}  // namespace

class Worker;

// Single flight across sessions. Every session's mcp::Session numbers its
// waiters from 1, and answers only the waiters of its own flights; sessions
// share one ToolCache, so a call may join a flight another session leads.
// The router gives each waiter a process-wide id, and the leader session's
// Completion hands the other sessions' waiters to their own workers
// (Session::OnFlightCompletedElsewhere).
class FlightRouter {
 public:
  WaiterId Add(const std::weak_ptr<Worker>& owner, WaiterId local) {
    std::lock_guard<std::mutex> lock(mu_);
    const WaiterId global = next_++;
    waiters_[global] = {owner, local};
    return global;
  }
  struct Entry {
    std::weak_ptr<Worker> owner;
    WaiterId local = 0;
  };
  // Forgets `global` and returns its entry (owner expired: none).
  std::optional<Entry> Take(WaiterId global) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = waiters_.find(global);
    if (it == waiters_.end()) return std::nullopt;
    Entry e = it->second;
    waiters_.erase(it);
    return e;
  }
  std::optional<Entry> Find(WaiterId global) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = waiters_.find(global);
    if (it == waiters_.end()) return std::nullopt;
    return it->second;
  }

 private:
  std::mutex mu_;
  WaiterId next_ = 1;                  // GUARDED_BY(mu_)
  std::map<WaiterId, Entry> waiters_;  // GUARDED_BY(mu_)
};

// One session's view of the shared cache: waiter ids through the router;
// everything else passes through.
class SessionCache final : public ToolCache {
 public:
  SessionCache(ToolCache* inner, FlightRouter* router)
      : inner_(inner), router_(router) {}
  void SetOwner(std::weak_ptr<Worker> owner) { owner_ = std::move(owner); }

  void LearnTools(std::string_view server, std::span<const ToolInfo> tools,
                  bool replace) override {
    inner_->LearnTools(server, tools, replace);
  }
  void ToolsChanged(std::string_view server) override {
    inner_->ToolsChanged(server);
  }
  void ToolsRefreshing(std::string_view server) override {
    inner_->ToolsRefreshing(server);
  }
  CallPlan Begin(const ToolCall& call, WaiterId waiter) override {
    const WaiterId global = router_->Add(owner_, waiter);
    local_to_global_[waiter] = global;
    CallPlan plan = inner_->Begin(call, global);
    // No flight to be answered from: a hit, or a bypass.
    if (plan.action == CallAction::kServe || plan.bypass) Forget(waiter);
    return plan;
  }
  Completion Complete(TicketId ticket, const UpstreamResult& r) override;
  std::vector<WaiterId> Unshare(TicketId ticket,
                                std::string_view reason) override;
  CancelOutcome Cancel(WaiterId waiter) override {
    auto it = local_to_global_.find(waiter);
    if (it == local_to_global_.end()) return {};
    CancelOutcome out = inner_->Cancel(it->second);
    Forget(waiter);
    return out;
  }
  void Abandon(TicketId ticket) override { inner_->Abandon(ticket); }
  void Invalidate(std::string_view server, std::string_view resource) override {
    inner_->Invalidate(server, resource);
  }
  uint64_t InvalidateAs(std::string_view scope, std::string_view server,
                        std::string_view resource) override {
    return inner_->InvalidateAs(scope, server, resource);
  }
  Probe Peek(const ToolCall& call) override { return inner_->Peek(call); }
  RecordOutcome Record(const ToolCall& call, const UpstreamResult& r) override {
    return inner_->Record(call, r);
  }
  ToolCacheStats Stats() const override { return inner_->Stats(); }

  // The waiters of a flight that ended (or was unshared): another session's
  // is told through its command queue (kFlightDone with `result_json`, or
  // empty: ask the server itself); this session's are returned as local
  // ids, forgotten.
  std::vector<WaiterId> RouteWaiters(const std::vector<WaiterId>& globals,
                                     std::string_view result_json);

  void Forget(WaiterId local) {
    auto it = local_to_global_.find(local);
    if (it == local_to_global_.end()) return;
    (void)router_->Take(it->second);
    local_to_global_.erase(it);
  }

 private:
  ToolCache* inner_;
  FlightRouter* router_;
  std::weak_ptr<Worker> owner_;
  // This session's waiters (worker thread only).
  std::unordered_map<WaiterId, WaiterId> local_to_global_;
};

namespace {

// A session's options under `tenant`: its scope is the tenant joined with
// the server's principal material (fixN), and a public answer stays with
// the tenant's processes of the same material (revK): the scope without
// the roots, computed once for both.
mcp::SessionOptions SessionOptionsOf(const McpServerSpec& spec,
                                     const std::string& tenant) {
  std::string scope =
      spec.credential.empty()
          ? tenant
          : ScopeOf({.base = tenant, .credential = spec.credential});
  return {.server = spec.name, .scope = scope, .public_group = scope};
}

}  // namespace

// One session: its child, its mcp::Session and the thread driving them.
class Worker final : public mcp::SessionOutput {
 public:
  Worker(std::string id, const McpServerSpec& spec, std::string tenant,
         const McpHttpOptions& o, FlightRouter* router, bool pooled = false)
      : pooled_(pooled),
        id_(std::move(id)),
        server_(spec.name),
        tenant_(std::move(tenant)),
        options_(o),
        cache_(o.cache, router),
        session_(SessionOptionsOf(spec, tenant_),
                 o.cache != nullptr ? &cache_ : nullptr, o.clock, this),
        reader_(o.max_line_bytes) {
    last_used_ = Now();
  }

  ~Worker() override {
    Close();
    if (thread_.joinable()) thread_.join();
    if (wake_fd_ >= 0) close(wake_fd_);
  }

  // Spawns the child and starts the thread. INVALID_ARGUMENT when the
  // command cannot be started.
  Status Start(const std::vector<std::string>& command) {
    wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0)
      return Internal(std::string("eventfd: ") + strerror(errno));
    // The server's threads block its signals; SpawnChild gives the child
    // none blocked and default dispositions.
    Result<mcp::ChildProcess> child = mcp::SpawnChild(command);
    if (!child.ok()) return child.status();
    pid_ = child.value().pid;
    to_child_ = child.value().to_child;
    from_child_ = child.value().from_child;
    spdlog::info("mcp session {} ({}): started pid={}", id_, server_, pid_);
    thread_ = std::thread([this] { Run(); });
    return Status::Ok();
  }

  // Queues a command; false when the worker has ended (never run).
  bool Push(Command c) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (ended_) return false;
      inbox_.push_back(std::move(c));
    }
    Wake();
    return true;
  }
  void Close() {
    Command c;
    c.kind = Command::Kind::kClose;
    (void)Push(std::move(c));
  }

  void SetCacheOwner(const std::shared_ptr<Worker>& self) {
    cache_.SetOwner(self);
  }
  const std::string& id() const { return id_; }
  const std::string& server() const { return server_; }
  const std::string& tenant() const { return tenant_; }
  bool ended() const {
    std::lock_guard<std::mutex> lock(mu_);
    return ended_;
  }
  void Touch() { last_used_ = Now(); }
  double last_used() const { return last_used_; }
  std::string protocol_version() const {
    std::lock_guard<std::mutex> lock(mu_);
    return protocol_version_;
  }
  bool TakeStream() {
    std::lock_guard<std::mutex> lock(mu_);
    if (stream_open_) return false;
    stream_open_ = true;
    return true;
  }

  // SessionOutput (worker thread).
  void ToServer(std::string_view line) override {
    if (to_child_ < 0) return;
    out_.Push(line);
    out_.Push("\n");
  }
  void ToClient(std::string_view raw_line) override {
    std::string rewritten;
    std::string_view line = raw_line;
    if (pooled_) {
      std::optional<std::string> r = FromPooledChild(raw_line);
      if (!r) return;  // consumed (the handshake) or not for any client
      rewritten = std::move(*r);
      line = rewritten;
    }
    Result<mcp::RawMessage> m = mcp::ScanMessage(line);
    // m's fields are views into `line` (into `rewritten` when pooled): the
    // line with the client's id goes to its own string, so they stay valid
    // below (assigning it to `rewritten` freed what m->result and m->id
    // pointed at: a use after free on every pooled response, found by ASan).
    std::string restored;
    if (m.ok() && m->kind() == mcp::MessageKind::kResponse) {
      const std::string nid = mcp::NormalizeId(m->id);
      if (pooled_) {
        restored = RestoreId(nid, line);
        line = restored;
      }
      if (!m->result.empty() && protocol_version_seen_.empty()) {
        std::string_view pv = mcp::FindMember(m->result, "protocolVersion");
        if (!pv.empty() && !mcp::FindMember(m->result, "serverInfo").empty()) {
          protocol_version_seen_ = mcp::DecodeString(pv);
          std::lock_guard<std::mutex> lock(mu_);
          protocol_version_ = protocol_version_seen_;
        }
      }
      for (auto it = exchanges_.begin(); it != exchanges_.end(); ++it) {
        Exchange& ex = **it;
        auto w = std::find(ex.waiting.begin(), ex.waiting.end(), nid);
        if (w == ex.waiting.end()) continue;
        ex.waiting.erase(w);
        if (!ex.gone) {
          if (ex.sse) {
            PostWrite(ex.sink, SseEvent(line));
          } else {
            ex.collected.emplace_back(line);
          }
        }
        if (ex.waiting.empty()) {
          EndExchange(ex);
          exchanges_.erase(it);
        }
        return;
      }
      spdlog::warn("mcp session {}: an answer for no open request (id {})", id_,
                   m->id);
      return;
    }
    // A server notification or request: the first open SSE POST, else the
    // GET stream, else the backlog.
    for (const std::shared_ptr<Exchange>& ex : exchanges_) {
      if (ex->sse && !ex->gone && !ex->waiting.empty()) {
        PostWrite(ex->sink, SseEvent(line));
        return;
      }
    }
    if (stream_ && !stream_->gone) {
      PostWrite(stream_->sink, SseEvent(line));
      return;
    }
    backlog_.emplace_back(line);
    if (backlog_.size() > options_.max_backlog) {
      backlog_.pop_front();
      spdlog::warn(
          "mcp session {}: no stream open for server messages: dropped the "
          "oldest held one",
          id_);
    }
  }

 private:
  void Wake() {
    uint64_t one = 1;
    if (wake_fd_ >= 0) (void)!write(wake_fd_, &one, sizeof one);
  }

  void EndExchange(Exchange& ex) {
    Touch();  // an answer is activity too (a slow initialize must not expire)
    if (ex.gone) return;
    if (ex.sse) {
      PostFinish(ex.sink);
      return;
    }
    std::string body;
    if (ex.batch) {
      body = "[";
      for (size_t i = 0; i < ex.collected.size(); ++i) {
        if (i > 0) body += ',';
        body += ex.collected[i];
      }
      body += "]";
    } else if (!ex.collected.empty()) {
      body = std::move(ex.collected.front());
    }
    int status = 200;
    if (ex.modern) {
      // The SDK server's status table: method-not-found is 404.
      Result<mcp::RawMessage> m = mcp::ScanMessage(body);
      if (m.ok() && !m->error.empty() &&
          mcp::FindMember(m->error, "code") == "-32601") {
        status = 404;
      }
    }
    PostSend(ex.sink, status, std::move(body));
  }

  // The session ended before `ex` was answered.
  void Abandon(Exchange& ex, std::string_view why) {
    if (ex.gone) return;
    if (ex.sse && ex.get_stream) {
      PostFinish(ex.sink);
      return;
    }
    // A stateless request has no session to have ended: 502, the server
    // behind the proxy failed.
    PostSend(ex.sink, ex.modern ? 502 : 404,
             ErrorBody(mcp::kConnectionClosed, why, ex.raw_id));
  }

  void Apply(Command& c) {
    switch (c.kind) {
      case Command::Kind::kClose:
        BeginClose("session ended");
        break;
      case Command::Kind::kFlightDone:
        cache_.Forget(c.waiter);
        session_.OnFlightCompletedElsewhere(
            c.waiter, c.lines.empty() ? std::string_view() : c.lines[0]);
        break;
      case Command::Kind::kStream:
        stream_ = c.ex;
        for (const std::string& line : backlog_) {
          PostWrite(stream_->sink, SseEvent(line));
        }
        backlog_.clear();
        break;
      case Command::Kind::kGone:
        c.ex->gone = true;
        if (c.ex == stream_) {
          stream_.reset();
          std::lock_guard<std::mutex> lock(mu_);
          stream_open_ = false;
        }
        break;
      case Command::Kind::kMessages:
        if (closing_) {
          if (c.ex) Abandon(*c.ex, "session ended");
          break;
        }
        if (pooled_) {
          ApplyPooled(c);
          break;
        }
        if (c.ex) exchanges_.push_back(c.ex);
        for (const std::string& line : c.lines) session_.OnClientLine(line);
        break;
    }
  }

  // ---- the pooled child of the stateless era (worker thread) ----
  //
  // Handshake: server/discover first; a child that answers it speaks
  // 2026-07-28 and gets the clients' requests as they are. Any error means
  // a 2025-era child: initialize 2025-11-25 + notifications/initialized on
  // the clients' behalf (the 2026-07-28 spec lets a client fall back so;
  // the proxy is that client), then requests go on with their _meta, which
  // 2025 servers ignore.
  static constexpr std::string_view kDiscoverId = "\"toolcache-discover\"";
  static constexpr std::string_view kInitId = "\"toolcache-initialize\"";

  void StartHandshake() {
    // Choice: 5 s for an answer to server/discover; some 2025 servers never
    // answer a request before initialize (the SDK client's stdio probe
    // treats that silence as legacy too).
    discover_deadline_ = Now() + 5;
    session_.OnClientLine(
        R"({"jsonrpc":"2.0","id":"toolcache-discover","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})");
  }

  void SendInitialize() {
    session_.OnClientLine(
        R"({"jsonrpc":"2.0","id":"toolcache-initialize","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"toolcache","version":"1"}}})");
  }

  // Called every loop turn: a silent server after the deadline is 2025-era.
  void CheckHandshakeClock(double now) {
    if (!pooled_ || ready_ || discover_deadline_ == 0) return;
    if (now < discover_deadline_) return;
    discover_deadline_ = 0;
    spdlog::info("mcp pool {} ({}): no answer to server/discover: 2025 era",
                 id_, server_);
    SendInitialize();
  }

  void HandshakeDone() {
    ready_ = true;
    std::deque<Command> held;
    held.swap(held_);
    for (Command& c : held) ApplyPooled(c);
  }

  // A client message for the pooled child: each request's id becomes one of
  // the worker's own, so requests from different clients never collide.
  void ApplyPooled(Command& c) {
    if (!ready_) {
      held_.push_back(std::move(c));
      return;
    }
    if (c.ex) {
      c.ex->waiting.clear();
      exchanges_.push_back(c.ex);
    }
    for (const std::string& line : c.lines) {
      Result<mcp::RawMessage> m = mcp::ScanMessage(line);
      if (!m.ok() || !m->is_object || m->id.empty() || m->method.empty()) {
        // Choice: a client's notifications/cancelled is dropped: its
        // requestId is in the client's numbering, while the child knows the
        // pooled ids, which another client could name to cancel a request
        // not its own. (A stateless client cancels by closing its POST.)
        if (m.ok() && m->method_name == "notifications/cancelled") {
          spdlog::debug("mcp pool {} ({}): a client's cancel dropped", id_,
                        server_);
          continue;
        }
        session_.OnClientLine(line);  // a notification
        continue;
      }
      const std::string internal = "tc-" + std::to_string(++next_id_);
      const std::string nid = mcp::NormalizeId(Quoted(internal));
      const std::string& method = m->method_name;
      // The client's id as it sent it (restored byte for byte).
      pending_ids_[nid] = Pending{std::string(m->id), method};
      std::vector<std::pair<std::string_view, std::string>> edits;
      edits.emplace_back(m->id, Quoted(internal));
      // A progress token becomes the request's own too (two clients may use
      // one token); its notifications go to this request's stream.
      if (!m->params.empty() && m->params.front() == '{') {
        const std::string_view meta = mcp::FindMember(m->params, "_meta");
        const std::string_view token =
            !meta.empty() && meta.front() == '{'
                ? mcp::FindMember(meta, "progressToken")
                : std::string_view();
        if (!token.empty()) {
          progress_[internal] = {nid, std::string(token)};
          pending_ids_[nid].progress = internal;
          edits.emplace_back(token, Quoted(internal));
        }
      }
      if (c.ex) c.ex->waiting.push_back(nid);
      if (method == "initialize") {
        // The stateless era has no handshake (the SDK: method not found).
        ToClient(ErrorBody(kMethodNotFoundCode,
                           "Method not found: initialize is not part of "
                           "MCP 2026-07-28 (send server/discover)",
                           Quoted(internal)));
        continue;
      }
      if (!child_modern_ && method == "server/discover") {
        nlohmann::json result = nlohmann::json::parse(
            init_result_.empty() ? "{}" : init_result_, nullptr, false);
        if (!result.is_object()) result = nlohmann::json::object();
        nlohmann::json d = {
            {"supportedVersions", {std::string(kModernVersion)}},
            {"capabilities",
             result.value("capabilities", nlohmann::json::object())}};
        if (result.contains("instructions")) {
          d["instructions"] = result["instructions"];
        }
        if (result.contains("serverInfo")) {
          d["_meta"] = {
              {"io.modelcontextprotocol/serverInfo", result["serverInfo"]}};
        }
        nlohmann::json reply = {
            {"jsonrpc", "2.0"}, {"id", internal}, {"result", d}};
        ToClient(reply.dump(-1, ' ', false,
                            nlohmann::json::error_handler_t::replace));
        continue;
      }
      session_.OnClientLine(ReplaceSpans(line, std::move(edits)));
    }
  }

  // A message from the pooled child (or answered for it): the handshake's
  // answers are consumed; a response gets its client's id back (and, from a
  // 2025 child, the 2026 result fields); anything else has no client to go
  // to in the stateless era and is dropped.
  std::optional<std::string> FromPooledChild(std::string_view line) {
    Result<mcp::RawMessage> m = mcp::ScanMessage(line);
    if (m.ok() && m->method_name == "notifications/progress") {
      ToProgressStream(line);
      return std::nullopt;
    }
    if (!m.ok() || m->kind() != mcp::MessageKind::kResponse) {
      spdlog::debug("mcp pool {} ({}): a server message with no client: {}",
                    id_, server_, line.substr(0, 200));
      return std::nullopt;
    }
    const std::string nid = mcp::NormalizeId(m->id);
    if (!ready_ && nid == mcp::NormalizeId(kDiscoverId)) {
      if (discover_deadline_ == 0) return std::nullopt;  // already gave up
      discover_deadline_ = 0;
      if (!m->result.empty()) {
        child_modern_ = true;
        spdlog::info("mcp pool {} ({}): the server speaks 2026-07-28", id_,
                     server_);
        HandshakeDone();
      } else {
        SendInitialize();
      }
      return std::nullopt;
    }
    if (!ready_ && nid == mcp::NormalizeId(kInitId)) {
      if (m->result.empty()) {
        spdlog::warn("mcp pool {} ({}): initialize failed: {}", id_, server_,
                     line.substr(0, 200));
        BeginClose("the server refused initialize");
        return std::nullopt;
      }
      init_result_ = std::string(m->result);
      session_.OnClientLine(
          R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
      spdlog::info(
          "mcp pool {} ({}): a 2025-era server: spoken to in "
          "2025-11-25 on the clients' behalf",
          id_, server_);
      HandshakeDone();
      return std::nullopt;
    }
    auto it = pending_ids_.find(nid);
    if (it == pending_ids_.end()) return std::string(line);
    Pending p = std::move(it->second);
    pending_ids_.erase(it);
    if (!p.progress.empty()) progress_.erase(p.progress);
    restore_[nid] = std::move(p.raw_id);
    // Keep the internal id for matching the exchange; the client's id is
    // put back below, after matching, by RestoreId. A 2025 child's result
    // gets the 2026 fields it lacks, inserted in place.
    if (child_modern_ || m->result.empty() || m->result.front() != '{') {
      return std::string(line);
    }
    const std::string_view r = m->result;
    std::string added;
    if (mcp::FindMember(r, "resultType").empty()) {
      added += "\"resultType\":\"complete\"";
    }
    std::vector<std::pair<std::string_view, std::string>> edits;
    static constexpr std::string_view kCacheable[] = {
        "tools/list",     "prompts/list",
        "resources/list", "resources/templates/list",
        "resources/read", "server/discover"};
    for (std::string_view c : kCacheable) {
      if (p.method == c && mcp::FindMember(r, "ttlMs").empty()) {
        // Choice: a 2025 server gave no freshness: 0 ms, private, so no
        // client or shared cache keeps what the proxy cannot vouch for.
        if (!added.empty()) added += ',';
        added += "\"ttlMs\":0";
        if (const std::string_view scope = mcp::FindMember(r, "cacheScope");
            !scope.empty()) {
          edits.emplace_back(scope, "\"private\"");
        } else {
          added += ",\"cacheScope\":\"private\"";
        }
      }
    }
    if (!added.empty()) {
      // After the result's '{', with a comma when members follow.
      size_t after = 1;
      while (after < r.size() && (r[after] == ' ' || r[after] == '\t' ||
                                  r[after] == '\n' || r[after] == '\r')) {
        ++after;
      }
      if (r[after] != '}') added += ',';
      edits.emplace_back(r.substr(1, 0), std::move(added));
    }
    if (edits.empty()) return std::string(line);
    return ReplaceSpans(line, std::move(edits));
  }

  // A progress notification to the SSE stream of the request whose token it
  // names, with the client's token back; dropped when there is none.
  void ToProgressStream(std::string_view line) {
    Result<mcp::RawMessage> m = mcp::ScanMessage(line);
    if (!m.ok() || m->params.empty() || m->params.front() != '{') return;
    const std::string_view token = mcp::FindMember(m->params, "progressToken");
    if (token.empty() || token.front() != '"') return;
    auto it = progress_.find(mcp::DecodeString(token));
    if (it == progress_.end()) return;
    for (const std::shared_ptr<Exchange>& ex : exchanges_) {
      if (!ex->sse || ex->gone) continue;
      if (std::find(ex->waiting.begin(), ex->waiting.end(), it->second.nid) ==
          ex->waiting.end()) {
        continue;
      }
      PostWrite(ex->sink,
                SseEvent(ReplaceSpans(line, {{token, it->second.raw_token}})));
      return;
    }
  }

  // The client's own id back in a pooled answer about to be sent, in
  // place (the rest of the line as the server wrote it).
  std::string RestoreId(std::string_view nid, std::string_view line) {
    auto it = restore_.find(std::string(nid));
    if (it == restore_.end()) return std::string(line);
    std::string raw = std::move(it->second);
    restore_.erase(it);
    Result<mcp::RawMessage> m = mcp::ScanMessage(line);
    if (!m.ok() || m->id.empty()) return std::string(line);
    return ReplaceSpans(line, {{m->id, std::move(raw)}});
  }

  void BeginClose(const char* why) {
    if (closing_) return;
    closing_ = true;
    spdlog::info("mcp session {} ({}): closing: {}", id_, server_, why);
    ladder_.Begin(Now(), options_.grace_seconds);
  }

  void FlushChild() {
    while (to_child_ >= 0 && !out_.empty()) {
      const std::string_view front = out_.Front();
      ssize_t n = write(to_child_, front.data(), front.size());
      if (n > 0) {
        out_.Consume(static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      close(to_child_);  // the child stopped reading
      to_child_ = -1;
      out_.Clear();
    }
  }

  void OnServerLong(std::string_view part, bool end, uint64_t total) {
    if (!in_long_) sniffer_.Reset();
    in_long_ = !end;
    sniffer_.Feed(part);
    if (!end) return;
    const std::string raw_id = sniffer_.id();
    session_.OnServerLineTooLong(sniffer_, total, options_.max_line_bytes);
    // The stdio proxy streams such a line through; here the request gets
    // an error in its place.
    if (sniffer_.is_response()) {
      ToClient(ErrorBody(mcp::kInternalError,
                         "server message of " + std::to_string(total) +
                             " bytes exceeds the limit of " +
                             std::to_string(options_.max_line_bytes),
                         raw_id));
    }
  }

  void Run() {
    std::vector<char> chunk(64 * 1024);
    bool exited = false;
    int status = 0;
    auto on_line = [&](std::string_view line) { session_.OnServerLine(line); };
    auto on_long = [&](std::string_view p, bool end, uint64_t total) {
      OnServerLong(p, end, total);
    };
    if (pooled_) StartHandshake();
    while (true) {
      if (!exited && waitpid(pid_, &status, WNOHANG) == pid_) exited = true;
      if (exited && from_child_ < 0) break;
      std::deque<Command> cmds;
      {
        std::lock_guard<std::mutex> lock(mu_);
        cmds.swap(inbox_);
      }
      for (Command& c : cmds) Apply(c);
      FlushChild();
      const double now = Now();
      if (closing_ && to_child_ >= 0 && out_.empty()) {
        close(to_child_);
        to_child_ = -1;
      }
      CheckHandshakeClock(now);
      if (!exited) {
        const int sent = ladder_.Step(pid_, now);
        if (sent != 0) {
          spdlog::info("mcp session {} ({}): server still running: {}", id_,
                       server_, sent == SIGTERM ? "SIGTERM" : "SIGKILL");
        }
      }
      pollfd fds[3];
      int n = 0;
      fds[n++] = {wake_fd_, POLLIN, 0};
      int fi = -1;
      if (from_child_ >= 0) {
        fi = n;
        fds[n++] = {from_child_, POLLIN, 0};
      }
      if (to_child_ >= 0 && !out_.empty()) fds[n++] = {to_child_, POLLOUT, 0};
      // Choice: 100 ms polls reap the child and run the shutdown clock
      // (SIGCHLD is blocked in every thread of the server).
      int r = poll(fds, n, exited ? 0 : 100);
      if (r < 0 && errno != EINTR) break;
      if (fds[0].revents & POLLIN) {
        uint64_t v;
        (void)!read(wake_fd_, &v, sizeof v);
      }
      if (fi >= 0 && (fds[fi].revents & (POLLIN | POLLHUP | POLLERR))) {
        ssize_t got = read(from_child_, chunk.data(), chunk.size());
        if (got > 0) {
          reader_.Feed(std::string_view(chunk.data(), static_cast<size_t>(got)),
                       on_line, on_long);
        } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
          close(from_child_);
          from_child_ = -1;
          reader_.Finish(on_line, on_long);
          BeginClose("server closed its stdout");
        }
      } else if (exited && from_child_ >= 0 && r == 0) {
        close(from_child_);
        from_child_ = -1;
        reader_.Finish(on_line, on_long);
      }
    }
    std::string cause = "server stopped";
    if (WIFEXITED(status)) {
      cause =
          "server exited with status " + std::to_string(WEXITSTATUS(status));
    } else if (WIFSIGNALED(status)) {
      cause = "server killed by signal " + std::to_string(WTERMSIG(status));
    }
    spdlog::info("mcp session {} ({}): {}", id_, server_, cause);
    if (session_.in_flight() > 0) session_.FailInFlight(cause);
    if (to_child_ >= 0) close(to_child_);
    to_child_ = -1;
    std::deque<Command> left;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ended_ = true;
      left.swap(inbox_);
    }
    for (const std::shared_ptr<Exchange>& ex : exchanges_) {
      Abandon(*ex, "session ended: " + cause);
    }
    exchanges_.clear();
    // Pooled: requests still waiting for the upstream handshake.
    for (Command& c : held_) {
      if (c.ex) Abandon(*c.ex, "the server process ended: " + cause);
    }
    held_.clear();
    for (Command& c : left) {
      if (c.ex && c.kind != Command::Kind::kGone) {
        Abandon(*c.ex, "session ended: " + cause);
      }
    }
    if (stream_) Abandon(*stream_, cause);
    stream_.reset();
  }

  const bool pooled_;  // the shared child of the stateless (2026) era
  const std::string id_;
  const std::string server_;
  const std::string tenant_;
  const McpHttpOptions& options_;
  SessionCache cache_;    // worker thread
  mcp::Session session_;  // worker thread
  mcp::LineReader reader_;
  mcp::IdSniffer sniffer_;
  bool in_long_ = false;
  mcp::OutQueue out_;  // to the child's stdin
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  int wake_fd_ = -1;
  std::thread thread_;
  std::atomic<double> last_used_{0};
  // Worker thread only.
  std::vector<std::shared_ptr<Exchange>> exchanges_;
  std::shared_ptr<Exchange> stream_;
  std::deque<std::string> backlog_;
  bool closing_ = false;
  mcp::StopLadder ladder_;
  // Pooled mode only.
  struct Pending {
    std::string raw_id;  // the client's id, as it sent it
    std::string method;
    std::string progress;  // its internal progress token, or ""
  };
  struct Progress {
    std::string nid;        // the request it belongs to
    std::string raw_token;  // the client's token, as it sent it
  };
  std::unordered_map<std::string, Progress> progress_;  // internal token ->
  bool ready_ = false;            // the upstream handshake is done
  double discover_deadline_ = 0;  // 0: server/discover answered or given up
  bool child_modern_ = false;     // the child answered server/discover
  std::string init_result_;       // a 2025 child's initialize result
  std::deque<Command> held_;      // client messages waiting for the handshake
  uint64_t next_id_ = 0;
  std::unordered_map<std::string, Pending> pending_ids_;  // internal nid ->
  std::unordered_map<std::string, std::string> restore_;  // nid -> raw id
  std::string protocol_version_seen_;

  mutable std::mutex mu_;
  std::deque<Command> inbox_;     // GUARDED_BY(mu_)
  bool ended_ = false;            // GUARDED_BY(mu_)
  bool stream_open_ = false;      // GUARDED_BY(mu_)
  std::string protocol_version_;  // GUARDED_BY(mu_)
};

std::vector<WaiterId> SessionCache::RouteWaiters(
    const std::vector<WaiterId>& globals, std::string_view result_json) {
  std::vector<WaiterId> mine;
  const std::shared_ptr<Worker> self = owner_.lock();
  for (WaiterId global : globals) {
    std::optional<FlightRouter::Entry> e = router_->Find(global);
    if (!e) continue;
    std::shared_ptr<Worker> owner = e->owner.lock();
    if (owner && owner == self) {
      mine.push_back(e->local);
      continue;
    }
    (void)router_->Take(global);
    if (!owner) continue;  // that session ended
    Command cmd;
    cmd.kind = Command::Kind::kFlightDone;
    cmd.waiter = e->local;
    if (!result_json.empty()) cmd.lines.emplace_back(result_json);
    (void)owner->Push(std::move(cmd));
  }
  for (WaiterId local : mine) Forget(local);
  return mine;
}

Completion SessionCache::Complete(TicketId ticket, const UpstreamResult& r) {
  Completion c = inner_->Complete(ticket, r);
  // An error or an answer not kept: the follower asks the server itself.
  const bool kept = !r.is_error && r.complete && !r.result_json.empty();
  c.waiters = RouteWaiters(c.waiters, kept ? r.result_json : "");
  return c;
}

std::vector<WaiterId> SessionCache::Unshare(TicketId ticket,
                                            std::string_view reason) {
  // As Complete does for an answer not kept: other sessions' waiters are
  // told to ask the server themselves (an empty kFlightDone); this
  // session's are returned for its Session to re-send.
  return RouteWaiters(inner_->Unshare(ticket, reason), {});
}

class McpHttp::Impl {
 public:
  explicit Impl(McpHttpOptions o) : options_(std::move(o)) {
    for (const McpServerSpec& s : options_.servers) {
      per_server_[s.name];
    }
  }

  void Handle(const http::Request& req, const http::ResponderPtr& res) {
    const std::string_view path = req.Path();
    std::string_view name =
        path.size() > 5 ? path.substr(5) : std::string_view();
    const McpServerSpec* spec = nullptr;
    for (const McpServerSpec& s : options_.servers) {
      if (s.name == name) spec = &s;
    }
    if (spec == nullptr) {
      return SendError(res, 404, mcp::kInvalidRequest,
                       "no MCP server at " + std::string(path) +
                           " (servers.<name>.command in the configuration)");
    }
    McpGate gate;
    std::optional<std::string> tenant = options_.admit(req, &gate);
    if (!tenant) {
      return SendError(res, gate.status, mcp::kConnectionClosed, gate.message);
    }
    const std::string_view version = req.Header("mcp-protocol-version");
    const std::string_view sid = req.Header("mcp-session-id");
    // A POST's era comes from its body first (Post); others are 2025-era.
    if (req.method != "POST" && !version.empty() &&
        !IsKnownProtocolVersion(version)) {
      return SendUnsupportedVersion(res, version, "null");
    }
    if (req.method == "POST") return Post(req, res, *spec, *tenant, sid);
    if (req.method != "GET" && req.method != "DELETE") {
      return SendError(res, 405, mcp::kConnectionClosed,
                       "Method not allowed (POST, GET, DELETE)",
                       {{"allow", "POST, GET, DELETE"}});
    }
    std::shared_ptr<Worker> w = Find(res, *spec, *tenant, sid, version);
    if (!w) return;
    if (req.method == "DELETE") {
      w->Close();
      Forget(w->id());
      ended_by_client_++;
      res->Send(200, {{"content-type", "application/json"}}, "{}");
      return;
    }
    // GET: the server -> client stream.
    if (ChooseResponse(req.Header("accept")) != McpAccept::kSse) {
      return SendError(res, 406, mcp::kConnectionClosed,
                       "Not Acceptable: GET needs Accept: text/event-stream");
    }
    if (!w->TakeStream()) {
      return SendError(res, 409, mcp::kConnectionClosed,
                       "Conflict: this session's stream is already open");
    }
    auto ex = std::make_shared<Exchange>();
    ex->sse = true;
    ex->get_stream = true;
    ex->sink = MakeSink(res, w->id(), true);
    ex->sink->started = true;
    res->Start(200, ex->sink->headers);
    WatchGone(res, w, ex);
    Command c;
    c.kind = Command::Kind::kStream;
    c.ex = ex;
    if (!w->Push(std::move(c))) res->Finish();
  }

  void Sweep() {
    const double now = Now();
    std::vector<std::shared_ptr<Worker>> done;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto it = sessions_.begin(); it != sessions_.end();) {
        Worker& w = *it->second;
        if (w.ended() || now - w.last_used() > options_.idle_timeout_seconds) {
          if (!w.ended()) {
            spdlog::info("mcp session {} ({}): idle for {:.0f}s: ending",
                         w.id(), w.server(), now - w.last_used());
            expired_++;
          }
          w.Close();
          ending_.push_back(it->second);
          it = sessions_.erase(it);
        } else {
          ++it;
        }
      }
      for (auto it = pool_.begin(); it != pool_.end();) {
        Worker& w = *it->second;
        if (w.ended() || now - w.last_used() > options_.idle_timeout_seconds) {
          w.Close();
          ending_.push_back(it->second);
          it = pool_.erase(it);
        } else {
          ++it;
        }
      }
      for (auto it = ending_.begin(); it != ending_.end();) {
        if ((*it)->ended()) {
          done.push_back(std::move(*it));
          it = ending_.erase(it);
        } else {
          ++it;
        }
      }
    }
    done.clear();  // joins the finished workers outside the lock
  }

  void Shutdown() {
    std::vector<std::shared_ptr<Worker>> all;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& [id, w] : sessions_) all.push_back(w);
      sessions_.clear();
      for (auto& [key, w] : pool_) all.push_back(w);
      pool_.clear();
      for (auto& w : ending_) all.push_back(w);
      ending_.clear();
    }
    for (auto& w : all) w->Close();
    all.clear();  // joins
  }

  std::string StatsJson() const {
    nlohmann::ordered_json j;
    std::lock_guard<std::mutex> lock(mu_);
    j["sessionsOpen"] = sessions_.size();
    j["sessionsStarted"] = started_.load();
    j["sessionsEndedByClient"] = ended_by_client_.load();
    j["sessionsExpired"] = expired_.load();
    j["sessionsRejected"] = rejected_.load();
    j["pooledChildrenOpen"] = pool_.size();
    j["pooledChildrenStarted"] = pooled_started_.load();
    j["maxSessions"] = options_.max_sessions;
    j["maxSessionsPerTenant"] = options_.max_sessions_per_tenant > 0
                                    ? options_.max_sessions_per_tenant
                                    : options_.max_sessions;
    nlohmann::ordered_json servers = nlohmann::ordered_json::object();
    for (const auto& [name, c] : per_server_) {
      size_t open = 0;
      for (const auto& [id, w] : sessions_) open += w->server() == name;
      servers[name] = {{"sessionsOpen", open},
                       {"sessionsStarted", c.sessions},
                       {"posts", c.posts}};
    }
    j["servers"] = servers;
    return j.dump();
  }

 private:
  struct ServerCounters {
    uint64_t sessions = 0;
    uint64_t posts = 0;
  };

  // 400 -32022 naming the supported revisions, as the reference SDK server.
  static void SendUnsupportedVersion(const http::ResponderPtr& res,
                                     std::string_view version,
                                     std::string_view raw_id) {
    nlohmann::json requested = std::string(version);
    std::string body = ErrorBody(
        kUnsupportedVersionCode,
        "Bad Request: Unsupported protocol version: " + std::string(version) +
            " (supported versions: 2026-07-28, 2025-11-25, 2025-06-18, "
            "2025-03-26, 2024-11-05)",
        raw_id);
    body.resize(body.size() - 2);
    body += ",\"data\":{\"supported\":" + SupportedVersionsJson() +
            ",\"requested\":" +
            requested.dump(-1, ' ', false,
                           nlohmann::json::error_handler_t::replace) +
            "}}}";
    res->Send(
        400,
        {{"content-type", "application/json"}, {"cache-control", "no-store"}},
        std::move(body));
  }

  std::shared_ptr<Sink> MakeSink(const http::ResponderPtr& res,
                                 const std::string& sid, bool sse) {
    auto s = std::make_shared<Sink>();
    s->res = res;
    s->loop = res->loop();
    s->headers = {
        {"content-type", sse ? "text/event-stream" : "application/json"},
        {"cache-control", sse ? "no-cache" : "no-store"}};
    if (!sid.empty()) s->headers.push_back({"mcp-session-id", sid});
    return s;
  }

  void WatchGone(const http::ResponderPtr& res,
                 const std::shared_ptr<Worker>& w,
                 const std::shared_ptr<Exchange>& ex) {
    std::weak_ptr<Worker> weak = w;
    res->OnClientGone([weak, ex] {
      if (auto w = weak.lock()) {
        Command c;
        c.kind = Command::Kind::kGone;
        c.ex = ex;
        (void)w->Push(std::move(c));
      }
    });
  }

  // The session `sid` names, or nullptr after answering 400/404.
  std::shared_ptr<Worker> Find(const http::ResponderPtr& res,
                               const McpServerSpec& spec,
                               const std::string& tenant, std::string_view sid,
                               std::string_view version) {
    if (sid.empty()) {
      SendError(res, 400, mcp::kConnectionClosed,
                "Bad Request: Mcp-Session-Id header is required");
      return nullptr;
    }
    std::shared_ptr<Worker> w;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = sessions_.find(std::string(sid));
      if (it != sessions_.end()) w = it->second;
    }
    // Another server's or another tenant's session is unknown here.
    if (!w || w->ended() || w->server() != spec.name || w->tenant() != tenant) {
      SendError(res, 404, mcp::kConnectionClosed,
                "Session not found (ended, expired or never started): "
                "initialize a new one");
      return nullptr;
    }
    // Choice: a known version other than the negotiated one is accepted, as
    // the reference SDK server and the conformance suite expect (the spec's
    // 400 is for an invalid or unsupported version, checked in Handle).
    (void)version;
    w->Touch();
    return w;
  }

  void Forget(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return;
    ending_.push_back(it->second);
    sessions_.erase(it);
  }

  void Post(const http::Request& req, const http::ResponderPtr& res,
            const McpServerSpec& spec, const std::string& tenant,
            std::string_view sid) {
    const std::string_view ctype = req.Header("content-type");
    if (ctype.find("application/json") == std::string_view::npos) {
      return SendError(res, 415, mcp::kConnectionClosed,
                       "Unsupported Media Type: Content-Type must be "
                       "application/json");
    }
    const McpAccept accept = ChooseResponse(req.Header("accept"));
    if (accept == McpAccept::kNone) {
      return SendError(res, 406, mcp::kConnectionClosed,
                       "Not Acceptable: Accept must list application/json "
                       "and text/event-stream");
    }
    // The era, body first (2026-07-28 classification, http_server.h CheckEra);
    // a batch is 2025-era (its elements are checked below).
    {
      EraCheck era = CheckEra(req.body, req.Header("mcp-protocol-version"),
                              req.Header("mcp-method"), req.Header("mcp-name"));
      std::string raw_id = "null";
      if (Result<mcp::RawMessage> m = mcp::ScanMessage(req.body);
          m.ok() && m->kind() == mcp::MessageKind::kRequest) {
        raw_id = std::string(m->id);
      }
      if (era.status != 0) {
        std::string body = ErrorBody(era.code, era.message, raw_id);
        if (!era.data.empty()) {
          body.resize(body.size() - 2);
          body += ",\"data\":" + era.data + "}}";
        }
        return res->Send(era.status,
                         {{"content-type", "application/json"},
                          {"cache-control", "no-store"}},
                         std::move(body));
      }
      if (era.modern) return PostModern(req, res, spec, tenant, raw_id, accept);
      const std::string_view v = req.Header("mcp-protocol-version");
      if (!v.empty() && !IsKnownProtocolVersion(v)) {
        return SendUnsupportedVersion(res, v, raw_id);
      }
    }
    std::shared_ptr<Worker> w;
    std::string version(req.Header("mcp-protocol-version"));
    if (!sid.empty()) {
      w = Find(res, spec, tenant, sid, version);
      if (!w) return;
      // The session's negotiated revision decides what the body may be.
      if (std::string negotiated = w->protocol_version(); !negotiated.empty()) {
        version = std::move(negotiated);
      }
    }
    // Without the header, a server assumes 2025-03-26 (spec 2025-06-18,
    // "Protocol Version Header"), which still has batches.
    const bool batches = version.empty() || version < "2025-06-18";
    SplitBody split = SplitPostBody(req.body, batches);
    if (split.error_code != 0) {
      return SendError(res, 400, split.error_code, split.error);
    }
    // A batch element claiming 2026-07-28 (or failing its checks): the
    // revision has no batches (the SDK: the element-wise batch rule).
    for (std::string_view m : split.messages) {
      if (!split.batch) break;
      EraCheck era = CheckEra(m, req.Header("mcp-protocol-version"),
                              req.Header("mcp-method"), req.Header("mcp-name"));
      if (era.modern || era.status != 0) {
        return SendError(res, 400, mcp::kInvalidRequest,
                         "Invalid Request: MCP 2026-07-28 has no batches");
      }
    }
    std::vector<std::string> lines;
    std::vector<std::string> waiting;
    bool initialize = false;
    for (std::string_view m : split.messages) {
      Result<mcp::RawMessage> raw = mcp::ScanMessage(m);
      if (!raw.ok() || raw->kind() == mcp::MessageKind::kOther) {
        return SendError(res, 400, mcp::kInvalidRequest,
                         "Invalid Request: not a JSON-RPC request, "
                         "notification or response");
      }
      if (raw->kind() == mcp::MessageKind::kRequest) {
        waiting.push_back(mcp::NormalizeId(raw->id));
        if (raw->method_name == "initialize") initialize = true;
      }
      // Whitespace only: JSON strings cannot hold a raw line break, so the
      // message stays one stdio line with every other byte kept.
      std::string line(m);
      for (char& c : line) {
        if (c == '\n' || c == '\r') c = ' ';
      }
      lines.push_back(std::move(line));
    }
    if (initialize && split.batch) {
      return SendError(res, 400, mcp::kInvalidRequest,
                       "Invalid Request: initialize must not be batched");
    }
    if (!w && !initialize) {
      return SendError(res, 400, mcp::kConnectionClosed,
                       "Bad Request: Mcp-Session-Id header is required "
                       "(or send initialize to start a session)");
    }
    if (!w) {
      w = StartSession(res, spec, tenant);
      if (!w) return;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      per_server_[spec.name].posts++;
    }
    Command c;
    c.lines = std::move(lines);
    if (waiting.empty()) {
      if (!w->Push(std::move(c))) {
        return SendError(res, 404, mcp::kConnectionClosed, "Session ended");
      }
      res->Send(202, {{"mcp-session-id", w->id()}}, "");
      return;
    }
    auto ex = std::make_shared<Exchange>();
    ex->sse = accept == McpAccept::kSse;
    ex->batch = split.batch;
    ex->waiting = std::move(waiting);
    ex->sink = MakeSink(res, w->id(), ex->sse);
    c.ex = ex;
    WatchGone(res, w, ex);
    if (!w->Push(std::move(c))) {
      SendError(res, 404, mcp::kConnectionClosed, "Session ended");
    }
  }

  // One 2026-07-28 message (CheckEra passed): answered on its own by the
  // pooled child, or here for the methods the revision removed.
  void PostModern(const http::Request& req, const http::ResponderPtr& res,
                  const McpServerSpec& spec, const std::string& tenant,
                  const std::string& raw_id, McpAccept accept) {
    Result<mcp::RawMessage> raw = mcp::ScanMessage(req.body);
    if (!raw.ok() || raw->kind() == mcp::MessageKind::kOther ||
        raw->kind() == mcp::MessageKind::kResponse) {
      return SendError(res, 400, mcp::kInvalidRequest,
                       "Invalid Request: not a JSON-RPC request or "
                       "notification");
    }
    const bool request = raw->kind() == mcp::MessageKind::kRequest;
    if (request && IsRemovedMethod(raw->method_name)) {
      // The SDK server: method-not-found on HTTP 404 for what the revision
      // removed (its handshake, ping, logging/setLevel, subscriptions).
      return res->Send(
          404,
          {{"content-type", "application/json"}, {"cache-control", "no-store"}},
          ErrorBody(kMethodNotFoundCode,
                    "Method not found: " + std::string(raw->method_name) +
                        " is not part of MCP 2026-07-28",
                    raw_id));
    }
    std::shared_ptr<Worker> w = Pooled(res, spec, tenant);
    if (!w) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      per_server_[spec.name].posts++;
    }
    std::string line(req.body);
    for (char& c : line) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    Command c;
    c.lines.push_back(std::move(line));
    if (!request) {
      if (!w->Push(std::move(c))) {
        return SendError(res, 503, mcp::kConnectionClosed,
                         "Service Unavailable: the server process ended");
      }
      res->Send(202, {}, "");
      return;
    }
    auto ex = std::make_shared<Exchange>();
    // Choice: JSON whenever the client accepts it: the pooled child's
    // server messages have no client, so a stream would carry the answer
    // alone, and a JSON answer can carry the SDK's HTTP status (404 for
    // method-not-found).
    const std::string_view acc = req.Header("accept");
    // A request asking for progress gets a stream when the client takes
    // one: its progress notifications go there.
    const bool wants_progress =
        req.body.find("\"progressToken\"") != std::string::npos;
    ex->sse = accept == McpAccept::kSse &&
              (wants_progress ||
               (acc.find("application/json") == std::string_view::npos &&
                acc.find("*/*") == std::string_view::npos));
    ex->modern = true;
    ex->raw_id = raw_id;
    ex->waiting.push_back(mcp::NormalizeId(raw->id));
    ex->sink = MakeSink(res, std::string(), ex->sse);
    c.ex = ex;
    WatchGone(res, w, ex);
    if (!w->Push(std::move(c))) {
      SendError(res, 503, mcp::kConnectionClosed,
                "Service Unavailable: the server process ended");
    }
  }

  static bool IsRemovedMethod(std::string_view m) {
    return m == "initialize" || m == "ping" || m == "logging/setLevel" ||
           m == "resources/subscribe" || m == "resources/unsubscribe";
  }

  // The shared child of (`spec`, `tenant`) for stateless requests, started
  // on first use and again after it ended; nullptr after answering 502.
  // Choice: one per tenant, so children and their Session's cache scope
  // never serve two tenants (as the 2025 sessions).
  std::shared_ptr<Worker> Pooled(const http::ResponderPtr& res,
                                 const McpServerSpec& spec,
                                 const std::string& tenant) {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string key = spec.name + '\n' + tenant;
    auto it = pool_.find(key);
    if (it != pool_.end() && !it->second->ended()) {
      it->second->Touch();
      return it->second;
    }
    if (it != pool_.end()) {
      ending_.push_back(it->second);
      pool_.erase(it);
    }
    auto w = std::make_shared<Worker>("pool-" + NewSessionId(), spec, tenant,
                                      options_, &router_, /*pooled=*/true);
    w->SetCacheOwner(w);
    Status st = w->Start(spec.command);
    if (!st.ok()) {
      spdlog::error("mcp server '{}': {}", spec.name, st.message());
      SendError(res, 502, mcp::kConnectionClosed,
                "cannot start MCP server '" + spec.name + "': " + st.message());
      return nullptr;
    }
    pool_[key] = w;
    pooled_started_++;
    return w;
  }

  std::shared_ptr<Worker> StartSession(const http::ResponderPtr& res,
                                       const McpServerSpec& spec,
                                       const std::string& tenant) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      const size_t per_tenant = options_.max_sessions_per_tenant > 0
                                    ? options_.max_sessions_per_tenant
                                    : options_.max_sessions;
      size_t mine = starting_[tenant];
      for (const auto& [id, w] : sessions_) mine += w->tenant() == tenant;
      if (sessions_.size() + starting_total_ >= options_.max_sessions) {
        rejected_++;
        SendError(
            res, 503, mcp::kConnectionClosed,
            "Service Unavailable: " + std::to_string(options_.max_sessions) +
                " MCP sessions are open (the limit, --mcp-max-sessions); end "
                "one (DELETE) or wait for an idle one to expire",
            {{"retry-after", "5"}});
        return nullptr;
      }
      if (mine >= per_tenant) {
        // One tenant may not hold every session (issue 27.10).
        rejected_++;
        SendError(res, 429, mcp::kConnectionClosed,
                  "Too Many Requests: this tenant holds " +
                      std::to_string(mine) +
                      " MCP sessions (its limit, "
                      "--mcp-max-sessions-per-tenant); end one (DELETE) or "
                      "wait for an idle one to expire",
                  {{"retry-after", "5"}});
        return nullptr;
      }
      // Counted from now: concurrent initializes cannot overshoot.
      ++starting_[tenant];
      ++starting_total_;
    }
    auto w = std::make_shared<Worker>(NewSessionId(), spec, tenant, options_,
                                      &router_);
    w->SetCacheOwner(w);
    Status st = w->Start(spec.command);
    {
      std::lock_guard<std::mutex> lock(mu_);
      --starting_total_;
      if (--starting_[tenant] == 0) starting_.erase(tenant);
      if (st.ok()) {
        sessions_[w->id()] = w;
        per_server_[spec.name].sessions++;
        started_++;
      }
    }
    if (!st.ok()) {
      spdlog::error("mcp server '{}': {}", spec.name, st.message());
      SendError(res, 502, mcp::kConnectionClosed,
                "cannot start MCP server '" + spec.name + "': " + st.message());
      return nullptr;
    }
    return w;
  }

  McpHttpOptions options_;
  FlightRouter router_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Worker>> sessions_;  // GUARDED_BY(mu_)
  // Stateless-era children by "<server>\n<tenant>".
  std::map<std::string, std::shared_ptr<Worker>> pool_;  // GUARDED_BY(mu_)
  std::atomic<uint64_t> pooled_started_{0};
  // Sessions being started (their child not running yet), per tenant and
  // in all; counted against the limits.
  std::map<std::string, size_t> starting_;  // GUARDED_BY(mu_)
  size_t starting_total_ = 0;               // GUARDED_BY(mu_)
  // Closed, their threads not joined yet.
  std::vector<std::shared_ptr<Worker>> ending_;       // GUARDED_BY(mu_)
  std::map<std::string, ServerCounters> per_server_;  // GUARDED_BY(mu_)
  std::atomic<uint64_t> started_{0};
  std::atomic<uint64_t> ended_by_client_{0};
  std::atomic<uint64_t> expired_{0};
  std::atomic<uint64_t> rejected_{0};
};

McpHttp::McpHttp(McpHttpOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
McpHttp::~McpHttp() { impl_->Shutdown(); }

bool McpHttp::Matches(std::string_view path) {
  return path == "/mcp" || path.substr(0, 5) == "/mcp/";
}
void McpHttp::Handle(const http::Request& request,
                     const http::ResponderPtr& res) {
  impl_->Handle(request, res);
}
void McpHttp::Sweep() { impl_->Sweep(); }
void McpHttp::Shutdown() { impl_->Shutdown(); }
std::string McpHttp::StatsJson() const { return impl_->StatsJson(); }

}  // namespace toolcache::mcp_http
