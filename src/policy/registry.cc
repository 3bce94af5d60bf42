// The policy registry: one table, in display order.
//
// Invariants:
//  - names in kPolicies are unique, lowercase, and stable (they appear in
//    configuration files, CLI flags and reports).
//  - MakePolicy validates the name, the knob names and their ranges
//    ("name=lo:hi" in the row), then calls the row's factory; factories
//    never see an unknown or out-of-range knob.
//
// Adding a policy: one declaration in factories.h, one row below.
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "src/policy/factories.h"
#include "src/policy/vaac_plus_policy.h"
#include "src/policy/vaac_policy.h"
#include "toolcache/policy.h"

namespace toolcache {
namespace {

// clang-format off
constexpr PolicyInfo kPolicies[] = {
    {"lru", "least recently used; admits everything", PolicyKind::kOnline,
     &MakeLruPolicy, ""},
    {"gdsf", "GreedyDual-Size-Frequency, cost = miss latency",
     PolicyKind::kOnline, &MakeGdsfPolicy, "cost_source=0:1"},
    {"gdsf-cost", "GreedyDual-Size-Frequency, cost = miss price",
     PolicyKind::kOnline, &MakeGdsfCostPolicy, "cost_source=0:1"},
    {"w-tinylfu", "1% LRU window + TinyLFU sketch + SLRU main (Caffeine)",
     PolicyKind::kOnline, &MakeWTinyLfuPolicy, "window_pct=0:1,protected_pct=0:1"},
    {"s3fifo", "small FIFO + main 2-bit CLOCK FIFO + ghost (SOSP'23)",
     PolicyKind::kOnline, &MakeS3FifoPolicy,
     "small_ratio=0:1,ghost_ratio=0:16,move_to_main_threshold=1:3"},
    {"belady", "offline MIN: evict farthest next use (limit, not size-optimal)",
     PolicyKind::kOffline, &MakeBeladyPolicy, ""},
    {"infinite", "unbounded cache: only compulsory and TTL misses (limit)",
     PolicyKind::kUnbounded, &MakeInfinitePolicy, ""},
    {"caca", "paper baseline: feature groups + UCB1 admission (no value), LRU eviction", PolicyKind::kOnline,
     &MakeCacaPolicy, kVaacKnobs},
    {"vaac", "paper VAAC: value-aware UCB1 group admission + v-LRU (exact O(n) window scan)", PolicyKind::kOnline,
     &MakeVaacPolicy, kVaacKnobs},
    {"vaac-sampled", "VAAC with v-LRU scoring sample_size random entries of the window (scalable)", PolicyKind::kOnline,
     &MakeVaacSampledPolicy, kVaacKnobs},
    {"vaac-plus", "VAAC improved (ours): value density x (frequency + group prior) eviction, regret-adapted admission duel", PolicyKind::kOnline,
     &MakeVaacPlusPolicy, kVaacPlusKnobs},
    // One row per policy (name, description, kind, factory, "knob1,knob2").
};
// clang-format on

// The spec of `knob` in the row, or nullopt when the row does not accept it.
std::string FormatBound(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string KnownNames() {
  std::string names;
  for (const PolicyInfo& info : kPolicies) {
    if (!names.empty()) names += ", ";
    names += info.name;
  }
  return names;
}

}  // namespace

std::span<const PolicyInfo> Policies() { return kPolicies; }

const PolicyInfo* FindPolicy(std::string_view name) {
  for (const PolicyInfo& info : kPolicies) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

Result<std::unique_ptr<Policy>> MakePolicy(std::string_view name,
                                           const PolicyParams& params) {
  const PolicyInfo* info = FindPolicy(name);
  if (info == nullptr) {
    return InvalidArgument("unknown policy '" + std::string(name) +
                           "'; known policies: " + KnownNames());
  }
  for (const auto& [knob, value] : params.knobs) {
    if (!std::isfinite(value)) {
      return InvalidArgument("policy '" + std::string(name) + "': knob '" +
                             knob + "' must be a finite number");
    }
    const std::optional<KnobSpec> spec = FindKnob(*info, knob);
    if (!spec) {
      return InvalidArgument("policy '" + std::string(name) +
                             "' has no knob '" + knob + "'; accepted knobs: " +
                             (info->knobs.empty() ? std::string("(none)")
                                                  : std::string(info->knobs)));
    }
    if (value < spec->lo || value > spec->hi) {
      return InvalidArgument("policy '" + std::string(name) + "': knob '" +
                             knob + "' = " + FormatBound(value) +
                             " is outside its range [" + FormatBound(spec->lo) +
                             ", " + FormatBound(spec->hi) + "]");
    }
  }
  std::unique_ptr<Policy> policy = info->make(params);
  if (policy == nullptr) {
    return Internal("factory of policy '" + std::string(name) +
                    "' returned no policy");
  }
  return policy;
}

double KnobOr(const PolicyParams& params, std::string_view name,
              double fallback) {
  const auto it = params.knobs.find(name);
  return it == params.knobs.end() ? fallback : it->second;
}

}  // namespace toolcache
