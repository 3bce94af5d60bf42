#include "src/http/deadline.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>

namespace toolcache::http {
namespace {

using std::chrono::milliseconds;

// Runs `ioc` for `ms` of wall time.
void RunFor(boost::asio::io_context& ioc, int ms) {
  ioc.restart();
  ioc.run_for(milliseconds(ms));
}

TEST(DeadlineTest, FiresOnceAfterTheDeadline) {
  boost::asio::io_context ioc;
  Deadline d(ioc);
  int fired = 0;
  d.Set(milliseconds(20), [&] { ++fired; });
  RunFor(ioc, 5);
  EXPECT_EQ(fired, 0);
  RunFor(ioc, 60);
  EXPECT_EQ(fired, 1);
  RunFor(ioc, 30);
  EXPECT_EQ(fired, 1);
}

// Moving the deadline later keeps the armed wait; when it wakes early it
// re-arms for the rest instead of firing.
TEST(DeadlineTest, ALaterSetIsNotFiredEarly) {
  boost::asio::io_context ioc;
  Deadline d(ioc);
  int fired = 0;
  const auto start = Deadline::Clock::now();
  Deadline::Clock::time_point fired_at;
  auto fire = [&] {
    ++fired;
    fired_at = Deadline::Clock::now();
  };
  d.Set(milliseconds(20), fire);
  RunFor(ioc, 10);
  d.Set(milliseconds(60), fire);  // now + 60 ms: about start + 70 ms
  RunFor(ioc, 30);                // past the first expiry (20 ms)
  EXPECT_EQ(fired, 0);
  RunFor(ioc, 80);
  EXPECT_EQ(fired, 1);
  EXPECT_GE(fired_at - start, milliseconds(65));
}

TEST(DeadlineTest, AnEarlierSetFiresAtTheEarlierTime) {
  boost::asio::io_context ioc;
  Deadline d(ioc);
  int fired = 0;
  d.Set(std::chrono::seconds(30), [&] { ++fired; });
  d.Set(milliseconds(10), [&] { ++fired; });
  RunFor(ioc, 60);
  EXPECT_EQ(fired, 1);
}

TEST(DeadlineTest, ClearPreventsTheFire) {
  boost::asio::io_context ioc;
  Deadline d(ioc);
  int fired = 0;
  d.Set(milliseconds(10), [&] { ++fired; });
  d.Clear();
  RunFor(ioc, 40);
  EXPECT_EQ(fired, 0);
  // Set again after a Clear whose wait already ended: fires.
  d.Set(milliseconds(10), [&] { ++fired; });
  RunFor(ioc, 40);
  EXPECT_EQ(fired, 1);
}

// Clear keeps the wait (and what it owns) until the timer's expiry; Stop
// releases it at once, so an owner held by `fire` is not kept alive.
TEST(DeadlineTest, StopReleasesWhatTheWaitOwns) {
  boost::asio::io_context ioc;
  Deadline d(ioc);
  auto owner = std::make_shared<int>(7);
  std::weak_ptr<int> weak = owner;
  d.Set(std::chrono::seconds(30), [owner] { (void)*owner; });
  owner.reset();
  d.Clear();
  RunFor(ioc, 10);
  EXPECT_FALSE(weak.expired());  // the armed wait still holds it
  d.Stop();
  RunFor(ioc, 10);  // the aborted wait runs and drops its closure
  EXPECT_TRUE(weak.expired());
}

}  // namespace
}  // namespace toolcache::http
