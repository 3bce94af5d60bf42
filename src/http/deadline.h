// Deadline: one Asio timer per owner whose moving costs no system call.
// Internal to src/http (server.cc and client.cc).
//
// Asio re-programs its timerfd (timerfd_settime) whenever the earliest
// timer of the loop changes, so arming and cancelling a steady_timer around
// every read and every write cost two system calls per I/O: 21 per
// streamed LLM response of ten SSE events in the proxy (strace -c, 300
// requests), where nginx makes none. A Deadline keeps its timer armed at or
// before the deadline and otherwise moves only a time stamp: Set() to a
// later time and Clear() touch no timer; when the timer fires before the
// current deadline it re-arms for the rest, and when it fires with no
// deadline set it stops. Only Set() to an earlier time than the armed
// expiry and Stop() reach the timer.
//
// Thread-safety: none; the owner's loop thread only. Ownership: the pending
// wait owns `fire` (which should hold the owner alive, e.g. capture
// shared_from_this()), so Stop() must be called when the owner is done, or
// the owner lives until the timer's expiry.
//
// Invariants:
// - waiting_ == a wait of generation_ is pending, expiring at expiry_;
//   while active_, expiry_ <= deadline_ whenever waiting_.
// - `fire` runs at most once per Set, only when active_ and the deadline
//   has passed, and never after Stop() or Clear().
// Choice: the `fire` of the wait that is pending is the one that runs; a
//   later Set() that keeps the wait does not replace it. Owners pass the
//   same action on every Set of one Deadline (what differs, e.g. the name
//   of the phase that timed out, lives in the owner).
//
// Example:
//   Deadline read_deadline_{loop->ioc};
//   read_deadline_.Set(Seconds(60), [self = shared_from_this()] {
//     self->Close();
//   });
//   ... read completes ...  read_deadline_.Clear();
//   ... connection closed ... read_deadline_.Stop();
#ifndef TOOLCACHE_SRC_HTTP_DEADLINE_H_
#define TOOLCACHE_SRC_HTTP_DEADLINE_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <cstdint>
#include <utility>

namespace toolcache::http {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  explicit Deadline(boost::asio::io_context& ioc) : timer_(ioc) {}
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;

  // Runs `fire` once `after` has passed from now, unless Set, Clear or
  // Stop comes first.
  template <class Fire>
  void Set(Clock::duration after, Fire&& fire) {
    deadline_ = Clock::now() + after;
    active_ = true;
    if (waiting_ && expiry_ <= deadline_) return;  // wakes in time
    Wait(std::forward<Fire>(fire));
  }

  // No deadline until the next Set; the timer is left as it is.
  void Clear() { active_ = false; }

  // No deadline, and the pending wait (and what it owns) is released.
  void Stop() {
    active_ = false;
    if (!waiting_) return;
    waiting_ = false;
    ++generation_;
    timer_.cancel();
  }

 private:
  template <class Fire>
  void Wait(Fire&& fire) {
    expiry_ = deadline_;
    waiting_ = true;
    const uint64_t generation = ++generation_;
    timer_.expires_at(expiry_);  // a pending wait ends with operation_aborted
    timer_.async_wait([this, generation, fire = std::forward<Fire>(fire)](
                          const boost::system::error_code& ec) mutable {
      if (generation != generation_) return;  // superseded or stopped
      waiting_ = false;
      if (ec || !active_) return;
      if (Clock::now() < deadline_) {  // the deadline moved later
        Wait(std::move(fire));
        return;
      }
      active_ = false;
      fire();
    });
  }

  boost::asio::steady_timer timer_;
  Clock::time_point deadline_{};
  Clock::time_point expiry_{};
  uint64_t generation_ = 0;
  bool active_ = false;
  bool waiting_ = false;
};

}  // namespace toolcache::http

#endif  // TOOLCACHE_SRC_HTTP_DEADLINE_H_
