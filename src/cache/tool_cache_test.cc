// ToolCache contract: the request path other faces share (the MCP session
// tests in src/mcp/session_test.cc cover the protocol side).
#include "toolcache/tool_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "tests/support/redis_server.h"
#include "toolcache/classifier.h"
#include "toolcache/config.h"
#include "toolcache/store.h"

namespace toolcache {
namespace {

// Every ToolCache contract holds with each storage under the in-process
// cache: none (`store: memory`), and a shared memory, SQLite or Redis store.
enum class Backing { kNone, kMemory, kSqlite, kRedis };

std::string BackingName(const ::testing::TestParamInfo<Backing>& info) {
  constexpr const char* kNames[] = {"l1_only", "memory_store", "sqlite",
                                    "redis"};
  return kNames[static_cast<int>(info.param)];
}

// Opens the store a test cache sits on (nullptr for kNone).
std::unique_ptr<Store> OpenBacking(Backing b, const Clock* clock) {
  static int n = 0;
  ++n;
  std::string spec;
  switch (b) {
    case Backing::kNone:
      return nullptr;
    case Backing::kMemory:
      spec = "memory";
      break;
    case Backing::kSqlite: {
      char tmpl[] = "/tmp/toolcache-tc-XXXXXX";
      spec = std::string("sqlite:") + mkdtemp(tmpl) + "/tc.db";
      break;
    }
    case Backing::kRedis:
      spec = testing::SharedRedisServer().Spec("prefix=tc" + std::to_string(n));
      break;
  }
  auto s = OpenStore(spec, {.clock = clock});
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

class ToolCacheTest : public ::testing::TestWithParam<Backing> {
 protected:
  void SetUp() override {
    Config config;
    config.policy = "lru";
    store_ = OpenBacking(GetParam(), &clock_);
    auto made = NewToolCache(config, &clock_, store_.get());
    ASSERT_TRUE(made.ok()) << made.status().message();
    cache_ = std::move(*made);
    ToolInfo read{.name = "get_doc", .description = "Get a document"};
    read.annotations = ToolAnnotations{.read_only = true, .open_world = false};
    ToolInfo write{.name = "put_doc", .description = "Store a document"};
    write.annotations = ToolAnnotations{.read_only = false};
    std::vector<ToolInfo> tools = {read, write};
    cache_->LearnTools("s", tools, true);
  }
  ToolCall Read(std::string_view args = R"({"id":1})") {
    return {.server = "s", .tool = "get_doc", .arguments_json = args};
  }

  ManualClock clock_{0};
  std::unique_ptr<Store> store_;
  std::unique_ptr<ToolCache> cache_;
};

INSTANTIATE_TEST_SUITE_P(EveryBacking, ToolCacheTest,
                         ::testing::Values(Backing::kNone, Backing::kMemory,
                                           Backing::kSqlite, Backing::kRedis),
                         BackingName);

TEST_P(ToolCacheTest, ConcurrentIdenticalCallsMakeOneUpstreamCall) {
  constexpr int kThreads = 8;
  std::atomic<int> forwards{0}, waits{0};
  std::vector<TicketId> tickets(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      CallPlan p = cache_->Begin(Read(), static_cast<WaiterId>(i + 1));
      if (p.action == CallAction::kForward) ++forwards;
      if (p.action == CallAction::kWait) ++waits;
      tickets[i] = p.ticket;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(forwards.load(), 1);
  EXPECT_EQ(waits.load(), kThreads - 1);
  for (int i = 1; i < kThreads; ++i) EXPECT_EQ(tickets[i], tickets[0]);
  Completion c = cache_->Complete(
      tickets[0], {.result_json = R"({"content":[]})", .latency_seconds = 0.5});
  EXPECT_EQ(c.waiters.size(), static_cast<size_t>(kThreads));
  EXPECT_TRUE(c.admitted);
  CallPlan hit = cache_->Begin(Read(), 99);
  ASSERT_EQ(hit.action, CallAction::kServe);
  EXPECT_EQ(*hit.result_json, R"({"content":[]})");
}

TEST_P(ToolCacheTest, WriteDetachesInFlightReadsAndInvalidates) {
  CallPlan r1 = cache_->Begin(Read(), 1);
  ASSERT_EQ(r1.action, CallAction::kForward);
  CallPlan w = cache_->Begin(
      {.server = "s", .tool = "put_doc", .arguments_json = R"({"id":1})"}, 2);
  EXPECT_TRUE(w.bypass);
  EXPECT_EQ(w.bypass_reason, "command");
  // A read issued after the write started does not join the older read.
  CallPlan r2 = cache_->Begin(Read(), 3);
  EXPECT_EQ(r2.action, CallAction::kForward);
  EXPECT_NE(r2.ticket, r1.ticket);
  Completion c1 =
      cache_->Complete(r1.ticket, {.result_json = R"({"content":[1]})"});
  EXPECT_FALSE(c1.admitted) << "overlapped the write";
  (void)cache_->Complete(w.ticket, {.result_json = R"({"content":[]})"});
  Completion c2 =
      cache_->Complete(r2.ticket, {.result_json = R"({"content":[2]})"});
  EXPECT_FALSE(c2.admitted) << "the write completed after it started";
  CallPlan r3 = cache_->Begin(Read(), 4);
  ASSERT_EQ(r3.action, CallAction::kForward);
  EXPECT_TRUE(cache_->Complete(r3.ticket, {.result_json = R"({"content":[3]})"})
                  .admitted);
  EXPECT_EQ(cache_->Begin(Read(), 5).action, CallAction::kServe);
}

TEST_P(ToolCacheTest, PeekReportsAWouldHitWithoutServingIt) {
  EXPECT_FALSE(cache_->Peek(Read()).would_hit);
  CallPlan miss = cache_->Begin(Read(), 1);
  ASSERT_EQ(miss.action, CallAction::kForward);
  ASSERT_TRUE(
      cache_->Complete(miss.ticket, {.result_json = R"({"content":[7]})"})
          .admitted);
  const ToolCacheStats before = cache_->Stats();
  Probe p = cache_->Peek(Read());
  ASSERT_TRUE(p.would_hit);
  EXPECT_EQ(*p.result_json, R"({"content":[7]})");
  EXPECT_TRUE(p.bypass_reason.empty());
  EXPECT_FALSE(cache_->Peek(Read(R"({"id":2})")).would_hit);
  const ToolCacheStats after = cache_->Stats();
  EXPECT_EQ(after.calls, before.calls);
  EXPECT_EQ(after.hits, before.hits);
  EXPECT_EQ(after.peeks, before.peeks + 2);
  EXPECT_EQ(after.would_hits, before.would_hits + 1);
  // Another scope never sees the entry.
  ToolCall other = Read();
  other.scope = "tenant-b";
  EXPECT_FALSE(cache_->Peek(other).would_hit);
}

TEST_P(ToolCacheTest, PeekOfAWriteChangesNothing) {
  (void)cache_->Record(Read(), {.result_json = R"({"content":[1]})"});
  Probe w = cache_->Peek(
      {.server = "s", .tool = "put_doc", .arguments_json = R"({"id":1})"});
  EXPECT_FALSE(w.would_hit);
  EXPECT_EQ(w.bypass_reason, "command");
  EXPECT_TRUE(cache_->Peek(Read()).would_hit) << "a peeked write invalidated";
}

TEST_P(ToolCacheTest, PeekIsNoHitOnceTheTtlRanOut) {
  if (GetParam() == Backing::kRedis) {
    GTEST_SKIP() << "Redis expires on the server's clock, not the test's";
  }
  RecordOutcome r =
      cache_->Record(Read(), {.result_json = R"({"content":[1]})"});
  ASSERT_TRUE(r.admitted);
  ASSERT_GT(r.verdict.ttl_seconds, 0);
  clock_.Advance(r.verdict.ttl_seconds - 1);
  ASSERT_TRUE(cache_->Peek(Read()).would_hit);
  clock_.Advance(2);
  EXPECT_FALSE(cache_->Peek(Read()).would_hit);
}

TEST_P(ToolCacheTest, RecordStoresReadsNeverErrorsAndWritesInvalidate) {
  RecordOutcome err = cache_->Record(
      Read(), {.result_json = R"({"isError":true})", .is_error = true});
  EXPECT_FALSE(err.admitted);
  EXPECT_EQ(err.reason, VerdictReason::kErrorResult);
  EXPECT_FALSE(cache_->Peek(Read()).would_hit) << "an error was stored";
  RecordOutcome partial = cache_->Record(
      Read(), {.result_json = R"({"content":[]})", .complete = false});
  EXPECT_FALSE(partial.admitted);
  EXPECT_FALSE(cache_->Peek(Read()).would_hit);

  RecordOutcome ok = cache_->Record(
      Read(), {.result_json = R"({"content":[1]})", .latency_seconds = 2});
  EXPECT_TRUE(ok.admitted);
  EXPECT_FALSE(ok.already_cached);
  // Served through the MCP face's path too: one store for every face.
  CallPlan served = cache_->Begin(Read(), 1);
  ASSERT_EQ(served.action, CallAction::kServe);
  EXPECT_EQ(*served.result_json, R"({"content":[1]})");

  RecordOutcome again =
      cache_->Record(Read(), {.result_json = R"({"content":[1]})"});
  EXPECT_TRUE(again.already_cached);
  RecordOutcome changed =
      cache_->Record(Read(), {.result_json = R"({"content":[2]})"});
  EXPECT_TRUE(changed.stale);
  EXPECT_TRUE(changed.admitted);
  EXPECT_EQ(*cache_->Peek(Read()).result_json, R"({"content":[2]})");

  RecordOutcome write = cache_->Record(
      {.server = "s", .tool = "put_doc", .arguments_json = R"({"id":1})"},
      {.result_json = R"({"content":[]})"});
  EXPECT_EQ(write.bypass_reason, "command");
  EXPECT_FALSE(write.admitted);
  EXPECT_FALSE(cache_->Peek(Read()).would_hit)
      << "the write did not invalidate";
  const ToolCacheStats st = cache_->Stats();
  EXPECT_EQ(st.recorded, 6u);
  EXPECT_EQ(st.recorded_already_cached, 1u);
  EXPECT_EQ(st.recorded_stale, 1u);
  EXPECT_EQ(st.bypasses.at("command"), 1u);
}

TEST_P(ToolCacheTest, RecordOfAnUnknownToolIsNeverStored) {
  RecordOutcome r = cache_->Record(
      {.server = "s", .tool = "frobnicate", .arguments_json = "{}"},
      {.result_json = R"({"content":[]})"});
  EXPECT_FALSE(r.admitted);
  EXPECT_FALSE(r.bypass_reason.empty());
  EXPECT_FALSE(
      cache_
          ->Peek({.server = "s", .tool = "frobnicate", .arguments_json = "{}"})
          .would_hit);
}

TEST_P(ToolCacheTest, InvalidArgumentsBypassWithTheirOwnReason) {
  CallPlan p = cache_->Begin(Read(R"({"a":1,"a":2})"), 1);
  EXPECT_TRUE(p.bypass);
  EXPECT_EQ(p.bypass_reason, "invalid_arguments");
  EXPECT_EQ(cache_->Stats().bypasses.at("invalid_arguments"), 1u);
  // The verdict says the same (issue 27.15: it said "cacheable").
  EXPECT_FALSE(p.verdict.cacheable);
  EXPECT_EQ(p.verdict.reason, VerdictReason::kInvalidArguments);
  RecordOutcome r = cache_->Record(Read(R"({"a":1,"a":2})"),
                                   {.result_json = R"({"content":[]})"});
  EXPECT_EQ(r.bypass_reason, "invalid_arguments");
  EXPECT_EQ(VerdictReasonName(r.verdict.reason), "invalid_arguments");
  Probe probe = cache_->Peek(Read(R"({"a":1,"a":2})"));
  EXPECT_EQ(probe.verdict.reason, VerdictReason::kInvalidArguments);
}

// Verdicts are remembered per set of tool definitions: a definition that
// changes (a re-listed tool that now writes) is classified afresh, never
// with the verdict remembered for the old one.
TEST(ToolCacheVerdictMemo, ARelearnedDefinitionIsClassifiedAfresh) {
  ManualClock clock;
  Config config;
  config.policy = "lru";
  auto made = NewToolCache(config, &clock, nullptr);
  ASSERT_TRUE(made.ok()) << made.status().message();
  ToolCache& cache = **made;
  ToolInfo doc{.name = "get_doc", .description = "Get a document"};
  doc.annotations = ToolAnnotations{.read_only = true, .open_world = false};
  cache.LearnTools("s", std::vector<ToolInfo>{doc}, true);
  const ToolCall call{
      .server = "s", .tool = "get_doc", .arguments_json = R"({"id":1})"};
  for (int i = 0; i < 2; ++i) {
    CallPlan p = cache.Begin(call, 10 + i);
    EXPECT_TRUE(p.verdict.cacheable) << p.verdict.detail;
    if (p.action == CallAction::kForward) {
      cache.Complete(p.ticket, {.result_json = R"({"content":[]})"});
    }
  }
  doc.description = "Deletes the document and returns it";
  doc.annotations = ToolAnnotations{.read_only = false};
  cache.LearnTools("s", std::vector<ToolInfo>{doc}, true);
  CallPlan after = cache.Begin(call, 20);
  EXPECT_FALSE(after.verdict.cacheable) << after.verdict.detail;
  EXPECT_EQ(after.verdict.request_type, RequestType::kCommand);
  EXPECT_EQ(after.action, CallAction::kForward);
  cache.Complete(after.ticket, {.result_json = R"({"content":[]})"});
}

// ToolCall::definition: a face's own definition of the tool (the LLM
// proxy's, per principal) decides the call's verdict instead of the learned
// one, and neither fills the other's verdict memo.
TEST(ToolCacheDefinition, ACallsOwnDefinitionDecidesItsVerdict) {
  ManualClock clock;
  Config config;
  config.policy = "lru";
  auto made = NewToolCache(config, &clock, nullptr);
  ASSERT_TRUE(made.ok()) << made.status().message();
  ToolCache& cache = **made;
  ToolInfo learned{.name = "note", .description = "Returns the note"};
  learned.annotations = ToolAnnotations{.read_only = true, .open_world = false};
  cache.LearnTools("s", std::vector<ToolInfo>{learned}, true);
  ToolInfo own{.name = "note", .description = "Stores the note"};
  own.annotations = ToolAnnotations{.read_only = false};
  const ToolCall plain{
      .server = "s", .tool = "note", .arguments_json = R"({"id":"a"})"};
  ToolCall with = plain;
  with.definition = &own;
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(cache.Peek(plain).verdict.cacheable) << i;
    const Probe p = cache.Peek(with);
    EXPECT_FALSE(p.verdict.cacheable) << i;
    EXPECT_EQ(p.verdict.request_type, RequestType::kCommand) << i;
  }
  // Recorded under its own definition, the write invalidates.
  EXPECT_TRUE(
      cache.Record(plain, {.result_json = R"({"content":[]})"}).admitted);
  EXPECT_TRUE(cache.Peek(plain).would_hit);
  EXPECT_FALSE(cache.Record(with, {.result_json = R"({"content":[]})"})
                   .verdict.cacheable);
  EXPECT_FALSE(cache.Peek(plain).would_hit);
}

// Session 18 (attackV finding 2): the MCP methods the MCP face caches as
// declared calls (tools/list, ...) are no tool names for any other call: a
// /v1/record or a tools/call of that name can neither put an entry where a
// declared call looks nor read one stored there.
TEST_P(ToolCacheTest, AnMcpMethodsKeySpaceTakesOnlyDeclaredCalls) {
  const std::string forged =
      R"({"tools":[{"name":"put_doc","annotations":{"readOnlyHint":true}}],)"
      R"("resultType":"complete","ttlMs":600000,"cacheScope":"private"})";
  ToolCall plain{.server = "s",
                 .scope = "alice",
                 .tool = "tools/list",
                 .arguments_json = "{}"};
  RecordOutcome r = cache_->Record(plain, {.result_json = forged});
  EXPECT_FALSE(r.admitted);
  EXPECT_EQ(r.bypass_reason, "reserved_tool_name");
  EXPECT_EQ(r.verdict.reason, VerdictReason::kReservedToolName);
  ToolCall declared = plain;
  declared.declared = true;
  CallPlan p = cache_->Begin(declared, 1);
  ASSERT_EQ(p.action, CallAction::kForward) << "the forged list was served";
  EXPECT_FALSE(p.bypass);
  const std::string page =
      R"({"tools":[],"resultType":"complete","ttlMs":600000,"cacheScope":"private"})";
  EXPECT_TRUE(
      cache_
          ->Complete(p.ticket, {.result_json = page,
                                .declared = DeclaredHints{.ttl_seconds = 600}})
          .admitted);
  ASSERT_EQ(cache_->Begin(declared, 2).action, CallAction::kServe);
  // Stored by the declared call: no other call reads it.
  const Probe peek = cache_->Peek(plain);
  EXPECT_FALSE(peek.would_hit);
  EXPECT_EQ(peek.bypass_reason, "reserved_tool_name");
  p = cache_->Begin(plain, 3);
  EXPECT_EQ(p.action, CallAction::kForward);
  EXPECT_EQ(p.bypass_reason, "reserved_tool_name");
  (void)cache_->Complete(p.ticket, {.result_json = forged});
  EXPECT_EQ(*cache_->Begin(declared, 4).result_json, page);
}

// A cache over the same backing store with `scope: user` (Config::scope).
std::unique_ptr<ToolCache> UserScopedCache(const Clock* clock, Store* store) {
  Config config;
  config.policy = "lru";
  config.scope = SharingScope::kUser;
  auto made = NewToolCache(config, clock, store);
  EXPECT_TRUE(made.ok()) << made.status().message();
  if (!made.ok()) return nullptr;
  ToolInfo read{.name = "get_doc", .description = "Get a document"};
  read.annotations = ToolAnnotations{.read_only = true, .open_world = false};
  ToolInfo write{.name = "put_doc", .description = "Store a document"};
  write.annotations = ToolAnnotations{.read_only = false};
  std::vector<ToolInfo> tools = {read, write};
  (*made)->LearnTools("s", tools, true);
  return std::move(*made);
}

ToolCall ReadAs(std::string_view user, std::string_view scope = "") {
  return {.server = "s",
          .scope = scope,
          .tool = "get_doc",
          .arguments_json = "{}",
          .user = user};
}

TEST_P(ToolCacheTest, UserScopeNeverServesOneUsersResultToAnother) {
  std::unique_ptr<ToolCache> cache = UserScopedCache(&clock_, store_.get());
  ASSERT_NE(cache, nullptr);
  RecordOutcome rec = cache->Record(
      ReadAs("alice"), {.result_json = R"({"content":["alice's inbox"]})"});
  ASSERT_TRUE(rec.admitted);
  EXPECT_FALSE(cache->Peek(ReadAs("bob")).would_hit);
  CallPlan bob = cache->Begin(ReadAs("bob"), 1);
  EXPECT_EQ(bob.action, CallAction::kForward);
  EXPECT_FALSE(bob.bypass);
  (void)cache->Complete(bob.ticket, {.result_json = R"({"content":["bob"]})"});
  CallPlan alice = cache->Begin(ReadAs("alice"), 2);
  ASSERT_EQ(alice.action, CallAction::kServe);
  EXPECT_EQ(*alice.result_json, R"({"content":["alice's inbox"]})");
  CallPlan bob_again = cache->Begin(ReadAs("bob"), 3);
  ASSERT_EQ(bob_again.action, CallAction::kServe);
  EXPECT_EQ(*bob_again.result_json, R"({"content":["bob"]})");
}

TEST_P(ToolCacheTest, UserScopeJoinsOnlyTheSameUsersFlight) {
  std::unique_ptr<ToolCache> cache = UserScopedCache(&clock_, store_.get());
  ASSERT_NE(cache, nullptr);
  CallPlan alice = cache->Begin(ReadAs("alice"), 1);
  ASSERT_EQ(alice.action, CallAction::kForward);
  CallPlan bob = cache->Begin(ReadAs("bob"), 2);
  EXPECT_EQ(bob.action, CallAction::kForward);
  EXPECT_NE(bob.ticket, alice.ticket);
  CallPlan alice2 = cache->Begin(ReadAs("alice"), 3);
  EXPECT_EQ(alice2.action, CallAction::kWait);
  EXPECT_EQ(alice2.ticket, alice.ticket);
  Completion c = cache->Complete(alice.ticket, {.result_json = "{}"});
  EXPECT_EQ(c.waiters, (std::vector<WaiterId>{1, 3}));
}

TEST_P(ToolCacheTest, UserScopeScopeAndUserPairsNeverCollide) {
  std::unique_ptr<ToolCache> cache = UserScopedCache(&clock_, store_.get());
  ASSERT_NE(cache, nullptr);
  ASSERT_TRUE(cache->Record(ReadAs("bc", "a"), {.result_json = "{}"}).admitted);
  EXPECT_FALSE(cache->Peek(ReadAs("c", "ab")).would_hit);
  EXPECT_FALSE(cache->Peek(ReadAs("abc", "")).would_hit);
  EXPECT_FALSE(cache->Peek(ReadAs(std::string_view("bc\0", 3), "a")).would_hit);
  EXPECT_TRUE(cache->Peek(ReadAs("bc", "a")).would_hit);
}

TEST_P(ToolCacheTest, AServersOwnScopeOverridesTheGlobalOne) {
  Config config;
  config.policy = "lru";
  config.servers["mail"].scope = SharingScope::kUser;  // global: kGlobal
  auto made = NewToolCache(config, &clock_, store_.get());
  ASSERT_TRUE(made.ok()) << made.status().message();
  ToolCache& cache = **made;
  ToolInfo read{.name = "get_doc", .description = "Get a document"};
  read.annotations = ToolAnnotations{.read_only = true, .open_world = false};
  std::vector<ToolInfo> tools = {read};
  cache.LearnTools("mail", tools, true);
  cache.LearnTools("s", tools, true);
  ToolCall mail = ReadAs("alice");
  mail.server = "mail";
  ASSERT_TRUE(cache.Record(mail, {.result_json = "{}"}).admitted);
  mail.user = "bob";
  EXPECT_FALSE(cache.Peek(mail).would_hit);
  mail.user = "";
  EXPECT_EQ(cache.Peek(mail).bypass_reason, "user_required");
  // Server "s" keeps the global scope: users share its entries.
  ASSERT_TRUE(cache.Record(ReadAs("alice"), {.result_json = "{}"}).admitted);
  EXPECT_TRUE(cache.Peek(ReadAs("bob")).would_hit);
  EXPECT_TRUE(cache.Peek(ReadAs("")).would_hit);
}

TEST_P(ToolCacheTest, UserScopeCallWithoutUserIsNeverServedOrStored) {
  std::unique_ptr<ToolCache> cache = UserScopedCache(&clock_, store_.get());
  ASSERT_NE(cache, nullptr);
  ASSERT_TRUE(cache->Record(ReadAs("alice"), {.result_json = "{}"}).admitted);
  RecordOutcome rec = cache->Record(ReadAs(""), {.result_json = "{}"});
  EXPECT_FALSE(rec.admitted);
  EXPECT_EQ(rec.bypass_reason, "user_required");
  EXPECT_EQ(rec.verdict.reason, VerdictReason::kUserRequired);
  Probe probe = cache->Peek(ReadAs(""));
  EXPECT_FALSE(probe.would_hit);
  EXPECT_EQ(probe.bypass_reason, "user_required");
  CallPlan p = cache->Begin(ReadAs(""), 1);
  EXPECT_EQ(p.action, CallAction::kForward);
  EXPECT_TRUE(p.bypass);
  EXPECT_EQ(p.bypass_reason, "user_required");
  CallPlan q = cache->Begin(ReadAs(""), 2);
  EXPECT_TRUE(q.bypass);  // never joins the first either
  EXPECT_FALSE(cache->Complete(p.ticket, {.result_json = "{}"}).admitted);
  EXPECT_EQ(cache->Stats().bypasses.at("user_required"), 3u);
  // A write that names no user still invalidates (for every user).
  (void)cache->Record(
      {.server = "s", .tool = "put_doc", .arguments_json = "{}"},
      {.result_json = "{}"});
  EXPECT_FALSE(cache->Peek(ReadAs("alice")).would_hit);
}

TEST_P(ToolCacheTest, NullAbsentAndEmptyArgumentsAreOneEntry) {
  CallPlan first = cache_->Begin(Read("null"), 1);
  ASSERT_EQ(first.action, CallAction::kForward);
  (void)cache_->Complete(first.ticket, {.result_json = R"({"content":[]})"});
  for (std::string_view same : {"", "{}", " null "}) {
    EXPECT_EQ(cache_->Begin(Read(same), 2).action, CallAction::kServe)
        << "'" << same << "'";
  }
}

TEST_P(ToolCacheTest, CancelReportsLeadershipAndRemainingWaiters) {
  CallPlan lead = cache_->Begin(Read(), 1);
  CallPlan follow = cache_->Begin(Read(), 2);
  ASSERT_EQ(follow.action, CallAction::kWait);
  CancelOutcome c = cache_->Cancel(1);
  EXPECT_TRUE(c.found);
  EXPECT_TRUE(c.was_leader);
  EXPECT_EQ(c.others_waiting, 1u);
  EXPECT_FALSE(cache_->Cancel(1).found);
  Completion done =
      cache_->Complete(lead.ticket, {.result_json = R"({"content":[]})"});
  EXPECT_EQ(done.waiters, std::vector<WaiterId>{2});
}

TEST_P(ToolCacheTest, AnUnsharedFlightIsLeftByItsFollowersAndNeverStored) {
  CallPlan lead = cache_->Begin(Read(), 1);
  ASSERT_EQ(cache_->Begin(Read(), 2).action, CallAction::kWait);
  ASSERT_EQ(cache_->Begin(Read(), 3).action, CallAction::kWait);
  // The answer now depends on input outside the key (an MCP server asked
  // the leader's client): the followers are handed back, once.
  EXPECT_EQ(cache_->Unshare(lead.ticket, "server_requested_input"),
            (std::vector<WaiterId>{2, 3}));
  EXPECT_THAT(cache_->Unshare(lead.ticket, "server_requested_input"),
              ::testing::IsEmpty());
  EXPECT_FALSE(cache_->Cancel(2).found) << "no longer waiting on the flight";
  // A later identical call joins nothing: it goes upstream itself.
  CallPlan later = cache_->Begin(Read(), 4);
  EXPECT_EQ(later.action, CallAction::kForward);
  EXPECT_FALSE(later.bypass);
  Completion done =
      cache_->Complete(lead.ticket, {.result_json = R"({"content":[1]})"});
  EXPECT_EQ(done.waiters, std::vector<WaiterId>{1});
  EXPECT_FALSE(done.admitted);
  (void)cache_->Complete(later.ticket, {.is_error = true});
  EXPECT_EQ(cache_->Begin(Read(), 5).action, CallAction::kForward)
      << "the unshared answer was not stored";
  const ToolCacheStats st = cache_->Stats();
  EXPECT_EQ(st.bypasses.at("server_requested_input"), 1u);
  EXPECT_EQ(st.not_admitted, 1u) << "only the error";
  // A bypass has nothing to unshare.
  CallPlan write = cache_->Begin(
      {.server = "s", .tool = "put_doc", .arguments_json = "{}"}, 6);
  EXPECT_THAT(cache_->Unshare(write.ticket, "server_requested_input"),
              ::testing::IsEmpty());
  EXPECT_EQ(cache_->Stats().bypasses.at("server_requested_input"), 1u);
}

TEST_P(ToolCacheTest,
       ToolsRefreshingBypassesEveryCallUntilTheNewListIsLearned) {
  CallPlan first = cache_->Begin(Read(), 1);
  ASSERT_TRUE(
      cache_->Complete(first.ticket, {.result_json = R"({"content":[]})"})
          .admitted);
  cache_->ToolsRefreshing("s");
  CallPlan during = cache_->Begin(Read(), 2);
  EXPECT_EQ(during.action, CallAction::kForward) << "the entry was dropped";
  EXPECT_TRUE(during.bypass);
  EXPECT_EQ(during.bypass_reason, "tools_refreshing");
  // A call made during the refresh is a possible write: when it completes
  // after the new list arrived, it still invalidates.
  ToolInfo read{.name = "get_doc"};
  read.annotations = ToolAnnotations{.read_only = true, .open_world = false};
  std::vector<ToolInfo> tools = {read};
  cache_->LearnTools("s", tools, /*replace=*/true);
  CallPlan after = cache_->Begin(Read(), 3);
  EXPECT_FALSE(after.bypass);
  EXPECT_TRUE(
      cache_->Complete(after.ticket, {.result_json = R"({"content":[]})"})
          .admitted);
  (void)cache_->Complete(during.ticket, {.result_json = R"({"content":[]})"});
  EXPECT_EQ(cache_->Begin(Read(), 4).action, CallAction::kForward);
  EXPECT_EQ(cache_->Stats().bypasses.at("tools_refreshing"), 1u);
}

TEST_P(ToolCacheTest, TaskAugmentedWriteBlocksTheServerUntilCompleted) {
  CallPlan r1 = cache_->Begin(Read(), 1);
  ASSERT_TRUE(cache_->Complete(r1.ticket, {.result_json = R"({"content":[]})"})
                  .admitted);
  CallPlan w = cache_->Begin({.server = "s",
                              .tool = "put_doc",
                              .arguments_json = R"({"id":1})",
                              .task_augmented = true},
                             2);
  EXPECT_TRUE(w.task_write);
  for (WaiterId id = 3; id < 5; ++id) {
    CallPlan r = cache_->Begin(Read(), id);
    EXPECT_EQ(r.action, CallAction::kForward);
    EXPECT_EQ(r.bypass_reason, "task_in_progress");
    EXPECT_FALSE(
        cache_->Complete(r.ticket, {.result_json = R"({"content":[]})"})
            .admitted);
  }
  // Another server is not affected.
  EXPECT_FALSE(
      cache_->Begin({.server = "other", .tool = "get_doc"}, 9).bypass_reason ==
      "task_in_progress");
  (void)cache_->Complete(w.ticket, {.complete = false});
  CallPlan r5 = cache_->Begin(Read(), 5);
  EXPECT_FALSE(r5.bypass);
  EXPECT_TRUE(cache_->Complete(r5.ticket, {.result_json = R"({"content":[]})"})
                  .admitted);
  // A task-augmented read is only not cached; it blocks nothing.
  CallPlan tr = cache_->Begin({.server = "s",
                               .tool = "get_doc",
                               .arguments_json = R"({"id":2})",
                               .task_augmented = true},
                              6);
  EXPECT_FALSE(tr.task_write);
  EXPECT_EQ(cache_->Begin(Read(), 7).action, CallAction::kServe);
}

TEST(ToolCacheResourceTest, ResourceScopeNormalizesPathsAndFileUris) {
  ManualClock clock{0};
  Config config;
  config.policy = "lru";
  config.invalidation = InvalidationScope::kResource;
  auto made = NewToolCache(config, &clock);
  ASSERT_TRUE(made.ok());
  ToolCache& cache = **made;
  ToolInfo read{.name = "read"};
  read.annotations = ToolAnnotations{.read_only = true, .open_world = false};
  std::vector<ToolInfo> tools = {read};
  cache.LearnTools("s", tools, true);
  WaiterId next = 1;
  auto store = [&](std::string args) {
    CallPlan p = cache.Begin(
        {.server = "s", .tool = "read", .arguments_json = args}, next++);
    if (p.action == CallAction::kForward) {
      (void)cache.Complete(p.ticket, {.result_json = R"({"content":[]})"});
    }
  };
  auto cached = [&](std::string args) {
    return cache
               .Begin({.server = "s", .tool = "read", .arguments_json = args},
                      next++)
               .action == CallAction::kServe;
  };
  store(R"({"path":"/d/../d/y"})");
  store(R"({"path":"/d/x/"})");
  store(R"({"uri":"file:///e/a%20b"})");
  store(R"({"path":"/f"})");
  cache.Invalidate("s", "/d/y");
  EXPECT_FALSE(cached(R"({"path":"/d/../d/y"})"));
  EXPECT_TRUE(cached(R"({"path":"/d/x/"})"));
  cache.Invalidate("s", "file://localhost/d/./x");
  EXPECT_FALSE(cached(R"({"path":"/d/x/"})"));
  EXPECT_TRUE(cached(R"({"uri":"file:///e/a%20b"})"));
  cache.Invalidate("s", "/e/a b");
  EXPECT_FALSE(cached(R"({"uri":"file:///e/a%20b"})"));
  EXPECT_TRUE(cached(R"({"path":"/f"})"));
  cache.Invalidate("s", "file://otherhost/f");  // no local path: everything
  EXPECT_FALSE(cached(R"({"path":"/f"})"));
}

TEST(ToolCacheResourceTest, RelativePathsCouldBeAnyPathOfTheServer) {
  // server-filesystem resolves write_file {"path":"a.txt"} against its
  // allowed folder: the proxy cannot, so relative paths match everything.
  ManualClock clock{0};
  Config config;
  config.policy = "lru";
  config.invalidation = InvalidationScope::kResource;
  auto made = NewToolCache(config, &clock);
  ASSERT_TRUE(made.ok());
  ToolCache& cache = **made;
  ToolInfo read{.name = "read"};
  read.annotations = ToolAnnotations{.read_only = true, .open_world = false};
  ToolInfo write{.name = "write"};
  write.annotations = ToolAnnotations{.read_only = false};
  std::vector<ToolInfo> tools = {read, write};
  cache.LearnTools("s", tools, true);
  WaiterId next = 1;
  auto call = [&](std::string tool, std::string args) {
    CallPlan p = cache.Begin(
        {.server = "s", .tool = tool, .arguments_json = args}, next++);
    if (p.action == CallAction::kForward) {
      (void)cache.Complete(p.ticket, {.result_json = R"({"content":[]})"});
    }
    return p.action;
  };
  // Served from the store? (A miss is completed, so it is stored again.)
  auto cached = [&](std::string args) {
    return call("read", args) == CallAction::kServe;
  };
  // A relative write drops the absolute read it may have changed.
  call("read", R"({"path":"/srv/a.txt"})");
  call("read", R"({"path":"/other/b"})");
  ASSERT_TRUE(cached(R"({"path":"/srv/a.txt"})"));
  call("write", R"({"path":"a.txt","content":"x"})");
  EXPECT_FALSE(cached(R"({"path":"/srv/a.txt"})"));
  EXPECT_FALSE(cached(R"({"path":"/other/b"})"));
  // A read keyed by a relative (or home-relative) path is dropped by any
  // write of the server; an unrelated absolute read is not.
  call("read", R"({"path":"b.txt"})");
  call("read", R"({"path":"~/notes"})");
  call("read", R"({"path":"/other/b"})");
  call("write", R"({"path":"/srv/z","content":"x"})");
  EXPECT_FALSE(cached(R"({"path":"b.txt"})"));
  EXPECT_FALSE(cached(R"({"path":"~/notes"})"));
  EXPECT_TRUE(cached(R"({"path":"/other/b"})"));
  // Same for an invalidation target.
  cache.Invalidate("s", "./c");
  EXPECT_FALSE(cached(R"({"path":"/other/b"})"));
}

TEST(ToolCacheResourceTest, ResourceArgumentsAreReadAtTheTopLevelOnly) {
  ManualClock clock{0};
  Config config;
  config.policy = "lru";
  config.invalidation = InvalidationScope::kResource;
  auto made = NewToolCache(config, &clock);
  ASSERT_TRUE(made.ok());
  ToolCache& cache = **made;
  ToolInfo read{.name = "read"};
  read.annotations = ToolAnnotations{.read_only = true, .open_world = false};
  ToolInfo write{.name = "write"};
  write.annotations = ToolAnnotations{.read_only = false};
  std::vector<ToolInfo> tools = {read, write};
  cache.LearnTools("s", tools, true);
  WaiterId next = 1;
  auto call = [&](std::string tool, std::string args) {
    CallPlan p = cache.Begin(
        {.server = "s", .tool = tool, .arguments_json = args}, next++);
    if (p.action == CallAction::kForward) {
      (void)cache.Complete(p.ticket, {.result_json = R"({"content":[]})"});
    }
    return p.action;
  };
  call("read", R"({"path":"/a"})");
  call("read", R"({"path":"/b"})");
  call("read", R"({"path":"/c"})");
  // A write naming /a (escaped member name, an array of paths, nested
  // "path" members and a large content that are not resources).
  const std::string content(1 << 20, 'z');
  call("write",
       R"({"opts":{"path":"/b"},"content":")" + content +
           R"(","list":[{"path":"/c"}],"p\u0061ths":["/x", 7, "/a"]})");
  EXPECT_EQ(call("read", R"({"path":"/a"})"), CallAction::kForward);
  EXPECT_EQ(call("read", R"({"path":"/b"})"), CallAction::kServe);
  EXPECT_EQ(call("read", R"({"path":"/c"})"), CallAction::kServe);
}

TEST(ToolCacheBypassTest, AFaceBypassNeverServesNorJoinsButStillInvalidates) {
  ManualClock clock{0};
  Config config;
  config.policy = "lru";
  auto made = NewToolCache(config, &clock);
  ASSERT_TRUE(made.ok());
  ToolCache& cache = **made;
  ToolInfo read{.name = "read"};
  read.annotations = ToolAnnotations{.read_only = true, .open_world = false};
  ToolInfo write{.name = "write"};
  write.annotations = ToolAnnotations{.read_only = false};
  std::vector<ToolInfo> tools = {read, write};
  cache.LearnTools("s", tools, true);
  const ToolCall odd{.server = "s",
                     .tool = "read",
                     .arguments_json = R"({"p":1})",
                     .bypass_reason = "nonstandard_id"};
  const ToolCall plain{
      .server = "s", .tool = "read", .arguments_json = R"({"p":1})"};
  // Its flight cannot be joined...
  CallPlan a = cache.Begin(odd, 1);
  EXPECT_EQ(a.action, CallAction::kForward);
  EXPECT_TRUE(a.bypass);
  EXPECT_EQ(a.bypass_reason, "nonstandard_id");
  CallPlan b = cache.Begin(plain, 2);
  EXPECT_EQ(b.action, CallAction::kForward) << "did not join the odd flight";
  EXPECT_FALSE(b.bypass);
  // ...and its result is not stored.
  EXPECT_FALSE(
      cache.Complete(a.ticket, {.result_json = R"({"content":[]})"}).admitted);
  EXPECT_TRUE(
      cache.Complete(b.ticket, {.result_json = R"({"content":[]})"}).admitted);
  // A stored entry is not served to it.
  CallPlan c = cache.Begin(odd, 3);
  EXPECT_EQ(c.action, CallAction::kForward);
  (void)cache.Complete(c.ticket, {});
  EXPECT_EQ(cache.Begin(plain, 4).action, CallAction::kServe);
  // A write under a face bypass still invalidates.
  CallPlan w = cache.Begin({.server = "s",
                            .tool = "write",
                            .arguments_json = "{}",
                            .bypass_reason = "nonstandard_id"},
                           5);
  (void)cache.Complete(w.ticket, {});
  EXPECT_EQ(cache.Begin(plain, 6).action, CallAction::kForward);
  EXPECT_EQ(cache.Stats().bypasses.at("nonstandard_id"), 2u);
}

TEST(ToolCacheConfigTest, BadPolicyConfigurationNamesTheFileLine) {
  ManualClock clock{0};
  Result<Config> typo =
      ParseConfig("capacityBytes: 1MiB\npolicy: vaacc\n", "c.yaml");
  ASSERT_TRUE(typo.ok());
  auto made = NewToolCache(*typo, &clock);
  ASSERT_FALSE(made.ok());
  EXPECT_THAT(made.status().message(),
              ::testing::StartsWith(
                  "c.yaml:2: unknown policy 'vaacc' (did you mean 'vaac'?)"));
  Result<Config> knob =
      ParseConfig("policy: vaac\npolicyParams:\n  lamda1: 0.5\n", "c.yaml");
  ASSERT_TRUE(knob.ok());
  made = NewToolCache(*knob, &clock);
  ASSERT_FALSE(made.ok());
  EXPECT_THAT(made.status().message(),
              ::testing::StartsWith("c.yaml:3: policy 'vaac' has no knob "
                                    "'lamda1' (did you mean 'lambda1'?)"));
  Result<Config> offline = ParseConfig("policy: belady\n", "c.yaml");
  ASSERT_TRUE(offline.ok());
  EXPECT_THAT(NewToolCache(*offline, &clock).status().message(),
              ::testing::HasSubstr("c.yaml:1: policy 'belady' is a simulator"));
}

TEST(ToolCacheConfigTest, OneResultMayUseTheWholeBudget) {
  // With 8 shards a 128 MiB cache could not hold a 20 MiB result (16 MiB
  // per shard); the proxy's cache is one shard.
  ManualClock clock{0};
  Config config;
  config.policy = "lru";
  config.capacity_bytes = uint64_t{128} << 20;
  auto made = NewToolCache(config, &clock);
  ASSERT_TRUE(made.ok());
  ToolInfo read{.name = "get_doc"};
  read.annotations = ToolAnnotations{.read_only = true, .open_world = false};
  std::vector<ToolInfo> tools = {read};
  (*made)->LearnTools("s", tools, true);
  CallPlan p = (*made)->Begin({.server = "s", .tool = "get_doc"}, 1);
  std::string big = R"({"content":[{"type":"text","text":")" +
                    std::string(20u << 20, 'x') + R"("}]})";
  EXPECT_TRUE((*made)->Complete(p.ticket, {.result_json = big}).admitted);
  EXPECT_EQ((*made)->Begin({.server = "s", .tool = "get_doc"}, 2).action,
            CallAction::kServe);
}

// Protocol-declared cacheability (ToolCall::declared; MCP 2026-07-28's
// ttlMs / cacheScope): the result's hints decide TTL and sharing, not the
// classifier ("tools/list" is no tool it knows).
TEST_P(ToolCacheTest, DeclaredResultsFollowTheServersHints) {
  const auto list = [](std::string_view scope, std::string_view args = "{}") {
    return ToolCall{.server = "s",
                    .scope = scope,
                    .tool = "tools/list",
                    .arguments_json = args,
                    .declared = true};
  };
  const std::string page =
      R"({"tools":[],"ttlMs":10000,"cacheScope":"private"})";
  CallPlan p = cache_->Begin(list("alice"), 1);
  ASSERT_EQ(p.action, CallAction::kForward);
  EXPECT_FALSE(p.bypass);
  EXPECT_EQ(p.verdict.reason, VerdictReason::kDeclaredByServer);
  Completion c = cache_->Complete(
      p.ticket,
      {.result_json = page,
       .declared = DeclaredHints{.ttl_seconds = 10, .shared = false}});
  EXPECT_TRUE(c.admitted);
  p = cache_->Begin(list("alice"), 2);
  ASSERT_EQ(p.action, CallAction::kServe);
  EXPECT_EQ(*p.result_json, page);
  // Private: another scope does not see it.
  p = cache_->Begin(list("bob"), 3);
  ASSERT_EQ(p.action, CallAction::kForward);
  // A result that declares no TTL is not stored.
  c = cache_->Complete(p.ticket, {.result_json = page});
  EXPECT_FALSE(c.admitted);
  EXPECT_EQ(c.reason, VerdictReason::kDeclaredByServer);
  EXPECT_EQ(cache_->Begin(list("bob"), 4).action, CallAction::kForward);
  // Public: stored once, served to every scope.
  const std::string read =
      R"({"contents":[],"ttlMs":5000,"cacheScope":"public"})";
  p = cache_->Begin(list("alice", R"({"uri":"test://r"})"), 5);
  ASSERT_EQ(p.action, CallAction::kForward);
  EXPECT_TRUE(
      cache_
          ->Complete(p.ticket, {.result_json = read,
                                .declared = DeclaredHints{.ttl_seconds = 5,
                                                          .shared = true}})
          .admitted);
  p = cache_->Begin(list("carol", R"({"uri":"test://r"})"), 6);
  ASSERT_EQ(p.action, CallAction::kServe);
  EXPECT_EQ(*p.result_json, read);
  // The TTL is the server's (Redis expires on its own clock, not the test's).
  if (GetParam() != Backing::kRedis) {
    clock_.Advance(6);
    EXPECT_EQ(cache_->Begin(list("carol", R"({"uri":"test://r"})"), 7).action,
              CallAction::kForward);
    EXPECT_EQ(cache_->Begin(list("alice"), 8).action, CallAction::kServe);
  }
  // A write of the server drops declared entries too.
  CallPlan w = cache_->Begin(
      {.server = "s", .tool = "put_doc", .arguments_json = R"({"id":1})"}, 9);
  (void)cache_->Complete(w.ticket, {.result_json = R"({"content":[]})"});
  EXPECT_EQ(cache_->Begin(list("alice"), 10).action, CallAction::kForward);
}

// A private answer of the global scope "" (the default `toolcache mcp`) is
// not a public one: before, a public entry lived in scope "" too, so every
// other scope's public lookup read the private entry (attackK finding 1).
TEST_P(ToolCacheTest, DeclaredPrivateEntryOfTheGlobalScopeIsNotPublic) {
  const auto read = [](std::string_view scope, std::string_view uri) {
    return ToolCall{.server = "s",
                    .scope = scope,
                    .tool = "resources/read",
                    .arguments_json = uri,
                    .declared = true};
  };
  const std::string mine =
      R"({"contents":[{"text":"alice-secret"}],"cacheScope":"private"})";
  CallPlan p = cache_->Begin(read("", R"({"uri":"note://a"})"), 1);
  ASSERT_EQ(p.action, CallAction::kForward);
  ASSERT_TRUE(
      cache_
          ->Complete(p.ticket, {.result_json = mine,
                                .declared = DeclaredHints{.ttl_seconds = 60,
                                                          .shared = false}})
          .admitted);
  // Its own scope is served it; no other scope is.
  EXPECT_EQ(cache_->Begin(read("", R"({"uri":"note://a"})"), 2).action,
            CallAction::kServe);
  p = cache_->Begin(read("bob", R"({"uri":"note://a"})"), 3);
  ASSERT_EQ(p.action, CallAction::kForward);
  (void)cache_->Complete(p.ticket, {.result_json = R"({"contents":[]})"});
  // A public answer written from scope "" is still shared with every scope,
  // and one written from "bob" reaches scope "".
  const std::string open =
      R"({"contents":[{"text":"hello"}],"cacheScope":"public"})";
  for (const auto& [writer, reader] :
       {std::pair<std::string, std::string>{"", "bob"}, {"bob", ""}}) {
    const std::string uri = R"({"uri":"note://)" + writer + R"(pub"})";
    p = cache_->Begin(read(writer, uri), 4);
    ASSERT_EQ(p.action, CallAction::kForward);
    ASSERT_TRUE(
        cache_
            ->Complete(p.ticket, {.result_json = open,
                                  .declared = DeclaredHints{.ttl_seconds = 60,
                                                            .shared = true}})
            .admitted);
    p = cache_->Begin(read(reader, uri), 5);
    ASSERT_EQ(p.action, CallAction::kServe) << "written by '" << writer << "'";
    EXPECT_EQ(*p.result_json, open);
  }
}

// An abandoned write (ToolCache::Abandon: the client cancelled it, the
// server may still write and never answer): what was stored while it ran is
// dropped, and its server is neither served nor stored until the face
// completes it, which invalidates again (attackK finding 2).
TEST_P(ToolCacheTest, AnAbandonedWriteKeepsItsServerUncachedUntilCompleted) {
  const std::string kDoc = R"({"content":[]})";
  const ToolCall read = Read();
  ToolInfo get{.name = "get_doc", .description = "Get a document"};
  get.annotations = ToolAnnotations{.read_only = true, .open_world = false};
  const std::vector<ToolInfo> tools = {get};
  cache_->LearnTools("t", tools, true);
  const ToolCall other{
      .server = "t", .tool = "get_doc", .arguments_json = R"({"id":1})"};
  CallPlan w = cache_->Begin(
      {.server = "s", .tool = "put_doc", .arguments_json = R"({"id":1})"}, 1);
  ASSERT_EQ(w.action, CallAction::kForward);
  CallPlan r = cache_->Begin(read, 2);
  ASSERT_EQ(r.action, CallAction::kForward);
  ASSERT_TRUE(cache_->Complete(r.ticket, {.result_json = kDoc}).admitted);
  CallPlan o = cache_->Begin(other, 3);
  ASSERT_TRUE(cache_->Complete(o.ticket, {.result_json = kDoc}).admitted);
  cache_->Abandon(w.ticket);
  r = cache_->Begin(read, 4);
  ASSERT_EQ(r.action, CallAction::kForward);
  EXPECT_TRUE(r.bypass);
  EXPECT_EQ(r.bypass_reason, "write_cancelled");
  (void)cache_->Complete(r.ticket, {.result_json = kDoc});
  // Another server is not concerned.
  EXPECT_EQ(cache_->Begin(other, 5).action, CallAction::kServe);
  (void)cache_->Complete(w.ticket, {.is_error = true});
  r = cache_->Begin(read, 6);
  ASSERT_EQ(r.action, CallAction::kForward);
  EXPECT_FALSE(r.bypass);
  ASSERT_TRUE(cache_->Complete(r.ticket, {.result_json = kDoc}).admitted);
  EXPECT_EQ(cache_->Begin(read, 7).action, CallAction::kServe);
  // A read is never abandoned into blocking its server.
  CallPlan q = cache_->Begin(
      {.server = "s", .tool = "get_doc", .arguments_json = R"({"id":2})"}, 8);
  cache_->Abandon(q.ticket);
  EXPECT_EQ(cache_->Begin(read, 9).action, CallAction::kServe);
}

}  // namespace
}  // namespace toolcache
