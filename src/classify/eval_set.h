// A labelled evaluation set of real tool definitions, split by server into
// halves (e.g. "dev" and "heldout"), and its scoring: how many side-effecting
// tools the classifier would cache, and how many read-only ones it finds.
//
// On disk (tests/data/classify/npm_servers/ is the project's set):
//   split.csv   server,half,category,package,version,licence
//   labels.csv  server,tool,label,basis,note   (label: read | write)
//   <server>.json  the server's captured tools/list result ({"tools": [...]})
// Every tool of every listed server must have exactly one label and every
// label must name a captured tool: a mismatch is an error, not a skip.
//
// Scoring strips the annotations (the heuristic alone: what an LLM-API face
// sees) and uses the Classifier it is given (normally the default config).
//
// Thread-safety: free functions over values.
//
// Example:
//   Result<std::vector<SetTool>> set =
//   LoadEvalSet("tests/data/.../npm_servers"); for (const HalfReport& h :
//   EvaluateSet(Classifier(), *set))
//     std::cout << h.half << " " << h.ReadRecall() << "\n";
#ifndef TOOLCACHE_SRC_CLASSIFY_EVAL_SET_H_
#define TOOLCACHE_SRC_CLASSIFY_EVAL_SET_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "toolcache/classifier.h"
#include "toolcache/status.h"

namespace toolcache::classify {

struct SetTool {
  ToolInfo info;  // as captured, annotations included
  std::string half;
  std::string category;
  bool write = false;  // the label
  std::string basis;   // annotation | hand | override
};

// Loads split.csv, labels.csv and every server's JSON from `dir`.
[[nodiscard]] Result<std::vector<SetTool>> LoadEvalSet(std::string_view dir);

struct HalfReport {
  std::string half;
  uint32_t servers = 0, tools = 0, reads = 0, writes = 0;
  // "server/tool" of writes the heuristic calls INFORMATIONAL (unsafe as
  // soon as any TTL applies), and of writes cacheable with the default
  // configuration (unsafe now).
  std::vector<std::string> writes_informational;
  std::vector<std::string> writes_cacheable;
  uint32_t reads_informational = 0;  // read recall numerator
  uint32_t reads_cacheable = 0;      // with the default configuration
  // "server/tool" of reads called COMMAND (lost opportunities).
  std::vector<std::string> reads_lost;
  // TTL class of the reads called INFORMATIONAL: real-time, computational,
  // static, none (-> the configured default).
  std::map<std::string, uint32_t> ttl_classes;

  double ReadRecall() const {
    return reads == 0 ? 0.0 : static_cast<double>(reads_informational) / reads;
  }
  double ReadCacheableShare() const {
    return reads == 0 ? 0.0 : static_cast<double>(reads_cacheable) / reads;
  }
};

// One report per half, in order of first appearance in `tools`, classified
// with annotations removed; with `keep_annotations`, as captured (what an
// MCP face that trusts them sees; labels of basis "annotation" came from
// them, so this measures mostly where the rest of a definition overrules
// them, and a wrong hint's effect: issue 31).
std::vector<HalfReport> EvaluateSet(const Classifier& classifier,
                                    const std::vector<SetTool>& tools,
                                    bool keep_annotations = false);

}  // namespace toolcache::classify

#endif  // TOOLCACHE_SRC_CLASSIFY_EVAL_SET_H_
