// Factory declarations of every policy in the registry table (registry.cc).
//
// Adding a policy: implement it in src/policy/<name>_policy.cc behind a
// factory with this signature, add ONE declaration line below, and ONE row to
// the table in registry.cc. The contract suite (policy_contract_test.cc)
// then runs over it automatically.
//
// A factory reads its tunables with KnobOr(params, "knob", default); the
// knob names it accepts are listed in its registry row (MakePolicy rejects
// others before calling the factory). It must not throw.
#ifndef TOOLCACHE_SRC_POLICY_FACTORIES_H_
#define TOOLCACHE_SRC_POLICY_FACTORIES_H_

#include <memory>

#include "toolcache/policy.h"

namespace toolcache {

// One line per policy, in registry order.
std::unique_ptr<Policy> MakeLruPolicy(const PolicyParams& params);
std::unique_ptr<Policy> MakeCacaPolicy(const PolicyParams& params);
std::unique_ptr<Policy> MakeVaacPolicy(const PolicyParams& params);
std::unique_ptr<Policy> MakeVaacSampledPolicy(const PolicyParams& params);
std::unique_ptr<Policy> MakeVaacPlusPolicy(const PolicyParams& params);
std::unique_ptr<Policy> MakeGdsfPolicy(const PolicyParams& params);
std::unique_ptr<Policy> MakeGdsfCostPolicy(const PolicyParams& params);
std::unique_ptr<Policy> MakeWTinyLfuPolicy(const PolicyParams& params);
std::unique_ptr<Policy> MakeS3FifoPolicy(const PolicyParams& params);
std::unique_ptr<Policy> MakeBeladyPolicy(const PolicyParams& params);
std::unique_ptr<Policy> MakeInfinitePolicy(const PolicyParams& params);

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_POLICY_FACTORIES_H_
