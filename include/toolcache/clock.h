// Clock: an injectable source of time, so tests and the simulator run on
// virtual time and the proxies on the steady clock.
//
// Thread-safety: SystemClock is thread-safe; ManualClock is safe for
// concurrent reads and Advance (atomic).
//
// Example:
//   ManualClock clock;
//   clock.Advance(61.0);  // a 60 s TTL has now expired
//   double now = clock.NowSeconds();
#ifndef TOOLCACHE_CLOCK_H_
#define TOOLCACHE_CLOCK_H_

#include <atomic>
#include <chrono>

namespace toolcache {

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds since an arbitrary fixed origin; never decreases.
  virtual double NowSeconds() const = 0;
};

// The monotonic steady clock.
class SystemClock final : public Clock {
 public:
  double NowSeconds() const override {
    return std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

// Time that moves only when told to.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(double start = 0) : now_(start) {}
  double NowSeconds() const override { return now_.load(); }
  // REQUIRES: seconds >= 0.
  void Advance(double seconds) { now_.store(now_.load() + seconds); }

 private:
  std::atomic<double> now_;
};

}  // namespace toolcache

#endif  // TOOLCACHE_CLOCK_H_
