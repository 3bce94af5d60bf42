// ValueModel (Eq. 1-2 of the ToolCaching paper).
//
// Invariants:
//  - every normalized feature is in [0, 1]; the cost-to-size ratio is in
//    [0, 1]; so RawValue is in [-lambda3, lambda1 + lambda2] for non-negative
//    lambdas and Value() = RawValue + lambda3 is >= 0.
//  - the model is a pure function of the requests observed so far (no
//    randomness, no clock).
#include "src/policy/value_model.h"

#include <algorithm>
#include <cmath>

namespace toolcache {

void ValueModel::ObserveInsertedTtl(double ttl) {
  if (!std::isfinite(ttl) || ttl <= 0) return;
  ttl_sum_ += ttl;
  ++ttl_count_;
}

double ValueModel::Tau(double ttl) const {
  if (options_.tau > 0) return options_.tau;
  // Paper-silent: tau = running mean of the finite TTLs of inserted entries;
  // before the first insert, the request's own TTL (risk = e^-1).
  if (ttl_count_ > 0) return ttl_sum_ / static_cast<double>(ttl_count_);
  return ttl;
}

double ValueModel::NormLatency(const Request& req) const {
  // Paper-silent: a feature with no observed spread (max == min) normalizes
  // to 0: it cannot tell requests apart, so it adds nothing.
  return latency_.Normalize(req.latency, 0.0);
}

double ValueModel::CostSizeRatio(const Request& req) const {
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

double ValueModel::StalenessRisk(double ttl) const {
  if (!(ttl > 0)) return 1.0;
  if (!std::isfinite(ttl)) return 0.0;
  const double tau = Tau(ttl);
  if (!(tau > 0) || !std::isfinite(tau)) return 0.0;
  return std::exp(-ttl / tau);
}

double ValueModel::RawValue(const Request& req) const {
  return options_.lambda1 * NormLatency(req) +
         options_.lambda2 * CostSizeRatio(req) -
         options_.lambda3 * StalenessRisk(req.ttl);
}

}  // namespace toolcache
