#include "src/http/lean_head.h"

#include <gtest/gtest.h>

#include <string>

namespace toolcache::http {
namespace {

// What the bench's client (Node's http Agent with keepAlive) and undici
// send on every request: read without Beast (hopR; Beast's head parse was
// ~5,300 of ~76,500 instructions per 2 KB proxied request). What the
// server makes of it either way is
// HttpServer.TheLeanHeadParseGivesWhatBeastGives.
TEST(LeanHead, ReadsAKeepAliveConnectionField) {
  const std::string head =
      "POST /v1/messages HTTP/1.1\r\ncontent-type: application/json\r\n"
      "Connection: keep-alive\r\nContent-Length: 12\r\nHost: h\r\n\r\n";
  Request req;
  uint64_t length = 99;
  ASSERT_TRUE(LeanParseHead(head, 1000, &req, &length));
  EXPECT_EQ(req.method, "POST");
  EXPECT_EQ(req.target, "/v1/messages");
  EXPECT_EQ(length, 12u);
  ASSERT_EQ(req.headers.size(), 4u);
  EXPECT_EQ(req.headers[1].name, "Connection");
  EXPECT_EQ(req.headers[1].value, "keep-alive");
  EXPECT_TRUE(LeanParseHead("GET / HTTP/1.1\r\nconnection: KEEP-ALIVE \r\n\r\n",
                            0, &req, &length));
}

// Every other Connection field keeps its meaning for Beast: close, an
// upgrade, a list, an empty value, a second field.
TEST(LeanHead, LeavesOtherConnectionFieldsToBeast) {
  for (const char* field :
       {"Connection: close\r\n", "Connection: upgrade\r\n",
        "Connection: keep-alive, close\r\n", "Connection: keep-alive,\r\n",
        "Connection: keepalive\r\n", "Connection:\r\n",
        "Connection: keep-alive\r\nConnection: keep-alive\r\n",
        "Connection: keep-alive\r\nconnection: close\r\n",
        "Proxy-Connection: keep-alive\r\n"}) {
    const std::string head = std::string("GET / HTTP/1.1\r\n") + field + "\r\n";
    Request req;
    uint64_t length = 0;
    EXPECT_FALSE(LeanParseHead(head, 0, &req, &length)) << field;
  }
}

}  // namespace
}  // namespace toolcache::http
