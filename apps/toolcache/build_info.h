// What this binary was built from: the version (the CMake project version)
// and the git revision of the checkout it was built from, generated at every
// build by cmake/toolcache_revision.cmake ("unknown" outside a git checkout).
#ifndef TOOLCACHE_APPS_TOOLCACHE_BUILD_INFO_H_
#define TOOLCACHE_APPS_TOOLCACHE_BUILD_INFO_H_

namespace toolcache::cli {

// `git describe --always --dirty` of the source tree at build time, e.g.
// "4ce6d55a1b2c" or "4ce6d55a1b2c-dirty"; "unknown" when not a git checkout.
const char* GitRevision();

}  // namespace toolcache::cli

#endif  // TOOLCACHE_APPS_TOOLCACHE_BUILD_INFO_H_
