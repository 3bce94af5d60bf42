// The learned write veto (internal to src/classify): a logistic regression
// over a tool definition's words, trained offline by
// tools/classify/train_model.py, its weights compiled in
// (learned_weights.cc, generated). It only ever makes a verdict more
// conservative: a tool whose P(write) reaches the threshold is COMMAND;
// below it the layer has no opinion. Trained on every labelled set; the
// threshold was chosen from leave-one-set-out scores (docs/CLASSIFY.md,
// "Session 16"), and promotion (the model saying INFORMATIONAL) was
// measured there and is not done.
//
// Thread-safety: stateless; all functions may be called concurrently.
//
// Example:
//   LearnedScore s = ScoreTool(tool);
//   if (s.p_write >= kLearnedThreshold) { /* veto: s.top names why */ }
#ifndef TOOLCACHE_SRC_CLASSIFY_LEARNED_H_
#define TOOLCACHE_SRC_CLASSIFY_LEARNED_H_

#include <cstddef>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "toolcache/classifier.h"

namespace toolcache::classify {

struct LearnedWeight {
  const char* feature;
  double weight;
};

// Generated (learned_weights.cc): sorted by feature.
extern const double kLearnedBias;
extern const double kLearnedThreshold;
extern const LearnedWeight kLearnedWeights[];
extern const size_t kLearnedWeightCount;

// The model's binary features of `tool` (n:, v:, d:, f:, p:, q: as in
// train_model.py; the two must stay in step).
std::set<std::string> LearnedFeatures(const ToolInfo& tool);

struct LearnedScore {
  double p_write = 0;
  // The present features that pushed most toward "write", largest first
  // (at most three, positive weights only).
  std::vector<std::pair<std::string, double>> top;
};

LearnedScore ScoreTool(const ToolInfo& tool);

// The veto as a classification layer (after the heuristic). Its COMMAND is
// weak evidence: a trusted readOnlyHint outranks it.
std::unique_ptr<FeatureExtractor> MakeLearnedVeto();

}  // namespace toolcache::classify

#endif  // TOOLCACHE_SRC_CLASSIFY_LEARNED_H_
