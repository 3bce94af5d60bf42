// Tests of the caching value model (Eq. 1-2) on hand-computed numbers.
#include "src/policy/value_model.h"

#include <bit>
#include <cmath>
#include <cstdint>

#include "gtest/gtest.h"

namespace toolcache {
namespace {

Request Req(double latency, double cost, uint64_t size, double ttl) {
  Request r;
  r.latency = latency;
  r.cost = cost;
  r.size = size;
  r.ttl = ttl;
  return r;
}

TEST(ValueModelTest, MatchesEquationTwoOnHandComputedNumbers) {
  ValueModelOptions opt;  // lambda = 0.8 / 0.2 / 0.2
  opt.tau = 600;
  ValueModel model(opt);
  model.Observe(Req(0.2, 0.0, 100, 3600));
  model.Observe(Req(1.0, 0.005, 1000, 300));
  const Request r = Req(0.6, 0.0025, 775, 300);
  model.Observe(r);
  EXPECT_DOUBLE_EQ(model.NormLatency(r), 0.5);
  // NormCost 0.5 / NormSize 0.75.
  EXPECT_NEAR(model.CostSizeRatio(r), 0.5 / 0.75, 1e-12);
  EXPECT_NEAR(model.StalenessRisk(300), std::exp(-0.5), 1e-12);
  // v = 0.8*0.5 + 0.2*(0.5/0.75) - 0.2*e^-0.5
  EXPECT_NEAR(model.RawValue(r), 0.4120272013908066, 1e-12);
  EXPECT_NEAR(model.Value(r), 0.6120272013908066, 1e-12);
}

TEST(ValueModelTest, CheapFastLongLivedRequestIsNearTheMinimum) {
  ValueModelOptions opt;
  opt.tau = 600;
  ValueModel model(opt);
  const Request low = Req(0.2, 0.0, 100, 3600);
  model.Observe(low);
  model.Observe(Req(1.0, 0.005, 1000, 300));
  EXPECT_NEAR(model.RawValue(low), -0.2 * std::exp(-6.0), 1e-15);
  EXPECT_GE(model.Value(low), 0.0);
}

TEST(ValueModelTest, SmallestObjectDoesNotDivideByZeroAndRatioSaturates) {
  ValueModel model(ValueModelOptions{});
  model.Observe(Req(0.2, 0.0, 100, 3600));
  const Request smallest_costly = Req(0.2, 0.005, 100, 3600);
  model.Observe(smallest_costly);
  model.Observe(Req(0.2, 0.0, 1000, 3600));
  // NormSize = 0 -> floored; NormCost / floor is huge -> saturated at 1.
  EXPECT_DOUBLE_EQ(model.CostSizeRatio(smallest_costly), 1.0);
  EXPECT_TRUE(std::isfinite(model.Value(smallest_costly)));
}

TEST(ValueModelTest, FeatureWithoutSpreadNormalizesToZero) {
  ValueModel model(ValueModelOptions{});
  const Request only = Req(0.7, 0.01, 500, kNoExpiry);
  model.Observe(only);
  EXPECT_DOUBLE_EQ(model.NormLatency(only), 0.0);
  EXPECT_DOUBLE_EQ(model.CostSizeRatio(only), 0.0);
  // No expiry -> no staleness risk: v = 0, shifted value = lambda3.
  EXPECT_DOUBLE_EQ(model.RawValue(only), 0.0);
  EXPECT_DOUBLE_EQ(model.Value(only), 0.2);
}

TEST(ValueModelTest, TauIsTheMeanTtlOfInsertedEntries) {
  ValueModel model(ValueModelOptions{});
  // Before any insert: tau = the request's own TTL -> risk e^-1.
  EXPECT_NEAR(model.StalenessRisk(300), std::exp(-1.0), 1e-12);
  model.ObserveInsertedTtl(100);
  model.ObserveInsertedTtl(300);
  model.ObserveInsertedTtl(kNoExpiry);  // ignored: not a lifetime
  EXPECT_DOUBLE_EQ(model.Tau(50), 200.0);
  EXPECT_NEAR(model.StalenessRisk(200), std::exp(-1.0), 1e-12);
  EXPECT_NEAR(model.StalenessRisk(400), std::exp(-2.0), 1e-12);
  EXPECT_DOUBLE_EQ(model.StalenessRisk(0), 1.0);
  EXPECT_DOUBLE_EQ(model.StalenessRisk(kNoExpiry), 0.0);
}

TEST(ValueModelTest, ShorterTtlLowersTheValue) {
  ValueModelOptions opt;
  opt.tau = 300;
  ValueModel model(opt);
  const Request short_ttl = Req(0.5, 0, 10, 60);
  const Request long_ttl = Req(0.5, 0, 10, 3600);
  model.Observe(short_ttl);
  EXPECT_LT(model.Value(short_ttl), model.Value(long_ttl));
}

// Value() remembers the last request's value until the normalization or
// tau moves: over random requests drawn from small pools (so the memo is
// often asked for a repeat) with min/max and tau moving now and then, it
// must return bit for bit what RawValue + lambda3 computes afresh.
TEST(ValueModelTest, RememberedValueIsTheValueComputedAfresh) {
  // NaN: Tau() takes the running mean for any tau not > 0, so must the memo.
  for (const double tau : {0.0, 600.0, std::nan("")}) {
    ValueModelOptions opt;
    opt.tau = tau;
    ValueModel model(opt);
    uint64_t state = 12345;
    auto next = [&state] {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      return state;
    };
    const double latencies[] = {0.5, 1.0, 1.0, 2.5, 0.0, -0.0};
    const double costs[] = {0.0, 0.0, 0.001, 0.004, -0.0};
    const uint64_t sizes[] = {100, 700, 700, 5000, 1};
    const double ttls[] = {300, 3600, 1e12, INFINITY, 0};
    uint64_t memo_answers = 0;
    double last = NAN;
    for (int i = 0; i < 20000; ++i) {
      // Mostly repeats of the previous request's features.
      Request r = Req(latencies[next() % 6], costs[next() % 5],
                      sizes[next() % 5], ttls[next() % 5]);
      if (i > 0 && next() % 4 != 0) {
        r.latency = latencies[1];
        r.cost = costs[next() % 3];  // 0 (size unread) or 0.001
        r.ttl = ttls[2];
      }
      // The extremes widen slowly over the run.
      if (next() % 500 == 0) r.latency = static_cast<double>(i) / 1000;
      // Value does not require Observe first: sometimes it is asked before
      // the request widens the extremes, then again after.
      if (next() % 3 == 0) {
        const double before = model.Value(r);
        ASSERT_EQ(std::bit_cast<uint64_t>(before),
                  std::bit_cast<uint64_t>(model.RawValue(r) + opt.lambda3));
      }
      model.Observe(r);
      const double v = model.Value(r);
      const double fresh = model.RawValue(r) + opt.lambda3;
      ASSERT_EQ(std::bit_cast<uint64_t>(v), std::bit_cast<uint64_t>(fresh))
          << "request " << i;
      memo_answers +=
          std::bit_cast<uint64_t>(v) == std::bit_cast<uint64_t>(last);
      last = v;
      if (next() % 8 == 0) model.ObserveInsertedTtl(ttls[next() % 5]);
    }
    EXPECT_GT(memo_answers, 1000u);
  }
}

}  // namespace
}  // namespace toolcache
