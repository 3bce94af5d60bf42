// Helpers shared by the throughput benchmarks in bench/: the thread's CPU
// clock, medians, a Zipf rank sampler and the flags every Zipf benchmark
// takes. Header-only (each bench/<name>.cc is its own binary).
//
// Thread-safety: ZipfSampler is immutable after construction; Next() uses
// the caller's generator.
//
// Example:
//   bench::ZipfOptions o;
//   bench::ZipfSampler zipf(o.keys, o.alpha);
//   std::mt19937_64 rng(2024);
//   uint64_t rank = zipf.Next(rng);  // 0 = the most popular key
#ifndef TOOLCACHE_BENCH_BENCH_UTIL_H_
#define TOOLCACHE_BENCH_BENCH_UTIL_H_

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string_view>
#include <vector>

namespace toolcache::bench {

// CPU time of this thread: the figure that survives a loaded machine
// (wall-clock rates are printed too, for an idle machine).
inline double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         1e-9 * static_cast<double>(ts.tv_nsec);
}

// REQUIRES: !v.empty().
inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Ranks 0..keys-1 with weight (rank + 1)^-alpha, sampled by inverse CDF.
class ZipfSampler {
 public:
  ZipfSampler(uint64_t keys, double alpha) : cdf_(keys) {
    double sum = 0;
    for (uint64_t r = 0; r < keys; ++r) {
      sum += std::pow(static_cast<double>(r + 1), -alpha);
      cdf_[r] = sum;
    }
    total_ = sum;
  }
  template <typename Rng>
  uint64_t Next(Rng& rng) const {
    std::uniform_real_distribution<double> u(0, total_);
    const uint64_t rank =
        std::lower_bound(cdf_.begin(), cdf_.end(), u(rng)) - cdf_.begin();
    return std::min<uint64_t>(rank, cdf_.size() - 1);
  }

 private:
  std::vector<double> cdf_;
  double total_ = 0;
};

// The flags every Zipf throughput benchmark takes, with the "beyond the
// paper" issue's workload as defaults.
struct ZipfOptions {
  int runs = 5;
  uint64_t requests = 1'000'000;
  uint64_t keys = 100'000;
  double alpha = 1.1;
  double capacity_fraction = 0.1;
  bool Valid() const {
    return runs >= 1 && requests >= 1 && keys >= 1 && alpha > 0 &&
           capacity_fraction > 0;
  }
};

// Parses `flag value` into `o` if it is one of the common flags; returns
// false for any other flag. `*end` is set where number parsing stopped.
inline bool ParseZipfFlag(std::string_view flag, const char* value,
                          ZipfOptions& o, char** end) {
  if (flag == "--runs") {
    o.runs = static_cast<int>(std::strtol(value, end, 10));
  } else if (flag == "--requests") {
    o.requests = std::strtoull(value, end, 10);
  } else if (flag == "--keys") {
    o.keys = std::strtoull(value, end, 10);
  } else if (flag == "--alpha") {
    o.alpha = std::strtod(value, end);
  } else if (flag == "--capacity-fraction") {
    o.capacity_fraction = std::strtod(value, end);
  } else {
    return false;
  }
  return true;
}

}  // namespace toolcache::bench

#endif  // TOOLCACHE_BENCH_BENCH_UTIL_H_
