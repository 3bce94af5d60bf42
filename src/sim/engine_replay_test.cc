// The agreement test (issue 30): a tool-call trace replayed by the
// simulator (ReplayThroughEngine, and the fast PreparedTrace features) and,
// call by call, through a real ToolCache driven here by hand (Begin /
// Complete on a manual clock, the same Config) must give identical
// decisions -- verdict, reason, key, scope, hit / miss, admission,
// invalidations -- for each `invalidation` mode and both `scope` settings.
#include "src/sim/engine_replay.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "src/cache/prepare.h"
#include "src/sim/replay.h"
#include "toolcache/canonical_json.h"
#include "toolcache/clock.h"
#include "toolcache/config.h"
#include "toolcache/tool_cache.h"
#include "toolcache/trace.h"

namespace toolcache::sim {
namespace {

TraceRecord Rec(double time, std::string user, std::string tool,
                std::string args, std::string digest) {
  TraceRecord r;
  r.time = time;
  r.user = std::move(user);
  r.session = r.user;
  r.tool = std::move(tool);
  r.arguments = std::move(args);
  r.result_size = 100;
  r.latency = 0.5;
  r.result_digest = std::move(digest);
  return r;
}

// Reads, repeats, writes to one of two files, a user switch and a gap past
// the default TTL: every rule the two sides could disagree on is exercised.
Trace AgreementTrace() {
  Trace t;
  t.name = "agreement";
  auto& r = t.records;
  r.push_back(Rec(0, "ann", "read_file", R"({"path":"/d/a"})", "a1"));
  r.push_back(Rec(1, "ann", "read_file", R"({"path":"/d/b"})", "b1"));
  r.push_back(Rec(2, "bob", "read_file", R"({"path":"/d/a"})", "a1"));
  r.push_back(Rec(3, "ann", "get_weather", R"({"city":"Oslo","day":1})", "w"));
  r.push_back(Rec(4, "bob", "get_weather", R"({"day":1,"city":"Oslo"})", "w"));
  r.push_back(
      Rec(5, "ann", "write_file", R"({"path":"/d/a","content":"x"})", "ok"));
  r.push_back(Rec(6, "ann", "read_file", R"({"path":"/d/a"})", "a2"));
  r.push_back(Rec(7, "bob", "read_file", R"({"path":"/d/b"})", "b1"));
  r.push_back(Rec(8, "bob", "read_file", R"({"path":"/d/./b"})", "b1"));
  r.push_back(Rec(9, "ann", "read_file", R"({"path":"/d/a"})", "a2"));
  r.push_back(Rec(700, "ann", "read_file", R"({"path":"/d/a"})", "a2"));
  r.push_back(Rec(701, "bob", "list_directory", R"({"path":"/d"})", "l1"));
  r.push_back(Rec(702, "bob", "list_directory", R"({"path":"/d"})", "l1"));
  r.push_back(
      Rec(703, "bob", "write_file", R"({"path":"/e/z","content":"y"})", "ok"));
  r.push_back(Rec(704, "bob", "list_directory", R"({"path":"/d"})", "l1"));
  r.push_back(Rec(705, "ann", "read_file", R"({"path":"a.txt"})", "r1"));
  r.push_back(Rec(706, "ann", "read_file", R"({"path":"a.txt"})", "r1"));
  r.push_back(Rec(707, "ann", "send_email", R"({"to":"x"})", "ok"));
  r.push_back(Rec(708, "ann", "read_file", R"({"path":"a.txt"})", "r1"));
  // Two arguments: the parameter category (first in byte order), once in
  // canonical form (the fast replay reads it off the text) and once not.
  r.push_back(
      Rec(709, "ann", "read_file", R"({"head":5,"path":"/d/b"})", "b1"));
  r.push_back(
      Rec(710, "bob", "read_file", R"({"path":"/d/b", "head":5})", "b1"));
  r.push_back(
      Rec(711, "bob", "read_file", R"({"path":"/d/b","tail":2.50})", "b1"));
  return t;
}

struct Setting {
  InvalidationScope invalidation;
  SharingScope scope;
};

class AgreementTest : public ::testing::TestWithParam<Setting> {};

TEST_P(AgreementTest, SimulatorAndToolCacheDecideEveryCallAlike) {
  Config config;
  config.invalidation = GetParam().invalidation;
  config.scope = GetParam().scope;
  const Trace trace = AgreementTrace();
  Result<EngineReplayMetrics> sim =
      ReplayThroughEngine(trace, config, {.keep_decisions = true});
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  ASSERT_EQ(sim->decisions.size(), trace.records.size());

  // The reference: a ToolCache as a face drives it.
  ManualClock clock(0);
  Result<std::unique_ptr<ToolCache>> made = NewToolCache(config, &clock);
  ASSERT_TRUE(made.ok());
  ToolCache& cache = **made;
  double now = 0;
  uint64_t hits = 0, stale = 0;
  for (size_t i = 0; i < trace.records.size(); ++i) {
    const TraceRecord& r = trace.records[i];
    clock.Advance(r.time - now);
    now = r.time;
    const ToolCall call{.server = "trace",
                        .scope = r.tenant,
                        .tool = r.tool,
                        .arguments_json = r.arguments,
                        .user = r.user};
    const ToolCacheStats before = cache.Stats();
    CallPlan plan = cache.Begin(call, 1000 + i);
    const std::string result = nlohmann::json(r.result_digest).dump();
    bool admitted = false;
    if (plan.action != CallAction::kServe) {
      admitted = cache.Complete(plan.ticket, {.result_json = result}).admitted;
    } else {
      ++hits;
      stale += *plan.result_json != result;
    }
    const ToolCacheStats after = cache.Stats();
    const EngineDecision& d = sim->decisions[i];
    SCOPED_TRACE("record " + std::to_string(i + 1) + " " + r.tool + " " +
                 r.arguments);
    EXPECT_EQ(d.cacheable, plan.verdict.cacheable);
    EXPECT_EQ(d.reason, plan.verdict.reason);
    EXPECT_EQ(d.bypass_reason, plan.bypass_reason);
    EXPECT_EQ(d.hit, plan.action == CallAction::kServe);
    EXPECT_EQ(d.admitted, admitted);
    EXPECT_EQ(d.invalidations, after.invalidations - before.invalidations);
    EXPECT_EQ(d.entries_invalidated,
              after.entries_invalidated - before.entries_invalidated);
    // The key: the canonical arguments under the call's scope, as the face
    // derives it (MakeCacheKey); under `scope: user` the user is part of it.
    if (!d.key_hex.empty()) {
      if (config.scope == SharingScope::kGlobal) {
        Result<CacheKey> k =
            MakeCacheKey(r.tenant, "trace", r.tool, r.arguments);
        ASSERT_TRUE(k.ok());
        EXPECT_EQ(d.key_hex, k->DigestHex());
        EXPECT_EQ(d.key_scope, r.tenant);
      } else {
        EXPECT_NE(d.key_scope.find(r.user), std::string::npos);
      }
    }
  }
  EXPECT_EQ(sim->hits, hits);
  EXPECT_EQ(sim->stale_served, stale);
  EXPECT_GT(hits, 0u);  // the trace exercises serving at all
  EXPECT_GT(sim->invalidations, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    EveryInvalidationAndScope, AgreementTest,
    ::testing::Values(
        Setting{InvalidationScope::kServer, SharingScope::kGlobal},
        Setting{InvalidationScope::kServer, SharingScope::kUser},
        Setting{InvalidationScope::kResource, SharingScope::kGlobal},
        Setting{InvalidationScope::kResource, SharingScope::kUser}),
    [](const ::testing::TestParamInfo<Setting>& info) {
      return std::string(InvalidationScopeName(info.param.invalidation)) + "_" +
             std::string(SharingScopeName(info.param.scope));
    });

// The two invalidation modes really differ on this trace (else the suite
// above could pass with the mode ignored on both sides).
TEST(EngineReplayTest, ResourceInvalidationKeepsWhatAServerWideOneDrops) {
  Config server;
  Config resource;
  resource.invalidation = InvalidationScope::kResource;
  const Trace trace = AgreementTrace();
  Result<EngineReplayMetrics> s = ReplayThroughEngine(trace, server, {});
  Result<EngineReplayMetrics> r = ReplayThroughEngine(trace, resource, {});
  ASSERT_TRUE(s.ok() && r.ok());
  EXPECT_GT(r->hits, s->hits);
  EXPECT_LT(r->entries_invalidated, s->entries_invalidated);
  // Writing /d/a never leaves its old content servable, in either mode.
  EXPECT_EQ(s->stale_served, 0u);
  EXPECT_EQ(r->stale_served, 0u);
}

// The fast replay's per-object feature (PreparedTrace::object_category) is
// the one the engine's preparation stage derives for the same call.
TEST(EngineReplayTest, FastReplayFeaturesAreThePreparationStages) {
  const Trace trace = AgreementTrace();
  Result<PreparedTrace> p = PrepareTrace(trace, {});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const cache_internal::CallPreparer prep{Config()};
  uint64_t with_category = 0;
  for (size_t i = 0; i < trace.records.size(); ++i) {
    const TraceRecord& r = trace.records[i];
    cache_internal::PreparedCall c = prep.Prepare(
        {.server = "", .tool = r.tool, .arguments_json = r.arguments}, nullptr);
    if (!c.key) continue;  // the engine keys only cacheable calls
    EXPECT_EQ(p->object_category[p->object[i]], c.category)
        << r.tool << " " << r.arguments;
    with_category += c.category != 0;
  }
  EXPECT_GE(with_category, 3u);  // the rule is exercised, not only "none"
}

// A record's server (TraceRecord::server) is the engine's server identity:
// a write on one server leaves another's entries; the trace format carries
// it (WriteTrace / ReadTrace) and the fast replay keeps servers apart.
TEST(EngineReplayTest, RecordServersAreTheEnginesServerIdentity) {
  Trace t;
  t.name = "servers";
  auto rec = [&](double time, std::string server, std::string tool,
                 std::string args) {
    TraceRecord r = Rec(time, "ann", std::move(tool), std::move(args), "d");
    r.server = std::move(server);
    t.records.push_back(r);
  };
  rec(0, "fs1", "read_file", R"({"path":"/x"})");
  rec(1, "fs2", "read_file", R"({"path":"/x"})");  // another server: a miss
  rec(2, "fs1", "write_file", R"({"content":"c","path":"/x"})");
  rec(3, "fs2", "read_file", R"({"path":"/x"})");  // fs1's write: still kept
  rec(4, "fs1", "read_file", R"({"path":"/x"})");  // dropped by the write
  Result<EngineReplayMetrics> m =
      ReplayThroughEngine(t, Config(), {.keep_decisions = true});
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->decisions.size(), 5u);
  EXPECT_FALSE(m->decisions[1].hit);
  EXPECT_NE(m->decisions[0].key_hex, m->decisions[1].key_hex);
  EXPECT_TRUE(m->decisions[3].hit);
  EXPECT_FALSE(m->decisions[4].hit);

  std::stringstream text;
  WriteTrace(t, text);
  Result<Trace> back = ReadTrace(text, "servers");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->records.size(), 5u);
  EXPECT_EQ(back->records[1].server, "fs2");

  Result<PreparedTrace> p = PrepareTrace(t, {});
  ASSERT_TRUE(p.ok());
  EXPECT_NE(p->object[0], p->object[1]);  // fs1's /x is not fs2's
  EXPECT_EQ(p->object[0], p->object[4]);
  // Without servers the identity is the old one: one object.
  for (TraceRecord& r : t.records) r.server.clear();
  Result<PreparedTrace> q = PrepareTrace(t, {});
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->object[0], q->object[1]);
}

// Without --config the simulator's defaults are the faces'.
TEST(EngineReplayTest, SimulatorDefaultsAreTheFacesDefaults) {
  const Config faces;
  const PrepareOptions sim;
  EXPECT_EQ(sim.default_ttl, faces.ttl_seconds);
  EXPECT_EQ(sim.min_cacheable_ttl, faces.min_cacheable_ttl_seconds);
}

}  // namespace
}  // namespace toolcache::sim
