// Invariants: a SignalFd restores exactly the mask it replaced, once, after
// closing its fd; Open never leaves the mask changed when it fails.
// Choice: pthread_sigmask everywhere (the stdio proxy used sigprocmask,
// which is unspecified in a multi-threaded process; Linux treats both the
// same).
#include "src/runtime/signals.h"

#include <pthread.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace toolcache::runtime {

sigset_t ServerSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGTERM, SIGINT, SIGHUP, SIGUSR1}) sigaddset(&set, s);
  return set;
}

void BlockServerSignals() {
  sigset_t set = ServerSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

Result<std::unique_ptr<SignalFd>> SignalFd::Open(
    std::initializer_list<int> extra) {
  signal(SIGPIPE, SIG_IGN);
  sigset_t mask = ServerSignals();
  for (int s : extra) sigaddset(&mask, s);
  sigset_t old_mask;
  pthread_sigmask(SIG_BLOCK, &mask, &old_mask);
  const int fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    return Internal(std::string("signalfd: ") + std::strerror(err));
  }
  return std::unique_ptr<SignalFd>(new SignalFd(fd, old_mask));
}

SignalFd::~SignalFd() {
  close(fd_);
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

void SignalFd::Drain(const std::function<void(int)>& on) {
  signalfd_siginfo si;
  while (read(fd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
    on(static_cast<int>(si.ssi_signo));
  }
}

}  // namespace toolcache::runtime
