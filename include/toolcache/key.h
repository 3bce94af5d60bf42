// CacheKey: the structured identity of a cached tool result, and its stable
// digest.
//
// A key is {scope, server, tool, canonical_args}: who may share the entry
// (tenant / user; "" = global), which server's tool, the tool name, and the
// RFC 8785 canonical JSON of the arguments object (no `_meta`, no configured
// ignorable fields; see canonical_json.h, whose MakeCacheKey builds one). The
// digest is SHA-256 over a length-prefixed encoding documented in docs/KEYS.md;
// it is stable across versions, machines and endianness. A hit compares the
// full key, never only the digest.
//
// Thread-safety: plain value.
//
// Example:
//   Result<std::string> args = CanonicalizeJson(R"({"b":1,"a":2})");
//   CacheKey key{.scope = "", .server = "fs", .tool = "read_file",
//                .canonical_args = *args};
//   std::string hex = key.DigestHex();  // 64 lowercase hex digits
#ifndef TOOLCACHE_KEY_H_
#define TOOLCACHE_KEY_H_

#include <array>
#include <cstdint>
#include <string>

namespace toolcache {

struct CacheKey {
  std::string scope;           // tenant / user scope; "" = shared globally
  std::string server;          // server identity (name or command)
  std::string tool;            // tool name
  std::string canonical_args;  // RFC 8785 canonical JSON of the arguments

  // SHA-256 over the documented length-prefixed encoding.
  std::array<uint8_t, 32> Digest() const;
  // Digest() as 64 lowercase hex digits.
  std::string DigestHex() const;
  // The first 8 bytes of Digest(), big-endian: the ObjectId used by the
  // policies (see policy.h).
  uint64_t Id() const;

  bool operator==(const CacheKey&) const = default;
};

}  // namespace toolcache

#endif  // TOOLCACHE_KEY_H_
