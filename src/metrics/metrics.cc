// Invariants:
// - A series pointer handed out by Family::Get stays valid for the
//   registry's lifetime (series live in unique_ptrs, never erased).
// - Histogram bucket i counts observations v with bounds[i-1] < v <=
//   bounds[i] (the last bucket: > the last bound); count_ is their total.
// - Rendering never holds a family's lock while formatting another's.
#include "src/metrics/metrics.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

namespace toolcache::metrics {

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)),
      buckets_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
  for (size_t i = 0; i <= bounds_.size(); ++i) buckets_[i] = 0;
}

void Histogram::Observe(double v) {
  if (!std::isfinite(v) || v < 0) v = 0;
  const size_t i = static_cast<size_t>(
      std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_micro_.fetch_add(static_cast<uint64_t>(std::llround(v * 1e6)),
                       std::memory_order_relaxed);
}

std::vector<uint64_t> Histogram::Counts() const {
  std::vector<uint64_t> out(bounds_.size() + 1);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = buckets_[i].load(std::memory_order_relaxed);
  }
  return out;
}

double Histogram::sum() const {
  return static_cast<double>(sum_micro_.load(std::memory_order_relaxed)) / 1e6;
}

double Histogram::Quantile(double q) const {
  std::vector<uint64_t> c = Counts();
  uint64_t total = 0;
  for (uint64_t n : c) total += n;
  if (total == 0) return 0;
  const double rank = q * static_cast<double>(total);
  uint64_t seen = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    if (c[i] == 0) continue;
    if (static_cast<double>(seen + c[i]) >= rank) {
      const double lo = i == 0 ? 0 : bounds_[i - 1];
      // Choice: the +Inf bucket reports its lower bound.
      if (i == bounds_.size()) return lo;
      const double hi = bounds_[i];
      const double frac =
          (rank - static_cast<double>(seen)) / static_cast<double>(c[i]);
      return lo + (hi - lo) * std::clamp(frac, 0.0, 1.0);
    }
    seen += c[i];
  }
  return bounds_.empty() ? 0 : bounds_.back();
}

std::vector<double> LatencyBuckets() {
  return {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
          0.01,    0.025,  0.05,    0.1,    0.25,  0.5,    1,
          2.5,     5,      10,      30,     60};
}

CounterFamily& Registry::Counters(const std::string& name,
                                  const std::string& help,
                                  std::vector<std::string> labels) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& f = counters_[name];
  if (!f) {
    f = std::make_unique<CounterFamily>(
        name, help, std::move(labels), max_series_,
        [] { return std::make_unique<Counter>(); });
  }
  return *f;
}

HistogramFamily& Registry::Histograms(const std::string& name,
                                      const std::string& help,
                                      std::vector<std::string> labels,
                                      std::vector<double> bounds) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& f = histograms_[name];
  if (!f) {
    f = std::make_unique<HistogramFamily>(
        name, help, std::move(labels), max_series_,
        [bounds] { return std::make_unique<Histogram>(bounds); });
  }
  return *f;
}

void Registry::Gauge(const std::string& name, const std::string& help,
                     std::function<double()> read) {
  std::lock_guard<std::mutex> lock(mu_);
  gauges_[name] = {help, std::move(read)};
}

namespace {

// Prometheus label value escaping: backslash, double quote and newline.
std::string Escape(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Labels(const std::vector<std::string>& names,
                   const std::vector<std::string>& values,
                   std::string_view extra = {}) {
  if (names.empty() && extra.empty()) return {};
  std::string s = "{";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) s += ',';
    s += names[i] + "=\"" + Escape(values[i]) + "\"";
  }
  if (!extra.empty()) {
    if (!names.empty()) s += ',';
    s += extra;
  }
  s += '}';
  return s;
}

std::string Number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  std::ostringstream os;
  os.precision(10);
  os << v;
  return os.str();
}

}  // namespace

std::string Registry::Prometheus() const {
  std::vector<const CounterFamily*> counters;
  std::vector<const HistogramFamily*> histograms;
  std::vector<
      std::pair<std::string, std::pair<std::string, std::function<double()>>>>
      gauges;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [n, f] : counters_) counters.push_back(f.get());
    for (const auto& [n, f] : histograms_) histograms.push_back(f.get());
    for (const auto& g : gauges_) gauges.push_back(g);
  }
  std::string out;
  for (const CounterFamily* f : counters) {
    out += "# HELP " + f->name() + " " + f->help() + "\n";
    out += "# TYPE " + f->name() + " counter\n";
    f->ForEach([&](const std::vector<std::string>& values, const Counter& c) {
      out += f->name() + Labels(f->labels(), values) + " " +
             std::to_string(c.value()) + "\n";
    });
  }
  for (const HistogramFamily* f : histograms) {
    out += "# HELP " + f->name() + " " + f->help() + "\n";
    out += "# TYPE " + f->name() + " histogram\n";
    f->ForEach([&](const std::vector<std::string>& values, const Histogram& h) {
      std::vector<uint64_t> c = h.Counts();
      uint64_t cum = 0;
      for (size_t i = 0; i < c.size(); ++i) {
        cum += c[i];
        const std::string le =
            i < h.bounds().size() ? Number(h.bounds()[i]) : "+Inf";
        out += f->name() + "_bucket" +
               Labels(f->labels(), values, "le=\"" + le + "\"") + " " +
               std::to_string(cum) + "\n";
      }
      out += f->name() + "_sum" + Labels(f->labels(), values) + " " +
             Number(h.sum()) + "\n";
      out += f->name() + "_count" + Labels(f->labels(), values) + " " +
             std::to_string(cum) + "\n";
    });
  }
  for (const auto& [name, g] : gauges) {
    out += "# HELP " + name + " " + g.first + "\n";
    out += "# TYPE " + name + " gauge\n";
    out += name + " " + Number(g.second()) + "\n";
  }
  return out;
}

nlohmann::json Registry::Json() const {
  nlohmann::json out = nlohmann::json::object();
  std::vector<const CounterFamily*> counters;
  std::vector<const HistogramFamily*> histograms;
  std::vector<std::pair<std::string, std::function<double()>>> gauges;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [n, f] : counters_) counters.push_back(f.get());
    for (const auto& [n, f] : histograms_) histograms.push_back(f.get());
    for (const auto& [n, g] : gauges_) gauges.emplace_back(n, g.second);
  }
  auto labels = [](const std::vector<std::string>& names,
                   const std::vector<std::string>& values) {
    nlohmann::json l = nlohmann::json::object();
    for (size_t i = 0; i < names.size(); ++i) l[names[i]] = values[i];
    return l;
  };
  for (const CounterFamily* f : counters) {
    nlohmann::json series = nlohmann::json::array();
    f->ForEach([&](const std::vector<std::string>& values, const Counter& c) {
      series.push_back(
          {{"labels", labels(f->labels(), values)}, {"value", c.value()}});
    });
    out[f->name()] = {
        {"type", "counter"}, {"help", f->help()}, {"series", series}};
  }
  for (const HistogramFamily* f : histograms) {
    nlohmann::json series = nlohmann::json::array();
    f->ForEach([&](const std::vector<std::string>& values, const Histogram& h) {
      series.push_back({{"labels", labels(f->labels(), values)},
                        {"count", h.count()},
                        {"sum", h.sum()},
                        {"p50", h.Quantile(0.5)},
                        {"p90", h.Quantile(0.9)},
                        {"p99", h.Quantile(0.99)}});
    });
    out[f->name()] = {
        {"type", "histogram"}, {"help", f->help()}, {"series", series}};
  }
  for (const auto& [name, read] : gauges) {
    out[name] = {{"type", "gauge"}, {"value", read()}};
  }
  return out;
}

}  // namespace toolcache::metrics
