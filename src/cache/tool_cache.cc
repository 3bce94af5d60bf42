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
#include "toolcache/tool_cache.h"

#include <algorithm>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "toolcache/canonical_json.h"
#include "toolcache/classifier.h"
#include "toolcache/result_cache.h"

namespace toolcache {
namespace {

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

// String values of the resource-named top-level arguments (strings or arrays
// of strings) of a JSON arguments document.
std::vector<std::string> ResourceValues(std::string_view args_json) {
  std::vector<std::string> out;
  nlohmann::json j = nlohmann::json::parse(args_json, nullptr, false);
  if (!j.is_object()) return out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!IsResourceArg(it.key())) continue;
    if (it->is_string()) {
      out.push_back(it->get<std::string>());
    } else if (it->is_array()) {
      for (const auto& v : *it) {
        if (v.is_string()) out.push_back(v.get<std::string>());
      }
    }
  }
  return out;
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
    if (replace) known.clear();
    for (const ToolInfo& t : tools) known[t.name] = t;
  }

  void ToolsChanged(std::string_view server) override {
    std::lock_guard<std::mutex> lock(mu_);
    tools_.erase(std::string(server));
    InvalidateLocked(server, {});
  }

  CallPlan Begin(const ToolCall& call, WaiterId waiter) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.calls;
    CallPlan plan;
    ToolInfo info;
    auto server_tools = tools_.find(std::string(call.server));
    bool known = false;
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
    std::string_view args = call.arguments_json.empty() ? std::string_view("{}")
                                                        : call.arguments_json;
    plan.verdict = classifier_.ClassifyCall(info, args);

    Flight f;
    f.server = std::string(call.server);
    f.leader = waiter;
    f.waiters.push_back(waiter);
    f.generation = generation_[f.server];

    if (!plan.verdict.cacheable) {
      f.command = plan.verdict.request_type == RequestType::kCommand;
      if (f.command) {
        f.resources = ResourceValues(args);
        InvalidateLocked(f.server, f.resources);
      }
      return Bypass(std::move(plan), std::move(f), waiter,
                    VerdictReasonName(plan.verdict.reason));
    }
    if (call.task_augmented) {
      plan.verdict.cacheable = false;
      plan.verdict.reason = VerdictReason::kIncompleteResult;
      plan.verdict.detail = "task-augmented call";
      return Bypass(std::move(plan), std::move(f), waiter,
                    VerdictReasonName(plan.verdict.reason));
    }
    Result<CacheKey> key =
        MakeCacheKey(call.scope, call.server, call.tool, args);
    if (!key.ok()) {
      plan.verdict.cacheable = false;
      plan.verdict.detail = key.status().message();
      // Choice: arguments without a canonical form bypass under their own
      // statistics name (Verdict has no reason for it).
      return Bypass(std::move(plan), std::move(f), waiter, "invalid_arguments");
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
    if (!resource.empty()) resources.emplace_back(resource);
    InvalidateLocked(server, resources);
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
  };

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
    bool narrow = config_.invalidation == InvalidationScope::kResource &&
                  !resources.empty();
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
  TicketId next_ticket_ = 1;
  ToolCacheStats stats_;
};

}  // namespace

Result<std::unique_ptr<ToolCache>> NewToolCache(const Config& config,
                                                const Clock* clock) {
  ResultCacheOptions o;
  o.capacity_bytes = config.capacity_bytes;
  o.capacity_entries = config.max_entries;
  o.policy = config.policy;
  o.knobs = config.policy_params;
  // Choice: one shard below 64 MiB so a single large result (a file read)
  // can use the whole budget; 8 shards above, for the multi-threaded faces.
  o.num_shards = config.capacity_bytes < (uint64_t{64} << 20) ? 1 : 8;
  Result<std::unique_ptr<ResultCache>> store = NewResultCache(o, clock);
  if (!store.ok()) return store.status();
  return std::unique_ptr<ToolCache>(
      new ToolCacheImpl(config, clock, std::move(*store)));
}

}  // namespace toolcache
