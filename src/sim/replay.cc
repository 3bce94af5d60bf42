// The simulator's request loop (see replay.h for the per-record rules).
//
// Invariants:
//   - hits + misses == requests; a COMMAND is never looked up unless the
//     test-only broken path is switched on, so command_served stays 0.
//   - An error result is never inserted; a hit is never an error's fault (the
//     lookup happens before the call, as in the proxies).
//   - Object identity is exact interning of (scope, tool, canonical
//     arguments), mixed by a bijection: no two distinct keys share an id, so
//     the simulator needs no full-key compare (the proxies do it).
//   - slot_incarnation/slot_digest describe the entry now in each slot; they
//     are rewritten on every successful insert, before any later read. An
//     incarnation number is unique per insert, so a session's touched list
//     (object, incarnation) never erases a later re-insert of the object
//     that the session did not touch.
//   - EntryDeathIndices mirrors the kSession rule: a run of hits on one
//     incarnation dies at the first COMMAND of any session that created or
//     was served it, which is the suffix minimum it computes.
#include "src/sim/replay.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>

#include "src/sim/random.h"
#include "toolcache/config.h"
#include "toolcache/request_features.h"

namespace toolcache::sim {
namespace {

template <typename T>
class Interner {
 public:
  // Returns the index of `s`, adding it if new (indices start at `first`).
  T Intern(const std::string& s) {
    auto [it, inserted] = map_.try_emplace(s, static_cast<T>(map_.size()));
    return it->second + first_;
  }
  void set_first(T first) { first_ = first; }
  size_t size() const { return map_.size(); }

 private:
  std::unordered_map<std::string, T> map_;
  T first_ = 0;
};

}  // namespace

Result<PreparedTrace> PrepareTrace(const Trace& trace,
                                   const PrepareOptions& options) {
  PreparedTrace p;
  p.name = trace.name;
  const size_t n = trace.records.size();
  p.requests.resize(n);
  p.cacheable.assign(n, 0);
  p.command.assign(n, 0);
  p.error.assign(n, 0);
  p.session.assign(n, 0);
  p.digest.assign(n, 0);

  // The one feature derivation the faces use too (request_features.h): no
  // tool table, the record's cost, its TTL or the trace default.
  Config feature_config;
  feature_config.ttl_seconds = options.default_ttl;
  const FeatureBuilder features(feature_config);

  Interner<uint32_t> tools, users, sessions, digests;
  tools.set_first(1);
  Interner<uint64_t> objects;
  users.Intern("");    // anonymous = 0
  digests.Intern("");  // unknown = 0
  std::unordered_map<ObjectId, uint8_t> seen;

  double now = 0;
  double prev_latency = 0;
  for (size_t i = 0; i < n; ++i) {
    const TraceRecord& r = trace.records[i];
    Request& q = p.requests[i];
    if (r.tool.empty()) {
      return InvalidArgument(trace.name + ": record " + std::to_string(i + 1) +
                             ": empty tool name");
    }
    if (!(r.latency >= 0 && r.latency <= kMaxTraceLatencySeconds) ||
        !(r.cost >= 0 && r.cost <= kMaxTraceCost)) {
      return InvalidArgument(
          trace.name + ": record " + std::to_string(i + 1) +
          ": latency and cost must be finite, >= 0 and at most " +
          nlohmann::json(kMaxTraceLatencySeconds).dump() + " s / " +
          nlohmann::json(kMaxTraceCost).dump());
    }
    if (r.result_size > kMaxTraceResultSize) {
      return InvalidArgument(trace.name + ": record " + std::to_string(i + 1) +
                             ": result_size exceeds 1 TiB");
    }
    if (std::isinf(r.time) || r.time > kMaxTraceTimeSeconds || r.time < 0) {
      return InvalidArgument(trace.name + ": record " + std::to_string(i + 1) +
                             ": time must be in [0, 1e12] s (or absent)");
    }
    // Choice: a record without a clock starts when the previous call ended.
    double t = std::isfinite(r.time) ? r.time : now + prev_latency;
    now = std::max(now, t);
    prev_latency = r.latency;

    std::string scope;
    switch (options.scope) {
      case Scope::kGlobal:
        break;
      case Scope::kUser:
        scope = "u:" + r.user;
        break;
      case Scope::kSession:
        scope = "s:" + r.session;
        break;
    }
    // The tenant joins the identity (a default "" tenant leaves the
    // interning order, hence every id, as it was before tenants existed).
    q.id = Mix64(objects.Intern(scope + '\x1e' + r.tenant + '\x1f' + r.tool +
                                '\x1f' + r.arguments) +
                 1);
    q.tool = tools.Intern(r.tool);
    Result<RequestFeatures> f = features.Build({.tool = r.tool,
                                                .arguments_json = r.arguments,
                                                .ttl_seconds = r.ttl,
                                                .observed_cost = r.cost});
    if (!f.ok()) {
      return InvalidArgument(trace.name + ": record " + std::to_string(i + 1) +
                             ": arguments are not a JSON object");
    }
    q.param_category = f->category_feature;
    q.user = users.Intern(r.user);
    q.size = std::max<uint64_t>(1, r.result_size);
    q.latency = r.latency;
    q.cost = f->cost;
    q.now = now;
    q.index = i;

    // Choice: a record with no ground-truth type is treated as COMMAND (never
    // cached) — safety first; the classifier will decide once integrated.
    const bool is_command =
        !r.request_type.has_value() || *r.request_type == RequestType::kCommand;
    q.ttl = is_command ? 0 : f->ttl_seconds;
    p.command[i] = is_command;
    p.cacheable[i] = !is_command && q.ttl > options.min_cacheable_ttl;
    p.error[i] = r.error;
    p.session[i] = sessions.Intern(r.session);
    p.digest[i] = digests.Intern(r.result_digest);
    p.total_bytes += q.size;
    if (p.cacheable[i] && seen.emplace(q.id, 1).second) {
      ++p.unique_cacheable_objects;
      p.unique_cacheable_bytes += q.size;
    }
  }
  // next_access: the next cacheable request of the same object;
  // next_command: the next COMMAND of the same session.
  std::unordered_map<ObjectId, uint64_t> next;
  std::unordered_map<uint32_t, uint64_t> next_command;
  p.next_command.assign(n, kNoNextAccess);
  for (size_t i = n; i-- > 0;) {
    Request& q = p.requests[i];
    if (p.command[i]) {
      next_command[p.session[i]] = i;
      continue;
    }
    if (auto c = next_command.find(p.session[i]); c != next_command.end()) {
      p.next_command[i] = c->second;
    }
    if (!p.cacheable[i]) continue;
    auto it = next.find(q.id);
    q.next_access = it == next.end() ? kNoNextAccess : it->second;
    q.next_access_time =
        it == next.end() ? kNoExpiry : p.requests[it->second].now;
    next[q.id] = i;
  }
  return p;
}

std::vector<uint64_t> EntryDeathIndices(const PreparedTrace& trace,
                                        InvalidationRule rule) {
  constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
  const size_t n = trace.requests.size();
  std::vector<uint64_t> dies(n, kNever);
  std::unordered_map<ObjectId, uint64_t> suffix;  // object -> min death
  for (size_t i = n; i-- > 0;) {
    if (trace.command[i] || !trace.cacheable[i]) continue;
    uint64_t d = kNever;
    if (rule == InvalidationRule::kSession) {
      // The next COMMAND of this request's session (PrepareTrace).
      const uint64_t own = trace.next_command[i];
      auto [s, fresh] = suffix.try_emplace(trace.requests[i].id, own);
      if (!fresh) s->second = std::min(s->second, own);
      d = s->second;
    }
    dies[i] = trace.error[i] ? i + 1 : d;
  }
  return dies;
}

uint64_t CapacityForPercent(const PreparedTrace& trace, double percent) {
  double bytes =
      percent / 100.0 * static_cast<double>(trace.unique_cacheable_bytes);
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(bytes)));
}

uint64_t EntriesForPercent(const PreparedTrace& trace, double percent) {
  double entries =
      percent / 100.0 * static_cast<double>(trace.unique_cacheable_objects);
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(entries)));
}

double ReplayMetrics::HitRatio() const {
  return requests == 0
             ? 0.0
             : static_cast<double>(hits) / static_cast<double>(requests);
}

double ReplayMetrics::ByteHitRatio() const {
  return total_bytes == 0 ? 0.0
                          : static_cast<double>(hit_bytes) /
                                static_cast<double>(total_bytes);
}

Result<ReplayMetrics> Replay(const PreparedTrace& trace,
                             const ReplayOptions& options) {
  const PolicyInfo* info = FindPolicy(options.policy);
  PolicyParams params;
  params.capacity_bytes = options.capacity_bytes;
  params.capacity_entries = options.capacity_entries;
  params.seed = options.seed;
  params.knobs = options.knobs;
  if (info != nullptr && info->kind == PolicyKind::kUnbounded) {
    params.capacity_bytes = kUnlimitedBytes;
    params.capacity_entries = 0;
  }
  Result<std::unique_ptr<Policy>> policy = MakePolicy(options.policy, params);
  if (!policy.ok()) return policy.status();
  CacheCore core({.capacity_bytes = params.capacity_bytes,
                  .capacity_entries = params.capacity_entries},
                 std::move(*policy));

  ReplayMetrics m;
  std::vector<uint64_t> slot_incarnation;
  std::vector<uint32_t> slot_digest;
  uint64_t incarnations = 0;
  struct Touch {
    ObjectId id;
    uint64_t incarnation;
  };
  // Per session (interned ids are dense): the entries it created or was
  // served since its last COMMAND (kSession only). A touch is recorded only
  // if the session has a COMMAND still to come (next_command), so traces
  // without COMMANDs pay nothing for the rule.
  uint32_t sessions = 0;
  for (uint32_t sid : trace.session) sessions = std::max(sessions, sid + 1);
  const bool track = options.invalidation == InvalidationRule::kSession;
  std::vector<std::vector<Touch>> touched(track ? sessions : 0);
  const bool broken = options.test_only_serve_commands;
  // A session whose next COMMAND is far away grows its list by one per hit:
  // when a list doubles past the live entries, drop the touches of entries
  // that are gone and duplicates (amortized O(1) per request; memory stays
  // O(entries) per session).
  auto compact = [&](std::vector<Touch>& list) {
    const size_t limit = std::max<size_t>(1024, 2 * core.view().entry_count());
    if (list.size() <= limit) return;
    std::unordered_map<ObjectId, uint64_t> live;
    size_t kept = 0;
    for (const Touch& t : list) {
      const Slot s = core.Find(t.id);
      if (s == kNoSlot || slot_incarnation[s] != t.incarnation) continue;
      if (!live.emplace(t.id, t.incarnation).second) continue;
      list[kept++] = t;
    }
    list.resize(kept);
  };

  for (size_t i = 0; i < trace.requests.size(); ++i) {
    const Request& req = trace.requests[i];
    const bool is_command = trace.command[i] != 0;
    const uint32_t session = trace.session[i];
    ++m.requests;
    m.total_bytes += req.size;
    bool served = false;
    // The index at which this session's next COMMAND would erase what the
    // request touches (kSession only).
    const uint64_t dies_at = track ? trace.next_command[i] : kNoNextAccess;
    const bool record_touch = dies_at != kNoNextAccess;
    if (is_command && track) {
      std::vector<Touch>& list = touched[session];
      for (const Touch& t : list) {
        Slot s = core.Find(t.id);
        // Only the incarnation this session touched: the object may since
        // have been evicted and re-inserted by a session that did not.
        if (s != kNoSlot && slot_incarnation[s] == t.incarnation &&
            core.Erase(t.id)) {
          ++m.invalidations;
        }
      }
      list.clear();
    }
    if (is_command) ++m.command_requests;
    const bool looked_up = trace.cacheable[i] || (is_command && broken);
    if (looked_up) {
      if (!is_command) ++m.cacheable_requests;
      Request lookup = req;
      if (is_command) lookup.ttl = 3600;  // broken path only
      lookup.dies_at = dies_at;
      LookupOutcome outcome = core.Lookup(lookup);
      if (outcome == LookupOutcome::kHit) {
        served = true;
        Slot s = core.Find(req.id);
        if (s != kNoSlot && s < slot_digest.size() && slot_digest[s] != 0 &&
            trace.digest[i] != 0 && slot_digest[s] != trace.digest[i]) {
          ++m.stale_served;
        }
        if (record_touch && s != kNoSlot && s < slot_incarnation.size()) {
          std::vector<Touch>& list = touched[session];
          if (list.empty() || list.back().id != req.id ||
              list.back().incarnation != slot_incarnation[s]) {
            list.push_back({req.id, slot_incarnation[s]});
            compact(list);
          }
        }
      } else {
        if (outcome == LookupOutcome::kExpired) ++m.expired_misses;
        if (!trace.error[i]) {
          Slot s = core.Insert(lookup);
          if (s == kNoSlot) {
            ++m.rejections;
          } else {
            ++m.admissions;
            if (s >= slot_incarnation.size()) {
              slot_incarnation.resize(s + 1, 0);
              slot_digest.resize(s + 1, 0);
            }
            slot_incarnation[s] = ++incarnations;
            slot_digest[s] = trace.digest[i];
            if (record_touch) {
              std::vector<Touch>& list = touched[session];
              list.push_back({req.id, incarnations});
              compact(list);
            }
          }
        }
      }
    }
    if (served) {
      ++m.hits;
      m.hit_bytes += req.size;
      m.saved_latency += req.latency;
      m.saved_cost += req.cost;
      if (is_command) ++m.command_served;
    } else {
      ++m.misses;
      m.total_latency += req.latency;
      m.total_size += req.size;
      m.total_cost += req.cost;
    }
  }
  m.evictions = core.evictions();
  return m;
}

}  // namespace toolcache::sim
