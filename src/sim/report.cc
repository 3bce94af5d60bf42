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
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
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
      "Fig. 3 - hit ratio (%) per cache size (% of unique cacheable bytes), "
      "mean +- sd over {} seed(s)\n",
      seeds);
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
        out << fmt::format("{:<12}{:<14}", "", focus + "-" + p);
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
  // `index`), rows = sizes, columns = size, then mean sd per policy.
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
  const std::string fig3_dat = dir + "/fig3.dat";
  if (!write_dat(fig3_dat, workloads, {HitPct})) {
    return Unavailable("cannot write " + fig3_dat);
  }
  // Fig. 3: one panel per workload.
  const size_t n = workloads.size();
  const size_t cols = n <= 1 ? 1 : 2;
  const size_t rows = (n + cols - 1) / cols;
  std::ostringstream gp;
  gp << "set terminal pngcairo size " << 520 * cols << "," << 400 * rows
     << " font 'sans,10'\n"
     << "set output '" << dir << "/fig3.png'\n"
     << "set multiplot layout " << rows << "," << cols
     << " title 'Hit ratio vs cache size (mean +- sd over seeds)'\n"
     << "set xlabel 'cache size (% of unique cacheable bytes)'\n"
     << "set ylabel 'hit ratio (%)'\nset key top left\nset grid\n"
     << "set xrange [0:100]\nset yrange [0:*]\n";
  for (size_t i = 0; i < n; ++i) {
    gp << "set title " << GpQuote(workloads[i]) << "\nplot ";
    for (size_t p = 0; p < policies.size(); ++p) {
      gp << (p ? ", " : "") << "'" << fig3_dat << "' index " << i
         << " using 1:" << 2 + 2 * p << ":" << 3 + 2 * p
         << " with yerrorlines lw 2 title " << GpQuote(policies[p]);
    }
    gp << "\n";
  }
  gp << "unset multiplot\n";
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
       << "set yrange [*:*]\nset key top right\n";
    for (size_t k = 0; k < 3; ++k) {
      gp << "set title '" << titles[k] << "'\nset ylabel '" << titles[k]
         << "'\nplot ";
      for (size_t p = 0; p < policies.size(); ++p) {
        size_t col = 2 + 2 * (k * policies.size() + p);
        gp << (p ? ", " : "") << "'" << fig4_dat << "' index 0 using 1:" << col
           << " with linespoints lw 2 title " << GpQuote(policies[p]);
      }
      gp << "\n";
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
