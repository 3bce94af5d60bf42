// Invariants:
// - The bytes the upstream receives are the client's body, untouched; only
//   hop-by-hop headers change (and Accept-Encoding on observed routes, so
//   the proxy can read the response; see Choice below). Exception: with a
//   promptCache switch on, an observed request's body is the PromptCache's
//   rewrite (same meaning; prompt_cache.h), decided in one hook below.
// - An Exchange (one request) lives on its connection's loop; it answers
//   the client exactly once (Send, or Start..Finish, or Abort) and hears
//   from the upstream call until OnEnd or until it cancels the call (the
//   client left).
// - Tool calls of a response are peeked only when the response is whole:
//   a 2xx JSON body that parsed, or a stream whose terminal event arrived
//   without an error. A truncated or errored stream changes nothing.
// - Credentials are read only to hash them into a scope; they are never
//   logged, stored or put in metrics.
// - One request, two scopes, computed once in Handle (scope.h): result
//   entries in the principal's scope (or global with `proxy.scope:
//   global`), conversation state, offloaded results and the prompt cache's
//   bookkeeping always in the principal's.
// Choice: on observed routes the proxy asks the upstream for identity
// encoding (it must read the body); other routes pass Accept-Encoding on.
#include <spdlog/spdlog.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "src/http/browser_guard.h"
#include "src/http/http.h"
#include "src/http/sse.h"
#include "src/llm/observer.h"
#include "src/llm/stream_relay.h"
#include "src/llm/tool_loop.h"
#include "src/llm/wire.h"
#include "src/metrics/metrics.h"
#include "src/runtime/startup/admin.h"
#include "src/runtime/stats.h"
#include "toolcache/llm_proxy.h"
#include "toolcache/scope.h"
#include "toolcache/store.h"

namespace toolcache {
namespace {

using http::Header;
using http::Headers;
using llm::Api;

double Now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

enum class Provider { kAnthropic, kOpenAi };

enum class Route {
  kObserved,     // one of the three LLM APIs
  kPassThrough,  // anything else: forwarded untouched
  kAdmin,        // /metrics, /toolcache/stats, /dashboard (src/runtime/startup)
  kBreaks,
  kUpgrade,  // a protocol upgrade (WebSocket): refused with 426
};

struct RouteInfo {
  Route route = Route::kPassThrough;
  runtime::AdminRoute admin = runtime::AdminRoute::kMetrics;  // for kAdmin
  Api api = Api::kAnthropicMessages;
  Provider provider = Provider::kAnthropic;
};

// The provider a request is for: by path, then by the Anthropic headers.
Provider ProviderOf(std::string_view path, const Headers& headers) {
  if (path.substr(0, 12) == "/v1/messages" ||
      path.substr(0, 11) == "/v1/models" ||
      path.substr(0, 11) == "/v1/complete") {
    if (path.substr(0, 11) == "/v1/models" &&
        http::FindHeader(headers, "anthropic-version").empty() &&
        http::FindHeader(headers, "x-api-key").empty()) {
      return Provider::kOpenAi;
    }
    return Provider::kAnthropic;
  }
  if (!http::FindHeader(headers, "anthropic-version").empty()) {
    return Provider::kAnthropic;
  }
  return Provider::kOpenAi;
}

// True when an Upgrade header's protocol list names WebSocket (RFC 9110
// 7.8: comma-separated, case-insensitive). Other upgrades (h2c, which curl
// offers on http:// URLs) are hop-by-hop offers the proxy just drops.
bool UpgradesToWebSocket(std::string_view upgrade) {
  while (!upgrade.empty()) {
    const size_t comma = upgrade.find(',');
    std::string_view p = upgrade.substr(0, comma);
    while (!p.empty() && (p.front() == ' ' || p.front() == '\t')) {
      p.remove_prefix(1);
    }
    p = p.substr(0, p.find('/'));
    while (!p.empty() && (p.back() == ' ' || p.back() == '\t')) {
      p.remove_suffix(1);
    }
    if (http::EqualsIgnoreCase(p, "websocket")) return true;
    if (comma == std::string_view::npos) break;
    upgrade.remove_prefix(comma + 1);
  }
  return false;
}

RouteInfo RouteOf(std::string_view method, std::string_view path,
                  const Headers& headers) {
  RouteInfo r;
  r.provider = ProviderOf(path, headers);
  if (UpgradesToWebSocket(http::FindHeader(headers, "upgrade"))) {
    r.route = Route::kUpgrade;
  } else if (std::optional<runtime::AdminRoute> a =
                 runtime::AdminRouteAt(path, /*dashboard=*/true);
             method == "GET" && a) {
    r.route = Route::kAdmin;
    r.admin = *a;
  } else if (method == "GET" && path == "/toolcache/breaks") {
    r.route = Route::kBreaks;
  } else if (method == "POST" && path == "/v1/messages") {
    r.route = Route::kObserved;
    r.api = Api::kAnthropicMessages;
    r.provider = Provider::kAnthropic;
  } else if (method == "POST" && path == "/v1/chat/completions") {
    r.route = Route::kObserved;
    r.api = Api::kOpenAiChat;
    r.provider = Provider::kOpenAi;
  } else if (method == "POST" && path == "/v1/responses") {
    r.route = Route::kObserved;
    r.api = Api::kOpenAiResponses;
    r.provider = Provider::kOpenAi;
  }
  return r;
}

std::string JsonString(std::string_view s) {
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// An error body in the provider's own shape.
std::string ErrorBody(Provider p, int status, std::string_view message) {
  if (p == Provider::kAnthropic) {
    std::string_view type = "api_error";
    switch (status) {
      case 400:
        type = "invalid_request_error";
        break;
      case 401:
        type = "authentication_error";
        break;
      case 402:
        type = "billing_error";
        break;
      case 403:
        type = "permission_error";
        break;
      case 404:
        type = "not_found_error";
        break;
      case 413:
        type = "request_too_large";
        break;
      case 429:
        type = "rate_limit_error";
        break;
      case 504:
        type = "timeout_error";
        break;
      case 529:
        type = "overloaded_error";
        break;
      default:
        break;
    }
    // `request_id` is the provider's id of its request: none here (the
    // proxy answered itself), so null, as its ErrorResponse type allows.
    return "{\"type\":\"error\",\"error\":{\"type\":\"" + std::string(type) +
           "\",\"message\":" + JsonString(message) + "},\"request_id\":null}";
  }
  std::string_view type =
      status < 500 ? "invalid_request_error" : "server_error";
  return "{\"error\":{\"message\":" + JsonString(message) + ",\"type\":\"" +
         std::string(type) + "\",\"param\":null,\"code\":null}}";
}

// The request's principal (include/toolcache/scope.h): a keyed digest of
// every header that authenticates or scopes it upstream ("none" without
// one), never the credential itself. A header counts when its name looks
// like a credential's (LooksLikeCredentialHeader: x-api-key,
// authorization, api-key, openai-organization, openai-project, and an AI
// gateway's own, such as cf-aig-authorization, x-portkey-api-key,
// x-goog-api-key) or the operator named it (`proxy.credentialHeaders`).
// Session 18: only the first five counted, so every caller behind a
// gateway that authenticates with its own header was the principal
// "none" and read the others' results.
//
// Anthropic takes an API key as `x-api-key: K` or as `authorization: Bearer
// K` (the 1.x SDKs, API version 2026-10-21, send the latter; Claude Code and
// the 0.x SDKs the former): one key, one principal. So on an Anthropic
// request that has no x-api-key, `authorization: Bearer K` counts as
// `x-api-key: K`: a client that moves to the new SDKs keeps its entries and
// conversation state, and every x-api-key principal's digest is unchanged.
// Choice: only the exact `Bearer ` form (RFC 6750 scheme, case-insensitive)
// is mapped; any other authorization value, and both headers together (the
// API then authenticates with x-api-key), stay distinct principals.
// Choice: every occurrence of a repeated header counts (more material can
// only split a principal, never merge two); names are lowercased, values
// taken as sent.
// Session 19 (attackK finding 3): the query string's credential
// parameters count too (AppendQueryCredentials: `?subscription-key=`,
// `?key=`, `?api_key=`, ... and `proxy.credentialQuery`), as `?<name>`;
// before, every caller of a gateway that authenticates by the query was
// the principal "none". A request without such a parameter keeps its
// digest. The query itself is never logged (only the path is).
// Runs once per observed request: one pass over the headers and the
// query, and a string copy only for what counts.
std::string CredentialOf(Provider provider, std::string_view target,
                         const Headers& headers,
                         const std::vector<std::string>& extra,
                         const std::vector<std::string>& extra_query) {
  std::vector<Credential> parts;
  AppendQueryCredentials(target, extra_query, &parts);
  const bool anthropic_bearer = provider == Provider::kAnthropic &&
                                http::FindHeader(headers, "x-api-key").empty();
  for (const http::Header& h : headers) {
    if (h.value.empty()) continue;
    bool counts = LooksLikeCredentialHeader(h.name);
    for (size_t i = 0; !counts && i < extra.size(); ++i) {
      counts = http::EqualsIgnoreCase(h.name, extra[i]);
    }
    if (!counts) continue;
    const std::string_view v = h.value;
    if (anthropic_bearer && http::EqualsIgnoreCase(h.name, "authorization") &&
        v.size() > 7 && http::EqualsIgnoreCase(v.substr(0, 7), "Bearer ")) {
      parts.push_back({"x-api-key", std::string(v.substr(7))});
      continue;
    }
    Credential c{h.name, h.value};
    for (char& ch : c.name) {
      if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    }
    parts.push_back(std::move(c));
  }
  return parts.empty() ? "none" : CredentialDigest(std::move(parts));
}

// Who reads GET /toolcache/breaks (session 18): the principals of the key
// the caller presents, as an observed request with those headers would be
// scoped (under either provider's reading: `authorization: Bearer K` is
// the Anthropic key K and the OpenAI key K, and a caller holding K can be
// either). Without a credential, none: the counts only.
BreaksReader BreaksReaderOf(std::string_view target, const Headers& headers,
                            const std::vector<std::string>& extra,
                            const std::vector<std::string>& extra_query) {
  BreaksReader r;
  for (Provider p : {Provider::kAnthropic, Provider::kOpenAi}) {
    std::string credential =
        CredentialOf(p, target, headers, extra, extra_query);
    if (credential == "none") return r;
    std::string scope = ScopeOf({.credential = std::move(credential)});
    if (r.owners.empty() || r.owners.front() != scope) {
      r.owners.push_back(std::move(scope));
    }
  }
  return r;
}

// The result entries' scope: the principal's, or global on request
// (`proxy.scope: global`, to share entries with `toolcache mcp`).
// Conversation state and offloaded results always keep the principal's.
//
// The results of tools that run on the client (agent tools, `mcp__*`) are
// owned by the client's workspace too: the credential plus a keyed digest of
// the installation and working folder the request names (agent_tools.h
// FindClientWorkspace); unknown when it names none, and then such a tool is
// never served.
//
// `state_scope` (in: the credential's) becomes the credential plus the
// workspace when the request names one, in every mode: the conversation
// state holds hidden turns with client-tool results, and two workspaces
// under one key can have byte-identical prefixes (session 17).
llm::ToolScopes ResultScopesOf(const std::string& credential,
                               std::string* state_scope, CredentialScope mode,
                               const Headers& headers,
                               const llm::ParsedRequest& parsed,
                               std::string_view body) {
  // A coding agent runs every built-in tool on its machine, the ones the
  // agent table does not name yet too.
  const std::string_view turn_metadata =
      http::FindHeader(headers, "x-codex-turn-metadata");
  const bool agent =
      llm::AgentClient(http::FindHeader(headers, "user-agent"),
                       http::FindHeader(headers, "x-app"),
                       http::FindHeader(headers, "originator"), turn_metadata);
  // A client that names its workspace itself (`x-toolcache-workspace`, any
  // stable id of machine and folder; not forwarded) is taken at its word;
  // otherwise what the agent sends.
  std::string workspace;
  if (std::string_view named =
          http::FindHeader(headers, "x-toolcache-workspace");
      !named.empty()) {
    workspace = CredentialDigest({{"named", std::string(named)}});
  } else {
    llm::ClientWorkspace w =
        llm::FindClientWorkspace(body, parsed, turn_metadata);
    if (w.known()) {
      workspace = CredentialDigest({{"installation", std::move(w.installation)},
                                    {"folder", std::move(w.folder)}});
    }
  }
  std::string credential_scope = *state_scope;
  std::optional<std::string> client;
  if (!workspace.empty()) {
    client = ScopeOf({.credential = credential, .workspace = workspace});
    *state_scope = *client;
  }
  // Choice: `scope: global` is the operator's decision to share every
  // result (with `toolcache mcp` too): no workspace then, as before; what
  // runs on the client is still not served by `serve: true`.
  const bool global = mode == CredentialScope::kGlobal;
  llm::ToolScopes scopes =
      global ? llm::ToolScopes("")
             : llm::ToolScopes(std::move(credential_scope), std::move(client));
  // The observer's table stays per key under `global` too (session 19).
  if (global) scopes.principal = std::move(credential_scope);
  scopes.agent = agent;
  // Claude Code's Bash keeps its directory between calls (session 18).
  scopes.shell_moved_at = llm::FirstShellMove(parsed);
  return scopes;
}

// What the proxy keeps across requests: options, cache, metrics, clients.
struct Shared {
  LlmProxyOptions options;
  http::Url anthropic;
  http::Url openai;
  std::unique_ptr<http::Client> client;
  metrics::Registry registry;
  std::unique_ptr<llm::Observer> observer;
  // The server-side tool loop (issue 13; src/llm/tool_loop.h); null when
  // serving is off. Its conversation state lives in options.store, or in
  // own_store (memory) when none is given.
  std::unique_ptr<Store> own_store;
  std::unique_ptr<llm::Offloader> offload;  // null when offload is off
  std::unique_ptr<llm::ToolLoop> loop;
  metrics::CounterFamily* offloaded = nullptr;
  metrics::CounterFamily* served = nullptr;
  metrics::CounterFamily* spliced = nullptr;
  metrics::CounterFamily* serve_bypass = nullptr;
  metrics::HistogramFamily* saved_latency = nullptr;
  std::unique_ptr<PromptCache> prompt;  // null: no promptCache switch on
  SystemClock clock;
  http::Server* server = nullptr;
  std::unique_ptr<http::BrowserGuard> guard;  // every request passes it

  metrics::CounterFamily* requests = nullptr;
  metrics::CounterFamily* errors = nullptr;
  metrics::CounterFamily* streams = nullptr;
  metrics::CounterFamily* observed = nullptr;
  metrics::HistogramFamily* overhead = nullptr;
  metrics::HistogramFamily* upstream = nullptr;
  metrics::HistogramFamily* first_byte = nullptr;
  metrics::HistogramFamily* stages = nullptr;

  std::atomic<uint64_t> in_flight{0};

  const http::Url& UrlFor(Provider p) const {
    return p == Provider::kAnthropic ? anthropic : openai;
  }
  void Error(std::string_view kind) { errors->Get({kind})->Add(); }

  // Choice: the series every request touches are looked up once per label
  // (the three APIs and passthrough, see Slot) and kept: series are never
  // erased (metrics.cc), and these lookups were ~3,200 instructions of a
  // 2 KB request (callgrind). Filled on first use, so /metrics shows the
  // same series as before.
  struct HotSeries {
    std::atomic<metrics::Histogram*> first_byte{nullptr};
    std::atomic<metrics::Histogram*> upstream{nullptr};
    std::atomic<metrics::Histogram*> overhead_request{nullptr};
    std::atomic<metrics::Histogram*> overhead_response{nullptr};
    std::atomic<metrics::Counter*> requests_2xx{nullptr};
    std::atomic<metrics::Counter*> streams_complete{nullptr};
    std::atomic<metrics::Counter*> observed_calls{nullptr};
    std::atomic<metrics::Counter*> would_hit{nullptr};
    // llmhop: the per-request stage series (RecordStages) and the observed
    // results counters (Handle): seven label lookups per request before.
    std::array<std::atomic<metrics::Histogram*>, 6> stage{};
    std::atomic<metrics::Counter*> observed_results{nullptr};
    std::atomic<metrics::Counter*> observed_recorded{nullptr};
  };
  std::array<HotSeries, 4> hot;
  // 0..2: the APIs (Api's values); 3: passthrough.
  static size_t Slot(bool observed, Api api) {
    return observed ? static_cast<size_t>(api) : 3;
  }
  template <typename T, typename Family>
  static T* Cached(std::atomic<T*>& slot, Family* family,
                   std::initializer_list<std::string_view> labels) {
    T* p = slot.load(std::memory_order_acquire);
    if (p == nullptr) {
      p = family->Get(labels);
      slot.store(p, std::memory_order_release);
    }
    return p;
  }
};

PromptApi PromptApiOf(Api api) {
  switch (api) {
    case Api::kAnthropicMessages:
      return PromptApi::kAnthropicMessages;
    case Api::kOpenAiChat:
      return PromptApi::kOpenAiChat;
    case Api::kOpenAiResponses:
      return PromptApi::kOpenAiResponses;
  }
  return PromptApi::kAnthropicMessages;
}

std::string StatusClass(int status) {
  return std::to_string(status / 100) + "xx";
}

// One request through the proxy.
class Exchange : public http::ResponseSink,
                 public std::enable_shared_from_this<Exchange> {
 public:
  Exchange(Shared* shared, http::ResponderPtr res, RouteInfo route,
           llm::ToolScopes scope, uint32_t recorded, uint64_t prompt_ticket)
      : shared_(shared),
        res_(std::move(res)),
        route_(route),
        scope_(std::move(scope)),
        recorded_(recorded),
        prompt_ticket_(prompt_ticket),
        reader_(route.api),
        started_at_(Now()) {
    ++shared_->in_flight;
  }
  ~Exchange() override {
    --shared_->in_flight;
    // Logged once the response is done, so the line never delays it.
    if (stages_recorded_ && spdlog::should_log(spdlog::level::debug)) {
      spdlog::debug(
          "{}: stages (ms): upload {:.3f}, handle {:.3f}, upstream_write "
          "{:.3f}, upstream_wait {:.3f}, upstream_body {:.3f}",
          Label(), stage_ms_[0], stage_ms_[1], stage_ms_[2], stage_ms_[3],
          stage_ms_[4]);
    }
  }

  // Serve this request's tool calls from the cache (tool_loop.h).
  void SetServe(std::unique_ptr<llm::ServeSession> session) {
    serve_ = std::move(session);
  }

  // The calls of results the request recorded without an entry in the
  // observer's table: remembered if the provider accepts the request.
  void RememberIfAccepted(std::vector<llm::RecordedCall> calls) {
    to_remember_ = std::move(calls);
  }

  // When the request's header and body had arrived (http::Request).
  void SetArrival(double head_at, double received_at) {
    head_at_ = head_at;
    received_at_ = received_at;
  }

  void Begin(http::ClientRequest request) {
    begun_at_ = Now();
    head_ = request.method == "HEAD";
    if (serve_) {
      again_.method = request.method;
      again_.target = request.target;
      again_.headers = request.headers;
    }
    std::weak_ptr<Exchange> weak = shared_from_this();
    res_->OnClientGone([weak] {
      if (auto self = weak.lock()) self->ClientGone();
    });
    call_ =
        shared_->client->Start(res_->loop(), shared_->UrlFor(route_.provider),
                               std::move(request), shared_from_this());
  }

  void OnSent() override { sent_at_ = Now(); }

  void OnHead(int status, const Headers& headers) override {
    status_ = status;
    // The provider accepted the credential (session 19): only now may the
    // request's recorded results hold entries in the observer's table.
    if (!to_remember_.empty() && status >= 200 && status < 300 &&
        shared_->observer) {
      shared_->observer->OnAccepted(std::move(to_remember_));
    }
    to_remember_.clear();
    upstream_head_at_ = Now();
    Shared::Cached(Hot().first_byte, shared_->first_byte, {Label()})
        ->Observe(Now() - started_at_);
    for (const Header& h : headers) {
      // A HEAD answer keeps the upstream's Content-Length (the length a GET
      // would have); the server sends it with no body (RFC 9110 9.3.2).
      if (http::IsHopByHop(h.name) &&
          !(head_ && http::EqualsIgnoreCase(h.name, "content-length"))) {
        continue;
      }
      headers_.push_back(h);
    }
    const std::string_view type = http::FindHeader(headers, "content-type");
    sse_ = type.substr(0, 17) == "text/event-stream";
    if (route_.route == Route::kObserved) {
      headers_.push_back({"x-toolcache-recorded", std::to_string(recorded_)});
    }
    if (serve_ && (serve_stream_ || (sse_ && status >= 200 && status < 300))) {
      return ServeStreamHead();
    }
    // Streams (and everything on pass-through routes) are relayed as they
    // arrive; other observed responses are read whole first.
    if (route_.route != Route::kObserved || sse_) StartRelay();
  }

  bool OnData(std::string_view data) override {
    if (serve_stream_) return ServeStreamData(data);
    if (!relaying_) {
      if (body_.size() + data.size() <=
          shared_->options.max_buffered_response_bytes) {
        body_.append(data);
        return true;
      }
      // Too large to hold: relay what we have and the rest, unobserved.
      unobserved_ = true;
      StartRelay();
    }
    if (observe_stream_) {
      sse_parser_.Feed(data, [this](const http::SseEvent& e) {
        reader_.OnEvent(e.event, e.data);
      });
    }
    if (!res_->Write(data)) return true;  // client gone: ClientGone cancels
    // Backpressure: a slow client pauses the upstream read.
    if (res_->Buffered() > kMaxBuffered) {
      // Registered before the uncork, whose write may take every byte.
      std::weak_ptr<Exchange> weak = shared_from_this();
      res_->OnDrained([weak] {
        if (auto self = weak.lock()) {
          if (self->call_) self->call_->Resume();
        }
      });
      res_->Uncork();
      return false;
    }
    return true;
  }

  // One upstream read relayed: its bytes (and the head, the first time)
  // leave in one write.
  void OnBatchEnd() override {
    if (relaying_) res_->Uncork();
  }

  void OnEnd(const Status& st) override {
    const double end = Now();
    Shared::Cached(Hot().upstream, shared_->upstream, {Label()})
        ->Observe(end - started_at_);
    if (!st.ok()) return UpstreamFailed(st);
    RecordStages(end);
    if (status_ >= 200 && status_ < 300) {
      Shared::Cached(Hot().requests_2xx, shared_->requests, {Label(), "2xx"})
          ->Add();
    } else {
      shared_->requests->Get({Label(), StatusClass(status_)})->Add();
    }
    if (serve_stream_) return ServeStreamEnd();
    if (relaying_) {
      if (observe_stream_) FinishStream();
      res_->Finish();
      return;
    }
    // A whole observed response.
    const double t0 = Now();
    llm::ResponseReport rep;
    if (status_ >= 200 && status_ < 300 &&
        (shared_->observer || prompt_ticket_ != 0)) {
      Result<llm::ParsedResponse> parsed =
          llm::ParseResponse(route_.api, body_);
      if (parsed.ok()) {
        if (serve_ && NextRound(*parsed)) return;
        if (shared_->observer) {
          rep = shared_->observer->OnResponse(route_.api, parsed->tool_uses,
                                              scope_);
          LogResponse(rep);
        }
        ObservePromptCache(parsed->usage);
      } else {
        shared_->Error("unreadable_response");
        spdlog::warn(
            "{}: upstream response not readable ({}); forwarded "
            "unobserved",
            Label(), parsed.status().message());
      }
    }
    headers_.push_back(
        {"x-toolcache-observed-calls", std::to_string(rep.observed_calls)});
    headers_.push_back(
        {"x-toolcache-would-hit", std::to_string(rep.would_hit)});
    if (serve_) AddServeHeaders();
    const double t1 = Now();
    Shared::Cached(Hot().overhead_response, shared_->overhead,
                   {Label(), "response"})
        ->Observe(t1 - t0);
    if (stages_ != nullptr)
      Shared::Cached(Hot().stage[5], stages_, {Label(), "respond"})
          ->Observe(t1 - t0);
    res_->Send(status_, std::move(headers_), std::move(body_));
  }

 private:
  static constexpr size_t kMaxBuffered = 1 << 20;

  // Where a request's time went, once per request (the first upstream
  // round): upload (client -> proxy body transfer, from the header's
  // arrival), handle (read done -> forwarding starts: parse, observe),
  // upstream_write (connection from the pool or opened, request written),
  // upstream_wait (written -> response head), upstream_body (head -> end).
  void RecordStages(double end) {
    stages_ = shared_->stages;
    if (stages_recorded_ || sent_at_ == 0 || upstream_head_at_ == 0) return;
    stages_recorded_ = true;
    const std::string_view l = Label();
    const double upload = received_at_ - head_at_;
    const double handle = begun_at_ - received_at_;
    const double write = sent_at_ - begun_at_;
    const double wait = upstream_head_at_ - sent_at_;
    const double body = end - upstream_head_at_;
    auto& hot = Hot().stage;
    Shared::Cached(hot[0], stages_, {l, "upload"})->Observe(upload);
    Shared::Cached(hot[1], stages_, {l, "handle"})->Observe(handle);
    Shared::Cached(hot[2], stages_, {l, "upstream_write"})->Observe(write);
    Shared::Cached(hot[3], stages_, {l, "upstream_wait"})->Observe(wait);
    Shared::Cached(hot[4], stages_, {l, "upstream_body"})->Observe(body);
    stage_ms_ = {upload * 1e3, handle * 1e3, write * 1e3, wait * 1e3,
                 body * 1e3};
  }

  Shared::HotSeries& Hot() const {
    return shared_
        ->hot[Shared::Slot(route_.route == Route::kObserved, route_.api)];
  }
  std::string_view Label() const {
    return route_.route == Route::kObserved ? llm::ApiName(route_.api)
                                            : std::string_view("passthrough");
  }

  // The tool loop's hook: when the loop served every call of this round,
  // the next round goes upstream and true is returned; otherwise body_
  // becomes the client's answer (usage summed over the rounds).
  bool NextRound(const llm::ParsedResponse& parsed) {
    std::optional<std::string> next;
    if (parsed.choices > 1) {
      // n > 1: the client picks one of several alternative turns; a hidden
      // round would have to choose for it. Passed through, observed.
      shared_->serve_bypass->Get({Label(), "multiple_choices"})->Add();
      spdlog::info("{}: not served: the response has {} choices (n > 1)",
                   Label(), parsed.choices);
    } else {
      next = serve_->OnResponse(body_, parsed);
    }
    if (!next) {
      if (serve_->rounds() > 1) {
        body_ = serve_->Finish(body_, parsed);
        for (const std::string& t : serve_->served_tools()) {
          shared_->served->Get({Label(), t})->Add();
        }
        shared_->saved_latency->Get({Label()})->Observe(
            serve_->latency_saved_seconds());
        spdlog::info("{}: served {} tool call(s) in {} hidden round(s){}",
                     Label(), serve_->served_calls(), serve_->rounds() - 1,
                     serve_->saved() ? "" : " (state not saved)");
      }
      return false;
    }
    Resend(std::move(*next));
    return true;
  }

  // The next round of the tool loop: the same request with `body`.
  void Resend(std::string body) {
    http::ClientRequest r;
    r.method = again_.method;
    r.target = again_.target;
    r.headers = again_.headers;
    r.body = std::move(body);
    body_.clear();
    headers_.clear();
    status_ = 0;
    started_at_ = Now();
    sse_parser_ = http::SseParser();
    call_ =
        shared_->client->Start(res_->loop(), shared_->UrlFor(route_.provider),
                               std::move(r), shared_from_this());
  }

  // Streams through the tool loop (stream_relay.h): round 1's head starts
  // the client's stream; every round's events pass the relay.
  void ServeStreamHead() {
    if (!serve_stream_) {
      relay_ = llm::NewStreamRelay(route_.api);
      if (!relay_) {  // no relay for this API's streams: not served
        serve_.reset();
        return StartRelay();
      }
      serve_stream_ = true;
      relaying_ = true;
      res_->Start(status_, headers_);
      return;
    }
    // A later round that is not a 2xx stream: its body becomes an error
    // event of the client's stream.
    serve_round_failed_ = !(sse_ && status_ >= 200 && status_ < 300);
  }

  bool ServeStreamData(std::string_view data) {
    if (serve_round_failed_) {
      if (body_.size() < 65536) body_.append(data);
      return true;
    }
    sse_parser_.Feed(data, [this](const http::SseEvent& e) {
      std::string out = relay_->OnEvent(e.event, e.data);
      if (!out.empty()) res_->Write(out);
    });
    return true;
  }

  void ServeStreamEnd() {
    if (serve_round_failed_) {
      shared_->Error("upstream_error_mid_loop");
      res_->Write(relay_->ErrorEvent(
          ErrorBody(route_.provider, status_,
                    "toolcache proxy: upstream answered a hidden round with "
                    "status " +
                        std::to_string(status_) + ": " + body_)));
      res_->Finish();
      return;
    }
    if (relay_->failed() || !relay_->round_complete() ||
        sse_parser_.mid_event()) {
      const bool failed = relay_->failed();
      shared_->streams->Get({Label(), failed ? "error" : "truncated"})->Add();
      if (failed) {
        res_->Finish();
      } else {
        res_->Abort();
      }
      return;
    }
    const std::string round = relay_->RoundBody();
    Result<llm::ParsedResponse> parsed = llm::ParseResponse(route_.api, round);
    if (parsed.ok()) {
      std::optional<std::string> next = serve_->OnResponse(round, *parsed);
      if (next) {
        relay_->NextRound();
        Resend(std::move(*next));
        return;
      }
    }
    const bool hidden = serve_->rounds() > 1;
    res_->Write(
        relay_->Flush(hidden ? serve_->usage() : nlohmann::ordered_json()));
    if (hidden) {
      serve_->FinishStream(round, relay_->ClientBody(),
                           relay_->relayed_earlier());
      for (const std::string& t : serve_->served_tools()) {
        shared_->served->Get({Label(), t})->Add();
      }
      shared_->saved_latency->Get({Label()})->Observe(
          serve_->latency_saved_seconds());
      spdlog::info("{}: served {} tool call(s) in {} hidden round(s){}",
                   Label(), serve_->served_calls(), serve_->rounds() - 1,
                   serve_->saved() ? "" : " (state not saved)");
    }
    shared_->streams->Get({Label(), "complete"})->Add();
    if (parsed.ok()) {
      LogResponse(
          shared_->observer->OnResponse(route_.api, parsed->tool_uses, scope_));
    }
    res_->Finish();
  }

  void AddServeHeaders() {
    headers_.push_back(
        {"x-toolcache-served-calls", std::to_string(serve_->served_calls())});
    headers_.push_back(
        {"x-toolcache-hidden-rounds", std::to_string(serve_->rounds() - 1)});
    headers_.push_back({"x-toolcache-latency-saved-ms",
                        std::to_string(static_cast<int64_t>(
                            serve_->latency_saved_seconds() * 1000))});
  }

  void StartRelay() {
    relaying_ = true;
    observe_stream_ = route_.route == Route::kObserved && sse_ &&
                      status_ >= 200 && status_ < 300 && !unobserved_ &&
                      (shared_->observer != nullptr || prompt_ticket_ != 0);
    // Choice: the head waits for the bytes that came with it (or the end
    // of the upstream read that brought it: OnBatchEnd), so head and first
    // events leave in one write (strace: one sendmsg per upstream read,
    // where the head and every event were one each).
    res_->Cork();
    res_->Start(status_, headers_);
    if (!body_.empty()) {
      res_->Write(body_);
      body_.clear();
    }
  }

  void FinishStream() {
    const char* outcome = "complete";
    if (reader_.failed()) {
      outcome = "error";
    } else if (!reader_.complete() || sse_parser_.mid_event()) {
      outcome = "truncated";
    }
    if (std::strcmp(outcome, "complete") == 0) {
      Shared::Cached(Hot().streams_complete, shared_->streams,
                     {Label(), "complete"})
          ->Add();
    } else {
      shared_->streams->Get({Label(), outcome})->Add();
    }
    if (std::strcmp(outcome, "complete") != 0) {
      spdlog::info("{}: stream {} ({}); its tool calls are not observed",
                   Label(), outcome, reader_.failure());
      return;
    }
    ObservePromptCache(reader_.usage());
    if (!shared_->observer) return;
    const double t0 = Now();
    llm::ResponseReport rep =
        shared_->observer->OnResponse(route_.api, reader_.tool_uses(), scope_);
    Shared::Cached(Hot().overhead_response, shared_->overhead,
                   {Label(), "response"})
        ->Observe(Now() - t0);
    LogResponse(rep);
  }

  // The prompt-cache hook: a break found in this response's usage goes
  // into a response header (whole responses; a stream's head has left)
  // and the log; the PromptCache counts it and keeps it for
  // GET /toolcache/breaks.
  void ObservePromptCache(const llm::Usage& u) {
    if (prompt_ticket_ == 0) return;
    std::optional<CacheBreak> b = shared_->prompt->Observe(
        prompt_ticket_, {.input_tokens = u.input_tokens,
                         .cache_read_tokens = u.cache_read_tokens,
                         .cache_creation_tokens = u.cache_creation_tokens});
    prompt_ticket_ = 0;
    if (!b) return;
    if (!relaying_) {
      headers_.push_back({"x-toolcache-prompt-cache-break", b->Label()});
    }
    spdlog::warn(
        "{}: prompt cache break in conversation {} (turn {}): {}; cache read "
        "{} of {} tokens, {:.1f} s after the previous turn",
        Label(), b->conversation, b->turn, b->Label(), b->cache_read,
        b->expected_read, b->gap_seconds);
  }

  void LogResponse(const llm::ResponseReport& rep) {
    Shared::Cached(Hot().observed_calls, shared_->observed,
                   {Label(), "observed_calls"})
        ->Add(rep.observed_calls);
    Shared::Cached(Hot().would_hit, shared_->observed, {Label(), "would_hit"})
        ->Add(rep.would_hit);
    if (rep.observed_calls == 0) return;
    std::string hits;
    for (const auto& h : rep.hits) {
      if (!hits.empty()) hits += ", ";
      hits += h.tool + " key " + h.key;
    }
    spdlog::info("{}: {} tool call(s), {} would hit{}{}", Label(),
                 rep.observed_calls, rep.would_hit, hits.empty() ? "" : ": ",
                 hits);
  }

  void UpstreamFailed(const Status& st) {
    const bool timeout = st.message().find("timeout") != std::string::npos;
    if (relaying_) {
      // The client already has the head: cut its body short too, so it
      // sees the same truncation (never a well-formed but partial reply).
      shared_->Error(timeout ? "upstream_timeout_mid_body"
                             : "upstream_closed_mid_body");
      if (observe_stream_) {
        shared_->streams->Get({Label(), "truncated"})->Add();
      }
      spdlog::warn("{}: upstream failed mid-response: {}", Label(),
                   st.message());
      res_->Abort();
      return;
    }
    const int status = timeout ? 504 : 502;
    shared_->Error(timeout ? "upstream_timeout" : "upstream_unavailable");
    shared_->requests->Get({Label(), StatusClass(status)})->Add();
    spdlog::warn("{}: upstream failed: {}", Label(), st.message());
    res_->Send(
        status, {{"content-type", "application/json"}},
        ErrorBody(route_.provider, status,
                  "toolcache proxy: upstream request failed: " + st.message()));
  }

  void ClientGone() {
    shared_->Error("client_gone");
    if (call_) call_->Cancel();
    call_.reset();
  }

  Shared* shared_;
  http::ResponderPtr res_;
  RouteInfo route_;
  llm::ToolScopes scope_;
  uint32_t recorded_;
  std::vector<llm::RecordedCall> to_remember_;
  uint64_t prompt_ticket_;
  std::shared_ptr<http::Call> call_;
  int status_ = 0;
  Headers headers_;
  std::string body_;
  bool sse_ = false;
  bool relaying_ = false;
  bool head_ = false;  // a HEAD request: its answer has no body
  bool observe_stream_ = false;
  bool unobserved_ = false;
  http::SseParser sse_parser_;
  llm::StreamReader reader_;
  double started_at_;
  // Stage timings (RecordStages).
  double head_at_ = 0, received_at_ = 0, begun_at_ = 0, sent_at_ = 0,
         upstream_head_at_ = 0;
  bool stages_recorded_ = false;
  std::array<double, 5> stage_ms_{};
  metrics::HistogramFamily* stages_ = nullptr;
  std::unique_ptr<llm::ServeSession> serve_;
  http::ClientRequest again_;  // method, target, headers of later rounds
  bool serve_stream_ = false;  // the client's stream passes relay_
  bool serve_round_failed_ = false;
  std::unique_ptr<llm::StreamRelay> relay_;  // set with serve_stream_
};

class LlmProxyImpl final : public LlmProxy {
 public:
  explicit LlmProxyImpl(std::unique_ptr<Shared> shared)
      : shared_(std::move(shared)) {}
  // Pooled upstream sockets live on the server's loops: close them while
  // the loops still exist (server_ is destroyed before shared_).
  ~LlmProxyImpl() override { shared_->client->CloseIdle(); }

  Status Init() {
    http::ServerOptions so;
    so.host = shared_->options.listen_host;
    so.port = shared_->options.listen_port;
    so.threads = shared_->options.threads;
    so.max_body_bytes = shared_->options.max_body_bytes;
    so.on_bad_request = [](int status, std::string_view reason,
                           const http::Request& partial, http::Responder& out) {
      const Provider p = ProviderOf(partial.Path(), partial.headers);
      out.Send(status, {{"content-type", "application/json"}},
               ErrorBody(p, status, "toolcache proxy: " + std::string(reason)));
    };
    Shared* shared = shared_.get();
    Result<std::unique_ptr<http::Server>> server = http::NewServer(
        so, [shared](http::Request req, http::ResponderPtr res) {
          Handle(shared, std::move(req), std::move(res));
        });
    if (!server.ok()) return server.status();
    server_ = std::move(*server);
    shared_->server = server_.get();
    return Status::Ok();
  }

  uint16_t port() const override { return server_->port(); }
  void Run() override { server_->Run(); }
  void Stop() override { server_->Stop(); }
  bool DrainAndStop(double timeout_seconds) override {
    const uint64_t open = server_->open_connections();
    spdlog::info(
        "shutting down: no new connections; {} open connection(s), {} "
        "request(s) in flight get up to {} s to finish",
        open, shared_->in_flight.load(), timeout_seconds);
    server_->Drain();
    const auto deadline =
        std::chrono::steady_clock::now() +
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(std::max(0.0, timeout_seconds)));
    bool drained = false;
    while (true) {
      drained =
          server_->open_connections() == 0 && shared_->in_flight.load() == 0;
      if (drained || std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (drained) {
      spdlog::info("shutdown: every request in flight finished");
    } else {
      spdlog::warn(
          "shutdown: drain timeout ({} s) passed; closing {} connection(s) "
          "with {} request(s) in flight",
          timeout_seconds, server_->open_connections(),
          shared_->in_flight.load());
    }
    server_->Stop();
    return drained;
  }
  std::string StatsJson() const override { return Stats(shared_.get()); }

  // The one stats shape (src/runtime/stats.h): the engine under "cache",
  // the proxy's connections and its metric registry beside it.
  static std::string Stats(Shared* shared) {
    ToolCacheStats s;
    if (shared->options.cache != nullptr) s = shared->options.cache->Stats();
    runtime::StatsSnapshot snap(
        "proxy", shared->options.cache != nullptr ? &s : nullptr);
    snap.face_fields["openConnections"] =
        shared->server != nullptr ? shared->server->open_connections() : 0;
    snap.face_fields["inFlight"] = shared->in_flight.load();
    snap.face_fields["metrics"] = shared->registry.Json();
    return runtime::SerializeStats(snap);
  }

 private:
  static void Handle(Shared* shared, http::Request req,
                     http::ResponderPtr res) {
    const double t0 = Now();
    RouteInfo route = RouteOf(req.method, req.Path(), req.headers);
    // Browser pages first (src/http/browser_guard.h): a DNS-rebinding or
    // cross-site request is answered 403 (415 for a non-JSON observed
    // POST) before it can read, record or be served anything. This is what
    // makes a request without any credential safe to observe and serve.
    if (http::GuardDecision g = shared->guard->Check(
            req, route.route == Route::kObserved && req.method == "POST");
        !g.allowed()) {
      shared->Error(g.code());
      res->Send(
          g.status, {{"content-type", "application/json"}},
          ErrorBody(route.provider, g.status, "toolcache proxy: " + g.message));
      return;
    }
    // The target is joined to the upstream's path prefix: it must stay
    // under it (no dot segments, origin-form; issue 27 item 9).
    if (std::string why; !http::IsPrefixSafeTarget(req.target, &why)) {
      shared->Error("bad_target");
      res->Send(400, {{"content-type", "application/json"}},
                ErrorBody(route.provider, 400, "toolcache proxy: " + why));
      return;
    }
    if (route.route == Route::kAdmin) {
      // The page carries no data; its stats fetch is checked (session 19).
      if (route.admin != runtime::AdminRoute::kDashboard) {
        if (const runtime::AdminAccess a = runtime::CheckAdminAccess(
                req, {.admin_token = shared->options.admin_token});
            a.viewer != runtime::AdminViewer::kOperator) {
          shared->Error("admin_unauthorized");
          res->Send(a.status,
                    {{"content-type", "application/json"},
                     {"cache-control", "no-store"},
                     {"www-authenticate", "Bearer"}},
                    ErrorBody(route.provider, a.status,
                              "toolcache proxy: " + a.message));
          return;
        }
      }
      runtime::SendAdmin(
          {.metrics = [shared] { return shared->registry.Prometheus(); },
           .stats = [shared] { return Stats(shared); },
           .dashboard = true},
          route.admin, *res);
      return;
    }
    if (route.route == Route::kUpgrade) {
      // Choice (issue 28): refuse a protocol upgrade at once with 426.
      // Codex CLI opens the Responses WebSocket mode first (GET
      // /v1/responses, Upgrade: websocket) and falls back to HTTP + SSE at
      // once on exactly this status (codex-rs/core/src/client.rs: 426 ->
      // WebsocketStreamOutcome::FallbackToHttp); any other answer (the
      // upstream's 404 once Upgrade was dropped as hop-by-hop) is retried
      // five times first, ~6 s per session. Relaying the WebSocket would
      // also hide its tool calls from the observer.
      shared->Error("upgrade_refused");
      spdlog::info(
          "{} {}: protocol upgrade refused (426); the client falls "
          "back to HTTP",
          req.method, req.Path());
      res->Send(426,
                {{"content-type", "application/json"},
                 {"upgrade", "HTTP/1.1"},
                 {"connection", "close"}},
                ErrorBody(route.provider, 426,
                          "toolcache proxy: WebSocket mode is not relayed; "
                          "use HTTP (server-sent events)"));
      return;
    }
    if (route.route == Route::kBreaks) {
      res->Send(200, {{"content-type", "application/json"}},
                shared->prompt ? shared->prompt->BreaksJsonFor(BreaksReaderOf(
                                     req.target, req.headers,
                                     shared->options.credential_headers,
                                     shared->options.credential_query))
                               : "{\"breaks\":[],\"enabled\":false}\n");
      return;
    }
    // The scopes, computed once per request (scope.h).
    // The result scopes need the parsed body (the client's workspace):
    // set below, once it parsed.
    llm::ToolScopes scope(std::string(), std::nullopt);
    std::string state_scope;
    std::string credential;
    if (route.route == Route::kObserved) {
      credential = CredentialOf(route.provider, req.target, req.headers,
                                shared->options.credential_headers,
                                shared->options.credential_query);
      state_scope = ScopeOf({.credential = credential});
    }
    uint32_t recorded = 0;
    std::vector<llm::RecordedCall> to_remember;
    std::unique_ptr<llm::ServeSession> session;
    // The prompt-cache hook: the request as the provider should see it. It
    // runs on the body as it goes upstream (after splicing and offload), so
    // the tool loop's hidden rounds resend the same rewritten prefix.
    uint64_t prompt_ticket = 0;
    auto prepare_prompt = [&](std::string* body) {
      if (!shared->prompt) return false;
      PreparedRequest p =
          shared->prompt->Prepare(PromptApiOf(route.api), state_scope, *body);
      prompt_ticket = p.ticket;
      if (p.rewritten) *body = std::move(p.body);
      return p.rewritten;
    };
    // The same stage over the client's body and the stages' edits: it
    // reads them in place and adds its rewrite to them (one read, one
    // writer). kNotComposed: run prepare_prompt on the applied body.
    auto prepare_edits = [&](const std::string& body,
                             llm::BodyEdits* edits) -> PromptStage {
      if (!shared->prompt) return PromptStage::kUnchanged;
      std::vector<BodyEditView> views;
      views.reserve(edits->size());
      for (const llm::BodyEdits::Edit& e : edits->edits()) {
        views.push_back({e.begin, e.end, e.text});
      }
      PreparedRequest p = shared->prompt->PrepareEdited(
          PromptApiOf(route.api), state_scope, body, views);
      if (!p.composed) return PromptStage::kNotComposed;
      prompt_ticket = p.ticket;
      for (PromptEdit& e : p.edits) {
        edits->ReplaceOver(e.begin, e.end, std::move(e.text));
      }
      return p.rewritten ? PromptStage::kRewritten : PromptStage::kUnchanged;
    };
    if (route.route == Route::kObserved) {
      Result<llm::ParsedRequest> parsed = llm::ParseRequest(
          route.api, req.body, {.max_depth = shared->options.max_depth});
      if (!parsed.ok()) {
        // Choice: a body the proxy cannot read is rejected here, in the
        // provider's shape, rather than forwarded unobserved: the provider
        // would reject it too, and a proxy that silently stops observing
        // hides the problem.
        const std::string kind =
            parsed.status().message().find("depth") != std::string::npos
                ? "too_deep"
                : "bad_request_body";
        shared->Error(kind);
        shared->requests->Get({llm::ApiName(route.api), "4xx"})->Add();
        res->Send(400, {{"content-type", "application/json"}},
                  ErrorBody(route.provider, 400,
                            "toolcache proxy: " + parsed.status().message()));
        return;
      }
      scope = ResultScopesOf(credential, &state_scope, shared->options.scope,
                             req.headers, *parsed, req.body);
      if (shared->observer) {
        llm::RequestReport rep =
            shared->observer->OnRequest(*parsed, req.body, scope);
        recorded = rep.recorded;
        to_remember = std::move(rep.to_remember);
        auto& hot = shared->hot[Shared::Slot(true, route.api)];
        Shared::Cached(hot.observed_results, shared->observed,
                       {llm::ApiName(route.api), "results"})
            ->Add(rep.results);
        Shared::Cached(hot.observed_recorded, shared->observed,
                       {llm::ApiName(route.api), "recorded"})
            ->Add(rep.recorded);
        if (rep.results > 0) {
          // "changed" = recorded over an older, different result (the
          // file or data changed since), not a fault; client stubs are the
          // client's "unchanged" / truncation markers, never recorded.
          spdlog::info(
              "{}: {} tool result(s): {} recorded ({} changed since cached), "
              "{} already cached, {} not cacheable, {} errors, {} unpaired, "
              "{} client stubs",
              llm::ApiName(route.api), rep.results, rep.recorded, rep.stale,
              rep.already_cached, rep.bypassed, rep.errors, rep.unpaired,
              rep.client_markers);
        }
      }
      if (shared->loop) {
        session = Splice(shared, *parsed, &req.body, scope, state_scope,
                         prepare_edits, prepare_prompt);
        // The hidden turns must be what the client's API version accepts.
        if (session && route.api == Api::kAnthropicMessages) {
          session->SetRules(llm::AnthropicServeRules(
              http::FindHeader(req.headers, "anthropic-version")));
        }
      } else {
        prepare_prompt(&req.body);
      }
    }
    http::ClientRequest creq;
    creq.method = std::move(req.method);
    creq.target = std::move(req.target);
    creq.headers.reserve(req.headers.size());
    for (Header& h : req.headers) {
      if (http::IsHopByHop(h.name)) continue;
      // The client's workspace name is the proxy's alone, on every route
      // (a client sets it on every request: ANTHROPIC_CUSTOM_HEADERS).
      if (http::EqualsIgnoreCase(h.name, "x-toolcache-workspace")) continue;
      if (route.route == Route::kObserved &&
          http::EqualsIgnoreCase(h.name, "accept-encoding")) {
        continue;
      }
      creq.headers.push_back(std::move(h));
    }
    if (route.route == Route::kObserved) {
      creq.headers.push_back({"accept-encoding", "identity"});
    }
    creq.body = std::move(req.body);
    auto ex = std::make_shared<Exchange>(shared, res, route, std::move(scope),
                                         recorded, prompt_ticket);
    ex->SetServe(std::move(session));
    ex->RememberIfAccepted(std::move(to_remember));
    ex->SetArrival(req.head_at, req.received_at);
    const bool observed = route.route == Route::kObserved;
    Shared::Cached(
        shared->hot[Shared::Slot(observed, route.api)].overhead_request,
        shared->overhead,
        {observed ? llm::ApiName(route.api) : "passthrough", "request"})
        ->Observe(Now() - t0);
    ex->Begin(std::move(creq));
  }

  // Runs the prompt-cache stage on a body; true when it rewrote it.
  using PrepareBody = std::function<bool(std::string*)>;
  enum class PromptStage : uint8_t { kUnchanged, kRewritten, kNotComposed };
  // Runs it on the client's body with the other stages' edits, adding its
  // own to them (PromptCache::PrepareEdited).
  using PrepareEdits =
      std::function<PromptStage(const std::string&, llm::BodyEdits*)>;

  // The tool loop's request hook: splices hidden turns back into `body`,
  // offloads, runs the prompt-cache stage over those edits (`edited`;
  // `prepare` on the applied body when it cannot compose) and, when this
  // request can be served, starts its session.
  static std::unique_ptr<llm::ServeSession> Splice(
      Shared* shared, llm::ParsedRequest& parsed, std::string* body,
      const llm::ToolScopes& scope, const std::string& state,
      const PrepareEdits& edited, const PrepareBody& prepare) {
    // Each stage adds edits over the one parse of the client's body; one
    // writer applies them (edits.h): the body is parsed once per request.
    llm::BodyEdits edits;
    llm::SpliceReport sr;
    shared->loop->SplicePlan(parsed, *body, state, &sr, &edits);
    const std::string_view api = llm::ApiName(parsed.api);
    if (sr.spliced > 0) shared->spliced->Get({api, "spliced"})->Add(sr.spliced);
    if (sr.missing > 0) {
      shared->spliced->Get({api, "splice_missing"})->Add(sr.missing);
      spdlog::warn(
          "{}: {} hidden turn(s) of this conversation are no longer stored; "
          "forwarded as sent",
          api, sr.missing);
    }
    if (sr.store_errors > 0) {
      shared->spliced->Get({api, "store_error"})->Add(sr.store_errors);
    }
    if (sr.corrupt > 0) {
      shared->spliced->Get({api, "store_corrupt"})->Add(sr.corrupt);
    }
    std::unique_ptr<llm::ServeSession> session;
    // Offload only where the loop can answer the retrieval tool: not in a
    // Responses request continuing state the provider holds
    // (previous_response_id, conversation), which the loop does not serve.
    if (shared->offload && llm::ToolLoop::Supports(parsed.api, parsed.stream) &&
        llm::ToolLoop::BypassReason(parsed).empty()) {
      // Offload edits the client's results; the hidden turns the splice
      // inserts are never offloaded (they are older than the newest turn
      // and were never offloaded when served).
      llm::OffloadReport orep;
      shared->offload->Plan(parsed, *body, state, &orep, &edits);
      if (orep.offloaded > 0) {
        shared->offloaded->Get({api, "offloaded"})->Add(orep.offloaded);
        spdlog::info(
            "{}: offloaded {} oversized tool result(s): previews sent "
            "upstream, the results kept for toolcache_read",
            api, orep.offloaded);
      }
      if (orep.store_errors > 0) {
        shared->offloaded->Get({api, "store_error"})->Add(orep.store_errors);
      }
      if (orep.corrupt > 0) {
        shared->offloaded->Get({api, "store_corrupt"})->Add(orep.corrupt);
      }
      if (orep.reused > 0) {
        shared->offloaded->Get({api, "reused"})->Add(orep.reused);
      }
      if (orep.bytes_removed > 0) {
        shared->offloaded->Get({api, "bytes"})->Add(orep.bytes_removed);
      }
    }
    // The prompt-cache stage, on what goes upstream: read from the one
    // reading of the client's body with the edits above, its rewrite added
    // to them, all applied by the one writer (issue 30). Where it cannot
    // compose (span_tree.h's Graft), on the applied body: same bytes.
    const PromptStage stage = edited(*body, &edits);
    std::string upstream = edits.empty() ? *body : edits.Apply(*body);
    const bool rewritten = stage == PromptStage::kNotComposed
                               ? prepare(&upstream)
                               : stage == PromptStage::kRewritten;
    const bool mapped = stage != PromptStage::kNotComposed || !rewritten;
    const std::string_view bypass = llm::ToolLoop::BypassReason(parsed);
    if (!bypass.empty()) {
      shared->spliced->Get({api, "bypass_" + std::string(bypass)})->Add();
      spdlog::info("{}: not served: {}", api, bypass);
    } else if (llm::ToolLoop::Supports(parsed.api, parsed.stream)) {
      session = std::make_unique<llm::ServeSession>(
          shared->loop.get(), std::move(parsed), std::move(*body), upstream,
          scope, state, mapped ? &edits : nullptr);
    }
    *body = std::move(upstream);
    return session;
  }

  std::unique_ptr<Shared> shared_;
  std::unique_ptr<http::Server> server_;
};

}  // namespace

Result<std::unique_ptr<LlmProxy>> NewLlmProxy(const LlmProxyOptions& options) {
  auto shared = std::make_unique<Shared>();
  shared->options = options;
  Result<http::Url> a = http::ParseUrl(options.anthropic_upstream);
  if (!a.ok())
    return InvalidArgument("anthropic upstream: " + a.status().message());
  Result<http::Url> o = http::ParseUrl(options.openai_upstream);
  if (!o.ok())
    return InvalidArgument("openai upstream: " + o.status().message());
  shared->anthropic = *a;
  shared->openai = *o;
  shared->guard = std::make_unique<http::BrowserGuard>(
      http::BrowserGuardOptions{.listen_host = options.listen_host,
                                .allowed_hosts = options.allowed_hosts,
                                .allowed_origins = options.allowed_origins,
                                .config_block = "proxy"});
  http::ClientOptions co;
  co.connect_timeout_seconds = options.connect_timeout_seconds;
  co.response_timeout_seconds = options.response_timeout_seconds;
  co.idle_timeout_seconds = options.idle_timeout_seconds;
  co.ca_file = options.ca_file;
  Result<std::unique_ptr<http::Client>> client = http::NewClient(co);
  if (!client.ok()) return client.status();
  shared->client = std::move(*client);
  auto& r = shared->registry;
  shared->requests = &r.Counters("toolcache_proxy_requests_total",
                                 "Requests answered, by API and status class",
                                 {"api", "status"});
  shared->errors = &r.Counters(
      "toolcache_proxy_errors_total",
      "Requests the proxy could not pass on normally, by kind", {"kind"});
  shared->streams = &r.Counters(
      "toolcache_proxy_streams_total",
      "Observed SSE streams by outcome (complete, truncated, error)",
      {"api", "outcome"});
  shared->observed = &r.Counters(
      "toolcache_llm_observed_total",
      "Observation totals: results (in requests), recorded, observed_calls "
      "and would_hit (in responses)",
      {"api", "what"});
  shared->overhead = &r.Histograms(
      "toolcache_proxy_overhead_seconds",
      "Time the proxy spends on a request (parse + observe) and on its "
      "response (parse + peek)",
      {"api", "phase"}, metrics::LatencyBuckets());
  shared->upstream = &r.Histograms(
      "toolcache_proxy_upstream_seconds",
      "From forwarding a request to the end of its upstream response", {"api"},
      metrics::LatencyBuckets());
  shared->first_byte =
      &r.Histograms("toolcache_proxy_upstream_first_byte_seconds",
                    "From forwarding a request to the upstream response head",
                    {"api"}, metrics::LatencyBuckets());
  shared->stages = &r.Histograms(
      "toolcache_proxy_stage_seconds",
      "Where a request's time goes in the proxy: upload (client body "
      "transfer), handle (parse + observe), upstream_write (pooled or new "
      "connection, request written), upstream_wait (to the response head), "
      "upstream_body, respond (whole responses: parse + peek)",
      {"api", "stage"}, metrics::LatencyBuckets());
  Shared* sp = shared.get();
  r.Gauge("toolcache_proxy_open_connections", "Client connections open", [sp] {
    return sp->server ? static_cast<double>(sp->server->open_connections())
                      : 0.0;
  });
  r.Gauge("toolcache_proxy_in_flight", "Requests in flight",
          [sp] { return static_cast<double>(sp->in_flight.load()); });
  if (options.cache != nullptr) {
    ToolCache* cache = options.cache;
    r.Gauge("toolcache_cache_entries", "Entries cached",
            [cache] { return static_cast<double>(cache->Stats().entries); });
    r.Gauge("toolcache_cache_bytes", "Bytes cached",
            [cache] { return static_cast<double>(cache->Stats().bytes); });
    shared->observer = std::make_unique<llm::Observer>(
        options.cache, &shared->clock, &shared->registry,
        llm::ObserverOptions{.client_server = options.client_server});
    if (options.serve.enabled() || options.serve.offload) {
      Store* store = options.store;
      if (store == nullptr) {
        Result<std::unique_ptr<Store>> mem = OpenStore("memory");
        if (!mem.ok()) return mem.status();
        shared->own_store = std::move(*mem);
        store = shared->own_store.get();
      }
      llm::ServeOptions so;
      so.all_tools = options.serve.all_tools;
      so.tools = options.serve.tools;
      so.max_rounds = options.serve.max_rounds;
      so.state_ttl_seconds = options.serve.state_ttl_seconds;
      if (options.serve.offload) {
        shared->offload = std::make_unique<llm::Offloader>(
            store, llm::OffloadOptions{.threshold_tokens =
                                           options.serve.offload_tokens});
        shared->offloaded = &r.Counters(
            "toolcache_llm_offload_total",
            "Oversized tool results replaced by previews (offloaded: first "
            "time, reused: the memoised preview again), request bytes "
            "removed (bytes), store failures that sent results whole "
            "(store_error) and damaged stored previews not used "
            "(store_corrupt)",
            {"api", "what"});
      }
      shared->loop = std::make_unique<llm::ToolLoop>(
          options.cache, store, shared->observer.get(), std::move(so),
          shared->offload.get());
      shared->served = &r.Counters(
          "toolcache_llm_served_total",
          "Tool calls the proxy answered from the cache in hidden rounds",
          {"api", "tool"});
      shared->serve_bypass = &r.Counters(
          "toolcache_llm_serve_bypass_total",
          "Responses the tool loop did not serve for a named reason "
          "(multiple_choices: Chat with n > 1)",
          {"api", "reason"});
      shared->spliced = &r.Counters(
          "toolcache_llm_splice_total",
          "Hidden turns put back into client requests (spliced), and "
          "those whose state was gone (splice_missing), unreadable "
          "(store_error) or damaged (store_corrupt)",
          {"api", "outcome"});
      shared->saved_latency = &r.Histograms(
          "toolcache_llm_served_latency_saved_seconds",
          "Per served client request: the stored tool latency of the calls "
          "answered by the proxy (the round trips saved)",
          {"api"}, metrics::LatencyBuckets());
    }
  }
  const PromptCacheOptions& pco = options.prompt_cache;
  if (pco.stabilize_tools || pco.place_cache_control || pco.cache_system ||
      pco.cache_last_turn || pco.detect_breaks) {
    shared->prompt = NewPromptCache(pco, &shared->clock, &shared->registry);
  }
  auto proxy = std::make_unique<LlmProxyImpl>(std::move(shared));
  Status s = proxy->Init();
  if (!s.ok()) return s;
  return std::unique_ptr<LlmProxy>(std::move(proxy));
}

Result<int> RunLlmProxy(const LlmProxyOptions& options,
                        const std::function<void(uint16_t)>& on_listening) {
  // Signals go to one waiting thread, never to the event loops.
  http::BlockServerSignals();
  Result<std::unique_ptr<LlmProxy>> proxy = NewLlmProxy(options);
  if (!proxy.ok()) return proxy.status();
  LlmProxy* p = proxy->get();
  if (on_listening) on_listening(p->port());
  const double drain = options.drain_timeout_seconds;
  http::ServeUntilSignal([p] { p->Run(); },
                         [p, drain] { (void)p->DrainAndStop(drain); },
                         [p] { return p->StatsJson(); }, options.stats_path);
  return 0;
}

}  // namespace toolcache
