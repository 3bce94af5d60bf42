// The memory backend: items in a hash map in this process.
//
// Invariants (all GUARDED_BY(mu_)):
// - items_ holds every live item and counter under FullKey(ns, key).
// - order_ lists every non-counter item exactly once by its insertion
//   sequence number (item.seq); bytes_ is the sum of their accounted sizes.
// - bytes_ <= max_bytes after every Put returns.
// - Values are immutable shared strings: a reader keeps its bytes alive
//   after the item is replaced, erased or evicted.
//
// Choice: eviction is FIFO by insertion (an expired item found on the way
// is dropped first): the store is not a policy; the cache above it decides
// what is worth keeping, this only bounds memory.
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "src/store/backends.h"

namespace toolcache::store_internal {
namespace {

std::string FullKey(const StoreKey& k) {
  std::string s;
  s.reserve(k.ns.size() + 1 + k.key.size());
  s.append(k.ns);
  s.push_back('\0');
  s.append(k.key);
  return s;
}

class MemoryStore final : public Store {
 public:
  MemoryStore(std::string name, MemoryOptions o)
      : name_(std::move(name)), o_(o) {}

  std::string_view name() const override { return name_; }

  Result<std::vector<std::optional<StoreValue>>> Get(
      std::span<const StoreKey> keys) override {
    if (Status s = CheckBatch(keys.size()); !s.ok()) return s;
    for (const StoreKey& k : keys) {
      if (Status s = CheckKey(k); !s.ok()) return s;
    }
    const double now = NowSeconds(o_.clock);
    std::vector<std::optional<StoreValue>> out(keys.size());
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < keys.size(); ++i) {
      auto it = items_.find(FullKey(keys[i]));
      if (it == items_.end()) continue;
      Item& item = it->second;
      if (item.counter) {
        out[i] = StoreValue{
            std::make_shared<const std::string>(std::to_string(item.count)),
            kNoExpiry};
        continue;
      }
      if (item.expires_at <= now) {
        RemoveLocked(it);
        continue;
      }
      out[i] = StoreValue{item.bytes, item.expires_at - now};
    }
    return out;
  }

  Status Put(const StoreKey& key, std::string_view value,
             double ttl_seconds) override {
    if (Status s = CheckKey(key); !s.ok()) return s;
    if (Status s = CheckTtl(ttl_seconds); !s.ok()) return s;
    const uint64_t size = value.size() + key.ns.size() + key.key.size();
    if (size > o_.max_bytes) {
      return ResourceExhausted(
          "memory store: a value of " + std::to_string(value.size()) +
          " bytes exceeds max_bytes=" + std::to_string(o_.max_bytes));
    }
    const double now = NowSeconds(o_.clock);
    auto bytes = std::make_shared<const std::string>(value);  // outside lock
    std::string full = FullKey(key);
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = items_.find(full); it != items_.end()) RemoveLocked(it);
    while (bytes_ + size > o_.max_bytes && !order_.empty()) {
      RemoveLocked(items_.find(order_.begin()->second));
    }
    Item item;
    item.bytes = std::move(bytes);
    item.expires_at = ttl_seconds == kNoExpiry ? kNoExpiry : now + ttl_seconds;
    item.size = size;
    item.seq = ++seq_;
    order_.emplace(item.seq, full);
    bytes_ += size;
    items_.emplace(std::move(full), std::move(item));
    return Status::Ok();
  }

  Result<bool> Erase(const StoreKey& key) override {
    if (Status s = CheckKey(key); !s.ok()) return s;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = items_.find(FullKey(key));
    if (it == items_.end()) return false;
    const bool live =
        it->second.counter || it->second.expires_at > NowSeconds(o_.clock);
    RemoveLocked(it);
    return live;
  }

  Result<std::vector<uint64_t>> AddToCounters(std::span<const StoreKey> keys,
                                              uint64_t delta,
                                              uint64_t initial) override {
    if (Status s = CheckBatch(keys.size()); !s.ok()) return s;
    for (const StoreKey& k : keys) {
      if (Status s = CheckKey(k); !s.ok()) return s;
    }
    std::vector<uint64_t> out;
    out.reserve(keys.size());
    std::lock_guard<std::mutex> lock(mu_);
    for (const StoreKey& k : keys) {
      std::string full = FullKey(k);
      auto it = items_.find(full);
      if (it != items_.end() && !it->second.counter) {
        return InvalidArgument(
            "memory store: key holds a value, not a "
            "counter");
      }
      if (it == items_.end()) {
        Item item;
        item.counter = true;
        item.count = initial;
        it = items_.emplace(std::move(full), std::move(item)).first;
      }
      it->second.count += delta;
      out.push_back(it->second.count);
    }
    return out;
  }

 private:
  struct Item {
    std::shared_ptr<const std::string> bytes;
    double expires_at = kNoExpiry;
    uint64_t size = 0;
    uint64_t seq = 0;
    bool counter = false;
    uint64_t count = 0;
  };
  using Map = std::unordered_map<std::string, Item>;

  // REQUIRES: mu_ held; `it` valid.
  void RemoveLocked(Map::iterator it) {
    if (!it->second.counter) {
      order_.erase(it->second.seq);
      bytes_ -= it->second.size;
    }
    items_.erase(it);
  }

  const std::string name_;
  const MemoryOptions o_;
  std::mutex mu_;
  Map items_;                              // GUARDED_BY(mu_)
  std::map<uint64_t, std::string> order_;  // GUARDED_BY(mu_)
  uint64_t bytes_ = 0;                     // GUARDED_BY(mu_)
  uint64_t seq_ = 0;                       // GUARDED_BY(mu_)
};

}  // namespace

std::unique_ptr<Store> NewMemoryStore(std::string name, MemoryOptions o) {
  return std::make_unique<MemoryStore>(std::move(name), o);
}

}  // namespace toolcache::store_internal
