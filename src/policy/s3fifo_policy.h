// S3-FIFO (Yang, Zhang, Qiu, Yue, Rashmi, "FIFO Queues are All You Need for
// Cache Eviction", SOSP 2023), byte-aware, following libCacheSim's S3FIFO.c.
//
// Three FIFO queues: a small queue S (10% of the capacity in bytes), a main
// queue M (the other 90%) and a ghost queue G of ids only (as many bytes of
// ids as 90% of the capacity). A miss whose id is in G enters M; any other
// miss enters S. Hits only bump a 2-bit counter (0..3). Eviction: when M is
// over its share or S is empty, M's tail is reinserted at M's head with its
// counter decremented if the counter is > 0, else evicted (2-bit CLOCK).
// Otherwise S's tail moves to M (counter reset) if it was hit at least
// `move_to_main_threshold` times (2, libCacheSim's default and the paper's
// "freq > 1"), else it is evicted and its id enters G.
//
// Byte-awareness: S, M and G limits are bytes; an object larger than S's
// share is not admitted (libCacheSim's can_insert rule: it would flush S).
//
// Knobs: "small_ratio" (0.1), "ghost_ratio" (0.9),
// "move_to_main_threshold" (2).
//
// Thread-safety: none (see policy.h).
#ifndef TOOLCACHE_SRC_POLICY_S3FIFO_POLICY_H_
#define TOOLCACHE_SRC_POLICY_S3FIFO_POLICY_H_

#include <cstdint>
#include <memory>

#include "toolcache/policy.h"

namespace toolcache {

struct S3FifoOptions {
  uint64_t capacity_bytes = 0;
  double small_ratio = 0.1;
  double ghost_ratio = 0.9;
  uint32_t move_to_main_threshold = 2;
};

// Registry factory (row "s3fifo").
std::unique_ptr<Policy> MakeS3FifoPolicy(const PolicyParams& params);
std::unique_ptr<Policy> NewS3FifoPolicy(const S3FifoOptions& options);

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_POLICY_S3FIFO_POLICY_H_
