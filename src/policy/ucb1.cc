// UCB1 reward and bound (Eq. 3 and Eq. 6).
//
// Invariants: pure functions; never NaN for finite inputs.
#include "src/policy/ucb1.h"

#include <cmath>
#include <limits>

namespace toolcache {
namespace {

// log of a strictly positive argument (guards against mis-set deltas).
double SafeLog(double x) { return std::log(x > 1e-300 ? x : 1e-300); }

}  // namespace

double GroupReward(const RewardOptions& options, double hit_ratio, double level,
                   double value, double admissions) {
  double numerator =
      SafeLog(hit_ratio + options.delta1) * SafeLog(level + options.delta2);
  if (options.use_value) numerator *= SafeLog(value + options.delta3);
  const double denominator = SafeLog(admissions + options.delta4);
  // A denominator of ~0 (delta4 = 1, C = 0) would explode; clamp it.
  return numerator / (std::abs(denominator) < 1e-12 ? 1e-12 : denominator);
}

double UcbScore(double reward, double c, uint64_t round, uint64_t selections) {
  if (selections == 0) return std::numeric_limits<double>::infinity();
  const double ln_t = round > 1 ? std::log(static_cast<double>(round)) : 0.0;
  return reward + c * std::sqrt(ln_t / static_cast<double>(selections));
}

}  // namespace toolcache
