// TraceBuilder (trace_builder.h) and PrepareTrace (replay.h) on top of it.
//
// Invariants:
//   - Object identity is exact interning of (scope, tenant, tool, canonical
//     arguments) in order of first appearance; the object's id is
//     Mix64(index + 1), a bijection, so no two distinct keys share an id.
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
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "src/sim/random.h"
#include "toolcache/config.h"
#include "toolcache/request_features.h"

namespace toolcache::sim {
namespace {

constexpr uint64_t kUnset = std::numeric_limits<uint64_t>::max();

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

// Exact interning of object keys: a flat open-addressing table of (hash,
// index) over the key texts kept end to end in one arena, so a lookup is
// one probe and one compare (a node-based map of strings costs two or three
// cache misses per record). Indices are dense, in order of first insertion.
class KeyTable {
 public:
  // The index of `s`; `*fresh` tells whether it was added now.
  uint64_t Intern(std::string_view s, bool* fresh) {
    if (count_ * 2 >= slots_.size()) Grow();
    const uint64_t h = std::hash<std::string_view>{}(s);
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& slot = slots_[i];
      if (slot.index == kEmpty) {
        slot = {h, count_};
        arena_.append(s);
        ends_.push_back(arena_.size());
        *fresh = true;
        return count_++;
      }
      if (slot.hash == h && Text(slot.index) == s) {
        *fresh = false;
        return slot.index;
      }
    }
  }
  uint64_t size() const { return count_; }

 private:
  static constexpr uint64_t kEmpty = std::numeric_limits<uint64_t>::max();
  struct Slot {
    uint64_t hash = 0;
    uint64_t index = kEmpty;
  };
  std::string_view Text(uint64_t index) const {
    const uint64_t begin = index == 0 ? 0 : ends_[index - 1];
    return std::string_view(arena_).substr(begin, ends_[index] - begin);
  }
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(std::max<size_t>(1024, old.size() * 2), Slot{});
    const size_t mask = slots_.size() - 1;
    for (const Slot& o : old) {
      if (o.index == kEmpty) continue;
      size_t i = o.hash & mask;
      while (slots_[i].index != kEmpty) i = (i + 1) & mask;
      slots_[i] = o;
    }
  }
  std::vector<Slot> slots_;
  std::string arena_;           // every key's text, end to end
  std::vector<uint64_t> ends_;  // end offset of key i in arena_
  uint64_t count_ = 0;
};

struct PairHash {
  size_t operator()(const std::pair<uint64_t, uint64_t>& p) const {
    return Mix64(p.first * 0x9e3779b97f4a7c15ULL ^ p.second);
  }
};

}  // namespace

// Whether `raw` is an object that is already its own RFC 8785 text in the
// simplest, commonest shape: no whitespace, ASCII member names without
// escapes in strictly increasing byte order (JCS sorts by UTF-16 units,
// which for ASCII is byte order), each value an integer of at most 15
// digits without leading zeros (exact in a double, printed as is by JCS), a
// string of printable ASCII without escapes, true, false or null. Anything
// else takes the full canonicalization. A false answer is always safe.
// `info` (optional) receives the member count and the first member.
bool IsPlainCanonicalObject(std::string_view raw, PlainObject* info) {
  size_t i = 0;
  const size_t n = raw.size();
  auto plain_string = [&](std::string_view* text) {
    if (i >= n || raw[i] != '"') return false;
    const size_t start = ++i;
    while (i < n && raw[i] != '"') {
      const unsigned char c = static_cast<unsigned char>(raw[i]);
      if (c < 0x20 || c >= 0x7f || c == '\\') return false;
      ++i;
    }
    if (i >= n) return false;
    *text = raw.substr(start, i - start);
    ++i;
    return true;
  };
  if (n < 2 || raw[0] != '{') return false;
  i = 1;
  if (raw[i] == '}') return i + 1 == n;
  std::string_view prev;
  uint64_t members = 0;
  bool first = true;
  while (true) {
    std::string_view key;
    if (!plain_string(&key)) return false;
    if (!first && !(prev < key)) return false;
    first = false;
    prev = key;
    if (i >= n || raw[i] != ':') return false;
    ++i;
    if (i >= n) return false;
    const size_t value_start = i;
    const char c = raw[i];
    if (c == '"') {
      std::string_view v;
      if (!plain_string(&v)) return false;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      if (c == '-') ++i;
      const size_t start = i;
      while (i < n && raw[i] >= '0' && raw[i] <= '9') ++i;
      const size_t digits = i - start;
      if (digits == 0 || digits > 15) return false;
      if (raw[start] == '0' && (digits > 1 || c == '-')) return false;  // -0
    } else if (raw.substr(i, 4) == "true" || raw.substr(i, 4) == "null") {
      i += 4;
    } else if (raw.substr(i, 5) == "false") {
      i += 5;
    } else {
      return false;
    }
    if (i >= n) return false;
    if (++members == 1 && info != nullptr) {
      info->first_name = key;
      info->first_value = raw.substr(value_start, i - value_start);
    }
    if (info != nullptr) info->members = members;
    if (raw[i] == '}') return i + 1 == n;
    if (raw[i] != ',') return false;
    ++i;
  }
}

struct TraceBuilder::State {
  PrepareOptions options;
  PreparedTrace p;
  FeatureBuilder features;
  Interner<uint32_t> tools, users, sessions, digests;
  KeyTable objects;  // Add: the object key text
  // AddInterned: key id -> object index (global scope), or (scope, key).
  std::vector<uint64_t> key_object;
  std::unordered_map<std::pair<uint64_t, uint64_t>, uint64_t, PairHash>
      scoped_objects;
  uint64_t key_count = 0;
  uint64_t object_count = 0;
  std::vector<uint8_t> seen;  // per object: counted as unique cacheable
  size_t reserve = 0;         // expected records (a column that varies)
  bool any_command = false;
  double now = 0;
  double prev_latency = 0;
  std::string key_buf;
  std::string category_buf;

  static Config FeatureConfig(const PrepareOptions& o) {
    // The one feature derivation the faces use too (request_features.h): no
    // tool table, the record's cost, its TTL or the trace default.
    Config c;
    c.ttl_seconds = o.default_ttl;
    return c;
  }
  explicit State(const PrepareOptions& o)
      : options(o), features(FeatureConfig(o)) {}

  Status Bad(uint64_t i, const std::string& why) const {
    return InvalidArgument(p.name + ": record " + std::to_string(i + 1) + ": " +
                           why);
  }

  // The bounds PrepareTrace has always enforced, in its order.
  Status Check(uint64_t size, double latency, double cost, double time) const {
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
    if (i >= PreparedTrace::kNone) {
      return Bad(i, "more than 2^32 - 1 records");
    }
    // Choice: a record without a clock starts when the previous call ended.
    const double t = std::isfinite(time) ? time : now + prev_latency;
    now = std::max(now, t);
    prev_latency = latency;

    const size_t r = reserve;
    p.object.push_back(static_cast<uint32_t>(object));
    const uint64_t q_size = std::max<uint64_t>(1, size);
    p.size.Push(q_size, i, r);
    p.latency.Push(latency, i, r);
    p.cost.Push(cost, i, r);
    p.now.Push(now, i, r);
    p.user.Push(user, i, r);
    // Choice: a record with no ground-truth type is treated as COMMAND (never
    // cached) -- safety first; the classifier will decide once integrated.
    const bool is_command = !type.has_value() || *type == RequestType::kCommand;
    const double record_ttl =
        std::isnan(ttl) ? options.default_ttl : ttl;  // +inf: never expires
    const double q_ttl = is_command ? 0 : record_ttl;
    p.ttl.Push(q_ttl, i, r);
    const bool cacheable = !is_command && q_ttl > options.min_cacheable_ttl;
    p.flags.Push(
        static_cast<uint8_t>((cacheable ? PreparedTrace::kCacheable : 0) |
                             (is_command ? PreparedTrace::kCommand : 0) |
                             (error ? PreparedTrace::kError : 0)),
        i, r);
    any_command = any_command || is_command;
    p.session.Push(session, i, r);
    p.session_count = std::max(p.session_count, session + 1);
    p.digest.Push(digest, i, r);
    ++p.records;
    p.total_bytes += q_size;
    if (cacheable && !seen[object]) {
      seen[object] = 1;
      ++p.unique_cacheable_objects;
      p.unique_cacheable_bytes += q_size;
    }
    return Status::Ok();
  }

  // A new object index (features filled by the caller).
  uint64_t NewObject(uint32_t tool, uint64_t param_category) {
    p.object_id.push_back(Mix64(object_count + 1));
    p.object_category.push_back(param_category);
    p.object_tool.push_back(tool);
    seen.push_back(0);
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
  s_->key_count = key_count;
  if (options.scope == Scope::kGlobal) s_->key_object.assign(key_count, kUnset);
  s_->reserve = expected_records;
  if (expected_records > 0) s_->p.object.reserve(expected_records);
}

TraceBuilder::~TraceBuilder() = default;

uint64_t TraceBuilder::size() const { return s_->p.records; }

Status TraceBuilder::Add(const RecordView& r) {
  State& s = *s_;
  const uint64_t i = s.p.records;
  if (r.tool.empty()) return s.Bad(i, "empty tool name");
  if (Status st = s.Check(r.result_size, r.latency, r.cost, r.time); !st.ok()) {
    return st;
  }
  std::string& key = s.key_buf;
  key.clear();
  switch (s.options.scope) {
    case Scope::kGlobal:
      break;
    case Scope::kUser:
      key.append("u:").append(r.user);
      break;
    case Scope::kSession:
      key.append("s:").append(r.session);
      break;
  }
  // The tenant joins the identity (a default "" tenant leaves the interning
  // order, hence every id, as it was before tenants existed).
  key.append(1, '\x1e')
      .append(r.tenant)
      .append(1, '\x1f')
      .append(r.tool)
      .append(1, '\x1f')
      .append(r.arguments);
  const uint32_t tool = s.tools.Intern(r.tool);
  bool fresh = false;
  const uint64_t object = s.objects.Intern(key, &fresh);
  if (fresh) {
    PlainObject plain;
    if (IsPlainCanonicalObject(r.arguments, &plain)) {
      // FeatureBuilder's rule (no tool table: the first member, in byte
      // order, of a call with two or more) read off the text, which for
      // this shape is what nlohmann's dump() prints.
      uint64_t category = 0;
      if (plain.members >= 2) {
        std::string& c = s.category_buf;
        c.assign(r.tool)
            .append(1, '\x1f')
            .append(plain.first_name)
            .append(1, '=')
            .append(plain.first_value);
        category = StableHash(c) | 1;
      }
      s.NewObject(tool, category);
    } else {
      Result<RequestFeatures> f =
          s.features.Build({.tool = r.tool,
                            .arguments_json = r.arguments,
                            .ttl_seconds = r.ttl});
      if (!f.ok()) return s.Bad(i, "arguments are not a JSON object");
      s.NewObject(tool, f->category_feature);
    }
  }
  return s.Push(object, s.users.Intern(r.user), s.sessions.Intern(r.session),
                s.digests.Intern(r.result_digest), r.result_size, r.latency,
                r.cost, r.ttl, r.time, r.error, r.request_type);
}

Status TraceBuilder::AddInterned(const InternedRecord& r) {
  State& s = *s_;
  const uint64_t i = s.p.records;
  if (r.key >= s.key_count) {
    return s.Bad(i, "object key id " + std::to_string(r.key) +
                        " out of range (the file is corrupt)");
  }
  if (r.tool == 0) return s.Bad(i, "empty tool name");
  if (Status st = s.Check(r.result_size, r.latency, r.cost, r.time); !st.ok()) {
    return st;
  }
  uint64_t object = 0;
  if (s.options.scope == Scope::kGlobal) {
    uint64_t& o = s.key_object[r.key];
    if (o == kUnset) o = s.NewObject(r.tool, r.param_category);
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

uint64_t PreparedTrace::MemoryBytes() const {
  return object_id.capacity() * sizeof(ObjectId) +
         object_category.capacity() * sizeof(uint64_t) +
         object_tool.capacity() * sizeof(uint32_t) +
         object.capacity() * sizeof(uint32_t) + size.bytes() + latency.bytes() +
         cost.bytes() + ttl.bytes() + now.bytes() + user.bytes() +
         session.bytes() + digest.bytes() + flags.bytes() +
         next_access.bytes() + next_command.bytes();
}

Result<PreparedTrace> PrepareTrace(const Trace& trace,
                                   const PrepareOptions& options) {
  TraceBuilder b(trace.name, options, trace.records.size());
  for (const TraceRecord& r : trace.records) {
    Status st = b.Add({.time = r.time,
                       .session = r.session,
                       .user = r.user,
                       .tenant = r.tenant,
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
