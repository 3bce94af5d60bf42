// The common HTTP/1.1 request head, read without Beast (server.cc reads a
// head the framing rules accepted with this first and hands any other to
// Beast). Internal to src/http.
//
// Pure (no I/O); thread-compatible. Ownership: `out` receives copies of
// the head's bytes.
//
// Example:
//   Request req;
//   uint64_t length = 0;
//   if (LeanParseHead(head, max_body, &req, &length)) { read `length`; }
//   else { parse `head` with Beast; }
#ifndef TOOLCACHE_SRC_HTTP_LEAN_HEAD_H_
#define TOOLCACHE_SRC_HTTP_LEAN_HEAD_H_

#include <cstdint>
#include <string_view>

#include "src/http/http.h"

namespace toolcache::http {

// True when `head` has the common shape: "GET" or "POST", an origin-form
// target of visible ASCII, HTTP/1.1, field lines of token names and
// visible-ASCII values (SP / HTAB inside), at most one Content-Length
// within `max_body`, at most one Connection field whose value is exactly
// the token keep-alive (any case), and none of the other fields whose
// meaning Beast interprets beyond framing (any other Connection value,
// Proxy-Connection, Transfer-Encoding, Upgrade). Then `out` holds the
// method, target, version 11 and fields (names as sent, values without
// surrounding OWS) Beast would give, and `content_length` the body length
// (0 without the field); the connection stays open after the response
// (HTTP/1.1 without "close"), as Beast's keep_alive() says.
// False otherwise (`out` may be partly written): the head goes to Beast,
// which answers it as it always did.
// REQUIRES: `head` is a whole head the framing rules (framing.h)
// accepted, its empty line included.
bool LeanParseHead(std::string_view head, uint64_t max_body, Request* out,
                   uint64_t* content_length);

}  // namespace toolcache::http

#endif  // TOOLCACHE_SRC_HTTP_LEAN_HEAD_H_
