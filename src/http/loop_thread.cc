// Invariants: the io_context keeps running (a work guard) until the
// destructor stops it; the thread is joined before the Loop is destroyed.
#include <boost/asio/executor_work_guard.hpp>
#include <memory>
#include <optional>
#include <thread>

#include "src/http/asio_internal.h"
#include "src/http/http.h"

namespace toolcache::http {
namespace {

class LoopThreadImpl final : public LoopThread {
 public:
  LoopThreadImpl() : guard_(loop_.ioc.get_executor()) {
    thread_ = std::thread([this] { loop_.ioc.run(); });
  }
  ~LoopThreadImpl() override {
    guard_.reset();
    loop_.ioc.stop();
    thread_.join();
  }
  Loop* loop() override { return &loop_; }

 private:
  Loop loop_;
  std::optional<
      boost::asio::executor_work_guard<boost::asio::io_context::executor_type>>
      guard_;
  std::thread thread_;
};

}  // namespace

std::unique_ptr<LoopThread> NewLoopThread() {
  return std::make_unique<LoopThreadImpl>();
}

}  // namespace toolcache::http
