// The Store contract suite: one set of tests, instantiated for every
// backend of the registry (memory, SQLite, a real redis-server) and for the
// wrappers over a backend, the way policy_contract_test.cc covers every
// policy. Backend-specific behaviour (restart, kill -9, size limit, a dead
// or slow Redis) is at the end.
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/redis_server.h"
#include "toolcache/store.h"

namespace toolcache {
namespace {

using ::testing::HasSubstr;
using testing::RedisServer;

// Wall-clock-like start, so SQLite's persisted expiry times look real.
constexpr double kStart = 1.7e9;

std::string TempPath(const std::string& stem) {
  char tmpl[] = "/tmp/toolcache-store-XXXXXX";
  const char* dir = mkdtemp(tmpl);
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + stem;
}

// One backend under test: how to open it and how to let time pass.
struct Backend {
  std::string name;
  std::function<std::unique_ptr<Store>(const Clock*)> open;
  bool real_time = false;  // TTLs run on the server's clock (Redis)
};
void PrintTo(const Backend& b, std::ostream* os) { *os << b.name; }

RedisServer* SharedRedis() { return &testing::SharedRedisServer(); }

std::unique_ptr<Store> MustOpen(const std::string& spec, const Clock* clock) {
  Result<std::unique_ptr<Store>> s = OpenStore(spec, {.clock = clock});
  EXPECT_TRUE(s.ok()) << spec << ": " << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

// A wrapper that owns its base (the fault injector borrows it).
class Owning final : public Store {
 public:
  Owning(std::unique_ptr<Store> base, std::shared_ptr<FaultPlan> plan)
      : base_(std::move(base)),
        outer_(NewFaultInjectionStore(base_.get(), std::move(plan))) {}
  std::string_view name() const override { return outer_->name(); }
  Result<std::vector<std::optional<StoreValue>>> Get(
      std::span<const StoreKey> keys) override {
    return outer_->Get(keys);
  }
  Status Put(const StoreKey& key, std::string_view value, double ttl) override {
    return outer_->Put(key, value, ttl);
  }
  Result<bool> Erase(const StoreKey& key) override {
    return outer_->Erase(key);
  }
  Result<std::vector<uint64_t>> AddToCounters(std::span<const StoreKey> keys,
                                              uint64_t delta,
                                              uint64_t initial) override {
    return outer_->AddToCounters(keys, delta, initial);
  }

 private:
  std::unique_ptr<Store> base_;
  std::unique_ptr<Store> outer_;
};

std::vector<Backend> AllBackends() {
  return {
      {"memory", [](const Clock* c) { return MustOpen("memory", c); }},
      {"sqlite",
       [](const Clock* c) {
         return MustOpen("sqlite:" + TempPath("contract.db"), c);
       }},
      {"redis",
       [](const Clock* c) {
         // A fresh prefix per test keeps tests independent on one server.
         static int n = 0;
         return MustOpen(SharedRedis()->Spec("prefix=t" + std::to_string(++n)),
                         c);
       },
       /*real_time=*/true},
      {"fault_injection_idle",
       [](const Clock* c) -> std::unique_ptr<Store> {
         return std::make_unique<Owning>(MustOpen("memory", c),
                                         std::make_shared<FaultPlan>());
       }},
      {"circuit_breaker_over_sqlite",
       [](const Clock* c) {
         return NewCircuitBreakerStore(
             MustOpen("sqlite:" + TempPath("breaker.db"), c), {});
       }},
  };
}

class StoreContractTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    store_ = GetParam().open(&clock_);
    ASSERT_NE(store_, nullptr);
  }
  // Lets `seconds` pass for the store's TTLs.
  void Advance(double seconds) {
    if (GetParam().real_time) {
      std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    } else {
      clock_.Advance(seconds);
    }
  }
  std::optional<StoreValue> GetOne(std::string_view ns, std::string_view key) {
    StoreKey k{ns, key};
    auto r = store_->Get({&k, 1});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? (*r)[0] : std::nullopt;
  }

  ManualClock clock_{kStart};
  std::unique_ptr<Store> store_;
};

TEST_P(StoreContractTest, PutThenGetReturnsTheBytesAndTheTimeLeft) {
  ASSERT_TRUE(store_->Put({"ns", "k"}, "value", 100).ok());
  std::optional<StoreValue> v = GetOne("ns", "k");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(*v->bytes, "value");
  EXPECT_GT(v->ttl_seconds, 90);
  EXPECT_LE(v->ttl_seconds, 100);
  ASSERT_TRUE(store_->Put({"ns", "forever"}, "x", kNoExpiry).ok());
  EXPECT_EQ(GetOne("ns", "forever")->ttl_seconds, kNoExpiry);
}

TEST_P(StoreContractTest, BatchGetAnswersInOrderWithAbsentKeysEmpty) {
  ASSERT_TRUE(store_->Put({"ns", "a"}, "1", 60).ok());
  ASSERT_TRUE(store_->Put({"ns", "c"}, "3", 60).ok());
  std::vector<StoreKey> keys = {{"ns", "a"}, {"ns", "b"}, {"ns", "c"}};
  auto r = store_->Get(keys);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ(*(*r)[0]->bytes, "1");
  EXPECT_FALSE((*r)[1].has_value());
  EXPECT_EQ(*(*r)[2]->bytes, "3");
  auto empty = store_->Get({});
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST_P(StoreContractTest, PutReplacesAndNamespacesAreSeparate) {
  ASSERT_TRUE(store_->Put({"one", "k"}, "first", 60).ok());
  ASSERT_TRUE(store_->Put({"one", "k"}, "second", 60).ok());
  ASSERT_TRUE(store_->Put({"two", "k"}, "other", 60).ok());
  EXPECT_EQ(*GetOne("one", "k")->bytes, "second");
  EXPECT_EQ(*GetOne("two", "k")->bytes, "other");
}

TEST_P(StoreContractTest, KeysAndValuesAreBinarySafe) {
  const std::string key("a\0b:c\xff", 6);
  std::string value(1 << 20, '\0');
  for (size_t i = 0; i < value.size(); ++i) value[i] = static_cast<char>(i * 7);
  ASSERT_TRUE(store_->Put({"ns", key}, value, 60).ok());
  EXPECT_FALSE(GetOne("ns", std::string_view("a\0b:c", 5)).has_value());
  std::optional<StoreValue> v = GetOne("ns", key);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(*v->bytes, value);
  ASSERT_TRUE(store_->Put({"ns", "empty"}, "", 60).ok());
  EXPECT_EQ(*GetOne("ns", "empty")->bytes, "");
}

TEST_P(StoreContractTest, ItemsExpireAfterTheirTtl) {
  ASSERT_TRUE(store_->Put({"ns", "short"}, "s", 0.3).ok());
  ASSERT_TRUE(store_->Put({"ns", "long"}, "l", 60).ok());
  EXPECT_TRUE(GetOne("ns", "short").has_value());
  Advance(0.5);
  EXPECT_FALSE(GetOne("ns", "short").has_value());
  EXPECT_TRUE(GetOne("ns", "long").has_value());
  Result<bool> erased = store_->Erase({"ns", "short"});
  ASSERT_TRUE(erased.ok());
  EXPECT_FALSE(*erased) << "an expired item is not there to erase";
}

TEST_P(StoreContractTest, NonPositiveTtlIsAnInvalidArgument) {
  EXPECT_EQ(store_->Put({"ns", "k"}, "v", 0).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Put({"ns", "k"}, "v", -1).code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(GetOne("ns", "k").has_value());
}

TEST_P(StoreContractTest, EraseSaysWhetherThereWasAnItem) {
  ASSERT_TRUE(store_->Put({"ns", "k"}, "v", 60).ok());
  Result<bool> first = store_->Erase({"ns", "k"});
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(*first);
  Result<bool> second = store_->Erase({"ns", "k"});
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(*second);
  EXPECT_FALSE(GetOne("ns", "k").has_value());
}

TEST_P(StoreContractTest, CountersStartAtInitialAndReadAsDecimalText) {
  std::vector<StoreKey> keys = {{"ns", "c1"}, {"ns", "c2"}};
  auto read = store_->AddToCounters(keys, 0, 1000);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_THAT(*read, ::testing::ElementsAre(1000u, 1000u));
  auto bumped = store_->AddToCounters({&keys[0], 1}, 1, 5);
  ASSERT_TRUE(bumped.ok());
  EXPECT_THAT(*bumped, ::testing::ElementsAre(1001u));
  EXPECT_EQ(*GetOne("ns", "c1")->bytes, "1001");
  EXPECT_EQ(GetOne("ns", "c1")->ttl_seconds, kNoExpiry);
  StoreKey fresh{"ns", "c3"};
  auto created = store_->AddToCounters({&fresh, 1}, 2, 7);
  ASSERT_TRUE(created.ok());
  EXPECT_THAT(*created, ::testing::ElementsAre(9u));
  // A counter outlives any TTL.
  Advance(0.5);
  EXPECT_EQ(*GetOne("ns", "c3")->bytes, "9");
}

TEST_P(StoreContractTest, ConcurrentIncrementsAreNeverLost) {
  StoreKey k{"ns", "epoch"};
  constexpr int kThreads = 4, kEach = 50;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        if (!store_->AddToCounters({&k, 1}, 1, 0).ok()) ++failures;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  auto v = store_->AddToCounters({&k, 1}, 0, 0);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ((*v)[0], static_cast<uint64_t>(kThreads * kEach));
}

TEST_P(StoreContractTest, CounterOnAValueIsAnInvalidArgument) {
  ASSERT_TRUE(store_->Put({"ns", "v"}, "text", 60).ok());
  StoreKey k{"ns", "v"};
  auto r = store_->AddToCounters({&k, 1}, 1, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(*GetOne("ns", "v")->bytes, "text");
}

TEST_P(StoreContractTest, MalformedNamespacesAndBatchesAreRejected) {
  EXPECT_EQ(store_->Put({"", "k"}, "v", 60).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Put({"Bad NS", "k"}, "v", 60).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(
      store_->Put({"ns", std::string(kMaxStoreKeyBytes + 1, 'k')}, "v", 60)
          .code(),
      StatusCode::kInvalidArgument);
  std::vector<StoreKey> many(kMaxStoreBatch + 1, StoreKey{"ns", "k"});
  auto r = store_->Get(many);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(EveryBackend, StoreContractTest,
                         ::testing::ValuesIn(AllBackends()),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return info.param.name;
                         });

// --- registry ---------------------------------------------------------------

TEST(StoreRegistryTest, EveryRowOpensAndBadSpecsSayWhy) {
  EXPECT_EQ(Stores().size(), 3u);
  auto unknown = OpenStore("mongo://x");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("sqlite:PATH"));
  auto param = OpenStore("memory?max_byte=1MiB");
  ASSERT_FALSE(param.ok());
  EXPECT_THAT(param.status().message(), HasSubstr("max_bytes"));
  auto port = OpenStore("redis://localhost:99999");
  ASSERT_FALSE(port.ok());
  EXPECT_THAT(port.status().message(), HasSubstr("port"));
  EXPECT_FALSE(OpenStore("sqlite:").ok());
  EXPECT_FALSE(OpenStore("memory?max_bytes=lots").ok());
  auto redis = OpenStore("redis://127.0.0.1:1/3?timeout_ms=20");
  ASSERT_TRUE(redis.ok()) << "opens while the server is down";
  EXPECT_EQ((*redis)->name(), "redis://127.0.0.1:1/3");
}

TEST(StoreRegistryTest, FaultsMapToTheirBypassReasons) {
  EXPECT_EQ(StoreFaultName(StoreFaultOf(Unavailable("x"))),
            "store_unavailable");
  EXPECT_EQ(StoreFaultName(StoreFaultOf(DeadlineExceeded("x"))),
            "store_timeout");
  EXPECT_EQ(StoreFaultName(StoreFaultOf(ResourceExhausted("x"))), "store_full");
  EXPECT_EQ(StoreFaultName(StoreFaultOf(DataLoss("x"))), "store_corrupt");
  EXPECT_EQ(StoreFaultName(StoreFaultOf(FailedPrecondition("x"))),
            "store_degraded");
  EXPECT_EQ(StoreFaultName(StoreFaultOf(Status::Ok())), "");
}

// --- memory -----------------------------------------------------------------

TEST(MemoryStoreTest, StaysWithinMaxBytesAndNeverEvictsCounters) {
  ManualClock clock(kStart);
  auto store = MustOpen("memory?max_bytes=10KB", &clock);
  StoreKey c{"ns", "counter"};
  ASSERT_TRUE(store->AddToCounters({&c, 1}, 1, 41).ok());
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(
        store->Put({"ns", "k" + std::to_string(i)}, std::string(1000, 'x'), 60)
            .ok());
  }
  StoreKey last{"ns", "k99"}, first{"ns", "k0"};
  EXPECT_TRUE((*store->Get({&last, 1}))[0].has_value());
  EXPECT_FALSE((*store->Get({&first, 1}))[0].has_value()) << "evicted";
  EXPECT_EQ(*(*store->Get({&c, 1}))[0]->bytes, "42");
  EXPECT_EQ(store->Put({"ns", "huge"}, std::string(20000, 'x'), 60).code(),
            StatusCode::kResourceExhausted);
}

// --- SQLite -----------------------------------------------------------------

TEST(SqliteStoreTest, ItemsSurviveClosingAndReopeningTheFile) {
  const std::string path = TempPath("reopen.db");
  ManualClock clock(kStart);
  {
    auto store = MustOpen("sqlite:" + path, &clock);
    ASSERT_TRUE(store->Put({"ns", "k"}, "kept", 3600).ok());
    StoreKey c{"ns", "epoch"};
    ASSERT_TRUE(store->AddToCounters({&c, 1}, 1, 10).ok());
  }
  clock.Advance(10);
  auto store = MustOpen("sqlite:" + path, &clock);
  StoreKey k{"ns", "k"}, c{"ns", "epoch"};
  auto v = store->Get(std::vector<StoreKey>{k, c});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*(*v)[0]->bytes, "kept");
  EXPECT_NEAR((*v)[0]->ttl_seconds, 3590, 1e-6) << "expiry persisted";
  EXPECT_EQ(*(*v)[1]->bytes, "11");
}

TEST(SqliteStoreTest, KillNineMidWriteLeavesAConsistentFile) {
  const std::string path = TempPath("kill9.db");
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    auto opened = OpenStore("sqlite:" + path);
    if (!opened.ok()) _exit(3);
    for (int i = 0;; ++i) {
      if (!(*opened)
               ->Put({"ns", "k" + std::to_string(i)},
                     std::string(2000, static_cast<char>('a' + i % 26)), 3600)
               .ok()) {
        _exit(4);
      }
      StoreKey c{"ns", "count"};
      if (!(*opened)->AddToCounters({&c, 1}, 1, 0).ok()) _exit(5);
      if (i == 200) (void)!write(ready[1], "r", 1);
    }
  }
  close(ready[1]);
  char b = 0;
  ASSERT_EQ(read(ready[0], &b, 1), 1);
  close(ready[0]);
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the writer died of something else";

  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "ok");
  sqlite3_finalize(st);
  sqlite3_close(db);

  auto store = MustOpen("sqlite:" + path, nullptr);
  StoreKey c{"ns", "count"};
  auto count = store->Get({&c, 1});
  ASSERT_TRUE(count.ok());
  ASSERT_TRUE((*count)[0].has_value());
  const uint64_t n = std::stoull(*(*count)[0]->bytes);
  EXPECT_GE(n, 201u);
  // Every write the counter says committed is there, whole.
  for (uint64_t i = 0; i < n; ++i) {
    const std::string name = "k" + std::to_string(i);
    StoreKey k{"ns", name};
    auto v = store->Get({&k, 1});
    ASSERT_TRUE(v.ok());
    ASSERT_TRUE((*v)[0].has_value()) << "k" << i;
    EXPECT_EQ(*(*v)[0]->bytes,
              std::string(2000, static_cast<char>('a' + i % 26)));
  }
}

TEST(SqliteStoreTest, FileStaysWithinMaxBytesKeepingNewestAndCounters) {
  const std::string path = TempPath("bounded.db");
  ManualClock clock(kStart);
  auto store = MustOpen("sqlite:" + path + "?max_bytes=256KiB", &clock);
  StoreKey c{"ns", "epoch"};
  ASSERT_TRUE(store->AddToCounters({&c, 1}, 1, 99).ok());
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(
        store->Put({"ns", "k" + std::to_string(i)}, std::string(1000, 'v'), 60)
            .ok())
        << i;
  }
  EXPECT_LE(std::filesystem::file_size(path), 256u * 1024);
  StoreKey newest{"ns", "k999"}, oldest{"ns", "k0"};
  EXPECT_TRUE((*store->Get({&newest, 1}))[0].has_value());
  EXPECT_FALSE((*store->Get({&oldest, 1}))[0].has_value());
  EXPECT_EQ(*(*store->Get({&c, 1}))[0]->bytes, "100");
  EXPECT_EQ(store->Put({"ns", "huge"}, std::string(200 * 1024, 'x'), 60).code(),
            StatusCode::kResourceExhausted);
}

// A counter bump that finds the file full evicts values instead of failing:
// a lost bump is a lost invalidation (other processes would keep serving
// results a write made stale). Found by fuzz/drills/store_drills.mjs.
TEST(SqliteStoreTest, CounterBumpsOnAFullFileEvictValuesInsteadOfFailing) {
  const std::string path = TempPath("full-counters.db");
  ManualClock clock(kStart);
  auto store = MustOpen("sqlite:" + path + "?max_bytes=256KiB", &clock);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(
        store->Put({"ns", "k" + std::to_string(i)}, std::string(1000, 'v'), 60)
            .ok())
        << i;
  }
  for (int i = 0; i < 2000; ++i) {
    const std::string name = "counter-" + std::to_string(i);  // outlives c
    StoreKey c{"ns", name};
    Result<std::vector<uint64_t>> r = store->AddToCounters({&c, 1}, 1, 41);
    ASSERT_TRUE(r.ok()) << i << ": " << r.status().ToString();
    EXPECT_EQ((*r)[0], 42u);
  }
  EXPECT_LE(std::filesystem::file_size(path), 256u * 1024);
  StoreKey first{"ns", "counter-0"};
  EXPECT_EQ(*(*store->Get({&first, 1}))[0]->bytes, "42");
}

// The counter's value as a number (0 when the read failed or is absent).
uint64_t CounterValue(Store& store, const StoreKey& k) {
  Result<std::vector<std::optional<StoreValue>>> got = store.Get({&k, 1});
  if (!got.ok() || !(*got)[0]) return 0;
  return std::stoull(*(*got)[0]->bytes);
}

// A counter bump that fails may be lost (fuzz/drills/store_drills.mjs: a
// full disk). No process sharing the file may then read the counter's old
// value (a tag built on it would validate results the write made stale):
// counters read as store_degraded until a heal moved every counter past
// its old value; values stay readable; it heals by itself. Here the bump
// fails because another connection holds the write lock (SQLITE_BUSY).
TEST(SqliteStoreTest, ALostBumpDegradesEveryProcessUntilItHealsByItself) {
  const std::string path = TempPath("lost-bump.db");
  const std::string spec = "sqlite:" + path + "?busy_timeout_ms=10";
  auto a = MustOpen(spec, nullptr);
  auto b = MustOpen(spec, nullptr);  // another process on the same file
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  StoreKey x{"ns", "x"}, value{"ns", "v"};
  ASSERT_EQ((*a->AddToCounters({&x, 1}, 0, 100))[0], 100u);
  ASSERT_TRUE(a->Put(value, "bytes", kNoExpiry).ok());
  ASSERT_EQ(CounterValue(*b, x), 100u);

  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr),
            SQLITE_OK);
  Result<std::vector<uint64_t>> bump = a->AddToCounters({&x, 1}, 1, 100);
  ASSERT_FALSE(bump.ok());
  EXPECT_EQ(StoreFaultName(StoreFaultOf(bump.status())), "store_timeout");
  auto c = MustOpen(spec, nullptr);  // a process started meanwhile
  ASSERT_NE(c, nullptr);
  for (Store* s : {a.get(), b.get(), c.get()}) {
    Result<std::vector<std::optional<StoreValue>>> got = s->Get({&x, 1});
    ASSERT_FALSE(got.ok()) << "read " << *(*got)[0]->bytes
                           << " although a bump of it was lost";
    EXPECT_EQ(StoreFaultName(StoreFaultOf(got.status())), "store_degraded");
    EXPECT_THAT(got.status().message(), HasSubstr("degraded"));
    StoreKey both[] = {value, x};  // one counter in a batch is enough
    EXPECT_FALSE(s->Get(both).ok());
    EXPECT_FALSE(s->AddToCounters({&x, 1}, 0, 100).ok());
    Result<std::vector<std::optional<StoreValue>>> v = s->Get({&value, 1});
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_EQ(*(*v)[0]->bytes, "bytes");
  }

  ASSERT_EQ(sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(other);
  // A read alone heals (a failed heal is retried after 25 ms): every
  // counter moved past its old value, the same for every process.
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const uint64_t healed = CounterValue(*b, x);
  EXPECT_GT(healed, 100u);
  EXPECT_EQ(CounterValue(*a, x), healed);
  EXPECT_EQ(CounterValue(*c, x), healed);
  ASSERT_EQ((*a->AddToCounters({&x, 1}, 1, 100))[0], healed + 1);
  EXPECT_EQ(CounterValue(*b, x), healed + 1);
}

// The same with a really full file (SQLITE_FULL; max_bytes sets
// max_page_count): a write's bump of `x` that also creates a counter finds
// no room, since counters are never evicted, and is lost as a whole.
TEST(SqliteStoreTest, ABumpLostToAFullFileIsNeverReadAsTheOldValue) {
  const std::string path = TempPath("lost-full.db");
  const std::string spec = "sqlite:" + path + "?max_bytes=64KiB";
  auto a = MustOpen(spec, nullptr);
  auto b = MustOpen(spec, nullptr);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  StoreKey x{"ns", "x"};
  ASSERT_EQ((*a->AddToCounters({&x, 1}, 0, 100))[0], 100u);
  ASSERT_EQ(CounterValue(*b, x), 100u);
  std::vector<std::string> names;
  for (int i = 0;; ++i) {
    names.push_back("fill-" + std::to_string(i));
    StoreKey k{"ns", names.back()};
    Result<std::vector<uint64_t>> r = a->AddToCounters({&k, 1}, 0, 1);
    if (!r.ok()) {
      ASSERT_EQ(StoreFaultName(StoreFaultOf(r.status())), "store_full");
      break;
    }
    ASSERT_LT(i, 100000) << "the file never filled";
  }
  StoreKey both[] = {x, {"ns", "new"}};
  Result<std::vector<uint64_t>> bump = a->AddToCounters(both, 1, 1);
  ASSERT_FALSE(bump.ok());
  EXPECT_EQ(StoreFaultName(StoreFaultOf(bump.status())), "store_full");
  for (Store* s : {b.get(), a.get()}) {
    Result<std::vector<std::optional<StoreValue>>> got = s->Get({&x, 1});
    if (got.ok()) {
      // Healed at once (adding 1 to each counter fits in place).
      EXPECT_GT(std::stoull(*(*got)[0]->bytes), 100u);
    } else {
      EXPECT_EQ(StoreFaultName(StoreFaultOf(got.status())), "store_degraded");
    }
  }
  // Room again: the write's bump gets through.
  for (size_t i = 0; i < names.size() / 2; ++i) {
    ASSERT_TRUE(a->Erase({"ns", names[i]}).ok());
  }
  bump = a->AddToCounters(both, 1, 1);
  ASSERT_TRUE(bump.ok()) << bump.status().ToString();
  EXPECT_GT((*bump)[0], 101u);
  EXPECT_EQ(CounterValue(*b, x), (*bump)[0]);
}

TEST(SqliteStoreTest, AFileThatIsNotADatabaseIsAClearError) {
  const std::string path = TempPath("garbage.db");
  {
    FILE* f = fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    const std::string junk(8192, 'J');
    fwrite(junk.data(), 1, junk.size(), f);
    fclose(f);
  }
  auto store = OpenStore("sqlite:" + path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(store.status().message(), HasSubstr(path));
  auto dir = OpenStore("sqlite:/nonexistent-dir/x.db");
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().code(), StatusCode::kUnavailable);
}

// --- Redis ------------------------------------------------------------------

TEST(RedisStoreTest, ADeadServerIsUnavailableAndTheStoreRecoversByItself) {
  RedisServer redis;
  ASSERT_TRUE(redis.Start()) << redis.error();
  auto store = MustOpen(redis.Spec("timeout_ms=200"), nullptr);
  ASSERT_TRUE(store->Put({"ns", "k"}, "v", 60).ok());
  redis.Kill();
  StoreKey k{"ns", "k"};
  auto down = store->Get({&k, 1});
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(StoreFaultOf(down.status()), StoreFault::kUnavailable);
  // The breaker fails the next call at once, without a connection attempt.
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(store->Get({&k, 1}).ok());
  EXPECT_LT(std::chrono::steady_clock::now() - t0,
            std::chrono::milliseconds(100));
  ASSERT_TRUE(redis.Restart()) << redis.error();
  bool back = false;
  for (int i = 0; i < 100 && !back; ++i) {
    back = store->Put({"ns", "k"}, "again", 60).ok();
    if (!back) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(back) << "the store did not reconnect";
  EXPECT_EQ(*(*store->Get({&k, 1}))[0]->bytes, "again");
}

TEST(RedisStoreTest, ASilentServerIsATimeout) {
  RedisServer redis;
  ASSERT_TRUE(redis.Start()) << redis.error();
  auto store = MustOpen(redis.Spec("timeout_ms=50"), nullptr);
  ASSERT_TRUE(store->Put({"ns", "k"}, "v", 60).ok());
  redis.Pause();
  StoreKey k{"ns", "k"};
  auto slow = store->Get({&k, 1});
  redis.Resume();
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(StoreFaultOf(slow.status()), StoreFault::kTimeout)
      << slow.status().ToString();
}

TEST(RedisStoreTest, OutOfMemoryIsStoreFull) {
  RedisServer redis;
  ASSERT_TRUE(redis.Start()) << redis.error();
  ASSERT_EQ(redis.Command({"CONFIG", "SET", "maxmemory", "2mb"}), "OK");
  ASSERT_EQ(redis.Command({"CONFIG", "SET", "maxmemory-policy", "noeviction"}),
            "OK");
  auto store = MustOpen(redis.Spec(), nullptr);
  Status last;
  for (int i = 0; i < 10 && last.ok(); ++i) {
    last = store->Put({"ns", "k" + std::to_string(i)},
                      std::string(1 << 20, 'x'), 60);
  }
  ASSERT_FALSE(last.ok());
  EXPECT_EQ(StoreFaultOf(last), StoreFault::kFull) << last.ToString();
}

TEST(RedisStoreTest, KeysCarryThePrefixAndNamespace) {
  RedisServer* redis = SharedRedis();
  auto store = MustOpen(redis->Spec("prefix=pfx"), nullptr);
  ASSERT_TRUE(store->Put({"conv", "abc"}, "state", 60).ok());
  EXPECT_EQ(redis->Command({"GET", "pfx:conv:abc"}), "state");
}

// --- fault injection -------------------------------------------------------

TEST(FaultInjectionStoreTest, InjectsEachFaultAndStopsWhenTold) {
  auto base = MustOpen("memory", nullptr);
  auto plan = std::make_shared<FaultPlan>();
  auto store = NewFaultInjectionStore(base.get(), plan);
  ASSERT_TRUE(store->Put({"ns", "k"}, "value", 60).ok());
  StoreKey k{"ns", "k"};
  plan->fail_with = StatusCode::kUnavailable;
  EXPECT_EQ(StoreFaultOf(store->Get({&k, 1}).status()),
            StoreFault::kUnavailable);
  plan->fail_with = StatusCode::kOk;
  plan->corrupt_values = true;
  EXPECT_NE(*(*store->Get({&k, 1}))[0]->bytes, "value");
  EXPECT_EQ(*(*base->Get({&k, 1}))[0]->bytes, "value") << "base untouched";
  plan->corrupt_values = false;
  plan->full = true;
  EXPECT_EQ(StoreFaultOf(store->Put({"ns", "k"}, "v", 60)), StoreFault::kFull);
  plan->full = false;
  EXPECT_EQ(*(*store->Get({&k, 1}))[0]->bytes, "value");
  EXPECT_EQ(plan->failed.load(), 2u);
}

}  // namespace
}  // namespace toolcache
