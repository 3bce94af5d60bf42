// Progress bar on stderr.
//
// Invariants: nothing is written before the delay has passed; every write
// starts with '\r' and ends without a newline, so the bar overwrites itself;
// after Finish() nothing more is written.
#include "src/sim/progress.h"

#include <fmt/format.h>

#include <algorithm>

namespace toolcache::sim {

ProgressBar::ProgressBar(std::ostream& out, std::string label, bool enabled,
                         double delay_seconds)
    : out_(out),
      label_(std::move(label)),
      enabled_(enabled),
      delay_seconds_(delay_seconds),
      start_(SteadyClock::now()) {}

ProgressBar::~ProgressBar() { Finish(); }

std::string ProgressBar::Render(uint64_t done, uint64_t total, int width,
                                const std::string& label) {
  double frac = total == 0 ? 1.0
                           : std::min(1.0, static_cast<double>(done) /
                                               static_cast<double>(total));
  int filled = static_cast<int>(frac * width);
  return fmt::format("[{}{}] {:3.0f}% {}/{} {}", std::string(filled, '#'),
                     std::string(width - filled, '-'), 100 * frac, done, total,
                     label);
}

void ProgressBar::Update(uint64_t done, uint64_t total) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  const auto now = SteadyClock::now();
  if (std::chrono::duration<double>(now - start_).count() < delay_seconds_) {
    return;
  }
  if (drawn_ && done < total &&
      std::chrono::duration<double>(now - last_draw_).count() < 0.1) {
    return;
  }
  last_draw_ = now;
  drawn_ = true;
  out_ << "\r" << Render(done, total, 30, label_) << std::flush;
}

void ProgressBar::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  finished_ = true;
  if (drawn_) out_ << "\r\033[K" << std::flush;
}

bool ProgressBar::drawn() const {
  std::lock_guard<std::mutex> lock(mu_);
  return drawn_;
}

}  // namespace toolcache::sim
