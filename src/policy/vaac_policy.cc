// GroupBanditPolicy: CACA and VAAC (see vaac_policy.h).
//
// Invariants:
//  - every live slot of the bound CacheCore is in exactly one of lists_'
//    two lists; list kMain then list kWindow, front to back, is the recency
//    order (most recent first) and slots_[s].tick strictly decreases along
//    it (ticks are unique).
//  - LRU mode uses kMain only. Both VLRU modes keep
//    |kWindow| == WindowTarget(n) after every hook (n = live entries), so
//    kWindow holds exactly the least recent ceil(0.1 n) entries the paper's
//    form scans. Sampled mode: window_ holds the same slots densely and
//    slots_[s].window_pos indexes it. Exact mode: window_queue_ holds them
//    ordered by (EntryScore, tick), and window_pos is 0 for a member.
//  - An entry's EntryScore changes only on OnInsert/OnHit, and OnHit takes
//    the entry out of the window first: a window member's queued score is
//    its current score, so the queue's top is the scan's answer (lowest
//    score, the least recent -- smallest tick -- among equal scores).
//  - an entry enters the window only from the back of kMain, so its tick
//    exceeds every window member's: the queue's arrival order is the tick
//    order (ScoreClassQueue's precondition).
//  - Σ_i N_i over the current groups <= rounds_ (counters of groups that
//    were not formed again at a regroup are dropped).
//  - every hook is O(1) amortized except Admit's bandit round (O(groups))
//    and the exact form's window moves (O(1) each, O(log classes) when a
//    score class is made or dropped; amortized O(1) moves per hook); Victim
//    is O(1) amortized in exact mode.
#include "src/policy/vaac_policy.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "src/policy/factories.h"

namespace toolcache {
namespace {

// Reads knob `name` and clamps it into [lo, hi], warning when it had to.
double Knob(const PolicyParams& params, std::string_view policy,
            std::string_view name, double fallback, double lo, double hi) {
  const double v = KnobOr(params, name, fallback);
  if (v < lo || v > hi) {
    const double clamped = std::clamp(v, lo, hi);
    spdlog::warn("policy {}: knob {}={} is outside [{}, {}]; using {}", policy,
                 name, v, lo, hi, clamped);
    return clamped;
  }
  return v;
}

}  // namespace

VaacOptions VaacOptionsFromParams(const PolicyParams& params,
                                  VaacVariant variant) {
  VaacOptions o;
  switch (variant) {
    case VaacVariant::kCaca:
      o.name = "caca";
      o.reward.use_value = false;
      o.eviction = EvictionMode::kLru;
      break;
    case VaacVariant::kVaac:
      o.name = "vaac";
      o.eviction = EvictionMode::kVlruExact;
      break;
    case VaacVariant::kVaacSampled:
      o.name = "vaac-sampled";
      o.eviction = EvictionMode::kVlruSampled;
      break;
  }
  constexpr double kInf = std::numeric_limits<double>::max();
  const std::string_view n = o.name;
  o.value.lambda1 = Knob(params, n, "lambda1", o.value.lambda1, 0, kInf);
  o.value.lambda2 = Knob(params, n, "lambda2", o.value.lambda2, 0, kInf);
  o.value.lambda3 = Knob(params, n, "lambda3", o.value.lambda3, 0, kInf);
  o.value.tau = Knob(params, n, "tau", o.value.tau, 0, kInf);
  o.grouping.t1 = Knob(params, n, "t1", o.grouping.t1, 0, kInf);
  o.grouping.hr = Knob(params, n, "hr", o.grouping.hr, 0, 1);
  o.grouping.smin = Knob(params, n, "smin", o.grouping.smin, 0, kInf);
  o.grouping.b = static_cast<uint64_t>(
      Knob(params, n, "b", static_cast<double>(o.grouping.b), 1, 1e12));
  o.grouping.group_by_user = Knob(params, n, "group_by_user", 1, 0, 1) >= 0.5;
  o.grouping.cumulative =
      Knob(params, n, "cumulative_grouping", 0, 0, 1) >= 0.5;
  o.c = Knob(params, n, "c", o.c, 0, kInf);
  o.reward.delta1 = Knob(params, n, "delta1", o.reward.delta1, 0, kInf);
  o.reward.delta2 = Knob(params, n, "delta2", o.reward.delta2, 0, kInf);
  o.reward.delta3 = Knob(params, n, "delta3", o.reward.delta3, 0, kInf);
  o.reward.delta4 = Knob(params, n, "delta4", o.reward.delta4, 0, kInf);
  o.delta5 = Knob(params, n, "delta5", o.delta5, 1e-9, kInf);
  o.window_fraction =
      Knob(params, n, "window_fraction", o.window_fraction, 1e-9, 1);
  o.sample_size = static_cast<uint32_t>(Knob(
      params, n, "sample_size", static_cast<double>(o.sample_size), 1, 1e6));
  o.admit_rule = Knob(params, n, "admit_rule", 0, 0, 1) >= 0.5
                     ? AdmitRule::kAboveMean
                     : AdmitRule::kArgmax;
  o.seed = params.seed;
  return o;
}

GroupBanditPolicy::GroupBanditPolicy(const VaacOptions& options)
    : options_(options),
      model_(options.value),
      grouping_(options.grouping),
      window_targets_(options.window_fraction),
      rng_state_(options.seed ^ 0x5eed5eed5eed5eedULL) {}

GroupBanditPolicy::SlotMeta& GroupBanditPolicy::Meta(Slot slot) {
  if (slot >= slots_.size()) {
    slots_.resize(std::max<size_t>(slot + 1, slots_.size() * 2));
  }
  return slots_[slot];
}

uint64_t GroupBanditPolicy::NextRandom() {
  // SplitMix64: fast, seeded, deterministic.
  uint64_t z = (rng_state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double GroupBanditPolicy::Reward(uint32_t index) const {
  const Group& g = grouping_.group(index);
  return GroupReward(options_.reward, g.HitRatio(), g.Level(), g.MeanValue(),
                     static_cast<double>(g.admissions));
}

double GroupBanditPolicy::CachedReward(uint32_t index) {
  if (reward_cache_regroups_ != grouping_.regroups() ||
      reward_cache_.size() != grouping_.group_count()) {
    reward_cache_.assign(grouping_.group_count(), {0, 0.0});
    reward_cache_regroups_ = grouping_.regroups();
  }
  auto& [version, reward] = reward_cache_[index];
  const uint64_t current = grouping_.group(index).version + 1;
  if (version != current) {
    version = current;
    reward = Reward(index);
  }
  return reward;
}

uint32_t GroupBanditPolicy::SelectGroup(uint32_t own) {
  // UCB_i = F_i + c * sqrt(ln t) / sqrt(N_i): F_i is cached per group and
  // only recomputed after that group's statistics changed. The bonus (a
  // logarithm) is computed on first use: when no other group is an arm the
  // argmax rule answers `own` without any UCB.
  double bonus = 0;
  bool has_bonus = false;
  const auto ucb = [&](uint32_t i) {
    const uint64_t n = grouping_.group(i).selections;
    if (n == 0) return std::numeric_limits<double>::infinity();
    if (!has_bonus) {
      bonus =
          options_.c *
          std::sqrt(rounds_ > 1 ? std::log(static_cast<double>(rounds_)) : 0.0);
      has_bonus = true;
    }
    return CachedReward(i) + bonus / std::sqrt(static_cast<double>(n));
  };
  const uint32_t n = grouping_.group_count();
  if (options_.admit_rule == AdmitRule::kAboveMean) {
    const double own_ucb = ucb(own);
    if (std::isinf(own_ucb)) return own;
    double sum = 0;
    uint32_t active = 0;
    for (uint32_t i = 0; i < n; ++i) {
      if (grouping_.group(i).accesses == 0) continue;
      const double u = i == own ? own_ucb : ucb(i);
      if (std::isinf(u)) continue;  // unexplored arms do not set the bar
      sum += u;
      ++active;
    }
    return active == 0 || own_ucb >= sum / active ? own : UINT32_MAX;
  }
  // Paper-silent tie-break: the request's own group first (so an unexplored
  // group is explored with a request that can use the admission), then the
  // lowest group index. Groups without any request in this grouping are not
  // arms yet. An unexplored own group (UCB = infinity) wins outright; the
  // own UCB is computed when the first rival arm is met (none: `own` wins
  // whatever its UCB, the common case with a single active group).
  if (grouping_.group(own).selections == 0) return own;
  uint32_t best = own;
  double best_ucb = 0;
  bool own_scored = false;
  for (uint32_t i = 0; i < n; ++i) {
    if (i == own || grouping_.group(i).accesses == 0) continue;
    if (!own_scored) {
      best_ucb = ucb(own);
      own_scored = true;
    }
    const double u = ucb(i);
    if (u > best_ucb) {
      best = i;
      best_ucb = u;
      if (std::isinf(u)) break;
    }
  }
  return best;
}

bool GroupBanditPolicy::Admit(const Request& req) {
  // Paper-silent: min/max (Eq. 1) run over every cacheable request the
  // policy sees, hits and misses alike, including this one.
  model_.Observe(req);
  const double v = model_.Value(req);
  const uint32_t own = grouping_.Record(req, /*hit=*/false, v);
  // Paper-silent: every cacheable miss is one decision round t.
  ++rounds_;
  pending_id_ = req.id;
  pending_value_ = v;
  has_pending_ = true;

  const bool fits = view_ != nullptr && view_->Fits(req.size);
  bool admit;
  uint32_t selected;
  if (fits) {
    // Paper: "all cacheable requests are admitted if space is available".
    // Paper-silent: this holds whenever the result fits without an eviction
    // (not only before the cache first fills); the round counts as a
    // selection of the request's own group.
    selected = own;
    admit = true;
  } else {
    // Paper-silent: selecting g* admits THIS request iff its group is g*
    // (Algorithm 2: "admit requests from g*"); N_g* grows either way.
    selected = SelectGroup(own);
    last_selected_ = selected;
    admit = selected == own;
    if (selected == UINT32_MAX) selected = own;  // above-mean rule: own arm
  }
  ++grouping_.group(selected).selections;
  // Paper-silent: C_i counts actual admissions of group i ("the number of
  // times the group has been admitted"), not selections.
  if (admit) {
    Group& g = grouping_.group(own);
    ++g.admissions;
    ++g.version;
  }
  return admit;
}

void GroupBanditPolicy::OnInsert(Slot slot, const Request& req) {
  const double v = has_pending_ && pending_id_ == req.id ? pending_value_
                                                         : model_.Value(req);
  has_pending_ = false;
  model_.ObserveInsertedTtl(req.ttl);
  SlotMeta& m = Meta(slot);
  m.value = static_cast<float>(v);
  m.hits = 0;
  m.window_pos = kNotInWindow;
  m.tick = ++tick_;
  lists_.PushFront(kMain, slot);
  if (options_.eviction != EvictionMode::kLru) Rebalance();
}

void GroupBanditPolicy::OnHit(Slot slot, const Request& req) {
  model_.Observe(req);
  const double v = model_.Value(req);
  grouping_.Record(req, /*hit=*/true, v);
  // A hit slot was inserted (OnInsert sized slots_ for it).
  SlotMeta& m = slots_[slot];
  // Paper-silent: an entry's v is refreshed on every hit (normalization
  // bounds move as requests arrive).
  m.value = static_cast<float>(v);
  m.hits += (m.hits != UINT32_MAX);
  m.tick = ++tick_;
  const bool from_window = lists_.ListOf(slot) == kWindow;
  if (m.window_pos != kNotInWindow) WindowRemove(slot);
  lists_.MoveToFront(kMain, slot);
  // A hit in the main part changes neither part's size nor the target (the
  // last hook left the window at its target): nothing to rebalance.
  if (from_window && options_.eviction != EvictionMode::kLru) Rebalance();
}

void GroupBanditPolicy::OnRemove(Slot slot) {
  lists_.Remove(slot);
  if (slot < slots_.size() && slots_[slot].window_pos != kNotInWindow) {
    WindowRemove(slot);
  }
  if (options_.eviction != EvictionMode::kLru) Rebalance();
}

uint64_t WindowTargets::Compute(double fraction, uint64_t n) {
  if (n == 0) return 0;
  // Paper-silent: the window is ceil(fraction * n) entries, at least 1 (the
  // epsilon keeps 0.1 * 30 at 3, not 4).
  const double w = std::ceil(fraction * static_cast<double>(n) - 1e-9);
  return std::clamp<uint64_t>(static_cast<uint64_t>(std::max(w, 1.0)), 1, n);
}

uint64_t GroupBanditPolicy::WindowTarget(uint64_t n) const {
  // Rebalance asks after every hook, for n that moves by a few entries
  // around the cache's fill level: memoized.
  return window_targets_.Get(n);
}

uint64_t GroupBanditPolicy::WindowSize() const {
  return options_.eviction == EvictionMode::kLru
             ? WindowTarget(lists_.Size(kMain))
             : lists_.Size(kWindow);
}

void GroupBanditPolicy::WindowAdd(Slot slot) {
  if (options_.eviction == EvictionMode::kVlruExact) {
    slots_[slot].window_pos = 0;
    // The newcomer is the most recent window entry (Rebalance moves the
    // least recent main entry): it arrives after every member.
    window_queue_.Add(slot, EntryScore(slot));
    return;
  }
  slots_[slot].window_pos = static_cast<uint32_t>(window_.size());
  window_.push_back(slot);
}

void GroupBanditPolicy::WindowRemove(Slot slot) {
  if (options_.eviction == EvictionMode::kVlruExact) {
    window_queue_.Remove(slot);
    slots_[slot].window_pos = kNotInWindow;
    return;
  }
  const uint32_t pos = slots_[slot].window_pos;
  const Slot last = window_.back();
  window_[pos] = last;
  slots_[last].window_pos = pos;
  window_.pop_back();
  slots_[slot].window_pos = kNotInWindow;
}

void GroupBanditPolicy::Rebalance() {
  const uint64_t target =
      WindowTarget(lists_.Size(kMain) + lists_.Size(kWindow));
  while (lists_.Size(kWindow) < target) {
    // The least recent main entry becomes the most recent window entry.
    const Slot s = lists_.Back(kMain);
    lists_.MoveToFront(kWindow, s);
    WindowAdd(s);
  }
  while (lists_.Size(kWindow) > target) {
    const Slot s = lists_.Front(kWindow);
    lists_.MoveToBack(kMain, s);
    WindowRemove(s);
  }
}

double GroupBanditPolicy::EntryScore(Slot slot) const {
  const SlotMeta& m = slots_[slot];
  // Paper-silent: h_i = hits / (hits + 1): the entry's hit ratio over its
  // accesses since insertion (the inserting miss plus its hits).
  const double h = static_cast<double>(m.hits) / (m.hits + 1.0);
  return static_cast<double>(m.value) + h + options_.delta5;
}

Slot GroupBanditPolicy::VictimExact() {
  // The paper's form: among the least recent ceil(0.1 n) entries, the
  // lowest e = log(v + h + delta5) (log is monotone: compare the argument).
  // Paper-silent tie-break: the least recent among equal scores (the
  // smallest tick). Choice: the window is kept ordered by (score, tick)
  // (see Invariants) instead of walked per eviction -- the same victim, at
  // O(1) per window move while the window's distinct scores stay (a class
  // per score; O(log classes) when one appears or empties) instead of
  // O(window) per eviction. Until session 16 a heap on (score, tick): the
  // same order, O(log window) per move.
  if (window_queue_.empty()) return kNoSlot;  // contract violation
  return window_queue_.Top();
}

Slot GroupBanditPolicy::VictimExactScan() const {
  // Walks the recency order itself (kWindow back to front, then kMain back
  // to front), not trusting the window's bookkeeping.
  const uint64_t w = WindowTarget(lists_.Size(kMain) + lists_.Size(kWindow));
  Slot s = lists_.Back(kWindow);
  if (s == kNoSlot) s = lists_.Back(kMain);
  Slot best = kNoSlot;
  double best_score = 0;
  for (uint64_t i = 0; i < w && s != kNoSlot; ++i) {
    const double e = EntryScore(s);
    if (best == kNoSlot || e < best_score) {
      best = s;
      best_score = e;
    }
    const Slot prev = lists_.Prev(s);
    s = prev != kNoSlot || lists_.ListOf(s) == kMain ? prev
                                                     : lists_.Back(kMain);
  }
  return best;
}

Slot GroupBanditPolicy::VictimSampled() {
  const uint64_t w = window_.size();
  Slot best = kNoSlot;
  double best_score = std::numeric_limits<double>::infinity();
  uint64_t best_tick = UINT64_MAX;
  auto consider = [&](Slot s) {
    const double e = EntryScore(s);
    const uint64_t tick = slots_[s].tick;
    if (e < best_score || (e == best_score && tick < best_tick)) {
      best = s;
      best_score = e;
      best_tick = tick;
    }
  };
  if (w <= options_.sample_size) {
    // Small window: score every member (same answer as the exact form).
    for (const Slot s : window_) consider(s);
  } else {
    // Paper-silent (scalable form): sample_size uniform draws with
    // replacement from the window segment.
    ++sampled_victims_;
    for (uint32_t i = 0; i < options_.sample_size; ++i) {
      consider(window_[NextRandom() % w]);
    }
  }
  return best;
}

Slot GroupBanditPolicy::Victim() {
  switch (options_.eviction) {
    case EvictionMode::kLru:
      return lists_.Back(kMain);
    case EvictionMode::kVlruExact:
      return VictimExact();
    case EvictionMode::kVlruSampled:
      return VictimSampled();
  }
  return lists_.Back(kMain);
}

uint64_t GroupBanditPolicy::MetadataBytes() const {
  uint64_t bytes =
      sizeof(SlotMeta) + SlotLists::kBytesPerSlot +
      (options_.eviction == EvictionMode::kVlruSampled ? sizeof(Slot) : 0);
  if (options_.eviction == EvictionMode::kVlruExact) {
    bytes += ScoreClassQueue::kBytesPerSlot;
    // Its classes (per distinct score, not per entry) spread over the
    // entries; without entries there is nothing to spread them over.
    const uint64_t entries = view_ != nullptr ? view_->entry_count() : 0;
    if (entries > 0) bytes += window_queue_.ClassBytes() / entries;
  }
  return bytes;
}

std::unique_ptr<Policy> MakeVaacPolicy(const PolicyParams& params) {
  return std::make_unique<GroupBanditPolicy>(
      VaacOptionsFromParams(params, VaacVariant::kVaac));
}

std::unique_ptr<Policy> MakeVaacSampledPolicy(const PolicyParams& params) {
  return std::make_unique<GroupBanditPolicy>(
      VaacOptionsFromParams(params, VaacVariant::kVaacSampled));
}

}  // namespace toolcache
