// SHA-256 over byte strings, backed by OpenSSL EVP. Internal to core: the
// key digest (key.cc) is its only user on the request path.
//
// Thread-safety: a Sha256 object is not thread-safe; the free function is.
//
// Example:
//   Sha256 h;
//   h.Update("abc");
//   std::array<uint8_t, 32> d = h.Finish();
#ifndef TOOLCACHE_SRC_CORE_SHA256_H_
#define TOOLCACHE_SRC_CORE_SHA256_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace toolcache {

using Sha256Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  // Appends bytes to the message. REQUIRES: Finish() not yet called.
  void Update(std::string_view bytes);
  // Returns the digest of everything passed to Update(). Call once.
  Sha256Digest Finish();
  // Continues from `other`'s state, as if everything passed to `other`'s
  // Update() had been passed here (e.g. an HMAC's key block, absorbed once
  // per key). REQUIRES: neither has finished.
  void CopyFrom(const Sha256& other);

 private:
  void* ctx_;  // EVP_MD_CTX*, owned
};

// One-shot digest of `bytes`.
Sha256Digest ComputeSha256(std::string_view bytes);

// `digest` as lowercase hex.
std::string ToHex(const Sha256Digest& digest);

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_CORE_SHA256_H_
