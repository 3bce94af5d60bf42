// Metrics shared by every face: counters and histograms in labelled
// families, rendered as Prometheus text (`GET /metrics`) and as JSON
// (`GET /toolcache/stats`).
//
// A family has fixed label names; its series are created on first use and
// never removed. Label values should come from enums (route, bypass reason,
// outcome); free-form values such as tool names are allowed, but a family
// holds at most max_series series: later new label sets are counted under
// the values "_other" (so a client cannot grow the proxy's memory).
// Increments are lock-free atomics on a stable pointer; Get() takes the
// family's mutex (cache the pointer on hot paths with fixed labels).
//
// Thread-safety: every method is thread-safe. Ownership: the Registry owns
// its families; pointers it returns live as long as it does.
//
// Example:
//   Registry r;
//   CounterFamily& req = r.Counters("toolcache_requests_total",
//                                   "Requests by route", {"route"});
//   req.Get({"anthropic_messages"})->Add();
//   HistogramFamily& lat = r.Histograms("toolcache_added_seconds", "...",
//                                       {"route"}, LatencyBuckets());
//   lat.Get({"anthropic_messages"})->Observe(0.0004);
//   std::string text = r.Prometheus();
#ifndef TOOLCACHE_SRC_METRICS_METRICS_H_
#define TOOLCACHE_SRC_METRICS_METRICS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace toolcache::metrics {

class Counter {
 public:
  void Add(uint64_t n = 1) { v_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

class Histogram {
 public:
  // `bounds`: increasing upper bounds; +Inf is implicit.
  explicit Histogram(std::vector<double> bounds);
  void Observe(double v);
  const std::vector<double>& bounds() const { return bounds_; }
  // Non-cumulative count per bucket (bounds().size() + 1 entries).
  std::vector<uint64_t> Counts() const;
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  double sum() const;
  // The q-quantile (0..1) estimated from the buckets by linear
  // interpolation; 0 when empty.
  double Quantile(double q) const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_micro_{0};  // sum in millionths
};

// 50 us .. 60 s, roughly x2.5 apart: request latencies.
std::vector<double> LatencyBuckets();

template <class T>
class Family {
 public:
  Family(std::string name, std::string help, std::vector<std::string> labels,
         size_t max_series, std::function<std::unique_ptr<T>()> make)
      : name_(std::move(name)),
        help_(std::move(help)),
        labels_(std::move(labels)),
        max_series_(max_series),
        make_(std::move(make)) {}

  // The series for `values` (one per label name, in order).
  T* Get(std::initializer_list<std::string_view> values) {
    return Get(
        std::span<const std::string_view>(values.begin(), values.size()));
  }
  // (A std::vector<std::string_view> converts to the span.)
  // Choice: the lookup key is built in a per-thread buffer and found by
  // view, so a series that exists costs no allocation (serve counts ten
  // series per lookup hit; building a vector and a string for each was a
  // fifth of the hit's instructions).
  T* Get(std::span<const std::string_view> values) {
    thread_local std::string key;
    key.clear();
    for (std::string_view v : values) {
      key.append(v);
      key.push_back('\0');
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto it = series_.find(std::string_view(key));
    if (it != series_.end()) return it->second.value.get();
    std::vector<std::string> vals(values.begin(), values.end());
    vals.resize(labels_.size());
    std::string owned = key;
    if (series_.size() >= max_series_) {
      owned.clear();
      for (size_t i = 0; i < labels_.size(); ++i) {
        owned.append("_other");
        owned.push_back('\0');
      }
      it = series_.find(owned);
      if (it != series_.end()) return it->second.value.get();
      for (auto& v : vals) v = "_other";
    }
    Series s{std::move(vals), make_()};
    T* out = s.value.get();
    series_.emplace(std::move(owned), std::move(s));
    return out;
  }

  struct Series {
    std::vector<std::string> values;
    std::unique_ptr<T> value;
  };
  // Calls f(values, series) for every series, in label order.
  void ForEach(const std::function<void(const std::vector<std::string>&,
                                        const T&)>& f) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [k, s] : series_) f(s.values, *s.value);
  }
  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const std::vector<std::string>& labels() const { return labels_; }

 private:
  std::string name_;
  std::string help_;
  std::vector<std::string> labels_;
  size_t max_series_;
  std::function<std::unique_ptr<T>()> make_;
  mutable std::mutex mu_;
  std::map<std::string, Series, std::less<>> series_;  // GUARDED_BY(mu_)
};

using CounterFamily = Family<Counter>;
using HistogramFamily = Family<Histogram>;

class Registry {
 public:
  // Choice: 512 series per family by default.
  explicit Registry(size_t max_series = 512) : max_series_(max_series) {}

  // The family named `name`, created on first call (later calls return it
  // and ignore the other arguments).
  CounterFamily& Counters(const std::string& name, const std::string& help,
                          std::vector<std::string> labels);
  HistogramFamily& Histograms(const std::string& name, const std::string& help,
                              std::vector<std::string> labels,
                              std::vector<double> bounds);
  // A gauge read when rendering.
  void Gauge(const std::string& name, const std::string& help,
             std::function<double()> read);

  // Prometheus text exposition format 0.0.4.
  std::string Prometheus() const;
  // {"<name>": {"type", "help", "series": [{"labels": {...}, "value" |
  //  "count"/"sum"/"p50"/"p90"/"p99"/"buckets"}]}}
  nlohmann::json Json() const;

 private:
  size_t max_series_;
  mutable std::mutex mu_;
  // GUARDED_BY(mu_); families are never removed.
  std::map<std::string, std::unique_ptr<CounterFamily>> counters_;
  std::map<std::string, std::unique_ptr<HistogramFamily>> histograms_;
  std::map<std::string, std::pair<std::string, std::function<double()>>>
      gauges_;
};

}  // namespace toolcache::metrics

#endif  // TOOLCACHE_SRC_METRICS_METRICS_H_
