// The cost-weighted offline optimum: the most latency (or cost, or hits) any
// cache of a given byte capacity could have saved on a request sequence,
// for variable object sizes and costs, with TTLs.
//
// Model (interval ILP, as in Berger et al., "Practical Bounds on Optimal
// Caching with Variable Object Sizes", SIGMETRICS 2018): between two
// consecutive cacheable requests p < i of the same object there is one
// interval; keeping the object cached over [p, i) makes request i a hit,
// worth i's latency, cost or 1. Choose intervals (x = 0/1) maximizing the
// total worth subject to: at every request index t, the sizes (size of the
// result fetched at p) of the chosen intervals covering t sum to at most the
// capacity.
//
// TTL and invalidation: an entry keeps the fetch time of the miss that
// inserted it, so a run of consecutive chosen intervals k..l of one object
// (one cached entry, fetched at start(k) when the interval ending there,
// pred(k), is not chosen) must end before start(k)'s expiry and before the
// request index dies_at[start(k)] at which the simulator's invalidation
// rule erases it (an error result is never inserted: dies_at = p + 1). An
// interval already stale from its own start is dropped; for each interval
// k the shortest run k..l ending at or after the expiry or dies_at gets the
// row x_k + ... + x_l - x_pred(k) <= l - k, which binds only when k starts
// a run; the -x_pred(k) term is left out (the classic, stronger row) when
// every run reaching k from an earlier fetch dies no later anyway. This is
// exact when an object's TTL, size and per-hit value do not change between its
// requests. Run rows longer than 4096 intervals (64 on the LP path), or beyond
// 4M row non-zeros, are dropped: the value can only rise (an upper bound) and
// the result says so (exact = false, method
// "... (N run rows dropped)").

// Solving: GLPK (a real LP/MIP solver). Intervals that no capacity
// constraint can bind are fixed to 1 first. Up to max_exact_requests
// requests, the rest is split into independent components (intervals that
// share a binding time point) and each is solved as a 0/1 program with
// knapsack rows (one per maximal set of overlapping intervals; a row of
// equal sizes becomes the equivalent cardinality row, whose LP is integral)
// by branch and cut: exact = true, method "ilp". If the time limit stops branch
// and bound, the reported value is the best proven upper bound (branch and
// bound's best open node, at most the LP relaxation), exact = false, method
// "ilp bound (time limit)", and lower_bound holds the best 0/1 solution found.
// Beyond max_exact_requests only the LP relaxation of a sparse min-cost-flow
// form (2 non-zeros per column) is solved: an upper bound, method
// "lp-relaxation"; it runs without GLPK's presolver (whose scaling ignored
// the time limit). If even the LP does not finish in time, every kept
// interval is reported, the loosest valid bound, method "all-intervals
// bound (lp time limit)". Tightly packed instances (objects of 10-25% of
// the capacity) can leave a gap of a few percent that GLPK does not close
// in minutes; pass a small time_limit_seconds when many solves are needed.
//
// The fields the objective did not optimize (e.g. saved_cost when solving
// for kLatency) describe the chosen solution, not their own optimum.
//
// Thread-safety: SolveOptimum may be called from several threads; calls into
// GLPK are serialized by a process-wide mutex (GLPK's environment is not
// guaranteed to be thread-local on every build). GLPK's terminal output is
// silenced.
//
// Example:
//   Result<OptimumResult> opt = SolveOptimum(requests, cacheable,
//                                            1 << 20,
//                                            OptimumObjective::kLatency);
//   if (opt.ok()) fraction = policy_saved_latency / opt->saved_latency;
#ifndef TOOLCACHE_SRC_SIM_OPTIMUM_H_
#define TOOLCACHE_SRC_SIM_OPTIMUM_H_

#include <cstdint>
#include <span>
#include <string>

#include "toolcache/policy.h"
#include "toolcache/status.h"

namespace toolcache::sim {

// What the optimum maximizes: hits, saved latency (sum of Request::latency
// over hits) or saved cost (sum of Request::cost over hits).
enum class OptimumObjective { kHits, kLatency, kCost };

struct OptimumOptions {
  // Above this many requests only the LP relaxation bound is computed.
  // Raising it gives exact answers on longer traces at the risk of hitting
  // the time limit (then the best bound found is reported anyway).
  uint64_t max_exact_requests = 5000;
  // Wall-clock budget per call (row construction, LP, branch and bound).
  double time_limit_seconds = 60;
  // Per request: the first request index at which an entry fetched at p is
  // gone whatever the capacity (the replay's invalidation rule; p + 1 for an
  // error result, which is never inserted): sim::EntryDeathIndices. Empty =
  // entries only expire by TTL. Must hold one value > p per request.
  std::span<const uint64_t> dies_at = {};
};

struct OptimumResult {
  double saved_latency = 0;  // seconds saved by the chosen hits
  double saved_cost = 0;     // price saved by the chosen hits
  uint64_t hits = 0;         // hits of the chosen solution (floor for LP)
  bool exact = false;        // true: the 0/1 optimum; false: an upper bound
  // "all-intervals-fit", "ilp", "ilp bound (time limit)", "lp-relaxation"
  // or "all-intervals bound (lp time limit)", with " (N run rows dropped)"
  // appended when long run rows were dropped (then exact = false).
  std::string method;
  uint64_t intervals = 0;  // TTL- and size-feasible intervals considered
  // Value of the maximized objective: the optimum when exact, else an upper
  // bound (also written into that objective's own field above).
  double objective = 0;
  // A value some feasible 0/1 choice achieves (<= the optimum): equals
  // `objective` when exact; 0 when unknown.
  double lower_bound = 0;
};

// REQUIRES nothing: bad input is an error. `cacheable` has one flag per
// request (non-zero = the request may be served from / stored in a cache);
// non-cacheable requests neither start nor end intervals. Request sizes of 0
// count as 1 byte (as in CacheCore). Errors (InvalidArgument): size
// mismatch, negative or NaN latency/cost or NaN `now`/ttl on a cacheable
// request, time_limit_seconds <= 0, a dies_at of the wrong length or not
// after its request.
Result<OptimumResult> SolveOptimum(std::span<const Request> reqs,
                                   std::span<const uint8_t> cacheable,
                                   uint64_t capacity_bytes,
                                   OptimumObjective objective,
                                   const OptimumOptions& options = {});

}  // namespace toolcache::sim

#endif  // TOOLCACHE_SRC_SIM_OPTIMUM_H_
