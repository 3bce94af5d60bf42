// Store wrappers: a circuit breaker and a fault injector. Both forward to
// any Store (STYLE.md rule 5: wrap, don't fork).
//
// Invariants (CircuitBreakerStore, GUARDED_BY(mu_)):
// - open_ is true from a call's UNAVAILABLE / DEADLINE_EXCEEDED until the
//   next call that reaches the base store succeeds (or fails otherwise);
//   while open and before retry_at_ every call fails at once; after it, one
//   call (probing_) goes through and the others keep failing fast.
// - backoff_ doubles on each failed probe, up to max_backoff_seconds, and
//   returns to the initial value when the breaker closes.
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "toolcache/store.h"

namespace toolcache {
namespace {

class CircuitBreakerStore final : public Store {
 public:
  CircuitBreakerStore(std::unique_ptr<Store> base, CircuitBreakerOptions o)
      : base_(std::move(base)), o_(o), backoff_(o.initial_backoff_seconds) {
    if (o_.clock == nullptr) o_.clock = &steady_;
  }

  std::string_view name() const override { return base_->name(); }

  Result<std::vector<std::optional<StoreValue>>> Get(
      std::span<const StoreKey> keys) override {
    return Call<std::vector<std::optional<StoreValue>>>(
        [&] { return base_->Get(keys); });
  }
  Status Put(const StoreKey& key, std::string_view value,
             double ttl_seconds) override {
    Result<bool> r = Call<bool>([&]() -> Result<bool> {
      Status s = base_->Put(key, value, ttl_seconds);
      if (!s.ok()) return s;
      return true;
    });
    return r.ok() ? Status::Ok() : r.status();
  }
  Result<bool> Erase(const StoreKey& key) override {
    return Call<bool>([&] { return base_->Erase(key); });
  }
  Result<std::vector<uint64_t>> AddToCounters(std::span<const StoreKey> keys,
                                              uint64_t delta,
                                              uint64_t initial) override {
    return Call<std::vector<uint64_t>>(
        [&] { return base_->AddToCounters(keys, delta, initial); });
  }

 private:
  template <typename T, typename Fn>
  Result<T> Call(Fn&& fn) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (open_) {
        const double now = o_.clock->NowSeconds();
        if (probing_ || now < retry_at_) {
          return Unavailable(std::string(base_->name()) +
                             ": not retried yet after: " + last_error_);
        }
        probing_ = true;
      }
    }
    Result<T> r = fn();
    std::lock_guard<std::mutex> lock(mu_);
    const StatusCode code = r.ok() ? StatusCode::kOk : r.status().code();
    if (code == StatusCode::kUnavailable ||
        code == StatusCode::kDeadlineExceeded) {
      backoff_ = open_ ? std::min(backoff_ * 2, o_.max_backoff_seconds)
                       : o_.initial_backoff_seconds;
      open_ = true;
      retry_at_ = o_.clock->NowSeconds() + backoff_;
      last_error_ = r.status().message();
    } else {
      open_ = false;
      backoff_ = o_.initial_backoff_seconds;
    }
    probing_ = false;
    return r;
  }

  std::unique_ptr<Store> base_;
  CircuitBreakerOptions o_;
  SystemClock steady_;
  std::mutex mu_;
  bool open_ = false;       // GUARDED_BY(mu_)
  bool probing_ = false;    // GUARDED_BY(mu_)
  double retry_at_ = 0;     // GUARDED_BY(mu_)
  double backoff_;          // GUARDED_BY(mu_)
  std::string last_error_;  // GUARDED_BY(mu_)
};

class FaultInjectionStore final : public Store {
 public:
  FaultInjectionStore(Store* base, std::shared_ptr<FaultPlan> plan)
      : base_(base), plan_(std::move(plan)) {}

  std::string_view name() const override { return base_->name(); }

  Result<std::vector<std::optional<StoreValue>>> Get(
      std::span<const StoreKey> keys) override {
    if (Status s = Before(); !s.ok()) return s;
    Result<std::vector<std::optional<StoreValue>>> r = base_->Get(keys);
    if (!r.ok() || !plan_->corrupt_values) return r;
    for (std::optional<StoreValue>& v : *r) {
      if (!v || v->bytes->empty()) continue;
      // Counters (decimal text) stay intact: the plan damages values.
      if (v->bytes->find_first_not_of("0123456789") == std::string::npos) {
        continue;
      }
      std::string flipped = *v->bytes;
      flipped[flipped.size() / 2] ^= 0x5a;
      v->bytes = std::make_shared<const std::string>(std::move(flipped));
    }
    return r;
  }
  Status Put(const StoreKey& key, std::string_view value,
             double ttl_seconds) override {
    if (Status s = Before(); !s.ok()) return s;
    if (plan_->full) {
      ++plan_->failed;
      return ResourceExhausted("injected fault: store full");
    }
    return base_->Put(key, value, ttl_seconds);
  }
  Result<bool> Erase(const StoreKey& key) override {
    if (Status s = Before(); !s.ok()) return s;
    return base_->Erase(key);
  }
  Result<std::vector<uint64_t>> AddToCounters(std::span<const StoreKey> keys,
                                              uint64_t delta,
                                              uint64_t initial) override {
    if (Status s = Before(); !s.ok()) return s;
    return base_->AddToCounters(keys, delta, initial);
  }

 private:
  Status Before() {
    if (plan_->on_call) plan_->on_call();
    if (plan_->delay_seconds > 0) {
      std::this_thread::sleep_for(
          std::chrono::duration<double>(plan_->delay_seconds));
    }
    if (plan_->fail_with != StatusCode::kOk) {
      ++plan_->failed;
      return Status(plan_->fail_with, "injected fault");
    }
    ++plan_->passed;
    return Status::Ok();
  }

  Store* base_;
  std::shared_ptr<FaultPlan> plan_;
};

}  // namespace

std::unique_ptr<Store> NewCircuitBreakerStore(std::unique_ptr<Store> base,
                                              CircuitBreakerOptions options) {
  return std::make_unique<CircuitBreakerStore>(std::move(base), options);
}

std::unique_ptr<Store> NewFaultInjectionStore(Store* base,
                                              std::shared_ptr<FaultPlan> plan) {
  return std::make_unique<FaultInjectionStore>(base, std::move(plan));
}

}  // namespace toolcache
