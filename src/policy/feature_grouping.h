// FeatureGrouping: the paper's periodic hierarchical feature grouping
// (ToolCaching Appendix B.1, Algorithm 1): tool -> parameter category ->
// user. A node is split into its children only when its access count
// f >= T1 and its hit ratio H <= Hr; children with fewer than Smin requests
// are merged back into their parent ("residual" group of that parent); the
// leaves are the bandit's arms. The tree is rebuilt every B recorded
// requests.
//
// Statistics per tree node (accesses, hits, sum of v) are kept in hash maps
// keyed by (tool), (tool, category), (tool, category, user), so Record() and
// GroupOf() are O(1) expected; a regroup costs O(nodes in the window) once
// every B requests, i.e. O(1) amortized in the default window mode.
//
// Paper-silent: group identities (level + node + residual flag) survive a
// regroup when the same leaf is formed again: its bandit counters (admissions
// C_i, selections N_i) carry over; H_i and V_i are re-seeded from the window
// that formed it.
//
// Thread-safety: none (owned by one policy).
//
// Example:
//   FeatureGrouping grouping(GroupingOptions{});
//   uint32_t g = grouping.Record(req, /*hit=*/false, /*value=*/0.7);
//   const Group& group = grouping.group(g);   // H, V, level, C, N
#ifndef TOOLCACHE_SRC_POLICY_FEATURE_GROUPING_H_
#define TOOLCACHE_SRC_POLICY_FEATURE_GROUPING_H_

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "toolcache/policy.h"

namespace toolcache {

struct GroupingOptions {
  double t1 = 20;   // paper: split only if access count >= T1
  double hr = 0.5;  // paper: ... and hit ratio <= Hr
  // Paper-silent: Smin = 5 requests: a group needs a handful of requests
  // for its H and V to mean anything; smaller ones merge into the parent.
  double smin = 5;
  // Paper-silent: regroup every B = 200 requests: several regroups within
  // the paper's 1,000-request workloads, and each window still holds ~10 x T1
  // requests so a hot tool can cross T1.
  uint64_t b = 200;
  bool group_by_user = true;  // false = global grouping (Table 3 baseline)
  // Paper-silent: false = each regroup uses the requests of the last B only
  // ("the group will be periodically reset after B requests"); true = all
  // requests so far (Algorithm 1's R_all read literally).
  bool cumulative = false;
};

// Identity of a leaf group.
struct GroupKey {
  uint8_t level = 0;      // depth of the node: 0 root, 1 tool, 2 cat, 3 user
  bool residual = false;  // the merged small children of that node
  uint32_t tool = 0;
  uint64_t category = 0;
  uint32_t user = 0;
  bool operator==(const GroupKey&) const = default;
};

// One arm of the bandit.
struct Group {
  GroupKey key;
  uint64_t accesses = 0;  // requests mapped to this group (hits + misses)
  uint64_t hits = 0;
  double sum_value = 0;     // sum of v over those requests
  uint64_t admissions = 0;  // C_i
  uint64_t selections = 0;  // N_i
  // Bumped on every change of accesses / hits / sum_value / admissions, so
  // a caller may cache functions of them (the policy caches F_i).
  uint64_t version = 0;
  // H_i: hit ratio (0 without accesses).
  double HitRatio() const {
    return accesses == 0
               ? 0
               : static_cast<double>(hits) / static_cast<double>(accesses);
  }
  // V_i: mean v (0 without accesses).
  double MeanValue() const {
    return accesses == 0 ? 0 : sum_value / static_cast<double>(accesses);
  }
  // L_i for Eq. 3. Paper-silent: a residual group has its parent's level,
  // floored at 1 (the root's residual is a mix of small tools).
  double Level() const { return key.level < 1 ? 1.0 : key.level; }
};

class FeatureGrouping {
 public:
  explicit FeatureGrouping(const GroupingOptions& options);

  // Records one request (a hit or a miss, with its value v) into the node
  // statistics and into its current group, regroups when this is the B-th
  // request since the last regroup, and returns the request's group index
  // in the (possibly new) grouping.
  // Inline (forced: GCC kept an out-of-line copy, ~17 instructions of call
  // and register saves per request): the policies call it on every
  // request; the rare paths (a new tool / category / user, a regroup) are
  // out of line.
  [[gnu::always_inline]] uint32_t Record(const Request& req, bool hit,
                                         double value) {
    return RecordImpl<true>(req, hit, value);
  }
  // Record(req, hit, 0.0) without the five `sum_value += 0.0` (the compiler
  // keeps them: x + 0.0 is not x for x = -0.0). The same statistics bit for
  // bit for a caller whose values are all 0.0, as vaac-plus's: every
  // sum_value starts at +0.0 and +0.0 + 0.0 is +0.0. Mixing it with Record
  // of non-zero values is allowed (it adds nothing to sum_value either way).
  [[gnu::always_inline]] uint32_t RecordWithoutValue(const Request& req,
                                                     bool hit) {
    return RecordImpl<false>(req, hit, 0.0);
  }
  // The group `req` maps to now (no statistics change).
  uint32_t GroupOf(const Request& req) const;

  uint32_t group_count() const { return static_cast<uint32_t>(groups_.size()); }
  Group& group(uint32_t index) { return groups_[index]; }
  const Group& group(uint32_t index) const { return groups_[index]; }
  const std::vector<Group>& groups() const { return groups_; }
  uint64_t regroups() const { return regroups_; }
  uint64_t recorded() const { return recorded_; }
  // Rebuilds the groups now (Algorithm 1's HierarchicalGrouping).
  void Regroup();

 private:
  // Record's body; kValued = false leaves every sum_value as it is.
  template <bool kValued>
  [[gnu::always_inline]] uint32_t RecordImpl(const Request& req, bool hit,
                                             double value) {
    ++recorded_;
    const uint64_t h = hit ? 1 : 0;
    auto bump = [&](Node& n) {
      ++n.accesses;
      n.hits += h;
      if constexpr (kValued) n.sum_value += value;
    };
    bump(root_);
    // Traces repeat a tool / category / user in runs: the nodes (and the
    // group they resolve to) of the last Record serve when all three are the
    // same. The roles change only in Regroup, which empties the memo.
    const bool same = last_.tool != nullptr && last_.key.tool == req.tool &&
                      last_.key.category == req.param_category &&
                      (!options_.group_by_user || last_.key.user == req.user);
    if (!same) RememberNodes(req);
    bump(*last_.tool);
    bump(*last_.cat);
    if (options_.group_by_user) bump(*last_.user);
    const uint32_t g = last_.group;
    Group& group = groups_[g];
    ++group.accesses;
    group.hits += h;
    if constexpr (kValued) group.sum_value += value;
    ++group.version;
    // A countdown instead of recorded_ % B (a division per request);
    // Regroup() called from outside does not move it, as it did not move
    // the modulo.
    if (--until_regroup_ == 0) return RegroupAfter(req);
    return g;
  }

  static constexpr int32_t kNone = -1;
  struct Node {
    uint64_t accesses = 0;
    uint64_t hits = 0;
    double sum_value = 0;
    int32_t group = kNone;     // leaf group index, if this node is a leaf
    int32_t residual = kNone;  // residual group index, if split
    bool split = false;
  };
  struct CatKey {
    uint32_t tool;
    uint64_t category;
    bool operator==(const CatKey&) const = default;
  };
  struct UserKey {
    uint32_t tool;
    uint64_t category;
    uint32_t user;
    bool operator==(const UserKey&) const = default;
  };
  struct KeyHash {
    size_t operator()(uint32_t k) const;
    size_t operator()(const CatKey& k) const;
    size_t operator()(const UserKey& k) const;
    size_t operator()(const GroupKey& k) const;
  };

  // Points last_ at req's nodes (creating them) and the group they resolve
  // to.
  void RememberNodes(const Request& req);
  // Restarts the countdown, regroups, and returns req's new group.
  uint32_t RegroupAfter(const Request& req);
  bool ShouldSplit(const Node& n) const;
  int32_t AddGroup(const GroupKey& key, const Node& seed);
  void AddTo(int32_t group, const Node& members);
  uint32_t Resolve(const Node* tool, const Node* cat, const Node* user) const;

  GroupingOptions options_;
  Node root_;
  std::unordered_map<uint32_t, Node, KeyHash> tools_;
  std::unordered_map<CatKey, Node, KeyHash> cats_;
  std::unordered_map<UserKey, Node, KeyHash> users_;
  std::vector<Group> groups_;
  uint64_t recorded_ = 0;
  uint64_t regroups_ = 0;
  // Scratch for Regroup (kept to avoid reallocation).
  std::unordered_map<GroupKey, uint32_t, KeyHash> previous_;
  // The nodes of the last Record (traces repeat a tool / category / user in
  // runs: one compare instead of three hash lookups). unordered_map nodes
  // never move and are erased only by Regroup, which empties the memo; a
  // copy of the grouping starts with an empty memo (its own maps).
  struct LastNodes {
    LastNodes() = default;
    LastNodes(const LastNodes&) {}
    LastNodes& operator=(const LastNodes&) {
      tool = nullptr;
      cat = nullptr;
      user = nullptr;
      return *this;
    }
    UserKey key{};
    Node* tool = nullptr;
    Node* cat = nullptr;
    Node* user = nullptr;  // only with group_by_user
    uint32_t group = 0;    // what those nodes resolve to
  };
  LastNodes last_;
  // Records left before the next regroup (B at the start and after each).
  uint64_t until_regroup_ = 1;
};

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_POLICY_FEATURE_GROUPING_H_
