// Tests of CacheCore's own bookkeeping (TTL, capacity, listener, slots) and
// of the reusable helpers FlatIdMap and SlotLists. Policy-generic behaviour is
// in policy_contract_test.cc.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <list>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "src/policy/factories.h"
#include "src/policy/flat_map.h"
#include "src/policy/intrusive_list.h"
#include "toolcache/policy.h"

namespace toolcache {
namespace {

Request Req(ObjectId id, uint64_t size = 1, double now = 0,
            double ttl = kNoExpiry) {
  Request r;
  r.id = id;
  r.size = size;
  r.now = now;
  r.ttl = ttl;
  return r;
}

std::unique_ptr<CacheCore> LruCore(uint64_t bytes, uint64_t entries = 0) {
  return std::make_unique<CacheCore>(
      CacheCoreOptions{.capacity_bytes = bytes, .capacity_entries = entries},
      MakeLruPolicy({.capacity_bytes = bytes, .capacity_entries = entries}));
}

// A policy that records the hooks it sees; admits per a flag; evicts the
// lowest live slot it knows.
class RecordingPolicy final : public Policy {
 public:
  std::string_view name() const override { return "recording"; }
  bool Admit(const Request& req) override {
    admits.push_back(req.id);
    return admit;
  }
  void OnInsert(Slot slot, const Request&) override {
    inserted.push_back(slot);
    live.push_back(slot);
  }
  void OnHit(Slot slot, const Request&) override { hits.push_back(slot); }
  void OnRemove(Slot slot) override {
    removed.push_back(slot);
    std::erase(live, slot);
  }
  Slot Victim() override { return live.front(); }

  bool admit = true;
  std::vector<ObjectId> admits;
  std::vector<Slot> inserted, hits, removed, live;
};

TEST(CacheCoreTest, HitAfterInsertAndMissForUnknownId) {
  auto core = LruCore(10);
  EXPECT_EQ(core->Lookup(Req(1)), LookupOutcome::kMiss);
  const Slot s = core->Insert(Req(1, 3));
  ASSERT_NE(s, kNoSlot);
  EXPECT_EQ(core->Find(1), s);
  EXPECT_EQ(core->Lookup(Req(1, 3, 5)), LookupOutcome::kHit);
  EXPECT_EQ(core->view().meta(s).hits, 1u);
  EXPECT_EQ(core->view().meta(s).last_access, 5);
  EXPECT_EQ(core->view().used_bytes(), 3u);
  EXPECT_EQ(core->Lookup(Req(2)), LookupOutcome::kMiss);
}

TEST(CacheCoreTest, ExpiredEntryIsReportedOnceThenMisses) {
  auto core = LruCore(10);
  ASSERT_NE(core->Insert(Req(1, 1, /*now=*/100, /*ttl=*/60)), kNoSlot);
  EXPECT_EQ(core->Lookup(Req(1, 1, 159.9)), LookupOutcome::kHit);
  // Expiry is inclusive: at exactly inserted_at + ttl the entry is stale.
  EXPECT_EQ(core->Lookup(Req(1, 1, 160)), LookupOutcome::kExpired);
  EXPECT_EQ(core->Lookup(Req(1, 1, 161)), LookupOutcome::kMiss);
  EXPECT_EQ(core->view().entry_count(), 0u);
  EXPECT_EQ(core->view().used_bytes(), 0u);
  EXPECT_EQ(core->expirations(), 1u);
}

TEST(CacheCoreTest, ExpireUntilRemovesEntriesPromptlyInExpiryOrder) {
  auto core = LruCore(100);
  std::vector<std::pair<ObjectId, RemovalCause>> removed;
  core->SetRemovalListener([&](Slot, ObjectId id, RemovalCause cause) {
    removed.emplace_back(id, cause);
  });
  ASSERT_NE(core->Insert(Req(1, 1, 0, 30)), kNoSlot);
  ASSERT_NE(core->Insert(Req(2, 1, 0, 10)), kNoSlot);
  ASSERT_NE(core->Insert(Req(3, 1, 0, 20)), kNoSlot);
  ASSERT_NE(core->Insert(Req(4, 1, 0)), kNoSlot);  // never expires
  core->ExpireUntil(20);
  ASSERT_EQ(removed.size(), 2u);
  EXPECT_EQ(removed[0].first, 2u);
  EXPECT_EQ(removed[1].first, 3u);
  EXPECT_EQ(removed[0].second, RemovalCause::kExpired);
  EXPECT_EQ(core->view().entry_count(), 2u);
  // Insert expires first: at t=1000 only the TTL-less entry survives.
  ASSERT_NE(core->Insert(Req(5, 1, 1000)), kNoSlot);
  EXPECT_EQ(core->Find(1), kNoSlot);
  EXPECT_NE(core->Find(4), kNoSlot);
  EXPECT_EQ(core->expirations(), 3u);
}

// Insert first expires every entry due at its `now`, inclusive (Insert's
// inline test of the heap's top must say <=, as ExpireUntil does): an entry
// expiring exactly then frees its room instead of being evicted.
TEST(CacheCoreTest, InsertExpiresAnEntryDueExactlyNow) {
  auto core = LruCore(2);
  ASSERT_NE(core->Insert(Req(1, 1, /*now=*/0, /*ttl=*/10)), kNoSlot);
  ASSERT_NE(core->Insert(Req(2, 1, /*now=*/5)), kNoSlot);
  ASSERT_NE(core->Insert(Req(3, 1, /*now=*/10)), kNoSlot);
  EXPECT_EQ(core->expirations(), 1u);
  EXPECT_EQ(core->evictions(), 0u);
  EXPECT_NE(core->Find(2), kNoSlot);
  EXPECT_NE(core->Find(3), kNoSlot);
}

TEST(CacheCoreTest, OversizedObjectIsOfferedToPolicyThenRefused) {
  auto owned = std::make_unique<RecordingPolicy>();
  RecordingPolicy* policy = owned.get();
  CacheCore core({.capacity_bytes = 10}, std::move(owned));
  ASSERT_NE(core.Insert(Req(1, 4)), kNoSlot);
  EXPECT_EQ(core.Insert(Req(2, 11)), kNoSlot);
  EXPECT_EQ(policy->admits, (std::vector<ObjectId>{1, 2}));
  // Nothing was evicted to make room for an object that can never fit.
  EXPECT_EQ(core.Find(1), 0u);
  EXPECT_EQ(core.evictions(), 0u);
  EXPECT_EQ(policy->inserted.size(), 1u);
  // Exactly the capacity fits (after evicting the rest).
  EXPECT_NE(core.Insert(Req(3, 10)), kNoSlot);
  EXPECT_EQ(core.view().used_bytes(), 10u);
}

TEST(CacheCoreTest, ZeroCapacityCachesNothing) {
  auto core = LruCore(0);
  EXPECT_EQ(core->Insert(Req(1, 1)), kNoSlot);
  EXPECT_EQ(core->view().entry_count(), 0u);
}

TEST(CacheCoreTest, AlreadyExpiredResultIsNotCached) {
  auto core = LruCore(10);
  EXPECT_EQ(core->Insert(Req(1, 1, 5, 0)), kNoSlot);
  EXPECT_EQ(core->Insert(Req(2, 1, 5, -3)), kNoSlot);
  EXPECT_EQ(core->Insert(Req(3, 1, 5, std::nan(""))), kNoSlot);
  EXPECT_EQ(core->view().entry_count(), 0u);
}

TEST(CacheCoreTest, RejectedObjectIsNotCachedAndEvictsNothing) {
  auto owned = std::make_unique<RecordingPolicy>();
  RecordingPolicy* policy = owned.get();
  CacheCore core({.capacity_bytes = 2}, std::move(owned));
  ASSERT_NE(core.Insert(Req(1, 2)), kNoSlot);
  policy->admit = false;
  EXPECT_EQ(core.Insert(Req(2, 2)), kNoSlot);
  EXPECT_NE(core.Find(1), kNoSlot);
  EXPECT_TRUE(policy->removed.empty());
}

TEST(CacheCoreTest, EvictsUntilBytesFit) {
  auto core = LruCore(10);
  for (ObjectId id = 1; id <= 5; ++id)
    ASSERT_NE(core->Insert(Req(id, 2)), kNoSlot);
  EXPECT_EQ(core->view().used_bytes(), 10u);
  // 7 bytes need 4 LRU victims: ids 1..3 free only 6 bytes, id 4 makes 8.
  ASSERT_NE(core->Insert(Req(6, 7)), kNoSlot);
  EXPECT_EQ(core->Find(1), kNoSlot);
  EXPECT_EQ(core->Find(2), kNoSlot);
  EXPECT_EQ(core->Find(3), kNoSlot);
  EXPECT_EQ(core->Find(4), kNoSlot);
  EXPECT_NE(core->Find(5), kNoSlot);
  EXPECT_EQ(core->view().used_bytes(), 9u);
  EXPECT_EQ(core->evictions(), 4u);
}

TEST(CacheCoreTest, EntryCapacityIsHonoured) {
  auto core = LruCore(1000, /*entries=*/3);
  for (ObjectId id = 1; id <= 10; ++id) {
    ASSERT_NE(core->Insert(Req(id, 1)), kNoSlot);
    EXPECT_LE(core->view().entry_count(), 3u);
  }
  EXPECT_EQ(core->view().capacity_entries(), 3u);
  EXPECT_NE(core->Find(10), kNoSlot);
  EXPECT_NE(core->Find(8), kNoSlot);
  EXPECT_EQ(core->Find(7), kNoSlot);
}

// A huge entry limit costs memory only as entries arrive (fuzz_config
// found a config whose `maxEntries` made the index allocate 4 GiB at start).
TEST(CacheCoreTest, AHugeEntryLimitAllocatesNothingUpFront) {
  auto core = LruCore(1000, /*entries=*/400'333'333);
  EXPECT_LT(core->MetadataBytes(), uint64_t{64} << 20);
  for (ObjectId id = 1; id <= 100; ++id) {
    ASSERT_NE(core->Insert(Req(id, 1)), kNoSlot);
  }
  EXPECT_NE(core->Find(100), kNoSlot);
  EXPECT_LT(core->MetadataBytes(), uint64_t{64} << 20);
}

TEST(CacheCoreTest, ListenerFiresOnceBeforeSlotIsReused) {
  auto core = LruCore(1);
  std::vector<std::pair<Slot, ObjectId>> removed;
  core->SetRemovalListener([&](Slot s, ObjectId id, RemovalCause cause) {
    EXPECT_EQ(cause, RemovalCause::kEvicted);
    // The slot still describes the leaving entry.
    EXPECT_EQ(core->view().meta(s).id, id);
    removed.emplace_back(s, id);
  });
  const Slot a = core->Insert(Req(1));
  const Slot b = core->Insert(Req(2));
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0], std::make_pair(a, ObjectId{1}));
  EXPECT_EQ(a, b);  // LIFO reuse
  EXPECT_EQ(core->view().meta(b).id, 2u);
}

TEST(CacheCoreTest, InsertOfCachedIdReplacesTheEntry) {
  auto core = LruCore(10);
  int erased = 0;
  core->SetRemovalListener([&](Slot, ObjectId, RemovalCause c) {
    erased += c == RemovalCause::kErased;
  });
  ASSERT_NE(core->Insert(Req(1, 4)), kNoSlot);
  const Slot s = core->Insert(Req(1, 6));
  ASSERT_NE(s, kNoSlot);
  EXPECT_EQ(erased, 1);
  EXPECT_EQ(core->view().entry_count(), 1u);
  EXPECT_EQ(core->view().used_bytes(), 6u);
}

TEST(CacheCoreTest, EraseAndClearRemoveEntriesAndAccounting) {
  auto core = LruCore(100);
  for (ObjectId id = 1; id <= 4; ++id)
    ASSERT_NE(core->Insert(Req(id, 5, 0, 50)), kNoSlot);
  EXPECT_TRUE(core->Erase(2));
  EXPECT_FALSE(core->Erase(2));
  EXPECT_EQ(core->view().used_bytes(), 15u);
  core->Clear();
  EXPECT_EQ(core->view().entry_count(), 0u);
  EXPECT_EQ(core->view().used_bytes(), 0u);
  EXPECT_EQ(core->Find(1), kNoSlot);
  // Cleared TTL entries do not "expire" later.
  core->ExpireUntil(1e9);
  EXPECT_EQ(core->expirations(), 0u);
}

TEST(CacheCoreTest, StaleHeapItemsNeverExpireAReusedSlot) {
  // Churn: each entry has a TTL and is evicted long before it expires; its
  // slot is reused by entries with later expiries.
  auto core = LruCore(4);
  for (ObjectId id = 0; id < 20000; ++id) {
    ASSERT_NE(core->Insert(Req(id, 1, /*now=*/id * 0.001, /*ttl=*/10 + id)),
              kNoSlot);
  }
  EXPECT_EQ(core->expirations(), 0u);
  EXPECT_EQ(core->view().entry_count(), 4u);
  // The expiry heap was compacted: memory stays small despite 20k inserts.
  EXPECT_LT(core->MetadataBytes(), 100000u);
}

TEST(CacheCoreTest, SizeZeroIsAccountedAsOneByte) {
  auto core = LruCore(2);
  ASSERT_NE(core->Insert(Req(1, 0)), kNoSlot);
  EXPECT_EQ(core->view().used_bytes(), 1u);
}

// Lookup's miss lets the Insert that follows it skip its own index search
// (CacheCore::Impl::NoteAbsent): every Insert must forget that, or a second
// Insert of the same id would index it twice instead of replacing it.
TEST(CacheCoreTest, InsertAfterAMissStillReplacesAnIdInsertedSince) {
  auto core = LruCore(100);
  EXPECT_EQ(core->Lookup(Req(1)), LookupOutcome::kMiss);
  ASSERT_NE(core->Insert(Req(1, 4)), kNoSlot);
  ASSERT_NE(core->Insert(Req(1, 6)), kNoSlot);
  EXPECT_EQ(core->view().entry_count(), 1u);
  EXPECT_EQ(core->view().used_bytes(), 6u);
  // An expired lookup removes the entry and notes it absent too.
  ASSERT_NE(core->Insert(Req(2, 5, /*now=*/0, /*ttl=*/10)), kNoSlot);
  EXPECT_EQ(core->Lookup(Req(2, 5, /*now=*/20)), LookupOutcome::kExpired);
  ASSERT_NE(core->Insert(Req(2, 5, /*now=*/20)), kNoSlot);
  ASSERT_NE(core->Insert(Req(2, 7, /*now=*/20)), kNoSlot);
  EXPECT_EQ(core->view().entry_count(), 2u);
  EXPECT_EQ(core->view().used_bytes(), 13u);
  EXPECT_TRUE(core->Erase(2));
  EXPECT_FALSE(core->Erase(2));  // indexed once
  EXPECT_EQ(core->Lookup(Req(2, 1, 20)), LookupOutcome::kMiss);
}

// The id index (linear probing, home bucket from the stored tag, backward-
// shift deletion) agrees with a set under random inserts and erases, through
// its growth from 16 buckets past the 8192 where its load limit changes
// from 1/2 to 3/4, for clustered (sequential) and random ids.
TEST(CacheCoreTest, IndexAgreesWithASetUnderChurnAndGrowth) {
  for (const bool sequential : {true, false}) {
    auto core = LruCore(kUnlimitedBytes);
    std::unordered_map<ObjectId, bool> model;  // id -> cached
    std::mt19937_64 rng(sequential ? 7 : 8);
    std::vector<ObjectId> ids;
    for (int i = 0; i < 12000; ++i) ids.push_back(sequential ? i : rng());
    uint64_t peak = 0;
    for (int step = 0; step < 60000; ++step) {
      const ObjectId id = ids[rng() % (step < 40000 ? ids.size() : 300)];
      peak = std::max(peak, core->view().entry_count());
      const int op = static_cast<int>(rng() % 3);
      if (op == 0) {
        const bool hit = core->Lookup(Req(id)) == LookupOutcome::kHit;
        ASSERT_EQ(hit, model[id]) << id;
        if (!hit) {
          ASSERT_NE(core->Insert(Req(id)), kNoSlot);
        }
        model[id] = true;
      } else if (op == 1) {
        ASSERT_NE(core->Insert(Req(id)), kNoSlot);
        model[id] = true;
      } else {
        ASSERT_EQ(core->Erase(id), model[id]) << id;
        model[id] = false;
      }
    }
    uint64_t cached = 0;
    for (const auto& [id, in] : model) {
      cached += in;
      ASSERT_EQ(core->Find(id) != kNoSlot, in) << id;
      if (in) {
        ASSERT_EQ(core->view().meta(core->Find(id)).id, id);
      }
    }
    EXPECT_EQ(core->view().entry_count(), cached);
    EXPECT_GT(peak, 4096u);  // past 8192 buckets at 1/2
  }
}

TEST(FlatIdMapTest, MatchesStdUnorderedMapUnderRandomChurn) {
  FlatIdMap map;
  std::unordered_map<uint64_t, uint32_t> ref;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    // Small key space forces long probe runs and many backward shifts.
    const uint64_t key = rng() % 3000 * 0x9e3779b97f4a7c15ULL;
    const int op = static_cast<int>(rng() % 3);
    if (op == 0) {
      const uint32_t v = static_cast<uint32_t>(rng() % 1000);
      map.Insert(key, v);
      ref[key] = v;
    } else if (op == 1) {
      EXPECT_EQ(map.Erase(key), ref.erase(key) == 1);
    } else {
      const auto it = ref.find(key);
      EXPECT_EQ(map.Find(key),
                it == ref.end() ? FlatIdMap::kEmpty : it->second);
    }
    ASSERT_EQ(map.size(), ref.size());
  }
  uint64_t seen = 0;
  map.ForEach([&](uint64_t k, uint32_t v) {
    EXPECT_EQ(ref.at(k), v);
    ++seen;
  });
  EXPECT_EQ(seen, ref.size());
}

// Assign and EraseIf (one probe each) against the two-call forms they
// replace in vaac-plus's ghost: Erase then Insert, Find then Erase. The
// contents, the size and the bucket count (memory) must stay the same.
TEST(FlatIdMapTest, AssignAndEraseIfMatchTheTwoCallForms) {
  FlatIdMap fused;
  FlatIdMap plain;
  std::mt19937_64 rng(11);
  for (int i = 0; i < 200000; ++i) {
    // A key space that grows slowly: the table doubles several times.
    const uint64_t key = rng() % (100 + i / 50) * 0x9e3779b97f4a7c15ULL;
    const auto v = static_cast<uint32_t>(rng() % 1000);
    const int op = static_cast<int>(rng() % 3);
    if (op == 0) {
      fused.Assign(key, v);
      plain.Erase(key);
      plain.Insert(key, v);
    } else if (op == 1) {
      // Erase only values with the same parity as v.
      const bool erased =
          fused.EraseIf(key, [v](uint32_t x) { return x % 2 == v % 2; });
      const uint32_t found = plain.Find(key);
      const bool expect = found != FlatIdMap::kEmpty && found % 2 == v % 2;
      if (expect) plain.Erase(key);
      ASSERT_EQ(erased, expect) << i;
    }
    ASSERT_EQ(fused.Find(key), plain.Find(key)) << i;
    ASSERT_EQ(fused.size(), plain.size()) << i;
    ASSERT_EQ(fused.MemoryBytes(), plain.MemoryBytes()) << i;
  }
  uint64_t seen = 0;
  fused.ForEach([&](uint64_t k, uint32_t x) {
    EXPECT_EQ(plain.Find(k), x);
    ++seen;
  });
  EXPECT_EQ(seen, plain.size());
}

// ReserveBuckets (vaac-plus's ghost keeps its index at most half full)
// changes only the layout: a map reserved at random moments answers every
// Find, EraseIf and size as one that never was, through growth and churn.
TEST(FlatIdMapTest, ReservedMapAnswersAsTheUnreservedOne) {
  FlatIdMap reserved;
  FlatIdMap plain;
  std::mt19937_64 rng(29);
  for (int i = 0; i < 200000; ++i) {
    const uint64_t key = rng() % (100 + i / 50) * 0x9e3779b97f4a7c15ULL;
    const auto v = static_cast<uint32_t>(rng() % 1000);
    const int op = static_cast<int>(rng() % 7);
    if (op < 3) {
      reserved.Assign(key, v);
      plain.Assign(key, v);
    } else if (op < 5) {
      const auto pred = [v](uint32_t x) { return x % 2 == v % 2; };
      ASSERT_EQ(reserved.EraseIf(key, pred), plain.EraseIf(key, pred)) << i;
    } else if (op == 5 && rng() % 500 == 0) {
      const uint64_t before = reserved.bucket_count();
      const uint64_t want = 2 * reserved.size() + rng() % 64;
      reserved.ReserveBuckets(want);
      ASSERT_GE(reserved.bucket_count(), want) << i;
      ASSERT_GE(reserved.bucket_count(), before) << i;  // never shrinks
    }
    ASSERT_EQ(reserved.Find(key), plain.Find(key)) << i;
    ASSERT_EQ(reserved.size(), plain.size()) << i;
  }
  EXPECT_GT(reserved.bucket_count(), plain.bucket_count());
  uint64_t seen = 0;
  reserved.ForEach([&](uint64_t k, uint32_t x) {
    EXPECT_EQ(plain.Find(k), x);
    ++seen;
  });
  EXPECT_EQ(seen, plain.size());
}

TEST(FlatIdMapTest, AcceptsKeyZeroAndMaxKey) {
  FlatIdMap map;
  map.Insert(0, 1);
  map.Insert(~uint64_t{0}, 2);
  EXPECT_EQ(map.Find(0), 1u);
  EXPECT_EQ(map.Find(~uint64_t{0}), 2u);
  EXPECT_TRUE(map.Erase(0));
  EXPECT_EQ(map.Find(0), FlatIdMap::kEmpty);
}

TEST(SlotListsTest, KeepsOrderAcrossListsAndMoves) {
  SlotLists lists(2);
  lists.PushFront(0, 3);
  lists.PushFront(0, 1);
  lists.PushBack(0, 200);  // grows the node array
  lists.PushBack(1, 7);
  EXPECT_EQ(lists.Front(0), 1u);
  EXPECT_EQ(lists.Back(0), 200u);
  EXPECT_EQ(lists.Next(1), 3u);
  EXPECT_EQ(lists.Prev(1), kNoSlot);
  EXPECT_EQ(lists.Size(0), 3u);
  lists.MoveToFront(1, 200);
  EXPECT_EQ(lists.ListOf(200), 1);
  EXPECT_EQ(lists.Front(1), 200u);
  EXPECT_EQ(lists.Back(1), 7u);
  EXPECT_EQ(lists.Back(0), 3u);
  lists.Remove(3);
  lists.Remove(3);  // no-op
  EXPECT_FALSE(lists.Contains(3));
  EXPECT_EQ(lists.Size(0), 1u);
  lists.Remove(1);
  EXPECT_TRUE(lists.Empty(0));
  EXPECT_EQ(lists.Front(0), kNoSlot);
  EXPECT_EQ(lists.Back(0), kNoSlot);
}

// Every move (within a list -- first, middle, last -- or across lists) and
// removal keeps each list's order equal to a std::list model, sizes and tags
// included.
TEST(SlotListsTest, MatchesAModelUnderRandomMoves) {
  constexpr uint32_t kLists = 3;
  constexpr Slot kSlots = 300;
  SlotLists lists(kLists);
  std::vector<std::list<Slot>> model(kLists);
  auto unlist = [&](Slot s) {
    for (auto& l : model) l.remove(s);
  };
  std::mt19937_64 rng(11);
  for (int step = 0; step < 20000; ++step) {
    const Slot s = static_cast<Slot>(rng() % kSlots);
    const uint32_t list = static_cast<uint32_t>(rng() % kLists);
    switch (rng() % 4) {
      case 0:  // to the front, mostly of the list it is in
        if (rng() % 4 != 0 && lists.Contains(s)) {
          const uint32_t in = lists.ListOf(s);
          unlist(s);
          model[in].push_front(s);
          lists.MoveToFront(in, s);
        } else {
          unlist(s);
          model[list].push_front(s);
          lists.MoveToFront(list, s);
        }
        break;
      case 1:
        unlist(s);
        model[list].push_back(s);
        lists.MoveToBack(list, s);
        break;
      case 2: {  // the current first again (a repeated hit)
        const Slot f = lists.Front(list);
        if (f == kNoSlot) break;
        ASSERT_EQ(f, model[list].front());
        lists.MoveToFront(list, f);
        break;
      }
      default:
        unlist(s);
        lists.Remove(s);
    }
    for (uint32_t l = 0; l < kLists; ++l) {
      ASSERT_EQ(lists.Size(l), model[l].size());
      std::vector<Slot> walked;
      for (Slot x = lists.Front(l); x != kNoSlot; x = lists.Next(x)) {
        ASSERT_EQ(lists.ListOf(x), l);
        walked.push_back(x);
      }
      ASSERT_EQ(walked, std::vector<Slot>(model[l].begin(), model[l].end()))
          << "step " << step;
      ASSERT_EQ(lists.Back(l), model[l].empty() ? kNoSlot : model[l].back());
    }
  }
}

TEST(RegistryTest, UnknownPolicyErrorListsKnownNames) {
  auto p = MakePolicy("nope", {.capacity_bytes = 10});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("nope"), std::string::npos);
  EXPECT_NE(p.status().message().find("lru"), std::string::npos);
}

TEST(RegistryTest, UnknownKnobIsRejectedWithAcceptedList) {
  PolicyParams params{.capacity_bytes = 10};
  params.knobs["lambda1"] = 0.5;
  auto p = MakePolicy("lru", params);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("lambda1"), std::string::npos);
  EXPECT_NE(p.status().message().find("(none)"), std::string::npos);
}

TEST(RegistryTest, EveryRowIsFoundByNameAndBuildsItsPolicy) {
  for (const PolicyInfo& info : Policies()) {
    EXPECT_EQ(FindPolicy(info.name), &info);
    auto p = MakePolicy(info.name, {.capacity_bytes = 1000});
    ASSERT_TRUE(p.ok()) << info.name << ": " << p.status().ToString();
    EXPECT_FALSE((*p)->name().empty());
  }
  EXPECT_EQ(FindPolicy("does-not-exist"), nullptr);
}

TEST(RegistryTest, KnobOrReadsGivenValueOrFallback) {
  PolicyParams params;
  params.knobs["x"] = 2.5;
  EXPECT_EQ(KnobOr(params, "x", 1), 2.5);
  EXPECT_EQ(KnobOr(params, "y", 1), 1);
}

}  // namespace
}  // namespace toolcache
