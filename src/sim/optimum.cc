// The interval ILP / LP offline optimum (see optimum.h).
//
// Invariants:
//  - every Interval has start < end (request indices), size <= capacity,
//    weight > 0 and is TTL-feasible measured from its start.
//  - the flow model has one node per distinct interval end point (sorted);
//    central arc j carries the free capacity between node j and j+1, scaled
//    so the capacity is 1; interval arcs carry size/capacity * x.
//  - every GLPK call happens while SolveOptimum holds GlpkMutex() (one lock
//    around the whole solve phase); each problem object is deleted before
//    the lock is released. The time limit counts from the lock, not from
//    the wait for it.
#include "src/sim/optimum.h"

#include <glpk.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace toolcache::sim {
namespace {

struct Interval {
  uint64_t start;  // request index p (the fetch)
  uint64_t end;    // request index i (the hit)
  uint64_t size;
  double weight;  // objective value of the hit
  double latency;
  double cost;
  bool fixed = false;  // provably chosen in an optimum (never binds)
};

// A run row: the intervals `members` (consecutive intervals k..l of one
// object) cannot all be chosen unless the run continues from an earlier
// fetch: sum(x_members) - x_pred <= |members| - 1. pred = kNoPred when no
// interval ends where k starts (then k always starts a run).
constexpr size_t kNoPred = std::numeric_limits<size_t>::max();
struct RunRow {
  std::vector<size_t> members;
  size_t pred = kNoPred;
};

std::mutex& GlpkMutex() {
  static std::mutex m;
  return m;
}

double WeightOf(const Request& r, OptimumObjective objective) {
  switch (objective) {
    case OptimumObjective::kHits:
      return 1;
    case OptimumObjective::kLatency:
      return r.latency;
    case OptimumObjective::kCost:
      return r.cost;
  }
  return 0;
}

// Range-max segment tree over the "everything cached" load per time index.
class RangeMax {
 public:
  explicit RangeMax(const std::vector<double>& v) : n_(v.size()) {
    tree_.assign(2 * n_, 0);
    std::copy(v.begin(), v.end(), tree_.begin() + n_);
    for (size_t i = n_; i-- > 1;)
      tree_[i] = std::max(tree_[2 * i], tree_[2 * i + 1]);
  }
  // max over [lo, hi).
  double Max(size_t lo, size_t hi) const {
    double m = 0;
    for (lo += n_, hi += n_; lo < hi; lo >>= 1, hi >>= 1) {
      if (lo & 1) m = std::max(m, tree_[lo++]);
      if (hi & 1) m = std::max(m, tree_[--hi]);
    }
    return m;
  }

 private:
  size_t n_;
  std::vector<double> tree_;
};

struct Solution {
  std::vector<double> x;  // per interval, in [0, 1]
  bool exact = false;
  std::string method;
  // When set (not exact): an upper bound on the objective tighter than the
  // x values give (branch and bound's best bound per component).
  std::optional<double> bound;
  std::optional<double> lower;  // best 0/1 value found, when known
};

// glp_simplex, and once more with the dual simplex when the primal one fails
// numerically (GLPK 5's primal simplex can stop with "trow[q] = 0.0",
// GLP_EFAIL, on the highly degenerate 0/±1 run rows). True when optimal.
// Adds one row per run to `lp` ("not all intervals of the run, unless its
// predecessor is kept too") and its coefficients to the (ia, ja, ar)
// triplets; `col_of` maps an interval to its column.
void AppendRunRows(glp_prob* lp, const std::vector<RunRow>& run_rows,
                   const std::unordered_map<size_t, int>& col_of,
                   std::vector<int>& ia, std::vector<int>& ja,
                   std::vector<double>& ar) {
  const int first = glp_add_rows(lp, static_cast<int>(run_rows.size()));
  for (size_t r = 0; r < run_rows.size(); ++r) {
    const int row = first + static_cast<int>(r);
    glp_set_row_bnds(lp, row, GLP_UP, 0.0,
                     static_cast<double>(run_rows[r].members.size() - 1));
    for (size_t k : run_rows[r].members) {
      ia.push_back(row);
      ja.push_back(col_of.at(k));
      ar.push_back(1.0);
    }
    if (run_rows[r].pred != kNoPred) {
      ia.push_back(row);
      ja.push_back(col_of.at(run_rows[r].pred));
      ar.push_back(-1.0);
    }
  }
}

bool SimplexWithRetry(glp_prob* lp, glp_smcp* sp) {
  const auto t0 = std::chrono::steady_clock::now();
  int rc = glp_simplex(lp, sp);
  if (rc != 0 && rc != GLP_ETMLIM) {
    const double used_ms = std::chrono::duration<double, std::milli>(
                               std::chrono::steady_clock::now() - t0)
                               .count();
    if (used_ms >= sp->tm_lim) return false;  // the budget is spent
    sp->tm_lim = std::max(1, static_cast<int>(sp->tm_lim - used_ms));
    glp_std_basis(lp);
    sp->meth = GLP_DUALP;
    rc = glp_simplex(lp, sp);
  }
  return rc == 0 && glp_get_status(lp) == GLP_OPT;
}

// The LP path: the flow model of the non-fixed intervals, solved as an LP
// (x in [0, 1]); its value bounds the 0/1 optimum from above.
Solution SolveLp(const std::vector<Interval>& iv,
                 const std::vector<RunRow>& run_rows, uint64_t capacity,
                 double time_limit_seconds) {
  Solution sol;
  sol.x.assign(iv.size(), 0);
  std::vector<size_t> free_iv;
  std::vector<uint64_t> points;
  for (size_t k = 0; k < iv.size(); ++k) {
    if (iv[k].fixed) {
      sol.x[k] = 1;
      continue;
    }
    free_iv.push_back(k);
    points.push_back(iv[k].start);
    points.push_back(iv[k].end);
  }
  if (free_iv.empty()) {
    sol.exact = true;
    sol.method = "all-intervals-fit";
    return sol;
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  auto node_of = [&](uint64_t t) {
    return static_cast<int>(std::lower_bound(points.begin(), points.end(), t) -
                            points.begin());
  };
  const int m = static_cast<int>(points.size());  // nodes; m >= 2
  const double cap = static_cast<double>(capacity);

  glp_term_out(GLP_OFF);  // REQUIRES: GlpkMutex() held (SolveOptimum)
  glp_prob* lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MAX);
  // Rows 1..m-1: conservation at nodes 0..m-2 (the last one is implied).
  glp_add_rows(lp, m - 1);
  for (int j = 0; j < m - 1; ++j) {
    if (j == 0) {
      glp_set_row_bnds(lp, j + 1, GLP_FX, -1.0, -1.0);
    } else {
      glp_set_row_bnds(lp, j + 1, GLP_FX, 0.0, 0.0);
    }
  }
  // Columns 1..m-1: central arcs f_j >= 0; then one per free interval.
  const int n_central = m - 1;
  const int n_cols = n_central + static_cast<int>(free_iv.size());
  glp_add_cols(lp, n_cols);
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0};
  auto put = [&](int row_node, int col, double v) {
    if (row_node >= m - 1) return;  // the implied last row
    ia.push_back(row_node + 1);
    ja.push_back(col);
    ar.push_back(v);
  };
  for (int j = 0; j < n_central; ++j) {
    const int col = j + 1;
    glp_set_col_bnds(lp, col, GLP_LO, 0.0, 0.0);
    put(j, col, -1.0);     // leaves node j
    put(j + 1, col, 1.0);  // enters node j+1
  }
  for (size_t c = 0; c < free_iv.size(); ++c) {
    const Interval& v = iv[free_iv[c]];
    const int col = n_central + 1 + static_cast<int>(c);
    glp_set_col_bnds(lp, col, GLP_DB, 0.0, 1.0);
    glp_set_obj_coef(lp, col, v.weight);
    const double s = static_cast<double>(v.size) / cap;
    put(node_of(v.start), col, -s);
    put(node_of(v.end), col, s);
  }
  // Run rows: not all intervals of a run that outlives its fetch.
  if (!run_rows.empty()) {
    std::unordered_map<size_t, int> col_of;
    for (size_t c = 0; c < free_iv.size(); ++c) {
      col_of[free_iv[c]] = n_central + 1 + static_cast<int>(c);
    }
    AppendRunRows(lp, run_rows, col_of, ia, ja, ar);
  }
  glp_load_matrix(lp, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(),
                  ar.data());

  const auto t0 = std::chrono::steady_clock::now();
  auto remaining_ms = [&]() {
    const double used =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    return static_cast<int>(
        std::clamp((time_limit_seconds - used) * 1000.0, 1.0, 2.0e9));
  };
  glp_smcp sp;
  glp_init_smcp(&sp);
  sp.msg_lev = GLP_MSG_OFF;
  // Choice: no presolver. It scales the problem first (glp_scale_prob),
  // which ignores tm_lim and took minutes on 50k requests; the matrix is
  // already scaled (coefficients in [-1, 1], capacity 1).
  sp.presolve = GLP_OFF;
  sp.tm_lim = remaining_ms();
  const bool lp_ok = SimplexWithRetry(lp, &sp);
  std::vector<double> lp_x(free_iv.size(), 0);
  if (lp_ok) {
    for (size_t c = 0; c < free_iv.size(); ++c) {
      lp_x[c] = std::clamp(
          glp_get_col_prim(lp, n_central + 1 + static_cast<int>(c)), 0.0, 1.0);
    }
  }
  glp_delete_prob(lp);
  glp_free_env();
  if (lp_ok) {
    for (size_t c = 0; c < free_iv.size(); ++c) sol.x[free_iv[c]] = lp_x[c];
    sol.exact = false;
    sol.method = "lp-relaxation";
    return sol;
  }
  // The LP did not finish: every interval, the loosest valid bound.
  for (size_t k : free_iv) sol.x[k] = 1;
  sol.exact = false;
  sol.method = "all-intervals bound (lp time limit)";
  return sol;
}

// Union-find over interval indices.
class Components {
 public:
  explicit Components(size_t n) : parent_(n) {
    for (size_t i = 0; i < n; ++i) parent_[i] = i;
  }
  size_t Find(size_t a) {
    while (parent_[a] != a) a = parent_[a] = parent_[parent_[a]];
    return a;
  }
  void Union(size_t a, size_t b) { parent_[Find(a)] = Find(b); }

 private:
  std::vector<size_t> parent_;
};

// One knapsack row: the free intervals active at a time point whose load
// can exceed the capacity.
using Row = std::vector<size_t>;

// The maximal binding rows: sweep the end points (an interval covers
// [start, end)); a row is emitted after the last start before an end, where
// the active set is maximal, and only if its total size exceeds capacity.
std::vector<Row> BindingRows(const std::vector<Interval>& iv,
                             const std::vector<size_t>& free_iv,
                             uint64_t capacity) {
  struct Event {
    uint64_t time;
    int kind;  // 0 = end (processed first), 1 = start
    size_t k;
  };
  std::vector<Event> ev;
  ev.reserve(2 * free_iv.size());
  for (size_t k : free_iv) {
    ev.push_back({iv[k].start, 1, k});
    ev.push_back({iv[k].end, 0, k});
  }
  std::sort(ev.begin(), ev.end(), [](const Event& a, const Event& b) {
    return a.time != b.time ? a.time < b.time : a.kind < b.kind;
  });
  std::vector<Row> rows;
  std::vector<size_t> active;
  std::unordered_map<size_t, size_t> pos;  // interval -> index in active
  double load = 0;
  bool grew = false;  // a start since the last emitted row
  for (const Event& e : ev) {
    if (e.kind == 0) {
      if (grew && load > static_cast<double>(capacity)) rows.push_back(active);
      grew = false;
      const size_t at = pos[e.k];
      pos[active.back()] = at;
      active[at] = active.back();
      active.pop_back();
      pos.erase(e.k);
      load -= static_cast<double>(iv[e.k].size);
    } else {
      pos[e.k] = active.size();
      active.push_back(e.k);
      load += static_cast<double>(iv[e.k].size);
      grew = true;
    }
  }
  return rows;
}

struct ComponentResult {
  bool optimal = false;  // 0/1 optimum found
  bool lp_ok = false;
  // An upper bound on the component's 0/1 optimum: the optimum itself, or
  // the least of the LP value and branch and bound's best open node.
  double bound = 0;
  double incumbent = 0;  // best 0/1 value found (a lower bound)
};

// Branch-and-bound callback state: a hard deadline (GLPK's tm_lim is only
// checked between phases) and the best global bound seen.
struct SearchState {
  std::chrono::steady_clock::time_point deadline;
  double best_bound = std::numeric_limits<double>::infinity();
};

void OnSearchEvent(glp_tree* tree, void* info) {
  auto* st = static_cast<SearchState*>(info);
  const int best = glp_ios_best_node(tree);
  if (best != 0) {
    st->best_bound = std::min(st->best_bound, glp_ios_node_bound(tree, best));
  }
  // The global bound implied by the reported gap to the incumbent.
  glp_prob* p = glp_ios_get_prob(tree);
  if (glp_mip_status(p) == GLP_FEAS || glp_mip_status(p) == GLP_OPT) {
    const double inc = glp_mip_obj_val(p);
    const double gap = glp_ios_mip_gap(tree);
    if (std::isfinite(gap)) {
      st->best_bound = std::min(
          st->best_bound, inc + gap * (std::fabs(inc) +
                                       std::numeric_limits<double>::epsilon()));
    }
  }
  if (std::chrono::steady_clock::now() >= st->deadline) {
    glp_ios_terminate(tree);
  }
}

// Solves one component's knapsack-row ILP. x receives the 0/1 optimum, or
// the LP values when branch and bound did not finish.
ComponentResult SolveComponent(const std::vector<Interval>& iv,
                               const std::vector<size_t>& cols,
                               const std::vector<Row>& rows,
                               const std::vector<RunRow>& run_rows,
                               uint64_t capacity, int time_limit_ms,
                               std::vector<double>& x) {
  ComponentResult res;
  std::unordered_map<size_t, int> col_of;
  for (size_t c = 0; c < cols.size(); ++c) {
    col_of[cols[c]] = static_cast<int>(c) + 1;
  }
  const double cap = static_cast<double>(capacity);
  glp_term_out(GLP_OFF);  // REQUIRES: GlpkMutex() held (SolveOptimum)
  glp_prob* lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MAX);
  glp_add_cols(lp, static_cast<int>(cols.size()));
  for (size_t c = 0; c < cols.size(); ++c) {
    const int col = static_cast<int>(c) + 1;
    glp_set_col_kind(lp, col, GLP_BV);
    glp_set_obj_coef(lp, col, iv[cols[c]].weight);
  }
  // GLPK aborts the process on glp_add_rows(0): guard every call.
  if (!rows.empty()) glp_add_rows(lp, static_cast<int>(rows.size()));
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0};
  for (size_t r = 0; r < rows.size(); ++r) {
    // A row whose intervals all have one size s is a cardinality row:
    // "at most floor(capacity / s) of them" is the same 0/1 set and has an
    // integral LP (interval rows are consecutive-ones), which GLPK's cuts
    // did not find: a 542-request trace of equal sizes went from a 60 s
    // time-limit bound to exact.
    const uint64_t s0 = iv[rows[r].front()].size;
    const bool uniform =
        std::all_of(rows[r].begin(), rows[r].end(),
                    [&](size_t k) { return iv[k].size == s0; });
    glp_set_row_bnds(lp, static_cast<int>(r) + 1, GLP_UP, 0.0,
                     uniform ? static_cast<double>(capacity / s0) : 1.0);
    for (size_t k : rows[r]) {
      ia.push_back(static_cast<int>(r) + 1);
      ja.push_back(col_of[k]);
      ar.push_back(uniform ? 1.0 : static_cast<double>(iv[k].size) / cap);
    }
  }
  if (!run_rows.empty()) {
    AppendRunRows(lp, run_rows, col_of, ia, ja, ar);
  }
  glp_load_matrix(lp, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(),
                  ar.data());
  const auto t0 = std::chrono::steady_clock::now();
  auto remaining_ms = [&]() {
    const double used = std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - t0)
                            .count();
    return static_cast<int>(
        std::max(1.0, static_cast<double>(time_limit_ms) - used));
  };
  glp_smcp sp;
  glp_init_smcp(&sp);
  sp.msg_lev = GLP_MSG_OFF;
  sp.tm_lim = remaining_ms();
  res.lp_ok = SimplexWithRetry(lp, &sp);
  if (res.lp_ok) {
    res.bound = glp_get_obj_val(lp);
    // Rounding the LP's fractional intervals down is feasible.
    for (size_t c = 0; c < cols.size(); ++c) {
      if (glp_get_col_prim(lp, static_cast<int>(c) + 1) > 1 - 1e-9) {
        res.incumbent += iv[cols[c]].weight;
      }
    }
    for (size_t c = 0; c < cols.size(); ++c) {
      x[cols[c]] =
          std::clamp(glp_get_col_prim(lp, static_cast<int>(c) + 1), 0.0, 1.0);
    }
    glp_iocp ip;
    glp_init_iocp(&ip);
    ip.msg_lev = GLP_MSG_OFF;
    ip.presolve = GLP_OFF;  // start from the optimal LP basis above
    ip.cov_cuts = GLP_ON;   // knapsack cover cuts: every row is a knapsack
    ip.clq_cuts = GLP_ON;
    ip.mir_cuts = GLP_ON;
    ip.gmi_cuts = GLP_ON;
    ip.fp_heur = GLP_ON;
    ip.tm_lim = remaining_ms();
    SearchState state;
    state.deadline = std::chrono::steady_clock::now() +
                     std::chrono::milliseconds(remaining_ms());
    ip.cb_func = &OnSearchEvent;
    ip.cb_info = &state;
    const int rc = glp_intopt(lp, &ip);
    const int status = glp_mip_status(lp);
    if (status == GLP_OPT || status == GLP_FEAS) {
      res.incumbent = std::max(res.incumbent, glp_mip_obj_val(lp));
    }
    if (rc == 0 && status == GLP_OPT) {
      res.optimal = true;
      res.incumbent = glp_mip_obj_val(lp);
      res.bound = res.incumbent;
      for (size_t c = 0; c < cols.size(); ++c) {
        x[cols[c]] =
            glp_mip_col_val(lp, static_cast<int>(c) + 1) > 0.5 ? 1.0 : 0.0;
      }
    } else {
      res.bound =
          std::max(res.incumbent, std::min(res.bound, state.best_bound));
    }
  }
  glp_delete_prob(lp);
  glp_free_env();
  return res;
}

// The exact path: split the free intervals into independent components
// (intervals sharing a binding row) and solve each component's ILP.
Solution SolveExact(std::vector<Interval>& iv,
                    const std::vector<RunRow>& run_rows, uint64_t capacity,
                    double time_limit_seconds) {
  Solution sol;
  sol.x.assign(iv.size(), 0);
  std::vector<size_t> free_iv;
  for (size_t k = 0; k < iv.size(); ++k) {
    if (iv[k].fixed) {
      sol.x[k] = 1;
    } else {
      free_iv.push_back(k);
    }
  }
  const std::vector<Row> rows = BindingRows(iv, free_iv, capacity);
  // Intervals in no binding row can all be taken.
  std::vector<uint8_t> in_row(iv.size(), 0);
  Components comp(iv.size());
  for (const Row& row : rows) {
    for (size_t k : row) {
      in_row[k] = 1;
      comp.Union(k, row.front());
    }
  }
  for (const RunRow& row : run_rows) {
    for (size_t k : row.members) {
      in_row[k] = 1;
      comp.Union(k, row.members.front());
    }
    if (row.pred != kNoPred) {
      in_row[row.pred] = 1;
      comp.Union(row.pred, row.members.front());
    }
  }
  std::unordered_map<size_t, std::vector<size_t>> cols_of;
  for (size_t k : free_iv) {
    if (!in_row[k]) {
      sol.x[k] = 1;
    } else {
      cols_of[comp.Find(k)].push_back(k);
    }
  }
  std::unordered_map<size_t, std::vector<Row>> rows_of;
  for (const Row& row : rows) rows_of[comp.Find(row.front())].push_back(row);
  std::unordered_map<size_t, std::vector<RunRow>> run_rows_of;
  for (const RunRow& row : run_rows) {
    run_rows_of[comp.Find(row.members.front())].push_back(row);
  }
  if (cols_of.empty()) {
    sol.exact = true;
    sol.method = "all-intervals-fit";
    return sol;
  }
  // Deterministic order: by smallest interval index.
  std::vector<std::pair<size_t, size_t>> order;  // (min index, root)
  for (const auto& [root, cols] : cols_of) {
    order.push_back({*std::min_element(cols.begin(), cols.end()), root});
  }
  std::sort(order.begin(), order.end());
  const auto t0 = std::chrono::steady_clock::now();
  bool all_optimal = true;
  // Outside the components every interval is taken (x = 1 above).
  double bound = 0, lower = 0;
  for (size_t k = 0; k < iv.size(); ++k) {
    if (sol.x[k] == 1) bound += iv[k].weight;
  }
  lower = bound;
  for (size_t c = 0; c < order.size(); ++c) {
    const size_t root = order[c].second;
    const double used =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    // Choice: each remaining component gets an equal share of the time left.
    const double share =
        std::max(0.001, (time_limit_seconds - used) /
                            static_cast<double>(order.size() - c));
    const ComponentResult r =
        SolveComponent(iv, cols_of[root], rows_of[root], run_rows_of[root],
                       capacity, static_cast<int>(share * 1000.0), sol.x);
    if (!r.lp_ok) {
      // No bound either: take every interval of the component.
      double all = 0;
      for (size_t k : cols_of[root]) {
        sol.x[k] = 1;
        all += iv[k].weight;
      }
      bound += all;
    } else {
      bound += r.bound;
      lower += r.incumbent;
    }
    all_optimal = all_optimal && r.optimal;
  }
  sol.exact = all_optimal;
  sol.method = all_optimal ? "ilp" : "ilp bound (time limit)";
  if (!all_optimal) {
    sol.bound = bound;
    sol.lower = lower;
  }
  return sol;
}

}  // namespace

Result<OptimumResult> SolveOptimum(std::span<const Request> reqs,
                                   std::span<const uint8_t> cacheable,
                                   uint64_t capacity_bytes,
                                   OptimumObjective objective,
                                   const OptimumOptions& options) {
  if (cacheable.size() != reqs.size()) {
    return InvalidArgument("SolveOptimum: " + std::to_string(reqs.size()) +
                           " requests but " + std::to_string(cacheable.size()) +
                           " cacheable flags");
  }
  if (!(options.time_limit_seconds > 0)) {
    return InvalidArgument("SolveOptimum: time_limit_seconds must be > 0");
  }
  for (size_t i = 0; i < reqs.size(); ++i) {
    if (!cacheable[i]) continue;
    const Request& r = reqs[i];
    if (std::isnan(r.now) || std::isnan(r.ttl) || !(r.latency >= 0) ||
        !(r.cost >= 0) || std::isinf(r.latency) || std::isinf(r.cost)) {
      return InvalidArgument(
          "SolveOptimum: request " + std::to_string(i) +
          " has a NaN time/ttl or a negative or non-finite latency/cost");
    }
  }

  if (!options.dies_at.empty() && options.dies_at.size() != reqs.size()) {
    return InvalidArgument(
        "SolveOptimum: " + std::to_string(reqs.size()) + " requests but " +
        std::to_string(options.dies_at.size()) + " dies_at entries");
  }
  auto dies_at = [&](uint64_t p) {
    return options.dies_at.empty() ? std::numeric_limits<uint64_t>::max()
                                   : options.dies_at[p];
  };
  for (size_t p = 0; p < options.dies_at.size(); ++p) {
    if (cacheable[p] && options.dies_at[p] <= p) {
      return InvalidArgument("SolveOptimum: dies_at of request " +
                             std::to_string(p) + " is not after it");
    }
  }
  const auto t0 = std::chrono::steady_clock::now();

  // Intervals between consecutive cacheable requests of the same id.
  std::vector<Interval> iv;
  std::unordered_map<ObjectId, uint64_t> last;
  last.reserve(reqs.size());
  for (uint64_t i = 0; i < reqs.size(); ++i) {
    if (!cacheable[i]) continue;
    const Request& r = reqs[i];
    auto [it, fresh] = last.try_emplace(r.id, i);
    if (fresh) continue;
    const uint64_t p = it->second;
    it->second = i;
    const Request& f = reqs[p];
    const uint64_t size = std::max<uint64_t>(f.size, 1);
    const double weight = WeightOf(r, objective);
    // Paper-silent: stale from its own start -> dropped (runs of hits are
    // limited by the run rows below); the size is the one fetched at p.
    const bool fresh_enough = r.now < f.now + f.ttl;
    // A worthless hit is dropped (a refetch at i is never worse: a later
    // expiry and death), unless i cannot start a run of its own (an error
    // result is never inserted): then keeping p's entry through i may be
    // the only way to the hits after i.
    const bool needed_as_link = dies_at(i) <= i + 1;
    if (size > capacity_bytes || !fresh_enough ||
        (!(weight > 0) && !needed_as_link)) {
      continue;
    }
    iv.push_back({p, i, size, std::max(weight, 0.0), r.latency, r.cost});
  }

  // Run rows: consecutive chosen intervals k..l of one object are one cached
  // entry fetched at start(k) when the interval ending at start(k) (pred) is
  // not chosen; that entry is gone once its TTL expires (time) or the
  // replay's invalidation rule erases it (dies_at, a request index), so the
  // shortest run k..l ending at or after either gets
  //   x_k + ... + x_l - x_pred <= l - k,
  // which binds only when k really starts a run. Intervals are not dropped
  // for invalidation: an error request cannot start a run but can be a hit
  // inside one.
  // Exact 0/1 solve (ILP) up to max_exact_requests, LP relaxation above.
  const bool exact_path = reqs.size() <= options.max_exact_requests;
  std::vector<RunRow> run_rows;
  std::vector<uint8_t> linked(iv.size(), 0);
  uint64_t dropped_rows = 0;
  {
    std::vector<size_t> starting_at(reqs.size(), kNoPred);
    std::vector<size_t> ending_at(reqs.size(), kNoPred);
    for (size_t k = 0; k < iv.size(); ++k) {
      starting_at[iv[k].start] = k;
      ending_at[iv[k].end] = k;
    }
    // Choice: run rows longer than this are dropped (each dropped row can
    // only raise the value, so the result stays an upper bound and is
    // reported as not exact): 4096 intervals on the exact path (bounded
    // work on hot objects), 64 on the LP path (bounded memory).
    const size_t max_run = exact_path ? 4096 : 64;
    // Choice: at most 4M run-row non-zeros (~250 MB in GLPK); the shortest
    // rows are kept.
    constexpr size_t kMaxRunNonZeros = 4'000'000;
    size_t nonzeros = 0;
    // Per interval: the latest expiry / death of any earlier fetch in its
    // chain (intervals linked through pred), to tell when a run through k
    // that started earlier must die no later than one started at k.
    constexpr double kInf = std::numeric_limits<double>::infinity();
    auto expiry_of = [&](uint64_t p) {
      const Request& f = reqs[p];
      return std::isfinite(f.ttl) ? f.now + f.ttl : kInf;
    };
    std::vector<double> earlier_expiry(iv.size(), -kInf);
    std::vector<uint64_t> earlier_death(iv.size(), 0);
    for (size_t k = 0; k < iv.size(); ++k) {
      const size_t pred = ending_at[iv[k].start];
      if (pred == kNoPred) continue;  // iv is sorted by end: pred < k
      earlier_expiry[k] =
          std::max(earlier_expiry[pred], expiry_of(iv[pred].start));
      earlier_death[k] = std::max(earlier_death[pred], dies_at(iv[pred].start));
    }
    for (size_t k = 0; k < iv.size(); ++k) {
      const double expiry = expiry_of(iv[k].start);
      const uint64_t death = dies_at(iv[k].start);
      RunRow row;
      row.pred = ending_at[iv[k].start];
      // The row may drop its -x_pred term (the stronger, classic "not all
      // of k..l") when every run reaching k from an earlier fetch dies no
      // later: earlier expiries and deaths are <= k's, and k's death is not
      // the "cannot start" p + 1 of an error result (or a COMMAND right
      // after it, which is indistinguishable and equally safe to keep).
      if (row.pred != kNoPred && death > iv[k].start + 1 &&
          earlier_expiry[k] <= expiry && earlier_death[k] <= death) {
        row.pred = kNoPred;
      }
      size_t l = k;
      bool ends = false;
      while (true) {
        row.members.push_back(l);
        if (iv[l].end >= death || reqs[iv[l].end].now >= expiry) {
          ends = true;
          break;
        }
        if (row.members.size() > max_run) break;
        const size_t next = starting_at[iv[l].end];
        if (next == kNoPred) break;
        l = next;
      }
      if (!ends) {
        if (row.members.size() > max_run) ++dropped_rows;
        continue;
      }
      nonzeros += row.members.size() + (row.pred != kNoPred);
      run_rows.push_back(std::move(row));
    }
    if (nonzeros > kMaxRunNonZeros) {
      std::stable_sort(run_rows.begin(), run_rows.end(),
                       [](const RunRow& a, const RunRow& b) {
                         return a.members.size() < b.members.size();
                       });
      size_t kept = 0, used = 0;
      while (kept < run_rows.size()) {
        const size_t w = run_rows[kept].members.size() + 1;
        if (used + w > kMaxRunNonZeros) break;
        used += w;
        ++kept;
      }
      dropped_rows += run_rows.size() - kept;
      run_rows.resize(kept);
    }
    for (const RunRow& row : run_rows) {
      for (size_t j : row.members) linked[j] = 1;
      if (row.pred != kNoPred) linked[row.pred] = 1;
    }
  }

  // Fix intervals that cannot bind: the load with every interval cached
  // never exceeds the capacity anywhere inside them (and no run row
  // involves them).
  if (!iv.empty()) {
    std::vector<double> diff(reqs.size() + 1, 0);
    for (const Interval& v : iv) {
      diff[v.start] += static_cast<double>(v.size);
      diff[v.end] -= static_cast<double>(v.size);
    }
    std::vector<double> load(reqs.size(), 0);
    double run = 0;
    for (size_t t = 0; t < reqs.size(); ++t) load[t] = run += diff[t];
    const RangeMax max_load(load);
    // Doubles add sizes exactly up to 2^53 bytes; compare with a margin.
    const double cap = static_cast<double>(capacity_bytes);
    for (Interval& v : iv) {
      v.fixed = max_load.Max(v.start, v.end) <= cap * (1 - 1e-12);
    }
    for (size_t k = 0; k < iv.size(); ++k) {
      if (linked[k]) iv[k].fixed = false;
    }
  }

  // GLPK is serialized: hold the lock for the whole solve, and start the
  // solver's share of the budget once it is held, so that concurrent
  // solves do not spend each other's time limit waiting.
  const double used =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  std::unique_lock<std::mutex> glpk(GlpkMutex());
  const double left = std::max(0.001, options.time_limit_seconds - used);
  Solution sol = exact_path ? SolveExact(iv, run_rows, capacity_bytes, left)
                            : SolveLp(iv, run_rows, capacity_bytes, left);
  glpk.unlock();
  if (dropped_rows > 0) {
    // The value is an upper bound, not the optimum.
    if (sol.exact) {
      double value = 0;
      for (size_t k = 0; k < iv.size(); ++k) value += sol.x[k] * iv[k].weight;
      sol.bound = value;
    }
    sol.exact = false;
    sol.method += " (" + std::to_string(dropped_rows) + " run rows dropped)";
  }

  OptimumResult out;
  out.exact = sol.exact;
  out.method = sol.method;
  out.intervals = iv.size();
  double hits = 0;
  for (size_t k = 0; k < iv.size(); ++k) {
    const double x = sol.x[k];
    hits += x;
    out.saved_latency += x * iv[k].latency;
    out.saved_cost += x * iv[k].cost;
    out.objective += x * iv[k].weight;
  }
  out.hits = static_cast<uint64_t>(std::floor(hits + 1e-6));
  out.lower_bound = out.exact ? out.objective : 0;
  if (sol.lower.has_value()) out.lower_bound = *sol.lower;
  if (!sol.exact && sol.method.starts_with("lp-relaxation")) {
    // Rounding the fractional intervals down is feasible.
    double lower = 0;
    for (size_t k = 0; k < iv.size(); ++k) {
      if (sol.x[k] > 1 - 1e-9) lower += iv[k].weight;
    }
    out.lower_bound = lower;
  }
  if (sol.bound.has_value()) {
    // Report the tightest upper bound for the optimized quantity.
    out.objective = *sol.bound;
    switch (objective) {
      case OptimumObjective::kHits:
        out.hits = static_cast<uint64_t>(std::floor(*sol.bound + 1e-6));
        break;
      case OptimumObjective::kLatency:
        out.saved_latency = *sol.bound;
        break;
      case OptimumObjective::kCost:
        out.saved_cost = *sol.bound;
        break;
    }
  }
  if (dropped_rows > 0) out.lower_bound = 0;  // x may break a dropped row
  if (iv.empty()) {
    out.exact = true;
    out.method = "all-intervals-fit";
    out.lower_bound = 0;
  }
  return out;
}

}  // namespace toolcache::sim
