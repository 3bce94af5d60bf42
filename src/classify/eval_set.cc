// Loading and scoring the labelled evaluation set (eval_set.h).
//
// Invariants:
// - Every captured tool has exactly one label and every label names a
//   captured tool of a listed server; anything else is INVALID_ARGUMENT
//   naming the file and line, so a stale label cannot silently drop a tool.
// - Scoring never sees the annotations (they may have produced the label).
#include "src/classify/eval_set.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "src/classify/heuristic.h"
#include "src/classify/tool_input.h"

namespace toolcache::classify {
namespace {

Result<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument("cannot read '" + path + "'");
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// Rows of a CSV file with a header, as column -> value maps.
Result<std::vector<std::pair<uint32_t, std::map<std::string, std::string>>>>
ReadTable(const std::string& path,
          std::initializer_list<std::string_view> required) {
  Result<std::string> text = ReadWhole(path);
  if (!text.ok()) return text.status();
  Result<std::vector<CsvRow>> rows = ParseCsv(*text, path);
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return InvalidArgument(path + ": empty");
  const std::vector<std::string>& header = rows->front().fields;
  for (std::string_view r : required) {
    if (std::find(header.begin(), header.end(), r) == header.end()) {
      return InvalidArgument(path + ": no column '" + std::string(r) + "'");
    }
  }
  std::vector<std::pair<uint32_t, std::map<std::string, std::string>>> out;
  for (size_t i = 1; i < rows->size(); ++i) {
    const CsvRow& row = (*rows)[i];
    if (row.fields.size() != header.size()) {
      return InvalidArgument(path + ":" + std::to_string(row.line) + ": " +
                             std::to_string(row.fields.size()) +
                             " fields, the header has " +
                             std::to_string(header.size()));
    }
    std::map<std::string, std::string> m;
    for (size_t c = 0; c < header.size(); ++c) m[header[c]] = row.fields[c];
    out.emplace_back(row.line, std::move(m));
  }
  return out;
}

}  // namespace

Result<std::vector<SetTool>> LoadEvalSet(std::string_view dir_view) {
  const std::string dir(dir_view);
  auto split = ReadTable(dir + "/split.csv", {"server", "half", "category"});
  if (!split.ok()) return split.status();
  auto labels =
      ReadTable(dir + "/labels.csv", {"server", "tool", "label", "basis"});
  if (!labels.ok()) return labels.status();

  // (server, tool) -> label row.
  std::map<std::pair<std::string, std::string>,
           std::pair<uint32_t, std::map<std::string, std::string>>>
      label_of;
  for (auto& [line, row] : *labels) {
    const std::string where = dir + "/labels.csv:" + std::to_string(line);
    if (row["label"] != "read" && row["label"] != "write") {
      return InvalidArgument(where + ": label must be read or write, got '" +
                             row["label"] + "'");
    }
    auto key = std::pair{row["server"], row["tool"]};
    if (!label_of.emplace(key, std::pair{line, row}).second) {
      return InvalidArgument(where + ": a second label for " + key.first + "/" +
                             key.second);
    }
  }

  std::vector<SetTool> out;
  std::set<std::pair<std::string, std::string>> used;
  for (auto& [line, row] : *split) {
    const std::string server = row["server"];
    const std::string path = dir + "/" + server + ".json";
    Result<std::string> text = ReadWhole(path);
    if (!text.ok()) return text.status();
    Result<std::vector<LabeledTool>> tools = ParseToolDefinitions(*text, path);
    if (!tools.ok()) return tools.status();
    for (LabeledTool& t : *tools) {
      auto key = std::pair{server, t.info.name};
      auto it = label_of.find(key);
      if (it == label_of.end()) {
        return InvalidArgument(dir + "/labels.csv: no label for " + server +
                               "/" + t.info.name);
      }
      if (!used.insert(key).second) {
        return InvalidArgument(path + ": tool '" + t.info.name +
                               "' listed twice");
      }
      SetTool s;
      s.info = std::move(t.info);
      s.info.server = server;
      s.half = row["half"];
      s.category = row["category"];
      s.write = it->second.second["label"] == "write";
      s.basis = it->second.second["basis"];
      out.push_back(std::move(s));
    }
  }
  for (const auto& [key, row] : label_of) {
    if (!used.count(key)) {
      return InvalidArgument(dir + "/labels.csv:" + std::to_string(row.first) +
                             ": " + key.first + "/" + key.second +
                             " is not a captured tool of a listed server");
    }
  }
  return out;
}

std::vector<HalfReport> EvaluateSet(const Classifier& classifier,
                                    const std::vector<SetTool>& tools,
                                    bool keep_annotations) {
  std::vector<HalfReport> reports;
  std::map<std::string, std::set<std::string>> servers;
  for (const SetTool& t : tools) {
    auto it =
        std::find_if(reports.begin(), reports.end(),
                     [&](const HalfReport& r) { return r.half == t.half; });
    if (it == reports.end()) {
      reports.push_back(HalfReport{.half = t.half});
      it = reports.end() - 1;
    }
    HalfReport& r = *it;
    servers[t.half].insert(t.info.server);
    ToolInfo blind = t.info;
    if (!keep_annotations) blind.annotations.reset();
    const Verdict v = classifier.Classify(blind);
    const bool informational = v.request_type == RequestType::kInformational;
    const std::string id = t.info.server + "/" + t.info.name;
    ++r.tools;
    if (t.write) {
      ++r.writes;
      if (informational) r.writes_informational.push_back(id);
      if (v.cacheable) r.writes_cacheable.push_back(id);
      continue;
    }
    ++r.reads;
    if (v.cacheable) ++r.reads_cacheable;
    if (!informational) {
      r.reads_lost.push_back(id);
      continue;
    }
    ++r.reads_informational;
    ++r.ttl_classes[std::string(TtlCategoryName(ToolTtlCategory(blind)))];
  }
  for (HalfReport& r : reports) {
    r.servers = static_cast<uint32_t>(servers[r.half].size());
  }
  return reports;
}

}  // namespace toolcache::classify
