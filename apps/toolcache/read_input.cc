// ReadCapped: the bounded whole-input read shared by the commands that take
// JSON or tool definitions on stdin or from a file.
#include <cerrno>
#include <cstring>

#include "apps/toolcache/commands.h"

namespace toolcache::cli {

bool ReadCapped(std::FILE* in, uint64_t limit, std::string* out, bool* too_long,
                std::string* error) {
  char buf[1 << 16];
  while (true) {
    const size_t n = std::fread(buf, 1, sizeof(buf), in);
    out->append(buf, n);
    if (limit != 0 && out->size() > limit) {
      *too_long = true;
      return true;
    }
    if (n < sizeof(buf)) {
      if (std::ferror(in) == 0) return true;
      *error = std::strerror(errno);
      return false;
    }
  }
}

}  // namespace toolcache::cli
