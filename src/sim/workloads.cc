// Synthetic workloads of the paper (section 6.2-6.3).
//
// Invariants:
//   - The key universe is the same for every workload and seed (tool order,
//     then argument index); sizes and latencies are drawn per seed from their
//     own random stream, so choosing a different workload with the same seed
//     keeps each key's attributes.
//   - Separate random streams (attributes, key choice, arrival times, command
//     mix) keep one aspect's draws from shifting another's.
//   - Arguments are written directly in RFC 8785 canonical form (sorted keys,
//     no whitespace, ASCII only), and every multi-parameter tool names its
//     category parameter so that it sorts first: the replay takes the first
//     canonical key as the paper's parameter category.
#include "src/sim/workloads.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "src/core/json.h"
#include "src/sim/random.h"

namespace toolcache::sim {
namespace {

// Paper-silent: the tool table. Latency and cost follow Table 1 where it has
// a row; the calculator and the stock-price tool are our additions for the
// computational and real-time TTL classes; sizes are our estimates of typical
// JSON results (search snippets ~6 KB, a wiki page ~16 KB, ...).
constexpr std::array<ToolModel, 7> kTools = {{
    {"web_search", RequestType::kInformational, 3600, 0.7, 2.0, 0.005, 6000,
     0.6, 150, 10},
    {"wiki_fetch", RequestType::kInformational, 3600, 0.2, 1.0, 0.0, 16000, 0.8,
     120, 0},
    {"map_route", RequestType::kInformational, 300, 0.05, 1.0, 0.005, 3000, 0.5,
     90, 10},
    {"weather", RequestType::kInformational, 300, 0.15, 0.25, 0.0016, 800, 0.3,
     90, 15},
    {"calculator", RequestType::kInformational, 300, 0.01, 0.05, 0.0002, 120,
     0.3, 90, 0},
    {"stock_price", RequestType::kInformational, 60, 0.1, 0.3, 0.001, 300, 0.2,
     60, 0},
    {"send_message", RequestType::kCommand, 0, 0.2, 0.4, 0.001, 60, 0.1, 0, 0},
}};
constexpr size_t kCommandTool = 6;

constexpr std::array<std::string_view, 10> kTopics = {
    "finance", "food",    "health", "movies", "music",
    "news",    "science", "sports", "tech",   "travel"};
constexpr std::array<std::string_view, 15> kCities = {
    "Berlin", "Cairo", "Delhi", "Lima", "London", "Madrid", "Moscow", "Oslo",
    "Paris",  "Quito", "Riga",  "Rome", "Seoul",  "Sydney", "Tokyo"};

// Paper-silent: hotspot shape (5 phases, hot region 20% of the keys, 80% of
// the requests in the hot region).
constexpr uint32_t kHotspotPhases = 5;
constexpr double kHotRegionFraction = 0.2;
constexpr double kHotShare = 0.8;
// Paper-silent: multi-user shape (shared popular set of 10% of the keys
// taking 40% of the requests; user windows of 15% of the keys, stride 10%, so
// neighbouring users share a third of their window).
constexpr double kSharedFraction = 0.1;
constexpr double kSharedShare = 0.4;
constexpr double kUserWindowFraction = 0.15;

// Stream salts.
constexpr uint64_t kAttrStream = 0xa77c;
constexpr uint64_t kPickStream = 0x91c4;
constexpr uint64_t kTimeStream = 0x7133;
constexpr uint64_t kCommandStream = 0xc0dd;

struct Key {
  uint32_t tool;
  std::string args;
  uint64_t size;
  double latency;
};

// A JSON string literal (core/json.h). Every argument text here is
// printable ASCII without '"' or '\\', so the bytes (and the pinned hit
// counts) are those of the former bare quoting.
std::string Str(std::string_view s) { return json::Quote(s); }

// "YYYY-MM-DD" of 2025-06-01 + `days`.
std::string DateAfterJune1(uint64_t days) {
  using namespace std::chrono;
  const year_month_day d{sys_days{year{2025} / June / 1} +
                         std::chrono::days{static_cast<int64_t>(days)}};
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%04d-%02u-%02u", static_cast<int>(d.year()),
                static_cast<unsigned>(d.month()),
                static_cast<unsigned>(d.day()));
  return buf;
}

// Canonical arguments of key `j` of tool `t`. Keys beyond the tool's base
// count (keys_scale > 1) repeat the base key's category with a different
// second parameter; the other tools' formulas are unique for any j.
std::string Arguments(size_t t, uint32_t j) {
  const std::string n = std::to_string(j);
  switch (t) {
    case 0: {  // category first
      std::string_view topic = kTopics[j % kTopics.size()];
      return "{\"category\":" + Str(topic) + ",\"query\":" +
             Str(std::string(topic) + " question " +
                 std::to_string(j / kTopics.size())) +
             "}";
    }
    case 1:
      return "{\"title\":" + Str("Article_" + n) + "}";
    case 2: {  // "from" sorts before "to"
      // Scale step of the key (0 for the paper's keys) and its base key.
      const uint32_t rep = j / kTools[t].keys, base = j % kTools[t].keys;
      uint32_t from = base / 9, to = base % 9;
      if (to >= from) ++to;
      // Choice: scaled route keys go to a numbered district of the city.
      const std::string dest =
          std::string(kCities[to]) +
          (rep == 0 ? "" : " district " + std::to_string(rep));
      return "{\"from\":" + Str(kCities[from]) + ",\"to\":" + Str(dest) + "}";
    }
    case 3: {  // "city" sorts before "date"
      // Choice: scaled weather keys ask about later dates (6 per scale step).
      const uint32_t rep = j / kTools[t].keys, base = j % kTools[t].keys;
      return "{\"city\":" + Str(kCities[base / 6]) +
             ",\"date\":" + Str(DateAfterJune1(base % 6 + 6ull * rep)) + "}";
    }
    case 4:
      return "{\"expression\":" +
             Str(std::to_string(j % 17 + 2) + "*" + std::to_string(j + 11)) +
             "}";
    case 5:
      return "{\"symbol\":" + Str("TCK" + n) + "}";
    default:
      return "{}";
  }
}

std::vector<Key> BuildUniverse(uint64_t seed, uint32_t keys_scale) {
  Rng rng(seed ^ kAttrStream);
  std::vector<Key> keys;
  for (size_t t = 0; t < kTools.size(); ++t) {
    const ToolModel& m = kTools[t];
    for (uint32_t j = 0; j < m.keys * keys_scale; ++j) {
      double size = std::clamp(rng.LogNormal(m.size_median, m.size_sigma), 32.0,
                               1048576.0);
      keys.push_back({static_cast<uint32_t>(t), Arguments(t, j),
                      static_cast<uint64_t>(size),
                      rng.Uniform(m.latency_lo, m.latency_hi)});
    }
  }
  return keys;
}

std::vector<uint64_t> Permutation(uint64_t n, Rng& rng) {
  std::vector<uint64_t> p(n);
  for (uint64_t i = 0; i < n; ++i) p[i] = i;
  rng.Shuffle(p);
  return p;
}

// Chooses the key of each request for one workload kind.
class KeyPicker {
 public:
  KeyPicker(WorkloadKind kind, const WorkloadOptions& opt, uint64_t n)
      : kind_(kind),
        opt_(opt),
        n_(n),
        rng_(opt.seed ^ kPickStream),
        zipf_all_(n, opt.zipf_alpha),
        hot_size_(std::max<uint64_t>(
            1, static_cast<uint64_t>(kHotRegionFraction * n))),
        zipf_hot_(hot_size_, opt.zipf_alpha),
        shared_size_(
            std::max<uint64_t>(1, static_cast<uint64_t>(kSharedFraction * n))),
        zipf_shared_(shared_size_, opt.zipf_alpha),
        window_(std::max<uint64_t>(
            1, static_cast<uint64_t>(kUserWindowFraction * n))),
        zipf_window_(window_, opt.zipf_alpha) {
    ranking_ = Permutation(n, rng_);
    phase_len_ = std::max<uint64_t>(
        1, (opt.requests + kHotspotPhases - 1) / kHotspotPhases);
    for (uint32_t u = 0; u < opt.users; ++u) {
      user_rankings_.push_back(Permutation(window_, rng_));
    }
  }

  // Key index for request `i`; sets *user for the multi-user workload.
  uint64_t Pick(uint64_t i, uint32_t* user) {
    *user = 0;
    switch (kind_) {
      case WorkloadKind::kZipf:
        return ranking_[zipf_all_.Sample(rng_)];
      case WorkloadKind::kUniform:
        return rng_.Below(n_);
      case WorkloadKind::kHotspot: {
        if (i % phase_len_ == 0) {
          hot_start_ = rng_.Below(n_);
          hot_ranking_ = Permutation(hot_size_, rng_);
        }
        if (rng_.Uniform01() < kHotShare || hot_size_ >= n_) {
          return (hot_start_ + hot_ranking_[zipf_hot_.Sample(rng_)]) % n_;
        }
        return (hot_start_ + hot_size_ + rng_.Below(n_ - hot_size_)) % n_;
      }
      case WorkloadKind::kMultiUser: {
        uint32_t u = static_cast<uint32_t>(rng_.Below(opt_.users));
        *user = u;
        if (rng_.Uniform01() < kSharedShare) {
          return ranking_[zipf_shared_.Sample(rng_)];
        }
        // User u's window starts at u * n / users in universe (tool) order,
        // so a window is topical: a few tools and categories.
        uint64_t start = u * n_ / opt_.users;
        return (start + user_rankings_[u][zipf_window_.Sample(rng_)]) % n_;
      }
    }
    return 0;
  }

 private:
  WorkloadKind kind_;
  const WorkloadOptions& opt_;
  uint64_t n_;
  Rng rng_;
  std::vector<uint64_t> ranking_;
  ZipfSampler zipf_all_;
  uint64_t hot_size_;
  ZipfSampler zipf_hot_;
  uint64_t phase_len_ = 1;
  uint64_t hot_start_ = 0;
  std::vector<uint64_t> hot_ranking_;
  uint64_t shared_size_;
  ZipfSampler zipf_shared_;
  uint64_t window_;
  ZipfSampler zipf_window_;
  std::vector<std::vector<uint64_t>> user_rankings_;
};

constexpr std::array<WorkloadKind, 4> kAll = {
    WorkloadKind::kZipf, WorkloadKind::kHotspot, WorkloadKind::kUniform,
    WorkloadKind::kMultiUser};

}  // namespace

std::span<const WorkloadKind> AllWorkloads() { return kAll; }

std::string_view WorkloadName(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kZipf:
      return "zipf";
    case WorkloadKind::kHotspot:
      return "hotspot";
    case WorkloadKind::kUniform:
      return "uniform";
    case WorkloadKind::kMultiUser:
      return "multiuser";
  }
  return "unknown";
}

Result<WorkloadKind> ParseWorkload(std::string_view name) {
  for (WorkloadKind k : kAll) {
    if (WorkloadName(k) == name) return k;
  }
  return InvalidArgument("unknown workload '" + std::string(name) +
                         "' (known: zipf, hotspot, uniform, multiuser, all)");
}

std::span<const ToolModel> PaperTools() { return kTools; }

Trace GenerateWorkload(WorkloadKind kind, const WorkloadOptions& options) {
  WorkloadOptions opt = options;
  if (opt.users == 0) opt.users = 1;
  if (opt.keys_scale == 0) opt.keys_scale = 1;
  const std::vector<Key> universe = BuildUniverse(opt.seed, opt.keys_scale);
  KeyPicker picker(kind, opt, universe.size());
  Rng time_rng(opt.seed ^ kTimeStream);
  Rng command_rng(opt.seed ^ kCommandStream);
  const ToolModel& cmd = kTools[kCommandTool];

  Trace trace;
  trace.name = std::string(WorkloadName(kind));
  trace.records.reserve(opt.requests);
  double now = 0;
  for (uint64_t i = 0; i < opt.requests; ++i) {
    now += time_rng.Exponential(opt.mean_interarrival_seconds);
    TraceRecord r;
    r.time = now;
    uint32_t user = 0;
    // The key is always drawn, so the command mix does not shift the keys.
    const Key& key = universe[picker.Pick(i, &user)];
    if (kind == WorkloadKind::kMultiUser)
      r.user = "user" + std::to_string(user);
    if (command_rng.Uniform01() < opt.command_fraction) {
      r.tool = std::string(cmd.name);
      r.arguments = "{\"text\":\"message " + std::to_string(i) +
                    "\",\"to\":\"contact" +
                    std::to_string(command_rng.Below(20)) + "\"}";
      r.result_size = static_cast<uint64_t>(cmd.size_median);
      r.latency = command_rng.Uniform(cmd.latency_lo, cmd.latency_hi);
      r.cost = cmd.cost;
      r.ttl = cmd.ttl;
      r.request_type = RequestType::kCommand;
    } else {
      const ToolModel& m = kTools[key.tool];
      r.tool = std::string(m.name);
      r.arguments = key.args;
      r.result_size = key.size;
      r.latency = key.latency;
      r.cost = m.cost;
      r.ttl = m.ttl;
      r.request_type = m.type;
    }
    trace.records.push_back(std::move(r));
  }
  return trace;
}

}  // namespace toolcache::sim
