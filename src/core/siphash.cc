// Invariants:
// - One implementation of the rounds for both variants (C compression and
//   D finalisation rounds); input read little-endian 8 bytes at a time,
//   the last block padded with the length byte, as the paper specifies.
// Choice: SipHash-1-3 for fingerprints: half the rounds of 2-4 with no
// known practical attack on the keyed PRF at this size (Rust, CPython).
#include "src/core/siphash.h"

#include <bit>
#include <cstring>
#include <random>

namespace toolcache {

namespace {

inline uint64_t Rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

struct State {
  uint64_t v0, v1, v2, v3;
  void Round() {
    v0 += v1;
    v1 = Rotl(v1, 13);
    v1 ^= v0;
    v0 = Rotl(v0, 32);
    v2 += v3;
    v3 = Rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = Rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = Rotl(v1, 17);
    v1 ^= v2;
    v2 = Rotl(v2, 32);
  }
};

inline uint64_t Load64(const unsigned char* p) {
  if constexpr (std::endian::native == std::endian::little) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

template <int C, int D>
uint64_t Sip(const SipKey& key, std::string_view bytes) {
  State s{0x736f6d6570736575ULL ^ key.k0, 0x646f72616e646f6dULL ^ key.k1,
          0x6c7967656e657261ULL ^ key.k0, 0x7465646279746573ULL ^ key.k1};
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  const size_t whole = n - n % 8;
  for (size_t i = 0; i < whole; i += 8) {
    const uint64_t m = Load64(p + i);
    s.v3 ^= m;
    for (int r = 0; r < C; ++r) s.Round();
    s.v0 ^= m;
  }
  uint64_t last = static_cast<uint64_t>(n & 0xff) << 56;
  for (size_t i = whole; i < n; ++i) {
    last |= static_cast<uint64_t>(p[i]) << (8 * (i - whole));
  }
  s.v3 ^= last;
  for (int r = 0; r < C; ++r) s.Round();
  s.v0 ^= last;
  s.v2 ^= 0xff;
  for (int r = 0; r < D; ++r) s.Round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

}  // namespace

SipKey SipKey::Random() {
  std::random_device rd;
  SipKey k;
  k.k0 = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  k.k1 = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return k;
}

uint64_t SipHash13(const SipKey& key, std::string_view bytes) {
  return Sip<1, 3>(key, bytes);
}

uint64_t SipHash24(const SipKey& key, std::string_view bytes) {
  return Sip<2, 4>(key, bytes);
}

}  // namespace toolcache
