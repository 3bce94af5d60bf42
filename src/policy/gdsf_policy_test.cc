// GDSF: exact small sequences for its defining behaviour (cost/size
// priority, frequency, aging through the inflation clock).
#include "src/policy/gdsf_policy.h"

#include <memory>

#include "gtest/gtest.h"
#include "src/policy/policy_test_util.h"
#include "toolcache/policy.h"

namespace toolcache {
namespace {

Request Req(ObjectId id, uint64_t size, double latency, double cost = 0) {
  Request r;
  r.id = id;
  r.size = size;
  r.latency = latency;
  r.cost = cost;
  return r;
}

TEST(GdsfPolicy, KeepsExpensiveSmallObjectOverCheapBigOne) {
  CacheCore core({.capacity_bytes = 100}, MakeGdsfPolicy({}));
  Access(core, Req(1, 10, 5.0));  // H = 5/10 = 0.5
  Access(core, Req(2, 90, 1.0));  // H = 1/90
  Access(core, Req(3, 10, 1.0));  // needs 10 bytes: the cheap big one goes
  EXPECT_NE(core.Find(1), kNoSlot);
  EXPECT_EQ(core.Find(2), kNoSlot);
  EXPECT_NE(core.Find(3), kNoSlot);
}

TEST(GdsfPolicy, AgesAnUnusedExpensiveObjectOutThroughTheClock) {
  // Sizes and costs are powers of two so every priority is exact.
  CacheCore core({.capacity_bytes = 16}, MakeGdsfPolicy({}));
  Access(core, Req(100, 8, 8.0));  // H = 1.0, never requested again
  // Cheap objects: X_k gets H = L + 1/8 where L = H of the last victim, so
  // X_k = k/8; X_{k+1} evicts X_k while k/8 < 1.
  for (ObjectId k = 1; k <= 8; ++k) {
    Access(core, Req(k, 8, 1.0));
    EXPECT_NE(core.Find(100), kNoSlot) << "evicted too early at X" << k;
  }
  // X_8 has H = 1.0 = A's H; the tie goes to the older entry: A.
  Access(core, Req(9, 8, 1.0));
  EXPECT_EQ(core.Find(100), kNoSlot);
  EXPECT_NE(core.Find(8), kNoSlot);
  EXPECT_NE(core.Find(9), kNoSlot);
}

TEST(GdsfPolicy, FrequencyMultipliesTheValue) {
  CacheCore core({.capacity_bytes = 20}, MakeGdsfPolicy({}));
  Access(core, Req(1, 10, 1.0));
  Access(core, Req(2, 10, 1.0));
  EXPECT_TRUE(Access(core, Req(1, 10, 1.0)));  // F(1) = 2
  Access(core, Req(3, 10, 1.0));               // evicts 2 (F = 1)
  EXPECT_NE(core.Find(1), kNoSlot);
  EXPECT_EQ(core.Find(2), kNoSlot);
}

TEST(GdsfPolicy, CostRowUsesPriceNotLatency) {
  // Object 1 is slow but free, object 2 fast but priced.
  for (const bool by_price : {false, true}) {
    CacheCore core({.capacity_bytes = 20},
                   by_price ? MakeGdsfCostPolicy({}) : MakeGdsfPolicy({}));
    Access(core, Req(1, 10, /*latency=*/4.0, /*cost=*/0.0));
    Access(core, Req(2, 10, /*latency=*/0.5, /*cost=*/0.01));
    Access(core, Req(3, 10, /*latency=*/1.0, /*cost=*/0.005));
    EXPECT_EQ(core.Find(1) != kNoSlot, !by_price) << "by_price=" << by_price;
    EXPECT_EQ(core.Find(2) != kNoSlot, by_price) << "by_price=" << by_price;
  }
}

TEST(GdsfPolicy, CostSourceKnobSelectsPrice) {
  Result<std::unique_ptr<Policy>> p =
      MakePolicy("gdsf", {.knobs = {{"cost_source", 1}}});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ((*p)->name(), "gdsf-cost");
  EXPECT_FALSE(MakePolicy("gdsf", {.knobs = {{"lambda", 1}}}).ok());
}

}  // namespace
}  // namespace toolcache
