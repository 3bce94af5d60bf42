// UCB1 group admission: the reward of a feature group (ToolCaching Eq. 3)
// and its upper confidence bound (Eq. 6, Algorithm 2).
//
//   F_i   = log(H_i + d1) * log(L_i + d2) * log(V_i + d3) / log(C_i + d4)
//   UCB_i = F_i + c * sqrt(ln t / N_i)          (N_i == 0 -> +infinity)
//
// CACA (the paper's baseline) uses the same reward without the value factor
// log(V_i + d3). With the defaults below every factor is >= 0 and
// non-decreasing in H, L and V, and the denominator is >= log 2 > 0.
//
// Thread-safety: pure functions.
//
// Example:
//   RewardOptions opt;                       // d1=d2=d3=1, d4=2, with value
//   double f = GroupReward(opt, /*h=*/0.5, /*level=*/2, /*v=*/0.7, /*c=*/3);
//   double u = UcbScore(f, /*c=*/0.5, /*t=*/100, /*n=*/7);
#ifndef TOOLCACHE_SRC_POLICY_UCB1_H_
#define TOOLCACHE_SRC_POLICY_UCB1_H_

#include <cstdint>

namespace toolcache {

struct RewardOptions {
  // Paper-silent: d1 = d3 = 1 so log(H + 1) and log(V + 1) are >= 0 for
  // H, V >= 0 (with d -> 0 the logs are negative and the product of two
  // negative logs would reverse the ordering).
  double delta1 = 1.0;
  // Paper-silent: d2 = 1: log(L + 1) > 0 for every level L >= 1.
  double delta2 = 1.0;
  double delta3 = 1.0;
  // Paper-silent: d4 = 2 so log(C + 2) >= log 2 > 0 even for C = 0.
  double delta4 = 2.0;
  // false = CACA: the value factor is left out.
  bool use_value = true;
};

// Eq. 3. `admissions` is C_i. Non-positive arguments of a log are clamped
// to a tiny positive number, so a mis-set delta cannot produce NaN.
double GroupReward(const RewardOptions& options, double hit_ratio, double level,
                   double value, double admissions);

// Eq. 6. Returns +infinity when `selections` (N_i) is 0; `round` (t) < 1 is
// treated as 1 (no exploration bonus).
double UcbScore(double reward, double c, uint64_t round, uint64_t selections);

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_POLICY_UCB1_H_
