// CacheService driven without sockets: the /v1/ API, tenancy, single-flight
// waits and leases (timers captured and fired by the test), bad input,
// statistics and the OpenAPI document.
#include "src/serve/service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "toolcache/config.h"
#include "toolcache/tool_cache.h"

namespace toolcache::serve {
namespace {

using nlohmann::json;

constexpr std::string_view kConfig = R"(
policy: lru
tools:
  get_doc: {requestType: INFORMATIONAL, ttlSeconds: 600}
  put_doc: {requestType: COMMAND}
)";

class ServiceTest : public ::testing::Test {
 protected:
  void Make(std::vector<Tenant> tenants, std::string_view config_text = kConfig,
            size_t max_open_tickets = 10000) {
    Result<Config> config = ParseConfig(config_text, "test.yaml");
    ASSERT_TRUE(config.ok()) << config.status().message();
    auto made = NewToolCache(*config, &clock_);
    ASSERT_TRUE(made.ok()) << made.status().message();
    service_.reset();
    cache_ = std::move(*made);
    ServiceOptions o;
    o.cache = cache_.get();
    o.clock = &clock_;
    registry_ = std::make_unique<metrics::Registry>();
    o.registry = registry_.get();
    o.tenants = std::move(tenants);
    o.max_wait_seconds = 10;
    o.lease_seconds = 100;
    o.max_open_tickets = max_open_tickets;
    o.admin_token = admin_token_;
    service_ = std::make_unique<CacheService>(std::move(o));
  }
  void SetUp() override { Make({}); }

  struct Deferred {
    std::optional<Reply> reply;
  };

  // Sends a request; a deferred reply lands in `*deferred` when given.
  std::optional<Reply> Send(std::string method, std::string path,
                            std::string body, std::string token = "",
                            std::shared_ptr<Deferred> deferred = nullptr,
                            std::string origin = "") {
    http::Request r;
    r.method = std::move(method);
    r.target = std::move(path);
    r.body = std::move(body);
    if (!token.empty())
      r.headers.push_back({"Authorization", "Bearer " + token});
    if (!origin.empty()) r.headers.push_back({"Origin", origin});
    if (r.method == "POST") {
      r.headers.push_back({"Content-Type", "application/json"});
    }
    RequestContext ctx;
    ctx.after = [this](double s, std::function<void()> f) {
      timers_.push_back({s, std::move(f)});
    };
    ctx.on_gone = [this](std::function<void()> f) {
      gone_.push_back(std::move(f));
    };
    ctx.later = [deferred](Reply rep) {
      ASSERT_NE(deferred, nullptr) << "a reply was deferred unexpectedly";
      ASSERT_FALSE(deferred->reply.has_value()) << "answered twice";
      deferred->reply = std::move(rep);
    };
    return service_->Handle(r, ctx);
  }
  json Post(std::string path, const json& body, std::string token = "",
            int want_status = 200) {
    std::optional<Reply> r = Send("POST", path, body.dump(), token);
    EXPECT_TRUE(r.has_value());
    if (!r) return json();
    EXPECT_EQ(r->status, want_status) << path << " " << r->body;
    EXPECT_EQ(r->content_type, "application/json");
    return json::parse(r->body);
  }
  static json Call(std::string tool, json args) {
    return {{"server", "docs"},
            {"tool", std::move(tool)},
            {"arguments", std::move(args)}};
  }
  static json WithResult(json call, json result, double latency = 0.5) {
    call["result"] = std::move(result);
    call["latencySeconds"] = latency;
    return call;
  }

  std::string admin_token_;  // ServiceOptions::admin_token of Make
  ManualClock clock_{0};
  std::unique_ptr<metrics::Registry> registry_;
  std::unique_ptr<ToolCache> cache_;
  std::unique_ptr<CacheService> service_;
  std::vector<std::pair<double, std::function<void()>>> timers_;
  std::vector<std::function<void()>> gone_;
};

TEST_F(ServiceTest, LookupMissesThenRecordThenHitsWithTheSameResult) {
  json miss = Post("/v1/lookup", Call("get_doc", {{"id", 1}}));
  EXPECT_EQ(miss["hit"], false);
  EXPECT_EQ(miss["cacheable"], true);
  EXPECT_EQ(miss["reason"], "miss");
  EXPECT_EQ(miss["verdict"]["requestType"], "INFORMATIONAL");
  EXPECT_EQ(miss["verdict"]["ttlSeconds"], 600);

  const json result = {{"content", {{{"type", "text"}, {"text", "é \"q\""}}}}};
  json rec =
      Post("/v1/record", WithResult(Call("get_doc", {{"id", 1}}), result));
  EXPECT_EQ(rec["admitted"], true);

  json hit = Post("/v1/lookup", Call("get_doc", {{"id", 1}}));
  EXPECT_EQ(hit["hit"], true);
  EXPECT_EQ(hit["result"], result);
  // Other arguments are another entry.
  EXPECT_EQ(Post("/v1/lookup", Call("get_doc", {{"id", 2}}))["hit"], false);

  json stats = json::parse(service_->StatsJson());
  EXPECT_EQ(stats["totals"]["calls"], 3);
  EXPECT_EQ(stats["totals"]["hits"], 1);
  EXPECT_EQ(stats["totals"]["misses"], 2);
  EXPECT_DOUBLE_EQ(stats["totals"]["savedSeconds"].get<double>(), 0.5);
  ASSERT_EQ(stats["tools"].size(), 1u);
  EXPECT_EQ(stats["tools"][0]["tool"], "get_doc");
  EXPECT_EQ(stats["tools"][0]["hits"], 1);
}

// The arguments reach the engine as sent (whitespace included) and the
// key's canonicalizer reads them: spacing, member order and number
// spelling never split an entry, and a hit's counters and body stay right.
TEST_F(ServiceTest, ArgumentsAsSentHitTheEntryOfTheirCanonicalForm) {
  Post("/v1/record",
       WithResult(Call("get_doc", {{"id", 1}, {"q", "a b"}}), {{"v", 1}}));
  const std::string spaced =
      "{ \"server\" : \"docs\", \"tool\": \"get_doc\",\n \"arguments\" :"
      " {\t\"q\" : \"a b\" ,\r\n \"id\" : 1.0 } }";
  std::optional<Reply> r = Send("POST", "/v1/lookup", spaced);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 200) << r->body;
  json hit = json::parse(r->body);
  EXPECT_EQ(hit["hit"], true) << r->body;
  EXPECT_EQ(hit["result"], json({{"v", 1}}));
  // The same text with another value is a different call.
  std::string other = spaced;
  other.replace(other.find("1.0"), 3, "2");
  r = Send("POST", "/v1/lookup", other);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(json::parse(r->body)["hit"], false) << r->body;
}

TEST_F(ServiceTest, NonCacheableCallsReportTheirBypassReason) {
  json w = Post("/v1/lookup", Call("put_doc", {{"id", 1}}));
  EXPECT_EQ(w["hit"], false);
  EXPECT_EQ(w["cacheable"], false);
  EXPECT_EQ(w["reason"], "command");
  json e = Post("/v1/explain", Call("get_doc", {{"id", 1}}));
  EXPECT_EQ(e["cacheable"], true);
  EXPECT_EQ(e["ttlSeconds"], 600);
  EXPECT_EQ(e["cached"], false);
  json stats = json::parse(service_->StatsJson());
  EXPECT_EQ(stats["bypassesByReason"]["command"], 1);
}

TEST_F(ServiceTest, ExplainReportsThePolicysValueScoreOfACachedEntry) {
  // GDSF ranks entries by H = L + F * C / S: a cached entry has a positive
  // score, an uncached call none.
  std::string gdsf(kConfig);
  gdsf.replace(gdsf.find("policy: lru"), 11, "policy: gdsf");
  Make({}, gdsf);
  EXPECT_TRUE(Post("/v1/explain", Call("get_doc", {{"id", 1}}))["valueScore"]
                  .is_null());
  Post("/v1/record",
       WithResult(Call("get_doc", {{"id", 1}}), {{"v", "v1"}}, 2.0));
  json e = Post("/v1/explain", Call("get_doc", {{"id", 1}}));
  ASSERT_EQ(e["cached"], true);
  ASSERT_TRUE(e["valueScore"].is_number()) << e.dump();
  const double score = e["valueScore"].get<double>();
  EXPECT_GT(score, 0);
  // A cheaper call of the same size scores lower (C halves with latency).
  Post("/v1/record",
       WithResult(Call("get_doc", {{"id", 2}}), {{"v", "v2"}}, 1.0));
  json cheaper = Post("/v1/explain", Call("get_doc", {{"id", 2}}));
  // (JSON numbers carry 6 significant digits.)
  EXPECT_NEAR(cheaper["valueScore"].get<double>(), score / 2, score * 1e-5);
}

TEST_F(ServiceTest, ExplainHasNoValueScoreUnderARecencyPolicy) {
  Post("/v1/record", WithResult(Call("get_doc", {{"id", 1}}), {{"v", "v1"}}));
  json e = Post("/v1/explain", Call("get_doc", {{"id", 1}}));
  ASSERT_EQ(e["cached"], true);
  EXPECT_TRUE(e["valueScore"].is_null()) << e.dump();
}

TEST_F(ServiceTest, RecordedWriteInvalidatesTheServerAndIsLogged) {
  Post("/v1/record", WithResult(Call("get_doc", {{"id", 1}}), {{"v", "v1"}}));
  ASSERT_EQ(Post("/v1/lookup", Call("get_doc", {{"id", 1}}))["hit"], true);
  json w = Post("/v1/record",
                WithResult(Call("put_doc", {{"id", 1}}), {{"v", "ok"}}));
  EXPECT_EQ(w["cacheable"], false);
  EXPECT_EQ(Post("/v1/lookup", Call("get_doc", {{"id", 1}}))["hit"], false);
  json stats = json::parse(service_->StatsJson());
  ASSERT_FALSE(stats["recentInvalidations"].empty());
  EXPECT_EQ(stats["recentInvalidations"][0]["cause"], "write");
  EXPECT_EQ(stats["recentInvalidations"][0]["server"], "docs");
}

TEST_F(ServiceTest, InvalidateDropsTheServersEntries) {
  Post("/v1/record", WithResult(Call("get_doc", {{"id", 1}}), {{"v", "v1"}}));
  json inv = Post("/v1/invalidate", {{"server", "docs"}});
  EXPECT_EQ(inv["entriesDropped"], 1);
  EXPECT_EQ(Post("/v1/lookup", Call("get_doc", {{"id", 1}}))["hit"], false);
  EXPECT_EQ(Post("/v1/invalidate", json::object(), "", 400)["error"]["code"],
            "bad_request");
}

// Session 18: `entriesDropped` counted every tenant's entries, so bob
// learned whether alice had the server's (or a resource's) reads cached.
// The reach stays every tenant's; the count is the caller's own.
TEST_F(ServiceTest, InvalidateCountsOnlyTheCallersOwnEntries) {
  Make({{"alice", "tok-a"}, {"bob", "tok-b"}});
  const json one = Call("get_doc", {{"id", 1}}),
             two = Call("get_doc", {{"id", 2}});
  Post("/v1/record", WithResult(one, {{"v", "a1"}}), "tok-a");
  Post("/v1/record", WithResult(two, {{"v", "a2"}}), "tok-a");
  EXPECT_EQ(
      Post("/v1/invalidate", {{"server", "docs"}}, "tok-b")["entriesDropped"],
      0)
      << "bob learned that alice had docs cached";
  EXPECT_EQ(Post("/v1/lookup", one, "tok-a")["hit"], false)
      << "alice's entry survived bob's invalidation";
  EXPECT_EQ(Post("/v1/lookup", two, "tok-a")["hit"], false);
  Post("/v1/record", WithResult(one, {{"v", "a1"}}), "tok-a");
  Post("/v1/record", WithResult(one, {{"v", "b1"}}), "tok-b");
  Post("/v1/record", WithResult(two, {{"v", "b2"}}), "tok-b");
  EXPECT_EQ(
      Post("/v1/invalidate", {{"server", "docs"}}, "tok-a")["entriesDropped"],
      1);
  EXPECT_EQ(Post("/v1/lookup", two, "tok-b")["hit"], false);
  // Under `scope: user` a tenant's users' entries are the tenant's.
  Make({{"alice", "tok-a"}, {"bob", "tok-b"}},
       std::string(kConfig) + "scope: user\n");
  json mine = one;
  mine["user"] = "u1";
  Post("/v1/record", WithResult(mine, {{"v", "a1"}}), "tok-a");
  EXPECT_EQ(
      Post("/v1/invalidate", {{"server", "docs"}}, "tok-b")["entriesDropped"],
      0);
  Post("/v1/record", WithResult(mine, {{"v", "a1"}}), "tok-a");
  EXPECT_EQ(
      Post("/v1/invalidate", {{"server", "docs"}}, "tok-a")["entriesDropped"],
      1);
}

// Session 19: an /mcp/<name> session's entries are its tenant's (scope
// "<tenant>\x1e<roots>" or "<tenant>\x1f<era>"): /v1/invalidate drops and
// now counts them; another tenant's still count as none.
TEST_F(ServiceTest, InvalidateCountsTheCallersMcpSessionEntries) {
  Make({{"alice", "tok-a"}, {"bob", "tok-b"}});
  for (std::string scope : {std::string("alice\x1f"
                                        "2026-era"),
                            std::string("alice\x1e[\"file:///w\"]")}) {
    ToolCall call{.server = "docs",
                  .scope = scope,
                  .tool = "get_doc",
                  .arguments_json = "{\"id\":1}"};
    UpstreamResult r;
    r.result_json = R"({"content":[]})";
    r.latency_seconds = 0.5;
    ASSERT_TRUE(cache_->Record(call, r).admitted) << scope;
  }
  EXPECT_EQ(
      Post("/v1/invalidate", {{"server", "docs"}}, "tok-b")["entriesDropped"],
      0);
  for (std::string scope : {std::string("alice\x1f"
                                        "2026-era")}) {
    ToolCall call{.server = "docs",
                  .scope = scope,
                  .tool = "get_doc",
                  .arguments_json = "{\"id\":1}"};
    UpstreamResult r;
    r.result_json = R"({"content":[]})";
    ASSERT_TRUE(cache_->Record(call, r).admitted);
  }
  EXPECT_EQ(
      Post("/v1/invalidate", {{"server", "docs"}}, "tok-a")["entriesDropped"],
      1);
}

// Session 19: what the operational routes show to whom.
TEST_F(ServiceTest, OperationalRoutesStayOpenWithoutTenantsOrAdminToken) {
  Post("/v1/lookup", Call("acme_payroll_lookup", {{"id", 1}}));
  Post("/v1/record",
       WithResult(Call("acme_payroll_lookup", {{"id", 1}}), {{"v", "v"}}));
  for (const char* path : {"/metrics", "/toolcache/stats", "/dashboard"}) {
    std::optional<Reply> r = Send("GET", path, "");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 200) << path << " " << r->body;
  }
  EXPECT_NE(
      Send("GET", "/toolcache/stats", "")->body.find("acme_payroll_lookup"),
      std::string::npos);
}

TEST_F(ServiceTest, ATenantReadsOnlyItsOwnCountsOnTheOperationalRoutes) {
  Make({{"alice", "tok-a"}, {"bob", "tok-b"}});
  const json payroll = {{"server", "acme_payroll"},
                        {"tool", "acme_payroll_lookup"},
                        {"arguments", {{"id", 1}}}};
  Post("/v1/lookup", payroll, "tok-a");
  Post("/v1/record", WithResult(payroll, {{"v", "salary"}}), "tok-a");
  Post("/v1/invalidate", {{"server", "acme_payroll"}, {"resource", "/hr/q3"}},
       "tok-a");
  Post("/v1/lookup", Call("get_doc", {{"id", 7}}), "tok-b");
  // Anonymous: nothing (the series name tenants, servers and tools).
  for (const char* path : {"/metrics", "/toolcache/stats"}) {
    std::optional<Reply> r = Send("GET", path, "");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 401) << path << " " << r->body;
    EXPECT_EQ(json::parse(r->body)["error"]["code"], "unauthorized");
    EXPECT_EQ(r->body.find("acme"), std::string::npos);
    EXPECT_EQ(Send("GET", path, "", "tok-x")->status, 401) << path;
  }
  // The page itself carries no data.
  EXPECT_EQ(Send("GET", "/dashboard", "")->status, 200);
  // Bob: his own counts, none of alice's names or counts.
  for (const char* path : {"/metrics", "/toolcache/stats"}) {
    std::optional<Reply> r = Send("GET", path, "", "tok-b");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 200) << path;
    for (std::string_view secret :
         {"acme", "alice", "hr/q3", "entries_invalidated", "get_doc"}) {
      EXPECT_EQ(r->body.find(secret), std::string::npos)
          << path << " shows bob '" << secret << "':\n"
          << r->body;
    }
  }
  EXPECT_NE(Send("GET", "/metrics", "", "tok-b")
                ->body.find("toolcache_serve_tenant_calls_total{tenant=\"bob\","
                            "outcome=\"miss\"} 1"),
            std::string::npos);
  const json bob =
      json::parse(Send("GET", "/toolcache/stats", "", "tok-b")->body);
  EXPECT_EQ(bob["tenant"], "bob");
  EXPECT_EQ(bob["calls"]["miss"], 1);
}

TEST_F(ServiceTest, TheAdminTokenReadsTheWholeViewAndNothingElseDoes) {
  admin_token_ = "ops-secret";
  Make({});
  Post("/v1/lookup", Call("acme_payroll_lookup", {{"id", 1}}));
  Post("/v1/record",
       WithResult(Call("acme_payroll_lookup", {{"id", 1}}), {{"v", "v"}}));
  for (const char* path : {"/metrics", "/toolcache/stats"}) {
    EXPECT_EQ(Send("GET", path, "")->status, 401) << path;
    EXPECT_EQ(Send("GET", path, "", "ops-secreT")->status, 401) << path;
    EXPECT_EQ(Send("GET", path, "", "ops-secret-")->status, 401) << path;
    std::optional<Reply> r = Send("GET", path, "", "ops-secret");
    EXPECT_EQ(r->status, 200) << path;
    EXPECT_NE(r->body.find("acme_payroll_lookup"), std::string::npos) << path;
  }
  // With tenants, the operator sees every tenant; a tenant only itself.
  Make({{"alice", "tok-a"}, {"bob", "tok-b"}});
  Post("/v1/lookup", Call("acme_payroll_lookup", {{"id", 1}}), "tok-a");
  const std::string all = Send("GET", "/metrics", "", "ops-secret")->body;
  EXPECT_NE(all.find("tenant=\"alice\""), std::string::npos) << all;
  EXPECT_NE(all.find("acme_payroll_lookup"), std::string::npos);
  EXPECT_EQ(Send("GET", "/metrics", "", "tok-b")->body.find("alice"),
            std::string::npos);
  EXPECT_EQ(Send("GET", "/metrics", "")->status, 401);
}

TEST_F(ServiceTest, TenantsNeedTheirTokenAndNeverReadEachOthersEntries) {
  Make({{"alice", "tok-a"}, {"bob", "tok-b"}});
  json call = Call("get_doc", {{"id", 1}});
  EXPECT_EQ(Post("/v1/lookup", call, "", 401)["error"]["code"], "unauthorized");
  EXPECT_EQ(Post("/v1/lookup", call, "tok-x", 401)["error"]["code"],
            "unauthorized");
  Post("/v1/record", WithResult(call, {{"v", "alice's"}}), "tok-a");
  EXPECT_EQ(Post("/v1/lookup", call, "tok-a")["result"]["v"], "alice's");
  EXPECT_EQ(Post("/v1/lookup", call, "tok-b")["hit"], false)
      << "bob read alice's entry";
  json bob = json::parse(Send("GET", "/v1/stats", "", "tok-b")->body);
  EXPECT_EQ(bob["tenant"], "bob");
  EXPECT_EQ(bob["calls"]["miss"], 1);
  EXPECT_FALSE(bob["calls"].contains("hit"));
  // A ticket is only completable by its tenant.
  json begun = Post("/v1/begin", call, "tok-b");
  ASSERT_EQ(begun["action"], "forward");
  json other = {{"ticket", begun["ticket"]}, {"result", {{"v", "poison"}}}};
  EXPECT_EQ(Post("/v1/complete", other, "tok-a", 404)["error"]["code"],
            "unknown_ticket");
  json mine = {{"ticket", begun["ticket"]}, {"result", {{"v", "bob's"}}}};
  EXPECT_EQ(Post("/v1/complete", mine, "tok-b")["admitted"], true);
  EXPECT_EQ(Post("/v1/lookup", call, "tok-b")["result"]["v"], "bob's");
  EXPECT_EQ(Post("/v1/lookup", call, "tok-a")["result"]["v"], "alice's");
}

TEST_F(ServiceTest, BeginCoalescesIdenticalCallsUntilTheLeaderCompletes) {
  json call = Call("get_doc", {{"id", 7}});
  json leader = Post("/v1/begin", call);
  ASSERT_EQ(leader["action"], "forward");
  ASSERT_TRUE(leader["ticket"].is_string());
  auto w1 = std::make_shared<Deferred>();
  auto w2 = std::make_shared<Deferred>();
  EXPECT_FALSE(Send("POST", "/v1/begin", call.dump(), "", w1).has_value());
  EXPECT_FALSE(Send("POST", "/v1/begin", call.dump(), "", w2).has_value());
  EXPECT_FALSE(w1->reply.has_value());
  json done = Post("/v1/complete", {{"ticket", leader["ticket"]},
                                    {"result", {{"v", 7}}},
                                    {"latencySeconds", 2}});
  EXPECT_EQ(done["admitted"], true);
  EXPECT_EQ(done["waitersAnswered"], 2);
  for (const auto& w : {w1, w2}) {
    ASSERT_TRUE(w->reply.has_value());
    json j = json::parse(w->reply->body);
    EXPECT_EQ(j["action"], "coalesced");
    EXPECT_EQ(j["result"], json({{"v", 7}}));
  }
  json hit = Post("/v1/begin", call);
  EXPECT_EQ(hit["action"], "hit");
  EXPECT_EQ(hit["result"], json({{"v", 7}}));
  // The waiters' timers fire later and find nothing to answer.
  for (auto& [s, f] : timers_) f();
  // Completing twice is an unknown ticket.
  EXPECT_EQ(Post("/v1/complete", {{"ticket", leader["ticket"]}, {"result", 1}},
                 "", 404)["error"]["code"],
            "unknown_ticket");
  json stats = json::parse(service_->StatsJson());
  EXPECT_EQ(stats["totals"]["coalesced"], 2);
  EXPECT_EQ(stats["totals"]["hits"], 1);
  EXPECT_EQ(stats["totals"]["misses"], 1);
  EXPECT_EQ(stats["waiting"], 0);
  EXPECT_EQ(stats["openTickets"], 0);
}

TEST_F(ServiceTest, AWaiterTimesOutAndALapsedLeaseReleasesWaiters) {
  json call = Call("get_doc", {{"id", 8}});
  json leader = Post("/v1/begin", call);
  ASSERT_EQ(leader["action"], "forward");
  ASSERT_EQ(timers_.size(), 1u);  // the lease
  EXPECT_EQ(timers_[0].first, 100);
  auto w1 = std::make_shared<Deferred>();
  ASSERT_FALSE(Send("POST", "/v1/begin", call.dump(), "", w1).has_value());
  ASSERT_EQ(timers_.size(), 2u);
  EXPECT_EQ(timers_[1].first, 10);
  timers_[1].second();  // the wait times out
  ASSERT_TRUE(w1->reply.has_value());
  EXPECT_EQ(json::parse(w1->reply->body)["reason"], "wait_timeout");

  auto w2 = std::make_shared<Deferred>();
  ASSERT_FALSE(Send("POST", "/v1/begin", call.dump(), "", w2).has_value());
  timers_[0].second();  // the lease lapses: the leader never completed
  ASSERT_TRUE(w2->reply.has_value());
  EXPECT_EQ(json::parse(w2->reply->body)["reason"], "leader_failed");
  EXPECT_EQ(Post("/v1/complete", {{"ticket", leader["ticket"]}, {"result", 1}},
                 "", 404)["error"]["code"],
            "unknown_ticket");
  // A waiter whose client went away is never answered.
  json leader2 = Post("/v1/begin", call);
  ASSERT_EQ(leader2["action"], "forward");
  auto w3 = std::make_shared<Deferred>();
  ASSERT_FALSE(Send("POST", "/v1/begin", call.dump(), "", w3).has_value());
  ASSERT_FALSE(gone_.empty());
  gone_.back()();
  json done = Post("/v1/complete",
                   {{"ticket", leader2["ticket"]}, {"result", {{"v", 2}}}});
  EXPECT_EQ(done["waitersAnswered"], 0);
  EXPECT_FALSE(w3->reply.has_value());
}

// Issue 27.1: with `scope: user` one user's results never reach another,
// and a call that names no user is refused (nothing served or stored).
TEST_F(ServiceTest, UserScopeKeepsEachUsersResultsApart) {
  Make({}, std::string(kConfig) + "scope: user\n");
  json alice = Call("get_doc", json::object());
  alice["user"] = "alice";
  json bob = alice;
  bob["user"] = "bob";
  json rec = Post("/v1/record", WithResult(alice, {{"inbox", "alice's"}}));
  ASSERT_EQ(rec["admitted"], true) << rec;
  EXPECT_EQ(Post("/v1/lookup", bob)["hit"], false);
  json begun = Post("/v1/begin", bob);
  EXPECT_EQ(begun["action"], "forward");
  EXPECT_EQ(begun["reason"], "miss");
  json hit = Post("/v1/lookup", alice);
  EXPECT_EQ(hit["hit"], true);
  EXPECT_EQ(hit["result"], json({{"inbox", "alice's"}}));
  json nobody = Call("get_doc", json::object());
  for (const char* op : {"/v1/lookup", "/v1/begin", "/v1/record"}) {
    json body = std::string(op) == "/v1/record"
                    ? WithResult(nobody, {{"inbox", "x"}})
                    : nobody;
    json e = Post(op, body, "", 400);
    EXPECT_EQ(e["error"]["code"], "user_required") << op;
  }
  EXPECT_EQ(Post("/v1/explain", nobody)["reason"], "user_required");
  json stats = json::parse(service_->StatsJson());
  EXPECT_EQ(stats["openTickets"], 1);  // bob's; the refused begin has none
  EXPECT_EQ(stats["waiting"], 0);
}

// Issue 27.6: what is stored is answered as an MCP tool result.
TEST_F(ServiceTest, ANonObjectResultIsRefusedAndItsFlightFails) {
  for (const char* result : {R"("a{b")", "[{\"x\":1}]", "7", "null"}) {
    std::string body = R"({"server":"docs","tool":"get_doc","result":)" +
                       std::string(result) + "}";
    std::optional<Reply> r = Send("POST", "/v1/record", body);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 400) << result << " " << r->body;
    EXPECT_NE(r->body.find("must be a JSON object"), std::string::npos);
  }
  EXPECT_EQ(Post("/v1/lookup", Call("get_doc", json::object()))["hit"], false);
  // An error result may be anything: it is never stored.
  json call = Call("get_doc", {{"id", 9}});
  json leader = Post("/v1/begin", call);
  auto waiter = std::make_shared<Deferred>();
  ASSERT_FALSE(Send("POST", "/v1/begin", call.dump(), "", waiter).has_value());
  json refused =
      Post("/v1/complete", {{"ticket", leader["ticket"]}, {"result", "a{b"}},
           "", 400);
  EXPECT_EQ(refused["error"]["code"], "bad_request");
  // Issue 27.14: the waiter is answered at once, not after its wait.
  ASSERT_TRUE(waiter->reply.has_value());
  EXPECT_EQ(json::parse(waiter->reply->body)["reason"], "leader_failed");
  EXPECT_EQ(json::parse(service_->StatsJson())["openTickets"], 0);
  EXPECT_EQ(Post("/v1/begin", call)["action"], "forward");
}

// Issue 27.14: valid JSON with an integer beyond 64 bits is kept as sent.
TEST_F(ServiceTest, IntegersBeyondSixtyFourBitsAreStoredExactly) {
  const std::string big = "123456789012345678901234567890";
  const std::string result = R"({"n":)" + big + R"(,"f":1.50,"s":"\u00e9"})";
  std::string body = R"({"server":"docs","tool":"get_doc","arguments":{"id":)" +
                     big + R"(},"result": )" + result +
                     R"(,"latencySeconds":1})";
  std::optional<Reply> r = Send("POST", "/v1/record", body);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(json::parse(r->body)["admitted"], true) << r->body;
  r = Send(
      "POST", "/v1/lookup",
      R"({"server":"docs","tool":"get_doc","arguments":{"id":)" + big + "}}");
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_NE(r->body.find(R"("result":)" + result), std::string::npos)
      << r->body;
  // Through begin / complete, to a waiter too.
  const std::string call =
      R"({"server":"docs","tool":"get_doc","arguments":{"id":)" + big + "0}}";
  r = Send("POST", "/v1/begin", call);
  ASSERT_TRUE(r.has_value());
  const std::string ticket = json::parse(r->body)["ticket"];
  auto waiter = std::make_shared<Deferred>();
  ASSERT_FALSE(Send("POST", "/v1/begin", call, "", waiter).has_value());
  r = Send("POST", "/v1/complete",
           R"({"ticket":")" + ticket + R"(","result":)" + result + "}");
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 200) << r->body;
  ASSERT_TRUE(waiter->reply.has_value());
  EXPECT_NE(waiter->reply->body.find(result), std::string::npos)
      << waiter->reply->body;
  // Still refused: a number no parser can hold.
  r = Send("POST", "/v1/record",
           R"({"server":"docs","tool":"get_doc","result":{"x":1e999}})");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 400) << r->body;
}

// Issue 27.13: a waiter that got no result is no coalesced hit.
TEST_F(ServiceTest, WaitersThatGotNoResultAreNotCountedAsCoalesced) {
  // The leader's tool has a recorded latency, so a coalesced answer would
  // count saved time.
  Post("/v1/record", WithResult(Call("get_doc", {{"id", 0}}), {{"v", 0}}, 2));
  json call = Call("get_doc", {{"id", 5}});
  json leader = Post("/v1/begin", call);
  auto failed = std::make_shared<Deferred>();
  ASSERT_FALSE(Send("POST", "/v1/begin", call.dump(), "", failed).has_value());
  Post("/v1/complete", {{"ticket", leader["ticket"]}, {"isError", true}});
  ASSERT_TRUE(failed->reply.has_value());
  EXPECT_EQ(json::parse(failed->reply->body)["reason"], "leader_failed");
  leader = Post("/v1/begin", call);
  auto late = std::make_shared<Deferred>();
  ASSERT_FALSE(Send("POST", "/v1/begin", call.dump(), "", late).has_value());
  timers_.back().second();  // the wait times out
  ASSERT_TRUE(late->reply.has_value());
  json stats = json::parse(service_->StatsJson());
  EXPECT_EQ(stats["totals"]["coalesced"], 0);
  EXPECT_EQ(stats["totals"]["waitedNoResult"], 2);
  EXPECT_EQ(stats["totals"]["hitRatio"], 0);
  EXPECT_EQ(stats["totals"]["savedSeconds"], 0);
  const std::string metrics = service_->Prometheus();
  EXPECT_NE(metrics.find(R"(outcome="leader_failed"} 1)"), std::string::npos);
  EXPECT_NE(metrics.find(R"(outcome="wait_timeout"} 1)"), std::string::npos);
  EXPECT_EQ(metrics.find(R"(outcome="coalesced")"), std::string::npos);
  // A waiter that does get the result is coalesced, with saved time.
  auto ok = std::make_shared<Deferred>();
  ASSERT_FALSE(Send("POST", "/v1/begin", call.dump(), "", ok).has_value());
  Post("/v1/complete", {{"ticket", leader["ticket"]}, {"result", {{"v", 5}}}});
  ASSERT_TRUE(ok->reply.has_value());
  stats = json::parse(service_->StatsJson());
  EXPECT_EQ(stats["totals"]["coalesced"], 1);
  EXPECT_GT(stats["totals"]["savedSeconds"].get<double>(), 0);
}

// Issue 27.15: the verdict says why a call with a duplicate argument name
// is not cacheable.
TEST_F(ServiceTest, DuplicateArgumentNamesAreReportedConsistently) {
  const std::string body =
      R"({"server":"docs","tool":"get_doc","arguments":{"a":1,"a":2},"result":{}})";
  for (const char* op : {"/v1/record", "/v1/explain", "/v1/lookup"}) {
    std::optional<Reply> r = Send("POST", op, body);
    ASSERT_TRUE(r.has_value());
    json j = json::parse(r->body);
    EXPECT_EQ(j["cacheable"], false) << op << " " << r->body;
    EXPECT_EQ(j["reason"], "invalid_arguments") << op;
    EXPECT_EQ(j["verdict"]["cacheable"], false) << op;
    EXPECT_EQ(j["verdict"]["reason"], "invalid_arguments") << op;
  }
}

// A tenant that never completes its tickets cannot grow the server without
// bound: past max_open_tickets its read misses run without a ticket, while
// hits, writes and other tenants are unaffected; closing tickets (complete
// or a lapsed lease) makes room again.
TEST_F(ServiceTest, OpenTicketsArePerTenantAndCapped) {
  Make({{"alice", "tok-a"}, {"bob", "tok-b"}}, kConfig, 2);
  json t1 = Post("/v1/begin", Call("get_doc", {{"id", 1}}), "tok-a");
  json t2 = Post("/v1/begin", Call("get_doc", {{"id", 2}}), "tok-a");
  ASSERT_TRUE(t1["ticket"].is_string());
  ASSERT_TRUE(t2["ticket"].is_string());
  json over = Post("/v1/begin", Call("get_doc", {{"id", 3}}), "tok-a");
  EXPECT_EQ(over["action"], "forward");
  EXPECT_EQ(over["reason"], "open_ticket_limit");
  EXPECT_EQ(over["cacheable"], false);
  EXPECT_FALSE(over.contains("ticket"));
  // Another tenant still gets tickets.
  json bob = Post("/v1/begin", Call("get_doc", {{"id", 3}}), "tok-b");
  EXPECT_TRUE(bob["ticket"].is_string()) << bob;
  // A write always gets its ticket: its completion is what invalidates.
  json write = Post("/v1/begin", Call("put_doc", {{"id", 1}}), "tok-a");
  EXPECT_TRUE(write["ticket"].is_string()) << write;
  // Completing frees slots (t1's result is not admitted: the write began
  // while it was in flight). At the limit a hit is still served.
  Post("/v1/complete", {{"ticket", write["ticket"]}, {"result", {{"v", "ok"}}}},
       "tok-a");
  Post("/v1/complete", {{"ticket", t1["ticket"]}, {"result", {{"v", "one"}}}},
       "tok-a");
  json t6 = Post("/v1/begin", Call("get_doc", {{"id", 6}}), "tok-a");
  ASSERT_TRUE(t6["ticket"].is_string()) << t6;
  EXPECT_EQ(Post("/v1/complete",
                 {{"ticket", t6["ticket"]}, {"result", {{"v", "six"}}}},
                 "tok-a")["admitted"],
            true);
  json t4 = Post("/v1/begin", Call("get_doc", {{"id", 4}}), "tok-a");
  ASSERT_TRUE(t4["ticket"].is_string()) << t4;  // alice: t2, t4
  json hit = Post("/v1/begin", Call("get_doc", {{"id", 6}}), "tok-a");
  EXPECT_EQ(hit["action"], "hit") << hit;
  EXPECT_EQ(hit["result"]["v"], "six");
  EXPECT_EQ(Post("/v1/begin", Call("get_doc", {{"id", 5}}), "tok-a")["reason"],
            "open_ticket_limit");
  // Lapsed leases free their slots too.
  for (auto& [s, f] : timers_) f();
  json again = Post("/v1/begin", Call("get_doc", {{"id", 5}}), "tok-a");
  EXPECT_TRUE(again["ticket"].is_string()) << again;
  json stats = json::parse(service_->StatsJson());
  EXPECT_EQ(stats["bypassesByReason"]["open_ticket_limit"], 2) << stats;
}

TEST_F(ServiceTest, BadInputIsA4xxJsonErrorNeverACrash) {
  struct Case {
    std::string method, path, body;
    int status;
  };
  std::string deep(200, '[');
  deep += std::string(200, ']');
  const std::vector<Case> cases = {
      {"POST", "/v1/lookup", "", 400},
      {"POST", "/v1/lookup", "not json", 400},
      {"POST", "/v1/lookup", "[1,2]", 400},
      {"POST", "/v1/lookup", R"({"tool":"get_doc"})", 400},
      {"POST", "/v1/lookup", R"({"server":"","tool":"get_doc"})", 400},
      {"POST", "/v1/lookup", R"({"server":1,"tool":"get_doc"})", 400},
      {"POST", "/v1/lookup", R"({"server":"s","tool":"t","arguments":[1]})",
       400},
      {"POST", "/v1/lookup",
       R"({"server":"s","tool":"t","arguments":{"a":)" + deep + "}}", 400},
      {"POST", "/v1/lookup", R"({"server":"s","tool":"t"} trailing)", 400},
      {"POST", "/v1/record", R"({"server":"s","tool":"get_doc"})", 400},
      {"POST", "/v1/record",
       R"({"server":"s","tool":"get_doc","result":1,"latencySeconds":-1})",
       400},
      {"POST", "/v1/complete", R"({"ticket":"x1","result":1})", 400},
      {"POST", "/v1/complete", R"({"ticket":"t999","result":1})", 404},
      {"POST", "/v1/begin", R"({"server":"s","tool":"t","waitSeconds":"x"})",
       400},
      {"GET", "/v1/lookup", "", 405},
      {"POST", "/v1/stats", "", 405},
      {"POST", "/v1/nothing", "{}", 404},
      {"GET", "/elsewhere", "", 404},
  };
  for (const Case& c : cases) {
    std::optional<Reply> r = Send(c.method, c.path, c.body);
    ASSERT_TRUE(r.has_value()) << c.path << " " << c.body;
    EXPECT_EQ(r->status, c.status)
        << c.method << " " << c.path << " " << c.body;
    json j = json::parse(r->body, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r->body;
    EXPECT_TRUE(j["error"]["message"].is_string()) << r->body;
  }
}

// Session 18 (attackV finding 2): an MCP method's name is no tool of this
// API. A tenant that recorded "tools/list" wrote where /mcp/<name> looks up
// the server's own list (and taught the cache its forged tools).
TEST_F(ServiceTest, McpMethodNamesAreRefusedAsTools) {
  const std::string args =
      R"("arguments":{"toolcache/envelope":{"protocolVersion":"2026-07-28"}})";
  for (const std::string path :
       {"/v1/lookup", "/v1/record", "/v1/begin", "/v1/explain"}) {
    for (const std::string tool :
         {"tools/list", "resources/read", "prompts/list", "server/discover"}) {
      std::optional<Reply> r =
          Send("POST", path,
               R"({"server":"fs","tool":")" + tool + R"(",)" + args +
                   R"(,"result":{"tools":[]}})");
      ASSERT_TRUE(r.has_value()) << path;
      EXPECT_EQ(r->status, 400) << path << " " << tool;
      const json j = json::parse(r->body);
      EXPECT_EQ(j["error"]["code"], "reserved_tool_name") << r->body;
      EXPECT_THAT(j["error"]["message"].get<std::string>(),
                  ::testing::HasSubstr("MCP method"));
    }
  }
  EXPECT_EQ(cache_->Stats().recorded, 0u);
  // Another name with a slash is an ordinary tool.
  std::optional<Reply> r =
      Send("POST", "/v1/lookup", R"({"server":"fs","tool":"tools/list_all"})");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200);
}

TEST_F(ServiceTest, ForeignOriginsAreRefused) {
  std::optional<Reply> r =
      Send("POST", "/v1/lookup", Call("get_doc", {}).dump(), "", nullptr,
           "https://evil.example");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 403);
  r = Send("GET", "/", "", "", nullptr, "http://127.0.0.1:8090");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->body.find("<svg id=\"chart\""), std::string::npos);
}

// The binding builds a request's context only where NeedsContext says
// Handle uses it; every other route answers with an empty one, and a begin
// that gets an empty context anyway is a 500, not a call through an empty
// std::function (which would throw on the request path).
TEST_F(ServiceTest, OnlyBeginNeedsARequestContext) {
  EXPECT_TRUE(CacheService::NeedsContext("/v1/begin"));
  for (std::string_view p :
       {"/v1/lookup", "/v1/record", "/v1/complete", "/v1/invalidate",
        "/v1/explain", "/v1/stats", "/metrics", "/"}) {
    EXPECT_FALSE(CacheService::NeedsContext(p)) << p;
  }
  auto handle = [&](std::string path, const json& body) {
    http::Request r;
    r.method = "POST";
    r.target = std::move(path);
    r.body = body.dump();
    r.headers.push_back({"Content-Type", "application/json"});
    return service_->Handle(r, RequestContext{});
  };
  const json call = Call("get_doc", {{"id", 1}});
  std::optional<Reply> r =
      handle("/v1/record", WithResult(call, {{"content", json::array()}}));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200) << r->body;
  r = handle("/v1/lookup", call);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(json::parse(r->body)["hit"], true) << r->body;
  r = handle("/v1/begin", call);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 500) << r->body;
  // A miss would wait and arm its lease through the context.
  r = handle("/v1/begin", Call("get_doc", {{"id", 2}}));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 500) << r->body;
}

TEST_F(ServiceTest, ALoopbackServerRefusesOtherHostNames) {
  auto send = [&](std::string host) {
    http::Request r;
    r.method = "GET";
    r.target = "/toolcache/stats";
    r.headers.push_back({"Host", std::move(host)});
    return service_->Handle(r, RequestContext{})->status;
  };
  EXPECT_EQ(send("rebound.example:8090"), 403);
  EXPECT_EQ(send("rebound.example"), 403);
  EXPECT_EQ(send("127.0.0.1:8090"), 200);
  EXPECT_EQ(send("localhost"), 200);
  EXPECT_EQ(send("[::1]:8090"), 200);
  // serve.allowedHosts names a host the server is reached by.
  ServiceOptions o;
  o.cache = cache_.get();
  o.clock = &clock_;
  o.registry = registry_.get();
  o.allowed_hosts = {"cache.internal"};
  service_ = std::make_unique<CacheService>(std::move(o));
  EXPECT_EQ(send("cache.internal:8090"), 200);
  EXPECT_EQ(send("rebound.example"), 403);
}

TEST_F(ServiceTest, MetricsCountOutcomesByEnumLabels) {
  Post("/v1/record", WithResult(Call("get_doc", {{"id", 1}}), {{"v", "v"}}));
  Post("/v1/lookup", Call("get_doc", {{"id", 1}}));
  Post("/v1/lookup", Call("put_doc", {{"id", 1}}));
  Post("/v1/invalidate", {{"server", "docs"}});
  const std::string text = service_->Prometheus();
  for (std::string_view want :
       {"toolcache_serve_calls_total{op=\"lookup\",outcome=\"hit\"} 1",
        "toolcache_serve_calls_total{op=\"lookup\",outcome=\"bypass\"} 1",
        "toolcache_serve_bypasses_total{reason=\"command\"} 1",
        "toolcache_serve_invalidations_total{cause=\"api\"} 1",
        "toolcache_serve_saved_total{what=\"latency_us\"} 500000",
        "toolcache_engine_events_total{what=\"admitted\"} 1",
        "toolcache_serve_request_seconds_bucket{op=\"lookup\"",
        "toolcache_cache_entries 0"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  }
}

TEST_F(ServiceTest, OpenApiDocumentDescribesEveryRoute) {
  std::optional<Reply> r = Send("GET", "/v1/openapi.json", "");
  ASSERT_TRUE(r.has_value());
  json doc = json::parse(r->body);
  for (const char* p : {"/v1/lookup", "/v1/record", "/v1/begin", "/v1/complete",
                        "/v1/invalidate", "/v1/explain"}) {
    EXPECT_TRUE(doc["paths"][p].contains("post")) << p;
  }
  EXPECT_TRUE(doc["paths"]["/v1/stats"].contains("get"));
}

// The document's verdict reasons are every VerdictReason the engine names
// (declared_by_server was missing when MCP 2026-07-28 added it).
TEST_F(ServiceTest, OpenApiListsEveryVerdictReason) {
  std::optional<Reply> r = Send("GET", "/v1/openapi.json", "");
  ASSERT_TRUE(r.has_value());
  const std::string body = r->body;
  for (int i = 0; i <= static_cast<int>(VerdictReason::kReservedToolName);
       ++i) {
    const std::string name(VerdictReasonName(static_cast<VerdictReason>(i)));
    EXPECT_NE(body.find("\"" + name + "\""), std::string::npos) << name;
  }
}

}  // namespace
}  // namespace toolcache::serve
