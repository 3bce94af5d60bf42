// A progress bar on stderr for long simulator runs.
//
// It draws nothing during the first `delay_seconds` (short runs stay quiet),
// then redraws at most 10 times a second with \r; Finish() clears the line.
// It only ever writes to the stream it was given (stderr in the CLI), so
// stdout JSON is never touched. Enabled by the caller when stderr is a TTY or
// when the user asks (--progress).
//
// Thread-safety: Update() may be called from any thread.
//
// Example:
//   ProgressBar bar(std::cerr, "sim", enabled);
//   spec.progress = [&](uint64_t d, uint64_t t) { bar.Update(d, t); };
//   ... RunExperiment(spec) ...
//   bar.Finish();
#ifndef TOOLCACHE_SRC_SIM_PROGRESS_H_
#define TOOLCACHE_SRC_SIM_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <mutex>
#include <ostream>
#include <string>

namespace toolcache::sim {

class ProgressBar {
 public:
  // Choice: wait 1 s before drawing, so short runs stay quiet.
  ProgressBar(std::ostream& out, std::string label, bool enabled,
              double delay_seconds = 1.0);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Reports `done` of `total` units of work.
  void Update(uint64_t done, uint64_t total);
  // Clears the bar if it was drawn. Idempotent.
  void Finish();
  // Whether anything was drawn so far (for tests).
  bool drawn() const;

  // "[#####-----]  50% 5/10 label" for `width` cells.
  static std::string Render(uint64_t done, uint64_t total, int width,
                            const std::string& label);

 private:
  using SteadyClock = std::chrono::steady_clock;
  std::ostream& out_;
  const std::string label_;
  const bool enabled_;
  const double delay_seconds_;
  const SteadyClock::time_point start_;
  mutable std::mutex mu_;
  SteadyClock::time_point last_draw_;  // GUARDED_BY(mu_)
  bool drawn_ = false;                 // GUARDED_BY(mu_)
  bool finished_ = false;              // GUARDED_BY(mu_)
};

}  // namespace toolcache::sim

#endif  // TOOLCACHE_SRC_SIM_PROGRESS_H_
