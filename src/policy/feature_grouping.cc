// FeatureGrouping (Algorithm 1 of the ToolCaching paper).
//
// Invariants:
//  - every request maps to exactly one group (GroupOf): the deepest leaf on
//    its path, else the residual group of the deepest split node on its path;
//    before the first regroup everything maps to the single root group 0.
//  - a node is split only if, in the window that formed the grouping, it had
//    accesses >= max(T1, Smin) and hit ratio <= Hr (ShouldSplit); a user node
//    is never split (the feature list ends there), and with group_by_user
//    off neither is a category node.
//  - a node with accesses < Smin in that window is never a leaf of its own:
//    its requests belong to its parent's residual group.
//  - groups_ indices are stable between two regroups; a group's (C, N)
//    survive a regroup iff a group with the same GroupKey is formed again.
//  - window mode: node counters cover only the requests since the last
//    regroup; nodes that play no role in the grouping are erased at each
//    regroup, so memory is O(B + groups).
#include "src/policy/feature_grouping.h"

#include <utility>

#include "src/policy/flat_map.h"

namespace toolcache {

size_t FeatureGrouping::KeyHash::operator()(uint32_t k) const {
  return MixId(k);
}
size_t FeatureGrouping::KeyHash::operator()(const CatKey& k) const {
  return MixId(k.category ^ MixId(k.tool + 0x9e3779b97f4a7c15ULL));
}
size_t FeatureGrouping::KeyHash::operator()(const UserKey& k) const {
  return MixId(k.category ^
               MixId((static_cast<uint64_t>(k.tool) << 32) ^ k.user));
}
size_t FeatureGrouping::KeyHash::operator()(const GroupKey& k) const {
  return MixId(k.category ^
               MixId((static_cast<uint64_t>(k.tool) << 32) ^ k.user) ^
               (static_cast<uint64_t>(k.level) << 1) ^ (k.residual ? 1 : 0));
}

FeatureGrouping::FeatureGrouping(const GroupingOptions& options)
    : options_(options) {
  if (options_.b == 0) options_.b = 1;
  until_regroup_ = options_.b;
  // Before the first regroup, one group holds everything.
  root_.group = AddGroup(GroupKey{}, Node{});
}

bool FeatureGrouping::ShouldSplit(const Node& n) const {
  const double f = static_cast<double>(n.accesses);
  if (f < options_.t1 || f < options_.smin || n.accesses == 0) return false;
  const double h = static_cast<double>(n.hits) / f;
  return h <= options_.hr;
}

int32_t FeatureGrouping::AddGroup(const GroupKey& key, const Node& seed) {
  Group g;
  g.key = key;
  g.accesses = seed.accesses;
  g.hits = seed.hits;
  g.sum_value = seed.sum_value;
  groups_.push_back(g);
  return static_cast<int32_t>(groups_.size() - 1);
}

void FeatureGrouping::AddTo(int32_t group, const Node& members) {
  Group& g = groups_[static_cast<size_t>(group)];
  g.accesses += members.accesses;
  g.hits += members.hits;
  g.sum_value += members.sum_value;
  ++g.version;
}

uint32_t FeatureGrouping::Resolve(const Node* tool, const Node* cat,
                                  const Node* user) const {
  if (!root_.split) return static_cast<uint32_t>(root_.group);
  if (tool == nullptr || !tool->split) {
    return static_cast<uint32_t>(
        tool != nullptr && tool->group != kNone ? tool->group : root_.residual);
  }
  if (cat == nullptr || !cat->split) {
    return static_cast<uint32_t>(
        cat != nullptr && cat->group != kNone ? cat->group : tool->residual);
  }
  return static_cast<uint32_t>(
      user != nullptr && user->group != kNone ? user->group : cat->residual);
}

uint32_t FeatureGrouping::GroupOf(const Request& req) const {
  if (!root_.split) return static_cast<uint32_t>(root_.group);
  const auto t = tools_.find(req.tool);
  const Node* tool = t == tools_.end() ? nullptr : &t->second;
  if (tool == nullptr || !tool->split) return Resolve(tool, nullptr, nullptr);
  const auto c = cats_.find(CatKey{req.tool, req.param_category});
  const Node* cat = c == cats_.end() ? nullptr : &c->second;
  if (cat == nullptr || !cat->split) return Resolve(tool, cat, nullptr);
  const auto u = users_.find(UserKey{req.tool, req.param_category, req.user});
  return Resolve(tool, cat, u == users_.end() ? nullptr : &u->second);
}

void FeatureGrouping::RememberNodes(const Request& req) {
  const UserKey key{req.tool, req.param_category, req.user};
  if (last_.tool == nullptr || last_.key.tool != key.tool) {
    last_.tool = &tools_[key.tool];
    last_.cat = nullptr;
  }
  if (last_.cat == nullptr || last_.key.category != key.category) {
    last_.cat = &cats_[CatKey{key.tool, key.category}];
    last_.user = nullptr;
  }
  if (options_.group_by_user &&
      (last_.user == nullptr || last_.key.user != key.user)) {
    last_.user = &users_[key];
  }
  last_.key = key;
  last_.group = Resolve(last_.tool, last_.cat,
                        options_.group_by_user ? last_.user : nullptr);
}

uint32_t FeatureGrouping::RegroupAfter(const Request& req) {
  until_regroup_ = options_.b;
  Regroup();
  return GroupOf(req);
}

void FeatureGrouping::Regroup() {
  ++regroups_;
  last_ = LastNodes();  // nodes may be erased below
  // Remember the bandit counters of the current leaves by identity.
  std::vector<Group> old = std::move(groups_);
  groups_.clear();
  previous_.clear();
  for (uint32_t i = 0; i < old.size(); ++i) previous_.emplace(old[i].key, i);
  auto add = [&](const GroupKey& key, const Node& seed) {
    const int32_t index = AddGroup(key, seed);
    if (const auto it = previous_.find(key); it != previous_.end()) {
      Group& g = groups_[static_cast<size_t>(index)];
      g.admissions = old[it->second].admissions;
      g.selections = old[it->second].selections;
    }
    return index;
  };
  auto reset_role = [](Node& n) {
    n.group = kNone;
    n.residual = kNone;
    n.split = false;
  };
  reset_role(root_);
  for (auto& [k, n] : tools_) reset_role(n);
  for (auto& [k, n] : cats_) reset_role(n);
  for (auto& [k, n] : users_) reset_role(n);

  // Algorithm 1, line 11: too few requests overall -> one group.
  if (static_cast<double>(root_.accesses) < options_.smin) {
    root_.group = add(GroupKey{}, root_);
  } else {
    root_.split = true;
    root_.residual = add(GroupKey{.level = 0, .residual = true}, Node{});
    // Level 1: tools.
    for (auto& [tool_id, n] : tools_) {
      if (n.accesses == 0) continue;
      if (ShouldSplit(n)) {
        n.split = true;
        n.residual = add(
            GroupKey{.level = 1, .residual = true, .tool = tool_id}, Node{});
      } else if (static_cast<double>(n.accesses) < options_.smin) {
        AddTo(root_.residual, n);
      } else {
        n.group = add(GroupKey{.level = 1, .tool = tool_id}, n);
      }
    }
    // Level 2: parameter categories of split tools.
    for (auto& [k, n] : cats_) {
      if (n.accesses == 0) continue;
      const auto parent = tools_.find(k.tool);
      if (parent == tools_.end() || !parent->second.split) continue;
      const GroupKey key{.level = 2, .tool = k.tool, .category = k.category};
      if (ShouldSplit(n) && options_.group_by_user) {
        n.split = true;
        GroupKey residual = key;
        residual.residual = true;
        n.residual = add(residual, Node{});
      } else if (!ShouldSplit(n) &&
                 static_cast<double>(n.accesses) < options_.smin) {
        AddTo(parent->second.residual, n);
      } else {
        // Not split (or split past the last feature: line 11) -> a leaf.
        n.group = add(key, n);
      }
    }
    // Level 3: users of split categories (always leaves or merged).
    if (options_.group_by_user) {
      for (auto& [k, n] : users_) {
        if (n.accesses == 0) continue;
        const auto parent = cats_.find(CatKey{k.tool, k.category});
        if (parent == cats_.end() || !parent->second.split) continue;
        if (!ShouldSplit(n) &&
            static_cast<double>(n.accesses) < options_.smin) {
          AddTo(parent->second.residual, n);
        } else {
          n.group = add(GroupKey{.level = 3,
                                 .tool = k.tool,
                                 .category = k.category,
                                 .user = k.user},
                        n);
        }
      }
    }
  }

  if (!options_.cumulative) {
    // Start the next window: zero the counters, drop nodes without a role.
    auto next_window = [](auto& map) {
      for (auto it = map.begin(); it != map.end();) {
        Node& n = it->second;
        if (n.group == kNone && n.residual == kNone && !n.split) {
          it = map.erase(it);
        } else {
          n.accesses = n.hits = 0;
          n.sum_value = 0;
          ++it;
        }
      }
    };
    next_window(tools_);
    next_window(cats_);
    next_window(users_);
    root_.accesses = root_.hits = 0;
    root_.sum_value = 0;
  }
}

}  // namespace toolcache
