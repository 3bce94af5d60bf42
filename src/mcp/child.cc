#include "src/mcp/child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <cstring>

extern char** environ;

namespace toolcache::mcp {

void SetNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

Result<ChildProcess> SpawnChild(const std::vector<std::string>& command) {
  if (command.empty()) {
    return InvalidArgument("cannot start server: the command is empty");
  }
  int to_child[2];
  int from_child[2];
  if (pipe2(to_child, O_CLOEXEC) != 0) {
    return Internal(std::string("pipe: ") + std::strerror(errno));
  }
  if (pipe2(from_child, O_CLOEXEC) != 0) {
    const int err = errno;
    close(to_child[0]);
    close(to_child[1]);
    return Internal(std::string("pipe: ") + std::strerror(err));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, to_child[0], 0);
  posix_spawn_file_actions_adddup2(&fa, from_child[1], 1);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t empty, defaults;
  sigemptyset(&empty);
  sigemptyset(&defaults);
  for (int s : {SIGPIPE, SIGCHLD, SIGUSR1, SIGTERM, SIGINT, SIGHUP}) {
    sigaddset(&defaults, s);
  }
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> argv;
  for (const std::string& a : command) {
    argv.push_back(const_cast<char*>(a.c_str()));
  }
  argv.push_back(nullptr);
  ChildProcess child;
  const int rc =
      posix_spawnp(&child.pid, argv[0], &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(to_child[0]);
  close(from_child[1]);
  if (rc != 0) {
    close(to_child[1]);
    close(from_child[0]);
    return InvalidArgument("cannot start server '" + command[0] +
                           "': " + std::strerror(rc));
  }
  child.to_child = to_child[1];
  child.from_child = from_child[0];
  SetNonBlocking(child.to_child);
  SetNonBlocking(child.from_child);
  return child;
}

}  // namespace toolcache::mcp
