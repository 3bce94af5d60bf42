#include "src/mcp/child.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace toolcache::mcp {
namespace {

TEST(SpawnChild, PipesReachTheChildsStdinAndStdout) {
  Result<ChildProcess> c = SpawnChild({"cat"});
  ASSERT_TRUE(c.ok()) << c.status().message();
  const std::string line = "{\"jsonrpc\":\"2.0\",\"id\":1}\n";
  ASSERT_EQ(write(c.value().to_child, line.data(), line.size()),
            static_cast<ssize_t>(line.size()));
  close(c.value().to_child);  // cat echoes, then ends at EOF
  std::string got;
  char buf[256];
  for (;;) {
    pollfd p{c.value().from_child, POLLIN, 0};
    ASSERT_GT(poll(&p, 1, 5000), 0) << "no answer from the child";
    ssize_t n = read(c.value().from_child, buf, sizeof buf);
    if (n <= 0) break;  // non-blocking: poll said readable, 0 is EOF
    got.append(buf, static_cast<size_t>(n));
  }
  EXPECT_EQ(got, line);
  close(c.value().from_child);
  int status = 0;
  ASSERT_EQ(waitpid(c.value().pid, &status, 0), c.value().pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(SpawnChild, AMissingProgramIsAnErrorNamingIt) {
  Result<ChildProcess> c = SpawnChild({"toolcache-no-such-program-xyz"});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find(
                "cannot start server 'toolcache-no-such-program-xyz'"),
            std::string::npos)
      << c.status().message();
}

TEST(SpawnChild, AnEmptyCommandIsAnError) {
  Result<ChildProcess> c = SpawnChild({});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
}

TEST(StopLadder, SigtermAfterOneGraceThenSigkillAfterAnother) {
  // A child that ignores SIGTERM: only the ladder's SIGKILL ends it.
  Result<ChildProcess> c =
      SpawnChild({"sh", "-c", "trap '' TERM; while :; do sleep 0.05; done"});
  ASSERT_TRUE(c.ok()) << c.status().message();
  usleep(100 * 1000);  // let the trap be installed
  StopLadder ladder;
  EXPECT_EQ(ladder.Step(c.value().pid, 0), 0) << "not begun: nothing due";
  ladder.Begin(10, 2);
  EXPECT_EQ(ladder.Step(c.value().pid, 11.9), 0);
  EXPECT_EQ(ladder.Step(c.value().pid, 12), SIGTERM);
  EXPECT_EQ(ladder.Step(c.value().pid, 12.5), 0);
  int status = 0;
  EXPECT_EQ(waitpid(c.value().pid, &status, WNOHANG), 0)
      << "the child ignores SIGTERM and must still run";
  EXPECT_EQ(ladder.Step(c.value().pid, 14), SIGKILL);
  EXPECT_EQ(ladder.Step(c.value().pid, 100), 0) << "SIGKILL is sent once";
  ASSERT_EQ(waitpid(c.value().pid, &status, 0), c.value().pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  close(c.value().to_child);
  close(c.value().from_child);
}

// A stop the proxy was told to make itself (SIGTERM to the proxy) sends
// its SIGTERM at once, begun or not; the SIGKILL still waits a grace.
TEST(StopLadder, HurrySendsTheSigtermNowAndKeepsTheKillGrace) {
  Result<ChildProcess> c =
      SpawnChild({"sh", "-c", "trap '' TERM; while :; do sleep 0.05; done"});
  ASSERT_TRUE(c.ok()) << c.status().message();
  usleep(100 * 1000);
  StopLadder ladder;
  EXPECT_EQ(ladder.next_at(), 0);
  ladder.Begin(10, 5);
  EXPECT_EQ(ladder.next_at(), 15);
  ladder.Hurry(11, 5);
  EXPECT_EQ(ladder.next_at(), 11);
  EXPECT_EQ(ladder.Step(c.value().pid, 11), SIGTERM);
  EXPECT_EQ(ladder.next_at(), 16);
  ladder.Hurry(12, 5);  // SIGTERM already sent: nothing moves
  EXPECT_EQ(ladder.next_at(), 16);
  EXPECT_EQ(ladder.Step(c.value().pid, 15.9), 0);
  EXPECT_EQ(ladder.Step(c.value().pid, 16), SIGKILL);
  EXPECT_EQ(ladder.next_at(), 0);
  int status = 0;
  ASSERT_EQ(waitpid(c.value().pid, &status, 0), c.value().pid);
  close(c.value().to_child);
  close(c.value().from_child);
  StopLadder fresh;  // not begun: Hurry begins it, due now
  fresh.Hurry(20, 5);
  EXPECT_EQ(fresh.next_at(), 20);
}

}  // namespace
}  // namespace toolcache::mcp
