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
// - cancelled_writes_[server] counts the server's COMMAND flights the face
//   abandoned (Abandon: the client cancelled, the server may still write
//   and never answer) still in flights_; while it is > 0 no call of the
//   server is served or joins/starts a cacheable flight, and the Complete
//   that ends each of them invalidates (as every COMMAND's does).
// - A declared public entry lives in PublicScope(ToolCall::public_group),
//   a scope no caller has; a private one in the caller's scope.
// - Resource strings (arguments and invalidation targets) are compared only
//   in their normalized form (NormalizeResource); a relative path on either
//   side matches everything of its server (IsUnanchored).
// With a shared store (shared_ != nullptr):
// - No store call runs while mu_ is held. A call reads the store between
//   two holds of mu_ and acts on what it read only if its server's
//   generation did not move meanwhile (else: a miss, not admitted).
// - Every L1 entry carries the tag (store counter values) it was read
//   under; it is served only after the store confirms the tag is current,
//   so a write through another process stops this one from serving it.
// - A flight's tag is read before it goes upstream; its result is stored
//   under that tag, so a write published meanwhile makes it invisible. A
//   call joins a flight only when the counters it read equal the flight's
//   tag (no write published, by any process, since the flight's read).
// - Every invalidation is published (Publish) before the call that caused
//   it returns; one that fails leaves its server in pending_, and no result
//   of that server is read from the store until a server-wide bump works.
// - Any store failure during a lookup is a bypass with the fault's reason;
//   nothing unverified is ever served.
// - A result read through a relative resource depends on the server's
//   "any resource write" counter (SharedResults::DependenciesOf).
#include "toolcache/tool_cache.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "src/cache/prepare.h"
#include "src/cache/shared_results.h"
#include "toolcache/canonical_json.h"
#include "toolcache/classifier.h"
#include "toolcache/policy.h"
#include "toolcache/request_features.h"
#include "toolcache/result_cache.h"
#include "toolcache/store.h"

namespace toolcache {
namespace {

using cache_internal::CallPreparer;
using cache_internal::DecodeResult;
using cache_internal::Dependencies;
using cache_internal::EncodeResult;
using cache_internal::IsUnanchored;
using cache_internal::KeyRefusal;
using cache_internal::KeyScopeOf;
using cache_internal::NormalizeResource;
using cache_internal::PreparedCall;
using cache_internal::PublicScope;
using cache_internal::ResourcesOverlap;
using cache_internal::ResourceValues;
using cache_internal::SharedResults;
using cache_internal::StoredResult;
using cache_internal::UriScheme;
using cache_internal::VerdictMemo;

// The single-flight table's key: every field length-prefixed, so no two
// different keys share a text (a scope, server or user may hold any byte,
// '\0' included).
std::string KeyText(const CacheKey& k) {
  std::string s;
  s.reserve(k.scope.size() + k.server.size() + k.tool.size() +
            k.canonical_args.size() + 48);
  for (const std::string* field :
       {&k.scope, &k.server, &k.tool, &k.canonical_args}) {
    s += std::to_string(field->size());
    s += ':';
    s += *field;
  }
  return s;
}
class ToolCacheImpl final : public ToolCache {
 public:
  ToolCacheImpl(const Config& config, const Clock* clock,
                std::unique_ptr<ResultCache> l1, Store* store,
                std::vector<std::unique_ptr<FeatureExtractor>> extra)
      : clock_(clock),
        prep_(config, std::move(extra)),
        l1_(std::move(l1)),
        shared_(store != nullptr ? std::make_unique<SharedResults>(store)
                                 : nullptr) {}

  void LearnTools(std::string_view server, std::span<const ToolInfo> tools,
                  bool replace) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto table = std::make_shared<ToolTable>(*tools_);
    auto& known = table->servers[std::string(server)];
    if (replace) {
      known.clear();
      refreshing_.erase(std::string(server));
    }
    for (const ToolInfo& t : tools) {
      known[t.name] = std::make_shared<const ToolInfo>(t);
    }
    PublishToolsLocked(std::move(table));
  }

  void ToolsChanged(std::string_view server) override {
    Bumps bumps;
    {
      std::lock_guard<std::mutex> lock(mu_);
      EraseToolsLocked(server);
      InvalidateLocked(server, {}, &bumps);
    }
    Publish(bumps);
  }

  void ToolsRefreshing(std::string_view server) override {
    Bumps bumps;
    {
      std::lock_guard<std::mutex> lock(mu_);
      EraseToolsLocked(server);
      refreshing_.insert(std::string(server));
      InvalidateLocked(server, {}, &bumps);
    }
    Publish(bumps);
  }

  CallPlan Begin(const ToolCall& call, WaiterId waiter) override {
    Prepared prepared = PrepareUnlocked(call);
    std::unique_lock<std::mutex> lock(mu_);
    PreparedCall& p = CurrentLocked(call, prepared);
    ++stats_.calls;
    CallPlan plan;
    plan.verdict = p.verdict;

    Flight f;
    f.server = std::string(call.server);
    f.leader = waiter;
    f.waiters.push_back(waiter);
    f.generation = generation_[f.server];
    // A protocol-declared result (ToolCall::declared; its verdict is
    // Prepare's): TTL and sharing come with the result (Complete).
    f.declared = call.declared;

    Bumps bumps;
    if (refreshing_.contains(f.server)) {
      // Choice: while the new tool list is unknown, any call may be a write
      // (a read-looking name proves nothing): invalidate like a COMMAND.
      MarkRefreshing(plan.verdict);
      f.command = true;
      InvalidateLocked(f.server, {}, &bumps);
      if (call.task_augmented) BlockServer(f, plan);
      plan = Bypass(std::move(plan), std::move(f), waiter, "tools_refreshing");
      lock.unlock();
      Publish(bumps);
      return plan;
    }
    if (!plan.verdict.cacheable) {
      f.command = plan.verdict.request_type == RequestType::kCommand;
      if (f.command) {
        f.resources = std::move(p.resources);
        InvalidateLocked(f.server, f.resources, &bumps);
        if (call.task_augmented) BlockServer(f, plan);
      }
      const std::string reason(VerdictReasonName(plan.verdict.reason));
      plan = Bypass(std::move(plan), std::move(f), waiter, reason);
      lock.unlock();
      Publish(bumps);
      return plan;
    }
    if (!call.bypass_reason.empty()) {
      // The face cannot share this call's answer (ToolCall::bypass_reason).
      plan.verdict.cacheable = false;
      plan.verdict.detail = "the face cannot share this call's answer";
      return Bypass(std::move(plan), std::move(f), waiter, call.bypass_reason);
    }
    Result<CacheKey> key = CacheableKeyLocked(call, p, plan.verdict);
    if (!key.ok()) {
      return Bypass(std::move(plan), std::move(f), waiter,
                    key.status().message());
    }
    f.key = std::move(*key);
    SetFeatures(p, plan.verdict, f);
    // --- begin: protocol-declared cacheability (ToolCall::declared) ---
    if (f.declared) {
      // An entry its server declared public lives in the reserved public
      // scope (PublicScope), never in a caller's: a private entry of the
      // global scope "" is not public.
      CacheKey global = f.key;
      global.scope = PublicScope(call.public_group);
      f.public_group = std::string(call.public_group);
      LookupResult hit;
      bool from_store = false;
      if (shared_ == nullptr) {
        hit = l1_->Lookup(global, {.user = f.user, .category = f.category});
      } else {
        SharedView view =
            ReadShared(lock, global, l1_->Peek(global), p.resources);
        hit = view.valid;
        from_store = view.from_store;
      }
      if (hit.hit()) return Serve(std::move(plan), hit, from_store);
    }
    // --- end: protocol-declared cacheability ---
    if (shared_ == nullptr) {
      LookupResult hit =
          l1_->Lookup(f.key, {.user = f.user, .category = f.category});
      if (hit.hit()) return Serve(std::move(plan), hit, /*from_store=*/false);
      return JoinOrStart(std::move(plan), std::move(f), waiter);
    }
    return BeginShared(std::move(lock), std::move(plan), std::move(f), waiter,
                       p.resources);
  }

  Completion Complete(TicketId ticket, const UpstreamResult& r) override {
    std::unique_lock<std::mutex> lock(mu_);
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
    if (f.abandoned) {
      auto t = cancelled_writes_.find(f.server);
      if (t != cancelled_writes_.end() && --t->second == 0) {
        cancelled_writes_.erase(t);
      }
    }
    if (f.command) {
      // After the write: entries admitted meanwhile may predate it.
      Bumps bumps;
      InvalidateLocked(f.server, f.resources, &bumps);
      lock.unlock();
      Publish(bumps);
      return c;
    }
    if (!f.cacheable) return c;
    // --- begin: protocol-declared cacheability (ToolCall::declared) ---
    if (f.declared && !r.is_error && r.complete) {
      if (!r.declared || !(r.declared->ttl_seconds > 0)) {
        c.reason = VerdictReason::kDeclaredByServer;  // declared no TTL
        ++stats_.not_admitted;
        return c;
      }
      f.ttl = r.declared->ttl_seconds;
      if (r.declared->shared) f.key.scope = PublicScope(f.public_group);
    }
    // --- end: protocol-declared cacheability ---
    if (r.is_error) {
      c.reason = VerdictReason::kErrorResult;
    } else if (!r.complete) {
      c.reason = VerdictReason::kIncompleteResult;
    } else if (generation_[f.server] != f.generation) {
      // Paper-silent: a read that overlapped a write may hold pre-write
      // data; it is answered but not stored.
      c.reason = VerdictReason::kCommand;
    } else {
      c.admitted = AdmitLocked(f, r.result_json, r.latency_seconds, f.tag);
    }
    if (c.admitted) {
      ++stats_.admitted;
      ++admitted_since_clear_[f.server];
    } else {
      ++stats_.not_admitted;
    }
    if (!c.admitted || shared_ == nullptr) return c;
    lock.unlock();
    // The policy admitted it: other processes may use it too.
    StoreResult(f, r.result_json, r.latency_seconds, f.tag, f.epoch);
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

  std::vector<WaiterId> Unshare(TicketId ticket,
                                std::string_view reason) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<WaiterId> others;
    auto it = flights_.find(ticket);
    if (it == flights_.end() || !it->second.cacheable) return others;
    Flight& f = it->second;
    Detach(f, ticket);
    // Not cacheable from now on: Complete admits nothing and counts no
    // not_admitted (the call is a bypass now).
    f.cacheable = false;
    ++stats_.bypasses[std::string(reason)];
    for (WaiterId w : f.waiters) {
      if (w == f.leader) continue;
      others.push_back(w);
      waiter_ticket_.erase(w);
    }
    std::erase_if(f.waiters, [&](WaiterId w) { return w != f.leader; });
    return others;
  }

  void Abandon(TicketId ticket) override {
    Bumps bumps;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = flights_.find(ticket);
      if (it == flights_.end()) return;
      Flight& f = it->second;
      if (!f.command || f.abandoned) return;
      f.abandoned = true;
      ++cancelled_writes_[f.server];
      // Entries admitted since Begin may predate the write, which may land
      // at any moment from now on.
      InvalidateLocked(f.server, f.resources, &bumps);
    }
    Publish(bumps);
  }

  void Invalidate(std::string_view server, std::string_view resource) override {
    (void)InvalidateAs("", server, resource, /*count=*/false);
  }

  uint64_t InvalidateAs(std::string_view scope, std::string_view server,
                        std::string_view resource) override {
    return InvalidateAs(scope, server, resource, /*count=*/true);
  }

  uint64_t InvalidateAs(std::string_view scope, std::string_view server,
                        std::string_view resource, bool count) {
    Bumps bumps;
    uint64_t owned = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::vector<std::string> resources;
      if (!resource.empty()) {
        std::optional<std::string> n = NormalizeResource(resource);
        // Choice: a URI that maps to no local path (another scheme or host)
        // cannot be related to path arguments: the whole server is dropped.
        if (n && UriScheme(*n).empty()) resources.push_back(std::move(*n));
      }
      InvalidateLocked(
          server, resources, &bumps,
          count ? std::optional<std::string_view>(scope) : std::nullopt,
          &owned);
    }
    Publish(bumps);
    return owned;
  }

  Probe Peek(const ToolCall& call) override {
    Prepared prepared = PrepareUnlocked(call);
    std::unique_lock<std::mutex> lock(mu_);
    PreparedCall& prep = CurrentLocked(call, prepared);
    ++stats_.peeks;
    Probe p;
    // Moved, not copied (under mu_): nothing below reads prep.verdict.
    p.verdict = std::move(prep.verdict);
    if (refreshing_.contains(std::string(call.server))) {
      MarkRefreshing(p.verdict);
      p.bypass_reason = "tools_refreshing";
      return p;
    }
    if (!p.verdict.cacheable) {
      p.bypass_reason = VerdictReasonName(p.verdict.reason);
      return p;
    }
    Result<CacheKey> key = CacheableKeyLocked(call, prep, p.verdict);
    if (!key.ok()) {
      p.bypass_reason = key.status().message();
      return p;
    }
    LookupResult hit = l1_->Peek(*key);
    if (hit.hit()) p.value_score = hit.value_score;
    if (shared_ != nullptr) {
      SharedView view = ReadShared(lock, *key, hit, prep.resources);
      if (!view.fault.ok()) {
        p.bypass_reason = StoreFaultName(StoreFaultOf(view.fault));
        return p;
      }
      hit = view.valid;
    }
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
    Prepared prepared = PrepareUnlocked(call);
    std::unique_lock<std::mutex> lock(mu_);
    PreparedCall& p = CurrentLocked(call, prepared);
    ++stats_.recorded;
    RecordOutcome out;
    out.verdict = p.verdict;
    const std::string server(call.server);
    Bumps bumps;
    if (refreshing_.contains(server)) {
      MarkRefreshing(out.verdict);
      out.bypass_reason = "tools_refreshing";
      ++stats_.bypasses[out.bypass_reason];
      InvalidateLocked(server, {}, &bumps);
      lock.unlock();
      Publish(bumps);
      return out;
    }
    if (!out.verdict.cacheable) {
      out.bypass_reason = VerdictReasonName(out.verdict.reason);
      ++stats_.bypasses[out.bypass_reason];
      // A write seen completed: what it may have changed is dropped (its
      // effect is already there, so once is enough).
      if (out.verdict.request_type == RequestType::kCommand) {
        InvalidateLocked(server, p.resources, &bumps);
      }
      lock.unlock();
      Publish(bumps);
      return out;
    }
    Result<CacheKey> key = CacheableKeyLocked(call, p, out.verdict);
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
    Flight f;
    f.server = server;
    f.key = std::move(*key);
    f.generation = generation_[server];
    SetFeatures(p, out.verdict, f);
    // The client ran the call: for the policy that is an access of the
    // entry, when there is one (a hit had serving been on).
    LookupResult existing;
    if (shared_ == nullptr) {
      existing = l1_->Lookup(f.key, {.user = f.user, .category = f.category});
    } else {
      SharedView view = ReadShared(lock, f.key, l1_->Peek(f.key), p.resources);
      if (!view.fault.ok()) {
        out.bypass_reason = StoreFaultName(StoreFaultOf(view.fault));
        ++stats_.bypasses[out.bypass_reason];
        return out;
      }
      f.tag = view.tag;
      f.epoch = view.epoch;
      f.deps = std::move(view.deps);
      f.shared = true;
      existing = view.valid;
      if (existing.hit() && view.from_store) {
        ++stats_.store_hits;
      } else if (existing.hit()) {
        (void)l1_->Lookup(f.key, {.user = f.user, .category = f.category});
      }
    }
    if (existing.hit()) {
      if (existing.value->result == r.result_json) {
        out.already_cached = true;
        out.admitted = true;
        ++stats_.recorded_already_cached;
        return out;
      }
      out.stale = true;
      ++stats_.recorded_stale;
      if (f.shared) {
        // Other processes may hold the outdated result under the same tag.
        // Choice: publish a server-wide invalidation (the content changed
        // behind the cache's back) and store the new result under the
        // counters read after it.
        lock.unlock();
        Publish(Bumps{{server, {}}});
        lock.lock();
        SharedView again = ReadShared(lock, f.key, LookupResult{}, p.resources);
        if (!again.fault.ok()) {
          out.bypass_reason = StoreFaultName(StoreFaultOf(again.fault));
          ++stats_.bypasses[out.bypass_reason];
          l1_->Erase(f.key);
          return out;
        }
        f.tag = std::move(again.tag);
        f.epoch = again.epoch;
      }
    }
    if (generation_[server] != f.generation || (f.shared && f.tag.empty())) {
      // A write was seen while the store was read: the result may predate
      // it.
      out.reason = VerdictReason::kCommand;
      ++stats_.not_admitted;
      if (out.stale) l1_->Erase(f.key);
      return out;
    }
    out.admitted = AdmitLocked(f, r.result_json, r.latency_seconds, f.tag);
    if (out.admitted) {
      ++stats_.admitted;
      ++admitted_since_clear_[server];
    } else {
      ++stats_.not_admitted;
      if (out.stale) l1_->Erase(f.key);  // never leave the outdated one
    }
    if (!f.shared) return out;
    lock.unlock();
    if (out.admitted) {
      StoreResult(f, r.result_json, r.latency_seconds, f.tag, f.epoch);
    } else if (out.stale) {
      NoteStore(shared_->Erase(f.key, f.deps, f.epoch));
    }
    return out;
  }

  ToolCacheStats Stats() const override {
    std::lock_guard<std::mutex> lock(mu_);
    ToolCacheStats s = stats_;
    ResultCacheStats rs = l1_->Stats();
    s.entries = rs.entries;
    s.bytes = rs.bytes;
    return s;
  }

 private:
  struct Flight {
    std::string server;
    std::string user;  // the policy's user feature
    CacheKey key;
    std::string key_text;  // "" = not joinable
    uint64_t category = 0;
    double cost = 0;
    WaiterId leader = 0;
    std::vector<WaiterId> waiters;
    std::vector<std::string> resources;  // COMMAND: resources it touches
    uint64_t generation = 0;
    double ttl = 0;
    RequestType request_type = RequestType::kInformational;
    bool cacheable = false;
    bool command = false;
    bool blocks_server = false;  // counted in task_writes_ until Complete
    bool declared = false;       // ToolCall::declared
    bool abandoned = false;      // counted in cancelled_writes_ (Abandon)
    std::string public_group;    // declared: ToolCall::public_group
    // Shared store: the counters the call was read under (read before it
    // went upstream) and where its result goes.
    bool shared = false;
    std::string tag;
    uint64_t epoch = 0;
    Dependencies deps;
  };

  // A write to publish to the shared store once mu_ is released: the
  // server, and the resources it touched ("" = the whole server).
  struct Bump {
    std::string server;
    std::vector<std::string> resources;
  };
  using Bumps = std::vector<Bump>;

  // What the shared store says about a key (ReadShared).
  struct SharedView {
    Status fault;             // the store failed: nothing can be trusted
    LookupResult valid;       // a fresh result valid under the current counters
    bool from_store = false;  // `valid` came from the store, not the L1
    std::string tag;
    uint64_t epoch = 0;
    Dependencies deps;
    double ttl_left = 0;  // from_store: the store's remaining TTL
  };

  // Tool definitions learned from tools/list: server -> tool -> definition.
  // Replaced whole (copy on write) under mu_ AND tools_mu_, so a call can
  // take a snapshot under tools_mu_ alone and prepare without mu_.
  // The verdicts of calls classified against a table live with it (a new
  // table starts with an empty memo, so a changed definition is always
  // classified afresh).
  struct ToolTable {
    ToolTable() = default;
    ToolTable(const ToolTable& other) : servers(other.servers) {}
    std::unordered_map<
        std::string,
        std::unordered_map<std::string, std::shared_ptr<const ToolInfo>>>
        servers;
    mutable VerdictMemo verdicts;
  };

  // A PreparedCall and the tool table it was prepared with.
  struct Prepared {
    PreparedCall call;
    std::shared_ptr<const ToolTable> tools;
  };

  static const ToolInfo* FindTool(const ToolTable& table,
                                  const ToolCall& call) {
    if (call.definition != nullptr) return call.definition;
    auto server_tools = table.servers.find(std::string(call.server));
    if (server_tools == table.servers.end()) return nullptr;
    auto t = server_tools->second.find(std::string(call.tool));
    return t == server_tools->second.end() ? nullptr : t->second.get();
  }

  // The verdict memo of `table`, which holds verdicts decided against its
  // own definitions only: none for a call that brings its own
  // (ToolCall::definition).
  static VerdictMemo* MemoFor(const ToolCall& call, const ToolTable& table) {
    return call.definition != nullptr ? nullptr : &table.verdicts;
  }

  // REQUIRES: mu_ NOT held. The preparation stage, outside the cache's
  // mutex (tools_mu_ is held only to copy the table pointer).
  Prepared PrepareUnlocked(const ToolCall& call) const {
    Prepared p;
    {
      std::lock_guard<std::mutex> lock(tools_mu_);
      p.tools = tools_;
    }
    p.call = prep_.Prepare(call, FindTool(*p.tools, call),
                           /*read_resources=*/shared_ != nullptr,
                           MemoFor(call, *p.tools));
    return p;
  }

  // REQUIRES: mu_ held. `p` as if prepared now: when a LearnTools /
  // ToolsChanged ran between PrepareUnlocked and taking mu_, the call is
  // prepared again with the current definitions (rare; under mu_, so the
  // verdict matches the state the call is decided in).
  PreparedCall& CurrentLocked(const ToolCall& call, Prepared& p) const {
    if (p.tools != tools_) {
      p.tools = tools_;
      p.call = prep_.Prepare(call, FindTool(*p.tools, call),
                             /*read_resources=*/shared_ != nullptr,
                             MemoFor(call, *p.tools));
    }
    return p.call;
  }

  // REQUIRES: mu_ held. Installs a new tool table.
  void PublishToolsLocked(std::shared_ptr<const ToolTable> table) {
    std::lock_guard<std::mutex> lock(tools_mu_);
    tools_ = std::move(table);
  }

  // REQUIRES: mu_ held. Forgets every tool learned for `server`.
  void EraseToolsLocked(std::string_view server) {
    if (!tools_->servers.contains(std::string(server))) return;
    auto table = std::make_shared<ToolTable>(*tools_);
    table->servers.erase(std::string(server));
    PublishToolsLocked(std::move(table));
  }

  // The verdict of any call of a server whose tool list is being fetched.
  static void MarkRefreshing(Verdict& v) {
    v.cacheable = false;
    v.reason = VerdictReason::kCommand;
    v.request_type = RequestType::kCommand;
    v.detail = "the server's tool list changed; the new one is being fetched";
  }

  // REQUIRES: mu_ held; `v` cacheable. The call's full key (prepared), or
  // the statistics name of why the call cannot use the cache now (as the
  // error message; `v` then says why, uncacheable): the prepared refusal,
  // in Begin's historical order around the server's task_in_progress state.
  Result<CacheKey> CacheableKeyLocked(const ToolCall& call, PreparedCall& p,
                                      Verdict& v) const {
    auto refuse = [&v](const KeyRefusal& r) -> Status {
      v.cacheable = false;
      v.reason = r.reason;
      v.detail = r.detail;
      return FailedPrecondition(r.name);
    };
    if (p.refusal && p.refusal->before_state) return refuse(*p.refusal);
    if (task_writes_.contains(std::string(call.server))) {
      // The write's work goes on after its task handle returned: neither a
      // stored result nor one read now can be trusted until it ends.
      v.cacheable = false;
      v.detail = "a task-augmented write is still running";
      return FailedPrecondition("task_in_progress");
    }
    if (cancelled_writes_.contains(std::string(call.server))) {
      // A cancelled write the server may still carry out (Abandon): what is
      // stored or read now may predate it.
      v.cacheable = false;
      v.detail = "a cancelled write may still be running";
      return FailedPrecondition("write_cancelled");
    }
    if (p.refusal) return refuse(*p.refusal);
    return std::move(*p.key);
  }

  // The policy features of a cacheable call (prepared) and what its
  // admission needs.
  static void SetFeatures(PreparedCall& p, const Verdict& v, Flight& f) {
    f.user = std::move(p.user);
    f.ttl = v.ttl_seconds;
    f.request_type = v.request_type;
    f.category = p.category;
    f.cost = p.cost;
  }

  // REQUIRES: mu_ held. Offers a result to the in-process policy.
  bool AdmitLocked(const Flight& f, std::string_view result, double latency,
                   const std::string& tag) {
    CachedValue v;
    v.result = std::string(result);
    v.tag = tag;
    return l1_->Insert(f.key, std::move(v),
                       {.ttl_seconds = f.ttl,
                        .latency_seconds = latency,
                        .cost = f.cost,
                        .user = f.user,
                        .category = f.category,
                        .request_type = f.request_type});
  }

  // REQUIRES: mu_ NOT held. Writes an admitted result to the shared store.
  void StoreResult(const Flight& f, std::string_view result, double latency,
                   const std::string& tag, uint64_t epoch) {
    CachedValue meta;
    meta.key = f.key;
    meta.ttl_seconds = f.ttl;
    meta.latency_seconds = latency;
    meta.cost = f.cost;
    meta.request_type = f.request_type;
    const std::string record = EncodeResult(meta, result, tag);
    Status s = shared_->Put(f.key, f.deps, epoch, record, f.ttl);
    NoteStore(s);
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.store_errors[std::string(StoreFaultName(StoreFaultOf(s)))];
    }
  }

  // REQUIRES: `lock` holds mu_; returns with it held again. Reads what the
  // shared store says about `key` WITHOUT holding mu_ (a slow store stalls
  // only this call): the counters it depends on and, unless the in-process
  // `candidate` is there to be validated, the stored result. A concurrent
  // local invalidation makes the view invalid (nothing is served).
  // `resources`: what the key reads through (PreparedCall::resources).
  SharedView ReadShared(std::unique_lock<std::mutex>& lock, const CacheKey& key,
                        const LookupResult& candidate,
                        const std::vector<std::string>& resources) {
    SharedView view;
    const std::string server = key.server;
    const uint64_t generation = generation_[server];
    std::optional<uint64_t> pending;
    if (auto p = pending_.find(server); p != pending_.end()) {
      pending = p->second;
    }
    lock.unlock();
    view.deps = shared_->DependenciesOf(
        server, resources,
        std::any_of(resources.begin(), resources.end(),
                    [](const std::string& r) { return IsUnanchored(r); }));
    if (pending) view.fault = FlushPending(server, *pending);
    std::optional<StoredResult> stored;
    std::optional<StoreValue> raw;
    if (view.fault.ok()) {
      Result<SharedResults::Read> read =
          shared_->Lookup(key, view.deps, /*want_value=*/!candidate.hit());
      if (read.ok() && candidate.hit() && candidate.value->tag != read->tag) {
        // The in-process copy is outdated: look for a newer stored one.
        read = shared_->Lookup(key, view.deps, /*want_value=*/true);
      }
      if (!read.ok()) {
        view.fault = read.status();
      } else {
        view.tag = std::move(read->tag);
        view.epoch = read->epoch;
        raw = std::move(read->value);
      }
    }
    if (view.fault.ok() && raw) {
      Result<StoredResult> d = DecodeResult(*raw->bytes);
      if (!d.ok()) {
        view.fault = d.status();
        // Choice: a corrupt entry is dropped so the next call refills it.
        (void)shared_->Erase(key, view.deps, view.epoch);
      } else if (d->value.key == key && d->tag == view.tag) {
        stored = std::move(*d);
        view.ttl_left = raw->ttl_seconds;
      }
    }
    NoteStore(view.fault);
    lock.lock();
    if (!view.fault.ok()) return view;
    if (generation_[server] != generation) {
      view.tag.clear();  // a local write happened meanwhile: trust nothing
      return view;
    }
    if (candidate.hit()) {
      if (candidate.value->tag == view.tag) {
        view.valid = candidate;
        return view;
      }
      l1_->Erase(key);  // invalidated elsewhere
    }
    if (stored) {
      auto value = std::make_shared<CachedValue>(std::move(stored->value));
      value->tag = view.tag;
      const double age =
          std::isfinite(value->ttl_seconds) && std::isfinite(view.ttl_left)
              ? std::max(0.0, value->ttl_seconds - view.ttl_left)
              : 0;
      value->stored_at = clock_->NowSeconds() - age;
      view.valid.outcome = LookupOutcome::kHit;
      view.valid.age_seconds = age;
      view.valid.value = std::move(value);
      view.from_store = true;
    }
    return view;
  }

  // Begin's path with a shared store. REQUIRES: `lock` holds mu_.
  CallPlan BeginShared(std::unique_lock<std::mutex> lock, CallPlan plan,
                       Flight f, WaiterId waiter,
                       const std::vector<std::string>& resources) {
    // Choice: a call that could join a flight still reads the counters
    // first (one round trip): JoinOrStart joins only a flight read under the
    // same ones.
    LookupResult candidate = l1_->Peek(f.key);
    SharedView view = ReadShared(lock, f.key, candidate, resources);
    if (!view.fault.ok()) {
      plan.verdict.detail = view.fault.message();
      return Bypass(std::move(plan), std::move(f), waiter,
                    StoreFaultName(StoreFaultOf(view.fault)));
    }
    if (view.valid.hit() && !view.from_store) {
      // Teach the policy the access now that the entry is known valid.
      LookupResult hit =
          l1_->Lookup(f.key, {.user = f.user, .category = f.category});
      if (hit.hit() && hit.value->tag == view.tag) {
        return Serve(std::move(plan), hit, /*from_store=*/false);
      }
    } else if (view.valid.hit()) {
      // Found in the shared store: served, and offered to the in-process
      // policy (it decides whether this process keeps a copy).
      const CachedValue& v = *view.valid.value;
      CachedValue copy;
      copy.result = v.result;
      copy.flags = v.flags;
      copy.media_type = v.media_type;
      copy.tag = view.tag;
      (void)l1_->Insert(f.key, std::move(copy),
                        {.ttl_seconds = view.ttl_left,
                         .latency_seconds = v.latency_seconds,
                         .cost = v.cost,
                         .user = f.user,
                         .category = f.category,
                         .request_type = v.request_type});
      return Serve(std::move(plan), view.valid, /*from_store=*/true);
    }
    if (!view.tag.empty()) {
      f.shared = true;
      f.tag = std::move(view.tag);
      f.epoch = view.epoch;
      f.deps = std::move(view.deps);
    }
    return JoinOrStart(std::move(plan), std::move(f), waiter);
  }

  // REQUIRES: mu_ held.
  CallPlan Serve(CallPlan plan, const LookupResult& hit, bool from_store) {
    ++stats_.hits;
    if (from_store) ++stats_.store_hits;
    stats_.latency_saved_seconds += hit.value->latency_seconds;
    stats_.bytes_served += hit.value->result.size();
    plan.action = CallAction::kServe;
    // The stored value lives as long as this aliasing pointer does.
    plan.result_json =
        std::shared_ptr<const std::string>(hit.value, &hit.value->result);
    plan.age_seconds = hit.age_seconds;
    return plan;
  }

  // REQUIRES: mu_ held; `f` a cacheable call that missed. Joins the
  // identical call in flight, or starts one.
  CallPlan JoinOrStart(CallPlan plan, Flight f, WaiterId waiter) {
    std::string text = KeyText(f.key);
    auto joinable = joinable_.find(text);
    if (joinable != joinable_.end() && shared_ != nullptr &&
        (f.tag.empty() || flights_[joinable->second].tag != f.tag)) {
      // The flight went upstream under other counter values: a write that
      // another process published since may postdate its read.
      Detach(flights_[joinable->second], joinable->second);
      joinable = joinable_.end();
    }
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
    f.key_text = text;
    joinable_[text] = ticket;
    waiter_ticket_[waiter] = ticket;
    flights_.emplace(ticket, std::move(f));
    plan.action = CallAction::kForward;
    plan.ticket = ticket;
    return plan;
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
    f.cacheable = false;
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
  // every entry of `server`. With a shared store the write is also added to
  // `bumps`, to be published once mu_ is released. With `owner`, adds to
  // `*owned` the entries dropped whose key scope was made from it.
  void InvalidateLocked(std::string_view server,
                        const std::vector<std::string>& resources, Bumps* bumps,
                        std::optional<std::string_view> owner = std::nullopt,
                        uint64_t* owned = nullptr) {
    ++generation_[std::string(server)];
    for (auto& [ticket, f] : flights_) {
      if (f.server == server) Detach(f, ticket);
    }
    // Choice: a written resource the proxy cannot resolve (a relative path)
    // may be any path: the whole server is invalidated.
    bool narrow =
        prep_.config().invalidation == InvalidationScope::kResource &&
        !resources.empty() &&
        std::none_of(resources.begin(), resources.end(),
                     [](const std::string& r) { return IsUnanchored(r); });
    ++stats_.invalidations;
    if (shared_ != nullptr) {
      bumps->push_back({std::string(server),
                        narrow ? resources : std::vector<std::string>{}});
    }
    auto admitted = admitted_since_clear_.find(std::string(server));
    if (admitted == admitted_since_clear_.end() || admitted->second == 0) {
      return;  // nothing of this server was stored since its last full clear
    }
    if (!narrow) admitted->second = 0;
    auto drops = [&](const CacheKey& k) {
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
    };
    uint64_t n = l1_->EraseIf([&](const CacheKey& k) {
      if (!drops(k)) return false;
      if (owner && KeyScopeOf(k.scope, *owner)) ++*owned;
      return true;
    });
    stats_.entries_invalidated += n;
  }

  // REQUIRES: mu_ NOT held. Publishes writes to the shared store; one that
  // cannot be published leaves its server pending: nothing of that server
  // is read from the store until a server-wide bump gets through.
  void Publish(const Bumps& bumps) {
    for (const Bump& b : bumps) {
      Status s = shared_->Invalidate(b.server, b.resources);
      NoteStore(s);
      if (s.ok()) continue;
      std::lock_guard<std::mutex> lock(mu_);
      pending_[b.server] = ++pending_seq_;
      ++stats_.store_errors[std::string(StoreFaultName(StoreFaultOf(s)))];
    }
  }

  // REQUIRES: mu_ NOT held. Retries a pending server's invalidation.
  Status FlushPending(const std::string& server, uint64_t seq) {
    Status s = shared_->Invalidate(server, {});
    if (s.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      // A write that failed after this flush began stays pending.
      if (auto p = pending_.find(server);
          p != pending_.end() && p->second == seq) {
        pending_.erase(p);
      }
    }
    return s;
  }

  // Logs a store fault once per episode (the first failure after a
  // success) and the recovery, so an outage is two lines, not one per call.
  void NoteStore(const Status& s) const {
    if (s.ok()) {
      if (store_faulty_.exchange(false)) {
        spdlog::warn(
            "store {}: working again after {} failed call(s); caching resumes",
            shared_->store()->name(), store_failures_.exchange(0));
      }
      return;
    }
    ++store_failures_;
    if (!store_faulty_.exchange(true)) {
      spdlog::warn(
          "store {}: {} ({}); calls pass through to the server uncached "
          "until it works again",
          shared_->store()->name(), StoreFaultName(StoreFaultOf(s)),
          s.message());
    }
  }

  const Clock* clock_;
  // The preparation stage (prepare.h): classifier, keys, scopes, features.
  const CallPreparer prep_;
  std::unique_ptr<ResultCache> l1_;
  // The shared store under the L1 (nullptr: `store: memory`, the L1 alone).
  const std::unique_ptr<SharedResults> shared_;
  mutable std::atomic<bool> store_faulty_{false};
  mutable std::atomic<uint64_t> store_failures_{0};

  // Guards reads of tools_ outside mu_; taken alone or inside mu_, never
  // the other way round.
  mutable std::mutex tools_mu_;
  mutable std::mutex mu_;
  // GUARDED_BY(mu_) from here on.
  // Also under tools_mu_ (PublishToolsLocked): read there without mu_.
  std::shared_ptr<const ToolTable> tools_ = std::make_shared<const ToolTable>();
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
  // Outstanding abandoned (cancelled) possible writes per server (> 0 only).
  std::unordered_map<std::string, uint32_t> cancelled_writes_;
  // Servers with a write not yet published to the shared store, and the
  // sequence number of the last such failure.
  std::unordered_map<std::string, uint64_t> pending_;
  uint64_t pending_seq_ = 0;
  TicketId next_ticket_ = 1;
  ToolCacheStats stats_;
};

}  // namespace

bool IsDeclaredMethodName(std::string_view tool) {
  return tool == "tools/list" || tool == "prompts/list" ||
         tool == "resources/list" || tool == "resources/templates/list" ||
         tool == "resources/read" || tool == "server/discover";
}

Result<std::unique_ptr<ToolCache>> NewToolCache(const Config& config,
                                                const Clock* clock,
                                                Store* store) {
  return NewToolCache(config, clock, store, {});
}

Result<std::unique_ptr<ToolCache>> NewToolCache(
    const Config& config, const Clock* clock, Store* store,
    std::vector<std::unique_ptr<FeatureExtractor>> extra_layers) {
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
  // Choice: one shard. Every L1 access happens under mu_ anyway, so shards
  // would add no concurrency; one shard lets a single large result use the
  // whole budget and gives the policy (VAAC's value model, grouping and
  // bandit) all of the traffic instead of 1/N of it.
  o.num_shards = 1;
  Result<std::unique_ptr<ResultCache>> l1 = NewResultCache(o, clock);
  if (!l1.ok()) {
    std::string where = config.source;
    if (config.policy_line > 0)
      where += ":" + std::to_string(config.policy_line);
    return InvalidArgument(where + ": " + l1.status().message());
  }
  return std::unique_ptr<ToolCache>(new ToolCacheImpl(
      config, clock, std::move(*l1), store, std::move(extra_layers)));
}

}  // namespace toolcache
