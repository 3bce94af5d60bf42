// The SQLite backend opened by several processes at once: sharing one file
// between processes is the documented use, so none may fail to start.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "toolcache/clock.h"
#include "toolcache/store.h"

namespace toolcache {
namespace {

// Issue 27.16: the second of two `toolcache serve` on one new file failed
// ("PRAGMA journal_mode=WAL: database is locked") in 1 of 3 runs.
TEST(SqliteStoreOpenTest, ProcessesOpeningOneNewFileAtOnceAllSucceed) {
  char tmpl[] = "/tmp/toolcache-sqlite-open-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  constexpr int kRounds = 60;
  constexpr int kProcesses = 6;
  int failures = 0;
  for (int round = 0; round < kRounds; ++round) {
    const std::string path = dir + "/s" + std::to_string(round) + ".db";
    std::vector<pid_t> children;
    for (int i = 0; i < kProcesses; ++i) {
      const pid_t pid = fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        SystemClock clock;
        auto store = OpenStore("sqlite:" + path, {.clock = &clock});
        if (!store.ok()) {
          std::fprintf(stderr, "round %d process %d: %s\n", round, i,
                       store.status().message().c_str());
          std::_Exit(1);
        }
        // A write through the opened store.
        const std::string key = "k" + std::to_string(i);
        Status put = (*store)->Put({.ns = "t", .key = key}, "v", 60);
        if (!put.ok()) {
          std::fprintf(stderr, "round %d process %d: put: %s\n", round, i,
                       put.message().c_str());
        }
        std::_Exit(put.ok() ? 0 : 2);
      }
      children.push_back(pid);
    }
    for (pid_t pid : children) {
      int status = 0;
      ASSERT_EQ(waitpid(pid, &status, 0), pid);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
    }
  }
  EXPECT_EQ(failures, 0) << "of " << kRounds * kProcesses << " opens";
  std::string rm = "rm -rf '" + dir + "'";
  EXPECT_EQ(std::system(rm.c_str()), 0);
}

}  // namespace
}  // namespace toolcache
