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

#include <algorithm>
#include <bit>
#include <cmath>
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
  // Returns whether min or max moved.
  bool Observe(double x) {
    bool moved = false;
    if (x < min_) {
      min_ = x;
      moved = true;
    }
    if (x > max_) {
      max_ = x;
      moved = true;
    }
    return moved;
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
    // Non-short-circuit: all three are updated.
    if (latency_.Observe(req.latency) | cost_.Observe(req.cost) |
        size_.Observe(static_cast<double>(req.size))) {
      ++epoch_;
    }
  }
  // tau follows the mean of the finite TTLs passed here (when options.tau
  // <= 0).
  void ObserveInsertedTtl(double ttl);

  // Raw Eq. 2 with the current normalization, in [-lambda3, lambda1 +
  // lambda2].
  double RawValue(const Request& req) const;
  // RawValue + lambda3: in [0, lambda1 + lambda2 + lambda3]. Remembered
  // for the last request's latency, cost, TTL (and size, when the cost term
  // reads it) until the normalization or tau moves: the same double as
  // computing it afresh.
  double Value(const Request& req) const;
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
  // Bumped whenever a min/max or tau's inputs change: Value's memo is only
  // read under the epoch it was made in.
  uint64_t epoch_ = 0;
  struct Memo {
    uint64_t epoch = UINT64_MAX;  // none yet
    uint64_t latency = 0;         // bit patterns of the request's fields
    uint64_t cost = 0;
    uint64_t ttl = 0;
    uint64_t size = 0;
    bool uses_size = false;  // the cost term read the size
    double value = 0;
  };
  mutable Memo memo_;
};

// Inline: the policies ask for a value on every request (the same
// arithmetic in the same order as out of line).
inline double ValueModel::Tau(double ttl) const {
  if (options_.tau > 0) return options_.tau;
  // Paper-silent: tau = running mean of the finite TTLs of inserted entries;
  // before the first insert, the request's own TTL (risk = e^-1).
  if (ttl_count_ > 0) return ttl_sum_ / static_cast<double>(ttl_count_);
  return ttl;
}

inline double ValueModel::NormLatency(const Request& req) const {
  // Paper-silent: a feature with no observed spread (max == min) normalizes
  // to 0: it cannot tell requests apart, so it adds nothing.
  return latency_.Normalize(req.latency, 0.0);
}

inline double ValueModel::CostSizeRatio(const Request& req) const {
  const double norm_cost = cost_.Normalize(req.cost, 0.0);
  if (norm_cost <= 0) return 0;
  // Paper-silent: with no size spread every object is "the same size", so
  // NormSize = 1 and the ratio is NormCost alone.
  const double norm_size = std::max(
      size_.Normalize(static_cast<double>(req.size), 1.0), kMinNormSize);
  // Paper-silent: the ratio saturates at 1 so the cost-per-byte term stays
  // on the same [0, 1] scale as the other normalized terms (Eq. 1's stated
  // purpose); unclamped, NormCost/NormSize reaches 1/kMinNormSize and the
  // smallest object would dominate every other feature.
  return std::min(1.0, norm_cost / norm_size);
}

inline double ValueModel::StalenessRisk(double ttl) const {
  if (!(ttl > 0)) return 1.0;
  if (!std::isfinite(ttl)) return 0.0;
  const double tau = Tau(ttl);
  if (!(tau > 0) || !std::isfinite(tau)) return 0.0;
  return std::exp(-ttl / tau);
}

inline double ValueModel::Value(const Request& req) const {
  const auto latency = std::bit_cast<uint64_t>(req.latency);
  const auto cost = std::bit_cast<uint64_t>(req.cost);
  const auto ttl = std::bit_cast<uint64_t>(req.ttl);
  if (memo_.epoch == epoch_ && memo_.latency == latency && memo_.cost == cost &&
      memo_.ttl == ttl && (!memo_.uses_size || memo_.size == req.size)) {
    return memo_.value;
  }
  memo_.epoch = epoch_;
  memo_.latency = latency;
  memo_.cost = cost;
  memo_.ttl = ttl;
  memo_.size = req.size;
  // CostSizeRatio reads the size unless NormCost <= 0.
  memo_.uses_size = !(cost_.Normalize(req.cost, 0.0) <= 0);
  memo_.value = RawValue(req) + options_.lambda3;
  return memo_.value;
}

inline double ValueModel::RawValue(const Request& req) const {
  return options_.lambda1 * NormLatency(req) +
         options_.lambda2 * CostSizeRatio(req) -
         options_.lambda3 * StalenessRisk(req.ttl);
}

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_POLICY_VALUE_MODEL_H_
