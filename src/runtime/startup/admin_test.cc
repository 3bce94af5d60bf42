// EnginePrometheus renders one ToolCacheStats snapshot with the shared
// metric registry: every count appears under its documented series.
#include "src/runtime/startup/admin.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>

#include "src/runtime/dashboard.h"

namespace toolcache::runtime {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(EnginePrometheus, EveryCounterUnderItsSeries) {
  ToolCacheStats s;
  s.hits = 3;
  s.misses = 2;
  s.coalesced = 1;
  s.bypasses["not_read_only"] = 4;
  s.bypasses["store_timeout"] = 1;
  s.store_errors["store_full"] = 6;
  s.admitted = 2;
  s.bytes_served = 1234;
  s.entries = 2;
  s.latency_saved_seconds = 0.5;
  const std::string t = "\n" + EnginePrometheus(s);
  EXPECT_TRUE(Has(t, "toolcache_engine_calls_total{outcome=\"hit\"} 3")) << t;
  EXPECT_TRUE(Has(t, "toolcache_engine_calls_total{outcome=\"miss\"} 2"));
  EXPECT_TRUE(Has(t, "toolcache_engine_calls_total{outcome=\"bypass\"} 5"));
  EXPECT_TRUE(
      Has(t, "toolcache_engine_bypasses_total{reason=\"not_read_only\"} 4"));
  EXPECT_TRUE(Has(t, "toolcache_store_errors_total{reason=\"store_full\"} 6"));
  EXPECT_TRUE(Has(t, "toolcache_engine_events_total{what=\"admitted\"} 2"));
  EXPECT_TRUE(Has(t, "toolcache_engine_bytes_served_total 1234"));
  EXPECT_TRUE(Has(t, "toolcache_cache_entries 2"));
  EXPECT_TRUE(Has(t, "toolcache_engine_saved_seconds 0.5"));
}

// Keeps what SendAdmin sent; the other Responder calls are not used.
class SentReply final : public http::Responder {
 public:
  void Send(int s, http::Headers h, std::string b) override {
    status = s;
    headers = std::move(h);
    body = std::move(b);
  }
  void Start(int, http::Headers) override {}
  bool Write(std::string_view) override { return false; }
  void Finish() override {}
  void Abort() override {}
  size_t Buffered() const override { return 0; }
  void OnClientGone(std::function<void()>) override {}
  void OnDrained(std::function<void()>) override {}
  http::Loop* loop() override { return nullptr; }
  std::string Header(std::string_view name) const {
    return std::string(http::FindHeader(headers, name));
  }
  int status = 0;
  http::Headers headers;
  std::string body;
};

TEST(AdminRoutes, TheDashboardIsOnlyWhereTheFaceServesIt) {
  EXPECT_EQ(AdminRouteAt("/metrics", false), AdminRoute::kMetrics);
  EXPECT_EQ(AdminRouteAt("/toolcache/stats", false), AdminRoute::kStats);
  EXPECT_EQ(AdminRouteAt("/dashboard", true), AdminRoute::kDashboard);
  EXPECT_EQ(AdminRouteAt("/dashboard", false), std::nullopt);
  EXPECT_EQ(AdminRouteAt("/metrics/", true), std::nullopt);
  EXPECT_EQ(AdminRouteAt("/", true), std::nullopt);
}

TEST(AdminRoutes, EachRouteAnswersFromItsSourceAndThePageCarriesItsCsp) {
  const AdminRoutes routes{.metrics = [] { return std::string("m 1\n"); },
                           .stats = [] { return std::string("{}\n"); },
                           .dashboard = true};
  SentReply m;
  SendAdmin(routes, AdminRoute::kMetrics, m);
  EXPECT_EQ(m.status, 200);
  EXPECT_EQ(m.body, "m 1\n");
  EXPECT_EQ(m.Header("content-type"), "text/plain; version=0.0.4");
  EXPECT_EQ(m.Header("cache-control"), "no-store");
  SentReply s;
  SendAdmin(routes, AdminRoute::kStats, s);
  EXPECT_EQ(s.body, "{}\n");
  EXPECT_EQ(s.Header("content-type"), "application/json");
  SentReply d;
  SendAdmin(routes, AdminRoute::kDashboard, d);
  EXPECT_EQ(d.body, DashboardHtml());
  EXPECT_EQ(d.Header("content-security-policy"), DashboardCsp());
  EXPECT_EQ(d.Header("content-type"), "text/html; charset=utf-8");
  EXPECT_EQ(d.Header("cache-control"), "no-store");
}

http::Request Get(std::string authorization = "") {
  http::Request r;
  r.method = "GET";
  r.target = "/metrics";
  if (!authorization.empty()) {
    r.headers.push_back({"Authorization", std::move(authorization)});
  }
  return r;
}

// Session 19: who reads the operational routes.
TEST(AdminAccess, OpenOnlyWithNeitherAnAdminTokenNorTenants) {
  EXPECT_EQ(CheckAdminAccess(Get(), {}).viewer, AdminViewer::kOperator);
  EXPECT_EQ(CheckAdminAccess(Get("Bearer anything"), {}).viewer,
            AdminViewer::kOperator);
  const AdminAccess t = CheckAdminAccess(Get(), {.tenants = true});
  EXPECT_EQ(t.viewer, AdminViewer::kNobody);
  EXPECT_EQ(t.status, 401);
  EXPECT_NE(t.message.find("TOOLCACHE_ADMIN_TOKEN"), std::string::npos);
}

TEST(AdminAccess, TheAdminTokenIsTheOperatorAndNothingElseIs) {
  const AdminAccessOptions o{.admin_token = "s3cret"};
  EXPECT_EQ(CheckAdminAccess(Get("Bearer s3cret"), o).viewer,
            AdminViewer::kOperator);
  EXPECT_EQ(CheckAdminAccess(Get("bearer s3cret"), o).viewer,
            AdminViewer::kOperator);
  for (const char* wrong : {"", "Bearer ", "Bearer s3cre", "Bearer s3cret ",
                            "Bearer S3CRET", "Basic s3cret", "s3cret"}) {
    EXPECT_EQ(CheckAdminAccess(Get(wrong), o).viewer, AdminViewer::kNobody)
        << wrong;
  }
}

TEST(AdminAccess, ATenantsTokenReadsItsOwnView) {
  const AdminAccessOptions o{
      .admin_token = "ops",
      .tenants = true,
      .tenant_of = [](std::string_view token) -> std::optional<std::string> {
        if (token == "tok-a") return "alice";
        return std::nullopt;
      }};
  const AdminAccess a = CheckAdminAccess(Get("Bearer tok-a"), o);
  EXPECT_EQ(a.viewer, AdminViewer::kTenant);
  EXPECT_EQ(a.tenant, "alice");
  EXPECT_EQ(CheckAdminAccess(Get("Bearer ops"), o).viewer,
            AdminViewer::kOperator);
  EXPECT_EQ(CheckAdminAccess(Get("Bearer tok-b"), o).viewer,
            AdminViewer::kNobody);
  EXPECT_EQ(CheckAdminAccess(Get(), o).viewer, AdminViewer::kNobody);
}

TEST(AdminAccess, TokensCompareWhole) {
  EXPECT_TRUE(http::TokenEquals("abc", "abc"));
  EXPECT_FALSE(http::TokenEquals("abc", ""));
  EXPECT_FALSE(http::TokenEquals("", "abc"));
  EXPECT_FALSE(http::TokenEquals("abcabc", "abc"));
  EXPECT_FALSE(http::TokenEquals("ab", "abc"));
  EXPECT_EQ(http::BearerToken("Bearer x"), "x");
  EXPECT_EQ(http::BearerToken("BEARER x"), "x");
  EXPECT_EQ(http::BearerToken("Bearer "), "");
  EXPECT_EQ(http::BearerToken("Basic x"), "");
}

}  // namespace
}  // namespace toolcache::runtime
