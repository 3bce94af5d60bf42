// SHA-256 through OpenSSL EVP.
//
// Invariants: ctx_ is a live EVP_MD_CTX initialised for SHA-256 from the
// constructor until the destructor. OpenSSL failures for an in-memory SHA-256
// can only mean allocation failure; they are treated as fatal (there is no
// meaningful fallback for a key digest, and a wrong digest would be worse).
#include "src/core/sha256.h"

#include <openssl/evp.h>
#include <spdlog/spdlog.h>

#include <cstdlib>

namespace toolcache {
namespace {

// Choice: OpenSSL failure aborts; a wrong key digest would be worse.
[[noreturn]] void Fatal(const char* what) {
  spdlog::critical("sha256: OpenSSL {} failed", what);
  std::abort();
}

// The SHA-256 implementation, fetched once: an explicit fetch avoids the
// provider lookup that EVP_sha256() costs on every OpenSSL 3 init (about
// half the time of hashing a small key).
const EVP_MD* Sha256Md() {
  static const EVP_MD* const md = [] {
    EVP_MD* m = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    if (m == nullptr) Fatal("EVP_MD_fetch(SHA256)");
    return m;  // intentionally never freed: lives for the process
  }();
  return md;
}

// Choice: each thread keeps up to kSpareContexts finished contexts and
// re-initialises one for the next digest. A context made and freed per
// digest cost ~1,400 instructions of a cache-API hit's ~5,900 for the key
// (EVP_MD_CTX_new, the provider's context, EVP_MD_CTX_free); re-running
// EVP_DigestInit_ex on a context that already holds SHA-256 resets its
// state in place, so every digest starts from the same initial state as a
// new context's (sha256_test's vectors and the key tests pin the bytes).
constexpr size_t kSpareContexts = 4;
constexpr size_t kClosed = SIZE_MAX;  // the thread's spares were freed

// Trivially destructible, so a Sha256 destroyed after the thread's guard
// ran (a static one at exit) still finds well-defined storage: n ==
// kClosed then, and its context is freed instead of kept.
struct Spares {
  EVP_MD_CTX* ctx[kSpareContexts];
  size_t n;
};
thread_local Spares spare = {{}, 0};

struct SparesGuard {
  SparesGuard() = default;
  SparesGuard(const SparesGuard&) = delete;
  SparesGuard& operator=(const SparesGuard&) = delete;
  ~SparesGuard() {
    for (size_t i = 0; i < spare.n; ++i) EVP_MD_CTX_free(spare.ctx[i]);
    spare.n = kClosed;
  }
};

EVP_MD_CTX* TakeContext() {
  if (spare.n != kClosed && spare.n > 0) return spare.ctx[--spare.n];
  EVP_MD_CTX* c = EVP_MD_CTX_new();
  if (c == nullptr) Fatal("EVP_MD_CTX_new");
  return c;
}

void GiveBack(EVP_MD_CTX* c) {
  if (spare.n < kSpareContexts) {
    // The first context kept on this thread registers the guard that frees
    // the spares at thread exit.
    thread_local SparesGuard guard;
    (void)guard;
    if (spare.n != kClosed) {
      spare.ctx[spare.n++] = c;
      return;
    }
  }
  EVP_MD_CTX_free(c);
}

}  // namespace

Sha256::Sha256() : ctx_(TakeContext()) {
  if (EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), Sha256Md(), nullptr) !=
      1) {
    Fatal("EVP_DigestInit_ex");
  }
}

Sha256::~Sha256() { GiveBack(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256::Update(std::string_view bytes) {
  if (bytes.empty()) return;
  if (EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), bytes.data(),
                       bytes.size()) != 1) {
    Fatal("EVP_DigestUpdate");
  }
}

Sha256Digest Sha256::Finish() {
  Sha256Digest out{};
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), out.data(), &len) !=
          1 ||
      len != out.size()) {
    Fatal("EVP_DigestFinal_ex");
  }
  return out;
}

void Sha256::CopyFrom(const Sha256& other) {
  if (EVP_MD_CTX_copy_ex(static_cast<EVP_MD_CTX*>(ctx_),
                         static_cast<const EVP_MD_CTX*>(other.ctx_)) != 1) {
    Fatal("EVP_MD_CTX_copy_ex");
  }
}

Sha256Digest ComputeSha256(std::string_view bytes) {
  Sha256 h;
  h.Update(bytes);
  return h.Finish();
}

std::string ToHex(const Sha256Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(digest.size() * 2);
  for (uint8_t b : digest) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xF]);
  }
  return out;
}

}  // namespace toolcache
