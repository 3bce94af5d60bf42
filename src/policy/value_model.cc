// ValueModel (Eq. 1-2 of the ToolCaching paper).
//
// Invariants:
//  - every normalized feature is in [0, 1]; the cost-to-size ratio is in
//    [0, 1]; so RawValue is in [-lambda3, lambda1 + lambda2] for non-negative
//    lambdas and Value() = RawValue + lambda3 is >= 0.
//  - the model is a pure function of the requests observed so far (no
//    randomness, no clock).
//  - epoch_ moves whenever a min/max or tau's inputs (the inserted TTLs,
//    when tau is the running mean) change; Value()'s memo is read only under
//    the epoch it was made in, for the same bits of latency, cost, TTL (and
//    size when the cost term reads it), so it returns the double that
//    RawValue + lambda3 computes afresh.
#include "src/policy/value_model.h"

#include <cmath>

namespace toolcache {

void ValueModel::ObserveInsertedTtl(double ttl) {
  if (!std::isfinite(ttl) || ttl <= 0) return;
  ttl_sum_ += ttl;
  ++ttl_count_;
  // tau is the running mean unless it is > 0 (a NaN tau is one too, as in
  // Tau()), so the mean moving moves the epoch then.
  if (!(options_.tau > 0)) ++epoch_;
}

}  // namespace toolcache
