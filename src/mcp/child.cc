// Invariants: SpawnChild leaves no fd of the child's pipes open on failure;
// StopLadder sends each signal at most once, SIGTERM before SIGKILL.
#include "src/mcp/child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <algorithm>
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

void StopLadder::Begin(double now, double grace_seconds) {
  if (begun()) return;
  grace_ = grace_seconds;
  // Choice: a zero origin still counts as begun (term_at_ > 0).
  term_at_ = std::max(now + grace_seconds, 1e-9);
}

void StopLadder::Hurry(double now, double grace_seconds) {
  Begin(now, grace_seconds);
  if (kill_at_ == 0) term_at_ = std::max(std::min(term_at_, now), 1e-9);
}

int StopLadder::Step(pid_t pid, double now) {
  if (!begun() || killed_ || pid <= 0) return 0;
  if (kill_at_ == 0) {
    if (now < term_at_) return 0;
    kill(pid, SIGTERM);
    kill_at_ = now + grace_;
    return SIGTERM;
  }
  if (now < kill_at_) return 0;
  kill(pid, SIGKILL);
  killed_ = true;
  return SIGKILL;
}

}  // namespace toolcache::mcp
