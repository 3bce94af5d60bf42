#include "src/sim/replay.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "src/sim/workloads.h"

namespace toolcache::sim {
namespace {

TraceRecord Info(std::string tool, std::string args, double time,
                 uint64_t size = 100, double ttl = 3600) {
  TraceRecord r;
  r.time = time;
  r.tool = std::move(tool);
  r.arguments = std::move(args);
  r.result_size = size;
  r.latency = 1.0;
  r.cost = 0.01;
  r.ttl = ttl;
  r.request_type = RequestType::kInformational;
  return r;
}

TraceRecord Cmd(std::string tool, std::string args, double time) {
  TraceRecord r = Info(std::move(tool), std::move(args), time, 10, 0);
  r.request_type = RequestType::kCommand;
  return r;
}

PreparedTrace Prep(const Trace& t, PrepareOptions o = {}) {
  Result<PreparedTrace> p = PrepareTrace(t, o);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return std::move(*p);
}

ReplayMetrics RunLru(const PreparedTrace& p, uint64_t capacity,
                     InvalidationRule rule = InvalidationRule::kSession,
                     const std::string& policy = "lru") {
  ReplayOptions o;
  o.policy = policy;
  o.capacity_bytes = capacity;
  o.invalidation = rule;
  Result<ReplayMetrics> m = Replay(p, o);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return *m;
}

TEST(ReplayTest, LruOnAClassicSequenceHasExactHits) {
  // a b a c b a with room for two objects of 100 bytes:
  // a miss, b miss, a hit, c miss (evicts b), b miss (evicts a), a miss
  // (evicts c).
  Trace t;
  const char* seq[] = {"a", "b", "a", "c", "b", "a"};
  for (int i = 0; i < 6; ++i) {
    t.records.push_back(
        Info("get", std::string("{\"k\":\"") + seq[i] + "\"}", i));
  }
  PreparedTrace p = Prep(t);
  ReplayMetrics m = RunLru(p, 200);
  EXPECT_EQ(m.hits, 1u);
  EXPECT_EQ(m.misses, 5u);
  EXPECT_EQ(m.evictions, 3u);
  EXPECT_EQ(m.admissions, 5u);
  EXPECT_DOUBLE_EQ(m.total_latency, 5.0);
  EXPECT_DOUBLE_EQ(m.saved_latency, 1.0);
  EXPECT_EQ(RunLru(p, 300).hits, 3u);  // everything fits: a, b, a hit
}

TEST(ReplayTest, HitsPlusMissesEqualRequestsAndNoCommandIsServed) {
  for (WorkloadKind k : AllWorkloads()) {
    PreparedTrace p = Prep(GenerateWorkload(k, {.requests = 1000}));
    for (double pct : {10.0, 50.0, 90.0}) {
      ReplayMetrics m =
          RunLru(p, CapacityForPercent(p, pct), InvalidationRule::kNone);
      EXPECT_EQ(m.hits + m.misses, m.requests);
      EXPECT_EQ(m.requests, 1000u);
      EXPECT_EQ(m.command_served, 0u);
      EXPECT_GT(m.command_requests, 0u);
      EXPECT_LE(m.hit_bytes, m.total_bytes);
      EXPECT_EQ(m.total_size + m.hit_bytes, m.total_bytes);
    }
  }
}

TEST(ReplayTest, CommandServedCountsTheDeliberatelyBrokenPath) {
  Trace t;
  t.records = {Cmd("send", "{\"to\":\"bob\"}", 0),
               Cmd("send", "{\"to\":\"bob\"}", 1),
               Cmd("send", "{\"to\":\"bob\"}", 2)};
  PreparedTrace p = Prep(t);
  EXPECT_EQ(RunLru(p, 1000).command_served, 0u);
  EXPECT_EQ(RunLru(p, 1000).hits, 0u);
  ReplayOptions broken;
  broken.capacity_bytes = 1000;
  broken.test_only_serve_commands = true;
  broken.invalidation = InvalidationRule::kNone;
  Result<ReplayMetrics> m = Replay(p, broken);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->command_served, 2u);
}

TEST(ReplayTest, ErrorResultsAreNeverCachedButAFreshEntryStillServes) {
  Trace t;
  t.records = {Info("get", "{\"k\":1}", 0), Info("get", "{\"k\":1}", 1),
               Info("get", "{\"k\":2}", 2), Info("get", "{\"k\":2}", 3)};
  t.records[1].error = true;  // served from cache before the call happens
  t.records[2].error = true;  // the miss returns an error: not inserted
  ReplayMetrics m = RunLru(Prep(t), 1000);
  EXPECT_EQ(m.hits, 1u);        // record 2 only
  EXPECT_EQ(m.admissions, 2u);  // records 1 and 4
}

TEST(ReplayTest, CommandInvalidatesEntriesCreatedInItsSession) {
  Trace t;
  TraceRecord ls1 = Info("ls", "{}", 0);
  ls1.session = "s1";
  TraceRecord ls2 = Info("ls", "{\"a\":1}", 1);
  ls2.session = "s2";
  TraceRecord cd = Cmd("cd", "{\"folder\":\"docs\"}", 2);
  cd.session = "s1";
  TraceRecord ls1b = ls1;
  ls1b.time = 3;
  TraceRecord ls2b = ls2;
  ls2b.time = 4;
  t.records = {ls1, ls2, cd, ls1b, ls2b};
  PreparedTrace p = Prep(t);
  ReplayMetrics m = RunLru(p, 1000, InvalidationRule::kSession);
  EXPECT_EQ(m.invalidations, 1u);
  EXPECT_EQ(m.hits, 1u);  // s2's entry survives s1's cd
  ReplayMetrics none = RunLru(p, 1000, InvalidationRule::kNone);
  EXPECT_EQ(none.invalidations, 0u);
  EXPECT_EQ(none.hits, 2u);
}

TEST(ReplayTest, CommandInvalidatesEntriesItsSessionWasServed) {
  // /tmp/audit3/cross.jsonl: A lists, B lists (a hit on A's entry), B runs
  // cd, B lists again: B's view changed, so the last ls must miss.
  Trace t;
  TraceRecord a_ls = Info("ls", "{}", 0);
  a_ls.session = "A";
  TraceRecord b_ls = Info("ls", "{}", 1);
  b_ls.session = "B";
  TraceRecord b_cd = Cmd("cd", "{\"folder\":\"x\"}", 2);
  b_cd.session = "B";
  TraceRecord b_ls2 = b_ls;
  b_ls2.time = 3;
  t.records = {a_ls, b_ls, b_cd, b_ls2};
  for (const char* policy : {"lru", "infinite", "vaac", "w-tinylfu"}) {
    ReplayMetrics m = RunLru(Prep(t), 1000, InvalidationRule::kSession, policy);
    EXPECT_EQ(m.hits, 1u) << policy;  // B's first ls only
    EXPECT_EQ(m.invalidations, 1u) << policy;
    EXPECT_EQ(m.admissions, 2u) << policy;  // A's ls, B's last ls
  }
}

TEST(ReplayTest, InvalidationSparesAReinsertTheSessionDidNotTouch) {
  // A inserts x; x expires; B re-inserts x (a new entry A never touched);
  // A's COMMAND must leave B's entry alone, so C still hits it.
  Trace t;
  TraceRecord a = Info("get", "{}", 0, 100, 100);
  a.session = "A";
  TraceRecord b = Info("get", "{}", 150, 100, 100);
  b.session = "B";
  TraceRecord cmd = Cmd("cd", "{}", 160);
  cmd.session = "A";
  TraceRecord c = Info("get", "{}", 170, 100, 100);
  c.session = "C";
  t.records = {a, b, cmd, c};
  ReplayMetrics m = RunLru(Prep(t), 1000);
  EXPECT_EQ(m.expired_misses, 1u);
  EXPECT_EQ(m.invalidations, 0u);
  EXPECT_EQ(m.hits, 1u);
}

TEST(ReplayTest, TenantsNeverShareAndDefaultTenantKeepsIds) {
  Trace t;
  t.records = {Info("ls", "{}", 0), Info("ls", "{}", 1), Info("ls", "{}", 2)};
  const PreparedTrace plain = Prep(t);
  t.records[1].tenant = "world-2";
  const PreparedTrace tenants = Prep(t);
  EXPECT_EQ(plain.request(0).id, tenants.request(0).id);  // "" unchanged
  EXPECT_NE(tenants.request(0).id, tenants.request(1).id);
  EXPECT_EQ(tenants.request(0).id, tenants.request(2).id);
  EXPECT_EQ(RunLru(plain, 1000).hits, 2u);
  EXPECT_EQ(RunLru(tenants, 1000).hits, 1u);  // record 3 hits record 1 only
  EXPECT_EQ(tenants.unique_cacheable_objects, 2u);
}

TEST(ReplayTest, EntryDeathIndicesMirrorTheSessionRule) {
  // 0 A get x | 1 B get x | 2 A get y (error) | 3 B cmd | 4 A get x
  // 5 A cmd | 6 C get x
  Trace t;
  auto at = [](TraceRecord r, const char* session) {
    r.session = session;
    return r;
  };
  t.records = {at(Info("get", "{\"k\":\"x\"}", 0), "A"),
               at(Info("get", "{\"k\":\"x\"}", 1), "B"),
               at(Info("get", "{\"k\":\"y\"}", 2), "A"),
               at(Cmd("cmd", "{}", 3), "B"),
               at(Info("get", "{\"k\":\"x\"}", 4), "A"),
               at(Cmd("cmd", "{}", 5), "A"),
               at(Info("get", "{\"k\":\"x\"}", 6), "C")};
  t.records[2].error = true;
  const PreparedTrace p = Prep(t);
  constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
  const std::vector<uint64_t> session =
      EntryDeathIndices(p, InvalidationRule::kSession);
  // x fetched at 0 is served to B at 1, and B's cmd at 3 erases it; x
  // fetched at 1 likewise; at 4 A's cmd at 5 does; at 6 nothing.
  EXPECT_EQ(session,
            (std::vector<uint64_t>{3, 3, 3, kNever, 5, kNever, kNever}));
  const std::vector<uint64_t> none =
      EntryDeathIndices(p, InvalidationRule::kNone);
  EXPECT_EQ(none, (std::vector<uint64_t>{kNever, kNever, 3, kNever, kNever,
                                         kNever, kNever}));
}

TEST(ReplayTest, PrepareRejectsValuesBeyondTheTraceBounds) {
  for (int which = 0; which < 4; ++which) {
    Trace t;
    t.name = "big";
    t.records = {Info("w", "{}", 0)};
    TraceRecord& r = t.records[0];
    if (which == 0) r.latency = 1e308;
    if (which == 1) r.cost = std::numeric_limits<double>::infinity();
    if (which == 2) r.result_size = std::numeric_limits<uint64_t>::max();
    if (which == 3) r.time = 1e300;
    Result<PreparedTrace> p = PrepareTrace(t, {});
    ASSERT_FALSE(p.ok()) << which;
    EXPECT_NE(p.status().message().find("big: record 1"), std::string::npos)
        << p.status().message();
  }
}

TEST(ReplayTest, StaleResultsServedAreCounted) {
  Trace t;
  t.records = {Info("ls", "{}", 0), Info("ls", "{}", 1), Info("ls", "{}", 2)};
  t.records[0].result_digest = "aaa";
  t.records[1].result_digest = "aaa";
  t.records[2].result_digest = "bbb";  // the world changed; cache did not
  ReplayMetrics m = RunLru(Prep(t), 1000, InvalidationRule::kNone);
  EXPECT_EQ(m.hits, 2u);
  EXPECT_EQ(m.stale_served, 1u);
}

TEST(ReplayTest, ExpiredEntriesMissAndAreCounted) {
  Trace t;
  t.records = {Info("w", "{}", 0, 100, 300), Info("w", "{}", 100, 100, 300),
               Info("w", "{}", 400, 100, 300), Info("w", "{}", 500, 100, 300)};
  ReplayMetrics m = RunLru(Prep(t), 1000);
  EXPECT_EQ(m.hits, 2u);  // at 100 and at 500 (re-inserted at 400)
  EXPECT_EQ(m.expired_misses, 1u);
}

TEST(ReplayTest, ShortTtlAndUntypedRecordsAreNeverCached) {
  Trace t;
  t.records = {Info("stock", "{}", 0, 100, 60),
               Info("stock", "{}", 1, 100, 60)};
  TraceRecord untyped = Info("x", "{}", 2);
  untyped.request_type.reset();
  t.records.push_back(untyped);
  untyped.time = 3;
  t.records.push_back(untyped);
  PreparedTrace p = Prep(t);
  EXPECT_EQ(p.unique_cacheable_objects, 0u);
  ReplayMetrics m = RunLru(p, 1000);
  EXPECT_EQ(m.hits, 0u);
  EXPECT_EQ(m.cacheable_requests, 0u);
  EXPECT_EQ(m.command_requests, 2u);  // untyped counts as COMMAND
}

TEST(ReplayTest, MissingTimeAdvancesByThePreviousLatencyAndTtlDefaults) {
  Trace t;
  t.records = {Info("w", "{}", 0), Info("w", "{\"a\":1}", 0)};
  t.records[0].time = std::numeric_limits<double>::quiet_NaN();
  t.records[1].time = std::numeric_limits<double>::quiet_NaN();
  t.records[0].latency = 2.5;
  t.records[1].ttl = std::numeric_limits<double>::quiet_NaN();
  PreparedTrace p = Prep(t);
  EXPECT_DOUBLE_EQ(p.request(0).now, 0);
  EXPECT_DOUBLE_EQ(p.request(1).now, 2.5);
  EXPECT_DOUBLE_EQ(p.request(1).ttl, 300);
}

TEST(ReplayTest, FeaturesAndNextAccessAreInterned) {
  Trace t;
  t.records = {Info("weather", "{\"city\":\"Oslo\",\"date\":\"1\"}", 0),
               Info("weather", "{\"city\":\"Oslo\",\"date\":\"2\"}", 1),
               Info("weather", "{\"city\":\"Rome\",\"date\":\"1\"}", 2),
               Info("wiki", "{\"title\":\"Oslo\"}", 3),
               Info("weather", "{\"city\":\"Oslo\",\"date\":\"1\"}", 4)};
  t.records[3].user = "ann";
  PreparedTrace p = Prep(t);
  EXPECT_EQ(p.request(0).param_category, p.request(1).param_category);
  EXPECT_NE(p.request(0).param_category, p.request(2).param_category);
  EXPECT_NE(p.request(0).param_category, 0u);
  EXPECT_EQ(p.request(3).param_category, 0u);  // single parameter
  EXPECT_EQ(p.request(0).tool, p.request(2).tool);
  EXPECT_NE(p.request(0).tool, p.request(3).tool);
  EXPECT_EQ(p.request(0).user, 0u);
  EXPECT_NE(p.request(3).user, 0u);
  EXPECT_EQ(p.request(0).id, p.request(4).id);
  EXPECT_NE(p.request(0).id, p.request(1).id);
  EXPECT_EQ(p.request(0).next_access, 4u);
  EXPECT_EQ(p.request(1).next_access, kNoNextAccess);
  EXPECT_EQ(p.unique_cacheable_objects, 4u);
  EXPECT_EQ(p.unique_cacheable_bytes, 400u);
  EXPECT_EQ(CapacityForPercent(p, 50), 200u);
  EXPECT_EQ(EntriesForPercent(p, 50), 2u);
}

TEST(ReplayTest, ScopeSeparatesUsersOnlyWhenAsked) {
  Trace t;
  t.records = {Info("w", "{}", 0), Info("w", "{}", 1)};
  t.records[0].user = "ann";
  t.records[1].user = "bob";
  EXPECT_EQ(RunLru(Prep(t), 1000).hits, 1u);
  EXPECT_EQ(RunLru(Prep(t, {.scope = Scope::kUser}), 1000).hits, 0u);
}

TEST(ReplayTest, BadInputIsAnErrorNamingTheRecord) {
  Trace t;
  t.name = "bad";
  t.records = {Info("w", "{}", 0), Info("w", "[1,2]", 1)};
  Result<PreparedTrace> p = PrepareTrace(t, {});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("record 2"), std::string::npos);
  ReplayOptions o;
  o.policy = "no-such-policy";
  EXPECT_FALSE(Replay(Prep(Trace{}), o).ok());
}

// Pinned results (libCacheSim style): the zipf workload, seed 1, 1,000
// requests, byte capacity of 10/35/90% of the unique cacheable bytes. A change
// to these numbers is a deliberate, reviewed change.
struct Pin {
  const char* policy;
  double pct;
  uint64_t hits;
};

TEST(ReplayTest, PinnedHitCountsOnTheZipfWorkload) {
  PreparedTrace p = Prep(
      GenerateWorkload(WorkloadKind::kZipf, {.requests = 1000, .seed = 1}));
  const Pin pins[] = {
      // clang-format off
      {"lru", 10, 410},  {"lru", 35, 535},  {"lru", 90, 567},
      {"caca", 10, 434}, {"caca", 35, 530}, {"caca", 90, 567},
      {"vaac", 10, 438}, {"vaac", 35, 523}, {"vaac", 90, 567},
      {"vaac-sampled", 10, 438}, {"vaac-sampled", 35, 523},
      {"vaac-sampled", 90, 567},
      {"vaac-plus", 10, 487}, {"vaac-plus", 35, 548}, {"vaac-plus", 90, 567},
      {"gdsf", 10, 465}, {"gdsf", 35, 550}, {"gdsf", 90, 567},
      {"gdsf-cost", 10, 418}, {"gdsf-cost", 35, 536},
      {"gdsf-cost", 90, 567},
      {"w-tinylfu", 10, 445}, {"w-tinylfu", 35, 527},
      {"w-tinylfu", 90, 567},
      {"s3fifo", 10, 307}, {"s3fifo", 35, 535}, {"s3fifo", 90, 567},
      {"belady", 10, 511}, {"belady", 35, 567}, {"belady", 90, 567},
      // clang-format on
  };
  for (const Pin& pin : pins) {
    // A pinned row whose policy left the registry is a failure, not a skip:
    // removing a policy must remove (or move) its pins deliberately.
    ASSERT_NE(FindPolicy(pin.policy), nullptr)
        << pin.policy << " is pinned but not registered";
    ReplayMetrics m = RunLru(p, CapacityForPercent(p, pin.pct),
                             InvalidationRule::kNone, pin.policy);
    EXPECT_EQ(m.hits, pin.hits) << pin.policy << " at " << pin.pct << "%";
  }
}

}  // namespace
}  // namespace toolcache::sim
