#include "src/core/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace toolcache {

Status WriteFileAtomically(const std::string& path, std::string_view contents,
                           std::string_view what) {
  const std::string tmp = path + ".tmp";
  const std::string cannot = "cannot write " + std::string(what) + " '";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Unavailable(cannot + tmp + "'");
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    if (!out) return Unavailable(cannot + tmp + "'");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Unavailable("cannot rename '" + tmp + "' to '" + path +
                       "': " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace toolcache
