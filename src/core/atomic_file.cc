// Invariants:
//   * The temporary file is created by this call (O_CREAT | O_EXCL |
//     O_NOFOLLOW, a random name in the target's folder): a file or link
//     planted beside the target is never opened, followed or overwritten.
//   * On any failure the temporary file is removed; the target is either
//     the old file or the new one, never half of either.
// Choice: mkstemp-like names ("<path>.tmp.XXXXXX") rather than a fixed
// "<path>.tmp": a fixed name is what a planted symlink would point at
// (issue 27.11), and two writers of one path no longer share a temporary.
#include "src/core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

namespace toolcache {
namespace {

// Creates a new file next to `path` that nobody else has opened; its name
// goes to `*tmp`. -1 (errno set) when no name could be created.
int CreateExclusive(const std::string& path, std::string* tmp) {
  static constexpr char kAlphabet[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd() ^
                      static_cast<uint64_t>(getpid()));
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = path + ".tmp.";
    for (int i = 0; i < 12; ++i) name += kAlphabet[rng() % 62];
    const int fd =
        open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
             0644);
    if (fd >= 0) {
      *tmp = std::move(name);
      return fd;
    }
    if (errno != EEXIST) return -1;
  }
  errno = EEXIST;
  return -1;
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view contents,
                           std::string_view what) {
  const std::string cannot = "cannot write " + std::string(what) + " '";
  std::string tmp;
  const int fd = CreateExclusive(path, &tmp);
  if (fd < 0) {
    return Unavailable(cannot + path + "': cannot create a temporary file: " +
                       std::strerror(errno));
  }
  auto fail = [&](std::string message) {
    const int saved = errno;
    close(fd);
    unlink(tmp.c_str());
    return Unavailable(message + ": " + std::strerror(saved));
  };
  size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n =
        write(fd, contents.data() + written, contents.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(cannot + tmp + "'");
    written += static_cast<size_t>(n);
  }
  if (close(fd) != 0) {
    const int saved = errno;
    unlink(tmp.c_str());
    return Unavailable(cannot + tmp + "': " + std::strerror(saved));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    unlink(tmp.c_str());
    return Unavailable("cannot rename '" + tmp + "' to '" + path +
                       "': " + std::strerror(saved));
  }
  return Status::Ok();
}

}  // namespace toolcache
