// ScoreClassQueue against the heap it replaces in VAAC's window.
#include "src/policy/score_class_queue.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "src/policy/slot_heap.h"

namespace toolcache {
namespace {

TEST(ScoreClassQueueTest, LeastScoreFirstEarliestAmongEquals) {
  ScoreClassQueue q;
  EXPECT_TRUE(q.empty());
  q.Add(3, 1.5);
  q.Add(7, 1.2);
  q.Add(9, 1.2);
  q.Add(4, -0.0);
  q.Add(5, 0.0);  // the same score as -0.0, arrived later
  EXPECT_EQ(q.size(), 5u);
  EXPECT_EQ(q.Top(), 4u);
  q.Remove(4);
  EXPECT_EQ(q.Top(), 5u);
  q.Remove(5);
  EXPECT_EQ(q.Top(), 7u);
  q.Remove(9);  // the tail of its class
  EXPECT_EQ(q.Top(), 7u);
  q.Remove(7);
  EXPECT_EQ(q.Top(), 3u);
  EXPECT_TRUE(q.Contains(3));
  EXPECT_FALSE(q.Contains(7));
  q.Remove(7);  // absent: no-op
  q.Remove(3);
  EXPECT_TRUE(q.empty());
}

// Random adds (each arriving after every queued slot, as VAAC's window
// newcomers do), removals from anywhere (hits), of the top (evictions) and
// of the latest arrival (the window shrinking back into the main part);
// after every operation the top must be the heap's, keyed {score, tick}.
// Scores come from small sets so classes fill, empty and come back.
TEST(ScoreClassQueueTest, SameTopAsTheTickHeap) {
  for (const int distinct : {1, 3, 12, 400}) {
    std::mt19937_64 rng(static_cast<uint64_t>(distinct) * 7919);
    ScoreClassQueue q;
    SlotHeap<ClockPriority, ClockPriorityLess, 4> heap;
    std::vector<Slot> queued;  // in arrival order
    std::vector<Slot> free_slots;
    for (Slot s = 0; s < 300; ++s) free_slots.push_back(s);
    uint64_t tick = 0;
    uint64_t compared = 0;
    for (int i = 0; i < 40000; ++i) {
      const uint64_t op = rng() % 10;
      if (op < 5 && !free_slots.empty()) {
        const size_t k = rng() % free_slots.size();
        const Slot s = free_slots[k];
        free_slots[k] = free_slots.back();
        free_slots.pop_back();
        const double score =
            1.0 + static_cast<double>(rng() % distinct) / (distinct + 1.0);
        q.Add(s, score);
        heap.Set(s, ClockPriority{score, ++tick});
        queued.push_back(s);
      } else if (!queued.empty()) {
        size_t k;
        if (op < 7) {
          k = rng() % queued.size();  // anywhere
        } else if (op < 9) {
          const Slot top = heap.Top();
          k = 0;
          while (queued[k] != top) ++k;
        } else {
          k = queued.size() - 1;  // the latest arrival
        }
        const Slot s = queued[k];
        queued.erase(queued.begin() + static_cast<std::ptrdiff_t>(k));
        q.Remove(s);
        heap.Remove(s);
        free_slots.push_back(s);
      }
      ASSERT_EQ(q.size(), heap.size());
      if (!heap.empty()) {
        ASSERT_EQ(q.Top(), heap.Top())
            << "distinct " << distinct << " op " << i;
        ++compared;
      }
    }
    EXPECT_GT(compared, 30000u);
  }
}

// 6,000 distinct scores at once, then all but a few slots removed (the
// sweeps renumber the classes), then churn over 3 scores: the top is the
// heap's after every operation, and the memory held for the classes falls
// back to a fraction of its peak instead of staying there.
TEST(ScoreClassQueueTest, ClassesFollowTheLiveScoresAfterAPeak) {
  std::mt19937_64 rng(20261129);
  ScoreClassQueue q;
  SlotHeap<ClockPriority, ClockPriorityLess, 4> heap;
  std::vector<Slot> queued;  // in arrival order
  uint64_t tick = 0;
  auto add = [&](Slot s, double score) {
    q.Add(s, score);
    heap.Set(s, ClockPriority{score, ++tick});
    queued.push_back(s);
  };
  auto remove_at = [&](size_t k) {
    const Slot s = queued[k];
    queued.erase(queued.begin() + static_cast<std::ptrdiff_t>(k));
    q.Remove(s);
    heap.Remove(s);
    return s;
  };
  for (Slot s = 0; s < 6000; ++s) add(s, 1.0 + static_cast<double>(s) / 8192);
  const uint64_t peak = q.ClassBytes();
  std::vector<Slot> free_slots;
  while (queued.size() > 20) {
    free_slots.push_back(remove_at(rng() % queued.size()));
    ASSERT_EQ(q.Top(), heap.Top()) << queued.size() << " queued";
  }
  for (int i = 0; i < 20000; ++i) {
    if (rng() % 2 == 0 && !free_slots.empty()) {
      const Slot s = free_slots.back();
      free_slots.pop_back();
      add(s, static_cast<double>(rng() % 3));
    } else if (!queued.empty()) {
      const bool top = rng() % 2 == 0;
      size_t k = rng() % queued.size();
      if (top) {
        k = 0;
        while (queued[k] != heap.Top()) ++k;
      }
      free_slots.push_back(remove_at(k));
    }
    ASSERT_EQ(q.size(), heap.size());
    if (!heap.empty()) {
      ASSERT_EQ(q.Top(), heap.Top()) << "op " << i;
    }
  }
  EXPECT_LT(q.ClassBytes(), peak / 8) << "peak " << peak;
}

}  // namespace
}  // namespace toolcache
