// ValueModel: the paper's caching value v (ToolCaching Eq. 1-2).
//
//   Norm(x)  = (x - min) / (max - min)                      (Eq. 1)
//   v        = l1*NormLatency + l2*NormCost/NormSize
//              - l3*exp(-TTL/tau)                           (Eq. 2)
//
// min/max are running extremes over every request observed so far; tau is
// the running mean TTL of inserted entries. Paper-silent: raw v lies in [-l3,
// l1 + l2]; Value() returns the SHIFTED value v + l3 in [0, l1 + l2 + l3], so
// that log(V + delta) in the bandit reward (Eq. 3) and the eviction score (Eq.
// 4) is increasing in V and never takes the log of a negative number. The shift
// is a constant, so every ordering by v is unchanged.
//
// Thread-safety: none (owned by one policy).
//
// Example:
//   ValueModel model(ValueModelOptions{});
//   model.Observe(req);                 // update min/max with this request
//   double v = model.Value(req);        // shifted Eq. 2, in [0, 1.2]
//   model.ObserveInsertedTtl(req.ttl);  // tau follows admitted entries
#ifndef TOOLCACHE_SRC_POLICY_VALUE_MODEL_H_
#define TOOLCACHE_SRC_POLICY_VALUE_MODEL_H_

#include <cstdint>
#include <limits>

#include "toolcache/policy.h"

namespace toolcache {

struct ValueModelOptions {
  // The paper's defaults (section 6.2).
  double lambda1 = 0.8;  // weight of normalized latency
  double lambda2 = 0.2;  // weight of the normalized cost-to-size ratio
  double lambda3 = 0.2;  // weight of the TTL staleness risk
  // tau (seconds) for exp(-TTL/tau). <= 0 means "running mean TTL of the
  // inserted entries" (the paper's "average lifetime of cached entries").
  double tau = 0;
};

// Running min/max of one feature (Eq. 1).
class MinMax {
 public:
  void Observe(double x) {
    if (x < min_) min_ = x;
    if (x > max_) max_ = x;
  }
  // (x - min) / (max - min) clamped to [0, 1]; `degenerate` when no spread
  // has been observed yet (max <= min).
  double Normalize(double x, double degenerate) const {
    if (!(max_ > min_)) return degenerate;
    const double n = (x - min_) / (max_ - min_);
    return n < 0 ? 0 : (n > 1 ? 1 : n);
  }
  double min() const { return min_; }
  double max() const { return max_; }

 private:
  double min_ = std::numeric_limits<double>::infinity();
  double max_ = -std::numeric_limits<double>::infinity();
};

class ValueModel {
 public:
  // Paper-silent: NormSize is floored at this before dividing, so the
  // smallest object (NormSize = 0) does not divide by zero.
  static constexpr double kMinNormSize = 1e-3;

  explicit ValueModel(const ValueModelOptions& options) : options_(options) {}

  // Updates the running min/max with req's latency, cost and size.
  void Observe(const Request& req) {
    latency_.Observe(req.latency);
    cost_.Observe(req.cost);
    size_.Observe(static_cast<double>(req.size));
  }
  // tau follows the mean of the finite TTLs passed here (when options.tau
  // <= 0).
  void ObserveInsertedTtl(double ttl);

  // Raw Eq. 2 with the current normalization, in [-lambda3, lambda1 +
  // lambda2].
  double RawValue(const Request& req) const;
  // RawValue + lambda3: in [0, lambda1 + lambda2 + lambda3].
  double Value(const Request& req) const {
    return RawValue(req) + options_.lambda3;
  }
  // The tau used for `ttl` right now.
  double Tau(double ttl) const;

  // The individual terms, for tests and `explain`.
  double NormLatency(const Request& req) const;
  double CostSizeRatio(const Request& req) const;
  double StalenessRisk(double ttl) const;

  const ValueModelOptions& options() const { return options_; }

 private:
  ValueModelOptions options_;
  MinMax latency_;
  MinMax cost_;
  MinMax size_;
  double ttl_sum_ = 0;
  uint64_t ttl_count_ = 0;
};

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_POLICY_VALUE_MODEL_H_
