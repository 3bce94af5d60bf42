// Test data lookup: every input a test reads lives under tests/data/ of the
// checkout (provenance in tests/data/PROVENANCE.md), found through the
// TOOLCACHE_SOURCE_DIR compile definition that CMake gives every test.
//
// A missing or unreadable file is a test failure that names the file, never a
// crash: ReadTestData reports it with ADD_FAILURE and returns nullopt, and
// callers ASSERT on the result before using it.
//
// Example:
//   std::optional<std::string> csv =
//       ReadTestData("classify/github-mcp-server-tools.csv");
//   ASSERT_TRUE(csv.has_value());
#ifndef TOOLCACHE_TESTS_SUPPORT_TEST_DATA_H_
#define TOOLCACHE_TESTS_SUPPORT_TEST_DATA_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

namespace toolcache::testing {

// Absolute path of tests/data/<relative>. The environment variable
// TOOLCACHE_TEST_DATA_DIR replaces tests/data/ (tests/e2e_data.sh points it
// at an empty folder to prove that missing data fails cleanly).
inline std::string TestDataPath(std::string_view relative) {
  const char* dir = std::getenv("TOOLCACHE_TEST_DATA_DIR");
  std::string base = dir != nullptr && *dir != '\0'
                         ? std::string(dir) + "/"
                         : std::string(TOOLCACHE_SOURCE_DIR) + "/tests/data/";
  return base + std::string(relative);
}

// The bytes of the file at `path`, or nullopt after a test failure naming it.
inline std::optional<std::string> ReadFileOrFail(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    ADD_FAILURE() << "test data file missing: " << path
                  << " (see tests/data/PROVENANCE.md)";
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) {
    ADD_FAILURE() << "test data file unreadable: " << path;
    return std::nullopt;
  }
  return text.str();
}

// The bytes of tests/data/<relative>, or nullopt after a test failure.
inline std::optional<std::string> ReadTestData(std::string_view relative) {
  return ReadFileOrFail(TestDataPath(relative));
}

// True when tests/data/<relative> is a directory; otherwise a test failure
// naming it.
inline bool TestDataDirOrFail(std::string_view relative) {
  std::error_code ec;
  if (std::filesystem::is_directory(TestDataPath(relative), ec)) return true;
  ADD_FAILURE() << "test data folder missing: " << TestDataPath(relative)
                << " (see tests/data/PROVENANCE.md)";
  return false;
}

}  // namespace toolcache::testing

#endif  // TOOLCACHE_TESTS_SUPPORT_TEST_DATA_H_
