// CacheService (service.h): the /v1/ cache API, metrics and statistics.
//
// Invariants:
//   * Every engine call goes through ToolCache; this file never classifies,
//     builds keys or stores results itself (docs/ARCHITECTURE.md).
//   * A tenant's name is the ToolCall scope of all its calls; a ticket is
//     answered only for the tenant that began it (others get 404).
//   * Request bodies are validated whole (simdjson DOM, depth <= kMaxDepth)
//     before any field is used; `arguments` and `result` are re-serialized
//     minified, so what is stored is always valid JSON.
//   * A waiter (coalesced begin) is in waiters_ from before Begin is called
//     until exactly one of: its flight completes, its wait times out, its
//     client goes away. The remover answers it (or not, when gone).
//
// Choice: lookup/record use Peek/Record (the observation pair of the LLM
// face: no flight is opened for a caller that may never come back); begin/
// complete use Begin/Complete (coalescing, writes that overlap a flight,
// policy feedback on hits). Documented in docs/SERVE.md.
#include "src/serve/service.h"

#include <simdjson.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "src/core/json.h"
#include "src/runtime/startup/admin.h"
#include "src/runtime/stats.h"

namespace toolcache::serve {
namespace {

namespace dom = simdjson::dom;

// Choice: 64 levels: tool arguments and results are shallow; deeper bodies
// are rejected before any parsing recursion could matter.
constexpr size_t kMaxDepth = 64;
// Most invalidation events and history points kept for the dashboard.
constexpr size_t kInvalidationLog = 50;
constexpr size_t kHistoryPoints = 360;

double UnixNow() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// printf's "%.6g" (std::to_chars' general form with precision 6 is
// specified as that conversion), without printf's format parsing: a tenth
// of the instructions on every hit's ageSeconds.
std::string Num(double v) {
  if (!std::isfinite(v)) return "0";
  char buf[64];
  const std::to_chars_result r =
      std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general, 6);
  return std::string(buf, r.ptr);
}

// A hit's reply body: `head` (e.g. "{\"hit\":true"), the result, its age.
std::string HitBody(std::string_view head, const std::string* result_json,
                    double age_seconds) {
  const size_t n = result_json ? result_json->size() : 0;
  std::string out;
  out.reserve(n + head.size() + 48);
  out += head;
  out += ",\"result\":";
  if (result_json != nullptr) {
    out += *result_json;
  } else {
    out += "null";
  }
  out += ",\"ageSeconds\":";
  out += Num(age_seconds);
  out += '}';
  return out;
}

Reply Error(int status, std::string_view code, std::string_view message) {
  Reply r;
  r.status = status;
  r.body = "{\"error\":{\"code\":" + json::Quote(code) +
           ",\"message\":" + json::Quote(message) + "}}";
  return r;
}

Reply Json(std::string body) {
  Reply r;
  r.body = std::move(body);
  return r;
}

dom::parser& ThreadParser() {
  // Choice: documents up to 64 MiB (the server caps bodies lower).
  thread_local dom::parser parser(64u << 20);
  thread_local bool sized = false;
  if (!sized) {
    // Capacity grows as needed; only the depth is fixed here.
    sized = parser.allocate(1 << 16, kMaxDepth) == simdjson::SUCCESS;
  }
  return parser;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t SkipSpace(std::string_view t, size_t i) {
  while (i < t.size() && IsSpace(t[i])) ++i;
  return i;
}

// REQUIRES: `t` is valid JSON and t[i] == '"'. Just after the string.
size_t StringEnd(std::string_view t, size_t i) {
  for (++i; i < t.size(); ++i) {
    if (t[i] == '\\') {
      ++i;
    } else if (t[i] == '"') {
      return i + 1;
    }
  }
  return t.size();
}

// REQUIRES: `t` is valid JSON and a value starts at t[i]. Just after it.
size_t ValueEnd(std::string_view t, size_t i) {
  if (i >= t.size()) return t.size();
  if (t[i] == '"') return StringEnd(t, i);
  if (t[i] != '{' && t[i] != '[') {
    while (i < t.size() && t[i] != ',' && t[i] != '}' && t[i] != ']' &&
           !IsSpace(t[i])) {
      ++i;
    }
    return i;
  }
  size_t depth = 0;
  for (; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '"') {
      i = StringEnd(t, i) - 1;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      return i + 1;
    }
  }
  return t.size();
}

// Deepest nesting of arrays and objects in the JSON text `t`.
size_t MaxDepth(std::string_view t) {
  size_t depth = 0, deepest = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '"') {
      i = StringEnd(t, i) - 1;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

// REQUIRES: `object` is a valid JSON object. The raw text of its first
// top-level member named `key` (names compared decoded, as simdjson's
// at_key does), or nullopt.
std::optional<std::string_view> MemberSpan(std::string_view object,
                                           std::string_view key) {
  size_t i = SkipSpace(object, 0);
  if (i >= object.size() || object[i] != '{') return std::nullopt;
  i = SkipSpace(object, i + 1);
  while (i < object.size() && object[i] == '"') {
    const size_t name_end = StringEnd(object, i);
    const std::string_view literal = object.substr(i, name_end - i);
    bool match = false;
    if (literal.find('\\') == std::string_view::npos) {
      match = literal.substr(1, literal.size() - 2) == key;
    } else {
      nlohmann::json name = nlohmann::json::parse(literal, nullptr, false);
      match = name.is_string() && name.get_ref<const std::string&>() == key;
    }
    i = SkipSpace(object, SkipSpace(object, name_end) + 1);  // past ':'
    const size_t value_end = ValueEnd(object, i);
    if (match) return object.substr(i, value_end - i);
    i = SkipSpace(object, value_end);
    if (i >= object.size() || object[i] != ',') break;
    i = SkipSpace(object, i + 1);
  }
  return std::nullopt;
}

// The JSON text `v` without insignificant whitespace; every token (number
// spellings, string escapes) byte for byte as sent.
std::string MinifyText(std::string_view v) {
  std::string out(v.size() + simdjson::SIMDJSON_PADDING, '\0');
  size_t n = 0;
  if (simdjson::minify(v.data(), v.size(), out.data(), n) !=
      simdjson::SUCCESS) {
    return std::string(v);  // not reached for validated text
  }
  out.resize(n);
  return out;
}

// One parsed request body: an object, with typed field access that names
// the field in its error.
//
// Choice: simdjson's DOM validates and types the fields; a body it refuses
// only for a number it cannot represent (an integer beyond 64 bits, valid
// JSON) is validated by nlohmann's SAX acceptor instead and its fields are
// read from their own text. Raw values (`arguments`, `result`) are always
// cut from the body's text, so numbers and escapes are kept as sent.
class Body {
 public:
  // INVALID_ARGUMENT naming the problem unless `text` is one JSON object.
  Status Parse(std::string_view text) {
    if (text.empty())
      return InvalidArgument("empty body: expected a JSON object");
    text_ = text;
    dom::parser& p = ThreadParser();
    dom::element e;
    auto err = p.parse(text.data(), text.size(), true).get(e);
    if (err == simdjson::NUMBER_ERROR && MaxDepth(text) <= kMaxDepth &&
        nlohmann::json::accept(text)) {
      // Valid JSON with a number simdjson cannot hold.
      fallback_ = true;
      if (text[SkipSpace(text, 0)] != '{') {
        return InvalidArgument("body must be a JSON object");
      }
      return Status::Ok();
    }
    if (err) {
      if (err == simdjson::DEPTH_ERROR) {
        return InvalidArgument("body nested deeper than " +
                               std::to_string(kMaxDepth) + " levels");
      }
      return InvalidArgument(std::string("body is not valid JSON: ") +
                             simdjson::error_message(err));
    }
    if (e.get_object().get(obj_)) {
      return InvalidArgument("body must be a JSON object");
    }
    return Status::Ok();
  }
  bool Has(std::string_view key) const {
    if (fallback_) {
      std::optional<std::string_view> v = MemberSpan(text_, key);
      return v && *v != "null";
    }
    dom::element e;
    return obj_.at_key(key).get(e) == simdjson::SUCCESS && !e.is_null();
  }
  // A required (or optional, when `required` is false) string.
  Status String(std::string_view key, bool required, std::string* out) const {
    std::optional<std::string> got;
    bool wrong_type = false;
    if (fallback_) {
      nlohmann::json v = Member(key);
      if (v.is_string()) {
        got = v.get<std::string>();
      } else {
        wrong_type = !v.is_null();
      }
    } else {
      dom::element e;
      if (!obj_.at_key(key).get(e) && !e.is_null()) {
        std::string_view sv;
        wrong_type = static_cast<bool>(e.get_string().get(sv));
        if (!wrong_type) got = std::string(sv);
      }
    }
    if (wrong_type) {
      return InvalidArgument("'" + std::string(key) + "' must be a string");
    }
    if (!got) {
      if (required)
        return InvalidArgument("'" + std::string(key) + "' is required");
      return Status::Ok();
    }
    if (required && got->empty()) {
      return InvalidArgument("'" + std::string(key) + "' must not be empty");
    }
    *out = std::move(*got);
    return Status::Ok();
  }
  Status Number(std::string_view key, double* out) const {
    double v = 0;
    if (fallback_) {
      nlohmann::json j = Member(key);
      if (j.is_null()) return Status::Ok();
      if (!j.is_number()) return NotANumber(key);
      v = j.get<double>();
    } else {
      dom::element e;
      if (obj_.at_key(key).get(e) || e.is_null()) return Status::Ok();
      if (e.get_double().get(v)) return NotANumber(key);
    }
    if (!std::isfinite(v) || v < 0) return NotANumber(key);
    *out = v;
    return Status::Ok();
  }
  Status Bool(std::string_view key, bool* out) const {
    if (fallback_) {
      nlohmann::json j = Member(key);
      if (j.is_null()) return Status::Ok();
      if (!j.is_boolean()) return NotABool(key);
      *out = j.get<bool>();
      return Status::Ok();
    }
    dom::element e;
    if (obj_.at_key(key).get(e) || e.is_null()) return Status::Ok();
    if (e.get_bool().get(*out)) return NotABool(key);
    return Status::Ok();
  }
  // Any JSON value, minified (tokens byte for byte as sent). `object_only`:
  // must be an object (null counts as absent).
  Status Raw(std::string_view key, bool object_only, std::string* out,
             bool* present) const {
    std::string_view v;
    if (Status s = RawView(key, object_only, &v, present);
        !s.ok() || !*present) {
      return s;
    }
    *out = MinifyText(v);
    return Status::Ok();
  }
  // As Raw, the value's text as sent (a view into the body), for a value
  // whose reader skips insignificant whitespace itself (the arguments: the
  // engine canonicalizes them).
  Status RawView(std::string_view key, bool object_only, std::string_view* out,
                 bool* present) const {
    *present = false;
    std::optional<std::string_view> v = MemberSpan(text_, key);
    if (!v) return Status::Ok();
    if (object_only && *v == "null") return Status::Ok();
    if (object_only && v->front() != '{') {
      return InvalidArgument("'" + std::string(key) + "' must be an object");
    }
    *out = *v;
    *present = true;
    return Status::Ok();
  }

 private:
  // Fallback mode: the member's value, parsed alone (null when absent).
  nlohmann::json Member(std::string_view key) const {
    std::optional<std::string_view> v = MemberSpan(text_, key);
    if (!v) return nullptr;
    return nlohmann::json::parse(*v, nullptr, false);
  }
  static Status NotANumber(std::string_view key) {
    return InvalidArgument("'" + std::string(key) + "' must be a number >= 0");
  }
  static Status NotABool(std::string_view key) {
    return InvalidArgument("'" + std::string(key) + "' must be a boolean");
  }

  std::string_view text_;
  bool fallback_ = false;
  dom::object obj_;
};

// The fields that name one tool call. `arguments` views the request body
// (valid while it is): the engine's canonicalizer skips its whitespace,
// so copying a minified form was a pass and an allocation for nothing.
struct CallFields {
  std::string server;
  std::string tool;
  std::string_view arguments = "{}";
  std::string user;
};

// A `tool` naming an MCP method the MCP face caches (tools/list,
// resources/read, ...: IsDeclaredMethodName) is refused with
// FAILED_PRECONDITION: that key space holds only the server's own answers
// on /mcp/<name>, and a tenant writing there would teach the cache another
// tool list (SECURITY.md, session 18).
Status ReadCall(const Body& b, CallFields* c) {
  if (Status s = b.String("server", true, &c->server); !s.ok()) return s;
  if (Status s = b.String("tool", true, &c->tool); !s.ok()) return s;
  if (IsDeclaredMethodName(c->tool)) {
    return FailedPrecondition(
        "'tool' " + json::Quote(c->tool) +
        " is an MCP method, not a tool: its cached answer comes only from "
        "the server itself at /mcp/<name>, never from this API");
  }
  if (Status s = b.String("user", false, &c->user); !s.ok()) return s;
  bool present = false;
  std::string_view args;
  if (Status s = b.RawView("arguments", true, &args, &present); !s.ok()) {
    return s;
  }
  if (present) c->arguments = args;
  return Status::Ok();
}

// The 400 of a body ReadCall refused: "reserved_tool_name" for an MCP
// method's name, else "bad_request".
Reply CallFieldsError(const Status& s) {
  return Error(400,
               s.code() == StatusCode::kFailedPrecondition
                   ? "reserved_tool_name"
                   : "bad_request",
               s.message());
}

// The outcome fields of record and complete: `result` (required unless
// "isError": true), `isError`, `complete`, `latencySeconds`, `cost`.
struct Outcome {
  std::string result;
  UpstreamResult r;  // r.result_json views `result`: not to be copied
  double cost = 0;
};

Status ReadOutcome(const Body& b, Outcome* o) {
  bool has_result = false;
  if (Status s = b.Raw("result", false, &o->result, &has_result); !s.ok()) {
    return s;
  }
  o->r.result_json = o->result;
  for (Status s :
       {b.Bool("isError", &o->r.is_error), b.Bool("complete", &o->r.complete),
        b.Number("latencySeconds", &o->r.latency_seconds),
        b.Number("cost", &o->cost)}) {
    if (!s.ok()) return s;
  }
  if (!has_result && !o->r.is_error) {
    return InvalidArgument("'result' is required (or \"isError\": true)");
  }
  // What is stored is answered as an MCP tool result (also at /mcp/<name>),
  // which is a JSON object; an error result is never stored or shared.
  if (has_result && !o->r.is_error && o->result.front() != '{') {
    return InvalidArgument(
        "'result' must be a JSON object (an MCP tool result, e.g. "
        "{\"content\":[...]}), not " +
        std::string(o->result.front() == '[' ? "an array" : "a scalar"));
  }
  return Status::Ok();
}

ToolCall MakeCall(const CallFields& c, std::string_view tenant) {
  ToolCall call;
  call.server = c.server;
  call.tool = c.tool;
  call.arguments_json = c.arguments;
  call.scope = tenant;
  call.user = c.user;
  return call;
}

// The 400 of a lookup / record / begin the engine refused for naming no
// user under `scope: user` (bypass "user_required").
constexpr std::string_view kUserRequired = "user_required";
Reply UserRequired() {
  return Error(400, kUserRequired,
               "'user' is required: the cache is configured with 'scope: "
               "user' (results depend on who asks), so a call that names no "
               "user may neither be served nor stored");
}

std::string VerdictJson(const Verdict& v) {
  std::string s = "{\"cacheable\":";
  s += v.cacheable ? "true" : "false";
  s += ",\"reason\":" + json::Quote(VerdictReasonName(v.reason));
  s += ",\"requestType\":" + json::Quote(RequestTypeName(v.request_type));
  s += ",\"ttlSeconds\":" + Num(v.ttl_seconds);
  s += ",\"source\":" + json::Quote(FeatureSourceName(v.source));
  s += ",\"detail\":" + json::Quote(v.detail);
  s += ",\"parameterCategory\":" + json::Quote(v.parameter_category) + "}";
  return s;
}

// Outcomes of a coalesced begin answered without the leader's result.
bool IsWaitedNoResult(std::string_view outcome) {
  return outcome == "leader_failed" || outcome == "wait_timeout" ||
         outcome == "waiter_gone";
}

std::string TicketText(TicketId t) { return "t" + std::to_string(t); }

bool ParseTicket(std::string_view s, TicketId* out) {
  if (s.size() < 2 || s[0] != 't' || s.size() > 21) return false;
  uint64_t v = 0;
  for (char ch : s.substr(1)) {
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + static_cast<uint64_t>(ch - '0');
  }
  *out = v;
  return true;
}

}  // namespace

CacheService::CacheService(ServiceOptions options)
    : options_(std::move(options)),
      guard_({.listen_host = options_.listen_host,
              .allowed_hosts = options_.allowed_hosts,
              .allowed_origins = options_.allowed_origins,
              .config_block = "serve"}) {
  started_ = UnixNow();
  metrics::Registry& r = *options_.registry;
  requests_ = &r.Counters("toolcache_serve_requests_total",
                          "Cache API requests by operation and status",
                          {"op", "status"});
  calls_ = &r.Counters(
      "toolcache_serve_calls_total",
      "Tool calls asked about (lookup, begin) by outcome: hit, miss, "
      "coalesced (a waiter answered with the leader's result), bypass, "
      "leader_failed / wait_timeout / waiter_gone (a waiter that got no "
      "result)",
      {"op", "outcome"});
  tenant_calls_ =
      &r.Counters("toolcache_serve_tenant_calls_total",
                  "Tool calls by tenant and outcome", {"tenant", "outcome"});
  bypasses_ = &r.Counters("toolcache_serve_bypasses_total",
                          "Calls not served from nor stored in the cache, "
                          "by reason",
                          {"reason"});
  tool_calls_ = &r.Counters("toolcache_serve_tool_calls_total",
                            "Tool calls by server, tool and outcome",
                            {"server", "tool", "outcome"});
  tool_saved_us_ = &r.Counters(
      "toolcache_serve_tool_saved_latency_microseconds_total",
      "Upstream latency saved by hits (the tool's mean recorded latency "
      "per hit)",
      {"server", "tool"});
  tool_latency_us_ = &r.Counters(
      "toolcache_serve_tool_recorded_latency_microseconds_total",
      "Measured latency of recorded / completed calls", {"server", "tool"});
  tool_cost_micro_ =
      &r.Counters("toolcache_serve_tool_recorded_cost_micros_total",
                  "Cost (millionths of the caller's unit) of recorded calls",
                  {"server", "tool"});
  tool_recorded_ =
      &r.Counters("toolcache_serve_tool_recorded_total",
                  "Recorded / completed calls", {"server", "tool"});
  saved_ = &r.Counters("toolcache_serve_saved_total",
                       "Saved upstream latency (latency_us, microseconds) and "
                       "cost (cost_micros, millionths) by hits",
                       {"what"});
  invalidations_ =
      &r.Counters("toolcache_serve_invalidations_total",
                  "Invalidations by cause: api (POST /v1/invalidate), write (a "
                  "recorded or begun COMMAND call)",
                  {"cause"});
  bytes_ = &r.Counters("toolcache_serve_bytes_total",
                       "Result bytes served from the cache and recorded",
                       {"direction"});
  store_errors_ = &r.Counters(
      "toolcache_store_errors_total",
      "Shared store failures outside lookups, by reason (engine)", {"reason"});
  engine_ = &r.Counters("toolcache_engine_events_total",
                        "Engine totals: admitted, not_admitted, "
                        "entries_invalidated, store_hits",
                        {"what"});
  latency_ = &r.Histograms("toolcache_serve_request_seconds",
                           "Time to answer a cache API request (server side)",
                           {"op"}, metrics::LatencyBuckets());
  ToolCache* cache = options_.cache;
  r.Gauge("toolcache_cache_entries", "Entries cached",
          [cache] { return static_cast<double>(cache->Stats().entries); });
  r.Gauge("toolcache_cache_bytes", "Bytes cached",
          [cache] { return static_cast<double>(cache->Stats().bytes); });
}

std::optional<std::string> CacheService::Admit(const http::Request& request,
                                               int* status,
                                               std::string* message) const {
  // Browser pages are kept out first (Host, Origin, Sec-Fetch-Site, a JSON
  // Content-Type on POSTs): src/http/browser_guard.h.
  if (http::GuardDecision g = guard_.Check(request, request.method == "POST");
      !g.allowed()) {
    *status = g.status;
    *message = std::move(g.message);
    return std::nullopt;
  }
  if (options_.tenants.empty()) return std::string();
  const std::string_view token =
      http::BearerToken(request.Header("authorization"));
  if (token.empty()) {
    *status = 401;
    *message = "missing 'Authorization: Bearer <token>'";
    return std::nullopt;
  }
  const Tenant* found = TenantOf(token);
  if (found == nullptr) {
    *status = 401;
    *message = "unknown bearer token";
    return std::nullopt;
  }
  return found->name;
}

const Tenant* CacheService::TenantOf(std::string_view token) const {
  // Every tenant's token is compared (no early exit): the time taken does
  // not tell which tenant, if any, matched.
  const Tenant* found = nullptr;
  for (const Tenant& t : options_.tenants) {
    if (http::TokenEquals(token, t.token)) found = &t;
  }
  return found;
}

std::optional<Reply> CacheService::Handle(const http::Request& request,
                                          const RequestContext& context) {
  const double t0 = options_.clock->NowSeconds();
  const std::string_view path = request.Path();
  const std::string_view method = request.method;
  std::string_view op = "other";
  auto done = [&](Reply r) {
    const RequestSeries s = SeriesOf(op, r.status);
    s.requests->Add();
    s.latency->Observe(options_.clock->NowSeconds() - t0);
    return r;
  };
  if (http::GuardDecision g = guard_.Check(request, method == "POST");
      !g.allowed()) {
    return done(Error(g.status, std::string(g.code()), g.message));
  }
  // The admin routes are the runtime's (src/runtime/startup/admin.h), as
  // on every HTTP face; "/" is serve's old name for the dashboard.
  if (method == "GET") {
    const std::string_view admin_path = path == "/" ? "/dashboard" : path;
    if (std::optional<runtime::AdminRoute> route =
            runtime::AdminRouteAt(admin_path, /*dashboard=*/true)) {
      switch (*route) {
        case runtime::AdminRoute::kMetrics:
          op = "metrics";
          break;
        case runtime::AdminRoute::kStats:
          op = "stats";
          break;
        case runtime::AdminRoute::kDashboard:
          op = "dashboard";
          break;
      }
      // The page carries no data; what it shows comes from the stats
      // route, which is checked (session 19).
      const runtime::AdminAccess access =
          *route == runtime::AdminRoute::kDashboard
              ? runtime::AdminAccess{.viewer = runtime::AdminViewer::kOperator}
              : runtime::CheckAdminAccess(
                    request, {.admin_token = options_.admin_token,
                              .tenants = !options_.tenants.empty(),
                              .tenant_of = [this](std::string_view token)
                                  -> std::optional<std::string> {
                                const Tenant* t = TenantOf(token);
                                if (t == nullptr) return std::nullopt;
                                return t->name;
                              }});
      if (access.viewer == runtime::AdminViewer::kNobody) {
        Reply r = Error(access.status, "unauthorized", access.message);
        r.headers = {{"content-type", "application/json"},
                     {"cache-control", "no-store"},
                     {"www-authenticate", "Bearer"}};
        return done(std::move(r));
      }
      const bool tenant_view = access.viewer == runtime::AdminViewer::kTenant;
      runtime::AdminReply a = runtime::AnswerAdmin(
          {.metrics =
               [&] {
                 return tenant_view ? TenantPrometheus(access.tenant)
                                    : Prometheus();
               },
           .stats =
               [&] {
                 return tenant_view ? TenantStats(access.tenant).body
                                    : StatsJson();
               },
           .dashboard = true},
          *route);
      Reply r;
      r.content_type = std::string(http::FindHeader(a.headers, "content-type"));
      r.headers = std::move(a.headers);
      r.body = std::move(a.body);
      return done(std::move(r));
    }
  }
  if (method == "GET" &&
      (path == "/v1/openapi.json" || path == "/openapi.json")) {
    op = "openapi";
    return done(Json(std::string(OpenApiJson())));
  }
  if (path.substr(0, 4) != "/v1/") {
    return done(Error(404, "not_found", "no route " + std::string(path)));
  }
  const std::string_view name = path.substr(4);
  static constexpr std::string_view kPosts[] = {
      "lookup", "record", "begin", "complete", "invalidate", "explain"};
  bool is_post_op = false;
  for (std::string_view p : kPosts) {
    if (name == p) {
      op = p;
      is_post_op = true;
    }
  }
  if (name == "stats") op = "tenant_stats";
  if (!is_post_op && name != "stats") {
    return done(Error(404, "not_found", "no route " + std::string(path)));
  }
  // Authentication.
  std::string tenant;
  if (!options_.tenants.empty()) {
    const std::string_view token =
        http::BearerToken(request.Header("authorization"));
    if (token.empty()) {
      return done(Error(401, "unauthorized",
                        "missing 'Authorization: Bearer <token>'"));
    }
    const Tenant* found = TenantOf(token);
    if (found == nullptr) {
      return done(Error(401, "unauthorized", "unknown bearer token"));
    }
    tenant = found->name;
  }
  if (name == "stats") {
    if (method != "GET") {
      return done(Error(405, "method_not_allowed", "use GET"));
    }
    return done(TenantStats(tenant));
  }
  if (method != "POST") {
    return done(Error(405, "method_not_allowed", "use POST"));
  }
  if (name == "lookup") return done(Lookup(tenant, request.body));
  if (name == "record") return done(Record(tenant, request.body));
  if (name == "complete") return done(Complete(tenant, request.body));
  if (name == "invalidate") return done(Invalidate(tenant, request.body));
  if (name == "explain") return done(Explain(tenant, request.body));
  // begin: may answer later.
  std::optional<Reply> r = Begin(tenant, request.body, context);
  if (r) return done(std::move(*r));
  requests_->Get({op, "deferred"})->Add();
  return std::nullopt;
}

void CacheService::CountOutcome(std::string_view tenant, std::string_view op,
                                std::string_view server, std::string_view tool,
                                std::string_view outcome,
                                std::string_view bypass_reason,
                                uint64_t bytes) {
  OutcomeSeries uncached;
  const OutcomeSeries& s =
      SeriesOf(tenant, op, server, tool, outcome, &uncached);
  s.calls->Add();
  s.tenant_calls->Add();
  s.tool_calls->Add();
  if (outcome == "bypass") bypasses_->Get({bypass_reason})->Add();
  if (s.tool_recorded != nullptr) {  // a hit or a coalesced call
    Resolve(bytes_served_, *bytes_, "served")->Add(bytes);
    const uint64_t n = s.tool_recorded->value();
    if (n > 0) {
      const uint64_t lat = s.tool_latency_us->value() / n;
      const uint64_t cost = s.tool_cost_micro->value() / n;
      // Created on the first saving, as before (the stats rows show a
      // tool's savedSeconds only once it saved something).
      metrics::Counter* saved = s.tool_saved_us.load(std::memory_order_acquire);
      if (saved == nullptr) {
        saved = tool_saved_us_->Get({server, tool});
        s.tool_saved_us.store(saved, std::memory_order_release);
      }
      saved->Add(lat);
      Resolve(saved_latency_us_, *saved_, "latency_us")->Add(lat);
      Resolve(saved_cost_micros_, *saved_, "cost_micros")->Add(cost);
    }
  }
}

// Choice: the request and outcome series are looked up once per distinct
// label set and remembered (a Family::Get builds a key, locks and searches
// an ordered map: the twelve of a lookup hit were ~3,600 of its
// instructions, callgrind). The remembered pointers are the families' own
// series, created at the same moment as before, so /metrics and the stats
// read exactly what they read before. Entries are never erased (their
// addresses stay valid); past kMaxRememberedSeries label sets, new ones
// are looked up each time instead.
constexpr size_t kMaxRememberedSeries = 4096;

metrics::Counter* CacheService::Resolve(std::atomic<metrics::Counter*>& slot,
                                        metrics::CounterFamily& family,
                                        std::string_view label) {
  metrics::Counter* c = slot.load(std::memory_order_acquire);
  if (c == nullptr) {
    c = family.Get({label});
    slot.store(c, std::memory_order_release);
  }
  return c;
}

// The routes Handle counts under (its `op`), each with its slots in
// route_requests_ / route_latency_.
constexpr std::string_view kRouteOps[] = {
    "lookup",  "record", "begin",     "complete", "invalidate", "explain",
    "metrics", "stats",  "dashboard", "openapi",  "other",      "tenant_stats"};

CacheService::RequestSeries CacheService::SeriesOf(std::string_view op,
                                                   int status) {
  // Choice: a named route's series sit in fixed slots, loaded without a
  // lock or a key (the locked map below cost ~500 instructions per
  // request, callgrind); the same Family::Get fills a slot on first use,
  // so /metrics reads the same series created at the same moment.
  static_assert(std::size(kRouteOps) == kRouteSlots);
  const int cls = status / 100;
  if (cls >= 1 && cls <= 5) {
    for (size_t i = 0; i < std::size(kRouteOps); ++i) {
      if (kRouteOps[i] != op) continue;
      std::atomic<metrics::Counter*>& rs = route_requests_[i][cls - 1];
      std::atomic<metrics::Histogram*>& ls = route_latency_[i];
      RequestSeries s{.requests = rs.load(std::memory_order_acquire),
                      .latency = ls.load(std::memory_order_acquire)};
      if (s.requests == nullptr) {
        s.requests = requests_->Get({op, std::to_string(cls) + "xx"});
        rs.store(s.requests, std::memory_order_release);
      }
      if (s.latency == nullptr) {
        s.latency = latency_->Get({op});
        ls.store(s.latency, std::memory_order_release);
      }
      return s;
    }
  }
  thread_local std::string key;
  key.assign(op).push_back('\0');
  // HTTP status codes are 100-599: one digit names the class.
  key.push_back(static_cast<char>('0' + status / 100));
  {
    std::lock_guard<std::mutex> lock(series_mu_);
    auto it = request_series_.find(std::string_view(key));
    if (it != request_series_.end()) return it->second;
  }
  const RequestSeries s{
      .requests = requests_->Get({op, std::to_string(status / 100) + "xx"}),
      .latency = latency_->Get({op})};
  std::lock_guard<std::mutex> lock(series_mu_);
  if (request_series_.size() < kMaxRememberedSeries) {
    request_series_.emplace(key, s);
  }
  return s;
}

const CacheService::OutcomeSeries& CacheService::SeriesOf(
    std::string_view tenant, std::string_view op, std::string_view server,
    std::string_view tool, std::string_view outcome, OutcomeSeries* uncached) {
  // Length-prefixed, so no two label sets share a key.
  thread_local std::string key;
  key.clear();
  for (std::string_view v : {tenant, op, server, tool, outcome}) {
    const uint64_t n = v.size();
    key.append(reinterpret_cast<const char*>(&n), sizeof(n));
    key.append(v);
  }
  {
    std::lock_guard<std::mutex> lock(series_mu_);
    auto it = outcome_series_.find(std::string_view(key));
    if (it != outcome_series_.end()) return it->second;
  }
  auto fill = [&](OutcomeSeries& s) {
    s.calls = calls_->Get({op, outcome});
    s.tenant_calls =
        tenant_calls_->Get({tenant.empty() ? "_global" : tenant, outcome});
    s.tool_calls = tool_calls_->Get({server, tool, outcome});
    if (outcome == "hit" || outcome == "coalesced") {
      s.tool_recorded = tool_recorded_->Get({server, tool});
      s.tool_latency_us = tool_latency_us_->Get({server, tool});
      s.tool_cost_micro = tool_cost_micro_->Get({server, tool});
    }
  };
  std::lock_guard<std::mutex> lock(series_mu_);
  if (outcome_series_.size() >= kMaxRememberedSeries) {
    fill(*uncached);
    return *uncached;
  }
  auto [it, inserted] = outcome_series_.try_emplace(key);
  if (inserted) fill(it->second);
  return it->second;
}

void CacheService::LogInvalidation(std::string_view tenant,
                                   std::string_view server,
                                   std::string_view resource,
                                   std::string_view cause) {
  invalidations_->Get({cause})->Add();
  std::lock_guard<std::mutex> lock(mu_);
  invalidations_log_.push_back({UnixNow(), std::string(tenant),
                                std::string(server), std::string(resource),
                                std::string(cause)});
  while (invalidations_log_.size() > kInvalidationLog) {
    invalidations_log_.pop_front();
  }
}

void CacheService::NoteWrite(std::string_view tenant, std::string_view server,
                             const Verdict& verdict) {
  // A COMMAND call invalidates its server in the engine (tool_cache.h).
  if (verdict.request_type == RequestType::kCommand) {
    LogInvalidation(tenant, server, "", "write");
  }
}

Reply CacheService::Lookup(std::string_view tenant, std::string_view body) {
  Body b;
  if (Status s = b.Parse(body); !s.ok()) {
    return Error(400, "bad_request", s.message());
  }
  CallFields c;
  if (Status s = ReadCall(b, &c); !s.ok()) return CallFieldsError(s);
  Probe p = options_.cache->Peek(MakeCall(c, tenant));
  if (p.bypass_reason == kUserRequired) return UserRequired();
  if (p.would_hit && p.result_json) {
    CountOutcome(tenant, "lookup", c.server, c.tool, "hit", "",
                 p.result_json->size());
    return Json(HitBody("{\"hit\":true", p.result_json.get(), p.age_seconds));
  }
  const bool cacheable = p.bypass_reason.empty();
  CountOutcome(tenant, "lookup", c.server, c.tool,
               cacheable ? "miss" : "bypass", p.bypass_reason, 0);
  return Json("{\"hit\":false,\"cacheable\":" +
              std::string(cacheable ? "true" : "false") + ",\"reason\":" +
              json::Quote(cacheable ? "miss" : p.bypass_reason) +
              ",\"verdict\":" + VerdictJson(p.verdict) + "}");
}

void CacheService::CountRecorded(std::string_view server, std::string_view tool,
                                 const UpstreamResult& r, double cost) {
  tool_recorded_->Get({server, tool})->Add();
  tool_latency_us_->Get({server, tool})
      ->Add(static_cast<uint64_t>(std::llround(r.latency_seconds * 1e6)));
  tool_cost_micro_->Get({server, tool})
      ->Add(static_cast<uint64_t>(std::llround(cost * 1e6)));
  bytes_->Get({"recorded"})->Add(r.result_json.size());
}

Reply CacheService::Record(std::string_view tenant, std::string_view body) {
  Body b;
  if (Status s = b.Parse(body); !s.ok()) {
    return Error(400, "bad_request", s.message());
  }
  CallFields c;
  if (Status s = ReadCall(b, &c); !s.ok()) return CallFieldsError(s);
  Outcome outcome;
  if (Status s = ReadOutcome(b, &outcome); !s.ok()) {
    return Error(400, "bad_request", s.message());
  }
  RecordOutcome o = options_.cache->Record(MakeCall(c, tenant), outcome.r);
  if (o.bypass_reason == kUserRequired) return UserRequired();
  CountRecorded(c.server, c.tool, outcome.r, outcome.cost);
  NoteWrite(tenant, c.server, o.verdict);
  std::string out = "{\"admitted\":";
  out += o.admitted ? "true" : "false";
  out += ",\"alreadyCached\":";
  out += o.already_cached ? "true" : "false";
  out += ",\"stale\":";
  out += o.stale ? "true" : "false";
  out += ",\"cacheable\":";
  out += o.bypass_reason.empty() ? "true" : "false";
  out += ",\"reason\":" + json::Quote(o.bypass_reason.empty()
                                          ? VerdictReasonName(o.reason)
                                          : std::string_view(o.bypass_reason));
  out += ",\"verdict\":" + VerdictJson(o.verdict) + "}";
  return Json(std::move(out));
}

bool CacheService::NeedsContext(std::string_view path) {
  return path == "/v1/begin";
}

std::optional<Reply> CacheService::Begin(std::string_view tenant,
                                         std::string_view body,
                                         const RequestContext& context) {
  // NeedsContext names this route; a binding that left the context empty
  // anyway gets an error, never a call through an empty function.
  if (!context.after || !context.later) {
    return Error(500, "internal", "begin without a request context");
  }
  Body b;
  if (Status s = b.Parse(body); !s.ok()) {
    return Error(400, "bad_request", s.message());
  }
  CallFields c;
  if (Status s = ReadCall(b, &c); !s.ok()) return CallFieldsError(s);
  double wait = options_.max_wait_seconds;
  if (Status s = b.Number("waitSeconds", &wait); !s.ok()) {
    return Error(400, "bad_request", s.message());
  }
  wait = std::min(wait, options_.max_wait_seconds);
  if (AtTicketLimit(tenant)) {
    // No new ticket for this tenant: serve a hit, let a write through (its
    // completion invalidates), send a read miss to run the tool itself.
    Probe probe = options_.cache->Peek(MakeCall(c, tenant));
    if (probe.bypass_reason == kUserRequired) return UserRequired();
    if (probe.verdict.request_type != RequestType::kCommand) {
      if (probe.would_hit && probe.result_json) {
        const size_t n = probe.result_json->size();
        CountOutcome(tenant, "begin", c.server, c.tool, "hit", "", n);
        return Json(HitBody("{\"action\":\"hit\"", probe.result_json.get(),
                            probe.age_seconds));
      }
      CountOutcome(tenant, "begin", c.server, c.tool, "bypass",
                   "open_ticket_limit", 0);
      spdlog::warn(
          "serve: tenant '{}' holds {} open tickets (the limit): {}/{} is "
          "forwarded without a ticket (bypass open_ticket_limit)",
          tenant, options_.max_open_tickets, c.server, c.tool);
      return Json(
          "{\"action\":\"forward\",\"cacheable\":false,\"reason\":"
          "\"open_ticket_limit\",\"detail\":\"this tenant holds the most "
          "open tickets allowed: run the tool yourself, and complete the "
          "tickets you hold\",\"verdict\":" +
          VerdictJson(probe.verdict) + "}");
    }
  }
  WaiterId id;
  {
    // Registered before Begin: a Completion racing with this call finds it.
    std::lock_guard<std::mutex> lock(mu_);
    id = next_waiter_++;
    waiters_[id] = Waiter{std::string(tenant), c.server, c.tool, context.later};
  }
  CallPlan p = options_.cache->Begin(MakeCall(c, tenant), id);
  if (p.action == CallAction::kWait) {
    // Counted when answered: coalesced only if the leader's result reaches
    // it (Finish), else under what happened instead.
    auto take = [this, id]() -> std::optional<Waiter> {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = waiters_.find(id);
      if (it == waiters_.end()) return std::nullopt;
      Waiter w = std::move(it->second);
      waiters_.erase(it);
      return w;
    };
    if (context.on_gone) {
      context.on_gone([this, take, id] {
        std::optional<Waiter> w = take();
        if (!w) return;
        (void)options_.cache->Cancel(id);
        CountOutcome(w->tenant, "begin", w->server, w->tool, "waiter_gone", "",
                     0);
      });
    }
    context.after(wait, [this, take, id] {
      std::optional<Waiter> w = take();
      if (!w) return;
      (void)options_.cache->Cancel(id);
      CountOutcome(w->tenant, "begin", w->server, w->tool, "wait_timeout", "",
                   0);
      w->later(
          Json("{\"action\":\"forward\",\"reason\":\"wait_timeout\","
               "\"detail\":\"the identical call in flight did not complete in "
               "time: run the tool yourself\"}"));
    });
    return std::nullopt;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    waiters_.erase(id);
  }
  if (p.bypass_reason == kUserRequired) {
    // No ticket: the engine's bypass flight ends here (nothing is stored).
    (void)options_.cache->Complete(p.ticket, {.is_error = true});
    return UserRequired();
  }
  if (p.action == CallAction::kServe) {
    const size_t n = p.result_json ? p.result_json->size() : 0;
    CountOutcome(tenant, "begin", c.server, c.tool, "hit", "", n);
    return Json(
        HitBody("{\"action\":\"hit\"", p.result_json.get(), p.age_seconds));
  }
  CountOutcome(tenant, "begin", c.server, c.tool, p.bypass ? "bypass" : "miss",
               p.bypass_reason, 0);
  if (p.verdict.request_type == RequestType::kCommand) {
    LogInvalidation(tenant, c.server, "", "write");
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    tickets_[p.ticket] = Ticket{std::string(tenant), c.server, c.tool};
    ++open_tickets_[std::string(tenant)];
  }
  const TicketId ticket = p.ticket;
  context.after(options_.lease_seconds,
                [this, ticket] { ExpireTicket(ticket); });
  return Json(
      "{\"action\":\"forward\",\"ticket\":" + json::Quote(TicketText(ticket)) +
      ",\"cacheable\":" + (p.bypass ? "false" : "true") +
      ",\"reason\":" + json::Quote(p.bypass ? p.bypass_reason : "miss") +
      ",\"leaseSeconds\":" + Num(options_.lease_seconds) +
      ",\"verdict\":" + VerdictJson(p.verdict) + "}");
}

Completion CacheService::Finish(TicketId ticket, const UpstreamResult& result,
                                std::string_view result_json,
                                size_t* answered) {
  Completion c = options_.cache->Complete(ticket, result);
  const bool shareable = !result.is_error && result.complete;
  std::string reply_body;
  if (shareable) {
    reply_body.reserve(result_json.size() + 40);
    reply_body += "{\"action\":\"coalesced\",\"result\":";
    reply_body += result_json;
    reply_body += "}";
  } else {
    reply_body =
        "{\"action\":\"forward\",\"reason\":\"leader_failed\",\"detail\":"
        "\"the identical call in flight failed or expired: run the tool "
        "yourself\"}";
  }
  for (WaiterId w : c.waiters) {
    std::optional<Waiter> waiter;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = waiters_.find(w);
      if (it != waiters_.end()) {
        waiter = std::move(it->second);
        waiters_.erase(it);
      }
    }
    if (!waiter) continue;
    CountOutcome(waiter->tenant, "begin", waiter->server, waiter->tool,
                 shareable ? "coalesced" : "leader_failed", "",
                 shareable ? result_json.size() : 0);
    ++*answered;
    waiter->later(Json(reply_body));
  }
  return c;
}

bool CacheService::AtTicketLimit(std::string_view tenant) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = open_tickets_.find(tenant);
  return it != open_tickets_.end() && it->second >= options_.max_open_tickets;
}

void CacheService::CloseTicket(std::map<TicketId, Ticket>::iterator it) {
  auto open = open_tickets_.find(it->second.tenant);
  if (open != open_tickets_.end() && --open->second == 0) {
    open_tickets_.erase(open);
  }
  tickets_.erase(it);
}

void CacheService::ExpireTicket(TicketId ticket) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tickets_.find(ticket);
    if (it == tickets_.end()) return;
    CloseTicket(it);
  }
  UpstreamResult r;
  r.is_error = true;
  r.complete = false;
  size_t answered = 0;
  (void)Finish(ticket, r, "", &answered);
}

Reply CacheService::Complete(std::string_view tenant, std::string_view body) {
  Body b;
  if (Status s = b.Parse(body); !s.ok()) {
    return Error(400, "bad_request", s.message());
  }
  std::string ticket_text;
  if (Status s = b.String("ticket", true, &ticket_text); !s.ok()) {
    return Error(400, "bad_request", s.message());
  }
  TicketId ticket = 0;
  if (!ParseTicket(ticket_text, &ticket)) {
    return Error(400, "bad_request", "'ticket' is not a ticket from begin");
  }
  Outcome outcome;
  const Status read = ReadOutcome(b, &outcome);
  Ticket t;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tickets_.find(ticket);
    // Another tenant's ticket is reported exactly like an unknown one.
    if (it == tickets_.end() || it->second.tenant != tenant) {
      return Error(404, "unknown_ticket",
                   "no open ticket " + ticket_text +
                       " (completed, expired, or never issued)");
    }
    t = it->second;  // a copy: CloseTicket reads its tenant
    CloseTicket(it);
  }
  if (!read.ok()) {
    // A refused completion ends the flight as failed: its waiters run the
    // tool themselves now instead of waiting out their wait.
    UpstreamResult failed;
    failed.is_error = true;
    failed.complete = false;
    size_t answered = 0;
    (void)Finish(ticket, failed, "", &answered);
    return Error(400, "bad_request",
                 read.message() + " (the ticket is closed as failed)");
  }
  CountRecorded(t.server, t.tool, outcome.r, outcome.cost);
  size_t answered = 0;
  Completion c = Finish(ticket, outcome.r, outcome.result, &answered);
  std::string out = "{\"admitted\":";
  out += c.admitted ? "true" : "false";
  out += ",\"reason\":" + json::Quote(VerdictReasonName(c.reason));
  out += ",\"waitersAnswered\":" + std::to_string(answered) + "}";
  return Json(std::move(out));
}

Reply CacheService::Invalidate(std::string_view tenant, std::string_view body) {
  Body b;
  if (Status s = b.Parse(body); !s.ok()) {
    return Error(400, "bad_request", s.message());
  }
  std::string server;
  std::string resource;
  if (Status s = b.String("server", true, &server); !s.ok()) {
    return Error(400, "bad_request", s.message());
  }
  if (Status s = b.String("resource", false, &resource); !s.ok()) {
    return Error(400, "bad_request", s.message());
  }
  // Every tenant's entries of the resource go (a write changes what
  // everyone reads); the count is the caller's own entries only (session
  // 18): across tenants it told one tenant whether another had the
  // resource cached.
  const uint64_t dropped =
      options_.cache->InvalidateAs(tenant, server, resource);
  LogInvalidation(tenant, server, resource, "api");
  return Json("{\"invalidated\":true,\"entriesDropped\":" +
              std::to_string(dropped) + "}");
}

Reply CacheService::Explain(std::string_view tenant, std::string_view body) {
  Body b;
  if (Status s = b.Parse(body); !s.ok()) {
    return Error(400, "bad_request", s.message());
  }
  CallFields c;
  if (Status s = ReadCall(b, &c); !s.ok()) return CallFieldsError(s);
  Probe p = options_.cache->Peek(MakeCall(c, tenant));
  const bool cacheable = p.bypass_reason.empty();
  std::string out = "{\"cacheable\":";
  out += cacheable ? "true" : "false";
  out += ",\"reason\":" + json::Quote(cacheable
                                          ? std::string_view("cacheable")
                                          : std::string_view(p.bypass_reason));
  out += ",\"ttlSeconds\":" + Num(cacheable ? p.verdict.ttl_seconds : 0);
  out += ",\"cached\":";
  out += p.would_hit ? "true" : "false";
  if (p.would_hit) out += ",\"ageSeconds\":" + Num(p.age_seconds);
  // The policy's score of the cached entry (null: not cached here, or a
  // policy that ranks by recency/frequency alone).
  out += ",\"valueScore\":";
  out += p.value_score ? Num(*p.value_score) : std::string("null");
  out += ",\"verdict\":" + VerdictJson(p.verdict) + "}";
  return Json(std::move(out));
}

Reply CacheService::TenantStats(std::string_view tenant) {
  nlohmann::ordered_json j;
  j["tenant"] = tenant.empty() ? "_global" : std::string(tenant);
  nlohmann::ordered_json by = nlohmann::ordered_json::object();
  const std::string key = tenant.empty() ? "_global" : std::string(tenant);
  tenant_calls_->ForEach(
      [&](const std::vector<std::string>& v, const metrics::Counter& c) {
        if (v[0] == key) by[v[1]] = c.value();
      });
  j["calls"] = by;
  return Json(j.dump());
}

std::string CacheService::TenantPrometheus(std::string_view tenant) {
  // A registry of the tenant's own series only: its calls by outcome, under
  // the operator's series name (a dashboard built on one works on both).
  metrics::Registry r;
  metrics::CounterFamily& calls = r.Counters(
      tenant_calls_->name(), "Tool calls by tenant and outcome (this tenant)",
      {"tenant", "outcome"});
  const std::string key = tenant.empty() ? "_global" : std::string(tenant);
  tenant_calls_->ForEach(
      [&](const std::vector<std::string>& v, const metrics::Counter& c) {
        if (v[0] == key) calls.Get({v[0], v[1]})->Add(c.value());
      });
  return r.Prometheus();
}

CacheService::Totals CacheService::ReadTotals() const {
  Totals t;
  calls_->ForEach(
      [&](const std::vector<std::string>& v, const metrics::Counter& c) {
        const uint64_t n = c.value();
        t.calls += n;
        if (v[1] == "hit") t.hits += n;
        if (v[1] == "miss") t.misses += n;
        if (v[1] == "coalesced") t.coalesced += n;
        if (v[1] == "bypass") t.bypasses += n;
        if (IsWaitedNoResult(v[1])) t.waited_no_result += n;
      });
  saved_->ForEach(
      [&](const std::vector<std::string>& v, const metrics::Counter& c) {
        if (v[0] == "latency_us") t.saved_seconds = c.value() / 1e6;
        if (v[0] == "cost_micros") t.saved_cost = c.value() / 1e6;
      });
  return t;
}

void CacheService::DropWaiters() {
  std::map<WaiterId, Waiter> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dropped.swap(waiters_);
  }
  // `dropped` (and the connections its replies hold) goes here.
}

void CacheService::Sample() {
  Totals t = ReadTotals();
  std::lock_guard<std::mutex> lock(mu_);
  history_.push_back({UnixNow(), t.calls, t.hits + t.coalesced, t.saved_seconds,
                      t.saved_cost});
  while (history_.size() > kHistoryPoints) history_.pop_front();
}

std::string CacheService::Prometheus() {
  // Engine totals are mirrored into counters (delta since last read).
  ToolCacheStats s = options_.cache->Stats();
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto sync = [&](metrics::CounterFamily* f, const std::string& label,
                    uint64_t now) {
      uint64_t& seen = engine_seen_[f->name() + '\0' + label];
      if (now > seen) f->Get({label})->Add(now - seen);
      seen = std::max(seen, now);
    };
    for (const auto& [reason, n] : s.store_errors) {
      sync(store_errors_, reason, n);
    }
    sync(engine_, "admitted", s.admitted);
    sync(engine_, "not_admitted", s.not_admitted);
    sync(engine_, "invalidations", s.invalidations);
    sync(engine_, "entries_invalidated", s.entries_invalidated);
    sync(engine_, "store_hits", s.store_hits);
  }
  return options_.registry->Prometheus();
}

std::string CacheService::StatsJson() {
  (void)Prometheus();  // syncs the engine counters
  Totals t = ReadTotals();
  nlohmann::ordered_json j;
  j["uptimeSeconds"] = UnixNow() - started_;
  nlohmann::ordered_json tot;
  tot["calls"] = t.calls;
  tot["hits"] = t.hits;
  tot["misses"] = t.misses;
  tot["coalesced"] = t.coalesced;
  tot["bypasses"] = t.bypasses;
  tot["waitedNoResult"] = t.waited_no_result;
  tot["hitRatio"] = t.calls > 0 ? static_cast<double>(t.hits + t.coalesced) /
                                      static_cast<double>(t.calls)
                                : 0.0;
  tot["savedSeconds"] = t.saved_seconds;
  tot["savedCost"] = t.saved_cost;
  uint64_t served = 0, recorded = 0;
  bytes_->ForEach(
      [&](const std::vector<std::string>& v, const metrics::Counter& c) {
        if (v[0] == "served") served = c.value();
        if (v[0] == "recorded") recorded = c.value();
      });
  tot["bytesServed"] = served;
  tot["bytesRecorded"] = recorded;
  uint64_t inv = 0;
  invalidations_->ForEach([&](const std::vector<std::string>&,
                              const metrics::Counter& c) { inv += c.value(); });
  tot["invalidations"] = inv;
  j["totals"] = tot;
  nlohmann::ordered_json by = nlohmann::ordered_json::object();
  bypasses_->ForEach([&](const std::vector<std::string>& v,
                         const metrics::Counter& c) { by[v[0]] = c.value(); });
  j["bypassesByReason"] = by;
  // Per-tool table.
  std::map<std::pair<std::string, std::string>, nlohmann::ordered_json> tools;
  tool_calls_->ForEach(
      [&](const std::vector<std::string>& v, const metrics::Counter& c) {
        nlohmann::ordered_json& row = tools[{v[0], v[1]}];
        if (row.is_null()) {
          row["server"] = v[0];
          row["tool"] = v[1];
          for (const char* k : {"calls", "hits", "misses", "coalesced",
                                "bypasses", "waitedNoResult"}) {
            row[k] = 0;
          }
          row["savedSeconds"] = 0.0;
        }
        const std::string key = v[2] == "hit"            ? "hits"
                                : v[2] == "miss"         ? "misses"
                                : v[2] == "coalesced"    ? "coalesced"
                                : IsWaitedNoResult(v[2]) ? "waitedNoResult"
                                                         : "bypasses";
        row[key] = row[key].get<uint64_t>() + c.value();
        row["calls"] = row["calls"].get<uint64_t>() + c.value();
      });
  tool_saved_us_->ForEach(
      [&](const std::vector<std::string>& v, const metrics::Counter& c) {
        auto it = tools.find({v[0], v[1]});
        if (it != tools.end()) it->second["savedSeconds"] = c.value() / 1e6;
      });
  nlohmann::ordered_json tool_rows = nlohmann::ordered_json::array();
  for (auto& [k, row] : tools) tool_rows.push_back(std::move(row));
  j["tools"] = tool_rows;
  // The engine's counters go under "cache" in the one stats shape
  // (src/runtime/stats.h): every face's calls through the engine, the MCP
  // endpoint's included.
  const ToolCacheStats s = options_.cache->Stats();
  if (mcp_stats_) {
    j["mcp"] = nlohmann::ordered_json::parse(mcp_stats_(), nullptr, false);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    nlohmann::ordered_json inv_rows = nlohmann::ordered_json::array();
    for (auto it = invalidations_log_.rbegin(); it != invalidations_log_.rend();
         ++it) {
      nlohmann::ordered_json e;
      e["time"] = it->unix_seconds;
      e["tenant"] = it->tenant;
      e["server"] = it->server;
      e["resource"] = it->resource;
      e["cause"] = it->cause;
      inv_rows.push_back(std::move(e));
    }
    j["recentInvalidations"] = inv_rows;
    nlohmann::ordered_json hist = nlohmann::ordered_json::array();
    for (const Point& p : history_) {
      hist.push_back({{"time", p.unix_seconds},
                      {"calls", p.calls},
                      {"hits", p.hits},
                      {"savedSeconds", p.saved_seconds},
                      {"savedCost", p.saved_cost}});
    }
    j["history"] = hist;
    j["openTickets"] = tickets_.size();
    j["waiting"] = waiters_.size();
  }
  runtime::StatsSnapshot snap("serve", &s);
  snap.face_fields = std::move(j);
  return runtime::SerializeStats(snap);
}

}  // namespace toolcache::serve
