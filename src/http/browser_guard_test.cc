// The browser-origin defence (browser_guard.h): DNS rebinding (Host),
// cross-site pages (Origin, Sec-Fetch-Site) and simple cross-site POSTs
// (Content-Type), each allowed and refused.
#include "src/http/browser_guard.h"

#include <gtest/gtest.h>

namespace toolcache::http {
namespace {

Request Req(std::string method, Headers headers) {
  Request r;
  r.method = std::move(method);
  r.target = "/v1/messages";
  r.headers = std::move(headers);
  return r;
}

TEST(BrowserGuard, RefusesRebindingHostsAndAnswersLoopbackAndLiterals) {
  BrowserGuard g({.listen_host = "127.0.0.1", .config_block = "proxy"});
  for (const char* host :
       {"127.0.0.1:8080", "localhost", "LOCALHOST:1", "app.localhost:3000",
        "[::1]:8080", "10.1.2.3", "[fe80::1]"}) {
    EXPECT_TRUE(g.Check(Req("GET", {{"Host", host}}), false).allowed()) << host;
  }
  for (const char* host :
       {"rebind.attacker.example", "rebind.attacker.example:8080",
        "localhost.attacker.example", "127.0.0.1.nip.io", "[::1", ":8080"}) {
    GuardDecision d = g.Check(Req("GET", {{"Host", host}}), false);
    EXPECT_EQ(d.verdict, GuardVerdict::kForbiddenHost) << host;
    EXPECT_EQ(d.status, 403);
    EXPECT_NE(d.message.find("proxy.allowedHosts"), std::string::npos);
  }
  BrowserGuard named(
      {.listen_host = "box.lan", .allowed_hosts = {"Cache.Internal"}});
  EXPECT_TRUE(named.HostAllowed("box.lan:8080"));
  EXPECT_TRUE(named.HostAllowed("cache.internal"));
  EXPECT_FALSE(named.HostAllowed("other.lan"));
  BrowserGuard any({.allowed_hosts = {"*"}});
  EXPECT_TRUE(any.HostAllowed("anything.example"));
}

TEST(BrowserGuard, RefusesCrossSiteOriginsAndFetchMetadata) {
  BrowserGuard g({.listen_host = "127.0.0.1", .config_block = "serve"});
  EXPECT_TRUE(g.Check(Req("POST", {{"Origin", "http://localhost:5173"},
                                   {"Content-Type", "application/json"}}),
                      true)
                  .allowed());
  for (const char* origin :
       {"https://evil.example", "null", "http://127.0.0.1.evil.example",
        "http://localhostx:1"}) {
    GuardDecision d = g.Check(Req("GET", {{"Origin", origin}}), false);
    EXPECT_EQ(d.verdict, GuardVerdict::kForbiddenOrigin) << origin;
    EXPECT_EQ(d.status, 403);
  }
  // A cross-site request the browser labels, even without an Origin (a
  // GET navigation or image): refused.
  GuardDecision d =
      g.Check(Req("GET", {{"Sec-Fetch-Site", "cross-site"}}), false);
  EXPECT_EQ(d.verdict, GuardVerdict::kCrossSite);
  EXPECT_TRUE(g.Check(Req("GET", {{"Sec-Fetch-Site", "same-origin"}}), false)
                  .allowed());
  EXPECT_TRUE(
      g.Check(Req("GET", {{"Sec-Fetch-Site", "none"}}), false).allowed());
  // "*" allows every real origin, never `Origin: null` (sandboxed frames,
  // file: pages); only a literal "null" in the list does.
  BrowserGuard star({.allowed_origins = {"*"}});
  EXPECT_TRUE(star.Check(Req("GET", {{"Origin", "https://app.example"}}), false)
                  .allowed());
  EXPECT_EQ(star.Check(Req("GET", {{"Origin", "null"}}), false).verdict,
            GuardVerdict::kForbiddenOrigin);
  BrowserGuard with_null({.allowed_origins = {"null"}});
  EXPECT_TRUE(
      with_null.Check(Req("GET", {{"Origin", "null"}}), false).allowed());
  // A configured origin may call cross-site.
  BrowserGuard open({.allowed_origins = {"https://app.example"}});
  EXPECT_TRUE(open.Check(Req("GET", {{"Origin", "https://app.example"},
                                     {"Sec-Fetch-Site", "cross-site"}}),
                         false)
                  .allowed());
  EXPECT_FALSE(open.Check(Req("GET", {{"Origin", "http://localhost:1"}}), false)
                   .allowed());
}

TEST(BrowserGuard, RecordingPostsNeedAJsonContentType) {
  BrowserGuard g({.listen_host = "127.0.0.1"});
  for (const char* ct : {"text/plain", "text/plain;charset=UTF-8",
                         "application/x-www-form-urlencoded",
                         "multipart/form-data; boundary=x", ""}) {
    GuardDecision d = g.Check(Req("POST", {{"Content-Type", ct}}), true);
    EXPECT_EQ(d.verdict, GuardVerdict::kNotJson) << ct;
    EXPECT_EQ(d.status, 415);
  }
  for (const char* ct : {"application/json", "Application/JSON; charset=utf-8",
                         "application/vnd.api+json"}) {
    EXPECT_TRUE(g.Check(Req("POST", {{"Content-Type", ct}}), true).allowed())
        << ct;
  }
  // Routes that neither record nor serve keep any Content-Type.
  EXPECT_TRUE(
      g.Check(Req("POST", {{"Content-Type", "text/plain"}}), false).allowed());
}

}  // namespace
}  // namespace toolcache::http
