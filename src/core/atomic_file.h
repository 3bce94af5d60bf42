// Writing a file so that a reader never sees half of it.
#ifndef TOOLCACHE_SRC_CORE_ATOMIC_FILE_H_
#define TOOLCACHE_SRC_CORE_ATOMIC_FILE_H_

#include <string>
#include <string_view>

#include "toolcache/status.h"

namespace toolcache {

// Writes `contents` to `path` + ".tmp" and renames it over `path`.
// `what` names the file in errors ("cannot write stats file 'x.tmp'").
Status WriteFileAtomically(const std::string& path, std::string_view contents,
                           std::string_view what);

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_CORE_ATOMIC_FILE_H_
