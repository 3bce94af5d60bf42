// Tables, JSON Lines and plots of experiment results.
//
// Invariants:
//   - JSON field order is fixed (nlohmann::ordered_json) and non-finite
//     numbers are written as null, so every line is valid JSON.
//   - Tables list workloads, policies and sizes in first-appearance order of
//     the runs, which RunExperiment makes the spec's order.
//   - Plot data files hold only numbers; the gnuplot scripts name their
//     columns, so a script can be re-run by hand on the .dat files.
#include "src/sim/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

namespace toolcache::sim {
namespace {

nlohmann::ordered_json Num(double v) {
  if (!std::isfinite(v)) return nullptr;
  return v;
}

template <typename T>
void AddUnique(std::vector<T>& v, const T& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

std::string SizeLabel(double pct) { return fmt::format("{:g}%", pct); }

bool Has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

double HitPct(const RunRecord& r) { return 100.0 * r.metrics.HitRatio(); }

// The fractions of the optimum as metrics: NaN for a run without one, so a
// mean over runs is NaN (printed "n/a") unless every run has it.
double SavedLatencyFraction(const RunRecord& r) {
  return r.saved_latency_fraction_of_opt.value_or(
      std::numeric_limits<double>::quiet_NaN());
}
double SavedCostFraction(const RunRecord& r) {
  return r.saved_cost_fraction_of_opt.value_or(
      std::numeric_limits<double>::quiet_NaN());
}

// "bytes" or "entries": what the size percentages are a share of.
std::string CapacityUnit(std::span<const RunRecord> runs) {
  for (const RunRecord& r : runs) {
    if (r.capacity_entries > 0) return "entries";
  }
  return "bytes";
}

std::string Frac(const std::optional<double>& f, int width) {
  if (!f || !std::isfinite(*f)) return fmt::format("{:>{}}", "n/a", width);
  return fmt::format("{:>{}.3f}", *f, width);
}

// Quotes a string for gnuplot (single quotes; no escapes needed in our
// labels, but quotes are dropped to stay safe).
std::string GpQuote(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), '\''), s.end());
  return "'" + s + "'";
}

}  // namespace

std::string RecordToJson(const RunRecord& r) {
  const ReplayMetrics& m = r.metrics;
  nlohmann::ordered_json j;
  j["workload"] = r.workload;
  j["policy"] = r.policy;
  j["cache_size_pct"] = r.cache_size_pct;
  j["seed"] = r.seed;
  j["hit_ratio"] = Num(m.HitRatio());
  j["byte_hit_ratio"] = Num(m.ByteHitRatio());
  j["total_latency"] = Num(m.total_latency);
  j["total_size"] = m.total_size;
  j["total_cost"] = Num(m.total_cost);
  j["admissions"] = m.admissions;
  j["evictions"] = m.evictions;
  j["expired_misses"] = m.expired_misses;
  j["command_served"] = m.command_served;
  j["requests"] = m.requests;
  j["hits"] = m.hits;
  j["misses"] = m.misses;
  j["capacity_bytes"] = r.capacity_bytes;
  j["capacity_entries"] = r.capacity_entries;
  j["unique_objects"] = r.unique_objects;
  j["rejections"] = m.rejections;
  j["invalidations"] = m.invalidations;
  j["saved_latency"] = Num(m.saved_latency);
  j["saved_cost"] = Num(m.saved_cost);
  if (r.from_trace || !r.optimum_method.empty()) {
    j["saved_latency_fraction_of_opt"] =
        r.saved_latency_fraction_of_opt ? Num(*r.saved_latency_fraction_of_opt)
                                        : nullptr;
    j["saved_cost_fraction_of_opt"] = r.saved_cost_fraction_of_opt
                                          ? Num(*r.saved_cost_fraction_of_opt)
                                          : nullptr;
    j["stale_served"] = m.stale_served;
    // Whether the fractions are against the exact 0/1 optimum or an upper
    // bound (then they are understated, never overstated).
    if (r.optimum_method.empty()) {
      j["optimum_method"] = nullptr;
      j["optimum_cost_method"] = nullptr;
      j["optimum_exact"] = nullptr;
    } else {
      j["optimum_method"] = r.optimum_method;
      j["optimum_cost_method"] = r.optimum_cost_method;
      j["optimum_exact"] = r.optimum_exact;
    }
  }
  return j.dump();
}

Stat Summarize(std::span<const RunRecord> runs, const std::string& workload,
               const std::string& policy, double size_pct,
               const Metric& metric) {
  Stat s;
  double sum = 0, sum2 = 0;
  for (const RunRecord& r : runs) {
    if (r.workload != workload || r.policy != policy ||
        r.cache_size_pct != size_pct) {
      continue;
    }
    double v = metric(r);
    sum += v;
    sum2 += v * v;
    ++s.n;
  }
  if (s.n == 0) return s;
  s.mean = sum / s.n;
  if (s.n > 1) {
    double var = (sum2 - s.n * s.mean * s.mean) / (s.n - 1);
    s.sd = var > 0 ? std::sqrt(var) : 0;
  }
  return s;
}

std::vector<std::string> Workloads(std::span<const RunRecord> runs) {
  std::vector<std::string> v;
  for (const RunRecord& r : runs) AddUnique(v, r.workload);
  return v;
}

std::vector<std::string> PolicyLabels(std::span<const RunRecord> runs) {
  std::vector<std::string> v;
  for (const RunRecord& r : runs) AddUnique(v, r.policy);
  return v;
}

std::vector<double> Sizes(std::span<const RunRecord> runs) {
  std::vector<double> v;
  for (const RunRecord& r : runs) AddUnique(v, r.cache_size_pct);
  return v;
}

std::string HitRatioTable(std::span<const RunRecord> runs,
                          const std::string& focus) {
  const auto workloads = Workloads(runs);
  const auto policies = PolicyLabels(runs);
  const auto sizes = Sizes(runs);
  uint32_t seeds = runs.empty()
                       ? 0
                       : Summarize(runs, runs[0].workload, runs[0].policy,
                                   runs[0].cache_size_pct, HitPct)
                             .n;
  std::ostringstream out;
  out << fmt::format(
      "Fig. 3 - hit ratio (%) per cache size (% of unique cacheable {}), "
      "mean +- sd over {} seed(s)\n",
      CapacityUnit(runs), seeds);
  out << fmt::format("{:<12}{:<14}", "workload", "policy");
  for (double z : sizes) out << fmt::format("{:>15}", SizeLabel(z));
  out << "\n";
  for (const std::string& w : workloads) {
    for (const std::string& p : policies) {
      out << fmt::format("{:<12}{:<14}", w, p);
      for (double z : sizes) {
        Stat s = Summarize(runs, w, p, z, HitPct);
        out << fmt::format("{:>15}",
                           fmt::format("{:.1f} +- {:.1f}", s.mean, s.sd));
      }
      out << "\n";
    }
    if (Has(policies, focus)) {
      for (const std::string& p : policies) {
        if (p == focus) continue;
        // The label ends at column 26 like the policy column; a long one
        // eats into the (empty) workload column instead of shifting the
        // numbers.
        const std::string label = focus + "-" + p;
        const size_t indent =
            label.size() <= 14 ? 12 : 26 - std::min<size_t>(26, label.size());
        out << fmt::format("{:<{}}{:<{}}", "", indent, label, 26 - indent);
        double best = -1e300;
        for (double z : sizes) {
          double d = Summarize(runs, w, focus, z, HitPct).mean -
                     Summarize(runs, w, p, z, HitPct).mean;
          best = std::max(best, d);
          out << fmt::format("{:>15}", fmt::format("{:+.1f} pp", d));
        }
        out << fmt::format("   (best {:+.1f} pp)\n", best);
      }
    }
  }
  return out.str();
}

std::string CostTable(std::span<const RunRecord> runs,
                      const std::string& workload, const std::string& focus) {
  const auto policies = PolicyLabels(runs);
  const auto sizes = Sizes(runs);
  if (!Has(Workloads(runs), workload)) return "";
  struct Row {
    const char* title;
    Metric metric;
    const char* fmt;
  };
  const Row rows[] = {
      {"total latency (s)",
       [](const RunRecord& r) { return r.metrics.total_latency; }, "{:.1f}"},
      {"total result size (KB)",
       [](const RunRecord& r) { return r.metrics.total_size / 1000.0; },
       "{:.0f}"},
      {"total cost (USD)",
       [](const RunRecord& r) { return r.metrics.total_cost; }, "{:.3f}"},
  };
  std::ostringstream out;
  out << fmt::format(
      "Fig. 4 - {} workload: paid upstream (requests not served from cache), "
      "mean over seeds\n",
      workload);
  for (const Row& row : rows) {
    out << fmt::format("{:<26}", row.title);
    for (double z : sizes) out << fmt::format("{:>11}", SizeLabel(z));
    out << "\n";
    for (const std::string& p : policies) {
      out << fmt::format("  {:<24}", p);
      for (double z : sizes) {
        out << fmt::format(
            "{:>11}",
            fmt::format(fmt::runtime(row.fmt),
                        Summarize(runs, workload, p, z, row.metric).mean));
      }
      out << "\n";
    }
    if (Has(policies, focus)) {
      for (const std::string& p : policies) {
        if (p == focus) continue;
        out << fmt::format("  {:<24}", focus + " vs " + p);
        double best = 1e300;
        for (double z : sizes) {
          double a = Summarize(runs, workload, focus, z, row.metric).mean;
          double b = Summarize(runs, workload, p, z, row.metric).mean;
          double d = b != 0 ? 100.0 * (a - b) / b : 0;
          best = std::min(best, d);
          out << fmt::format("{:>11}", fmt::format("{:+.1f}%", d));
        }
        out << fmt::format("   (best {:+.1f}%)\n", best);
      }
    }
  }
  return out.str();
}

std::string UserGroupingTable(std::span<const RunRecord> runs,
                              const std::string& workload,
                              const std::string& with_label,
                              const std::string& without_label) {
  const auto sizes = Sizes(runs);
  auto avg_ms = [](const RunRecord& r) {
    return r.metrics.requests == 0
               ? 0.0
               : 1000.0 * r.metrics.total_latency / r.metrics.requests;
  };
  std::ostringstream out;
  out << fmt::format(
      "Table 3 - {} workload: hit ratio (%) / average latency per request "
      "(ms), mean over seeds\n",
      workload);
  out << fmt::format("{:<24}", "cache size");
  for (double z : sizes) out << fmt::format("{:>17}", SizeLabel(z));
  out << "\n";
  for (const std::string* label : {&with_label, &without_label}) {
    out << fmt::format("{:<24}", *label);
    for (double z : sizes) {
      Stat h = Summarize(runs, workload, *label, z, HitPct);
      Stat l = Summarize(runs, workload, *label, z, avg_ms);
      out << fmt::format("{:>17}",
                         fmt::format("{:.1f} / {:.1f}", h.mean, l.mean));
    }
    out << "\n";
  }
  out << fmt::format("{:<24}", "relative change");
  for (double z : sizes) {
    double hw = Summarize(runs, workload, with_label, z, HitPct).mean;
    double ho = Summarize(runs, workload, without_label, z, HitPct).mean;
    double lw = Summarize(runs, workload, with_label, z, avg_ms).mean;
    double lo = Summarize(runs, workload, without_label, z, avg_ms).mean;
    out << fmt::format(
        "{:>17}",
        fmt::format("{:+.1f}% / {:+.1f}%", ho != 0 ? 100 * (hw - ho) / ho : 0.0,
                    lo != 0 ? 100 * (lw - lo) / lo : 0.0));
  }
  out << "\n";
  return out.str();
}

std::string OptimumLabel(const RunRecord& r) {
  if (r.optimum_method.empty()) return "-";
  if (r.optimum_exact) return "exact";
  auto exact = [](const std::string& m) {
    return m == "ilp" || m == "all-intervals-fit";
  };
  const std::string& m =
      exact(r.optimum_method) ? r.optimum_cost_method : r.optimum_method;
  if (m.starts_with("lp-relaxation")) return "lp-bound";
  if (m.starts_with("all-intervals")) return "all-bound";
  return "ilp-bound";
}

namespace {

// The legend printed under every table that shows fractions of optimum.
constexpr std::string_view kOptimumLegend =
    "opt: exact = the 0/1 optimum (ILP); ilp-bound / lp-bound / all-bound = "
    "an upper bound (time limit, trace longer than --optimum-max-exact, or "
    "long run rows dropped), so the fraction is understated\n";

bool AnyFraction(std::span<const RunRecord> runs, bool traces) {
  for (const RunRecord& r : runs) {
    if (r.from_trace == traces && !r.optimum_method.empty()) return true;
  }
  return false;
}

}  // namespace

std::string OptimumTable(std::span<const RunRecord> runs) {
  if (!AnyFraction(runs, /*traces=*/false)) return "";
  std::vector<RunRecord> synthetic;
  for (const RunRecord& r : runs) {
    if (!r.from_trace) synthetic.push_back(r);
  }
  const auto workloads = Workloads(synthetic);
  const auto policies = PolicyLabels(synthetic);
  const auto sizes = Sizes(synthetic);
  std::ostringstream out;
  out << fmt::format(
      "Fraction of the offline optimum - saved latency / saved cost, mean "
      "over seeds (cache size in % of unique cacheable {})\n",
      CapacityUnit(synthetic));
  out << fmt::format("{:<12}{:<14}", "workload", "policy");
  for (double z : sizes) out << fmt::format("{:>15}", SizeLabel(z));
  out << fmt::format("{:>8}\n", "opt");
  for (const std::string& w : workloads) {
    for (const std::string& p : policies) {
      out << fmt::format("{:<12}{:<14}", w, p);
      uint32_t bounds = 0, solved = 0;
      for (double z : sizes) {
        Stat l = Summarize(synthetic, w, p, z, SavedLatencyFraction);
        Stat c = Summarize(synthetic, w, p, z, SavedCostFraction);
        auto f = [](double v) {
          return std::isfinite(v) ? fmt::format("{:.2f}", v)
                                  : std::string("n/a");
        };
        out << fmt::format("{:>15}", f(l.mean) + " / " + f(c.mean));
        for (const RunRecord& r : synthetic) {
          if (r.workload == w && r.policy == p && r.cache_size_pct == z &&
              !r.optimum_method.empty()) {
            ++solved;
            bounds += !r.optimum_exact;
          }
        }
      }
      out << fmt::format("{:>8}\n",
                         bounds == 0 ? std::string("exact")
                                     : fmt::format("{}/{}b", bounds, solved));
    }
  }
  out << "opt: exact = every solve was the 0/1 optimum; k/nb = k of n solves "
         "gave an upper bound (fractions understated)\n";
  return out.str();
}

std::string TraceTable(std::span<const RunRecord> runs) {
  bool any = false;
  for (const RunRecord& r : runs) any |= r.from_trace;
  if (!any) return "";
  std::ostringstream out;
  out << "Traces - hit ratio, saved latency / cost as a fraction of the "
         "offline optimum, stale results served, invalidations\n";
  out << fmt::format(
      "{:<21} {:<12} {:>6} {:>7} {:>8} {:>8} {:>10} {:>6} {:>6}\n", "trace",
      "policy", "size", "hit%", "lat/opt", "cost/opt", "opt", "stale", "inval");
  for (const RunRecord& r : runs) {
    if (!r.from_trace) continue;
    out << fmt::format(
        "{:<21} {:<12} {:>6} {:>7.1f} {} {} {:>10} {:>6} {:>6}\n",
        r.workload.substr(0, 21), r.policy, SizeLabel(r.cache_size_pct),
        100 * r.metrics.HitRatio(), Frac(r.saved_latency_fraction_of_opt, 8),
        Frac(r.saved_cost_fraction_of_opt, 8), OptimumLabel(r),
        r.metrics.stale_served, r.metrics.invalidations);
  }
  out << kOptimumLegend;
  return out.str();
}

std::string DetailsTable(std::span<const RunRecord> runs) {
  if (runs.empty()) return "";
  const auto workloads = Workloads(runs);
  const auto policies = PolicyLabels(runs);
  const auto sizes = Sizes(runs);
  const bool any_opt = AnyFraction(runs, true) || AnyFraction(runs, false);
  std::ostringstream out;
  out << fmt::format(
      "Details - per workload x policy x size (% of unique cacheable {}); "
      "mean over seeds; latency/size/cost = paid upstream\n",
      CapacityUnit(runs));
  out << fmt::format(
      "{:<14}{:<14}{:>6}{:>7}{:>7}{:>12}{:>12}{:>11}{:>9}{:>9}{:>8}{:>8}",
      "workload", "policy", "size", "hit%", "bhit%", "latency_s", "size_KB",
      "cost_usd", "admit", "evict", "expired", "cmd_srv");
  if (any_opt) {
    out << fmt::format("{:>9}{:>9}{:>10}{:>7}", "lat/opt", "cost/opt", "opt",
                       "stale");
  }
  out << "\n";
  auto num = [](double v, uint32_t n) {
    return n > 1 ? fmt::format("{:.1f}", v) : fmt::format("{:.0f}", v);
  };
  for (const std::string& w : workloads) {
    for (const std::string& p : policies) {
      for (double z : sizes) {
        auto mean = [&](const Metric& m) {
          return Summarize(runs, w, p, z, m);
        };
        const Stat hit = mean(HitPct);
        if (hit.n == 0) continue;
        const uint32_t n = hit.n;
        const RunRecord* first = nullptr;
        for (const RunRecord& r : runs) {
          if (r.workload == w && r.policy == p && r.cache_size_pct == z) {
            first = &r;
            break;
          }
        }
        out << fmt::format(
            "{:<14}{:<14}{:>6}{:>7.1f}{:>7.1f}{:>12.2f}{:>12.1f}{:>11.4f}"
            "{:>9}{:>9}{:>8}{:>8}",
            w.substr(0, 13), p.substr(0, 13), SizeLabel(z), hit.mean,
            mean([](const RunRecord& r) {
              return 100.0 * r.metrics.ByteHitRatio();
            }).mean,
            mean([](const RunRecord& r) {
              return r.metrics.total_latency;
            }).mean,
            mean([](const RunRecord& r) {
              return static_cast<double>(r.metrics.total_size) / 1000.0;
            }).mean,
            mean([](const RunRecord& r) { return r.metrics.total_cost; }).mean,
            num(mean([](const RunRecord& r) {
                  return static_cast<double>(r.metrics.admissions);
                }).mean,
                n),
            num(mean([](const RunRecord& r) {
                  return static_cast<double>(r.metrics.evictions);
                }).mean,
                n),
            num(mean([](const RunRecord& r) {
                  return static_cast<double>(r.metrics.expired_misses);
                }).mean,
                n),
            num(mean([](const RunRecord& r) {
                  return static_cast<double>(r.metrics.command_served);
                }).mean,
                n));
        if (any_opt) {
          out << fmt::format(
              " {} {}{:>10}{:>7}", Frac(mean(SavedLatencyFraction).mean, 8),
              Frac(mean(SavedCostFraction).mean, 8),
              first != nullptr ? OptimumLabel(*first) : std::string("-"),
              num(mean([](const RunRecord& r) {
                    return static_cast<double>(r.metrics.stale_served);
                  }).mean,
                  n));
        }
        out << "\n";
      }
    }
  }
  if (any_opt) out << kOptimumLegend;
  return out.str();
}

std::string SafetyLine(std::span<const RunRecord> runs) {
  uint64_t served = 0, stale = 0, inval = 0, expired = 0, commands = 0;
  for (const RunRecord& r : runs) {
    served += r.metrics.command_served;
    stale += r.metrics.stale_served;
    inval += r.metrics.invalidations;
    expired += r.metrics.expired_misses;
    commands += r.metrics.command_requests;
  }
  return fmt::format(
      "safety: {} runs, {} COMMAND calls, command_served={} (must be 0), "
      "stale_served={}, invalidations={}, expired_misses={}\n",
      runs.size(), commands, served, stale, inval, expired);
}

namespace {

// Line styles: the offline limits dashed in greys, every other policy solid
// in a 10-colour qualitative palette (Tableau 10), so a dozen lines stay
// apart in print and for colour-blind readers.
std::string LineStyles(const std::vector<std::string>& policies) {
  static constexpr const char* kPalette[] = {
      "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#1f77b4"};
  std::ostringstream gp;
  size_t colour = 0;
  for (size_t p = 0; p < policies.size(); ++p) {
    gp << "set style line " << p + 1;
    if (policies[p] == "belady" || policies[p] == "infinite") {
      gp << " lc rgb '" << (policies[p] == "belady" ? "#555555" : "#000000")
         << "' dt " << (policies[p] == "belady" ? 2 : 3) << " lw 2 pt 0\n";
    } else {
      gp << " lc rgb '" << kPalette[colour % 10] << "' dt 1 lw 2 pt "
         << 1 + colour % 13 << " ps 0.8\n";
      ++colour;
    }
  }
  return gp.str();
}

// One panel: `column(p)` of `dat`'s block `index` for every policy p that
// `keep(p)` accepts; with error bars from the next column when `errors`.
template <typename Column, typename Keep>
std::string PlotPanel(const std::string& dat, size_t index,
                      const std::vector<std::string>& policies, Column column,
                      Keep keep, bool errors) {
  std::ostringstream gp;
  gp << "plot ";
  bool first = true;
  for (size_t p = 0; p < policies.size(); ++p) {
    if (!keep(p)) continue;
    const size_t col = column(p);
    gp << (first ? "" : ", ") << "'" << dat << "' index " << index
       << " using 1:" << col;
    if (errors) gp << ":" << col + 1;
    gp << (errors ? " with yerrorlines" : " with linespoints") << " ls "
       << p + 1 << " title " << GpQuote(policies[p]);
    first = false;
  }
  gp << "\n";
  return gp.str();
}

// The y range of one auto-scaled panel: "[*:*]" unless every value drawn
// (mean, +- sd with error bars) is the same, where gnuplot would warn "empty
// y range"; then a band around it. Choice: +-10% of the value (+-1 around
// 0), never below 0 for a value that is not negative.
std::string PanelYRange(std::span<const RunRecord> runs,
                        const std::string& workload,
                        const std::vector<std::string>& policies,
                        const std::vector<double>& sizes, const Metric& metric,
                        bool with_sd, const std::function<bool(size_t)>& keep) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (size_t p = 0; p < policies.size(); ++p) {
    if (!keep(p)) continue;
    for (double z : sizes) {
      Stat s = Summarize(runs, workload, policies[p], z, metric);
      if (s.n == 0) continue;
      const double sd = with_sd ? s.sd : 0;
      lo = std::min(lo, s.mean - sd);
      hi = std::max(hi, s.mean + sd);
    }
  }
  if (!(lo == hi) || !std::isfinite(lo)) return "[*:*]";
  const double pad = lo != 0 ? 0.1 * std::abs(lo) : 1;
  const double bottom = lo >= 0 ? std::max(0.0, lo - pad) : lo - pad;
  return fmt::format("[{:g}:{:g}]", bottom, lo + pad);
}

}  // namespace

Status WritePlots(std::span<const RunRecord> runs, const std::string& dir,
                  const std::string& cost_workload) {
  const auto workloads = Workloads(runs);
  const auto policies = PolicyLabels(runs);
  const auto sizes = Sizes(runs);
  if (runs.empty()) return Status::Ok();
  if (dir.find('\'') != std::string::npos) {
    return InvalidArgument("plot directory must not contain a single quote: " +
                           dir);
  }
  // Data: one block per workload (separated by two blank lines, gnuplot's
  // `index`), rows = sizes, columns = size, then mean sd per policy and
  // metric.
  auto write_dat = [&](const std::string& path,
                       const std::vector<std::string>& ws,
                       const std::vector<Metric>& metrics) -> bool {
    std::ofstream f(path);
    f << "# size_pct";
    for (const Metric& unused : metrics) {
      (void)unused;
      for (const std::string& p : policies)
        f << " " << p << "_mean " << p << "_sd";
    }
    f << "\n";
    for (const std::string& w : ws) {
      f << "# workload " << w << "\n";
      for (double z : sizes) {
        f << z;
        for (const Metric& m : metrics) {
          for (const std::string& p : policies) {
            Stat s = Summarize(runs, w, p, z, m);
            f << " " << s.mean << " " << s.sd;
          }
        }
        f << "\n";
      }
      f << "\n\n";
    }
    return static_cast<bool>(f);
  };
  const std::string unit = CapacityUnit(runs);
  const size_t n = workloads.size();
  const size_t np = policies.size();
  // Choice: error bars (sd over seeds) only with a few policies; with more
  // they hide the lines (the sd is in the tables and summary.txt).
  const bool errors = np <= 4;
  auto all = [](size_t) { return true; };
  std::ostringstream gp;
  gp << LineStyles(policies);

  // Fig. 3: hit ratio, one panel per workload, the key outside on the right.
  const std::string fig3_dat = dir + "/fig3.dat";
  if (!write_dat(fig3_dat, workloads, {HitPct})) {
    return Unavailable("cannot write " + fig3_dat);
  }
  const size_t cols = n <= 1 ? 1 : 2;
  const size_t rows = (n + cols - 1) / cols;
  gp << "set terminal pngcairo size " << 640 * cols << "," << 400 * rows
     << " font 'sans,10'\n"
     << "set output '" << dir << "/fig3.png'\n"
     << "set multiplot layout " << rows << "," << cols << " title "
     << GpQuote(std::string("Hit ratio vs cache size (mean") +
                (errors ? " +- sd" : "") + " over seeds)")
     << "\n"
     << "set xlabel 'cache size (% of unique cacheable " << unit << ")'\n"
     << "set ylabel 'hit ratio (%)'\nset key outside right top\nset grid\n"
     << "set xrange [0:100]\nset yrange [*:*]\n";
  for (size_t i = 0; i < n; ++i) {
    gp << "set title " << GpQuote(workloads[i]) << "\n"
       << "set yrange "
       << PanelYRange(runs, workloads[i], policies, sizes, HitPct, errors, all)
       << "\n"
       << PlotPanel(
              fig3_dat, i, policies, [](size_t p) { return 2 + 2 * p; }, all,
              errors);
  }
  gp << "unset multiplot\n";

  std::error_code ignored;  // removing a stale plot that is absent is fine
  using Panels = std::vector<std::pair<size_t, size_t>>;  // (workload, metric)
  // The (workload, metric) pairs for which `has` holds in some run.
  auto panels_with = [&](const std::vector<Metric>& metrics, auto has) {
    Panels panels;
    for (size_t i = 0; i < n; ++i) {
      for (size_t k = 0; k < metrics.size(); ++k) {
        bool any = false;
        for (const RunRecord& r : runs) {
          any |= r.workload == workloads[i] && has(metrics[k](r));
        }
        if (any) panels.emplace_back(i, k);
      }
    }
    return panels;
  };
  // A two-column grid of `panels` from `dat` into `png`; a run that has no
  // panel removes a stale `png` of an earlier run instead.
  auto grid = [&](const std::string& dat, const std::string& png,
                  const std::string& title, const Panels& panels,
                  const std::vector<Metric>& metrics,
                  const std::vector<std::string>& what,
                  const std::string& ylabel, const std::string& yrange,
                  const std::function<bool(size_t)>& keep) {
    if (panels.empty()) {
      std::filesystem::remove(dir + "/" + png, ignored);
      return;
    }
    const size_t prow = (panels.size() + 1) / 2;
    gp << "set terminal pngcairo size 1280," << 330 * prow
       << " font 'sans,10'\n"
       << "set output '" << dir << "/" << png << "'\n"
       << "set multiplot layout " << prow << ",2 title " << GpQuote(title)
       << "\n"
       << "set key outside right top\n";
    for (const auto& [i, k] : panels) {
      gp << "set title " << GpQuote(workloads[i] + ": " + what[k]) << "\n"
         << "set yrange "
         << (yrange == "[*:*]" ? PanelYRange(runs, workloads[i], policies,
                                             sizes, metrics[k], false, keep)
                               : yrange)
         << "\n"
         << "set ylabel " << GpQuote(ylabel.empty() ? what[k] : ylabel) << "\n"
         << PlotPanel(
                dat, i, policies,
                [k = k, np](size_t p) { return 2 + 2 * (k * np + p); }, keep,
                false);
    }
    gp << "unset multiplot\nset yrange [*:*]\n";
  };

  // Paid upstream: total latency and total cost, a panel per workload and
  // metric that is not all 0 (a free trace gets no flat cost panel).
  const std::string paid_dat = dir + "/paid.dat";
  const std::vector<Metric> paid = {
      [](const RunRecord& r) { return r.metrics.total_latency; },
      [](const RunRecord& r) { return r.metrics.total_cost; }};
  if (!write_dat(paid_dat, workloads, paid)) {
    return Unavailable("cannot write " + paid_dat);
  }
  grid(paid_dat, "paid.png",
       "Paid upstream (requests not served from cache) vs cache size, mean "
       "over seeds",
       panels_with(paid, [](double v) { return v > 0; }), paid,
       {"total latency (s)", "total cost (USD)"}, "", "[*:*]", all);

  // Fractions of the optimum, a panel per workload and metric that has any
  // (a trace without costs, or with no possible hit, has none).
  const std::vector<Metric> fractions = {SavedLatencyFraction,
                                         SavedCostFraction};
  const Panels optimum_panels =
      panels_with(fractions, [](double v) { return std::isfinite(v); });
  if (!optimum_panels.empty()) {
    const std::string opt_dat = dir + "/optimum.dat";
    if (!write_dat(opt_dat, workloads, fractions)) {
      return Unavailable("cannot write " + opt_dat);
    }
    // The unbounded `infinite` can exceed 1 and would squash the others.
    grid(opt_dat, "optimum.png",
         "Saved latency and saved cost as a fraction of the offline optimum "
         "(1 = best possible)",
         optimum_panels, fractions,
         {"saved latency / optimum", "saved cost / optimum"},
         "fraction of the optimum", "[0:1.05]",
         [&](size_t p) { return policies[p] != "infinite"; });
  } else {
    std::filesystem::remove(dir + "/optimum.png", ignored);
  }
  if (!Has(workloads, cost_workload)) {
    std::filesystem::remove(dir + "/fig4.png", ignored);
  }

  // Fig. 4 (the paper's): latency, result size and cost of one workload.
  if (Has(workloads, cost_workload)) {
    const std::string fig4_dat = dir + "/fig4.dat";
    std::vector<Metric> metrics = {
        [](const RunRecord& r) { return r.metrics.total_latency; },
        [](const RunRecord& r) { return r.metrics.total_size / 1000.0; },
        [](const RunRecord& r) { return r.metrics.total_cost; }};
    if (!write_dat(fig4_dat, {cost_workload}, metrics)) {
      return Unavailable("cannot write " + fig4_dat);
    }
    const char* titles[] = {"total latency (s)", "total result size (KB)",
                            "total cost (USD)"};
    gp << "set terminal pngcairo size 1500,420 font 'sans,10'\n"
       << "set output '" << dir << "/fig4.png'\n"
       << "set multiplot layout 1,3 title "
       << GpQuote(cost_workload +
                  ": paid upstream vs cache size (mean over seeds)")
       << "\n"
       << "set key top right\n"
       << "set xlabel 'cache size (% of unique cacheable " << unit << ")'\n";
    for (size_t k = 0; k < 3; ++k) {
      gp << "set title '" << titles[k] << "'\nset ylabel '" << titles[k]
         << "'\nset yrange "
         << PanelYRange(runs, cost_workload, policies, sizes, metrics[k], false,
                        all)
         << "\n"
         << PlotPanel(
                fig4_dat, 0, policies,
                [k, np](size_t p) { return 2 + 2 * (k * np + p); }, all, false);
    }
    gp << "unset multiplot\n";
  }
  const std::string script = dir + "/plots.gp";
  {
    std::ofstream f(script);
    f << gp.str();
    if (!f) return Unavailable("cannot write " + script);
  }
  // gnuplot's chatter goes to stderr: stdout may be carrying JSON Lines.
  const std::string cmd = "gnuplot '" + script + "' 1>&2";
  int rc = std::system(cmd.c_str());
  if (rc != 0) {
    return Unavailable("gnuplot failed (exit " + std::to_string(rc) + ") on " +
                       script + "; is gnuplot installed?");
  }
  return Status::Ok();
}

}  // namespace toolcache::sim
