// Invariants (all guarded by mu_):
// - Every ticket handed out by Begin is in flights_ until Complete; a
//   joinable flight (cacheable, not detached) is also in joinable_ under its
//   full key text, and a key maps to at most one joinable flight.
// - waiter_ticket_ holds exactly the waiters listed in some flight's waiters.
// - generation_[server] increases on every invalidation of `server`; a flight
//   whose start generation differs at Complete overlapped a write and is not
//   admitted (its waiters are still answered).
// - A COMMAND call invalidates at Begin and again at Complete, and every
//   invalidation detaches the server's joinable flights, so no call that
//   starts after a write completed is answered with pre-write data.
// - task_writes_[server] counts the server's flights with blocks_server
//   (task-augmented possible writes) still in flights_; while it is > 0, or
//   the server is in refreshing_, no call of the server is served or
//   joins/starts a cacheable flight.
// - Resource strings (arguments and invalidation targets) are compared only
//   in their normalized form (NormalizeResource); a relative path on either
//   side matches everything of its server (IsUnanchored).
#include "toolcache/tool_cache.h"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "toolcache/canonical_json.h"
#include "toolcache/classifier.h"
#include "toolcache/policy.h"
#include "toolcache/result_cache.h"

namespace toolcache {
namespace {

bool IsJsonSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Choice: argument names that identify the resource a call touches, for the
// "resource" invalidation scope (filesystem paths, URIs, move source/target).
constexpr std::string_view kResourceArgNames[] = {
    "path",     "paths",     "uri",       "url",      "file",
    "filename", "file_path", "filepath",  "source",   "destination",
    "target",   "dir",       "directory", "resource", "uri_template"};

bool IsResourceArg(std::string_view name) {
  return std::find(std::begin(kResourceArgNames), std::end(kResourceArgNames),
                   name) != std::end(kResourceArgNames);
}

// Lexically normalized POSIX path: "." and empty segments dropped, ".."
// resolved (never above the root), no trailing '/' (except "/" itself).
std::string NormalizePath(std::string_view path) {
  const bool absolute = !path.empty() && path.front() == '/';
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    const size_t slash = path.find('/');
    std::string_view seg = path.substr(0, slash);
    path = slash == std::string_view::npos ? std::string_view()
                                           : path.substr(slash + 1);
    if (seg.empty() || seg == ".") continue;
    if (seg == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
      } else if (!absolute) {
        parts.push_back(seg);  // a relative path may climb; "/.." is "/"
      }
      continue;
    }
    parts.push_back(seg);
  }
  std::string out = absolute ? "/" : "";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += '/';
    out += parts[i];
  }
  if (out.empty()) out = ".";
  return out;
}

// The scheme of a URI ("file", "https"), or "" when `s` is not one. Choice:
// a one-letter "scheme" is a Windows drive (C:\x), not a URI.
std::string_view UriScheme(std::string_view s) {
  const size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon < 2) return {};
  for (size_t i = 0; i < colon; ++i) {
    const char c = s[i];
    const bool ok = std::isalpha(static_cast<unsigned char>(c)) ||
                    (i > 0 && (std::isdigit(static_cast<unsigned char>(c)) ||
                               c == '+' || c == '-' || c == '.'));
    if (!ok) return {};
  }
  return s.substr(0, colon);
}

// The local path a file:// URI names (percent-decoded), or nullopt when it
// names another host or is malformed (RFC 8089: file:///p, file://localhost/p
// and file:/p are local).
std::optional<std::string> FileUriPath(std::string_view uri) {
  std::string_view rest = uri.substr(5);  // after "file:"
  rest = rest.substr(0, rest.find_first_of("?#"));
  if (rest.substr(0, 2) == "//") {
    rest.remove_prefix(2);
    const size_t slash = rest.find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    std::string_view host = rest.substr(0, slash);
    if (!host.empty() && host != "localhost") return std::nullopt;
    rest.remove_prefix(slash);
  }
  if (rest.empty() || rest.front() != '/') return std::nullopt;
  std::string path;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] != '%') {
      path += rest[i];
      continue;
    }
    if (i + 2 >= rest.size() ||
        !std::isxdigit(static_cast<unsigned char>(rest[i + 1])) ||
        !std::isxdigit(static_cast<unsigned char>(rest[i + 2]))) {
      return std::nullopt;
    }
    path += static_cast<char>(
        std::stoi(std::string(rest.substr(i + 1, 2)), nullptr, 16));
    i += 2;
  }
  return NormalizePath(path);
}

// A resource argument or invalidation target in comparable form: paths
// normalized lexically, file:// URIs as their local path, other URIs as
// given. nullopt: a file:// URI of another host (no local path).
std::optional<std::string> NormalizeResource(std::string_view value) {
  std::string_view scheme = UriScheme(value);
  if (scheme.empty()) return NormalizePath(value);
  std::string lower(scheme);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (lower == "file") return FileUriPath(value);
  return std::string(value);
}

// Position just after the JSON string literal starting at text[pos] (a
// '"'), or npos when it is not terminated.
size_t SkipString(std::string_view text, size_t pos) {
  for (size_t i = pos + 1; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == '"') {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

// Position just after the JSON value starting at text[pos], or npos. The
// value is walked, never copied (strings, nesting); scalars end at the next
// ',', '}', ']' or whitespace.
size_t SkipValue(std::string_view text, size_t pos) {
  if (pos >= text.size()) return std::string_view::npos;
  const char c = text[pos];
  if (c == '"') return SkipString(text, pos);
  if (c != '{' && c != '[') {
    while (pos < text.size() && text[pos] != ',' && text[pos] != '}' &&
           text[pos] != ']' && !IsJsonSpace(text[pos])) {
      ++pos;
    }
    return pos;
  }
  int depth = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    const char d = text[i];
    if (d == '"') {
      i = SkipString(text, i);
      if (i == std::string_view::npos) return i;
      --i;
    } else if (d == '{' || d == '[') {
      ++depth;
    } else if ((d == '}' || d == ']') && --depth == 0) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

size_t SkipSpace(std::string_view text, size_t pos) {
  while (pos < text.size() && IsJsonSpace(text[pos])) ++pos;
  return pos;
}

// The decoded text of a JSON string literal (nullopt when it is not one).
std::optional<std::string> DecodeLiteral(std::string_view literal) {
  if (literal.size() < 2 || literal.front() != '"') return std::nullopt;
  if (literal.find('\\') == std::string_view::npos) {
    return std::string(literal.substr(1, literal.size() - 2));
  }
  nlohmann::json j = nlohmann::json::parse(literal, nullptr, false);
  if (!j.is_string()) return std::nullopt;
  return j.get<std::string>();
}

// Normalized string values of the resource-named top-level arguments
// (strings or arrays of strings) of a JSON arguments document. Only the
// top level is walked and only resource values are decoded: a 60 MiB
// "content" beside a "path" is skipped in place, never copied (a DOM parse
// held it twice more). A document that is not a well-formed object yields
// what was found before the problem (nothing, when it is not an object).
std::vector<std::string> ResourceValues(std::string_view args_json) {
  std::vector<std::string> out;
  auto add = [&](std::string_view literal) {
    std::optional<std::string> v = DecodeLiteral(literal);
    if (!v) return;
    std::optional<std::string> n = NormalizeResource(*v);
    out.push_back(n ? std::move(*n) : std::move(*v));
  };
  size_t pos = SkipSpace(args_json, 0);
  if (pos >= args_json.size() || args_json[pos] != '{') return out;
  pos = SkipSpace(args_json, pos + 1);
  while (pos < args_json.size() && args_json[pos] == '"') {
    const size_t name_end = SkipString(args_json, pos);
    if (name_end == std::string_view::npos) return out;
    const std::optional<std::string> name =
        DecodeLiteral(args_json.substr(pos, name_end - pos));
    pos = SkipSpace(args_json, name_end);
    if (pos >= args_json.size() || args_json[pos] != ':') return out;
    pos = SkipSpace(args_json, pos + 1);
    const size_t value_end = SkipValue(args_json, pos);
    if (value_end == std::string_view::npos) return out;
    const std::string_view value = args_json.substr(pos, value_end - pos);
    if (name && IsResourceArg(*name)) {
      if (value.front() == '"') {
        add(value);
      } else if (value.front() == '[') {
        size_t e = SkipSpace(value, 1);
        while (e < value.size() && value[e] != ']') {
          const size_t end = SkipValue(value, e);
          if (end == std::string_view::npos) break;
          if (value[e] == '"') add(value.substr(e, end - e));
          e = SkipSpace(value, end);
          if (e < value.size() && value[e] == ',') e = SkipSpace(value, e + 1);
        }
      }
    }
    pos = SkipSpace(args_json, value_end);
    if (pos < args_json.size() && args_json[pos] == ',') {
      pos = SkipSpace(args_json, pos + 1);
    }
  }
  return out;
}

// True when a normalized resource cannot be placed in the file system
// without knowing the server: a path that is not absolute ("a.txt", ".",
// "~/x", "C:/x"). The server resolves it against its working directory,
// its allowed folders or its roots (server-filesystem: the first allowed
// folder, which changes with the roots), so it may be any path.
bool IsUnanchored(std::string_view normalized) {
  return UriScheme(normalized).empty() &&
         (normalized.empty() || normalized.front() != '/');
}

// True when `a` and `b` name the same resource or one contains the other
// (a directory and a file below it).
bool ResourcesOverlap(std::string_view a, std::string_view b) {
  if (a == b) return true;
  auto below = [](std::string_view parent, std::string_view child) {
    if (parent.empty() || child.size() <= parent.size()) return false;
    if (child.substr(0, parent.size()) != parent) return false;
    return parent.back() == '/' || child[parent.size()] == '/';
  };
  return below(a, b) || below(b, a);
}

std::string KeyText(const CacheKey& k) {
  std::string s;
  s.reserve(k.scope.size() + k.server.size() + k.tool.size() +
            k.canonical_args.size() + 3);
  s += k.scope;
  s += '\0';
  s += k.server;
  s += '\0';
  s += k.tool;
  s += '\0';
  s += k.canonical_args;
  return s;
}

// The value of the parameter-category argument, as compact JSON text.
std::string CategoryValue(std::string_view canonical_args,
                          std::string_view name) {
  if (name.empty()) return {};
  nlohmann::json j = nlohmann::json::parse(canonical_args, nullptr, false);
  if (!j.is_object()) return {};
  auto it = j.find(std::string(name));
  if (it == j.end()) return {};
  return it->is_string() ? it->get<std::string>() : it->dump();
}

class ToolCacheImpl final : public ToolCache {
 public:
  ToolCacheImpl(const Config& config, const Clock* clock,
                std::unique_ptr<ResultCache> store)
      : config_(config),
        clock_(clock),
        classifier_(config),
        store_(std::move(store)) {}

  void LearnTools(std::string_view server, std::span<const ToolInfo> tools,
                  bool replace) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto& known = tools_[std::string(server)];
    if (replace) {
      known.clear();
      refreshing_.erase(std::string(server));
    }
    for (const ToolInfo& t : tools) known[t.name] = t;
  }

  void ToolsChanged(std::string_view server) override {
    std::lock_guard<std::mutex> lock(mu_);
    tools_.erase(std::string(server));
    InvalidateLocked(server, {});
  }

  void ToolsRefreshing(std::string_view server) override {
    std::lock_guard<std::mutex> lock(mu_);
    tools_.erase(std::string(server));
    refreshing_.insert(std::string(server));
    InvalidateLocked(server, {});
  }

  CallPlan Begin(const ToolCall& call, WaiterId waiter) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.calls;
    CallPlan plan;
    std::string_view args;
    plan.verdict = ClassifyLocked(call, &args);

    Flight f;
    f.server = std::string(call.server);
    f.leader = waiter;
    f.waiters.push_back(waiter);
    f.generation = generation_[f.server];

    if (refreshing_.contains(f.server)) {
      // Choice: while the new tool list is unknown, any call may be a write
      // (a read-looking name proves nothing): invalidate like a COMMAND.
      MarkRefreshing(plan.verdict);
      f.command = true;
      InvalidateLocked(f.server, {});
      if (call.task_augmented) BlockServer(f, plan);
      return Bypass(std::move(plan), std::move(f), waiter, "tools_refreshing");
    }
    if (!plan.verdict.cacheable) {
      f.command = plan.verdict.request_type == RequestType::kCommand;
      if (f.command) {
        f.resources = ResourceValues(args);
        InvalidateLocked(f.server, f.resources);
        if (call.task_augmented) BlockServer(f, plan);
      }
      return Bypass(std::move(plan), std::move(f), waiter,
                    VerdictReasonName(plan.verdict.reason));
    }
    if (!call.bypass_reason.empty()) {
      // The face cannot share this call's answer (ToolCall::bypass_reason).
      plan.verdict.cacheable = false;
      plan.verdict.detail = "the face cannot share this call's answer";
      return Bypass(std::move(plan), std::move(f), waiter, call.bypass_reason);
    }
    Result<CacheKey> key = CacheableKeyLocked(call, args, plan.verdict);
    if (!key.ok()) {
      return Bypass(std::move(plan), std::move(f), waiter,
                    key.status().message());
    }
    f.key = std::move(*key);
    f.category =
        CategoryValue(f.key.canonical_args, plan.verdict.parameter_category);
    LookupResult hit = store_->Lookup(
        f.key, {.user = call.scope, .parameter_category = f.category});
    if (hit.hit()) {
      ++stats_.hits;
      stats_.latency_saved_seconds += hit.value->latency_seconds;
      stats_.bytes_served += hit.value->result.size();
      plan.action = CallAction::kServe;
      // The stored value lives as long as this aliasing pointer does.
      plan.result_json =
          std::shared_ptr<const std::string>(hit.value, &hit.value->result);
      plan.age_seconds = hit.age_seconds;
      return plan;
    }
    std::string text = KeyText(f.key);
    auto joinable = joinable_.find(text);
    if (joinable != joinable_.end()) {
      ++stats_.coalesced;
      flights_[joinable->second].waiters.push_back(waiter);
      waiter_ticket_[waiter] = joinable->second;
      plan.action = CallAction::kWait;
      plan.ticket = joinable->second;
      return plan;
    }
    ++stats_.misses;
    TicketId ticket = next_ticket_++;
    f.cacheable = true;
    f.ttl = plan.verdict.ttl_seconds;
    f.request_type = plan.verdict.request_type;
    f.scope = std::string(call.scope);
    f.key_text = text;
    joinable_[text] = ticket;
    waiter_ticket_[waiter] = ticket;
    flights_.emplace(ticket, std::move(f));
    plan.action = CallAction::kForward;
    plan.ticket = ticket;
    return plan;
  }

  Completion Complete(TicketId ticket, const UpstreamResult& r) override {
    std::lock_guard<std::mutex> lock(mu_);
    Completion c;
    auto it = flights_.find(ticket);
    if (it == flights_.end()) return c;
    Flight f = std::move(it->second);
    flights_.erase(it);
    Detach(f, ticket);
    for (WaiterId w : f.waiters) waiter_ticket_.erase(w);
    c.waiters = f.waiters;
    if (f.blocks_server) {
      auto t = task_writes_.find(f.server);
      if (t != task_writes_.end() && --t->second == 0) task_writes_.erase(t);
    }
    if (f.command) {
      // After the write: entries admitted meanwhile may predate it.
      InvalidateLocked(f.server, f.resources);
      return c;
    }
    if (!f.cacheable) return c;
    if (r.is_error) {
      c.reason = VerdictReason::kErrorResult;
    } else if (!r.complete) {
      c.reason = VerdictReason::kIncompleteResult;
    } else if (generation_[f.server] != f.generation) {
      // Paper-silent: a read that overlapped a write may hold pre-write
      // data; it is answered but not stored.
      c.reason = VerdictReason::kCommand;
    } else {
      CachedValue v;
      v.result = std::string(r.result_json);
      c.admitted = store_->Insert(f.key, std::move(v),
                                  {.ttl_seconds = f.ttl,
                                   .latency_seconds = r.latency_seconds,
                                   .cost = 0,
                                   .user = f.scope,
                                   .parameter_category = f.category,
                                   .request_type = f.request_type});
    }
    if (c.admitted) {
      ++stats_.admitted;
      ++admitted_since_clear_[f.server];
    } else {
      ++stats_.not_admitted;
    }
    return c;
  }

  CancelOutcome Cancel(WaiterId waiter) override {
    std::lock_guard<std::mutex> lock(mu_);
    CancelOutcome out;
    auto wt = waiter_ticket_.find(waiter);
    if (wt == waiter_ticket_.end()) return out;
    TicketId ticket = wt->second;
    waiter_ticket_.erase(wt);
    auto it = flights_.find(ticket);
    if (it == flights_.end()) return out;
    Flight& f = it->second;
    out.found = true;
    out.was_leader = f.leader == waiter;
    f.waiters.erase(std::remove(f.waiters.begin(), f.waiters.end(), waiter),
                    f.waiters.end());
    out.others_waiting = static_cast<uint32_t>(f.waiters.size());
    // Nobody waits any more: identical new calls must not join a call whose
    // cancellation reaches the server.
    if (f.waiters.empty()) Detach(f, ticket);
    return out;
  }

  void Invalidate(std::string_view server, std::string_view resource) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> resources;
    if (!resource.empty()) {
      std::optional<std::string> n = NormalizeResource(resource);
      // Choice: a URI that maps to no local path (another scheme or host)
      // cannot be related to path arguments: the whole server is dropped.
      if (n && UriScheme(*n).empty()) resources.push_back(std::move(*n));
    }
    InvalidateLocked(server, resources);
  }

  Probe Peek(const ToolCall& call) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.peeks;
    Probe p;
    std::string_view args;
    p.verdict = ClassifyLocked(call, &args);
    if (refreshing_.contains(std::string(call.server))) {
      MarkRefreshing(p.verdict);
      p.bypass_reason = "tools_refreshing";
      return p;
    }
    if (!p.verdict.cacheable) {
      p.bypass_reason = VerdictReasonName(p.verdict.reason);
      return p;
    }
    Result<CacheKey> key = CacheableKeyLocked(call, args, p.verdict);
    if (!key.ok()) {
      p.bypass_reason = key.status().message();
      return p;
    }
    LookupResult hit = store_->Peek(*key);
    if (hit.hit()) {
      ++stats_.would_hits;
      p.would_hit = true;
      p.result_json =
          std::shared_ptr<const std::string>(hit.value, &hit.value->result);
      p.age_seconds = hit.age_seconds;
    }
    return p;
  }

  RecordOutcome Record(const ToolCall& call, const UpstreamResult& r) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.recorded;
    RecordOutcome out;
    std::string_view args;
    out.verdict = ClassifyLocked(call, &args);
    const std::string server(call.server);
    if (refreshing_.contains(server)) {
      MarkRefreshing(out.verdict);
      out.bypass_reason = "tools_refreshing";
      ++stats_.bypasses[out.bypass_reason];
      InvalidateLocked(server, {});
      return out;
    }
    if (!out.verdict.cacheable) {
      out.bypass_reason = VerdictReasonName(out.verdict.reason);
      ++stats_.bypasses[out.bypass_reason];
      // A write seen completed: what it may have changed is dropped (its
      // effect is already there, so once is enough).
      if (out.verdict.request_type == RequestType::kCommand) {
        InvalidateLocked(server, ResourceValues(args));
      }
      return out;
    }
    Result<CacheKey> key = CacheableKeyLocked(call, args, out.verdict);
    if (!key.ok()) {
      out.bypass_reason = key.status().message();
      ++stats_.bypasses[out.bypass_reason];
      return out;
    }
    if (r.is_error) {
      out.reason = VerdictReason::kErrorResult;
      ++stats_.not_admitted;
      return out;
    }
    if (!r.complete) {
      out.reason = VerdictReason::kIncompleteResult;
      ++stats_.not_admitted;
      return out;
    }
    const std::string category =
        CategoryValue(key->canonical_args, out.verdict.parameter_category);
    // The client ran the call: for the policy that is an access of the
    // entry, when there is one (a hit had serving been on).
    LookupResult existing = store_->Lookup(
        *key, {.user = call.scope, .parameter_category = category});
    if (existing.hit()) {
      if (existing.value->result == r.result_json) {
        out.already_cached = true;
        out.admitted = true;
        ++stats_.recorded_already_cached;
        return out;
      }
      out.stale = true;
      ++stats_.recorded_stale;
    }
    CachedValue v;
    v.result = std::string(r.result_json);
    out.admitted = store_->Insert(*key, std::move(v),
                                  {.ttl_seconds = out.verdict.ttl_seconds,
                                   .latency_seconds = r.latency_seconds,
                                   .cost = 0,
                                   .user = call.scope,
                                   .parameter_category = category,
                                   .request_type = out.verdict.request_type});
    if (out.admitted) {
      ++stats_.admitted;
      ++admitted_since_clear_[server];
    } else {
      ++stats_.not_admitted;
      if (out.stale) store_->Erase(*key);  // never leave the outdated one
    }
    return out;
  }

  ToolCacheStats Stats() const override {
    std::lock_guard<std::mutex> lock(mu_);
    ToolCacheStats s = stats_;
    ResultCacheStats rs = store_->Stats();
    s.entries = rs.entries;
    s.bytes = rs.bytes;
    return s;
  }

 private:
  struct Flight {
    std::string server;
    std::string scope;
    CacheKey key;
    std::string key_text;  // "" = not joinable
    std::string category;
    WaiterId leader = 0;
    std::vector<WaiterId> waiters;
    std::vector<std::string> resources;  // COMMAND: resources it touches
    uint64_t generation = 0;
    double ttl = 0;
    RequestType request_type = RequestType::kInformational;
    bool cacheable = false;
    bool command = false;
    bool blocks_server = false;  // counted in task_writes_ until Complete
  };

  // REQUIRES: mu_ held. The verdict for `call` from the tool's learned
  // definition (or its name alone) and, in `args`, its arguments text with
  // absent / null arguments as "{}".
  Verdict ClassifyLocked(const ToolCall& call, std::string_view* args) const {
    ToolInfo info;
    bool known = false;
    auto server_tools = tools_.find(std::string(call.server));
    if (server_tools != tools_.end()) {
      auto t = server_tools->second.find(std::string(call.tool));
      if (t != server_tools->second.end()) {
        info = t->second;
        known = true;
      }
    }
    if (!known) {
      // Choice: a tool not (yet) learned from tools/list is classified from
      // its name alone (hard list, configuration, heuristic; unknown =
      // COMMAND).
      info.name = std::string(call.tool);
      info.server = std::string(call.server);
    }
    // Choice: absent arguments and "arguments": null both mean "no
    // arguments", the same call as {} (MCP's arguments is an optional
    // object; some clients send null).
    std::string_view a = call.arguments_json;
    while (!a.empty() && IsJsonSpace(a.front())) a.remove_prefix(1);
    while (!a.empty() && IsJsonSpace(a.back())) a.remove_suffix(1);
    if (a.empty() || a == "null") a = "{}";
    *args = a;
    return classifier_.ClassifyCall(info, a);
  }

  // The verdict of any call of a server whose tool list is being fetched.
  static void MarkRefreshing(Verdict& v) {
    v.cacheable = false;
    v.reason = VerdictReason::kCommand;
    v.request_type = RequestType::kCommand;
    v.detail = "the server's tool list changed; the new one is being fetched";
  }

  // REQUIRES: mu_ held; `v` cacheable. The call's full key, or the
  // statistics name of why the call cannot use the cache now (as the error
  // message; `v` then says why, uncacheable).
  Result<CacheKey> CacheableKeyLocked(const ToolCall& call,
                                      std::string_view args, Verdict& v) const {
    if (call.task_augmented) {
      v.cacheable = false;
      v.reason = VerdictReason::kIncompleteResult;
      v.detail = "task-augmented call";
      return FailedPrecondition(std::string(VerdictReasonName(v.reason)));
    }
    if (task_writes_.contains(std::string(call.server))) {
      // The write's work goes on after its task handle returned: neither a
      // stored result nor one read now can be trusted until it ends.
      v.cacheable = false;
      v.detail = "a task-augmented write is still running";
      return FailedPrecondition("task_in_progress");
    }
    Result<CacheKey> key =
        MakeCacheKey(call.scope, call.server, call.tool, args);
    if (!key.ok()) {
      v.cacheable = false;
      v.detail = key.status().message();
      // Choice: arguments without a canonical form bypass under their own
      // statistics name (Verdict has no reason for it).
      return InvalidArgument("invalid_arguments");
    }
    return key;
  }

  // REQUIRES: mu_ held. `f` is a task-augmented possible write.
  void BlockServer(Flight& f, CallPlan& plan) {
    f.blocks_server = true;
    ++task_writes_[f.server];
    plan.task_write = true;
  }

  CallPlan Bypass(CallPlan plan, Flight f, WaiterId waiter,
                  std::string_view reason) {
    ++stats_.bypasses[std::string(reason)];
    plan.bypass = true;
    plan.bypass_reason = std::string(reason);
    plan.action = CallAction::kForward;
    TicketId ticket = next_ticket_++;
    waiter_ticket_[waiter] = ticket;
    flights_.emplace(ticket, std::move(f));
    plan.ticket = ticket;
    return plan;
  }

  void Detach(Flight& f, TicketId ticket) {
    if (f.key_text.empty()) return;
    auto j = joinable_.find(f.key_text);
    if (j != joinable_.end() && j->second == ticket) joinable_.erase(j);
    f.key_text.clear();
  }

  // REQUIRES: mu_ held. Empty `resources` (or the "server" scope) drops
  // every entry of `server`.
  void InvalidateLocked(std::string_view server,
                        const std::vector<std::string>& resources) {
    ++generation_[std::string(server)];
    for (auto& [ticket, f] : flights_) {
      if (f.server == server) Detach(f, ticket);
    }
    // Choice: a written resource the proxy cannot resolve (a relative path)
    // may be any path: the whole server is invalidated.
    bool narrow =
        config_.invalidation == InvalidationScope::kResource &&
        !resources.empty() &&
        std::none_of(resources.begin(), resources.end(),
                     [](const std::string& r) { return IsUnanchored(r); });
    ++stats_.invalidations;
    auto admitted = admitted_since_clear_.find(std::string(server));
    if (admitted == admitted_since_clear_.end() || admitted->second == 0) {
      return;  // nothing of this server was stored since its last full clear
    }
    if (!narrow) admitted->second = 0;
    uint64_t n = store_->EraseIf([&](const CacheKey& k) {
      if (k.server != server) return false;
      if (!narrow) return true;
      for (const std::string& mine : ResourceValues(k.canonical_args)) {
        // An entry read through a relative path may be the written one.
        if (IsUnanchored(mine)) return true;
        for (const std::string& written : resources) {
          if (ResourcesOverlap(mine, written)) return true;
        }
      }
      return false;
    });
    stats_.entries_invalidated += n;
  }

  const Config config_;
  const Clock* clock_;
  const Classifier classifier_;
  std::unique_ptr<ResultCache> store_;

  mutable std::mutex mu_;
  // GUARDED_BY(mu_) from here on.
  std::unordered_map<std::string, std::unordered_map<std::string, ToolInfo>>
      tools_;
  std::unordered_map<TicketId, Flight> flights_;
  std::unordered_map<std::string, TicketId> joinable_;
  std::unordered_map<WaiterId, TicketId> waiter_ticket_;
  std::unordered_map<std::string, uint64_t> generation_;
  // Entries admitted per server since its last whole-server invalidation
  // (an upper bound of what it has cached): 0 lets a write skip the scan.
  std::unordered_map<std::string, uint64_t> admitted_since_clear_;
  // Servers whose tool list is being re-fetched (ToolsRefreshing).
  std::unordered_set<std::string> refreshing_;
  // Outstanding task-augmented possible writes per server (> 0 only).
  std::unordered_map<std::string, uint32_t> task_writes_;
  TicketId next_ticket_ = 1;
  ToolCacheStats stats_;
};

}  // namespace

Result<std::unique_ptr<ToolCache>> NewToolCache(const Config& config,
                                                const Clock* clock) {
  Status checked = CheckPolicyConfig(config, Policies(), /*online_only=*/true);
  if (!checked.ok()) return checked;
  if (config.capacity_bytes == 0) {
    return InvalidArgument(config.source +
                           ": capacityBytes must be > 0 (use the face's "
                           "pass-through mode to disable caching)");
  }
  ResultCacheOptions o;
  o.capacity_bytes = config.capacity_bytes;
  o.capacity_entries = config.max_entries;
  o.policy = config.policy;
  o.knobs = config.policy_params;
  // Choice: one shard. Every store access happens under mu_ anyway, so
  // shards would add no concurrency; one shard lets a single large result
  // use the whole budget and gives the policy (VAAC's value model, grouping
  // and bandit) all of the traffic instead of 1/N of it.
  o.num_shards = 1;
  Result<std::unique_ptr<ResultCache>> store = NewResultCache(o, clock);
  if (!store.ok()) {
    std::string where = config.source;
    if (config.policy_line > 0)
      where += ":" + std::to_string(config.policy_line);
    return InvalidArgument(where + ": " + store.status().message());
  }
  return std::unique_ptr<ToolCache>(
      new ToolCacheImpl(config, clock, std::move(*store)));
}

}  // namespace toolcache
