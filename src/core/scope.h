// Internals of the credential digest (include/toolcache/scope.h) that tests
// and counters look at: how many digests this thread actually computed.
// CredentialDigest answers a call whose key and credential bytes equal the
// thread's previous call from that call's digest; every other call computes.
//
// Thread-safety: the count is per thread (thread_local), no locking.
//
// Example:
//   const uint64_t before = internal::CredentialDigestsComputed();
//   CredentialDigest({{"x-api-key", "k"}});
//   CredentialDigest({{"x-api-key", "k"}});  // the same bytes: reused
//   // internal::CredentialDigestsComputed() - before == 1
#ifndef TOOLCACHE_SRC_CORE_SCOPE_H_
#define TOOLCACHE_SRC_CORE_SCOPE_H_

#include <cstdint>

namespace toolcache::internal {

// Digests this thread computed (not answered from its last digest).
uint64_t CredentialDigestsComputed();

}  // namespace toolcache::internal

#endif  // TOOLCACHE_SRC_CORE_SCOPE_H_
