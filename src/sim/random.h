// Deterministic random numbers for the simulator's synthetic workloads.
//
// The C++ standard fixes the output of std::mt19937_64 but not of the
// std::*_distribution classes, so every distribution the workloads use is
// written here on top of the raw engine: a workload generated from a seed is
// the same on every standard library, which is what lets tests pin exact hit
// counts.
//
// Thread-safety: an Rng is a plain value; use one per thread.
//
// Example:
//   Rng rng(42);
//   ZipfSampler zipf(600, 1.1);
//   uint64_t rank = zipf.Sample(rng);   // 0 is the most popular
//   double ms = rng.Uniform(700, 2000);
#ifndef TOOLCACHE_SRC_SIM_RANDOM_H_
#define TOOLCACHE_SRC_SIM_RANDOM_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

namespace toolcache::sim {

// SplitMix64's finalizer: a bijective 64-bit mixer (no two inputs collide).
inline uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(Mix64(seed)) {}

  uint64_t Next() { return engine_(); }
  // Uniform in [0, 1).
  double Uniform01() {
    return static_cast<double>(engine_() >> 11) * 0x1.0p-53;
  }
  // Uniform in [lo, hi).
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform01(); }
  // Uniform integer in [0, n). REQUIRES: n > 0.
  uint64_t Below(uint64_t n) {
    return static_cast<uint64_t>(Uniform01() * static_cast<double>(n)) % n;
  }
  // Standard normal (Box-Muller, one value per call).
  double Normal() {
    double u1 = Uniform01();
    if (u1 < 1e-300) u1 = 1e-300;
    double u2 = Uniform01();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }
  // Log-normal with the given median and log-space sigma.
  double LogNormal(double median, double sigma) {
    return median * std::exp(sigma * Normal());
  }
  // Exponential with the given mean.
  double Exponential(double mean) {
    return -mean * std::log(1.0 - Uniform01());
  }
  // Fisher-Yates shuffle.
  template <typename T>
  void Shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[Below(i)]);
  }

 private:
  std::mt19937_64 engine_;
};

// Zipf over ranks [0, n): P(rank k) proportional to 1 / (k + 1)^alpha.
class ZipfSampler {
 public:
  // REQUIRES: n > 0, alpha >= 0 (alpha = 0 is uniform).
  ZipfSampler(uint64_t n, double alpha) : cdf_(n) {
    double sum = 0;
    for (uint64_t k = 0; k < n; ++k) {
      sum += 1.0 / std::pow(static_cast<double>(k + 1), alpha);
      cdf_[k] = sum;
    }
    for (double& c : cdf_) c /= sum;
    cdf_.back() = 1.0;
  }
  uint64_t Sample(Rng& rng) const {
    double u = rng.Uniform01();
    auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
    if (it == cdf_.end()) --it;
    return static_cast<uint64_t>(it - cdf_.begin());
  }
  uint64_t size() const { return cdf_.size(); }

 private:
  std::vector<double> cdf_;
};

}  // namespace toolcache::sim

#endif  // TOOLCACHE_SRC_SIM_RANDOM_H_
