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
// PrepareTrace lives in trace_builder.cc (TraceBuilder fed from a Trace).

std::vector<uint64_t> EntryDeathIndices(const PreparedTrace& trace,
                                        InvalidationRule rule) {
  constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
  const size_t n = trace.records;
  std::vector<uint64_t> dies(n, kNever);
  // Per object index: the minimum death over its later requests.
  std::vector<uint64_t> suffix(trace.objects, kNever);
  for (size_t i = n; i-- > 0;) {
    if (trace.command(i) || !trace.cacheable(i)) continue;
    uint64_t d = kNever;
    if (rule == InvalidationRule::kSession) {
      // The next COMMAND of this request's session (PrepareTrace).
      uint64_t& s = suffix[trace.object[i]];
      s = std::min(s, trace.NextCommand(i));
      d = s;
    }
    dies[i] = trace.error(i) ? i + 1 : d;
  }
  return dies;
}

TraceTotals TotalsOf(const PreparedTrace& trace) {
  return {.name = trace.name,
          .records = trace.records,
          .objects = trace.objects,
          .session_count = trace.session_count,
          .unique_cacheable_objects = trace.unique_cacheable_objects,
          .unique_cacheable_bytes = trace.unique_cacheable_bytes,
          .total_bytes = trace.total_bytes};
}

uint64_t CapacityForPercent(const PreparedTrace& trace, double percent) {
  return CapacityForPercent(TotalsOf(trace), percent);
}

uint64_t EntriesForPercent(const PreparedTrace& trace, double percent) {
  return EntriesForPercent(TotalsOf(trace), percent);
}

uint64_t CapacityForPercent(const TraceTotals& trace, double percent) {
  double bytes =
      percent / 100.0 * static_cast<double>(trace.unique_cacheable_bytes);
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(bytes)));
}

uint64_t EntriesForPercent(const TraceTotals& trace, double percent) {
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

namespace {

// PreparedTrace::request(i) without the offline fields (next_access and
// next_access_time keep their "none" defaults).
Request OnlineRequest(const PreparedTrace& trace, size_t i) {
  Request q;
  const uint32_t o = trace.object[i];
  q.id = PreparedTrace::ObjectIdOf(o);
  q.tool = trace.object_tool[o];
  q.param_category = trace.object_category[o];
  q.user = trace.user[i];
  q.size = trace.size[i];
  q.latency = trace.latency[i];
  q.cost = trace.cost[i];
  q.ttl = trace.ttl[i];
  q.now = trace.now[i];
  q.index = i;
  return q;
}

// The request loop, once for both forms: Replay runs it over a held trace
// (kStreamed = false: the next-COMMAND column says whether a touch is worth
// recording, and offline policies get dies_at); a Replayer runs it chunk by
// chunk (kStreamed = true: a per-session count of the COMMANDs still to come
// says the same thing). The two agree record for record: a non-COMMAND
// record's session has a later COMMAND iff its next_command is set.
class ReplayLoop final : public Replayer {
 public:
  ReplayLoop(const ReplayOptions& options, bool offline,
             std::unique_ptr<Policy> policy, uint64_t capacity_bytes,
             uint64_t capacity_entries)
      : offline_(offline),
        track_(options.invalidation == InvalidationRule::kSession),
        broken_(options.test_only_serve_commands),
        core_({.capacity_bytes = capacity_bytes,
               .capacity_entries = capacity_entries},
              std::move(policy)) {}

  void SetCommandsLeft(std::vector<uint64_t> counts) {
    commands_left_ = std::move(counts);
  }

  void Feed(const PreparedTrace& chunk, uint64_t first) override {
    if (!RunPlain(chunk, first)) Run<true>(chunk, first);
  }
  ReplayMetrics Finish() override {
    m_.evictions = core_.evictions();
    return m_;
  }

  template <bool kStreamed>
  void Run(const PreparedTrace& trace, uint64_t first);

  // Run<true> for the commonest streamed chunk (oracleGeneral, CSV, most
  // binary traces): every record cacheable, no COMMAND, no error, no digest,
  // one session with no touch to record, one latency and cost. Only the
  // object, size and clock columns are read per record, and only the
  // metrics such a chunk can move are counted, in Run's order (the float
  // sums add the same values in the same order). False, and nothing done,
  // for any other chunk.
  bool RunPlain(const PreparedTrace& trace, uint64_t first);
  void FeedPlain(const PlainChunk& chunk, const PlainConstants& k,
                 uint64_t first) override;

 private:
  struct Touch {
    ObjectId id;
    uint64_t incarnation;
  };
  // A session whose next COMMAND is far away grows its list by one per hit:
  // when a list doubles past the live entries, drop the touches of entries
  // that are gone and duplicates (amortized O(1) per request; memory stays
  // O(entries) per session).
  void Compact(std::vector<Touch>& list) {
    const size_t limit = std::max<size_t>(1024, 2 * core_.view().entry_count());
    if (list.size() <= limit) return;
    std::unordered_map<ObjectId, uint64_t> live;
    size_t kept = 0;
    for (const Touch& t : list) {
      const Slot s = core_.Find(t.id);
      if (s == kNoSlot || slot_incarnation_[s] != t.incarnation) continue;
      if (!live.emplace(t.id, t.incarnation).second) continue;
      list[kept++] = t;
    }
    list.resize(kept);
  }
  std::vector<Touch>& Touched(uint32_t session) {
    if (session >= touched_.size()) touched_.resize(session + 1);
    return touched_[session];
  }

  // A new entry in slot `s` (both replay loops): its incarnation, which
  // tells it from an earlier entry of the same slot, and the digest of the
  // result it holds (0: none).
  uint64_t Admitted(Slot s, uint32_t digest) {
    if (s >= slot_incarnation_.size()) {
      slot_incarnation_.resize(s + 1, 0);
      slot_digest_.resize(s + 1, 0);
    }
    slot_incarnation_[s] = ++incarnations_;
    slot_digest_[s] = digest;
    return incarnations_;
  }

  // Whether `session`'s touches need no recording (no COMMAND to come).
  bool NoTouches(uint32_t session) const {
    return !track_ || session >= commands_left_.size() ||
           commands_left_[session] == 0;
  }
  // RunPlain's and FeedPlain's loop: `at(i, &object, &size, &now, &q)`
  // reads record i and sets q's tool and parameter category.
  template <class At>
  void PlainLoop(size_t n, uint64_t first, const PlainConstants& k, At at);

  const bool offline_;
  const bool track_;
  const bool broken_;
  CacheCore core_;
  ReplayMetrics m_;
  std::vector<uint64_t> slot_incarnation_;
  std::vector<uint32_t> slot_digest_;
  uint64_t incarnations_ = 0;
  // Per session (interned ids are dense): the entries it created or was
  // served since its last COMMAND (kSession only). A touch is recorded only
  // if the session has a COMMAND still to come, so traces without COMMANDs
  // pay nothing for the rule.
  std::vector<std::vector<Touch>> touched_;
  std::vector<uint64_t> commands_left_;  // streamed: per session
};

template <bool kStreamed>
void ReplayLoop::Run(const PreparedTrace& trace, uint64_t first) {
  ReplayMetrics& m = m_;
  CacheCore& core = core_;
  const bool track = track_;
  const size_t n = trace.records;
  for (size_t i = 0; i < n; ++i) {
    // The compact record; the full Request only for a lookup.
    const uint8_t flags = trace.flags[i];
    const bool is_command = (flags & PreparedTrace::kCommand) != 0;
    const uint32_t session = trace.session[i];
    const uint64_t size = trace.size[i];
    ++m.requests;
    m.total_bytes += size;
    bool served = false;
    // The index at which this session's next COMMAND would erase what the
    // request touches (kSession only; held traces only -- only offline
    // policies read it).
    uint64_t dies_at = kNoNextAccess;
    bool record_touch = false;
    if constexpr (kStreamed) {
      record_touch = track && !is_command && session < commands_left_.size() &&
                     commands_left_[session] != 0;
    } else {
      dies_at = track ? trace.NextCommand(i) : kNoNextAccess;
      record_touch = dies_at != kNoNextAccess;
    }
    if (is_command && track) {
      std::vector<Touch>& list = Touched(session);
      for (const Touch& t : list) {
        Slot s = core.Find(t.id);
        // Only the incarnation this session touched: the object may since
        // have been evicted and re-inserted by a session that did not.
        if (s != kNoSlot && slot_incarnation_[s] == t.incarnation &&
            core.Erase(t.id)) {
          ++m.invalidations;
        }
      }
      list.clear();
      if constexpr (kStreamed) {
        if (session < commands_left_.size() && commands_left_[session] != 0) {
          --commands_left_[session];
        }
      }
    }
    if (is_command) ++m.command_requests;
    const bool looked_up =
        (flags & PreparedTrace::kCacheable) != 0 || (is_command && broken_);
    const ObjectId id = trace.id(i);
    if (looked_up) {
      if (!is_command) ++m.cacheable_requests;
      Request lookup =
          !kStreamed && offline_ ? trace.request(i) : OnlineRequest(trace, i);
      lookup.index = first + i;
      if (is_command) lookup.ttl = 3600;  // broken path only
      lookup.dies_at = dies_at;
      LookupOutcome outcome = core.Lookup(lookup);
      if (outcome == LookupOutcome::kHit) {
        served = true;
        const uint32_t digest = trace.digest[i];
        // The slot only matters for a digest to compare or a touch to
        // record (most traces have neither: one lookup, not two).
        const Slot s = digest != 0 || record_touch ? core.Find(id) : kNoSlot;
        if (s != kNoSlot && s < slot_digest_.size() && slot_digest_[s] != 0 &&
            digest != 0 && slot_digest_[s] != digest) {
          ++m.stale_served;
        }
        if (record_touch && s != kNoSlot && s < slot_incarnation_.size()) {
          std::vector<Touch>& list = Touched(session);
          if (list.empty() || list.back().id != id ||
              list.back().incarnation != slot_incarnation_[s]) {
            list.push_back({id, slot_incarnation_[s]});
            Compact(list);
          }
        }
      } else {
        if (outcome == LookupOutcome::kExpired) ++m.expired_misses;
        if ((flags & PreparedTrace::kError) == 0) {
          Slot s = core.Insert(lookup);
          if (s == kNoSlot) {
            ++m.rejections;
          } else {
            ++m.admissions;
            const uint64_t incarnation = Admitted(s, trace.digest[i]);
            if (record_touch) {
              std::vector<Touch>& list = Touched(session);
              list.push_back({id, incarnation});
              Compact(list);
            }
          }
        }
      }
    }
    const double latency = trace.latency[i];
    const double cost = trace.cost[i];
    if (served) {
      ++m.hits;
      m.hit_bytes += size;
      m.saved_latency += latency;
      m.saved_cost += cost;
      if (is_command) ++m.command_served;
    } else {
      ++m.misses;
      m.total_latency += latency;
      m.total_size += size;
      m.total_cost += cost;
    }
  }
}

bool ReplayLoop::RunPlain(const PreparedTrace& trace, uint64_t first) {
  const size_t n = trace.records;
  if (n == 0 || trace.flags.varies() ||
      trace.flags[0] != PreparedTrace::kCacheable || trace.session.varies() ||
      trace.digest.varies() || trace.digest[0] != 0 || trace.latency.varies() ||
      trace.cost.varies() || trace.user.varies() || trace.ttl.varies()) {
    return false;
  }
  const PlainConstants k{.user = trace.user[0],
                         .session = trace.session[0],
                         .latency = trace.latency[0],
                         .cost = trace.cost[0],
                         .ttl = trace.ttl[0]};
  if (!NoTouches(k.session)) return false;  // touches to record: Run's path
  PlainLoop(
      n, first, k,
      [&](size_t i, uint32_t* o, uint64_t* size, double* now, Request* q) {
        *o = trace.object[i];
        *size = trace.size[i];
        *now = trace.now[i];
        q->tool = trace.object_tool[*o];
        q->param_category = trace.object_category[*o];
      });
  return true;
}

void ReplayLoop::FeedPlain(const PlainChunk& c, const PlainConstants& k,
                           uint64_t first) {
  // A plain trace has no COMMAND, so no session has touches to record; the
  // check keeps Run's rule should a caller feed one anyway.
  if (!NoTouches(k.session)) {
    PreparedTrace chunk;
    chunk.objects = c.records == 0
                        ? 0
                        : *std::max_element(c.object, c.object + c.records) + 1;
    chunk.object_tool.Fill(k.tool);
    chunk.object_category.Fill(k.param_category);
    chunk.object.assign(c.object, c.object + c.records);
    chunk.size.Assign(std::vector<uint64_t>(c.size, c.size + c.records));
    chunk.now.Assign(std::vector<double>(c.now, c.now + c.records));
    chunk.latency.Fill(k.latency);
    chunk.cost.Fill(k.cost);
    chunk.ttl.Fill(k.ttl);
    chunk.user.Fill(k.user);
    chunk.session.Fill(k.session);
    chunk.digest.Fill(0);
    chunk.flags.Fill(PreparedTrace::kCacheable);
    chunk.records = c.records;
    Run<true>(chunk, first);
    return;
  }
  PlainLoop(
      c.records, first, k,
      [&](size_t i, uint32_t* o, uint64_t* size, double* now, Request* q) {
        *o = c.object[i];
        *size = c.size[i];
        *now = c.now[i];
        q->tool = k.tool;
        q->param_category = k.param_category;
      });
}

template <class At>
void ReplayLoop::PlainLoop(size_t n, uint64_t first, const PlainConstants& k,
                           At at) {
  ReplayMetrics& m = m_;
  CacheCore& core = core_;
  const double latency = k.latency;
  const double cost = k.cost;
  Request lookup;
  lookup.user = k.user;
  lookup.latency = latency;
  lookup.cost = cost;
  lookup.ttl = k.ttl;
  lookup.dies_at = kNoNextAccess;
  for (size_t i = 0; i < n; ++i) {
    uint32_t o = 0;
    uint64_t size = 0;
    double now = 0;
    at(i, &o, &size, &now, &lookup);
    ++m.requests;
    m.total_bytes += size;
    ++m.cacheable_requests;
    lookup.id = PreparedTrace::ObjectIdOf(o);
    lookup.size = size;
    lookup.now = now;
    lookup.index = first + i;
    const LookupOutcome outcome = core.Lookup(lookup);
    if (outcome == LookupOutcome::kHit) {
      ++m.hits;
      m.hit_bytes += size;
      m.saved_latency += latency;
      m.saved_cost += cost;
      continue;
    }
    if (outcome == LookupOutcome::kExpired) ++m.expired_misses;
    const Slot s = core.Insert(lookup);
    if (s == kNoSlot) {
      ++m.rejections;
    } else {
      ++m.admissions;
      Admitted(s, 0);
    }
    ++m.misses;
    m.total_latency += latency;
    m.total_size += size;
    m.total_cost += cost;
  }
}

// The policy and the core's capacities for `options`.
Result<std::unique_ptr<ReplayLoop>> MakeLoop(const ReplayOptions& options) {
  const PolicyInfo* info = FindPolicy(options.policy);
  // Only offline policies read next_access / next_access_time (a random
  // read of the next record's time): online ones get the Request without.
  const bool offline = info == nullptr || info->kind == PolicyKind::kOffline;
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
  return std::make_unique<ReplayLoop>(options, offline, std::move(*policy),
                                      params.capacity_bytes,
                                      params.capacity_entries);
}

}  // namespace

Result<ReplayMetrics> Replay(const PreparedTrace& trace,
                             const ReplayOptions& options) {
  Result<std::unique_ptr<ReplayLoop>> loop = MakeLoop(options);
  if (!loop.ok()) return loop.status();
  (*loop)->Run<false>(trace, 0);
  return (*loop)->Finish();
}

Result<std::unique_ptr<Replayer>> Replayer::Make(
    const ReplayOptions& options, std::vector<uint64_t> commands_per_session) {
  const PolicyInfo* info = FindPolicy(options.policy);
  if (info != nullptr && info->kind == PolicyKind::kOffline) {
    return InvalidArgument("policy '" + options.policy +
                           "' is offline: it needs the whole trace "
                           "(next accesses), not a stream");
  }
  Result<std::unique_ptr<ReplayLoop>> loop = MakeLoop(options);
  if (!loop.ok()) return loop.status();
  (*loop)->SetCommandsLeft(std::move(commands_per_session));
  return std::unique_ptr<Replayer>(std::move(*loop));
}

void CountCommands(const PreparedTrace& chunk, std::vector<uint64_t>* counts) {
  for (size_t i = 0; i < chunk.records; ++i) {
    if (!chunk.command(i)) continue;
    const uint32_t session = chunk.session[i];
    if (session >= counts->size()) counts->resize(session + 1, 0);
    ++(*counts)[session];
  }
}

}  // namespace toolcache::sim
