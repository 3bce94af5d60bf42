// The policy contract suite: every row of the registry (Policies()) runs
// through CacheCore against an independent reference model of the
// bookkeeping. Rows added later are covered automatically.
//
// Offline policies (PolicyKind::kOffline) get Request::next_access filled by
// the trace helper; unbounded ones (kUnbounded) run with a huge capacity.
// LRU-specific exact expectations (known hit counts) are at the end.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "gtest/gtest.h"
#include "src/policy/factories.h"
#include "toolcache/policy.h"

namespace toolcache {
namespace {

constexpr uint64_t kBoundedBytes = 2000;
constexpr uint64_t kUnboundedBytes = uint64_t{1} << 40;

// Wraps a policy and checks every hook against the core's view: Victim()
// returns a live slot, hooks name live slots, OnRemove once per entry.
class CheckingPolicy final : public Policy {
 public:
  explicit CheckingPolicy(std::unique_ptr<Policy> inner)
      : inner_(std::move(inner)) {}
  std::string_view name() const override { return inner_->name(); }
  void Bind(const EntryView* view) override {
    view_ = view;
    inner_->Bind(view);
  }
  bool Admit(const Request& req) override { return inner_->Admit(req); }
  void OnInsert(Slot slot, const Request& req) override {
    EXPECT_EQ(view_->meta(slot).id, req.id);
    if (slot >= listed_.size()) listed_.resize(slot + 1, 0);
    EXPECT_EQ(listed_[slot], 0) << "slot reused before OnRemove";
    listed_[slot] = 1;
    inner_->OnInsert(slot, req);
  }
  void OnHit(Slot slot, const Request& req) override {
    EXPECT_TRUE(IsListed(slot));
    EXPECT_EQ(view_->meta(slot).id, req.id);
    inner_->OnHit(slot, req);
  }
  void OnRemove(Slot slot) override {
    EXPECT_TRUE(IsListed(slot)) << "OnRemove for a slot that is not live";
    if (IsListed(slot)) listed_[slot] = 0;
    inner_->OnRemove(slot);
  }
  Slot Victim() override {
    ++victims;
    const Slot v = inner_->Victim();
    EXPECT_TRUE(IsListed(v)) << name() << ": Victim() returned non-live " << v;
    return v;
  }
  uint64_t MetadataBytes() const override { return inner_->MetadataBytes(); }

  uint64_t victims = 0;

 private:
  bool IsListed(Slot s) const { return s < listed_.size() && listed_[s]; }
  std::unique_ptr<Policy> inner_;
  std::vector<uint8_t> listed_;
};

// Deterministic per-object features, so an object always has the same size,
// TTL and grouping features.
struct ObjectSpec {
  uint64_t size;
  double ttl;
};

ObjectSpec SpecOf(ObjectId id, uint64_t capacity_bytes) {
  std::mt19937_64 rng(id * 0x9e3779b97f4a7c15ULL + 1);
  ObjectSpec spec;
  spec.size = 1 + rng() % 200;
  if (id % 97 == 13) spec.size = capacity_bytes + 1 + rng() % 10;  // oversized
  constexpr double kTtls[] = {kNoExpiry, kNoExpiry, 5, 30, 300};
  spec.ttl = kTtls[rng() % 5];
  return spec;
}

// A skewed trace over `num_ids` objects with next_access filled in.
std::vector<Request> MakeTrace(uint64_t n, uint64_t num_ids, uint64_t seed,
                               uint64_t capacity_bytes) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<Request> trace(n);
  double now = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const double x = u(rng);
    const ObjectId id = static_cast<ObjectId>(num_ids * x * x * x);
    const ObjectSpec spec = SpecOf(id, capacity_bytes);
    Request& r = trace[i];
    r.id = id;
    r.tool = static_cast<uint32_t>(id % 5);
    r.param_category = id % 7 == 0 ? 0 : 1000 + id % 11;
    r.user = static_cast<uint32_t>(id % 3);
    r.size = spec.size;
    r.latency = 0.05 + static_cast<double>(id % 13) * 0.1;
    r.cost = static_cast<double>(id % 4) * 0.001;
    r.ttl = spec.ttl;
    now += 0.5 * u(rng);
    r.now = now;
    r.index = i;
  }
  std::unordered_map<ObjectId, uint64_t> next;
  for (uint64_t i = n; i-- > 0;) {
    const auto it = next.find(trace[i].id);
    trace[i].next_access = it == next.end() ? kNoNextAccess : it->second;
    next[trace[i].id] = i;
  }
  return trace;
}

// What the reference model knows of a cached entry.
struct ModelEntry {
  uint64_t size;
  double expires_at;
  Slot slot;
};

// A CacheCore running one registry policy, mirrored by a reference model
// that is updated only from Insert results and the removal listener.
class Harness {
 public:
  Harness(const PolicyInfo& info, uint64_t seed, uint64_t capacity_entries)
      : info_(info) {
    capacity_bytes_ =
        info.kind == PolicyKind::kUnbounded ? kUnboundedBytes : kBoundedBytes;
    capacity_entries_ =
        info.kind == PolicyKind::kUnbounded ? 0 : capacity_entries;
    PolicyParams params{.capacity_bytes = capacity_bytes_,
                        .capacity_entries = capacity_entries_,
                        .seed = seed};
    auto policy = MakePolicy(info.name, params);
    EXPECT_TRUE(policy.ok()) << policy.status().ToString();
    auto checker = std::make_unique<CheckingPolicy>(std::move(*policy));
    checker_ = checker.get();
    core_ = std::make_unique<CacheCore>(
        CacheCoreOptions{.capacity_bytes = capacity_bytes_,
                         .capacity_entries = capacity_entries_},
        std::move(checker));
    core_->SetRemovalListener([this](Slot s, ObjectId id, RemovalCause cause) {
      ++removals_;
      const auto it = model_.find(id);
      EXPECT_NE(it, model_.end()) << "listener fired for uncached id " << id;
      if (it == model_.end()) return;
      EXPECT_EQ(it->second.slot, s);
      EXPECT_EQ(core_->view().meta(s).id, id);
      if (cause == RemovalCause::kExpired) {
        EXPECT_LE(it->second.expires_at, now_) << "expired too early";
      }
      model_.erase(it);
    });
  }

  LookupOutcome Lookup(const Request& req) {
    now_ = req.now;
    const auto before = model_.find(req.id);
    const bool cached = before != model_.end();
    const bool stale = cached && before->second.expires_at <= req.now;
    const LookupOutcome out = core_->Lookup(req);
    if (!cached) {
      EXPECT_EQ(out, LookupOutcome::kMiss);
    } else if (stale) {
      EXPECT_EQ(out, LookupOutcome::kExpired) << "expired entry served";
      EXPECT_EQ(model_.count(req.id), 0u);
    } else {
      EXPECT_EQ(out, LookupOutcome::kHit);
    }
    return out;
  }

  Slot Insert(const Request& req) {
    now_ = req.now;
    const Slot s = core_->Insert(req);
    if (s != kNoSlot) {
      ++inserts_;
      EXPECT_LE(req.size, capacity_bytes_) << "oversized object cached";
      EXPECT_GT(req.ttl, 0);
      model_[req.id] = {req.size, req.now + req.ttl, s};
    }
    return s;
  }

  bool Erase(ObjectId id) {
    const bool had = model_.count(id) == 1;
    const bool erased = core_->Erase(id);
    EXPECT_EQ(erased, had);
    EXPECT_EQ(model_.count(id), 0u);
    return erased;
  }

  void ExpireUntil(double now) {
    now_ = std::max(now_, now);
    core_->ExpireUntil(now);
    for (const auto& [id, e] : model_) {
      EXPECT_GT(e.expires_at, now) << "ExpireUntil left expired id " << id;
    }
  }

  // Replays `trace` (lookup, insert on a non-hit); returns 'H'/'M'/'E'/'I'.
  std::string Replay(const std::vector<Request>& trace, bool check = true) {
    std::string out;
    for (const Request& r : trace) {
      const LookupOutcome o = Lookup(r);
      out += o == LookupOutcome::kHit    ? 'H'
             : o == LookupOutcome::kMiss ? 'M'
                                         : 'E';
      if (o != LookupOutcome::kHit && Insert(r) != kNoSlot) out += 'I';
      if (check) CheckInvariants();
    }
    return out;
  }

  void CheckInvariants() {
    const EntryView& v = core_->view();
    uint64_t bytes = 0;
    for (const auto& [id, e] : model_) {
      bytes += e.size;
      ASSERT_EQ(core_->Find(id), e.slot) << "id " << id;
      ASSERT_EQ(v.meta(e.slot).id, id);
      ASSERT_EQ(v.meta(e.slot).size, e.size);
      ASSERT_EQ(v.meta(e.slot).expires_at, e.expires_at);
    }
    ASSERT_EQ(v.used_bytes(), bytes);
    ASSERT_EQ(v.entry_count(), model_.size());
    ASSERT_LE(v.used_bytes(), capacity_bytes_);
    if (capacity_entries_ != 0) {
      ASSERT_LE(v.entry_count(), capacity_entries_);
    }
  }

  CacheCore& core() { return *core_; }
  CheckingPolicy& checker() { return *checker_; }
  const std::unordered_map<ObjectId, ModelEntry>& model() const {
    return model_;
  }
  uint64_t removals() const { return removals_; }
  uint64_t inserts() const { return inserts_; }
  uint64_t capacity_bytes() const { return capacity_bytes_; }

 private:
  const PolicyInfo& info_;
  uint64_t capacity_bytes_;
  uint64_t capacity_entries_;
  std::unique_ptr<CacheCore> core_;
  CheckingPolicy* checker_ = nullptr;
  std::unordered_map<ObjectId, ModelEntry> model_;
  double now_ = 0;
  uint64_t removals_ = 0;
  uint64_t inserts_ = 0;
};

class PolicyContractTest : public ::testing::TestWithParam<PolicyInfo> {
 protected:
  const PolicyInfo& info() const { return *FindPolicy(GetParam().name); }
};

TEST_P(PolicyContractTest, CapacityNeverExceededAndModelAgrees) {
  for (uint64_t entries : {uint64_t{0}, uint64_t{12}}) {
    Harness h(info(), 1, entries);
    h.Replay(MakeTrace(3000, 400, 11, h.capacity_bytes()));
    if (::testing::Test::HasFatalFailure()) return;
    EXPECT_GT(h.inserts(), 0u) << "policy never admitted anything";
  }
}

// A huge entry limit (a config's `maxEntries`) costs memory only as entries
// arrive: fuzz_config found a core index of 4 GiB at start, and the
// frequency sketches were sized the same way.
TEST_P(PolicyContractTest, AHugeEntryLimitAllocatesNothingUpFront) {
  Harness h(info(), 1, 400'333'333);
  h.Replay(MakeTrace(300, 40, 11, h.capacity_bytes()));
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_LT(h.core().MetadataBytes() + h.core().policy().MetadataBytes(),
            uint64_t{64} << 20);
}

TEST_P(PolicyContractTest, ExpiredEntryIsNeverAHit) {
  Harness h(info(), 1, 0);
  // One object with a 10 s TTL, looked up every second.
  uint64_t hits = 0, expired = 0;
  for (int t = 0; t < 40; ++t) {
    Request r{.id = 5,
              .size = 10,
              .latency = 1,
              .ttl = 10,
              .now = static_cast<double>(t),
              .index = static_cast<uint64_t>(t)};
    const LookupOutcome o = h.Lookup(r);
    hits += o == LookupOutcome::kHit;
    expired += o == LookupOutcome::kExpired;
    if (o != LookupOutcome::kHit) (void)h.Insert(r);
  }
  // Whatever the policy admitted, no hit came more than 10 s after insert
  // (checked per lookup by the harness), and at most 9 of 10 lookups hit.
  EXPECT_LE(hits, 36u);
}

TEST_P(PolicyContractTest, HitRightAfterAdmittedInsert) {
  Harness h(info(), 1, 0);
  uint64_t admitted = 0;
  for (const Request& r : MakeTrace(500, 300, 5, h.capacity_bytes())) {
    if (h.Lookup(r) == LookupOutcome::kHit) continue;
    if (h.Insert(r) == kNoSlot) continue;
    ++admitted;
    EXPECT_EQ(h.Lookup(r), LookupOutcome::kHit) << "id " << r.id;
  }
  EXPECT_GT(admitted, 0u);
}

TEST_P(PolicyContractTest, OversizedObjectIsNeverCached) {
  Harness h(info(), 1, 0);
  for (uint64_t i = 0; i < 50; ++i) {
    Request r{.id = 1000 + i % 3,
              .size = h.capacity_bytes() + 1 + i,
              .latency = 5,
              .cost = 1,
              .now = static_cast<double>(i),
              .index = i,
              .next_access = i + 3};
    EXPECT_NE(h.Lookup(r), LookupOutcome::kHit);
    EXPECT_EQ(h.Insert(r), kNoSlot);
  }
  EXPECT_EQ(h.core().view().entry_count(), 0u);
  EXPECT_EQ(h.checker().victims, 0u) << "evicted for an object that can't fit";
}

TEST_P(PolicyContractTest, EraseRemovesEntryAndFiresListenerOnce) {
  Harness h(info(), 1, 0);
  h.Replay(MakeTrace(400, 100, 3, h.capacity_bytes()));
  ASSERT_FALSE(h.model().empty());
  std::vector<ObjectId> ids;
  for (const auto& [id, e] : h.model()) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  const uint64_t removals = h.removals();
  EXPECT_TRUE(h.Erase(ids[0]));
  EXPECT_EQ(h.removals(), removals + 1);
  EXPECT_EQ(h.core().Find(ids[0]), kNoSlot);
  EXPECT_FALSE(h.Erase(ids[0]));
  EXPECT_EQ(h.removals(), removals + 1);
  h.CheckInvariants();
  // The policy keeps working after an erase (no dangling slot in it).
  h.Replay(MakeTrace(400, 100, 4, h.capacity_bytes()));
}

TEST_P(PolicyContractTest, ListenerFiresOncePerRemovedEntry) {
  Harness h(info(), 1, 12);
  h.Replay(MakeTrace(2000, 300, 8, h.capacity_bytes()), /*check=*/false);
  h.CheckInvariants();
  EXPECT_EQ(h.removals() + h.model().size(), h.inserts());
  h.core().Clear();
  EXPECT_TRUE(h.model().empty());
  EXPECT_EQ(h.removals(), h.inserts());
  EXPECT_EQ(h.core().view().used_bytes(), 0u);
}

TEST_P(PolicyContractTest, SameSeedSameTraceGivesIdenticalOutcomes) {
  const auto trace = MakeTrace(3000, 500, 21, kBoundedBytes);
  Harness a(info(), 42, 0);
  Harness b(info(), 42, 0);
  const std::string ra = a.Replay(trace, false);
  const std::string rb = b.Replay(trace, false);
  EXPECT_EQ(ra, rb);
  EXPECT_EQ(a.core().evictions(), b.core().evictions());
}

TEST_P(PolicyContractTest, RandomizedStressMatchesReferenceModel) {
  for (uint64_t entries : {uint64_t{0}, uint64_t{20}}) {
    Harness h(info(), 7, entries);
    const auto trace = MakeTrace(10000, 600, 99 + entries, h.capacity_bytes());
    std::mt19937_64 rng(1234 + entries);
    double now = 0;
    for (const Request& base : trace) {
      Request r = base;
      now = std::max(now, r.now);
      r.now = now;
      const uint64_t op = rng() % 100;
      if (op < 80) {
        if (h.Lookup(r) != LookupOutcome::kHit) (void)h.Insert(r);
      } else if (op < 88) {
        (void)h.Erase(static_cast<ObjectId>(rng() % 600));
      } else if (op < 94) {
        h.ExpireUntil(now);
      } else if (op < 97) {
        now += 50;  // jump: many TTLs run out at once
      } else {
        r.size = h.capacity_bytes() + 1;  // oversized variant
        if (h.Lookup(r) != LookupOutcome::kHit) {
          EXPECT_EQ(h.Insert(r), kNoSlot);
        }
      }
      h.CheckInvariants();
      if (::testing::Test::HasFatalFailure()) return;
    }
    EXPECT_EQ(h.removals() + h.model().size(), h.inserts());
  }
}

INSTANTIATE_TEST_SUITE_P(EveryRegisteredPolicy, PolicyContractTest,
                         ::testing::ValuesIn(Policies().begin(),
                                             Policies().end()),
                         [](const ::testing::TestParamInfo<PolicyInfo>& p) {
                           std::string name(p.param.name);
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           }
                           return name;
                         });

// ---- LRU: exact expectations on classic sequences. ----

std::string RunLru(const std::vector<ObjectId>& ids, uint64_t entries,
                   const std::vector<uint64_t>& sizes = {},
                   uint64_t bytes = 1000) {
  CacheCore core({.capacity_bytes = bytes, .capacity_entries = entries},
                 MakeLruPolicy({.capacity_bytes = bytes}));
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    Request r{.id = ids[i], .size = sizes.empty() ? 1 : sizes[i], .index = i};
    if (core.Lookup(r) == LookupOutcome::kHit) {
      out += 'H';
    } else {
      out += 'M';
      (void)core.Insert(r);
    }
  }
  return out;
}

TEST(LruPolicyTest, TextbookReferenceStringGivesTwelveFaultsWithThreeFrames) {
  // Silberschatz et al., Operating System Concepts: LRU with 3 frames has 12
  // page faults on this reference string.
  const std::vector<ObjectId> ids = {7, 0, 1, 2, 0, 3, 0, 4, 2, 3,
                                     0, 3, 2, 1, 2, 0, 1, 7, 0, 1};
  const std::string out = RunLru(ids, 3);
  EXPECT_EQ(std::count(out.begin(), out.end(), 'M'), 12);
  EXPECT_EQ(out, "MMMMHMHMMMMHHMHMHMHH");
}

TEST(LruPolicyTest, HitRefreshesRecency) {
  // Capacity 2: 1 2 1 3 -> 3 evicts 2 (1 was refreshed), so 1 hits, 2 misses.
  EXPECT_EQ(RunLru({1, 2, 1, 3, 1, 2}, 2), "MMHMHM");
}

TEST(LruPolicyTest, CyclicScanLargerThanCacheNeverHits) {
  std::vector<ObjectId> ids;
  for (int round = 0; round < 5; ++round) {
    for (ObjectId id = 0; id < 5; ++id) ids.push_back(id);
  }
  const std::string out = RunLru(ids, 4);
  EXPECT_EQ(std::count(out.begin(), out.end(), 'H'), 0);
}

TEST(LruPolicyTest, ByteCapacityEvictsSeveralSmallEntriesForOneLarge) {
  // 10 bytes: 1(4) 2(3) 3(3) then 4(6) evicts 1 and 2; 3 still hits.
  EXPECT_EQ(RunLru({1, 2, 3, 4, 3, 1, 2}, 0, {4, 3, 3, 6, 3, 4, 3}, 10),
            "MMMMHMM");
}

}  // namespace
}  // namespace toolcache
