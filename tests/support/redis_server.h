// A real redis-server for tests: started on 127.0.0.1 with a free port, no
// persistence, in a temporary folder; stopped (and the folder removed) by
// the destructor. Kill / Restart / Pause let fault tests take the server
// away and bring it back on the same port.
//
// redis-server comes from Debian (scripts/setup.sh installs it). When it is
// missing, Start() fails with a message saying so: the tests that need it
// fail instead of silently passing.
//
// Thread-safety: none; one test thread drives it. Ownership: owns the child
// process.
//
// Example:
//   RedisServer redis;
//   ASSERT_TRUE(redis.Start()) << redis.error();
//   auto store = OpenStore(redis.Spec());
#ifndef TOOLCACHE_TESTS_SUPPORT_REDIS_SERVER_H_
#define TOOLCACHE_TESTS_SUPPORT_REDIS_SERVER_H_

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace toolcache::testing {

class RedisServer {
 public:
  RedisServer() = default;
  ~RedisServer() {
    Stop();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  // Starts the server on a free port; false (see error()) if it cannot.
  bool Start() {
    if (dir_.empty()) {
      char tmpl[] = "/tmp/toolcache-redis-XXXXXX";
      if (mkdtemp(tmpl) == nullptr) return Fail("mkdtemp failed");
      dir_ = tmpl;
    }
    for (int attempt = 0; attempt < 5; ++attempt) {
      if (port_ == 0 || attempt > 0) port_ = FreePort();
      if (Spawn() && WaitReady()) return true;
      Stop();
    }
    return false;
  }
  // Starts again on the same port (after Kill or Stop).
  bool Restart() { return Spawn() && WaitReady(); }
  // SIGKILL: the server vanishes mid-run.
  void Kill() { Signal(SIGKILL, /*wait=*/true); }
  // SIGSTOP / SIGCONT: the server stops answering (timeouts), then resumes.
  void Pause() { Signal(SIGSTOP, false); }
  void Resume() { Signal(SIGCONT, false); }
  void Stop() {
    Signal(SIGCONT, false);  // a paused server cannot act on SIGTERM
    Signal(SIGTERM, true);
  }

  int port() const { return port_; }
  std::string Spec(std::string_view query = "") const {
    std::string s = "redis://127.0.0.1:" + std::to_string(port_) + "/0";
    if (!query.empty()) s += "?" + std::string(query);
    return s;
  }
  const std::string& error() const { return error_; }

  // Runs one command (argv) against the server; the reply as text ("" on
  // failure). For test setup such as CONFIG SET.
  std::string Command(const std::vector<std::string>& args) const {
    timeval tv{1, 0};
    redisContext* c = redisConnectWithTimeout("127.0.0.1", port_, tv);
    if (c == nullptr || c->err) {
      if (c != nullptr) redisFree(c);
      return "";
    }
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const std::string& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(redisCommandArgv(
        c, static_cast<int>(argv.size()), argv.data(), lens.data()));
    std::string out;
    if (r != nullptr) {
      if (r->type == REDIS_REPLY_INTEGER) {
        out = std::to_string(r->integer);
      } else if (r->str != nullptr) {
        out.assign(r->str, r->len);
      }
      freeReplyObject(r);
    }
    redisFree(c);
    return out;
  }

 private:
  bool Fail(std::string msg) {
    error_ = std::move(msg);
    return false;
  }

  static int FreePort() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    int port = 0;
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
      port = ntohs(a.sin_port);
    }
    close(fd);
    return port;
  }

  bool Spawn() {
    std::string binary;
    for (const char* p :
         {"/usr/bin/redis-server", "/usr/local/bin/redis-server",
          "/usr/sbin/redis-server"}) {
      if (access(p, X_OK) == 0) binary = p;
    }
    if (binary.empty()) {
      return Fail(
          "redis-server not found: run scripts/setup.sh (Debian package "
          "redis-server)");
    }
    const std::string port = std::to_string(port_);
    std::vector<std::string> args = {binary,
                                     "--port",
                                     port,
                                     "--bind",
                                     "127.0.0.1",
                                     "--save",
                                     "",
                                     "--appendonly",
                                     "no",
                                     "--dir",
                                     dir_,
                                     "--logfile",
                                     dir_ + "/redis.log",
                                     "--daemonize",
                                     "no"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid < 0) return Fail("cannot fork to start " + binary);
    if (pid == 0) {
      // The server dies with the test, even if the test crashes.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      execv(binary.c_str(), argv.data());
      _exit(127);
    }
    pid_ = pid;
    return true;
  }

  bool WaitReady() {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (Command({"PING"}) == "PONG") return true;
      int status = 0;
      if (pid_ != 0 && waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = 0;
        return Fail("redis-server exited at start (port " +
                    std::to_string(port_) + " taken?)");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return Fail("redis-server did not answer PING within 10 s");
  }

  void Signal(int sig, bool wait) {
    if (pid_ == 0) return;
    kill(pid_, sig);
    if (wait) {
      int status = 0;
      waitpid(pid_, &status, 0);
      pid_ = 0;
    }
  }

  std::string dir_;
  std::string error_;
  int port_ = 0;
  pid_t pid_ = 0;
};

// One server for a whole test binary: started on first use, stopped when
// the binary exits (and killed with it if it crashes). Tests sharing it keep
// apart by key prefix.
inline RedisServer& SharedRedisServer() {
  static RedisServer server;
  static const bool started = [] {
    const bool ok = server.Start();
    if (!ok) ADD_FAILURE() << server.error();
    return ok;
  }();
  (void)started;
  return server;
}

}  // namespace toolcache::testing

#endif  // TOOLCACHE_TESTS_SUPPORT_REDIS_SERVER_H_
