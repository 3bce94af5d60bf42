// Tests of the bandit reward (Eq. 3) and bound (Eq. 6) on exact numbers.
#include "src/policy/ucb1.h"

#include <cmath>

#include "gtest/gtest.h"

namespace toolcache {
namespace {

TEST(Ucb1Test, RewardMatchesEquationThree) {
  RewardOptions opt;  // d1 = d2 = d3 = 1, d4 = 2
  // ln(1.5) * ln(3) * ln(1.7) / ln(5)
  EXPECT_NEAR(GroupReward(opt, 0.5, 2, 0.7, 3), 0.14686356998229688, 1e-12);
}

TEST(Ucb1Test, CacaRewardLeavesOutTheValueFactor) {
  RewardOptions opt;
  opt.use_value = false;
  // ln(1.5) * ln(3) / ln(5)
  EXPECT_NEAR(GroupReward(opt, 0.5, 2, 0.7, 3), 0.27677299444256276, 1e-12);
  EXPECT_NEAR(GroupReward(opt, 0.5, 2, 0.0, 3),
              GroupReward(opt, 0.5, 2, 1.0, 3), 1e-15);
}

TEST(Ucb1Test, RewardRisesWithHitRatioLevelValueAndFallsWithAdmissions) {
  RewardOptions opt;
  const double base = GroupReward(opt, 0.4, 1, 0.5, 10);
  EXPECT_GT(GroupReward(opt, 0.6, 1, 0.5, 10), base);
  EXPECT_GT(GroupReward(opt, 0.4, 2, 0.5, 10), base);
  EXPECT_GT(GroupReward(opt, 0.4, 1, 0.9, 10), base);
  EXPECT_LT(GroupReward(opt, 0.4, 1, 0.5, 100), base);
  EXPECT_DOUBLE_EQ(GroupReward(opt, 0.0, 1, 0.5, 10), 0.0);  // no hits
  EXPECT_GE(GroupReward(opt, 0.0, 1, 0.0, 0), 0.0);
}

TEST(Ucb1Test, UcbMatchesEquationSix) {
  // 0.3 + 0.5 * sqrt(ln 100 / 4)
  EXPECT_NEAR(UcbScore(0.3, 0.5, 100, 4), 0.8364915065723368, 1e-12);
  EXPECT_DOUBLE_EQ(UcbScore(0.3, 0.5, 1, 4), 0.3);  // ln 1 = 0
}

TEST(Ucb1Test, UnselectedArmHasInfiniteBound) {
  EXPECT_TRUE(std::isinf(UcbScore(0.0, 0.5, 10, 0)));
}

TEST(Ucb1Test, MisSetDeltasNeverProduceNan) {
  RewardOptions opt;
  opt.delta1 = opt.delta2 = opt.delta3 = 0;
  opt.delta4 = 1;
  EXPECT_FALSE(std::isnan(GroupReward(opt, 0, 0, 0, 0)));
}

}  // namespace
}  // namespace toolcache
