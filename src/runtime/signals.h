// One signal set-up for every face. The stop signals (SIGTERM, SIGINT,
// SIGHUP) end a face gracefully, SIGUSR1 writes its stats file, SIGPIPE is
// ignored (a closed peer is an EPIPE on the write, never a dead process).
// The HTTP faces (`serve`, `proxy`) block them in every thread and take them
// in one sigwait thread (src/http/run.cc, BlockServerSignals); the stdio
// MCP faces read them through a signalfd inside their poll loop (SignalFd).
//
// Thread-safety: BlockServerSignals before any thread starts (threads
// inherit the mask); a SignalFd belongs to the thread that opened it, which
// must be the only one the signals can be delivered to.
//
// Example:
//   Result<std::unique_ptr<runtime::SignalFd>> sig =
//       runtime::SignalFd::Open({SIGCHLD});
//   if (!sig.ok()) return sig.status();
//   pollfd p{(*sig)->fd(), POLLIN, 0};
//   ... (*sig)->Drain([&](int signo) { if (signo != SIGUSR1) stop(); });
#pragma once

#include <signal.h>

#include <functional>
#include <initializer_list>
#include <memory>

#include "toolcache/status.h"

namespace toolcache::runtime {

// SIGTERM, SIGINT, SIGHUP and SIGUSR1: the signals every face answers.
sigset_t ServerSignals();

// Ignores SIGPIPE and blocks ServerSignals() in the calling thread.
void BlockServerSignals();

class SignalFd {
 public:
  // Ignores SIGPIPE, blocks ServerSignals() plus `extra` in the calling
  // thread and opens a non-blocking, close-on-exec signalfd for them.
  // Internal error (the mask restored) when the kernel refuses.
  [[nodiscard]] static Result<std::unique_ptr<SignalFd>> Open(
      std::initializer_list<int> extra = {});
  // Closes the fd and restores the thread's previous mask (a signal still
  // pending is then delivered with its default action).
  ~SignalFd();
  SignalFd(const SignalFd&) = delete;
  SignalFd& operator=(const SignalFd&) = delete;

  int fd() const { return fd_; }
  // Reads every pending signal and calls `on(signo)` for each, in order.
  void Drain(const std::function<void(int)>& on);

 private:
  SignalFd(int fd, const sigset_t& old_mask) : fd_(fd), old_mask_(old_mask) {}
  int fd_;
  sigset_t old_mask_;
};

}  // namespace toolcache::runtime
