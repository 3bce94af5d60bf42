// A server process's life around its event loops: the signals of every face
// (src/runtime/signals.h) taken by one waiting thread, the stats file
// written on SIGUSR1 and at the end.
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <string>
#include <thread>

#include "src/core/atomic_file.h"
#include "src/http/http.h"
#include "src/runtime/signals.h"

namespace toolcache::http {
namespace {

void WriteStats(const std::function<std::string()>& stats,
                const std::string& path) {
  if (path.empty()) return;
  Status st = WriteFileAtomically(path, stats(), "stats file");
  if (!st.ok()) spdlog::warn("{}", st.message());
}

}  // namespace

// The signal set of every face (src/runtime/signals.h).
void BlockServerSignals() { runtime::BlockServerSignals(); }

void ServeUntilSignal(const std::function<void()>& run,
                      const std::function<void()>& stop,
                      const std::function<std::string()>& stats,
                      const std::string& stats_path) {
  sigset_t set = runtime::ServerSignals();
  std::atomic<bool> stopping{false};
  std::thread signals([&] {
    while (true) {
      int sig = 0;
      if (sigwait(&set, &sig) != 0) continue;
      if (sig == SIGUSR1) {
        WriteStats(stats, stats_path);
        if (stopping.load()) return;
        continue;
      }
      stopping = true;
      stop();
      return;
    }
  });
  run();
  if (!stopping.exchange(true)) {
    // The loops ended without a signal: wake the signal thread.
    pthread_kill(signals.native_handle(), SIGUSR1);
  }
  signals.join();
  WriteStats(stats, stats_path);
}

}  // namespace toolcache::http
