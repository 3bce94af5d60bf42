// SharedResults: results and invalidation counters in a shared Store (see
// shared_results.h for the layout and why it is safe).
//
// Invariants:
// - A tag is the little-endian concatenation of the counter values of
//   Dependencies::counter_keys, in that order; the order is a function of
//   the server and the call's resources alone, so every process computes
//   the same tag for the same state.
// - A record decodes only if its magic, CRC-32 and lengths all agree; any
//   other byte string is DATA_LOSS (store_corrupt), never a wrong result.
#include "src/cache/shared_results.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "src/core/sha256.h"
#include "src/store/sealed.h"

namespace toolcache::cache_internal {
namespace {

constexpr std::string_view kMagic = "TCR1";
constexpr size_t kHeader = 4 + 4 + 4 + 4 + 3 * 8 + 7 * 4;  // 68

std::string Hex(std::string_view bytes, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const Sha256Digest d = ComputeSha256(bytes);
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out += kDigits[d[i] >> 4];
    out += kDigits[d[i] & 15];
  }
  return out;
}

void PutU32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}
void PutU64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}
void PutF64(std::string& s, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  PutU64(s, bits);
}
uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}
uint64_t GetU64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}
double GetF64(const char* p) {
  const uint64_t bits = GetU64(p);
  double v;
  std::memcpy(&v, &bits, 8);
  return v;
}

uint64_t NowMicros() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
}

std::string EncodeTag(const std::vector<uint64_t>& values) {
  std::string tag;
  tag.reserve(values.size() * 8);
  for (uint64_t v : values) PutU64(tag, v);
  return tag;
}

}  // namespace

std::string EncodeResult(const CachedValue& v, std::string_view result,
                         std::string_view tag) {
  const CacheKey& k = v.key;
  const std::string_view fields[] = {
      tag, k.scope, k.server, k.tool, k.canonical_args, v.media_type, result};
  size_t total = kHeader;
  for (std::string_view f : fields) total += f.size();
  std::string out;
  out.reserve(total);
  out += kMagic;
  PutU32(out, 0);  // CRC, filled below
  out += static_cast<char>(v.request_type == RequestType::kCommand ? 1 : 0);
  out.append(3, '\0');
  PutU32(out, v.flags);
  PutF64(out, v.ttl_seconds);
  PutF64(out, v.latency_seconds);
  PutF64(out, v.cost);
  for (std::string_view f : fields)
    PutU32(out, static_cast<uint32_t>(f.size()));
  for (std::string_view f : fields) out += f;
  const uint32_t crc = Crc32(std::string_view(out).substr(8));
  for (int i = 0; i < 4; ++i) out[4 + i] = static_cast<char>(crc >> (8 * i));
  return out;
}

Result<StoredResult> DecodeResult(std::string_view b) {
  if (b.size() < kHeader || b.substr(0, 4) != kMagic) {
    return DataLoss("stored result: not a TCR1 record");
  }
  if (GetU32(b.data() + 4) != Crc32(b.substr(8))) {
    return DataLoss("stored result: checksum mismatch");
  }
  const char* p = b.data() + 8;
  StoredResult r;
  r.value.request_type =
      p[0] == 1 ? RequestType::kCommand : RequestType::kInformational;
  r.value.flags = GetU32(p + 4);
  r.value.ttl_seconds = GetF64(p + 8);
  r.value.latency_seconds = GetF64(p + 16);
  r.value.cost = GetF64(p + 24);
  // The checksum finds damage, not a writer: anyone who can write the store
  // can write a well-formed record. A latency or cost that is not a finite
  // number >= 0, or a NaN or negative TTL, would reach the policies' value
  // model (VAAC's eviction score) as NaN: refused here, at the boundary.
  if (!(std::isfinite(r.value.latency_seconds) &&
        r.value.latency_seconds >= 0 && std::isfinite(r.value.cost) &&
        r.value.cost >= 0 && r.value.ttl_seconds >= 0)) {
    return DataLoss("stored result: latency, cost or TTL is not a number >= 0");
  }
  uint32_t len[7];
  uint64_t sum = 0;
  for (int i = 0; i < 7; ++i) {
    len[i] = GetU32(p + 32 + 4 * i);
    sum += len[i];
  }
  if (sum != b.size() - kHeader) {
    return DataLoss("stored result: field lengths do not match its size");
  }
  std::string_view rest = b.substr(kHeader);
  auto take = [&](uint32_t n) {
    std::string s(rest.substr(0, n));
    rest.remove_prefix(n);
    return s;
  };
  r.tag = take(len[0]);
  r.value.key.scope = take(len[1]);
  r.value.key.server = take(len[2]);
  r.value.key.tool = take(len[3]);
  r.value.key.canonical_args = take(len[4]);
  r.value.media_type = take(len[5]);
  r.value.result = take(len[6]);
  return r;
}

std::vector<std::string> ResourceAncestors(std::string_view s) {
  // below(parent, child): parent is a proper prefix of child and either
  // ends with '/' or is followed by '/' in child (tool_cache.cc).
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '/') continue;
    if (i >= 1) out.emplace_back(s.substr(0, i));
    if (i + 1 < s.size()) out.emplace_back(s.substr(0, i + 1));
  }
  std::sort(out.begin(), out.end(),
            [](const std::string& a, const std::string& b) {
              return a.size() < b.size();
            });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Dependencies SharedResults::DependenciesOf(
    std::string_view server, const std::vector<std::string>& resources,
    bool unanchored) const {
  Dependencies d;
  d.server_hash = Hex(server, 8);
  d.counter_keys.push_back("e:" + d.server_hash);
  std::vector<std::string> more;
  if (unanchored) more.push_back("ru:" + d.server_hash);
  const std::string prefix = d.server_hash + ":";
  auto rh = [&](std::string_view r) {
    return Hex(std::string(server) + '\0' + std::string(r), 16);
  };
  for (const std::string& p : resources) {
    for (const std::string& a : ResourceAncestors(p)) {
      more.push_back("ra:" + prefix + rh(a));
    }
    more.push_back("rb:" + prefix + rh(p));
  }
  std::sort(more.begin(), more.end());
  more.erase(std::unique(more.begin(), more.end()), more.end());
  for (std::string& k : more) d.counter_keys.push_back(std::move(k));
  return d;
}

std::string SharedResults::ValueKey(const CacheKey& key,
                                    std::string_view server_hash,
                                    uint64_t epoch) const {
  std::string k = "v:";
  k += key.scope.empty() ? std::string("-") : Hex(key.scope, 8);
  k += ':';
  k += server_hash;
  k += ':';
  k += std::to_string(epoch);
  k += ':';
  k += key.DigestHex();
  return k;
}

Result<SharedResults::Read> SharedResults::Lookup(const CacheKey& key,
                                                  const Dependencies& deps,
                                                  bool want_value) {
  std::optional<uint64_t> guess;
  if (want_value) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = epoch_guess_.find(deps.server_hash);
        it != epoch_guess_.end()) {
      guess = it->second;
    }
  }
  std::vector<StoreKey> keys;
  keys.reserve(deps.counter_keys.size() + 1);
  for (const std::string& k : deps.counter_keys) {
    keys.push_back({kResultNamespace, k});
  }
  std::string guessed_key;
  if (guess) {
    guessed_key = ValueKey(key, deps.server_hash, *guess);
    keys.push_back({kResultNamespace, guessed_key});
  }
  // Reads in batches the store accepts (one batch for any usual call).
  Result<std::vector<std::optional<StoreValue>>> got =
      std::vector<std::optional<StoreValue>>{};
  for (size_t at = 0; at < keys.size(); at += kMaxStoreBatch) {
    const size_t len = std::min(kMaxStoreBatch, keys.size() - at);
    auto part = store_->Get(std::span<const StoreKey>(keys).subspan(at, len));
    if (!part.ok()) return part.status();
    got->insert(got->end(), part->begin(), part->end());
  }
  const size_t n = deps.counter_keys.size();
  std::vector<uint64_t> values(n, 0);
  std::vector<StoreKey> absent;
  std::vector<size_t> absent_at;
  for (size_t i = 0; i < n; ++i) {
    const std::optional<StoreValue>& v = (*got)[i];
    if (!v) {
      absent.push_back(keys[i]);
      absent_at.push_back(i);
      continue;
    }
    const std::string& text = *v->bytes;
    uint64_t x = 0;
    bool ok = !text.empty() && text.size() <= 20;
    for (char c : text) {
      ok = ok && c >= '0' && c <= '9';
      x = x * 10 + static_cast<uint64_t>(c - '0');
    }
    if (!ok) {
      // Choice: a damaged counter is dropped; the next read recreates it
      // above any value it had, so no old result becomes valid again.
      (void)store_->Erase(keys[i]);
      return DataLoss("invalidation counter is not a number");
    }
    values[i] = x;
  }
  if (!absent.empty()) {
    const uint64_t initial = NowMicros();
    for (size_t at = 0; at < absent.size(); at += kMaxStoreBatch) {
      const size_t len = std::min(kMaxStoreBatch, absent.size() - at);
      auto created = store_->AddToCounters(
          std::span<const StoreKey>(absent).subspan(at, len), 0, initial);
      if (!created.ok()) return created.status();
      for (size_t j = 0; j < len; ++j) {
        values[absent_at[at + j]] = (*created)[j];
      }
    }
  }
  Read r;
  r.epoch = values[0];
  r.tag = EncodeTag(values);
  if (want_value) {
    if (guess && *guess == r.epoch) {
      r.value = (*got)[n];
    } else {
      const std::string vk = ValueKey(key, deps.server_hash, r.epoch);
      StoreKey k{kResultNamespace, vk};
      auto v = store_->Get({&k, 1});
      if (!v.ok()) return v.status();
      r.value = (*v)[0];
    }
    std::lock_guard<std::mutex> lock(mu_);
    epoch_guess_[deps.server_hash] = r.epoch;
  }
  return r;
}

Status SharedResults::Put(const CacheKey& key, const Dependencies& deps,
                          uint64_t epoch, std::string_view record,
                          double ttl_seconds) {
  const std::string vk = ValueKey(key, deps.server_hash, epoch);
  return store_->Put({kResultNamespace, vk}, record, ttl_seconds);
}

Status SharedResults::Erase(const CacheKey& key, const Dependencies& deps,
                            uint64_t epoch) {
  const std::string vk = ValueKey(key, deps.server_hash, epoch);
  Result<bool> r = store_->Erase({kResultNamespace, vk});
  return r.ok() ? Status::Ok() : r.status();
}

Status SharedResults::Bump(const std::vector<std::string>& keys) {
  const uint64_t initial = NowMicros();
  for (size_t at = 0; at < keys.size(); at += kMaxStoreBatch) {
    std::vector<StoreKey> batch;
    for (size_t i = at; i < std::min(keys.size(), at + kMaxStoreBatch); ++i) {
      batch.push_back({kResultNamespace, keys[i]});
    }
    auto r = store_->AddToCounters(batch, 1, initial);
    if (!r.ok()) return r.status();
  }
  return Status::Ok();
}

Status SharedResults::Invalidate(std::string_view server,
                                 const std::vector<std::string>& resources) {
  const std::string sh = Hex(server, 8);
  if (resources.empty()) return Bump({"e:" + sh});
  // Every resource write also bumps "ru:", which results read through a
  // relative (unanchored) path depend on.
  std::vector<std::string> keys = {"ru:" + sh};
  auto rh = [&](std::string_view r) {
    return Hex(std::string(server) + '\0' + std::string(r), 16);
  };
  for (const std::string& w : resources) {
    keys.push_back("ra:" + sh + ":" + rh(w));
    keys.push_back("rb:" + sh + ":" + rh(w));
    for (const std::string& a : ResourceAncestors(w)) {
      keys.push_back("rb:" + sh + ":" + rh(a));
    }
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return Bump(keys);
}

}  // namespace toolcache::cache_internal
