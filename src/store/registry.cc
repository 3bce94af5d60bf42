// The store registry (one table, Stores()), spec parsing, and the checks
// and fault names every backend shares.
//
// Invariants:
// - Every scheme OpenStore accepts has one row in kStores and one branch in
//   OpenStore; each parameter a spec may carry is listed in its row, and an
//   unknown one is an error naming the known ones.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "src/config/size.h"
#include "src/store/backends.h"
#include "toolcache/store.h"

namespace toolcache {
namespace {

constexpr StoreInfo kStores[] = {
    {"memory", "memory[?max_bytes=N]", "max_bytes=256MiB",
     "in this process; lost when it exits (the default)"},
    {"sqlite", "sqlite:PATH[?max_bytes=N&busy_timeout_ms=N]",
     "max_bytes=1GiB busy_timeout_ms=100",
     "one file (WAL): survives restarts and kill -9; shared by the "
     "processes of one machine"},
    {"redis",
     "redis://[:PASSWORD@]HOST[:PORT][/DB][?timeout_ms=N&prefix=P&pool=N]",
     "timeout_ms=100 prefix=toolcache pool=4",
     "a redis-server shared by processes on several machines"},
};

using Params = std::map<std::string, std::string, std::less<>>;

// Splits "a=1&b=2"; INVALID_ARGUMENT on a malformed or repeated pair, or a
// name not in `known`.
Result<Params> ParseParams(std::string_view spec, std::string_view query,
                           std::string_view known) {
  Params out;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view()
                                          : query.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return InvalidArgument("store '" + std::string(spec) + "': parameter '" +
                             std::string(pair) + "' must be name=value");
    }
    std::string name(pair.substr(0, eq));
    bool listed = false;
    for (std::string_view k = known; !k.empty();) {
      const size_t sp = k.find(' ');
      std::string_view item = k.substr(0, sp);
      k = sp == std::string_view::npos ? std::string_view() : k.substr(sp + 1);
      if (item.substr(0, item.find('=')) == name) listed = true;
    }
    if (!listed) {
      return InvalidArgument(
          "store '" + std::string(spec) + "': unknown parameter '" + name +
          "' (known, with defaults: " + std::string(known) + ")");
    }
    if (!out.emplace(name, std::string(pair.substr(eq + 1))).second) {
      return InvalidArgument("store '" + std::string(spec) + "': parameter '" +
                             name + "' given twice");
    }
  }
  return out;
}

// A size in the one grammar of src/config/size.h, at least one byte.
Result<uint64_t> ParseBytes(std::string_view spec, std::string_view name,
                            const std::string& text) {
  Result<uint64_t> bytes = config::ParseSize(text);
  if (!bytes.ok() || *bytes < 1) {
    return InvalidArgument(
        "store '" + std::string(spec) + "': " + std::string(name) + " " +
        (bytes.ok() ? "must be at least 1 byte, got '" + text + "'"
                    : std::string(bytes.status().message())));
  }
  return *bytes;
}

Result<int> ParseInt(std::string_view spec, std::string_view name,
                     const std::string& text, int lo, int hi) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || v < lo || v > hi) {
    return InvalidArgument("store '" + std::string(spec) +
                           "': " + std::string(name) +
                           " must be a whole number in [" + std::to_string(lo) +
                           ", " + std::to_string(hi) + "], got '" + text + "'");
  }
  return static_cast<int>(v);
}

Result<std::unique_ptr<Store>> OpenRedis(std::string_view spec,
                                         std::string_view rest,
                                         const Params& params) {
  store_internal::RedisOptions o;
  if (const size_t at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view auth = rest.substr(0, at);
    rest = rest.substr(at + 1);
    // redis://:password@host or redis://user:password@host (user ignored:
    // Redis 6 ACL users need AUTH user pass; see docs/STORE.md).
    const size_t colon = auth.find(':');
    o.password = std::string(
        colon == std::string_view::npos ? auth : auth.substr(colon + 1));
  }
  std::string_view hostport = rest.substr(0, rest.find('/'));
  if (const size_t slash = rest.find('/'); slash != std::string_view::npos) {
    std::string_view db = rest.substr(slash + 1);
    if (!db.empty()) {
      Result<int> n =
          ParseInt(spec, "the database number", std::string(db), 0, 65535);
      if (!n.ok()) return n.status();
      o.db = *n;
    }
  }
  if (const size_t colon = hostport.rfind(':');
      colon != std::string_view::npos) {
    Result<int> port = ParseInt(
        spec, "the port", std::string(hostport.substr(colon + 1)), 1, 65535);
    if (!port.ok()) return port.status();
    o.port = *port;
    hostport = hostport.substr(0, colon);
  }
  if (hostport.empty()) {
    return InvalidArgument("store '" + std::string(spec) +
                           "': no host (redis://HOST:PORT[/DB])");
  }
  o.host = std::string(hostport);
  if (auto it = params.find("timeout_ms"); it != params.end()) {
    Result<int> n = ParseInt(spec, "timeout_ms", it->second, 1, 60000);
    if (!n.ok()) return n.status();
    o.timeout_ms = *n;
  }
  if (auto it = params.find("pool"); it != params.end()) {
    Result<int> n = ParseInt(spec, "pool", it->second, 1, 1024);
    if (!n.ok()) return n.status();
    o.pool = *n;
  }
  if (auto it = params.find("prefix"); it != params.end()) {
    if (it->second.empty()) {
      return InvalidArgument("store '" + std::string(spec) +
                             "': prefix must not be empty");
    }
    o.prefix = it->second;
  }
  std::string name = "redis://" + o.host + ":" + std::to_string(o.port) + "/" +
                     std::to_string(o.db);
  const double backoff = o.timeout_ms / 1000.0;
  return NewCircuitBreakerStore(
      store_internal::NewRedisStore(std::move(name), std::move(o)),
      {.initial_backoff_seconds = std::max(0.05, backoff),
       .max_backoff_seconds = 2.0});
}

}  // namespace

namespace store_internal {

Status CheckKey(const StoreKey& key) {
  if (key.ns.empty() || key.ns.size() > 64) {
    return InvalidArgument("store namespace must be 1-64 characters");
  }
  for (char c : key.ns) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) {
      return InvalidArgument("store namespace '" + std::string(key.ns) +
                             "' may hold only [a-z0-9_.-]");
    }
  }
  if (key.key.size() > kMaxStoreKeyBytes) {
    return InvalidArgument("store key longer than " +
                           std::to_string(kMaxStoreKeyBytes) + " bytes");
  }
  return Status::Ok();
}

Status CheckBatch(size_t n) {
  if (n > kMaxStoreBatch) {
    return InvalidArgument("store batch of " + std::to_string(n) +
                           " keys exceeds " + std::to_string(kMaxStoreBatch));
  }
  return Status::Ok();
}

Status CheckTtl(double ttl_seconds) {
  if (!(ttl_seconds > 0)) {
    return InvalidArgument("store TTL must be > 0 seconds (or no expiry)");
  }
  return Status::Ok();
}

double NowSeconds(const Clock* clock) {
  if (clock != nullptr) return clock->NowSeconds();
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace store_internal

StoreFault StoreFaultOf(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return StoreFault::kNone;
    case StatusCode::kUnavailable:
      return StoreFault::kUnavailable;
    case StatusCode::kDeadlineExceeded:
      return StoreFault::kTimeout;
    case StatusCode::kResourceExhausted:
      return StoreFault::kFull;
    case StatusCode::kDataLoss:
      return StoreFault::kCorrupt;
    case StatusCode::kFailedPrecondition:
      return StoreFault::kDegraded;
    default:
      return StoreFault::kError;
  }
}

std::string_view StoreFaultName(StoreFault fault) {
  switch (fault) {
    case StoreFault::kNone:
      return "";
    case StoreFault::kUnavailable:
      return "store_unavailable";
    case StoreFault::kTimeout:
      return "store_timeout";
    case StoreFault::kFull:
      return "store_full";
    case StoreFault::kCorrupt:
      return "store_corrupt";
    case StoreFault::kDegraded:
      return "store_degraded";
    case StoreFault::kError:
      return "store_error";
  }
  return "store_error";
}

std::span<const StoreInfo> Stores() { return kStores; }

Result<std::unique_ptr<Store>> OpenStore(std::string_view spec,
                                         const StoreOptions& options) {
  const size_t q = spec.find('?');
  std::string_view base = spec.substr(0, q);
  std::string_view query =
      q == std::string_view::npos ? std::string_view() : spec.substr(q + 1);
  const StoreInfo* row = nullptr;
  std::string_view rest;
  if (base == "memory") {
    row = &kStores[0];
  } else if (base.rfind("sqlite:", 0) == 0) {
    row = &kStores[1];
    rest = base.substr(7);
  } else if (base.rfind("redis://", 0) == 0) {
    row = &kStores[2];
    rest = base.substr(8);
  }
  if (row == nullptr) {
    std::string known;
    for (const StoreInfo& s : kStores) known += "\n  " + std::string(s.syntax);
    return InvalidArgument("unknown store '" + std::string(spec) +
                           "'; a store is one of:" + known);
  }
  Result<Params> params = ParseParams(spec, query, row->params);
  if (!params.ok()) return params.status();
  uint64_t max_bytes = 0;
  if (auto it = params->find("max_bytes"); it != params->end()) {
    Result<uint64_t> b = ParseBytes(spec, "max_bytes", it->second);
    if (!b.ok()) return b.status();
    max_bytes = *b;
  }
  if (row->scheme == "memory") {
    store_internal::MemoryOptions o{.clock = options.clock};
    if (max_bytes != 0) o.max_bytes = max_bytes;
    return store_internal::NewMemoryStore("memory", o);
  }
  if (row->scheme == "sqlite") {
    if (rest.empty()) {
      return InvalidArgument("store '" + std::string(spec) +
                             "': no file (sqlite:PATH)");
    }
    store_internal::SqliteOptions o{.path = std::string(rest),
                                    .clock = options.clock};
    if (max_bytes != 0) o.max_bytes = max_bytes;
    if (o.max_bytes < (uint64_t{1} << 16)) {
      return InvalidArgument("store '" + std::string(spec) +
                             "': max_bytes must be at least 64KiB");
    }
    if (auto it = params->find("busy_timeout_ms"); it != params->end()) {
      Result<int> n = ParseInt(spec, "busy_timeout_ms", it->second, 0, 60000);
      if (!n.ok()) return n.status();
      o.busy_timeout_ms = *n;
    }
    return store_internal::NewSqliteStore("sqlite:" + std::string(rest),
                                          std::move(o));
  }
  return OpenRedis(spec, rest, *params);
}

}  // namespace toolcache
