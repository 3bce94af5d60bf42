// WriteFileAtomically: the target gets the whole contents, and nothing
// planted beside it (a link at the old fixed "<path>.tmp") is followed.
#include "src/core/atomic_file.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace toolcache {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  closedir(d);
  return out;
}

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/toolcache-atomic-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override {
    for (const std::string& n : Names(dir_)) unlink((dir_ + "/" + n).c_str());
    rmdir(dir_.c_str());
  }
  std::string dir_;
};

TEST_F(AtomicFileTest, WritesTheWholeFileAndLeavesNoTemporary) {
  const std::string path = dir_ + "/stats.json";
  ASSERT_TRUE(WriteFileAtomically(path, "first", "stats file").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "second", "stats file").ok());
  EXPECT_EQ(Read(path), "second");
  EXPECT_EQ(Names(dir_), std::vector<std::string>{"stats.json"});
}

TEST_F(AtomicFileTest, NeverFollowsALinkPlantedAtTheTemporaryName) {
  // Issue 27.11: a link at "<path>.tmp" got the stats written through it.
  const std::string victim = dir_ + "/victim";
  { std::ofstream(victim) << "precious"; }
  const std::string path = dir_ + "/stats.json";
  ASSERT_EQ(symlink(victim.c_str(), (path + ".tmp").c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(path, "stats", "stats file").ok());
  EXPECT_EQ(Read(victim), "precious");
  EXPECT_EQ(Read(path), "stats");
  struct stat st;
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
}

TEST_F(AtomicFileTest, AFailureRemovesTheTemporaryFile) {
  // The target is a non-empty directory: the rename fails.
  const std::string path = dir_ + "/sub";
  ASSERT_EQ(mkdir(path.c_str(), 0755), 0);
  { std::ofstream(path + "/x") << "x"; }
  Status s = WriteFileAtomically(path, "stats", "stats file");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(Names(dir_), std::vector<std::string>{"sub"});
  unlink((path + "/x").c_str());
  rmdir(path.c_str());
}

}  // namespace
}  // namespace toolcache
