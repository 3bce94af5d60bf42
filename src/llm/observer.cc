// Invariants:
// - by_key_ indexes exactly the entries of order_; order_ is sorted by
//   asked_at (entries are appended as responses arrive); it holds at most
//   max_pending entries and none older than pending_ttl_seconds after
//   ExpireLocked.
// - Each entry's owner lists it (owners_, in order_'s order); owners_ holds
//   exactly the principals with an entry, and ranks_ one Rank per owner,
//   computed from its count and oldest entry (re-ranked on every change).
// - An entry enters the table only under a principal the provider
//   answered 2xx: from the answer (OnResponse, OnAccepted), or from a
//   request of a principal holding entries (which all came so); a request
//   of any other principal adds none.
// - Eviction (a full table): the oldest entry of the principal ranked
//   first, the inserting principal counted with its new entry and winning
//   ties it does not lose on age. Choice: the fair share is max_pending /
//   (principals holding entries), not a fixed quota: a fixed one either
//   wastes the table on a team of few or, with many principals, cannot be
//   honoured; the share a principal keeps is its newest entries, the ones a
//   result or a retry is still to come for.
// - A (principal, id) marked recorded is never Recorded again while
//   remembered.
// - The cache is never called with mu_ held (its own lock comes first
//   nowhere here: no lock-order cycle).
// - Credentials never reach this file: scopes arrive already hashed.
// - table_of_ indexes exactly the entries of tables_ (most recently declared
//   first); tool_bytes_ is the sum of their bytes; after LearnTools there
//   are at most max_tool_principals tables and max_tool_bytes bytes, and a
//   principal's table holds only the servers its last tools list named.
// - The cache's shared tool table is never taught: a principal's declared
//   definitions reach only its own calls (ToolCall::definition).
#include "src/llm/observer.h"

#include <spdlog/spdlog.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "src/llm/agent_tools.h"
#include "toolcache/canonical_json.h"
#include "toolcache/classifier.h"

namespace toolcache::llm {
namespace {

std::string PendingKey(std::string_view scope, std::string_view id) {
  std::string k;
  k.reserve(scope.size() + id.size() + 1);
  k.append(scope);
  k.push_back('\0');
  k.append(id);
  return k;
}

// The text a client wrote as a tool result: the decoded string, or the
// text of its text blocks, concatenated ("" for other shapes).
std::string ResultText(std::string_view body, const ToolResult& r) {
  std::string_view raw = r.content.In(body);
  std::string text;
  if (!raw.empty() && raw[0] == '"') {
    (void)DecodeJsonString(raw, &text);
    return text;
  }
  if (raw.empty() || raw[0] != '[') return text;
  nlohmann::json j = nlohmann::json::parse(raw, nullptr, false);
  if (!j.is_array()) return text;
  for (const nlohmann::json& b : j) {
    if (!b.is_object()) continue;
    auto t = b.find("text");
    if (t != b.end() && t->is_string()) text += t->get<std::string>();
  }
  return text;
}

}  // namespace

Observer::Observer(ToolCache* cache, const Clock* clock,
                   metrics::Registry* registry, ObserverOptions options)
    : cache_(cache), clock_(clock), options_(std::move(options)) {
  results_ = &registry->Counters(
      "toolcache_llm_tool_results_total",
      "Tool results seen in requests, by API, tool and outcome "
      "(recorded, already_cached, stale, bypass, error, not_admitted, "
      "unpaired, duplicate, client_marker)",
      {"api", "tool", "outcome"});
  calls_ = &registry->Counters(
      "toolcache_llm_tool_calls_total",
      "Tool calls asked for in responses, by API, tool and outcome "
      "(would_hit, miss, bypass)",
      {"api", "tool", "outcome"});
  bypasses_ = &registry->Counters(
      "toolcache_llm_bypass_total",
      "Tool calls and results the cache does not take, by reason", {"reason"});
  tool_latency_ = &registry->Histograms(
      "toolcache_llm_tool_latency_seconds",
      "Client-side tool latency: from the response that asked for a tool "
      "to the request carrying its result",
      {"tool"}, metrics::LatencyBuckets());
}

std::pair<std::string_view, std::string_view> Observer::Route(
    std::string_view name) const {
  constexpr std::string_view kPrefix = "mcp__";
  if (name.substr(0, kPrefix.size()) == kPrefix) {
    std::string_view rest = name.substr(kPrefix.size());
    const size_t sep = rest.find("__");
    // Choice: the server name ends at the first "__" (Claude Code's naming;
    // a server name containing "__" is ambiguous and split there too).
    if (sep != std::string_view::npos && sep > 0 && sep + 2 < rest.size()) {
      return {rest.substr(0, sep), rest.substr(sep + 2)};
    }
  }
  return {options_.client_server, name};
}

size_t Observer::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return order_.size();
}

size_t Observer::pending_of(std::string_view principal) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = owners_.find(std::string(principal));
  return it == owners_.end() ? 0 : it->second.entries.size();
}

bool Observer::remembers(std::string_view principal,
                         std::string_view id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return by_key_.count(PendingKey(principal, id)) != 0;
}

Observer::Pending Observer::PendingOf(RecordedCall c, double now) {
  return {.name = c.name,
          .asked_at = now,
          .recorded = true,
          .recorded_name = std::move(c.name),
          .recorded_arguments = std::move(c.arguments),
          .recorded_size = c.size};
}

Observer::Rank Observer::RankOf(const Owner& o) {
  return {o.entries.size(), o.entries.front()->second.asked_at, o.name};
}

void Observer::EraseLocked(std::unordered_map<std::string, Slot>::iterator it) {
  Owner* owner = it->second.entry->second.owner;
  ranks_.erase(RankOf(*owner));
  owner->entries.erase(it->second.in_owner);
  order_.erase(it->second.entry);
  by_key_.erase(it);
  if (owner->entries.empty()) {
    owners_.erase(*owner->name);
  } else {
    ranks_.insert(RankOf(*owner));
  }
}

void Observer::ExpireLocked(double now) {
  while (!order_.empty() &&
         now - order_.front().second.asked_at > options_.pending_ttl_seconds) {
    EraseLocked(by_key_.find(order_.front().first));
  }
}

Observer::Pending* Observer::FindLocked(const std::string& key) {
  auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : &it->second.entry->second;
}

void Observer::RememberLocked(std::string key, Pending p,
                              const std::string& principal) {
  if (options_.max_pending == 0) return;
  auto it = by_key_.find(key);
  if (it != by_key_.end()) EraseLocked(it);
  auto mine = owners_.find(principal);
  if (order_.size() >= options_.max_pending) {
    // The principal ranked first gives up its oldest entry, this one
    // counted with the entry it adds (its oldest: the new one if it holds
    // none); a tie on both goes against itself.
    const Rank& first = *ranks_.begin();
    Owner* top = &owners_.find(*first.name)->second;
    Owner* self = mine == owners_.end() ? nullptr : &mine->second;
    const size_t count = self == nullptr ? 1 : self->entries.size() + 1;
    const double oldest =
        self == nullptr ? p.asked_at : self->entries.front()->second.asked_at;
    const bool other_first =
        top != self && (first.count > count ||
                        (first.count == count && first.oldest < oldest));
    Owner* victim = other_first || self == nullptr ? top : self;
    EraseLocked(by_key_.find(victim->entries.front()->first));
    mine = owners_.find(principal);  // may have been erased
  }
  if (mine == owners_.end()) {
    mine = owners_.emplace(principal, Owner{}).first;
    mine->second.name = &mine->first;
  } else {
    ranks_.erase(RankOf(mine->second));
  }
  Owner* owner = &mine->second;
  p.owner = owner;
  order_.emplace_back(key, std::move(p));
  owner->entries.push_back(std::prev(order_.end()));
  ranks_.insert(RankOf(*owner));
  by_key_[std::move(key)] = {std::prev(order_.end()),
                             std::prev(owner->entries.end())};
}

std::string Observer::PrincipalOf(const ToolScopes& scopes) {
  // The workspace scope when known; else the request's own principal, not
  // its result scope: under `proxy.scope: global` that is "" for every key,
  // and one key's declaration would decide every key's calls.
  if (scopes.client && !scopes.client->empty()) return *scopes.client;
  return scopes.principal;
}

namespace {

size_t BytesOf(const ToolInfo& t) {
  return t.name.size() + t.description.size() + t.input_schema_json.size();
}

}  // namespace

void Observer::LearnTools(const ParsedRequest& request, std::string_view body,
                          const ToolScopes& scopes) {
  if (!options_.learn_tools || request.tool_defs.empty()) return;
  // One hash per server over its tools' bytes: relearn only on change.
  std::unordered_map<std::string, std::vector<const ToolDef*>> by_server;
  for (const ToolDef& d : request.tool_defs) {
    if (d.name.empty()) continue;  // server tools of the provider
    by_server[std::string(Route(d.name).first)].push_back(&d);
  }
  const std::string principal = PrincipalOf(scopes);
  // The request's list is the principal's whole list: a server it no
  // longer names is dropped (revU: otherwise one principal's table grew
  // with every request naming new servers, and past the byte budget evicted
  // every other principal's).
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto t = table_of_.find(principal);
    if (t != table_of_.end()) {
      ToolTable& table = t->second->second;
      for (auto it = table.servers.begin(); it != table.servers.end();) {
        if (by_server.count(it->first) != 0) {
          ++it;
          continue;
        }
        for (const auto& [name, old] : it->second) {
          table.bytes -= BytesOf(*old);
          tool_bytes_ -= BytesOf(*old);
        }
        table.hashes.erase(it->first);
        it = table.servers.erase(it);
      }
    }
  }
  for (auto& [server, defs] : by_server) {
    uint64_t h = 1469598103934665603ull;
    for (const ToolDef* d : defs) {
      h ^= std::hash<std::string_view>()(d->span.In(body));
      h *= 1099511628211ull;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto t = table_of_.find(principal);
      if (t != table_of_.end()) {
        auto known = t->second->second.hashes.find(server);
        if (known != t->second->second.hashes.end() && known->second == h) {
          tables_.splice(tables_.begin(), tables_, t->second);
          continue;
        }
      }
    }
    std::unordered_map<std::string, std::shared_ptr<const ToolInfo>> tools;
    size_t bytes = 0;
    for (const ToolDef* d : defs) {
      auto info = std::make_shared<ToolInfo>();
      info->name = std::string(Route(d->name).second);
      info->server = server;
      if (!d->description.empty()) {
        (void)DecodeJsonString(d->description.In(body), &info->description);
      }
      info->input_schema_json = std::string(d->schema.In(body));
      std::string name = info->name;
      tools[std::move(name)] = std::move(info);
    }
    for (const auto& [name, info] : tools) bytes += BytesOf(*info);
    std::lock_guard<std::mutex> lock(mu_);
    auto t = table_of_.find(principal);
    if (t == table_of_.end()) {
      tables_.emplace_front(principal, ToolTable{});
      t = table_of_.emplace(principal, tables_.begin()).first;
    } else {
      tables_.splice(tables_.begin(), tables_, t->second);
    }
    ToolTable& table = t->second->second;
    // Choice: the request's list is the principal's whole list for the
    // server now; it replaces what that principal declared before (no
    // invalidation: a list change is not a data change).
    for (const auto& [name, old] : table.servers[server]) {
      table.bytes -= BytesOf(*old);
      tool_bytes_ -= BytesOf(*old);
    }
    table.servers[server] = std::move(tools);
    table.hashes[server] = h;
    table.bytes += bytes;
    tool_bytes_ += bytes;
    // Least recently declared first; the table just written stays.
    // A table over the whole budget by itself evicts nobody (dropped below).
    while (tables_.size() > 1 &&
           (tables_.size() > options_.max_tool_principals ||
            (tool_bytes_ > options_.max_tool_bytes &&
             table.bytes <= options_.max_tool_bytes))) {
      tool_bytes_ -= tables_.back().second.bytes;
      table_of_.erase(tables_.back().first);
      tables_.pop_back();
    }
  }
  // A table that alone exceeds the budget is not kept: its calls are
  // judged by name, as a principal that declared none (and it evicted
  // nobody above).
  std::lock_guard<std::mutex> lock(mu_);
  auto t = table_of_.find(principal);
  if (t == table_of_.end()) return;
  ToolTable& table = t->second->second;
  if (table.bytes > options_.max_tool_bytes) {
    spdlog::warn(
        "llm: the tools one principal declared ({} bytes) exceed the "
        "budget ({} bytes): not kept, its calls are judged by tool name",
        table.bytes, options_.max_tool_bytes);
    tool_bytes_ -= table.bytes;
    tables_.erase(t->second);
    table_of_.erase(t);
  }
}

std::shared_ptr<const ToolInfo> Observer::Definition(
    const ToolScopes& scopes, std::string_view server,
    std::string_view tool) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (tables_.empty()) return nullptr;
  auto t = table_of_.find(PrincipalOf(scopes));
  if (t == table_of_.end()) return nullptr;
  const auto& servers = t->second->second.servers;
  auto s = servers.find(std::string(server));
  if (s == servers.end()) return nullptr;
  auto d = s->second.find(std::string(tool));
  return d == s->second.end() ? nullptr : d->second;
}

size_t Observer::tool_principals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tables_.size();
}

size_t Observer::tool_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tool_bytes_;
}

RequestReport Observer::OnRequest(const ParsedRequest& request,
                                  std::string_view body,
                                  const ToolScopes& scopes) {
  RequestReport rep;
  LearnTools(request, body, scopes);
  const double now = clock_->NowSeconds();
  const std::string_view api = ApiName(request.api);
  for (const ToolResult& result : request.tool_results) {
    if (result.message < request.turn_begin) continue;
    ++rep.results;
    // The call this result answers: from the history (newest first), else
    // remembered from the response that asked for it.
    const RequestToolUse* use = nullptr;
    for (auto it = request.tool_uses.rbegin(); it != request.tool_uses.rend();
         ++it) {
      if (it->id == result.id) {
        use = &*it;
        break;
      }
    }
    std::string name, arguments;
    double latency = 0;
    const std::string key = PendingKey(scopes.principal, result.id);
    const size_t size = result.content.In(body).size();
    {
      std::lock_guard<std::mutex> lock(mu_);
      ExpireLocked(now);
      Pending* p = FindLocked(key);
      if (use != nullptr) {
        name = use->name;
        arguments = use->arguments;
      } else if (p != nullptr) {
        name = p->name;
        arguments = p->arguments;
      }
      // A retry (the same call answered the same way again) is recorded
      // once: recording it again after a write could store what the write
      // replaced. Another call under a reused id is no retry: skipping it
      // would skip a write's invalidation.
      if (p != nullptr && p->recorded && p->recorded_name == name &&
          p->recorded_arguments == arguments && p->recorded_size == size) {
        ++rep.duplicates;
        results_->Get({api, p->name, "duplicate"})->Add();
        continue;
      }
      if (p != nullptr) {
        if (!p->recorded) latency = std::max(0.0, now - p->asked_at);
        p->recorded = true;
        p->recorded_name = name;
        p->recorded_arguments = arguments;
        p->recorded_size = size;
      } else if (use != nullptr) {
        // Not seen asked (a proxy restart): remembered as recorded. Session
        // 19: a request's word alone, under made-up keys, pushed out
        // everyone's entries; so only a principal the provider answered
        // within the TTL (it holds entries: they come from 2xx answers
        // only) has it remembered now, as before (a retry after a 429 or
        // a 5xx is still recorded once); any other once the provider
        // accepts the request (OnAccepted).
        RecordedCall c{.principal = scopes.principal,
                       .id = std::string(result.id),
                       .name = name,
                       .arguments = arguments,
                       .size = size};
        if (owners_.count(scopes.principal) != 0) {
          RememberLocked(key, PendingOf(std::move(c), now), scopes.principal);
        } else {
          rep.to_remember.push_back(std::move(c));
        }
      }
    }
    if (use == nullptr && name.empty()) {
      ++rep.unpaired;
      results_->Get({api, "", "unpaired"})->Add();
      continue;
    }
    const ClientMarker marker = ClientMarkerOf(ResultText(body, result));
    if (marker != ClientMarker::kNone) {
      // The client's stand-in for a result, not a result.
      ++rep.client_markers;
      results_->Get({api, name, "client_marker"})->Add();
      spdlog::debug("llm {}: result of {} ({}): {}, not recorded", api, name,
                    result.id, ClientMarkerName(marker));
      continue;
    }
    auto [server, routed] = Route(name);
    const CallKey call_key = KeyCall(
        name, routed, arguments,
        scopes.ShellMovedBefore(
            use != nullptr ? static_cast<size_t>(use - request.tool_uses.data())
                           : kNoShellMove));
    if (!call_key.bypass.empty()) {
      // Read in a directory the key does not name: not recorded.
      ++rep.bypassed;
      bypasses_->Get({call_key.bypass})->Add();
      results_->Get({api, name, "bypass"})->Add();
      spdlog::debug("llm {}: result of {} ({}): not recorded: {}", api, name,
                    result.id,
                    call_key.bypass == kShellMovedReason
                        ? kShellMovedDetail
                        : "it changes the working directory");
      continue;
    }
    const std::shared_ptr<const ToolInfo> definition =
        Definition(scopes, server, call_key.tool);
    // A client tool's result: under the client's workspace (ToolScopes).
    ToolCall call{.server = server,
                  .scope = scopes.For(name),
                  .tool = call_key.tool,
                  .arguments_json = call_key.arguments,
                  .definition = definition.get()};
    const std::string normalized = NormalizedResult(body, result);
    RecordOutcome o = cache_->Record(call, {.result_json = normalized,
                                            .is_error = result.is_error,
                                            .complete = true,
                                            .latency_seconds = latency});
    if (latency > 0) tool_latency_->Get({name})->Observe(latency);
    std::string_view outcome;
    if (!o.bypass_reason.empty()) {
      ++rep.bypassed;
      outcome = "bypass";
      bypasses_->Get({o.bypass_reason})->Add();
    } else if (result.is_error) {
      ++rep.errors;
      outcome = "error";
    } else if (o.already_cached) {
      ++rep.already_cached;
      outcome = "already_cached";
    } else if (o.admitted) {
      ++rep.recorded;
      if (o.stale) ++rep.stale;
      outcome = o.stale ? "stale" : "recorded";
    } else {
      ++rep.not_admitted;
      outcome = "not_admitted";
    }
    results_->Get({api, name, outcome})->Add();
    spdlog::debug("llm {}: result of {} ({}): {}", api, name, result.id,
                  outcome);
  }
  return rep;
}

ResponseReport Observer::OnResponse(Api api, std::span<const ToolUse> calls,
                                    const ToolScopes& scopes) {
  ResponseReport rep;
  const double now = clock_->NowSeconds();
  const std::string_view api_name = ApiName(api);
  // A `cd` earlier in the same response moves the calls after it too.
  bool moved = scopes.ShellMovedBefore(kNoShellMove);
  for (const ToolUse& u : calls) {
    ++rep.observed_calls;
    auto [server, routed] = Route(u.name);
    const CallKey call_key = KeyCall(u.name, routed, u.arguments, moved);
    moved = moved || ShellCallMoves(u.name, u.arguments);
    const std::shared_ptr<const ToolInfo> definition =
        Definition(scopes, server, call_key.tool);
    ToolCall call{.server = server,
                  .scope = scopes.For(u.name),
                  .tool = call_key.tool,
                  .arguments_json = call_key.arguments,
                  .definition = definition.get()};
    Probe p;
    if (call_key.bypass.empty()) {
      p = cache_->Peek(call);
    } else {
      p.bypass_reason = call_key.bypass;
      spdlog::debug("llm {}: call of {} ({}) not keyed: {}", api_name, u.name,
                    u.id,
                    call_key.bypass == kShellMovedReason
                        ? kShellMovedDetail
                        : "it changes the working directory");
    }
    if (p.would_hit) {
      ++rep.would_hit;
      WouldHit h;
      h.tool = u.name;
      h.age_seconds = p.age_seconds;
      Result<CacheKey> k =
          MakeCacheKey(call.scope, server, call_key.tool, call_key.arguments);
      if (k.ok()) h.key = k->DigestHex().substr(0, 16);
      rep.hits.push_back(std::move(h));
      calls_->Get({api_name, u.name, "would_hit"})->Add();
    } else if (!p.bypass_reason.empty()) {
      bypasses_->Get({p.bypass_reason})->Add();
      calls_->Get({api_name, u.name, "bypass"})->Add();
    } else {
      calls_->Get({api_name, u.name, "miss"})->Add();
    }
    if (!u.id.empty()) {
      std::lock_guard<std::mutex> lock(mu_);
      ExpireLocked(now);
      RememberLocked(
          PendingKey(scopes.principal, u.id),
          {.name = u.name, .arguments = u.arguments, .asked_at = now},
          scopes.principal);
    }
  }
  return rep;
}

void Observer::OnAccepted(std::vector<RecordedCall> calls) {
  if (calls.empty()) return;
  const double now = clock_->NowSeconds();
  std::lock_guard<std::mutex> lock(mu_);
  ExpireLocked(now);
  for (RecordedCall& c : calls) {
    std::string key = PendingKey(c.principal, c.id);
    if (FindLocked(key) != nullptr) continue;
    const std::string principal = c.principal;
    RememberLocked(std::move(key), PendingOf(std::move(c), now), principal);
  }
}

}  // namespace toolcache::llm
