// Invariants:
// - Every call (POST, GET, DELETE) runs on loop_; its sink is the only code
//   that touches the upstream from I/O, and a cancelled call's sink hears
//   nothing more (http::Call::Cancel), so cancelling every call in
//   Shutdown/the destructor leaves no callback pointing at a dead upstream.
//   Timers check alive_.
// - A client request POSTed upstream is answered exactly once towards the
//   session: by the server (a response with its id, from a JSON body or an
//   SSE stream), or by Fail() when its POST ended without that response. A
//   message held behind an initialize is POSTed or failed, never dropped
//   silently (notifications and responses that cannot be delivered are
//   logged: nobody waits for them).
// - While gate_ is set (an initialize in flight) nothing else is POSTed, so
//   every later message carries the session id that initialize returned.
// - Header values, session ids and URL queries are never logged nor put
//   in messages; the URL's path only redacted (McpEndpoint::display).
#include "src/mcp/http_upstream.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <nlohmann/json.hpp>
#include <utility>

#include "src/mcp/json_scan.h"
#include "src/mcp/session.h"
#include "toolcache/scope.h"

namespace toolcache::mcp {
namespace {

bool IsTokenChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(c));
  return out;
}

// Valid JSON holds raw CR/LF only as whitespace between tokens: removing
// them makes a message one line without changing its value.
std::string OneLine(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  for (char c : message) {
    if (c != '\n' && c != '\r') out += c;
  }
  return out;
}

// Printable start of a body for error messages.
std::string Excerpt(std::string_view body) {
  constexpr size_t kMax = 200;
  std::string out;
  for (char c : body.substr(0, kMax)) {
    out += (c >= 0x20 && c < 0x7f) ? c : ' ';
  }
  if (body.size() > kMax) out += "...";
  return out;
}

bool Is2xx(int status) { return status >= 200 && status < 300; }

}  // namespace

// ------------------------------------------------------- pure helpers

Result<http::Header> ParseHeaderArg(std::string_view text) {
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return InvalidArgument("header must be 'Name: value' (no ':' found)");
  }
  std::string_view name = Trim(text.substr(0, colon));
  if (name.empty()) return InvalidArgument("header name is empty");
  for (char c : name) {
    if (!IsTokenChar(c)) {
      return InvalidArgument("header name '" + std::string(name) +
                             "' has a character not allowed in a name");
    }
  }
  std::string_view value = Trim(text.substr(colon + 1));
  if (value.find_first_of("\r\n") != std::string_view::npos ||
      value.find('\0') != std::string_view::npos) {
    return InvalidArgument("header '" + std::string(name) +
                           "' has a line break or NUL in its value");
  }
  if (http::IsHopByHop(name)) {
    return InvalidArgument("header '" + std::string(name) +
                           "' is set by the HTTP client itself");
  }
  return http::Header{std::string(name), std::string(value)};
}

Result<std::string> ExpandEnv(
    std::string_view text,
    const std::function<const char*(const char*)>& getenv_fn) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$' || i + 1 >= text.size()) {
      out += text[i];
      continue;
    }
    if (text[i + 1] == '$') {
      out += '$';
      ++i;
      continue;
    }
    if (text[i + 1] != '{') {
      out += '$';
      continue;
    }
    const size_t close = text.find('}', i + 2);
    if (close == std::string_view::npos) {
      return InvalidArgument("'${' without a closing '}'");
    }
    const std::string name(text.substr(i + 2, close - i - 2));
    if (name.empty()) return InvalidArgument("empty variable name in '${}'");
    const char* v = getenv_fn(name.c_str());
    if (v == nullptr) {
      return InvalidArgument("environment variable " + name + " is not set");
    }
    out += v;
    i = close;
  }
  return out;
}

Result<McpEndpoint> ParseMcpEndpoint(std::string_view url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) {
    return InvalidArgument("URL '" + std::string(url) +
                           "' is not absolute (want http:// or https://)");
  }
  if (url.find('#') != std::string_view::npos) {
    return InvalidArgument("URL must not have a fragment");
  }
  const size_t path_start = url.find_first_of("/?", scheme_end + 3);
  std::string_view origin = url.substr(0, path_start);
  std::string_view target = path_start == std::string_view::npos
                                ? std::string_view()
                                : url.substr(path_start);
  if (origin.find('@') != std::string_view::npos) {
    // Not quoted: the userinfo may hold a password.
    return InvalidArgument(
        "the URL must not hold user:password (use --header Authorization)");
  }
  Result<http::Url> parsed = http::ParseUrl(origin);
  if (!parsed.ok()) return parsed.status();
  McpEndpoint e;
  e.origin = std::move(*parsed);
  e.origin.path_prefix.clear();
  e.target = target.empty() ? "/" : std::string(target);
  if (e.target.front() == '?') e.target.insert(0, "/");
  // The path's secrets (Zapier's /s/<secret>, a UUID) never reach a log
  // line, an error message or a key's server name.
  e.display = RedactedUrl(std::string(url.substr(0, scheme_end + 3)) +
                          e.origin.HostHeader() +
                          e.target.substr(0, e.target.find('?')));
  return e;
}

ResponseReader::ResponseReader(uint64_t max_body_bytes)
    : max_body_bytes_(max_body_bytes), sse_parser_(max_body_bytes) {}

void ResponseReader::OnHead(int status, const http::Headers& headers) {
  status_ = status;
  std::string_view type = http::FindHeader(headers, "content-type");
  type = Trim(type.substr(0, type.find(';')));
  content_type_ = Lower(type);
  sse_ = Is2xx(status) && content_type_ == "text/event-stream";
  json_ = content_type_ == "application/json" ||
          (content_type_.size() > 5 &&
           content_type_.compare(content_type_.size() - 5, 5, "+json") == 0);
  session_id_ = std::string(http::FindHeader(headers, "mcp-session-id"));
}

void ResponseReader::EmitOne(std::string_view message, const Emit& emit) {
  ++messages_;
  if (message.find_first_of("\r\n") == std::string_view::npos) {
    emit(message);
  } else {
    emit(OneLine(message));
  }
}

void ResponseReader::OnData(std::string_view bytes, const Emit& emit) {
  if (sse_) {
    sse_parser_.Feed(bytes, [&](const http::SseEvent& e) {
      if (!e.id.empty()) last_event_id_ = e.id;
      // Choice: only "message" events carry JSON-RPC (the spec's only
      // event type); an event without data is a keep-alive or a priming
      // event (the SDK sends one with just an id).
      if ((e.event.empty() || e.event == "message") && !e.data.empty()) {
        EmitOne(e.data, emit);
      }
    });
    return;
  }
  // Error bodies are only quoted: keep their start.
  const uint64_t limit = Is2xx(status_)
                             ? max_body_bytes_
                             : std::min<uint64_t>(max_body_bytes_, 64 << 10);
  if (body_.size() + bytes.size() > limit) {
    body_too_large_ = true;
    bytes = bytes.substr(0, limit - body_.size());
  }
  body_.append(bytes);
}

Status ResponseReader::OnEnd(const Status& transport, const Emit& emit) {
  if (!transport.ok()) return transport;
  if (!Is2xx(status_)) {
    std::string msg = "HTTP " + std::to_string(status_);
    std::string_view reason = http::ReasonPhrase(status_);
    if (!reason.empty()) msg += " " + std::string(reason);
    if (!body_.empty()) msg += ": " + Excerpt(body_);
    return Unavailable(msg);
  }
  if (sse_) {
    if (sse_parser_.mid_event()) {
      return Unavailable("the event stream ended inside an event");
    }
    return Status::Ok();
  }
  std::string_view body = body_;
  while (!body.empty() && std::isspace(static_cast<unsigned char>(body[0]))) {
    body.remove_prefix(1);
  }
  if (body.empty()) return Status::Ok();  // 202 Accepted, 204, empty 200
  if (body_too_large_) {
    return DataLoss("the response body is larger than " +
                    std::to_string(max_body_bytes_) + " bytes");
  }
  if (!json_) {
    return DataLoss("the response has content-type '" + content_type_ +
                    "', not application/json or text/event-stream");
  }
  if (body.front() == '[') {
    nlohmann::json batch = nlohmann::json::parse(body, nullptr, false);
    if (batch.is_discarded() || !batch.is_array()) {
      return DataLoss("the response is not JSON: " + Excerpt(body));
    }
    for (const nlohmann::json& m : batch) EmitOne(m.dump(), emit);
    return Status::Ok();
  }
  std::string line = OneLine(body);
  Result<RawMessage> scanned = ScanMessage(line);
  if (!scanned.ok()) {
    return DataLoss("the response is not JSON (" + scanned.status().message() +
                    "): " + Excerpt(body));
  }
  EmitOne(line, emit);
  return Status::Ok();
}

// ------------------------------------------------- 2026-07-28 headers

namespace {
constexpr std::string_view kSentinelPrefix = "=?base64?";
constexpr std::string_view kSentinelSuffix = "?=";
constexpr char kB64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

bool NeedsBase64(std::string_view s) {
  if (s.empty()) return true;
  if (s.starts_with(kSentinelPrefix) && s.ends_with(kSentinelSuffix)) {
    return true;
  }
  if (s.front() == ' ' || s.front() == '\t' || s.back() == ' ' ||
      s.back() == '\t') {
    return true;
  }
  for (unsigned char c : s) {
    if (c == '\t' || (c >= 32 && c <= 126)) continue;
    return true;
  }
  return false;
}
}  // namespace

std::string EncodeMcpHeaderValue(std::string_view v) {
  if (!NeedsBase64(v)) return std::string(v);
  std::string out(kSentinelPrefix);
  size_t i = 0;
  for (; i + 2 < v.size(); i += 3) {
    const uint32_t n = (uint32_t{static_cast<unsigned char>(v[i])} << 16) |
                       (uint32_t{static_cast<unsigned char>(v[i + 1])} << 8) |
                       uint32_t{static_cast<unsigned char>(v[i + 2])};
    out += kB64[(n >> 18) & 63];
    out += kB64[(n >> 12) & 63];
    out += kB64[(n >> 6) & 63];
    out += kB64[n & 63];
  }
  if (i < v.size()) {
    uint32_t n = uint32_t{static_cast<unsigned char>(v[i])} << 16;
    if (i + 1 < v.size()) {
      n |= uint32_t{static_cast<unsigned char>(v[i + 1])} << 8;
    }
    out += kB64[(n >> 18) & 63];
    out += kB64[(n >> 12) & 63];
    out += i + 1 < v.size() ? kB64[(n >> 6) & 63] : '=';
    out += '=';
  }
  out += kSentinelSuffix;
  return out;
}

std::optional<std::string> DecodeMcpHeaderValue(std::string_view h) {
  if (!(h.size() >= kSentinelPrefix.size() + kSentinelSuffix.size() &&
        h.starts_with(kSentinelPrefix) && h.ends_with(kSentinelSuffix))) {
    return std::string(h);
  }
  std::string_view b =
      h.substr(kSentinelPrefix.size(),
               h.size() - kSentinelPrefix.size() - kSentinelSuffix.size());
  if (b.size() % 4 != 0) return std::nullopt;
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  size_t pad = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    const char c = b[i];
    if (c == '=') {
      if (i + 2 < b.size()) return std::nullopt;
      ++pad;
      continue;
    }
    if (pad > 0) return std::nullopt;
    const char* p = std::strchr(kB64, c);
    if (p == nullptr || c == '\0') return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(p - kB64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

ModernHeaders ModernHeadersOf(std::string_view message) {
  ModernHeaders out;
  nlohmann::json j = nlohmann::json::parse(message, nullptr, false);
  if (!j.is_object() || !j.contains("method") || !j["method"].is_string()) {
    return out;
  }
  const nlohmann::json* params =
      j.contains("params") && j["params"].is_object() ? &j["params"] : nullptr;
  if (params == nullptr || !params->contains("_meta") ||
      !(*params)["_meta"].is_object()) {
    return out;
  }
  const nlohmann::json& meta = (*params)["_meta"];
  auto v = meta.find("io.modelcontextprotocol/protocolVersion");
  // Choice: revisions from 2026-07-28 on are the stateless era (the SDK's
  // isModernProtocolVersion: version >= FIRST_MODERN_PROTOCOL_VERSION).
  if (v == meta.end() || !v->is_string() ||
      v->get<std::string>() < "2026-07-28") {
    return out;
  }
  out.modern = true;
  out.version = v->get<std::string>();
  out.method = j["method"].get<std::string>();
  const char* field = out.method == "tools/call" || out.method == "prompts/get"
                          ? "name"
                      : out.method == "resources/read" ? "uri"
                                                       : nullptr;
  if (field != nullptr && params->contains(field) &&
      (*params)[field].is_string()) {
    out.name = (*params)[field].get<std::string>();
  }
  return out;
}

// ------------------------------------------------------------ upstream

struct HttpUpstream::Outgoing {
  std::string line;
  MessageKind kind = MessageKind::kOther;
  std::string raw_id;  // requests
  std::string nid;     // NormalizeId(raw_id)
  std::string method;
  bool is_initialize = false;
  // 0: the session's; 1: a re-initialization's initialize; 2: its
  // notifications/initialized. Internal answers never reach the session.
  int internal = 0;
  bool retried = false;       // sent again after a session expiry
  bool sent_session = false;  // carried Mcp-Session-Id
  bool answered = false;
  std::string internal_result;  // internal == 1: the initialize result
  ModernHeaders modern;         // a 2026-07-28 message: its headers
};

class HttpUpstream::PostSink final : public http::ResponseSink {
 public:
  PostSink(HttpUpstream* up, std::shared_ptr<Outgoing> m, uint64_t token)
      : up_(up), m_(std::move(m)), token_(token) {}
  void OnHead(int status, const http::Headers& headers) override {
    reader_.OnHead(status, headers);
    // The session id comes with the initialize answer, before any later
    // message can be sent.
    if (m_->is_initialize || m_->internal == 1) {
      if (!reader_.session_id().empty()) {
        up_->session_id_ = std::string(reader_.session_id());
      }
    }
  }
  bool OnData(std::string_view data) override {
    reader_.OnData(data, [this](std::string_view msg) { Deliver(msg); });
    return true;
  }
  void OnEnd(const Status& status) override {
    Status st =
        reader_.OnEnd(status, [this](std::string_view msg) { Deliver(msg); });
    up_->calls_.erase(token_);
    up_->OnPostEnd(m_, reader_, st);
  }

 private:
  void Deliver(std::string_view msg) {
    if (m_->kind == MessageKind::kRequest && !m_->answered) {
      Result<RawMessage> r = ScanMessage(msg);
      if (r.ok() && r->kind() == MessageKind::kResponse &&
          NormalizeId(r->id) == m_->nid) {
        m_->answered = true;
        if ((m_->is_initialize || m_->internal == 1) && !r->result.empty()) {
          std::string v =
              DecodeString(FindMember(r->result, "protocolVersion"));
          if (!v.empty()) up_->protocol_version_ = v;
          if (m_->internal == 1) m_->internal_result = std::string(r->result);
        }
        if (m_->internal != 0) {
          if (!r->error.empty()) {
            m_->internal_result.clear();
            spdlog::warn(
                "re-initializing the MCP session: the server "
                "answered with an error: {}",
                Excerpt(r->error));
          }
          return;  // never forwarded
        }
      }
    }
    // A message on a request's own stream concerns that request (a server
    // request there is part of answering it: Session::OnServerLineOnStream).
    up_->to_session_(msg, m_->kind == MessageKind::kRequest
                              ? std::string_view(m_->raw_id)
                              : std::string_view());
  }

  HttpUpstream* up_;
  std::shared_ptr<Outgoing> m_;
  uint64_t token_;
  ResponseReader reader_;
};

class HttpUpstream::GetSink final : public http::ResponseSink {
 public:
  explicit GetSink(HttpUpstream* up) : up_(up) {}
  void OnHead(int status, const http::Headers& headers) override {
    reader_.OnHead(status, headers);
    if (reader_.is_sse()) {
      up_->get_backoff_ = 1;  // a working stream: reconnect quickly
      ++up_->counters_.get_streams;
      spdlog::info("opened the GET event stream of {}",
                   up_->options_.endpoint.display);
    }
    up_->OnGetHead(reader_.is_sse(), status);
  }
  bool OnData(std::string_view data) override {
    reader_.OnData(data,
                   [this](std::string_view msg) { up_->to_session_(msg, ""); });
    if (!reader_.last_event_id().empty()) {
      up_->last_event_id_ = reader_.last_event_id();
    }
    return true;
  }
  void OnEnd(const Status& status) override {
    Status st = reader_.OnEnd(
        status, [this](std::string_view msg) { up_->to_session_(msg, ""); });
    up_->OnGetEnd(reader_.status(), st);
  }

 private:
  HttpUpstream* up_;
  ResponseReader reader_;
};

HttpUpstream::HttpUpstream(HttpUpstreamOptions options, http::Client* client,
                           http::Loop* loop, ToSession to_session, OnGap on_gap)
    : options_(std::move(options)),
      client_(client),
      loop_(loop),
      to_session_(std::move(to_session)),
      on_gap_(std::move(on_gap)) {}

HttpUpstream::~HttpUpstream() {
  *alive_ = false;
  if (get_retry_cancel_) get_retry_cancel_();
  if (get_call_) get_call_->Cancel();
  for (auto& [token, call] : calls_) call->Cancel();
}

http::Headers HttpUpstream::RequestHeaders(bool json_body,
                                           bool with_session) const {
  http::Headers h;
  if (json_body) {
    h.push_back({"content-type", "application/json"});
    h.push_back({"accept", "application/json, text/event-stream"});
  } else {
    h.push_back({"accept", "text/event-stream"});
  }
  if (with_session && !session_id_.empty()) {
    h.push_back({"mcp-session-id", session_id_});
  }
  if (with_session && !protocol_version_.empty()) {
    h.push_back({"mcp-protocol-version", protocol_version_});
  }
  for (const http::Header& x : options_.extra_headers) h.push_back(x);
  return h;
}

void HttpUpstream::Send(std::string_view line) {
  auto m = std::make_shared<Outgoing>();
  m->line = std::string(line);
  Result<RawMessage> r = ScanMessage(m->line);
  if (r.ok()) {
    m->kind = r->kind();
    m->method = r->method_name;
    if (m->kind == MessageKind::kRequest) {
      m->raw_id = std::string(r->id);
      m->nid = NormalizeId(r->id);
      if (m->method == "initialize") {
        m->is_initialize = true;
        init_params_ = std::string(r->params);
      }
    }
    if (m->kind == MessageKind::kRequest ||
        m->kind == MessageKind::kNotification) {
      m->modern = ModernHeadersOf(m->line);
      if (m->modern.modern) modern_version_ = m->modern.version;
    }
  }
  if (shutting_down_) {
    Fail(*m, kConnectionClosed, "toolcache is shutting down");
    return;
  }
  if (gate_) {
    held_.push_back(std::move(m));
    return;
  }
  if (need_reinit_ && !m->is_initialize) {
    held_.push_back(std::move(m));
    Reinitialize();
    return;
  }
  Post(std::move(m));
}

void HttpUpstream::Post(std::shared_ptr<Outgoing> m) {
  if (m->is_initialize) {
    // Choice: a client's initialize (first or later) starts a new server
    // session: it goes without the old session id.
    gate_ = true;
    need_reinit_ = false;
    session_id_.clear();
    protocol_version_.clear();
    initialized_ = false;
  }
  const bool with_session = !m->is_initialize && m->internal != 1;
  m->sent_session = with_session && !session_id_.empty();
  m->answered = false;
  http::ClientRequest req;
  req.method = "POST";
  req.target = options_.endpoint.target;
  if (m->modern.modern || (!modern_version_.empty() && session_id_.empty() &&
                           m->kind == MessageKind::kNotification &&
                           !m->is_initialize && m->internal == 0)) {
    // 2026-07-28: no session; the revision and method in headers.
    req.headers = RequestHeaders(true, false);
    req.headers.push_back({"mcp-protocol-version", m->modern.modern
                                                       ? m->modern.version
                                                       : modern_version_});
    req.headers.push_back({"mcp-method", EncodeMcpHeaderValue(m->method)});
    if (!m->modern.name.empty()) {
      req.headers.push_back({"mcp-name", EncodeMcpHeaderValue(m->modern.name)});
    }
    m->sent_session = false;
  } else {
    req.headers = RequestHeaders(true, with_session);
  }
  req.body = m->line;
  ++counters_.posts;
  ++active_;
  const uint64_t token = ++next_token_;
  auto sink = std::make_shared<PostSink>(this, m, token);
  calls_[token] =
      client_->Start(loop_, options_.endpoint.origin, std::move(req), sink);
}

bool HttpUpstream::SessionExpired(const Outgoing& m,
                                  const ResponseReader& r) const {
  if (!m.sent_session || m.internal != 0) return false;
  if (r.status() == 404) return true;
  return r.status() == 400 &&
         Lower(r.body()).find("session") != std::string::npos;
}

void HttpUpstream::OnPostEnd(const std::shared_ptr<Outgoing>& m,
                             ResponseReader& reader, const Status& st) {
  --active_;
  if (!st.ok()) ++counters_.failed_posts;
  if (shutting_down_ && m->internal == 0) {
    // Shutdown cancels calls; one that ended meanwhile still answers.
    if (m->kind == MessageKind::kRequest && !m->answered) {
      Fail(*m, kConnectionClosed, "toolcache is shutting down");
    }
    return;
  }
  if (m->internal == 1) {
    if (st.ok() && m->answered && !m->internal_result.empty()) {
      auto n = std::make_shared<Outgoing>();
      n->line = R"({"jsonrpc":"2.0","method":"notifications/initialized"})";
      n->kind = MessageKind::kNotification;
      n->method = "notifications/initialized";
      n->internal = 2;
      Post(std::move(n));
      return;
    }
    OnReinitialized(
        st.ok() ? Unavailable("the server gave no initialize result") : st);
    return;
  }
  if (m->internal == 2) {
    OnReinitialized(st);
    return;
  }
  if (SessionExpired(*m, reader) && !m->retried) {
    // Session ids are bearer-like (whoever has one speaks in the session):
    // never logged.
    spdlog::info(
        "the server no longer knows the session (HTTP {}): re-initializing",
        reader.status());
    m->retried = true;
    held_.push_front(m);
    if (!gate_) Reinitialize();
    return;
  }
  if (m->is_initialize) {
    gate_ = false;
    if (st.ok() && m->answered) {
      spdlog::info("initialized {} ({}, protocol {})",
                   options_.endpoint.display,
                   session_id_.empty() ? "no session id" : "with a session id",
                   protocol_version_);
    }
  }
  if (m->method == "notifications/initialized" && st.ok()) {
    initialized_ = true;
    OpenGetStream();
  }
  if (m->kind == MessageKind::kRequest && !m->answered) {
    if (!st.ok() && !Is2xx(reader.status()) && reader.status() != 0) {
      // An HTTP error whose body is the server's JSON-RPC error for this
      // request: pass it on as the answer.
      std::string body = OneLine(reader.body());
      Result<RawMessage> r = ScanMessage(body);
      if (r.ok() && r->kind() == MessageKind::kResponse && !r->error.empty() &&
          NormalizeId(r->id) == m->nid) {
        m->answered = true;
        to_session_(body, m->raw_id);
      }
    }
    if (!m->answered) {
      if (!st.ok()) {
        const bool garbage = st.code() == StatusCode::kDataLoss;
        Fail(*m, garbage ? kInternalError : kConnectionClosed,
             "toolcache: " + options_.endpoint.display + ": " + st.message());
      } else {
        Fail(*m, kInternalError,
             "toolcache: " + options_.endpoint.display + " answered HTTP " +
                 std::to_string(reader.status()) +
                 " without a response to this request");
      }
    }
  } else if (!st.ok() && m->kind != MessageKind::kRequest) {
    spdlog::warn("{} to {} failed: {}",
                 m->method.empty() ? std::string("a response") : m->method,
                 options_.endpoint.display, st.message());
  }
  if (!gate_) Release();
}

void HttpUpstream::Fail(const Outgoing& m, int code, const std::string& why) {
  if (m.kind != MessageKind::kRequest) {
    spdlog::warn("dropped {}: {}", m.method.empty() ? "a response" : m.method,
                 why);
    return;
  }
  ++counters_.synthesized_errors;
  std::string message =
      why.rfind("toolcache", 0) == 0 ? why : "toolcache: " + why;
  spdlog::info("answering request {} ({}) with an error: {}", m.raw_id,
               m.method, message);
  std::string line =
      R"({"jsonrpc":"2.0","id":)" + m.raw_id + R"(,"error":{"code":)" +
      std::to_string(code) + R"(,"message":)" +
      nlohmann::json(message).dump(-1, ' ', false,
                                   nlohmann::json::error_handler_t::replace) +
      "}}";
  to_session_(line, m.raw_id);
}

void HttpUpstream::Reinitialize() {
  gate_ = true;
  ++counters_.reinitializations;
  if (get_retry_cancel_) {
    get_retry_cancel_();
    get_retry_cancel_ = nullptr;
  }
  if (get_call_) {
    get_call_->Cancel();
    get_call_.reset();
  }
  initialized_ = false;
  session_id_.clear();
  if (init_params_.empty()) {
    OnReinitialized(FailedPrecondition("the client never initialized"));
    return;
  }
  auto m = std::make_shared<Outgoing>();
  m->raw_id = "\"toolcache-reinit-" + std::to_string(++reinit_seq_) + "\"";
  m->nid = NormalizeId(m->raw_id);
  m->kind = MessageKind::kRequest;
  m->method = "initialize";
  m->internal = 1;
  m->line = R"({"jsonrpc":"2.0","id":)" + m->raw_id +
            R"(,"method":"initialize","params":)" + init_params_ + "}";
  Post(std::move(m));
}

void HttpUpstream::OnReinitialized(const Status& st) {
  gate_ = false;
  if (st.ok()) {
    need_reinit_ = false;
    initialized_ = true;
    spdlog::info("re-initialized {}", options_.endpoint.display);
    OpenGetStream();
    Release();
    return;
  }
  need_reinit_ = true;
  spdlog::warn("re-initializing the MCP session with {} failed: {}",
               options_.endpoint.display, st.message());
  std::deque<std::shared_ptr<Outgoing>> held;
  held.swap(held_);
  for (const auto& m : held) {
    Fail(*m, kConnectionClosed,
         "toolcache: " + options_.endpoint.display +
             ": the server session expired and re-initializing it failed: " +
             st.message());
  }
}

void HttpUpstream::Release() {
  while (!gate_ && !held_.empty()) {
    std::shared_ptr<Outgoing> m = std::move(held_.front());
    held_.pop_front();
    if (need_reinit_ && !m->is_initialize) {
      held_.push_front(std::move(m));
      Reinitialize();
      return;
    }
    Post(std::move(m));
  }
}

void HttpUpstream::OpenGetStream() {
  if (!options_.open_get_stream || !get_supported_ || shutting_down_ ||
      get_call_ || !initialized_ || gate_) {
    return;
  }
  if (get_retry_cancel_) {
    get_retry_cancel_();
    get_retry_cancel_ = nullptr;
  }
  http::ClientRequest req;
  req.method = "GET";
  req.target = options_.endpoint.target;
  req.headers = RequestHeaders(false, true);
  get_resuming_ = !last_event_id_.empty();
  if (get_resuming_) {
    req.headers.push_back({"last-event-id", last_event_id_});
  }
  get_call_ = client_->Start(loop_, options_.endpoint.origin, std::move(req),
                             std::make_shared<GetSink>(this));
}

void HttpUpstream::Gap(std::string_view why) {
  spdlog::debug("{}: {}", options_.endpoint.display, why);
  if (on_gap_) on_gap_(why);
}

void HttpUpstream::OnGetHead(bool sse, int status) {
  if (sse) {
    get_open_ = true;
    if (get_resuming_) {
      // Choice: an event stream in answer to Last-Event-ID is taken as the
      // resumption the spec describes (the server replays what followed).
      get_unresumed_ = false;
    } else if (get_unresumed_) {
      get_unresumed_ = false;
      Gap("the GET event stream reopened without resuming: notifications "
          "the server sent while it was closed are lost");
    }
    return;
  }
  if (get_resuming_ && status != 405) {
    // The server will not replay from that id (it kept no events, or no
    // longer knows the stream): the next attempt opens a fresh stream.
    last_event_id_.clear();
    get_unresumed_ = true;
    Gap("the server refused to resume the GET event stream (HTTP " +
        std::to_string(status) +
        "): notifications it sent while it was closed are lost");
  }
}

void HttpUpstream::OnGetEnd(int status, const Status& st) {
  get_call_.reset();
  const bool was_open = get_open_;
  get_open_ = false;
  if (shutting_down_) return;
  if (was_open && last_event_id_.empty()) {
    // Nothing to resume from: what the server sends until a new stream
    // opens is lost (the SDK's closeStandaloneSSEStream polling, a proxy's
    // idle timeout, a network blip). The reopened stream invalidates
    // (OnGetHead). Choice: a stream the server ended itself invalidates now
    // too (the server is alive and may announce a change before the
    // reopen); one cut by a transport error (the server died or is
    // unreachable) does not: a server that is down announces nothing, and
    // cached answers keep being served while it is down
    // (e2e_mcp_url "server killed mid-call").
    get_unresumed_ = true;
    if (st.ok()) {
      Gap("the GET event stream ended and cannot be resumed (it carried no "
          "event id): notifications may be lost until it reopens");
    } else {
      spdlog::debug(
          "{}: the GET event stream was cut ({}); the server's entries are "
          "invalidated when it reopens",
          options_.endpoint.display, st.message());
    }
  }
  if (status == 405) {
    get_supported_ = false;
    spdlog::info("{} offers no GET event stream (HTTP 405)",
                 options_.endpoint.display);
    return;
  }
  if (!st.ok()) {
    spdlog::debug("the GET event stream ended: {}", st.message());
  }
  const double delay = get_backoff_;
  get_backoff_ = std::min(30.0, get_backoff_ * 2);
  std::weak_ptr<bool> alive = alive_;
  get_retry_cancel_ = http::RunAfter(loop_, delay, [this, alive] {
    auto a = alive.lock();
    if (!a || !*a) return;
    get_retry_cancel_ = nullptr;
    OpenGetStream();
  });
}

void HttpUpstream::Shutdown(double timeout_seconds,
                            std::function<void()> done) {
  shutting_down_ = true;
  if (get_retry_cancel_) {
    get_retry_cancel_();
    get_retry_cancel_ = nullptr;
  }
  if (get_call_) {
    get_call_->Cancel();
    get_call_.reset();
  }
  auto calls = std::move(calls_);
  calls_.clear();
  for (auto& [token, call] : calls) call->Cancel();
  active_ = 0;
  held_.clear();  // their requests are the session's to fail
  if (session_id_.empty()) {
    http::Post(loop_, std::move(done));  // always later: see the header
    return;
  }
  // DELETE ends the server's session; bounded by `timeout_seconds`.
  struct State {
    std::function<void()> done;
    std::function<void()> cancel_timer;
    std::shared_ptr<http::Call> call;
  };
  auto state = std::make_shared<State>();
  state->done = std::move(done);
  auto finish = [state] {
    if (!state->done) return;
    auto d = std::move(state->done);
    state->done = nullptr;
    auto cancel_timer = std::move(state->cancel_timer);
    state->cancel_timer = nullptr;
    if (cancel_timer) cancel_timer();
    if (state->call) state->call->Cancel();
    state->call.reset();
    d();
  };
  class DeleteSink final : public http::ResponseSink {
   public:
    explicit DeleteSink(std::function<void(int)> end) : end_(std::move(end)) {}
    void OnHead(int status, const http::Headers&) override { status_ = status; }
    bool OnData(std::string_view) override { return true; }
    void OnEnd(const Status&) override { end_(status_); }

   private:
    std::function<void(int)> end_;
    int status_ = 0;
  };
  http::ClientRequest req;
  req.method = "DELETE";
  req.target = options_.endpoint.target;
  req.headers = RequestHeaders(false, true);
  const std::string display = options_.endpoint.display;
  state->cancel_timer = http::RunAfter(loop_, timeout_seconds, finish);
  state->call = client_->Start(
      loop_, options_.endpoint.origin, std::move(req),
      std::make_shared<DeleteSink>([finish, display](int status) {
        spdlog::info("ended the MCP session with {} (DELETE: HTTP {})", display,
                     status);
        finish();
      }));
}

}  // namespace toolcache::mcp
