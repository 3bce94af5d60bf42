// The policy registry: one table, in display order.
//
// Invariants:
//  - names in kPolicies are unique, lowercase, and stable (they appear in
//    configuration files, CLI flags and reports).
//  - MakePolicy validates the name and the knob names, then calls the row's
//    factory; factories never see an unknown knob.
//
// Adding a policy: one declaration in factories.h, one row below.
#include <cmath>
#include <span>
#include <string>
#include <string_view>

#include "src/policy/factories.h"
#include "toolcache/policy.h"

namespace toolcache {
namespace {

// clang-format off
constexpr PolicyInfo kPolicies[] = {
    {"lru", "least recently used; admits everything", PolicyKind::kOnline,
     &MakeLruPolicy, ""},
    {"gdsf", "GreedyDual-Size-Frequency, cost = miss latency",
     PolicyKind::kOnline, &MakeGdsfPolicy, "cost_source"},
    {"gdsf-cost", "GreedyDual-Size-Frequency, cost = miss price",
     PolicyKind::kOnline, &MakeGdsfCostPolicy, "cost_source"},
    {"w-tinylfu", "1% LRU window + TinyLFU sketch + SLRU main (Caffeine)",
     PolicyKind::kOnline, &MakeWTinyLfuPolicy, "window_pct,protected_pct"},
    {"s3fifo", "small FIFO + main 2-bit CLOCK FIFO + ghost (SOSP'23)",
     PolicyKind::kOnline, &MakeS3FifoPolicy,
     "small_ratio,ghost_ratio,move_to_main_threshold"},
    {"belady", "offline MIN: evict farthest next use (limit, not size-optimal)",
     PolicyKind::kOffline, &MakeBeladyPolicy, ""},
    {"infinite", "unbounded cache: only compulsory and TTL misses (limit)",
     PolicyKind::kUnbounded, &MakeInfinitePolicy, ""},
    {"caca", "paper baseline: feature groups + UCB1 admission (no value), LRU eviction", PolicyKind::kOnline,
     &MakeCacaPolicy, "lambda1,lambda2,lambda3,tau,t1,hr,smin,b,c,delta1,delta2,delta3,delta4,delta5,window_fraction,sample_size,group_by_user,cumulative_grouping,admit_rule"},
    {"vaac", "paper VAAC: value-aware UCB1 group admission + v-LRU (exact O(n) window scan)", PolicyKind::kOnline,
     &MakeVaacPolicy, "lambda1,lambda2,lambda3,tau,t1,hr,smin,b,c,delta1,delta2,delta3,delta4,delta5,window_fraction,sample_size,group_by_user,cumulative_grouping,admit_rule"},
    {"vaac-sampled", "VAAC with v-LRU scoring sample_size random entries of the window (scalable)", PolicyKind::kOnline,
     &MakeVaacSampledPolicy, "lambda1,lambda2,lambda3,tau,t1,hr,smin,b,c,delta1,delta2,delta3,delta4,delta5,window_fraction,sample_size,group_by_user,cumulative_grouping,admit_rule"},
    {"vaac-plus", "VAAC with admit_rule=1: admit iff own group UCB >= mean UCB (not paper-faithful; EVALUATION.md section 2)", PolicyKind::kOnline,
     &MakeVaacPlusPolicy, "lambda1,lambda2,lambda3,tau,t1,hr,smin,b,c,delta1,delta2,delta3,delta4,delta5,window_fraction,sample_size,group_by_user,cumulative_grouping,admit_rule"},
    // One row per policy (name, description, kind, factory, "knob1,knob2").
};
// clang-format on

bool ListsKnob(std::string_view list, std::string_view knob) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    if (list.substr(0, comma) == knob) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
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
    if (!ListsKnob(info->knobs, knob)) {
      return InvalidArgument("policy '" + std::string(name) +
                             "' has no knob '" + knob + "'; accepted knobs: " +
                             (info->knobs.empty() ? std::string("(none)")
                                                  : std::string(info->knobs)));
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
