// ToolCache over a shared Store: two caches on one store behave like two
// processes sharing it (results flow between them, a write through one
// invalidates the other's store entries AND its in-process copies), and a
// sick store never fails a call: every fault is a bypass with its own
// reason, and caching resumes by itself.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <cmath>
#include <future>
#include <initializer_list>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "src/cache/shared_results.h"
#include "tests/support/redis_server.h"
#include "toolcache/classifier.h"
#include "toolcache/config.h"
#include "toolcache/store.h"
#include "toolcache/tool_cache.h"

namespace toolcache {
namespace {

using cache_internal::DecodeResult;
using cache_internal::EncodeResult;
using cache_internal::ResourceAncestors;

constexpr std::string_view kBody =
    R"({"content":[{"type":"text","text":"v1"}]})";

// One "process": a ToolCache that knows the test server's tools.
std::unique_ptr<ToolCache> MakeCache(
    const Clock* clock, Store* store,
    InvalidationScope scope = InvalidationScope::kServer) {
  Config config;
  config.policy = "lru";
  config.invalidation = scope;
  auto made = NewToolCache(config, clock, store);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  ToolInfo read{.name = "read"};
  read.annotations = ToolAnnotations{.read_only = true, .open_world = false};
  ToolInfo write{.name = "write"};
  write.annotations = ToolAnnotations{.read_only = false};
  std::vector<ToolInfo> tools = {read, write};
  (*made)->LearnTools("s", tools, true);
  return std::move(*made);
}

ToolCall Read(std::string_view args = R"({"path":"/a"})") {
  return {.server = "s", .tool = "read", .arguments_json = args};
}
ToolCall Write(std::string_view args = R"({"path":"/a"})") {
  return {.server = "s", .tool = "write", .arguments_json = args};
}

// Runs `call` through `cache` like a face: a forward gets `body` from
// "upstream". Returns the action Begin chose.
CallAction Call(ToolCache& cache, const ToolCall& call,
                std::string_view body = kBody) {
  static WaiterId next = 1;
  CallPlan p = cache.Begin(call, next++);
  if (p.action == CallAction::kForward) {
    (void)cache.Complete(p.ticket, {.result_json = body});
  }
  return p.action;
}

class SharedStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    static int n = 0;
    std::string spec = GetParam();
    if (spec == "redis") {
      spec =
          testing::SharedRedisServer().Spec("prefix=ss" + std::to_string(++n));
    } else if (spec == "sqlite") {
      char tmpl[] = "/tmp/toolcache-ss-XXXXXX";
      spec = std::string("sqlite:") + mkdtemp(tmpl) + "/s.db";
    }
    auto s = OpenStore(spec, {.clock = &clock_});
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
  }
  ManualClock clock_{1.7e9};
  std::unique_ptr<Store> store_;
};

TEST_P(SharedStoreTest, TheSecondProcessesFirstRepeatedCallIsAHit) {
  auto a = MakeCache(&clock_, store_.get());
  auto b = MakeCache(&clock_, store_.get());
  ASSERT_EQ(Call(*a, Read()), CallAction::kForward);
  CallPlan hit = b->Begin(Read(), 100);
  ASSERT_EQ(hit.action, CallAction::kServe);
  EXPECT_EQ(*hit.result_json, kBody);
  EXPECT_EQ(b->Stats().store_hits, 1u);
  // B's policy took a copy: the next hit is B's own (still checked).
  EXPECT_EQ(Call(*b, Read()), CallAction::kServe);
  EXPECT_EQ(b->Stats().store_hits, 1u);
  EXPECT_EQ(b->Stats().hits, 2u);
  EXPECT_EQ(b->Stats().misses, 0u);
}

TEST_P(SharedStoreTest, AWriteThroughOneInvalidatesTheOthersStoreAndMemory) {
  auto a = MakeCache(&clock_, store_.get());
  auto b = MakeCache(&clock_, store_.get());
  ASSERT_EQ(Call(*a, Read()), CallAction::kForward);
  ASSERT_EQ(Call(*b, Read()), CallAction::kServe);  // B now holds a copy
  ASSERT_EQ(Call(*a, Write()), CallAction::kForward);
  // Neither B's in-process copy nor the store's entry is served.
  EXPECT_EQ(Call(*b, Read(), R"({"v":2})"), CallAction::kForward);
  CallPlan after = a->Begin(Read(), 200);
  ASSERT_EQ(after.action, CallAction::kServe) << "B's fresh result is shared";
  EXPECT_EQ(*after.result_json, R"({"v":2})");
  // Other servers' entries are untouched.
  ToolCall other{.server = "t", .tool = "read", .arguments_json = "{}"};
  std::vector<ToolInfo> tools(1);
  tools[0].name = "read";
  tools[0].annotations =
      ToolAnnotations{.read_only = true, .open_world = false};
  a->LearnTools("t", tools, true);
  b->LearnTools("t", tools, true);
  ASSERT_EQ(Call(*a, other), CallAction::kForward);
  ASSERT_EQ(Call(*b, Write()), CallAction::kForward);
  EXPECT_EQ(Call(*b, other), CallAction::kServe);
}

TEST_P(SharedStoreTest, InvalidateAndToolsChangedReachEveryProcess) {
  auto a = MakeCache(&clock_, store_.get());
  auto b = MakeCache(&clock_, store_.get());
  ASSERT_EQ(Call(*a, Read()), CallAction::kForward);
  ASSERT_EQ(Call(*b, Read()), CallAction::kServe);
  a->Invalidate("s", "");
  EXPECT_EQ(Call(*b, Read()), CallAction::kForward);
  ASSERT_EQ(Call(*a, Read()), CallAction::kServe);
  b->ToolsChanged("s");
  std::vector<ToolInfo> tools(1);
  tools[0].name = "read";
  tools[0].annotations =
      ToolAnnotations{.read_only = true, .open_world = false};
  a->LearnTools("s", tools, false);
  EXPECT_EQ(Call(*a, Read()), CallAction::kForward);
}

TEST_P(SharedStoreTest, ObservationFacesShareTheSameEntries) {
  auto a = MakeCache(&clock_, store_.get());
  auto b = MakeCache(&clock_, store_.get());
  RecordOutcome rec = a->Record(Read(), {.result_json = kBody});
  ASSERT_TRUE(rec.admitted);
  Probe p = b->Peek(Read());
  ASSERT_TRUE(p.would_hit);
  EXPECT_EQ(*p.result_json, kBody);
  RecordOutcome same = b->Record(Read(), {.result_json = kBody});
  EXPECT_TRUE(same.already_cached);
  RecordOutcome changed = b->Record(Read(), {.result_json = R"({"v":3})"});
  EXPECT_TRUE(changed.stale);
  Probe now = a->Peek(Read());
  ASSERT_TRUE(now.would_hit) << "the replacement is shared";
  EXPECT_EQ(*now.result_json, R"({"v":3})");
  (void)b->Record(Write(), {.result_json = "{}"});
  EXPECT_FALSE(a->Peek(Read()).would_hit);
}

TEST_P(SharedStoreTest, ResourceInvalidationAcrossProcessesMatchesOneProcess) {
  // (written, read, invalidated?) as ResourcesOverlap decides in-process.
  struct Case {
    const char* written;
    const char* read;
    bool invalidated;
  };
  const Case cases[] = {
      {"/d/x", "/d/x", true},
      {"/d", "/d/x/y", true},
      {"/d/x/y", "/d", true},
      {"/d/x", "/d/xy", false},
      {"/d/xy", "/d/x", false},
      {"/e", "/d", false},
      {"/", "/d", true},
      {"/d/./x/../x", "/d/x", true},
      // A relative path may be any path of the server (IsUnanchored): a
      // relative read is invalidated by any resource write, a relative
      // write invalidates the whole server.
      {"/d/x", "x", true},
      {"x", "/d/y", true},
      {"/e", "d/x", true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.written) + " vs " + c.read);
    const std::string read = std::string(R"({"path":")") + c.read + "\"}";
    const std::string written = std::string(R"({"path":")") + c.written + "\"}";
    // One process, no store: the reference.
    auto alone = MakeCache(&clock_, nullptr, InvalidationScope::kResource);
    ASSERT_EQ(Call(*alone, Read(read)), CallAction::kForward);
    ASSERT_EQ(Call(*alone, Write(written)), CallAction::kForward);
    const bool local = Call(*alone, Read(read)) == CallAction::kForward;
    EXPECT_EQ(local, c.invalidated);
    // Two processes on the store: the same answer.
    auto a = MakeCache(&clock_, store_.get(), InvalidationScope::kResource);
    auto b = MakeCache(&clock_, store_.get(), InvalidationScope::kResource);
    a->Invalidate("s", "");  // a clean slate for this case
    ASSERT_EQ(Call(*a, Read(read)), CallAction::kForward);
    ASSERT_EQ(Call(*b, Read(read)), CallAction::kServe);
    ASSERT_EQ(Call(*a, Write(written)), CallAction::kForward);
    // A third process, with nothing in memory, reads the store alone (Peek:
    // it must not store a fresh result before b looks).
    auto fresh = MakeCache(&clock_, store_.get(), InvalidationScope::kResource);
    EXPECT_EQ(fresh->Peek(Read(read)).would_hit, !c.invalidated);
    EXPECT_EQ(Call(*b, Read(read)) == CallAction::kForward, c.invalidated);
  }
}

TEST_P(SharedStoreTest, AnExpiredResultIsNotServedFromTheStore) {
  if (GetParam() == "redis") GTEST_SKIP() << "Redis uses its own clock";
  auto a = MakeCache(&clock_, store_.get());
  auto b = MakeCache(&clock_, store_.get());
  CallPlan p = a->Begin(Read(), 1);
  ASSERT_GT(p.verdict.ttl_seconds, 0);
  (void)a->Complete(p.ticket, {.result_json = kBody});
  clock_.Advance(p.verdict.ttl_seconds + 1);
  EXPECT_EQ(b->Begin(Read(), 2).action, CallAction::kForward);
}

// A call never joins an identical call in flight that went upstream before
// a write another process has answered since: B's later read would get
// what B's earlier read fetched before the write (seen by
// fuzz/drills/store_drills.mjs while a full disk slowed B down).
TEST_P(SharedStoreTest, NoCallJoinsAFlightThatPredatesAnotherProcesssWrite) {
  auto a = MakeCache(&clock_, store_.get());
  auto b = MakeCache(&clock_, store_.get());
  CallPlan early = b->Begin(Read(), 1);
  ASSERT_EQ(early.action, CallAction::kForward);
  ASSERT_EQ(Call(*a, Write()), CallAction::kForward);  // answered
  CallPlan late = b->Begin(Read(), 2);
  EXPECT_EQ(late.action, CallAction::kForward)
      << "joined a read sent before the write";
  Completion c = b->Complete(early.ticket, {.result_json = R"({"v":1})"});
  EXPECT_THAT(c.waiters, ::testing::ElementsAre(1u));
  (void)b->Complete(late.ticket, {.result_json = R"({"v":2})"});
  CallPlan after = b->Begin(Read(), 3);
  ASSERT_EQ(after.action, CallAction::kServe);
  EXPECT_EQ(*after.result_json, R"({"v":2})");
  // Without a write in between, identical calls still coalesce.
  CallPlan x = a->Begin(Read(R"({"path":"/x"})"), 4);
  ASSERT_EQ(x.action, CallAction::kForward);
  EXPECT_EQ(a->Begin(Read(R"({"path":"/x"})"), 5).action, CallAction::kWait);
  EXPECT_THAT(a->Complete(x.ticket, {.result_json = kBody}).waiters,
              ::testing::ElementsAre(4u, 5u));
}

INSTANTIATE_TEST_SUITE_P(EveryStore, SharedStoreTest,
                         ::testing::Values("memory", "sqlite", "redis"));

// --- faults ---------------------------------------------------------------

class StoreFaultTest : public ::testing::Test {
 protected:
  StoreFaultTest()
      : base_(std::move(*OpenStore("memory", {.clock = &clock_}))),
        plan_(std::make_shared<FaultPlan>()),
        store_(NewFaultInjectionStore(base_.get(), plan_)) {}
  ManualClock clock_{1.7e9};
  std::unique_ptr<Store> base_;
  std::shared_ptr<FaultPlan> plan_;
  std::unique_ptr<Store> store_;
};

TEST_F(StoreFaultTest, EachFaultIsABypassWithItsReasonAndCachingResumes) {
  auto cache = MakeCache(&clock_, store_.get());
  ASSERT_EQ(Call(*cache, Read()), CallAction::kForward);
  ASSERT_EQ(Call(*cache, Read()), CallAction::kServe);
  for (auto [code, reason] :
       {std::pair{StatusCode::kUnavailable, "store_unavailable"},
        std::pair{StatusCode::kDeadlineExceeded, "store_timeout"}}) {
    plan_->fail_with = code;
    CallPlan p = cache->Begin(Read(), 10);
    EXPECT_EQ(p.action, CallAction::kForward) << "nothing unverified served";
    EXPECT_TRUE(p.bypass);
    EXPECT_EQ(p.bypass_reason, reason);
    Completion c = cache->Complete(p.ticket, {.result_json = kBody});
    EXPECT_EQ(c.waiters, std::vector<WaiterId>{10}) << "the call is answered";
    EXPECT_FALSE(c.admitted);
    EXPECT_EQ(cache->Stats().bypasses.at(reason), 1u);
  }
  plan_->fail_with = StatusCode::kOk;
  EXPECT_EQ(Call(*cache, Read()), CallAction::kServe) << "resumed by itself";
}

TEST_F(StoreFaultTest, ACorruptEntryIsABypassAndIsReplaced) {
  auto a = MakeCache(&clock_, store_.get());
  auto b = MakeCache(&clock_, store_.get());
  ASSERT_EQ(Call(*a, Read()), CallAction::kForward);
  plan_->corrupt_values = true;
  CallPlan p = b->Begin(Read(), 1);
  EXPECT_EQ(p.action, CallAction::kForward);
  EXPECT_EQ(p.bypass_reason, "store_corrupt");
  (void)b->Complete(p.ticket, {.result_json = kBody});
  plan_->corrupt_values = false;
  // The corrupt entry was dropped; the next call refills and then hits.
  auto c = MakeCache(&clock_, store_.get());
  EXPECT_EQ(Call(*c, Read()), CallAction::kForward);
  EXPECT_EQ(Call(*b, Read()), CallAction::kServe);
}

TEST_F(StoreFaultTest, AFullStoreStillAnswersAndCountsTheFailedWrite) {
  auto a = MakeCache(&clock_, store_.get());
  plan_->full = true;
  CallPlan p = a->Begin(Read(), 1);
  ASSERT_FALSE(p.bypass);
  Completion c = a->Complete(p.ticket, {.result_json = kBody});
  EXPECT_EQ(c.waiters.size(), 1u);
  EXPECT_TRUE(c.admitted) << "this process keeps its own copy";
  EXPECT_EQ(a->Stats().store_errors.at("store_full"), 1u);
  EXPECT_EQ(Call(*a, Read()), CallAction::kServe);
  auto b = MakeCache(&clock_, store_.get());
  EXPECT_EQ(Call(*b, Read()), CallAction::kForward) << "nothing was shared";
}

TEST_F(StoreFaultTest, AWriteThatCouldNotBePublishedBlocksStoreReadsUntilItIs) {
  auto a = MakeCache(&clock_, store_.get());
  auto b = MakeCache(&clock_, store_.get());
  ASSERT_EQ(Call(*a, Read()), CallAction::kForward);
  plan_->fail_with = StatusCode::kUnavailable;
  ASSERT_EQ(Call(*a, Write()), CallAction::kForward);
  EXPECT_GE(a->Stats().store_errors.at("store_unavailable"), 1u);
  plan_->fail_with = StatusCode::kOk;
  // A's next read first publishes the write it owes; then nobody serves the
  // pre-write entry.
  EXPECT_EQ(Call(*a, Read(), R"({"v":2})"), CallAction::kForward);
  CallPlan p = b->Begin(Read(), 1);
  ASSERT_EQ(p.action, CallAction::kServe);
  EXPECT_EQ(*p.result_json, R"({"v":2})");
}

TEST_F(StoreFaultTest, StoreCallsDoNotHoldTheCachesLock) {
  auto a = MakeCache(&clock_, store_.get());
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  plan_->on_call = [&, once = std::make_shared<std::once_flag>()] {
    std::call_once(*once, [&] {
      entered.set_value();
      released.wait();
    });
  };
  std::thread slow([&] { (void)Call(*a, Read()); });
  entered.get_future().wait();
  // The store call is stuck; the cache still answers everything that needs
  // no store I/O.
  ToolCacheStats st = a->Stats();
  EXPECT_EQ(st.calls, 1u);
  std::vector<ToolInfo> tools(1);
  tools[0].name = "other";
  a->LearnTools("t", tools, true);
  EXPECT_FALSE(a->Cancel(12345).found);
  release.set_value();
  slow.join();
  plan_->on_call = nullptr;
  EXPECT_EQ(Call(*a, Read()), CallAction::kServe);
}

// --- record format and resource relation ----------------------------------

// The race the SQLite disk-full drill found (fuzz/drills/store_drills.mjs):
// process B reads between the two bumps of A's write, so B's result holds
// the pre-write content under the tag A's first bump made; A's second bump,
// which alone invalidates it, fails (the disk was full; here another
// connection holds the write lock). No process may serve that result, and
// caching resumes by itself once the store takes writes again.
TEST(SharedSqliteTest, AResultThatRacedALostInvalidationIsNeverServed) {
  char tmpl[] = "/tmp/toolcache-ss-XXXXXX";
  const std::string path = std::string(mkdtemp(tmpl)) + "/s.db";
  const std::string spec = "sqlite:" + path + "?busy_timeout_ms=10";
  ManualClock clock{1.7e9};
  auto sa = OpenStore(spec, {.clock = &clock});
  auto sb = OpenStore(spec, {.clock = &clock});
  auto sc = OpenStore(spec, {.clock = &clock});
  ASSERT_TRUE(sa.ok() && sb.ok() && sc.ok());
  auto a = MakeCache(&clock, sa->get());
  auto b = MakeCache(&clock, sb->get());
  auto c = MakeCache(&clock, sc->get());
  constexpr std::string_view kOld = R"({"content":[{"text":"old"}]})";
  constexpr std::string_view kNew = R"({"content":[{"text":"new"}]})";

  CallPlan write = a->Begin(Write(), 1);  // first bump published
  ASSERT_EQ(write.action, CallAction::kForward);
  ASSERT_EQ(Call(*b, Read(), kOld), CallAction::kForward);
  ASSERT_EQ(Call(*b, Read()), CallAction::kServe);  // live while A writes
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr),
            SQLITE_OK);
  (void)a->Complete(write.ticket, {.result_json = "{}"});  // bump lost
  EXPECT_GE(a->Stats().store_errors.at("store_timeout"), 1u);

  // Neither B's in-process copy nor the stored result is served: a miss
  // that names the reason, and the call still goes upstream.
  for (ToolCache* cache : {b.get(), c.get(), a.get()}) {
    CallPlan p = cache->Begin(Read(), 10);
    ASSERT_EQ(p.action, CallAction::kForward)
        << "served " << *p.result_json << " after a lost invalidation";
    EXPECT_EQ(p.bypass_reason,
              cache == a.get() ? "store_timeout" : "store_degraded");
    (void)cache->Complete(p.ticket, {.result_json = kNew});
  }
  EXPECT_EQ(b->Stats().bypasses.at("store_degraded"), 1u);

  ASSERT_EQ(sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(other);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // retry gap
  // Healed by itself: every counter moved, so the next call is a miss that
  // stores the new content, and then everyone serves it.
  ASSERT_EQ(Call(*b, Read(), kNew), CallAction::kForward);
  for (ToolCache* cache : {b.get(), c.get()}) {
    CallPlan p = cache->Begin(Read(), 20);
    ASSERT_EQ(p.action, CallAction::kServe);
    EXPECT_EQ(*p.result_json, kNew);
  }
}

TEST(SharedResultsTest, RecordsRoundTripAndAnyDamageIsDetected) {
  CachedValue v;
  v.key = {.scope = "u", .server = "s", .tool = "t", .canonical_args = "{}"};
  v.ttl_seconds = 300;
  v.latency_seconds = 1.5;
  v.cost = 0.25;
  v.flags = 7;
  v.media_type = "application/json";
  const std::string rec = EncodeResult(v, "the result", "tag8byte");
  auto d = DecodeResult(rec);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->value.key, v.key);
  EXPECT_EQ(d->value.result, "the result");
  EXPECT_EQ(d->tag, "tag8byte");
  EXPECT_EQ(d->value.latency_seconds, 1.5);
  EXPECT_EQ(d->value.cost, 0.25);
  EXPECT_EQ(d->value.flags, 7u);
  for (size_t i = 0; i < rec.size(); ++i) {
    std::string bad = rec;
    bad[i] ^= 1;
    EXPECT_EQ(DecodeResult(bad).status().code(), StatusCode::kDataLoss) << i;
  }
  EXPECT_FALSE(DecodeResult(rec.substr(0, rec.size() - 1)).ok());
  EXPECT_FALSE(DecodeResult("").ok());
  // Well formed, checksum right, numbers out of range: another writer of the
  // store, not damage. Refused, so no NaN reaches an eviction score.
  const double nan = std::nan("");
  for (auto [latency, cost, ttl] :
       std::initializer_list<std::tuple<double, double, double>>{
           {nan, 0, 300},
           {-1, 0, 300},
           {INFINITY, 0, 300},
           {1, nan, 300},
           {1, -0.5, 300},
           {1, INFINITY, 300},
           {1, 0, nan},
           {1, 0, -5}}) {
    CachedValue odd = v;
    odd.latency_seconds = latency;
    odd.cost = cost;
    odd.ttl_seconds = ttl;
    EXPECT_EQ(DecodeResult(EncodeResult(odd, "r", "tag8byte")).status().code(),
              StatusCode::kDataLoss)
        << latency << " " << cost << " " << ttl;
  }
  CachedValue forever = v;
  forever.ttl_seconds = INFINITY;  // no expiry: still a valid record
  EXPECT_TRUE(DecodeResult(EncodeResult(forever, "r", "tag8byte")).ok());
}

TEST(SharedResultsTest, AncestorsFollowThePathBoundaries) {
  EXPECT_THAT(ResourceAncestors("/a/b/c"),
              ::testing::ElementsAre("/", "/a", "/a/", "/a/b", "/a/b/"));
  EXPECT_THAT(ResourceAncestors("/"), ::testing::IsEmpty());
  EXPECT_THAT(ResourceAncestors("rel/x"),
              ::testing::ElementsAre("rel", "rel/"));
}

}  // namespace
}  // namespace toolcache
