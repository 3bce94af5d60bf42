// The SQLite backend: one file, WAL journal, a small pool of connections.
//
// Schema (user_version 1):
//   kv(id INTEGER PRIMARY KEY, ns TEXT, k BLOB, v BLOB, expires REAL,
//      counter INTEGER, UNIQUE(ns, k))
// `id` grows with every write (INSERT OR REPLACE takes a new one), so the
// oldest write has the smallest id. `expires` is wall-clock Unix seconds
// (NULL: never); a counter row has counter = 1 and its value as decimal
// text.
//
// Invariants:
// - A connection is used by one thread at a time (taken from idle_ under
//   mu_, given back after the call); statements are prepared once per
//   connection.
// - Every multi-statement call runs in one transaction (BEGIN ... COMMIT, or
//   ROLLBACK on any error), so a reader sees counters and values of one
//   snapshot and a kill -9 leaves either all of a call's writes or none (WAL
//   + synchronous=NORMAL: committed transactions survive a process crash;
//   the last ones may roll back on power loss, see docs/STORE.md).
// - Counter rows are never deleted by eviction.
// - The main file never grows past max_bytes: every connection sets
//   PRAGMA max_page_count; an insert that hits it (SQLITE_FULL) evicts and
//   retries once. The WAL file is bounded by journal_size_limit.
// - Lost bumps are never silent (the bump guard, `<path>-guard`): a counter
//   bump (delta != 0) that fails for any reason may have been lost, so it
//   increments `lost` in one page of shared memory that every process
//   opening the file maps. While `lost` > `healed`, counter reads fail in
//   every process (FAILED_PRECONDITION, "store_degraded"), with the check
//   made before the read's snapshot. A heal takes the write lock, notes
//   `lost`, adds 1 to every counter, commits, then raises `healed` to what
//   it noted: no value a counter had before the heal is ever read again, and
//   a bump lost after the heal began keeps the store degraded. Updating the
//   page needs no disk space (it is written in full when created), so a
//   full disk cannot lose the signal.
// - A new guard starts degraded (lost 1, healed 0): it cannot know about
//   bumps lost before it existed; opening the store tries the first heal.
//
// Choice: opening the store (the first connection) retries a busy or
// locked database for up to kStartupWaitMs: several processes opening one
// new file at once is the documented way to share it, and switching it to
// WAL needs a lock the busy handler does not always wait for (issue 27.16:
// "PRAGMA journal_mode=WAL: database is locked" in 1 of 3 double starts).
// A pool connection opened later, during a call, waits busy_timeout_ms.
// Choice: eviction first drops expired rows, then the oldest writes, down
// to 80% of max_bytes, checked every 32 writes and on SQLITE_FULL: the
// cache's policy above decides admission; this only bounds the file.
// Choice: while degraded, every AddToCounters heals in its own transaction
// (it writes anyway); a Get tries a heal-only transaction, but not within
// 25 ms of a failed one in the same store object, so reads do not hammer a
// full disk, yet a process that only reads still recovers by itself.
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "src/store/backends.h"

namespace toolcache::store_internal {
namespace {

Status FromSqlite(int rc, sqlite3* db, std::string_view what) {
  const std::string msg =
      "sqlite " + std::string(what) + ": " +
      (db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  switch (rc & 0xff) {
    case SQLITE_FULL:
    case SQLITE_TOOBIG:
      return ResourceExhausted(msg);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return DataLoss(msg);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return DeadlineExceeded(msg);
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_NOLFS:
      return Unavailable(msg);
    default:
      return Internal(msg);
  }
}

// One prepared statement, reset on scope exit.
class Stmt {
 public:
  Stmt() = default;
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  int Prepare(sqlite3* db, const char* sql) {
    return sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s_,
                              nullptr);
  }
  sqlite3_stmt* get() const { return s_; }

 private:
  sqlite3_stmt* s_ = nullptr;
};

class Reset {
 public:
  explicit Reset(sqlite3_stmt* s) : s_(s) {}
  ~Reset() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }

 private:
  sqlite3_stmt* s_;
};

// The bump guard: two counters in one page of `<db>-guard`, mapped shared
// by every process (and every store object) that opens the database.
// `lost` counts counter bumps that failed; `healed` is the value of `lost`
// the last successful heal had seen. Both only grow, and healed <= lost.
class BumpGuard {
 public:
  static constexpr size_t kBytes = 4096;

  // Maps `db_path`-guard, creating it (degraded: lost 1, healed 0) when it
  // is absent or shorter than a page.
  static Result<std::unique_ptr<BumpGuard>> Open(const std::string& db_path) {
    const std::string path = db_path + "-guard";
    auto fail = [&](int fd, std::string_view what) -> Status {
      const int err = errno;
      const std::string msg = "sqlite store: " + std::string(what) + " " +
                              path + ": " + std::strerror(err);
      if (fd >= 0) close(fd);
      return err == ENOSPC ? ResourceExhausted(msg) : Unavailable(msg);
    };
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return fail(fd, "cannot open");
    // Two processes creating it at once: one writes the page, under the lock.
    if (flock(fd, LOCK_EX) != 0) return fail(fd, "cannot lock");
    struct stat st;
    if (fstat(fd, &st) != 0) return fail(fd, "cannot stat");
    if (st.st_size < static_cast<off_t>(kBytes)) {
      // Never mapped yet (only a whole page is): safe to write in full. The
      // write allocates the page, so updates never need disk space.
      std::string page(kBytes, '\0');
      std::memcpy(page.data(), kMagic, sizeof kMagic);
      const uint64_t lost = 1;
      std::memcpy(page.data() + kLostAt, &lost, sizeof lost);
      size_t done = 0;
      while (done < page.size()) {
        const ssize_t n = pwrite(fd, page.data() + done, page.size() - done,
                                 static_cast<off_t>(done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return fail(fd, "cannot write");
        done += static_cast<size_t>(n);
      }
    }
    void* map =
        mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) return fail(fd, "cannot map");
    (void)flock(fd, LOCK_UN);
    close(fd);
    auto guard = std::unique_ptr<BumpGuard>(new BumpGuard(map));
    if (std::memcmp(map, kMagic, sizeof kMagic) != 0) {
      return FailedPrecondition("sqlite store: " + path +
                                " is not a toolcache bump guard; move it away");
    }
    return guard;
  }

  ~BumpGuard() { munmap(page_, kBytes); }
  BumpGuard(const BumpGuard&) = delete;
  BumpGuard& operator=(const BumpGuard&) = delete;

  // The value of `lost` when some failed bump is not healed yet, else none.
  std::optional<uint64_t> Unhealed() const {
    const uint64_t healed = Word(kHealedAt).load();
    const uint64_t lost = Word(kLostAt).load();
    if (lost > healed) return lost;
    return std::nullopt;
  }
  void NoteLost() { Word(kLostAt).fetch_add(1); }
  // A heal that began when `lost` was `seen` committed.
  void NoteHealed(uint64_t seen) {
    std::atomic_ref<uint64_t> healed = Word(kHealedAt);
    uint64_t now = healed.load();
    while (now < seen && !healed.compare_exchange_weak(now, seen)) {
    }
  }

 private:
  static constexpr char kMagic[8] = {'T', 'C', 'B', 'G', 1, 0, 0, 0};
  static constexpr size_t kLostAt = 8;
  static constexpr size_t kHealedAt = 16;
  static_assert(std::atomic_ref<uint64_t>::is_always_lock_free,
                "the guard is shared between processes: needs lock-free "
                "64-bit atomics");

  explicit BumpGuard(void* page) : page_(static_cast<char*>(page)) {}
  std::atomic_ref<uint64_t> Word(size_t at) const {
    return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(page_ + at));
  }

  char* page_;  // kBytes, page-aligned, MAP_SHARED
};

Status Degraded(std::string_view path) {
  return FailedPrecondition(
      "sqlite store " + std::string(path) +
      " is degraded: a counter bump failed (here or in another process "
      "sharing the file) and may be lost, so counters are not read until a "
      "write gets through again (retried by itself)");
}

struct Conn {
  sqlite3* db = nullptr;
  Stmt begin_read, begin_write, commit, rollback, get, put, del, counter, heal,
      expire, evict, pages, freelist;
  uint32_t writes = 0;
  bool small_wal = false;  // checkpoints every kLowSpaceCheckpointPages
  uint64_t cap_pages = 0;  // the disk-full cap this connection applied
  ~Conn() { sqlite3_close_v2(db); }
};

// Longest wait for other processes' locks while the store opens.
constexpr int kStartupWaitMs = 10000;

bool IsBusy(int rc) {
  return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
}

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS kv("
    " id INTEGER PRIMARY KEY,"
    " ns TEXT NOT NULL,"
    " k BLOB NOT NULL,"
    " v BLOB NOT NULL,"
    " expires REAL,"
    " counter INTEGER NOT NULL DEFAULT 0,"
    " UNIQUE(ns, k));"
    "CREATE INDEX IF NOT EXISTS kv_expires ON kv(expires) WHERE counter = 0;"
    // A heal touches the counters alone, not the whole file.
    "CREATE INDEX IF NOT EXISTS kv_counters ON kv(counter) WHERE counter = 1;";

class SqliteStore final : public Store {
 public:
  SqliteStore(std::string name, SqliteOptions o)
      : name_(std::move(name)), o_(std::move(o)) {}

  // Opens the first connection (creating the schema); the error says why
  // the file cannot be used.
  Status Init() {
    Result<std::unique_ptr<Conn>> c = Open(kStartupWaitMs);
    if (!c.ok()) return c.status();
    idle_.push_back(std::move(*c));
    Result<std::unique_ptr<BumpGuard>> guard = BumpGuard::Open(o_.path);
    if (!guard.ok()) return guard.status();
    guard_ = std::move(*guard);
    // A new guard starts degraded: heal now, before any call (a failure
    // here is retried by the calls).
    (void)TryHeal();
    return Status::Ok();
  }

  std::string_view name() const override { return name_; }

  Result<std::vector<std::optional<StoreValue>>> Get(
      std::span<const StoreKey> keys) override {
    if (Status s = CheckBatch(keys.size()); !s.ok()) return s;
    for (const StoreKey& k : keys) {
      if (Status s = CheckKey(k); !s.ok()) return s;
    }
    const double now = NowSeconds(o_.clock);
    // Checked before the snapshot is taken: a counter read after a heal
    // began sees the heal (lost bumps stay invisible, see the top).
    const bool degraded = guard_->Unhealed() && !TryHeal();
    return WithConn<std::vector<std::optional<StoreValue>>>(
        [&](Conn& c) -> Result<std::vector<std::optional<StoreValue>>> {
          std::vector<std::optional<StoreValue>> out(keys.size());
          const bool txn = keys.size() > 1;
          if (txn) {
            if (Status s = Exec(c, c.begin_read, "begin"); !s.ok()) return s;
          }
          for (size_t i = 0; i < keys.size(); ++i) {
            sqlite3_stmt* st = c.get.get();
            Reset reset(st);
            Bind(st, keys[i]);
            const int rc = sqlite3_step(st);
            if (rc == SQLITE_DONE) continue;
            if (rc != SQLITE_ROW) {
              Status s = FromSqlite(rc, c.db, "get");
              if (txn) Rollback(c);
              return s;
            }
            const bool counter = sqlite3_column_int(st, 2) != 0;
            if (counter && degraded) {
              if (txn) Rollback(c);
              return Degraded(o_.path);
            }
            const bool has_expiry = sqlite3_column_type(st, 1) != SQLITE_NULL;
            const double expires =
                has_expiry ? sqlite3_column_double(st, 1) : kNoExpiry;
            if (!counter && expires <= now) continue;
            const void* blob = sqlite3_column_blob(st, 0);
            const int n = sqlite3_column_bytes(st, 0);
            out[i] = StoreValue{
                std::make_shared<const std::string>(
                    static_cast<const char*>(blob), static_cast<size_t>(n)),
                counter ? kNoExpiry : expires - now};
          }
          if (txn) {
            if (Status s = Exec(c, c.commit, "commit"); !s.ok()) return s;
          }
          return out;
        });
  }

  Status Put(const StoreKey& key, std::string_view value,
             double ttl_seconds) override {
    if (Status s = CheckKey(key); !s.ok()) return s;
    if (Status s = CheckTtl(ttl_seconds); !s.ok()) return s;
    if (value.size() + key.key.size() > o_.max_bytes / 2) {
      return ResourceExhausted(
          "sqlite store: a value of " + std::to_string(value.size()) +
          " bytes exceeds half of max_bytes=" + std::to_string(o_.max_bytes));
    }
    const double expires = ttl_seconds == kNoExpiry
                               ? kNoExpiry
                               : NowSeconds(o_.clock) + ttl_seconds;
    Result<bool> r = WithConn<bool>([&](Conn& c) -> Result<bool> {
      for (int attempt = 0;; ++attempt) {
        int rc;
        {
          sqlite3_stmt* st = c.put.get();
          Reset reset(st);
          Bind(st, key);
          sqlite3_bind_blob64(st, 3, value.data(), value.size(), SQLITE_STATIC);
          if (expires == kNoExpiry) {
            sqlite3_bind_null(st, 4);
          } else {
            sqlite3_bind_double(st, 4, expires);
          }
          rc = sqlite3_step(st);
        }
        if (rc == SQLITE_DONE) break;
        if ((rc & 0xff) == SQLITE_FULL) checkpoint_due_.store(true);
        if ((rc & 0xff) != SQLITE_FULL || attempt > 0) {
          return FromSqlite(rc, c.db, "put");
        }
        MakeRoom(c);
      }
      AfterWrite(c);
      if (++c.writes % 32 == 0) {
        RaiseCap(c);
        if (Status s = Evict(c, /*forced=*/false); !s.ok()) return s;
      }
      return true;
    });
    return r.ok() ? Status::Ok() : r.status();
  }

  Result<bool> Erase(const StoreKey& key) override {
    if (Status s = CheckKey(key); !s.ok()) return s;
    return WithConn<bool>([&](Conn& c) -> Result<bool> {
      sqlite3_stmt* st = c.del.get();
      Reset reset(st);
      Bind(st, key);
      sqlite3_bind_double(st, 3, NowSeconds(o_.clock));
      int rc = sqlite3_step(st);
      if (rc == SQLITE_DONE) return false;
      if (rc != SQLITE_ROW) return FromSqlite(rc, c.db, "erase");
      const bool live = sqlite3_column_int(st, 0) != 0;  // not expired
      rc = sqlite3_step(st);
      if (rc != SQLITE_DONE) return FromSqlite(rc, c.db, "erase");
      return live;
    });
  }

  Result<std::vector<uint64_t>> AddToCounters(std::span<const StoreKey> keys,
                                              uint64_t delta,
                                              uint64_t initial) override {
    if (Status s = CheckBatch(keys.size()); !s.ok()) return s;
    for (const StoreKey& k : keys) {
      if (Status s = CheckKey(k); !s.ok()) return s;
    }
    if (keys.empty()) return std::vector<uint64_t>{};
    const std::string first = std::to_string(initial + delta);
    // While degraded, this call's transaction heals first (it writes anyway).
    Result<std::vector<uint64_t>> r = WithConn<std::vector<uint64_t>>(
        [&](Conn& c) -> Result<std::vector<uint64_t>> {
          return BumpCountersEvicting(c, keys, delta, first);
        });
    // A failed bump may be a lost invalidation: other processes would keep
    // serving what the write made stale (fuzz/drills/store_drills.mjs).
    if (!r.ok() && delta != 0) guard_->NoteLost();
    return r;
  }

 private:
  // A bump (or heal) that finds the file full evicts values and retries
  // once, as a Put does.
  Result<std::vector<uint64_t>> BumpCountersEvicting(
      Conn& c, std::span<const StoreKey> keys, uint64_t delta,
      const std::string& first) {
    Result<std::vector<uint64_t>> r = BumpCounters(c, keys, delta, first);
    if (r.ok() || r.status().code() != StatusCode::kResourceExhausted) {
      return r;
    }
    MakeRoom(c);
    r = BumpCounters(c, keys, delta, first);
    if (!r.ok() && r.status().code() == StatusCode::kResourceExhausted) {
      checkpoint_due_.store(true);
    }
    return r;
  }

  // After SQLITE_FULL: a checkpoint first (it lets the next write restart
  // the WAL in the space the WAL already has, where a full disk would
  // refuse it more), then eviction (values out of the main file).
  void MakeRoom(Conn& c) {
    checkpoint_due_.store(true);
    low_space_.store(true);
    UseSmallWal(c);
    CapAtDiskFull(c);
    AfterWrite(c);
    (void)Evict(c, /*forced=*/true);
  }

  // The bound on the file's pages: max_bytes, or less once the disk filled.
  uint64_t MaxPages() const {
    const uint64_t from_bytes =
        std::max<uint64_t>(16, o_.max_bytes / page_size_.load());
    const uint64_t cap = cap_pages_.load();
    return cap == 0 ? from_bytes : std::min(from_bytes, cap);
  }

  // Choice: SQLITE_FULL well below max_bytes means the disk is full; the
  // file then stops growing at the size it has and eviction makes room
  // inside it. A file that grew straight back into space freed later would
  // fill the disk again, and a commit whose checkpoint must extend the
  // file fails on a full disk until someone else frees space
  // (fuzz/drills/store_drills.mjs). RaiseCap lets it grow again slowly.
  void CapAtDiskFull(Conn& c) {
    Result<int64_t> pages = Pragma(c, c.pages);
    if (!pages.ok()) return;
    const uint64_t now = std::max<int64_t>(16, *pages);
    if (now >= MaxPages() / 10 * 9) return;  // max_bytes is the bound
    uint64_t cap = cap_pages_.load();
    while ((cap == 0 || now < cap) &&
           !cap_pages_.compare_exchange_weak(cap, now)) {
    }
    ApplyCap(c);
  }

  // Checked every 32 writes while capped: the cap grows by half of the
  // disk's free space beyond the cap's own size (that much stays free for
  // the WAL, checkpoints and everyone else, so the file settles before the
  // disk fills again); once it reaches max_bytes the cap is gone.
  void RaiseCap(Conn& c) {
    uint64_t cap = cap_pages_.load();
    if (cap == 0) return;
    struct statvfs fs;
    if (statvfs(o_.path.c_str(), &fs) != 0) return;
    const uint64_t free_pages =
        static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize / page_size_.load();
    const uint64_t from_bytes =
        std::max<uint64_t>(16, o_.max_bytes / page_size_.load());
    if (free_pages <= cap) return;
    uint64_t want = cap + (free_pages - cap) / 2;
    if (want >= from_bytes) want = 0;
    while (cap != 0 && (want == 0 || want > cap) &&
           !cap_pages_.compare_exchange_weak(cap, want)) {
    }
    ApplyCap(c);
  }

  // Sets this connection's max_page_count to MaxPages() when the disk-full
  // cap changed since it last did.
  void ApplyCap(Conn& c) {
    const uint64_t cap = cap_pages_.load();
    if (c.cap_pages == cap) return;
    const std::string sql =
        "PRAGMA max_page_count=" + std::to_string(MaxPages());
    if (sqlite3_exec(c.db, sql.c_str(), nullptr, nullptr, nullptr) ==
        SQLITE_OK) {
      c.cap_pages = cap;
    }
  }

  // Choice: once a store object met SQLITE_FULL, its connections checkpoint
  // every 16 pages instead of 1000, for good: a WAL that holds most of the
  // database cannot be checkpointed without the space it took, and a disk
  // that filled once may fill again.
  static constexpr int kLowSpaceCheckpointPages = 16;
  void UseSmallWal(Conn& c) {
    if (c.small_wal || !low_space_.load()) return;
    sqlite3_wal_autocheckpoint(c.db, kLowSpaceCheckpointPages);
    c.small_wal = true;
  }

  // Called after every write that got through. Until a checkpoint after a
  // SQLITE_FULL completes, each tries one (PASSIVE: it never waits), so
  // space that comes back goes first to moving the WAL into the main file,
  // before new writes grow the WAL into it and fill the disk again.
  void AfterWrite(Conn& c) {
    if (!checkpoint_due_.load()) return;
    int log = -1;
    int done = -1;
    const int rc = sqlite3_wal_checkpoint_v2(
        c.db, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log, &done);
    if (rc == SQLITE_OK && log == done) checkpoint_due_.store(false);
  }

  // One transaction: adds `delta` to each of `keys`; first, when the store
  // is degraded, adds 1 to every counter (a heal). `lost` is read once the
  // write lock is held, so concurrent heals rarely repeat each other.
  Result<std::vector<uint64_t>> BumpCounters(Conn& c,
                                             std::span<const StoreKey> keys,
                                             uint64_t delta,
                                             const std::string& first) {
    if (Status s = Exec(c, c.begin_write, "begin"); !s.ok()) return s;
    const std::optional<uint64_t> lost = guard_->Unhealed();
    if (lost) {
      if (Status s = Exec(c, c.heal, "heal"); !s.ok()) {
        Rollback(c);
        return s;
      }
    }
    std::vector<uint64_t> out;
    out.reserve(keys.size());
    for (const StoreKey& k : keys) {
      sqlite3_stmt* st = c.counter.get();
      Reset reset(st);
      Bind(st, k);
      sqlite3_bind_text(st, 3, first.data(), static_cast<int>(first.size()),
                        SQLITE_STATIC);
      sqlite3_bind_int64(st, 4, static_cast<sqlite3_int64>(delta));
      int rc = sqlite3_step(st);
      if (rc == SQLITE_DONE) {
        Rollback(c);
        return InvalidArgument(
            "sqlite store: key holds a value, not a counter");
      }
      if (rc != SQLITE_ROW) {
        Status s = FromSqlite(rc, c.db, "counter");
        Rollback(c);
        return s;
      }
      out.push_back(static_cast<uint64_t>(sqlite3_column_int64(st, 0)));
      rc = sqlite3_step(st);  // finishes the RETURNING statement
      if (rc != SQLITE_DONE) {
        Status s = FromSqlite(rc, c.db, "counter");
        Rollback(c);
        return s;
      }
    }
    if (Status s = Exec(c, c.commit, "commit"); !s.ok()) {
      Rollback(c);
      return s;
    }
    if (lost) guard_->NoteHealed(*lost);
    AfterWrite(c);
    return out;
  }

  // Called by a Get that found the store degraded: tries a heal-only
  // transaction unless one failed less than 25 ms ago or runs now in this
  // object. Returns whether the store is healthy afterwards.
  bool TryHeal() {
    const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
    if (now < next_heal_ns_.load()) return false;
    if (healing_.exchange(true)) return false;
    if (guard_->Unhealed()) {
      Result<std::vector<uint64_t>> r = WithConn<std::vector<uint64_t>>(
          [&](Conn& c) -> Result<std::vector<uint64_t>> {
            return BumpCountersEvicting(c, {}, 0, "");
          });
      if (!r.ok()) next_heal_ns_.store(now + 25'000'000);
    }
    healing_.store(false);
    return !guard_->Unhealed();
  }

  static void Bind(sqlite3_stmt* st, const StoreKey& k) {
    sqlite3_bind_text(st, 1, k.ns.data(), static_cast<int>(k.ns.size()),
                      SQLITE_STATIC);
    sqlite3_bind_blob(st, 2, k.key.data(), static_cast<int>(k.key.size()),
                      SQLITE_STATIC);
  }

  static Status Exec(Conn& c, const Stmt& s, std::string_view what) {
    Reset reset(s.get());
    const int rc = sqlite3_step(s.get());
    if (rc == SQLITE_DONE || rc == SQLITE_ROW) return Status::Ok();
    return FromSqlite(rc, c.db, what);
  }
  static void Rollback(Conn& c) {
    if (!sqlite3_get_autocommit(c.db)) (void)Exec(c, c.rollback, "rollback");
  }

  Result<int64_t> Pragma(Conn& c, const Stmt& s) {
    Reset reset(s.get());
    const int rc = sqlite3_step(s.get());
    if (rc != SQLITE_ROW) return FromSqlite(rc, c.db, "pragma");
    return static_cast<int64_t>(sqlite3_column_int64(s.get(), 0));
  }

  Result<uint64_t> UsedBytes(Conn& c) {
    Result<int64_t> pages = Pragma(c, c.pages);
    if (!pages.ok()) return pages.status();
    Result<int64_t> free_pages = Pragma(c, c.freelist);
    if (!free_pages.ok()) return free_pages.status();
    return static_cast<uint64_t>(*pages - *free_pages) * page_size_.load();
  }

  // Drops expired rows, then the oldest writes, until the file's live pages
  // are at most 80% of max_bytes. `forced`: a write met SQLITE_FULL, from
  // max_page_count or from a full disk; then the bound is also 80% of what
  // is in use now, so a store on a full disk frees pages inside its file
  // and goes on working at the size it reached (deleted pages are reused,
  // the file does not shrink), instead of failing every write until
  // entries expire (fuzz/drills/store_drills.mjs).
  Status Evict(Conn& c, bool forced) {
    Result<uint64_t> used = UsedBytes(c);
    if (!used.ok()) return used.status();
    const uint64_t max_bytes = MaxPages() * page_size_.load();
    const uint64_t high = max_bytes / 10 * 9;
    const uint64_t low =
        forced ? std::min(max_bytes, *used) / 10 * 8 : max_bytes / 10 * 8;
    if (!forced && *used <= high) return Status::Ok();
    {
      sqlite3_stmt* st = c.expire.get();
      Reset reset(st);
      sqlite3_bind_double(st, 1, NowSeconds(o_.clock));
      const int rc = sqlite3_step(st);
      if (rc != SQLITE_DONE) return FromSqlite(rc, c.db, "expire");
    }
    for (int round = 0; round < 64; ++round) {
      used = UsedBytes(c);
      if (!used.ok()) return used.status();
      if (*used <= low) break;
      sqlite3_stmt* st = c.evict.get();
      Reset reset(st);
      // Choice: small steps when forced, so a full disk costs the oldest
      // few entries, not all of a small store.
      sqlite3_bind_int(st, 1, forced ? 8 : 64);
      const int rc = sqlite3_step(st);
      if (rc != SQLITE_DONE) return FromSqlite(rc, c.db, "evict");
      if (sqlite3_changes(c.db) == 0) break;  // only counters are left
    }
    return Status::Ok();
  }

  // A new connection, configured. A busy or locked database is retried
  // for up to `wait_ms` (at least the busy timeout) before failing.
  Result<std::unique_ptr<Conn>> Open(int wait_ms = 0) {
    auto c = std::make_unique<Conn>();
    int rc = sqlite3_open_v2(
        o_.path.c_str(), &c->db,
        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
        nullptr);
    if (rc != SQLITE_OK) return FromSqlite(rc, c->db, "open " + o_.path);
    // Before any statement: every one below may meet another's lock.
    sqlite3_busy_timeout(c->db, o_.busy_timeout_ms);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
    // True (after a short sleep) while a busy `rc` may still be retried.
    auto again = [&](int r, int* round) {
      if (!IsBusy(r) || std::chrono::steady_clock::now() >= deadline) {
        return false;
      }
      const int ms = std::min(50, 2 << std::min(*round, 4));
      ++*round;
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      return true;
    };
    auto exec = [&](const std::string& sql) -> Status {
      int r = SQLITE_OK;
      for (int round = 0;;) {
        char* err = nullptr;
        r = sqlite3_exec(c->db, sql.c_str(), nullptr, nullptr, &err);
        sqlite3_free(err);
        if (!again(r, &round)) break;
      }
      return r == SQLITE_OK ? Status::Ok()
                            : FromSqlite(r, c->db, o_.path + ": " + sql);
    };
    // One row of a PRAGMA that reads a number.
    auto read_int = [&](const char* sql, int64_t* out) -> Status {
      for (int round = 0;;) {
        Stmt st;
        int r = st.Prepare(c->db, sql);
        if (r == SQLITE_OK) r = sqlite3_step(st.get());
        if (r == SQLITE_ROW) {
          *out = sqlite3_column_int64(st.get(), 0);
          return Status::Ok();
        }
        if (!again(r, &round)) return FromSqlite(r, c->db, sql);
      }
    };
    for (const char* pragma :
         {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL",
          "PRAGMA journal_size_limit=8388608"}) {
      if (Status s = exec(pragma); !s.ok()) return s;
    }
    if (Status s = exec(kSchema); !s.ok()) return s;
    int64_t version = 0;
    if (Status s = read_int("PRAGMA user_version", &version); !s.ok()) {
      return s;
    }
    if (version > 1) {
      return FailedPrecondition(
          "sqlite store " + o_.path + ": schema version " +
          std::to_string(version) +
          " was written by a newer toolcache; use another file");
    }
    // Written once: opening a connection must not need the write lock or
    // disk space (a pool connection may be opened in the middle of a call).
    if (version == 0) {
      if (Status s = exec("PRAGMA user_version=1"); !s.ok()) return s;
    }
    {
      int64_t page_size = 0;
      if (Status s = read_int("PRAGMA page_size", &page_size); !s.ok()) {
        return s;
      }
      page_size_.store(static_cast<uint64_t>(page_size));
    }
    if (Status s = exec("PRAGMA max_page_count=" +
                        std::to_string(std::max<uint64_t>(
                            16, o_.max_bytes / page_size_.load())));
        !s.ok()) {
      return s;
    }
    struct {
      Stmt* stmt;
      const char* sql;
    } const stmts[] = {
        {&c->begin_read, "BEGIN"},
        {&c->begin_write, "BEGIN IMMEDIATE"},
        {&c->commit, "COMMIT"},
        {&c->rollback, "ROLLBACK"},
        {&c->get,
         "SELECT v, expires, counter FROM kv WHERE ns = ?1 AND k = ?2"},
        {&c->put,
         "INSERT OR REPLACE INTO kv(ns, k, v, expires, counter) "
         "VALUES(?1, ?2, ?3, ?4, 0)"},
        {&c->del,
         "DELETE FROM kv WHERE ns = ?1 AND k = ?2 RETURNING counter = 1 OR "
         "expires IS NULL OR expires > ?3"},
        {&c->counter,
         "INSERT INTO kv(ns, k, v, expires, counter) VALUES(?1, ?2, ?3, NULL, "
         "1) ON CONFLICT(ns, k) DO UPDATE SET v = CAST(CAST(v AS INTEGER) + "
         "?4 AS TEXT) WHERE counter = 1 RETURNING CAST(v AS INTEGER)"},
        {&c->heal,
         "UPDATE kv SET v = CAST(CAST(v AS INTEGER) + 1 AS TEXT) WHERE "
         "counter = 1"},
        {&c->expire, "DELETE FROM kv WHERE counter = 0 AND expires <= ?1"},
        {&c->evict,
         "DELETE FROM kv WHERE id IN (SELECT id FROM kv WHERE counter = 0 "
         "ORDER BY id LIMIT ?1)"},
        {&c->pages, "PRAGMA page_count"},
        {&c->freelist, "PRAGMA freelist_count"},
    };
    for (const auto& s : stmts) {
      rc = s.stmt->Prepare(c->db, s.sql);
      if (rc != SQLITE_OK) return FromSqlite(rc, c->db, s.sql);
    }
    return c;
  }

  // Runs `fn` on an idle connection (opening one if none is idle). A
  // connection whose call failed with an I/O or corruption error is closed,
  // not reused.
  template <typename T, typename Fn>
  Result<T> WithConn(Fn&& fn) {
    std::unique_ptr<Conn> c;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        c = std::move(idle_.back());
        idle_.pop_back();
      }
    }
    if (c == nullptr) {
      Result<std::unique_ptr<Conn>> opened = Open();
      if (!opened.ok()) return opened.status();
      c = std::move(*opened);
    }
    UseSmallWal(*c);
    ApplyCap(*c);
    Result<T> r = fn(*c);
    const bool reuse =
        r.ok() || (r.status().code() != StatusCode::kUnavailable &&
                   r.status().code() != StatusCode::kDataLoss);
    if (reuse) {
      std::lock_guard<std::mutex> lock(mu_);
      // Choice: keep at most 4 idle connections (WAL readers run in
      // parallel; writers serialize on the file lock anyway).
      if (idle_.size() < 4) idle_.push_back(std::move(c));
    }
    return r;
  }

  const std::string name_;
  const SqliteOptions o_;
  // Set by every Open (the same value for the file).
  std::atomic<uint64_t> page_size_{4096};
  std::unique_ptr<BumpGuard> guard_;  // set by Init
  std::atomic<bool> healing_{false};  // a Get's heal runs in this object
  // A write met SQLITE_FULL and no checkpoint completed since (AfterWrite).
  std::atomic<bool> checkpoint_due_{false};
  std::atomic<bool> low_space_{false};  // a write met SQLITE_FULL once
  // Pages the file may have since the disk filled (0: none; CapAtDiskFull).
  std::atomic<uint64_t> cap_pages_{0};
  std::atomic<int64_t> next_heal_ns_{0};  // steady clock
  std::mutex mu_;
  std::vector<std::unique_ptr<Conn>> idle_;  // GUARDED_BY(mu_)
};

}  // namespace

Result<std::unique_ptr<Store>> NewSqliteStore(std::string name,
                                              SqliteOptions o) {
  auto store = std::make_unique<SqliteStore>(std::move(name), std::move(o));
  if (Status s = store->Init(); !s.ok()) return s;
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace toolcache::store_internal
