// Writing a file so that a reader never sees half of it.
#ifndef TOOLCACHE_SRC_CORE_ATOMIC_FILE_H_
#define TOOLCACHE_SRC_CORE_ATOMIC_FILE_H_

#include <string>
#include <string_view>

#include "toolcache/status.h"

namespace toolcache {

// Writes `contents` to a new temporary file beside `path` (created
// exclusively under a random name, never following a link) and renames it
// over `path`; the temporary file is removed on failure. `what` names the
// file in errors ("cannot write stats file 'x.tmp.AbC123'"). Thread-safe;
// concurrent writers of one path each use their own temporary file.
Status WriteFileAtomically(const std::string& path, std::string_view contents,
                           std::string_view what);

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_CORE_ATOMIC_FILE_H_
