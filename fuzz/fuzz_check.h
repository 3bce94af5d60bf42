// FUZZ_CHECK: the invariant check of the fuzz targets. A violated invariant
// prints what broke and aborts, which libFuzzer (and the replay runner, and
// CTest) report as a crash with the input that caused it.
//
// Thread-safety: targets are single-threaded.
//
// Example:
//   FUZZ_CHECK(again == once, "canonical form is not a fixed point");
#ifndef TOOLCACHE_FUZZ_FUZZ_CHECK_H_
#define TOOLCACHE_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond, what)                                               \
  do {                                                                       \
    if (!(cond)) {                                                           \
      std::fprintf(stderr, "%s:%d: invariant violated: %s (%s)\n", __FILE__, \
                   __LINE__, what, #cond);                                   \
      std::abort();                                                          \
    }                                                                        \
  } while (0)

#endif  // TOOLCACHE_FUZZ_FUZZ_CHECK_H_
