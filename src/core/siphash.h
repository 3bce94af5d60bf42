// SipHash (Aumasson & Bernstein, "SipHash: a fast short-input PRF", 2012):
// a keyed 64-bit hash for in-memory fingerprints that another principal
// must not be able to collide offline. Without the 128-bit key an attacker
// cannot compute the hash, so cannot search for two inputs that collide;
// SHA-256 resists that too but costs several times more per byte, and a
// truncated unkeyed fast hash (FNV, xxHash without a secret) does not.
// Not for anything persisted or compared across processes: the key is
// per process (or per object), so the values are too.
//
// Thread-safety: a SipKey is immutable; the functions are pure.
//
// Example:
//   const SipKey key = SipKey::Random();
//   uint64_t h = SipHash13(key, "bytes");
#ifndef TOOLCACHE_SRC_CORE_SIPHASH_H_
#define TOOLCACHE_SRC_CORE_SIPHASH_H_

#include <cstdint>
#include <string_view>

namespace toolcache {

struct SipKey {
  uint64_t k0 = 0;
  uint64_t k1 = 0;
  // 128 bits from std::random_device (the OS's generator).
  static SipKey Random();
};

// SipHash-1-3 (one compression round, three finalisation rounds; the
// variant Rust's HashMap and CPython use): the fingerprints' hash.
uint64_t SipHash13(const SipKey& key, std::string_view bytes);
// SipHash-2-4, the paper's reference variant (its test vectors pin the
// shared implementation).
uint64_t SipHash24(const SipKey& key, std::string_view bytes);

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_CORE_SIPHASH_H_
