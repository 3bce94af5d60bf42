// The learned write veto: feature extraction (in step with
// tools/classify/train_model.py) and scoring with the compiled weights.
//
// Invariants:
// - Features are byte-level and ASCII-only, exactly as the trainer computes
//   them, so the shipped weights reproduce the trainer's scores
//   (learned_test.cc checks every labelled tool against
//   tests/data/classify/model/scores.csv).
// - The layer never says INFORMATIONAL: it can only veto.
// Choice: the sum runs over the features in sorted order, as the trainer's
// does, so the floating-point result is the same to the last bits.
#include "src/classify/learned.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string_view>

#include "src/classify/heuristic.h"

namespace toolcache::classify {
namespace {

// Runs of ASCII letters, lowercased, >= 2 letters, the first `limit`.
std::vector<std::string> Words(std::string_view text, size_t limit) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    if (cur.size() >= 2) out.push_back(cur);
    cur.clear();
  };
  for (const char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c >= 'A' && c <= 'Z') {
      cur += static_cast<char>(c + 32);
    } else if (c >= 'a' && c <= 'z') {
      cur += static_cast<char>(c);
    } else {
      flush();
      if (out.size() == limit) return out;
    }
  }
  flush();
  if (out.size() > limit) out.resize(limit);
  return out;
}

double Weight(const std::string& feature) {
  const LearnedWeight* begin = kLearnedWeights;
  const LearnedWeight* end = kLearnedWeights + kLearnedWeightCount;
  const LearnedWeight* it = std::lower_bound(
      begin, end, feature, [](const LearnedWeight& w, const std::string& f) {
        return std::strcmp(w.feature, f.c_str()) < 0;
      });
  return it != end && feature == it->feature ? it->weight : 0.0;
}

double Sigmoid(double z) {
  if (z >= 0) return 1.0 / (1.0 + std::exp(-z));
  const double e = std::exp(z);
  return e / (1.0 + e);
}

std::string Fixed2(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", x);
  return buf;
}

class LearnedVeto final : public FeatureExtractor {
 public:
  FeatureSource source() const override { return FeatureSource::kHeuristic; }
  std::optional<Features> Extract(const ToolInfo& tool,
                                  std::string_view) const override {
    const LearnedScore s = ScoreTool(tool);
    if (s.p_write < kLearnedThreshold) return std::nullopt;
    Features f;
    f.request_type = RequestType::kCommand;
    f.weak_command = true;
    f.detail = "learned-veto rule: P(write) " + Fixed2(s.p_write) +
               " >= threshold " + Fixed2(kLearnedThreshold);
    for (size_t i = 0; i < s.top.size(); ++i) {
      f.detail += (i == 0 ? " from " : ", ") + s.top[i].first + " +" +
                  Fixed2(s.top[i].second);
    }
    return f;
  }
};

}  // namespace

std::set<std::string> LearnedFeatures(const ToolInfo& tool) {
  std::set<std::string> f;
  const std::vector<std::string> name = TokenizeName(tool.name);
  for (const std::string& t : name) f.insert("n:" + t);
  if (!name.empty()) f.insert("v:" + name.front());
  const std::string text = tool.title.empty()
                               ? tool.description
                               : tool.title + " " + tool.description;
  for (const std::string& w : Words(text, 80)) f.insert("d:" + w);
  if (const std::vector<std::string> first = Words(tool.description, 1);
      !first.empty()) {
    f.insert("f:" + first.front());
  }
  if (!tool.input_schema_json.empty()) {
    const nlohmann::json schema = nlohmann::json::parse(
        tool.input_schema_json, nullptr, /*allow_exceptions=*/false);
    if (schema.is_object()) {
      auto props = schema.find("properties");
      if (props != schema.end() && props->is_object()) {
        for (auto it = props->begin(); it != props->end(); ++it) {
          for (const std::string& t : TokenizeName(it.key())) {
            f.insert("p:" + t);
          }
          if (!it.value().is_object()) continue;
          auto d = it.value().find("description");
          if (d == it.value().end() || !d->is_string()) continue;
          for (const std::string& w : Words(d->get<std::string>(), 30)) {
            f.insert("q:" + w);
          }
        }
      }
    }
  }
  return f;
}

LearnedScore ScoreTool(const ToolInfo& tool) {
  LearnedScore s;
  double z = kLearnedBias;
  for (const std::string& feature : LearnedFeatures(tool)) {
    const double w = Weight(feature);
    z += w;
    if (w > 0) s.top.emplace_back(feature, w);
  }
  std::stable_sort(
      s.top.begin(), s.top.end(),
      [](const auto& a, const auto& b) { return a.second > b.second; });
  if (s.top.size() > 3) s.top.resize(3);
  s.p_write = Sigmoid(z);
  return s;
}

std::unique_ptr<FeatureExtractor> MakeLearnedVeto() {
  return std::make_unique<LearnedVeto>();
}

}  // namespace toolcache::classify
