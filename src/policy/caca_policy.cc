// CACA: the paper's admission baseline (Guan et al. 2019 as used by the
// ToolCaching paper, section 6.2): hierarchical feature grouping + UCB1
// group admission with the reward of Eq. 3 WITHOUT the caching-value factor,
// and plain LRU eviction. It shares GroupBanditPolicy with VAAC so the two
// differ only where the paper says they do.
//
// Invariants: those of GroupBanditPolicy (vaac_policy.cc) in LRU mode.
#include <memory>

#include "src/policy/factories.h"
#include "src/policy/vaac_policy.h"

namespace toolcache {

std::unique_ptr<Policy> MakeCacaPolicy(const PolicyParams& params) {
  return std::make_unique<GroupBanditPolicy>(
      VaacOptionsFromParams(params, VaacVariant::kCaca));
}

}  // namespace toolcache
