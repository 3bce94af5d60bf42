// Invariants:
// - The bytes the upstream receives are the client's body, untouched; only
//   hop-by-hop headers change (and Accept-Encoding on observed routes, so
//   the proxy can read the response; see Choice below).
// - An Exchange (one request) lives on its connection's loop; it answers
//   the client exactly once (Send, or Start..Finish, or Abort) and hears
//   from the upstream call until OnEnd or until it cancels the call (the
//   client left).
// - Tool calls of a response are peeked only when the response is whole:
//   a 2xx JSON body that parsed, or a stream whose terminal event arrived
//   without an error. A truncated or errored stream changes nothing.
// - Credentials are read only to hash them into a scope; they are never
//   logged, stored or put in metrics.
// Choice: on observed routes the proxy asks the upstream for identity
// encoding (it must read the body); other routes pass Accept-Encoding on.
#include <openssl/evp.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "src/http/http.h"
#include "src/http/sse.h"
#include "src/llm/observer.h"
#include "src/llm/wire.h"
#include "src/metrics/metrics.h"
#include "toolcache/llm_proxy.h"

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
  kMetrics,
  kStats,
};

struct RouteInfo {
  Route route = Route::kPassThrough;
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

RouteInfo RouteOf(std::string_view method, std::string_view path,
                  const Headers& headers) {
  RouteInfo r;
  r.provider = ProviderOf(path, headers);
  if (method == "GET" && path == "/metrics") {
    r.route = Route::kMetrics;
  } else if (method == "GET" && path == "/toolcache/stats") {
    r.route = Route::kStats;
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
      case 529:
        type = "overloaded_error";
        break;
      default:
        break;
    }
    return "{\"type\":\"error\",\"error\":{\"type\":\"" + std::string(type) +
           "\",\"message\":" + JsonString(message) + "}}";
  }
  std::string_view type =
      status < 500 ? "invalid_request_error" : "server_error";
  return "{\"error\":{\"message\":" + JsonString(message) + ",\"type\":\"" +
         std::string(type) + "\",\"param\":null,\"code\":null}}";
}

// The cache scope for a request's credential: never the credential itself.
std::string ScopeOf(const Headers& headers, CredentialScope mode) {
  if (mode == CredentialScope::kGlobal) return "";
  std::string_view cred = http::FindHeader(headers, "x-api-key");
  if (cred.empty()) cred = http::FindHeader(headers, "authorization");
  if (cred.empty()) cred = http::FindHeader(headers, "api-key");
  if (cred.empty()) return "cred:none";
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(cred.data(), cred.size(), md, &n, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s = "cred:";
  // Choice: 64 bits of the SHA-256 name a scope; collisions are negligible
  // among one deployment's keys and the value reveals nothing useful.
  for (unsigned i = 0; i < 8 && i < n; ++i) {
    s.push_back(kHex[md[i] >> 4]);
    s.push_back(kHex[md[i] & 15]);
  }
  return s;
}

// What the proxy keeps across requests: options, cache, metrics, clients.
struct Shared {
  LlmProxyOptions options;
  http::Url anthropic;
  http::Url openai;
  std::unique_ptr<http::Client> client;
  metrics::Registry registry;
  std::unique_ptr<llm::Observer> observer;
  SystemClock clock;
  http::Server* server = nullptr;

  metrics::CounterFamily* requests = nullptr;
  metrics::CounterFamily* errors = nullptr;
  metrics::CounterFamily* streams = nullptr;
  metrics::CounterFamily* observed = nullptr;
  metrics::HistogramFamily* overhead = nullptr;
  metrics::HistogramFamily* upstream = nullptr;
  metrics::HistogramFamily* first_byte = nullptr;

  std::atomic<uint64_t> in_flight{0};

  const http::Url& UrlFor(Provider p) const {
    return p == Provider::kAnthropic ? anthropic : openai;
  }
  void Error(std::string_view kind) { errors->Get({kind})->Add(); }
};

std::string StatusClass(int status) {
  return std::to_string(status / 100) + "xx";
}

// One request through the proxy.
class Exchange : public http::ResponseSink,
                 public std::enable_shared_from_this<Exchange> {
 public:
  Exchange(Shared* shared, http::ResponderPtr res, RouteInfo route,
           bool stream_requested, std::string scope, uint32_t recorded)
      : shared_(shared),
        res_(std::move(res)),
        route_(route),
        stream_requested_(stream_requested),
        scope_(std::move(scope)),
        recorded_(recorded),
        reader_(route.api),
        started_at_(Now()) {
    ++shared_->in_flight;
  }
  ~Exchange() override { --shared_->in_flight; }

  void Begin(http::ClientRequest request) {
    std::weak_ptr<Exchange> weak = shared_from_this();
    res_->OnClientGone([weak] {
      if (auto self = weak.lock()) self->ClientGone();
    });
    call_ =
        shared_->client->Start(res_->loop(), shared_->UrlFor(route_.provider),
                               std::move(request), shared_from_this());
  }

  void OnHead(int status, const Headers& headers) override {
    status_ = status;
    shared_->first_byte->Get({Label()})->Observe(Now() - started_at_);
    for (const Header& h : headers) {
      if (http::IsHopByHop(h.name)) continue;
      headers_.push_back(h);
    }
    const std::string_view type = http::FindHeader(headers, "content-type");
    sse_ = type.substr(0, 17) == "text/event-stream";
    if (route_.route == Route::kObserved) {
      headers_.push_back({"x-toolcache-recorded", std::to_string(recorded_)});
    }
    // Streams (and everything on pass-through routes) are relayed as they
    // arrive; other observed responses are read whole first.
    if (route_.route != Route::kObserved || sse_) StartRelay();
  }

  bool OnData(std::string_view data) override {
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
      std::weak_ptr<Exchange> weak = shared_from_this();
      res_->OnDrained([weak] {
        if (auto self = weak.lock()) {
          if (self->call_) self->call_->Resume();
        }
      });
      return false;
    }
    return true;
  }

  void OnEnd(const Status& st) override {
    shared_->upstream->Get({Label()})->Observe(Now() - started_at_);
    if (!st.ok()) return UpstreamFailed(st);
    shared_->requests->Get({Label(), StatusClass(status_)})->Add();
    if (relaying_) {
      if (observe_stream_) FinishStream();
      res_->Finish();
      return;
    }
    // A whole observed response.
    const double t0 = Now();
    llm::ResponseReport rep;
    if (status_ >= 200 && status_ < 300 && shared_->observer) {
      Result<llm::ParsedResponse> parsed =
          llm::ParseResponse(route_.api, body_);
      if (parsed.ok()) {
        rep = shared_->observer->OnResponse(route_.api, parsed->tool_uses,
                                            scope_);
        LogResponse(rep);
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
    shared_->overhead->Get({Label(), "response"})->Observe(Now() - t0);
    res_->Send(status_, std::move(headers_), std::move(body_));
  }

 private:
  static constexpr size_t kMaxBuffered = 1 << 20;

  std::string_view Label() const {
    return route_.route == Route::kObserved ? llm::ApiName(route_.api)
                                            : std::string_view("passthrough");
  }

  void StartRelay() {
    relaying_ = true;
    observe_stream_ = route_.route == Route::kObserved && sse_ &&
                      status_ >= 200 && status_ < 300 && !unobserved_ &&
                      shared_->observer != nullptr;
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
    shared_->streams->Get({Label(), outcome})->Add();
    if (std::strcmp(outcome, "complete") != 0) {
      spdlog::info("{}: stream {} ({}); its tool calls are not observed",
                   Label(), outcome, reader_.failure());
      return;
    }
    const double t0 = Now();
    llm::ResponseReport rep =
        shared_->observer->OnResponse(route_.api, reader_.tool_uses(), scope_);
    shared_->overhead->Get({Label(), "response"})->Observe(Now() - t0);
    LogResponse(rep);
  }

  void LogResponse(const llm::ResponseReport& rep) {
    shared_->observed->Get({Label(), "observed_calls"})
        ->Add(rep.observed_calls);
    shared_->observed->Get({Label(), "would_hit"})->Add(rep.would_hit);
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
  [[maybe_unused]] bool stream_requested_;  // read by no code yet (clang warns)
  std::string scope_;
  uint32_t recorded_;
  std::shared_ptr<http::Call> call_;
  int status_ = 0;
  Headers headers_;
  std::string body_;
  bool sse_ = false;
  bool relaying_ = false;
  bool observe_stream_ = false;
  bool unobserved_ = false;
  http::SseParser sse_parser_;
  llm::StreamReader reader_;
  double started_at_;
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
  std::string StatsJson() const override { return Stats(shared_.get()); }

  static std::string Stats(Shared* shared) {
    nlohmann::ordered_json j;
    if (shared->options.cache != nullptr) {
      ToolCacheStats s = shared->options.cache->Stats();
      nlohmann::ordered_json c;
      c["peeks"] = s.peeks;
      c["wouldHits"] = s.would_hits;
      c["recorded"] = s.recorded;
      c["recordedAlreadyCached"] = s.recorded_already_cached;
      c["recordedStale"] = s.recorded_stale;
      c["admitted"] = s.admitted;
      c["notAdmitted"] = s.not_admitted;
      nlohmann::ordered_json by = nlohmann::ordered_json::object();
      for (const auto& [reason, n] : s.bypasses) by[reason] = n;
      c["bypassesByReason"] = by;
      c["invalidations"] = s.invalidations;
      c["entriesInvalidated"] = s.entries_invalidated;
      c["cachedEntries"] = s.entries;
      c["cachedBytes"] = s.bytes;
      j["cache"] = c;
    }
    j["openConnections"] =
        shared->server != nullptr ? shared->server->open_connections() : 0;
    j["inFlight"] = shared->in_flight.load();
    j["metrics"] = shared->registry.Json();
    return j.dump(2) + "\n";
  }

 private:
  static void Handle(Shared* shared, http::Request req,
                     http::ResponderPtr res) {
    const double t0 = Now();
    RouteInfo route = RouteOf(req.method, req.Path(), req.headers);
    if (route.route == Route::kMetrics) {
      res->Send(200, {{"content-type", "text/plain; version=0.0.4"}},
                shared->registry.Prometheus());
      return;
    }
    if (route.route == Route::kStats) {
      res->Send(200, {{"content-type", "application/json"}}, Stats(shared));
      return;
    }
    std::string scope;
    uint32_t recorded = 0;
    bool stream = false;
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
      stream = parsed->stream;
      if (shared->observer) {
        scope = ScopeOf(req.headers, shared->options.scope);
        llm::RequestReport rep =
            shared->observer->OnRequest(*parsed, req.body, scope);
        recorded = rep.recorded;
        shared->observed->Get({llm::ApiName(route.api), "results"})
            ->Add(rep.results);
        shared->observed->Get({llm::ApiName(route.api), "recorded"})
            ->Add(rep.recorded);
        if (rep.results > 0) {
          spdlog::info(
              "{}: {} tool result(s): {} recorded, {} already cached, {} "
              "stale, {} bypassed, {} errors, {} unpaired",
              llm::ApiName(route.api), rep.results, rep.recorded,
              rep.already_cached, rep.stale, rep.bypassed, rep.errors,
              rep.unpaired);
        }
      }
    }
    http::ClientRequest creq;
    creq.method = std::move(req.method);
    creq.target = std::move(req.target);
    creq.headers.reserve(req.headers.size());
    for (Header& h : req.headers) {
      if (http::IsHopByHop(h.name)) continue;
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
    auto ex = std::make_shared<Exchange>(shared, res, route, stream,
                                         std::move(scope), recorded);
    shared->overhead
        ->Get({route.route == Route::kObserved ? llm::ApiName(route.api)
                                               : "passthrough",
               "request"})
        ->Observe(Now() - t0);
    ex->Begin(std::move(creq));
  }

  std::unique_ptr<Shared> shared_;
  std::unique_ptr<http::Server> server_;
};

Status WriteStatsFile(const std::string& path, const std::string& json) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Unavailable("cannot write stats file '" + tmp + "'");
    out << json;
    if (!out) return Unavailable("cannot write stats file '" + tmp + "'");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Unavailable("cannot rename '" + tmp + "' to '" + path +
                       "': " + std::strerror(errno));
  }
  return Status::Ok();
}

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
  }
  auto proxy = std::make_unique<LlmProxyImpl>(std::move(shared));
  Status s = proxy->Init();
  if (!s.ok()) return s;
  return std::unique_ptr<LlmProxy>(std::move(proxy));
}

Result<int> RunLlmProxy(const LlmProxyOptions& options,
                        const std::function<void(uint16_t)>& on_listening) {
  // Signals go to one waiting thread, never to the event loops.
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGTERM, SIGINT, SIGHUP, SIGUSR1}) sigaddset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  Result<std::unique_ptr<LlmProxy>> proxy = NewLlmProxy(options);
  if (!proxy.ok()) return proxy.status();
  LlmProxy* p = proxy->get();
  if (on_listening) on_listening(p->port());
  std::atomic<bool> stopping{false};
  std::thread signals([&] {
    while (true) {
      int sig = 0;
      if (sigwait(&set, &sig) != 0) continue;
      if (sig == SIGUSR1) {
        if (!options.stats_path.empty()) {
          Status st = WriteStatsFile(options.stats_path, p->StatsJson());
          if (!st.ok()) spdlog::warn("{}", st.message());
        }
        if (stopping.load()) return;
        continue;
      }
      stopping = true;
      p->Stop();
      return;
    }
  });
  p->Run();
  if (!stopping.exchange(true)) {
    // Run ended without a signal: wake the signal thread.
    pthread_kill(signals.native_handle(), SIGUSR1);
  }
  signals.join();
  if (!options.stats_path.empty()) {
    Status st = WriteStatsFile(options.stats_path, p->StatsJson());
    if (!st.ok()) spdlog::warn("{}", st.message());
  }
  return 0;
}

}  // namespace toolcache
