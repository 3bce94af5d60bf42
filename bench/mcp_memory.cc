// bench_mcp_memory: what one big message costs `toolcache mcp` in resident
// memory.
//
// The proxy runs the real binary in front of a scripted stdio server (this
// same binary with --server). For each scenario the proxy's peak resident
// set (VmHWM) is reset just before the message (/proc/PID/clear_refs "5") and
// read right after its answer arrived; the table shows that peak above the
// resident set before the message, and that increase divided by the message
// size:
//   client line   a tools/call of a write tool whose arguments make the line
//                 --line-mib MiB (the proxy forwards it to the server)
//   read line     the same size to a read-only tool (classified, keyed:
//                 the arguments are over the 16 MiB key limit, so it
//                 bypasses; the classifier's heuristic parses them)
//   server result a read whose answer is --result-mib MiB (forwarded to the
//                 client and stored: the stored copy is one more message)
//   cache hit     the same read again, answered from the store
//   retained      resident memory after all of them, above the idle proxy
// Each scenario runs in a fresh proxy --rounds times (default 3); medians.
//
// Usage: bench_mcp_memory [--toolcache PATH] [--line-mib N]
//                         [--result-mib N] [--rounds R]
// (PATH defaults to the toolcache binary of this build tree.)
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_util.h"
#include "src/mcp/json_scan.h"

extern char** environ;

namespace {

// --- the scripted server --------------------------------------------------

void WriteAll(int fd, std::string_view s) {
  while (!s.empty()) {
    ssize_t w = write(fd, s.data(), s.size());
    if (w <= 0) std::exit(1);
    s.remove_prefix(static_cast<size_t>(w));
  }
}

int RunServer() {
  std::string buf;
  std::vector<char> chunk(1 << 16);
  while (true) {
    ssize_t n = read(0, chunk.data(), chunk.size());
    if (n <= 0) return 0;
    buf.append(chunk.data(), static_cast<size_t>(n));
    size_t start = 0;
    size_t nl;
    while ((nl = buf.find('\n', start)) != std::string::npos) {
      std::string_view line(buf.data() + start, nl - start);
      start = nl + 1;
      auto m = toolcache::mcp::ScanMessage(line);
      if (!m.ok() || m->id.empty()) continue;
      const std::string head = R"({"jsonrpc":"2.0","id":)" + std::string(m->id);
      if (m->method_name == "tools/list") {
        WriteAll(
            1,
            head +
                R"(,"result":{"tools":[)"
                R"({"name":"get_blob","annotations":{"readOnlyHint":true,"openWorldHint":false}},)"
                R"({"name":"put_blob","annotations":{"readOnlyHint":false}}]}})"
                "\n");
      } else if (m->method_name == "tools/call" &&
                 toolcache::mcp::FindMember(m->params, "name") ==
                     R"("get_blob")") {
        // {"mib": N}: a text result of N MiB.
        std::string_view args =
            toolcache::mcp::FindMember(m->params, "arguments");
        const size_t mib = static_cast<size_t>(std::atoi(
            std::string(toolcache::mcp::FindMember(args, "mib")).c_str()));
        std::string out =
            head + R"(,"result":{"content":[{"type":"text","text":")";
        out.append(mib << 20, 'x');
        out += "\"}]}}\n";
        WriteAll(1, out);
      } else {
        WriteAll(
            1, head + R"(,"result":{"content":[{"type":"text","text":"ok"}]}})"
                      "\n");
      }
    }
    buf.erase(0, start);
  }
}

// --- the client -----------------------------------------------------------

class Proxy {
 public:
  explicit Proxy(const std::vector<std::string>& argv) {
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) std::abort();
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addclose(&fa, in[1]);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    std::vector<char*> args;
    for (const std::string& a : argv) {
      args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    if (posix_spawn(&pid_, args[0], &fa, nullptr, args.data(), environ) != 0) {
      std::cerr << "cannot start " << argv[0] << "\n";
      std::exit(1);
    }
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(out[1]);
    to_ = in[1];
    from_ = out[0];
  }
  ~Proxy() {
    close(to_);
    int status;
    waitpid(pid_, &status, 0);
    close(from_);
  }

  // Sends one line and reads one line back; returns the reply's size.
  size_t RoundTrip(std::string_view line) {
    WriteAll(to_, line);
    WriteAll(to_, "\n");
    std::vector<char> chunk(1 << 16);
    while (true) {
      const size_t nl = buf_.find('\n');
      if (nl != std::string::npos) {
        buf_.erase(0, nl + 1);
        return nl;
      }
      ssize_t n = read(from_, chunk.data(), chunk.size());
      if (n <= 0) {
        std::cerr << "the proxy closed its stdout\n";
        std::exit(1);
      }
      buf_.append(chunk.data(), static_cast<size_t>(n));
    }
  }

  // Resident and peak resident kB of the proxy process.
  long Status(const char* field) const {
    std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind(field, 0) == 0) return std::atol(line.c_str() + 7);
    }
    return -1;
  }
  long RssKb() const { return Status("VmRSS:"); }
  long PeakKb() const { return Status("VmHWM:"); }
  // Resets the peak to the current resident set (Linux clear_refs "5").
  void ResetPeak() const {
    std::ofstream out("/proc/" + std::to_string(pid_) + "/clear_refs");
    out << "5";
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1;
  int from_ = -1;
  std::string buf_;
};

std::string BigCall(const char* tool, size_t line_bytes) {
  const std::string head =
      R"({"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":")" +
      std::string(tool) + R"(","arguments":{"mib":1,"data":")";
  const std::string tail = "\"}}}";
  std::string s = head;
  s.append(line_bytes - head.size() - tail.size(), 'y');
  s += tail;
  return s;
}

std::string GetCall(const char* id, int mib) {
  return R"({"jsonrpc":"2.0","id":")" + std::string(id) +
         R"(","method":"tools/call","params":{"name":"get_blob","arguments":{"mib":)" +
         std::to_string(mib) + "}}}";
}

double Mib(long kb) { return static_cast<double>(kb) / 1024.0; }

}  // namespace

int main(int argc, char** argv) {
  std::string toolcache =
      std::string(TOOLCACHE_BINARY_DIR) + "/apps/toolcache/toolcache";
  int line_mib = 63;
  int result_mib = 60;
  int rounds = 3;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--server") return RunServer();
    if (a == "--toolcache" && i + 1 < argc) {
      toolcache = argv[++i];
    } else if (a == "--line-mib" && i + 1 < argc) {
      line_mib = std::atoi(argv[++i]);
    } else if (a == "--result-mib" && i + 1 < argc) {
      result_mib = std::atoi(argv[++i]);
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else {
      std::cerr << "usage: bench_mcp_memory [--toolcache PATH] [--line-mib N] "
                   "[--result-mib N] [--rounds R]\n";
      return 2;
    }
  }
  if (line_mib < 1 || line_mib > 63 || result_mib < 1 || result_mib > 63 ||
      rounds < 1) {
    std::cerr << "bench_mcp_memory: sizes must be 1..63 MiB (the default "
                 "--max-line-bytes is 64 MiB), --rounds >= 1\n";
    return 2;
  }
  if (access(toolcache.c_str(), X_OK) != 0) {
    std::cerr << "bench_mcp_memory: no toolcache binary at " << toolcache
              << "\n";
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return 1;
  self[len] = '\0';
  // A store large enough to admit the result.
  char cfg[] = "/tmp/bench_mcp_memory_XXXXXX";
  int fd = mkstemp(cfg);
  if (fd < 0) return 1;
  WriteAll(fd, "capacityBytes: 256MiB\npolicy: lru\n");
  close(fd);

  const std::string put =
      BigCall("put_blob", static_cast<size_t>(line_mib) << 20);
  const std::string big_read =
      BigCall("get_blob", static_cast<size_t>(line_mib) << 20);
  std::vector<double> line_peak, read_peak, result_peak, hit_peak, retained;
  for (int r = 0; r < rounds; ++r) {
    Proxy p({toolcache, "mcp", "--config", cfg, "--", self, "--server"});
    p.RoundTrip(
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})");
    p.RoundTrip(R"({"jsonrpc":"2.0","id":"tl","method":"tools/list"})");
    const long idle = p.RssKb();
    long before = p.RssKb();
    p.ResetPeak();
    p.RoundTrip(put);
    line_peak.push_back(Mib(p.PeakKb() - before));
    before = p.RssKb();
    p.ResetPeak();
    p.RoundTrip(big_read);
    read_peak.push_back(Mib(p.PeakKb() - before));
    before = p.RssKb();
    p.ResetPeak();
    p.RoundTrip(GetCall("get1", result_mib));
    result_peak.push_back(Mib(p.PeakKb() - before));
    before = p.RssKb();
    p.ResetPeak();
    p.RoundTrip(GetCall("get2", result_mib));
    hit_peak.push_back(Mib(p.PeakKb() - before));
    retained.push_back(Mib(p.RssKb() - idle));
  }
  unlink(cfg);
  using toolcache::bench::Median;
  std::printf(
      "peak resident memory of toolcache mcp above its resident set "
      "before the message; median of %d rounds\n",
      rounds);
  std::printf("%-34s %12s %14s\n", "scenario", "peak (MiB)", "x message");
  std::printf("%-34s %12.1f %14.2f\n",
              ("client line of " + std::to_string(line_mib) + " MiB").c_str(),
              Median(line_peak), Median(line_peak) / line_mib);
  std::printf("%-34s %12.1f %14.2f\n", "same size to a read-only tool",
              Median(read_peak), Median(read_peak) / line_mib);
  std::printf(
      "%-34s %12.1f %14.2f\n",
      ("server result of " + std::to_string(result_mib) + " MiB, stored")
          .c_str(),
      Median(result_peak), Median(result_peak) / result_mib);
  std::printf("%-34s %12.1f %14.2f\n", "the same result served from cache",
              Median(hit_peak), Median(hit_peak) / result_mib);
  std::printf("%-34s %12.1f %14.2f\n", "retained after all (vs idle)",
              Median(retained), Median(retained) / result_mib);
  return 0;
}
