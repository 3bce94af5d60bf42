// TraceBuilder (trace_builder.h) and PrepareTrace (replay.h) on top of it.
//
// Invariants:
//   - Object identity is exact interning of (scope, tenant, tool, canonical
//     arguments) in order of first appearance; the object's id is
//     Mix64(index + 1), a bijection, so no two distinct keys share an id.
//     Add interns the scope's user or session, the tenant and the tool
//     exactly as strings first, then the tuple of their ids with the
//     arguments text (equal tuples iff equal strings).
//     AddInterned reaches the same indices from the dense key ids (a key id
//     is equal iff the strings are), so both paths agree record for record.
//   - Per-object features (the parameter category) are a function of the
//     object key (tool + arguments), so they are derived once per object, the
//     first time it is seen; cost and TTL are per record.
//   - Finish computes next_access (next cacheable request of the same
//     object) and next_command (next COMMAND of the same session) in one
//     backward pass over dense per-object / per-session arrays.
#include "src/sim/trace_builder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "src/core/prefetch.h"
#include "src/sim/random.h"
#include "toolcache/config.h"
#include "toolcache/request_features.h"

namespace toolcache::sim {
namespace {

// An object index never reached: at most 2^32 - 1 records, so indices stop
// at 2^32 - 2.
constexpr uint32_t kNoObject = std::numeric_limits<uint32_t>::max();

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const {
    return std::hash<std::string_view>{}(s);
  }
};

template <typename T>
class Interner {
 public:
  // Returns the index of `s`, adding it if new (indices start at `first`).
  T Intern(std::string_view s) {
    // Traces repeat the previous record's tool / user / session most of the
    // time: one compare instead of a hash lookup.
    if (has_last_ && s == last_) return last_id_;
    auto it = map_.find(s);
    if (it == map_.end()) {
      it = map_.emplace(std::string(s), static_cast<T>(map_.size()) + first_)
               .first;
    }
    last_.assign(s);
    last_id_ = it->second;
    has_last_ = true;
    return it->second;
  }
  size_t size() const { return map_.size(); }
  void set_first(T first) { first_ = first; }

 private:
  std::unordered_map<std::string, T, StringHash, std::equal_to<>> map_;
  T first_ = 0;
  std::string last_;
  T last_id_ = 0;
  bool has_last_ = false;
};

// Exact interning of object keys (scope id, tenant id, tool id, canonical
// arguments text): a flat open-addressing table of (hash, arena offset)
// over one arena holding each key as a fixed header (the three ids, the
// index, the text's length) followed by its text, so a lookup is one probe
// and one compare of the record's own fields, with no key string built.
// Indices are dense, in order of first insertion.
class KeyTable {
 public:
  struct Ids {
    uint32_t scope = 0;  // interned user or session (0 for global scope)
    uint32_t tenant = 0;
    uint32_t tool = 0;
  };
  static uint64_t Hash(const Ids& ids, std::string_view text) {
    return Mix64(
        std::hash<std::string_view>{}(text) ^
        ((uint64_t{ids.scope} << 32 | ids.tenant) * 0x9e3779b97f4a7c15ULL) ^
        (uint64_t{ids.tool} * 0xc2b2ae3d27d4eb4fULL));
  }
  // Cache hints for a later Intern of a key whose Hash is `h`: its first
  // slot, then the key text that slot points to.
  void PrefetchSlot(uint64_t h) const {
    PrefetchRead(slots_.data() + (h & (slots_.size() - 1)));
  }
  void PrefetchText(uint64_t h) const {
    const uint64_t offset = slots_[h & (slots_.size() - 1)].offset;
    if (offset != kEmpty) PrefetchRead(arena_.data() + offset);
  }
  // The index of (ids, text); `*fresh` tells whether it was added now.
  // REQUIRES: h == Hash(ids, text).
  uint64_t Intern(const Ids& ids, std::string_view text, uint64_t h,
                  bool* fresh) {
    if (count_ * 2 >= slots_.size()) Grow();
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& slot = slots_[i];
      if (slot.offset == kEmpty) {
        slot = {h, arena_.size()};
        const Header head{ids.scope, ids.tenant, ids.tool,
                          0,         count_,     text.size()};
        arena_.append(reinterpret_cast<const char*>(&head), sizeof(head))
            .append(text);
        *fresh = true;
        return count_++;
      }
      if (slot.hash != h) continue;
      Header head;
      std::memcpy(&head, arena_.data() + slot.offset, sizeof(head));
      if (head.scope == ids.scope && head.tenant == ids.tenant &&
          head.tool == ids.tool && head.length == text.size() &&
          std::memcmp(arena_.data() + slot.offset + sizeof(head), text.data(),
                      text.size()) == 0) {
        *fresh = false;
        return head.index;
      }
    }
  }
  uint64_t size() const { return count_; }

 private:
  static constexpr uint64_t kEmpty = std::numeric_limits<uint64_t>::max();
  struct Slot {
    uint64_t hash = 0;
    uint64_t offset = kEmpty;  // of the key's Header in arena_
  };
  static constexpr size_t kMinSlots = 1024;
  struct Header {
    uint32_t scope, tenant, tool, unused;
    uint64_t index, length;
  };
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(std::max(kMinSlots, old.size() * 2), Slot{});
    const size_t mask = slots_.size() - 1;
    for (const Slot& o : old) {
      if (o.offset == kEmpty) continue;
      size_t i = o.hash & mask;
      while (slots_[i].offset != kEmpty) i = (i + 1) & mask;
      slots_[i] = o;
    }
  }
  std::vector<Slot> slots_ = std::vector<Slot>(kMinSlots);  // a power of 2
  std::string arena_;  // every key: Header, then its text
  uint64_t count_ = 0;
};

struct PairHash {
  size_t operator()(const std::pair<uint64_t, uint64_t>& p) const {
    return Mix64(p.first * 0x9e3779b97f4a7c15ULL ^ p.second);
  }
};

}  // namespace

// Whether the object at `p` is already its own RFC 8785 text in the
// simplest, commonest shape: no whitespace, ASCII member names without
// escapes in strictly increasing byte order (JCS sorts by UTF-16 units,
// which for ASCII is byte order), each value an integer of at most 15
// digits without leading zeros (exact in a double, printed as is by JCS), a
// string of printable ASCII without escapes, true, false or null. Anything
// else takes the full canonicalization. A nullptr answer is always safe.
// `info` (optional) receives the member count and the first member.
const char* PlainCanonicalObjectEnd(const char* p, const char* end,
                                    PlainObject* info) {
  auto plain_string = [&](std::string_view* text) {
    if (p >= end || *p != '"') return false;
    const char* start = ++p;
    while (p < end && *p != '"') {
      const unsigned char c = static_cast<unsigned char>(*p);
      if (c < 0x20 || c >= 0x7f || c == '\\') return false;
      ++p;
    }
    if (p >= end) return false;
    *text = std::string_view(start, p - start);
    ++p;
    return true;
  };
  auto literal = [&](std::string_view word) {
    if (static_cast<size_t>(end - p) < word.size() ||
        std::memcmp(p, word.data(), word.size()) != 0) {
      return false;
    }
    p += word.size();
    return true;
  };
  if (end - p < 2 || *p != '{') return nullptr;
  ++p;
  if (*p == '}') return p + 1;
  std::string_view prev;
  uint64_t members = 0;
  bool first = true;
  while (true) {
    std::string_view key;
    if (!plain_string(&key)) return nullptr;
    if (!first && !(prev < key)) return nullptr;
    first = false;
    prev = key;
    if (p >= end || *p != ':') return nullptr;
    ++p;
    if (p >= end) return nullptr;
    const char* value_start = p;
    const char c = *p;
    if (c == '"') {
      std::string_view v;
      if (!plain_string(&v)) return nullptr;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      if (c == '-') ++p;
      const char* start = p;
      while (p < end && *p >= '0' && *p <= '9') ++p;
      const ptrdiff_t digits = p - start;
      if (digits == 0 || digits > 15) return nullptr;
      if (*start == '0' && (digits > 1 || c == '-')) return nullptr;  // -0
    } else if (!literal("true") && !literal("null") && !literal("false")) {
      return nullptr;
    }
    if (p >= end) return nullptr;
    if (++members == 1 && info != nullptr) {
      info->first_name = key;
      info->first_value = std::string_view(value_start, p - value_start);
    }
    if (info != nullptr) info->members = members;
    if (*p == '}') return p + 1;
    if (*p != ',') return nullptr;
    ++p;
  }
}

bool IsPlainCanonicalObject(std::string_view raw, PlainObject* info) {
  const char* end = raw.data() + raw.size();
  return PlainCanonicalObjectEnd(raw.data(), end, info) == end;
}

struct TraceBuilder::State {
  PrepareOptions options;
  PreparedTrace p;
  FeatureBuilder features;
  Interner<uint32_t> tools, users, sessions, digests, tenants;
  KeyTable objects;  // Add: the object keys
  // AddInterned: key id -> object index (global scope), or (scope, key).
  std::vector<uint32_t> key_object;  // kNoObject: not seen yet
  std::unordered_map<std::pair<uint64_t, uint64_t>, uint64_t, PairHash>
      scoped_objects;
  uint64_t key_count = 0;
  uint64_t object_count = 0;
  std::vector<uint8_t> seen;  // per object: counted as unique cacheable
  size_t reserve = 0;         // expected records (a column that varies)
  // Streaming: records already handed to chunk_sink; 0 otherwise.
  uint64_t base = 0;
  uint64_t chunk_records = 0;  // 0 = not streaming
  bool flags_and_sessions_only = false;
  TraceBuilder::ChunkSink chunk_sink;
  bool any_command = false;
  double now = 0;
  double prev_latency = 0;

  static Config FeatureConfig(const PrepareOptions& o) {
    // The one feature derivation the faces use too (request_features.h): no
    // tool table, the record's cost, its TTL or the trace default.
    Config c;
    c.ttl_seconds = o.default_ttl;
    return c;
  }
  explicit State(const PrepareOptions& o)
      : options(o), features(FeatureConfig(o)) {}

  // `i` is the record's index in the current chunk (== in the trace unless
  // streaming).
  Status Bad(uint64_t i, const std::string& why) const {
    return InvalidArgument(p.name + ": record " + std::to_string(base + i + 1) +
                           ": " + why);
  }

  // Streaming (TraceBuilder::StreamChunks): hands the chunk to the sink and
  // empties the per-record columns; per-object tables and totals stay.
  Status Flush() {
    if (p.records == 0) return Status::Ok();
    if (Status st = chunk_sink(p, base); !st.ok()) return st;
    base += p.records;
    p.records = 0;
    p.object.clear();
    p.size.Clear();
    p.latency.Clear();
    p.cost.Clear();
    p.ttl.Clear();
    p.now.Clear();
    p.user.Clear();
    p.session.Clear();
    p.digest.Clear();
    p.flags.Clear();
    return Status::Ok();
  }

  // The bounds PrepareTrace has always enforced (InTraceBounds;
  // CheckFailed says which).
  Status Check(uint64_t size, double latency, double cost, double time) const {
    if (InTraceBounds(size, latency, cost, time)) return Status::Ok();
    return CheckFailed(size, latency, cost, time);
  }
  // The first bound violated, in the order PrepareTrace has always checked.
  [[gnu::noinline]] Status CheckFailed(uint64_t size, double latency,
                                       double cost, double time) const {
    const uint64_t i = p.records;
    if (!(latency >= 0 && latency <= kMaxTraceLatencySeconds) ||
        !(cost >= 0 && cost <= kMaxTraceCost)) {
      return Bad(i, "latency and cost must be finite, >= 0 and at most " +
                        nlohmann::json(kMaxTraceLatencySeconds).dump() +
                        " s / " + nlohmann::json(kMaxTraceCost).dump());
    }
    if (size > kMaxTraceResultSize) {
      return Bad(i, "result_size exceeds 1 TiB");
    }
    if (std::isinf(time) || time > kMaxTraceTimeSeconds || time < 0) {
      return Bad(i, "time must be in [0, 1e12] s (or absent)");
    }
    return Status::Ok();
  }

  // Shared fields of both entry points; `object` is the object
  // index, `ttl` the record's TTL as in InternedRecord.
  Status Push(uint64_t object, uint32_t user, uint32_t session, uint32_t digest,
              uint64_t size, double latency, double cost, double ttl,
              double time, bool error, std::optional<RequestType> type) {
    const uint64_t i = p.records;
    if (base + i >= PreparedTrace::kNone) {
      return Bad(i, "more than 2^32 - 1 records");
    }
    // Choice: a record without a clock starts when the previous call ended.
    const double t = std::isfinite(time) ? time : now + prev_latency;
    now = std::max(now, t);
    prev_latency = latency;

    const size_t r = reserve;
    const uint64_t q_size = std::max<uint64_t>(1, size);
    // Choice: a record with no ground-truth type is treated as COMMAND (never
    // cached) -- safety first; the classifier will decide once integrated.
    const RecordClass c = ClassifyRecord(options, type, ttl);
    const bool is_command = c.command;
    const double q_ttl = c.ttl;  // +inf: never expires
    const bool cacheable = c.cacheable;
    if (!flags_and_sessions_only) {
      p.object.push_back(static_cast<uint32_t>(object));
      p.size.Push(q_size, i, r);
      p.latency.Push(latency, i, r);
      p.cost.Push(cost, i, r);
      p.now.Push(now, i, r);
      p.user.Push(user, i, r);
      p.ttl.Push(q_ttl, i, r);
      p.digest.Push(digest, i, r);
    }
    p.flags.Push(
        static_cast<uint8_t>((cacheable ? PreparedTrace::kCacheable : 0) |
                             (is_command ? PreparedTrace::kCommand : 0) |
                             (error ? PreparedTrace::kError : 0)),
        i, r);
    any_command = any_command || is_command;
    p.session.Push(session, i, r);
    p.session_count = std::max(p.session_count, session + 1);
    ++p.records;
    p.total_bytes += q_size;
    if (cacheable && !seen[object]) {
      seen[object] = 1;
      ++p.unique_cacheable_objects;
      p.unique_cacheable_bytes += q_size;
    }
    if (chunk_records != 0 && p.records == chunk_records) return Flush();
    return Status::Ok();
  }

  // A record's interned strings and the hash of its object key.
  struct Keyed {
    KeyTable::Ids ids;
    uint32_t user = 0;
    uint32_t session = 0;
    uint64_t hash = 0;
  };
  Keyed Key(const RecordView& r) {
    Keyed k;
    k.user = users.Intern(r.user);
    k.session = sessions.Intern(r.session);
    k.ids.tenant = tenants.Intern(r.tenant);
    k.ids.tool = tools.Intern(r.tool);
    switch (options.scope) {
      case Scope::kGlobal:
        break;
      case Scope::kUser:
        k.ids.scope = k.user;
        break;
      case Scope::kSession:
        k.ids.scope = k.session;
        break;
    }
    k.hash = KeyTable::Hash(k.ids, r.arguments);
    return k;
  }

  // Add's checks, object and columns for a record keyed by Key(r). An
  // error leaves the builder unusable (Key interned the strings already).
  Status AddKeyed(const RecordView& r, const Keyed& k) {
    const uint64_t i = p.records;
    if (r.tool.empty()) return Bad(i, "empty tool name");
    if (Status st = Check(r.result_size, r.latency, r.cost, r.time); !st.ok()) {
      return st;
    }
    bool fresh = false;
    const uint64_t object = objects.Intern(k.ids, r.arguments, k.hash, &fresh);
    if (fresh) {
      PlainObject plain;
      if (IsPlainCanonicalObject(r.arguments, &plain)) {
        // FeatureBuilder's rule (no tool table: the first member, in byte
        // order, of a call with two or more) read off the text, which for
        // this shape is what nlohmann's dump() prints.
        const uint64_t category =
            plain.members >= 2
                ? ParameterCategoryFeature(r.tool, plain.first_name,
                                           plain.first_value)
                : 0;
        NewObject(k.ids.tool, category);
      } else {
        Result<RequestFeatures> f =
            features.Build({.tool = r.tool,
                            .arguments_json = r.arguments,
                            .ttl_seconds = r.ttl});
        if (!f.ok()) return Bad(i, "arguments are not a JSON object");
        NewObject(k.ids.tool, f->category_feature);
      }
    }
    return Push(object, k.user, k.session, digests.Intern(r.result_digest),
                r.result_size, r.latency, r.cost, r.ttl, r.time, r.error,
                r.request_type);
  }

  // A new object index (features filled by the caller).
  uint64_t NewObject(uint32_t tool, uint64_t param_category) {
    p.object_category.Push(param_category, object_count, 0);
    p.object_tool.Push(tool, object_count, 0);
    seen.push_back(0);
    p.objects = object_count + 1;
    return object_count++;
  }
};
TraceBuilder::TraceBuilder(std::string name, const PrepareOptions& options,
                           uint64_t expected_records, uint64_t key_count)
    : s_(std::make_unique<State>(options)) {
  s_->p.name = std::move(name);
  s_->tools.set_first(1);
  s_->users.Intern("");    // anonymous = 0
  s_->digests.Intern("");  // unknown = 0
  s_->tenants.Intern("");  // default = 0
  s_->key_count = key_count;
  if (key_count == kGrowingKeys) key_count = 0;
  if (options.scope == Scope::kGlobal) {
    s_->key_object.assign(key_count, kNoObject);
  }
  s_->reserve = expected_records;
  if (expected_records > 0) s_->p.object.reserve(expected_records);
}

TraceBuilder::~TraceBuilder() = default;

uint64_t TraceBuilder::size() const { return s_->base + s_->p.records; }

void TraceBuilder::StreamChunks(uint64_t chunk_records, ChunkSink sink,
                                StreamContent content) {
  State& s = *s_;
  s.flags_and_sessions_only = content == StreamContent::kFlagsAndSessions;
  s.chunk_records = std::max<uint64_t>(1, chunk_records);
  s.chunk_sink = std::move(sink);
  s.reserve = static_cast<size_t>(s.chunk_records);
  std::vector<uint32_t>().swap(s.p.object);
  s.p.object.reserve(s.reserve);
}

Status TraceBuilder::Add(const RecordView& r) {
  return s_->AddKeyed(r, s_->Key(r));
}

Status TraceBuilder::AddBatch(std::span<const RecordView> records) {
  State& s = *s_;
  // Three passes per group: intern the strings and hash each key, fetching
  // its slot; fetch the key text the slot points to; then the real lookup
  // and the columns, in record order. The first two only warm the cache.
  constexpr size_t kGroup = 16;
  State::Keyed keyed[kGroup];
  for (size_t at = 0; at < records.size(); at += kGroup) {
    const size_t n = std::min(kGroup, records.size() - at);
    const RecordView* r = records.data() + at;
    for (size_t j = 0; j < n; ++j) {
      keyed[j] = s.Key(r[j]);
      s.objects.PrefetchSlot(keyed[j].hash);
    }
    for (size_t j = 0; j < n; ++j) s.objects.PrefetchText(keyed[j].hash);
    for (size_t j = 0; j < n; ++j) {
      if (Status st = s.AddKeyed(r[j], keyed[j]); !st.ok()) return st;
    }
  }
  return Status::Ok();
}

Status TraceBuilder::AddInterned(const InternedRecord& r) {
  State& s = *s_;
  const uint64_t i = s.p.records;
  if (s.key_count == kGrowingKeys && r.key == s.key_object.size()) {
    // Keys numbered by the caller as they appear (the oracleGeneral reader);
    // in the scoped modes key_object only counts them.
    s.key_object.push_back(kNoObject);
  }
  const uint64_t keys =
      s.key_count == kGrowingKeys ? s.key_object.size() : s.key_count;
  if (r.key >= keys) {
    return s.Bad(i, "object key id " + std::to_string(r.key) +
                        " out of range (the file is corrupt)");
  }
  if (r.tool == 0) return s.Bad(i, "empty tool name");
  if (Status st = s.Check(r.result_size, r.latency, r.cost, r.time); !st.ok()) {
    return st;
  }
  uint64_t object = 0;
  if (s.options.scope == Scope::kGlobal) {
    uint32_t& o = s.key_object[r.key];
    if (o == kNoObject) {
      o = static_cast<uint32_t>(s.NewObject(r.tool, r.param_category));
    }
    object = o;
  } else {
    const uint64_t scope = s.options.scope == Scope::kUser ? r.user : r.session;
    auto [it, fresh] = s.scoped_objects.try_emplace({scope, r.key}, 0);
    if (fresh) it->second = s.NewObject(r.tool, r.param_category);
    object = it->second;
  }
  return s.Push(object, r.user, r.session, r.digest, r.result_size, r.latency,
                r.cost, r.ttl, r.time, r.error, r.request_type);
}

Result<PreparedTrace> TraceBuilder::Finish() && {
  State& s = *s_;
  PreparedTrace& p = s.p;
  if (s.chunk_records != 0) {
    // Streaming: the last chunk goes to the sink; no per-record columns.
    if (Status st = s.Flush(); !st.ok()) return st;
    p.next_access.Fill(PreparedTrace::kNone);
    p.next_command.Fill(PreparedTrace::kNone);
    return std::move(p);
  }
  const size_t n = p.records;
  constexpr uint32_t kNone = PreparedTrace::kNone;
  // next_access: the next cacheable request of the same object, in one
  // backward pass over a dense per-object array.
  {
    std::vector<uint32_t> next(s.object_count, kNone);
    std::vector<uint32_t> next_access(n, kNone);
    for (size_t i = n; i-- > 0;) {
      if (!p.cacheable(i)) continue;
      uint32_t& nx = next[p.object[i]];
      next_access[i] = nx;
      nx = static_cast<uint32_t>(i);
    }
    p.next_access.Assign(std::move(next_access));
  }
  // next_command: the next COMMAND of the same session (none without
  // COMMANDs: a constant column).
  if (!s.any_command) {
    p.next_command.Fill(kNone);
  } else {
    std::vector<uint32_t> next(p.session_count, kNone);
    std::vector<uint32_t> next_command(n, kNone);
    for (size_t i = n; i-- > 0;) {
      const uint32_t session = p.session[i];
      if (p.command(i)) {
        next[session] = static_cast<uint32_t>(i);
      } else {
        next_command[i] = next[session];
      }
    }
    p.next_command.Assign(std::move(next_command));
  }
  return std::move(p);
}

std::vector<Request> PreparedTrace::Requests() const {
  std::vector<Request> out;
  out.reserve(records);
  for (size_t i = 0; i < records; ++i) out.push_back(request(i));
  return out;
}

std::vector<uint8_t> PreparedTrace::CacheableFlags() const {
  std::vector<uint8_t> out(records);
  for (size_t i = 0; i < records; ++i) out[i] = cacheable(i) ? 1 : 0;
  return out;
}

std::string ServerTenant(std::string_view server, std::string_view tenant) {
  std::string s = "\x02server:";
  s += std::to_string(server.size());
  s += ':';
  s += server;
  s += tenant;
  return s;
}

uint64_t PreparedTrace::MemoryBytes() const {
  return object_category.bytes() + object_tool.bytes() +
         object.capacity() * sizeof(uint32_t) + size.bytes() + latency.bytes() +
         cost.bytes() + ttl.bytes() + now.bytes() + user.bytes() +
         session.bytes() + digest.bytes() + flags.bytes() +
         next_access.bytes() + next_command.bytes();
}

Result<PreparedTrace> PrepareTrace(const Trace& trace,
                                   const PrepareOptions& options) {
  TraceBuilder b(trace.name, options, trace.records.size());
  std::string tenant;
  for (const TraceRecord& r : trace.records) {
    if (!r.server.empty()) tenant = ServerTenant(r.server, r.tenant);
    Status st = b.Add({.time = r.time,
                       .session = r.session,
                       .user = r.user,
                       .tenant = r.server.empty() ? std::string_view(r.tenant)
                                                  : std::string_view(tenant),
                       .tool = r.tool,
                       .arguments = r.arguments,
                       .result_size = r.result_size,
                       .latency = r.latency,
                       .cost = r.cost,
                       // Historical rule: any non-finite TTL means none.
                       .ttl = std::isfinite(r.ttl)
                                  ? r.ttl
                                  : std::numeric_limits<double>::quiet_NaN(),
                       .error = r.error,
                       .request_type = r.request_type,
                       .result_digest = r.result_digest});
    if (!st.ok()) return st;
  }
  return std::move(b).Finish();
}

}  // namespace toolcache::sim
