// The version-stable byte encoding that CacheKey::Digest() hashes (see
// docs/KEYS.md). Internal to core; exposed for the tests that pin it.
//
// Thread-safety: pure functions.
//
// Example:
//   std::string pre = EncodeKeyForDigest(key);  // SHA-256(pre) == Digest()
#ifndef TOOLCACHE_SRC_CORE_KEY_INTERNAL_H_
#define TOOLCACHE_SRC_CORE_KEY_INTERNAL_H_

#include <string>
#include <string_view>

#include "toolcache/key.h"

namespace toolcache {

// The ASCII domain-separation tag that opens the digest input. Changing it,
// or the field order, or the length encoding, changes every digest: that is
// a new key version ("toolcache.key.v2"), never an edit of v1.
inline constexpr std::string_view kKeyDigestTagV1 = "toolcache.key.v1";

// kKeyDigestTagV1, then for scope, server, tool, canonical_args in that
// order: the field's length as 8 bytes big-endian, then its bytes.
std::string EncodeKeyForDigest(const CacheKey& key);

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_CORE_KEY_INTERNAL_H_
