// SignalFd: signals sent to the process arrive on the fd in order (not as
// their default action), SIGPIPE is ignored, and closing restores the mask.
#include "src/runtime/signals.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <pthread.h>

#include <vector>

namespace toolcache::runtime {
namespace {

bool Blocked(int signo) {
  sigset_t now;
  pthread_sigmask(SIG_BLOCK, nullptr, &now);
  return sigismember(&now, signo) == 1;
}

TEST(SignalFd, DeliversStopSignalsAndExtrasThenRestoresTheMask) {
  ASSERT_FALSE(Blocked(SIGTERM));
  {
    Result<std::unique_ptr<SignalFd>> sig = SignalFd::Open({SIGCHLD});
    ASSERT_TRUE(sig.ok()) << sig.status().message();
    EXPECT_TRUE(Blocked(SIGTERM));
    EXPECT_TRUE(Blocked(SIGUSR1));
    EXPECT_TRUE(Blocked(SIGCHLD));
    // Sent to this thread: blocked, so it waits on the fd instead of
    // killing the test binary.
    pthread_kill(pthread_self(), SIGUSR1);
    pthread_kill(pthread_self(), SIGTERM);
    pollfd p{(*sig)->fd(), POLLIN, 0};
    ASSERT_EQ(poll(&p, 1, 1000), 1);
    std::vector<int> got;
    (*sig)->Drain([&](int s) { got.push_back(s); });
    // Standard signals are delivered lowest number first.
    EXPECT_EQ(got, (std::vector<int>{SIGUSR1, SIGTERM}));
    struct sigaction pipe_action {};
    sigaction(SIGPIPE, nullptr, &pipe_action);
    EXPECT_EQ(pipe_action.sa_handler, SIG_IGN);
  }
  EXPECT_FALSE(Blocked(SIGTERM));
  EXPECT_FALSE(Blocked(SIGCHLD));
}

TEST(ServerSignals, TheFourEveryFaceAnswers) {
  sigset_t set = ServerSignals();
  for (int s : {SIGTERM, SIGINT, SIGHUP, SIGUSR1}) {
    EXPECT_EQ(sigismember(&set, s), 1) << s;
  }
  EXPECT_EQ(sigismember(&set, SIGPIPE), 0);
}

}  // namespace
}  // namespace toolcache::runtime
