// Internal to src/store: the backend factories OpenStore's registry calls,
// and the checks every backend shares.
#ifndef TOOLCACHE_SRC_STORE_BACKENDS_H_
#define TOOLCACHE_SRC_STORE_BACKENDS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "toolcache/store.h"

namespace toolcache::store_internal {

// INVALID_ARGUMENT unless `key` has a valid namespace and key size.
Status CheckKey(const StoreKey& key);
// INVALID_ARGUMENT unless 0 < n <= kMaxStoreBatch... (0 is allowed: empty).
Status CheckBatch(size_t n);
// INVALID_ARGUMENT unless ttl > 0 (kNoExpiry allowed).
Status CheckTtl(double ttl_seconds);
// `clock`'s time, or the system's wall clock (Unix seconds) when null.
double NowSeconds(const Clock* clock);

struct MemoryOptions {
  uint64_t max_bytes = uint64_t{256} << 20;
  const Clock* clock = nullptr;
};
std::unique_ptr<Store> NewMemoryStore(std::string name, MemoryOptions o);

struct SqliteOptions {
  std::string path;
  uint64_t max_bytes = uint64_t{1} << 30;
  int busy_timeout_ms = 100;
  const Clock* clock = nullptr;
};
Result<std::unique_ptr<Store>> NewSqliteStore(std::string name,
                                              SqliteOptions o);

struct RedisOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  int db = 0;
  std::string password;
  std::string prefix = "toolcache";
  int timeout_ms = 100;
  int pool = 4;
};
std::unique_ptr<Store> NewRedisStore(std::string name, RedisOptions o);

}  // namespace toolcache::store_internal

#endif  // TOOLCACHE_SRC_STORE_BACKENDS_H_
