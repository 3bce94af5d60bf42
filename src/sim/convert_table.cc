// ToolTable, source names, the report summary and the ConvertTrace dispatch.
//
// Invariants: every profile held (built-in or loaded) has finite,
// non-negative latency and cost, and a ttl that is NaN or >= 0; Lookup never
// fails (the built-in "other" row is the last resort); a loaded table never
// contains a row with an empty tool name.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "src/sim/convert_common.h"
#include "src/sim/convert_sources.h"
#include "src/sim/trace_convert.h"

namespace toolcache {
namespace {

using nlohmann::json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Paper-silent: result size when a source carries no results (BFCL,
// LLMCompiler): 1 KiB, about one Wikipedia first paragraph.
constexpr uint64_t kDefaultResultSize = 1024;

struct BuiltinRow {
  std::string_view name;
  ToolProfile profile;
};

// Table 1 of the paper, ranges replaced by their midpoints, $/1k calls
// converted to $ per call.
const std::vector<BuiltinRow>& BuiltinRows() {
  static const auto* rows = new std::vector<BuiltinRow>{
      {"search", {1.35, 0.005, kNaN, std::nullopt}},  // 700-2000 ms, ~$5/1k
      {"wikipedia_fetch", {0.6, 0.0, kNaN, std::nullopt}},  // 200-1000 ms, $0
      {"map_planning",
       {0.525, 0.005, kNaN, std::nullopt}},            // 50-1000 ms, $5/1k
      {"weather", {0.2, 0.0016, kNaN, std::nullopt}},  // ~200 ms, $1.6/1k
      // Paper-silent: LLMCompiler's math tool asks an LLM: 1 s, no per-call
      // price of its own, a short numeric answer.
      {"llm_math", {1.0, 0.0, kNaN, 16}},
      // Paper-silent: a tool matching no row is a local tool (file system,
      // calculator): 100 ms, free.
      {"other", {0.1, 0.0, kNaN, std::nullopt}},
  };
  return *rows;
}

const ToolProfile& BuiltinProfile(std::string_view row) {
  for (const BuiltinRow& r : BuiltinRows()) {
    if (r.name == row) return r.profile;
  }
  return BuiltinRows().back().profile;
}

// The name rule of the built-in table (first match wins, case-insensitive).
std::string_view BuiltinRowFor(std::string_view tool) {
  std::string lower(tool);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  auto has = [&](std::initializer_list<std::string_view> subs) {
    return std::any_of(subs.begin(), subs.end(), [&](std::string_view s) {
      return lower.find(s) != std::string::npos;
    });
  };
  if (has({"wiki"})) return "wikipedia_fetch";
  if (has({"weather", "forecast", "temperature"})) return "weather";
  if (has({"map", "route", "direction", "navigat", "geocode", "distance"})) {
    return "map_planning";
  }
  if (has({"search", "google", "bing", "web_query"})) return "search";
  return "other";
}

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

// Validates and stores one row; returns "" or the reason.
std::string AddRow(const std::string& tool, const json& row,
                   std::map<std::string, ToolProfile, std::less<>>* rows) {
  if (tool.empty()) return "empty tool name";
  if (rows->contains(tool)) return "tool '" + tool + "' listed twice";
  ToolProfile p;
  for (const auto& [k, v] : row.items()) {
    if (k == "tool") continue;
    if (k != "latency" && k != "cost" && k != "ttl" && k != "result_size" &&
        k != "request_type") {
      return "unknown column '" + k +
             "' (expected tool, latency, cost, ttl, result_size, "
             "request_type)";
    }
    if (v.is_null()) continue;
    if (k == "request_type") {
      std::optional<RequestType> type;
      if (v.is_string()) type = ParseRequestType(v.get<std::string>());
      if (type) {
        p.request_type = *type;
      } else {
        return "'request_type' of tool '" + tool +
               "' must be INFORMATIONAL or COMMAND, got " +
               trace_internal::SafeDump(v);
      }
      continue;
    }
    if (!v.is_number() || !std::isfinite(v.get<double>()) ||
        v.get<double>() < 0) {
      return "'" + k + "' of tool '" + tool +
             "' must be a non-negative number, got " +
             trace_internal::SafeDump(v);
    }
    double d = v.get<double>();
    // The trace bounds (trace.h), so a converted trace always reads back.
    const double max = k == "latency" ? kMaxTraceLatencySeconds
                       : k == "cost"  ? kMaxTraceCost
                       : k == "result_size"
                           ? static_cast<double>(kMaxTraceResultSize)
                           : d;
    if (d > max) {
      return "'" + k + "' of tool '" + tool + "' exceeds the maximum " +
             json(max).dump();
    }
    if (k == "latency") p.latency = d;
    if (k == "cost") p.cost = d;
    if (k == "ttl") p.ttl = d;
    if (k == "result_size") {
      if (d != std::floor(d)) {
        return "'result_size' of tool '" + tool + "' must be an integer";
      }
      p.result_size = static_cast<uint64_t>(d);
    }
  }
  if (!row.contains("latency") || !row.contains("cost")) {
    return "tool '" + tool + "' needs both 'latency' and 'cost'";
  }
  rows->emplace(tool, p);
  return "";
}

}  // namespace

ToolTable::ToolTable() : default_result_size_(kDefaultResultSize) {}

Result<ToolTable> ToolTable::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open tool table");
  return Parse(trace_internal::ReadAll(in), path);
}

Result<ToolTable> ToolTable::Parse(std::string_view text,
                                   std::string_view source_name) {
  ToolTable table;
  const std::string src(source_name);
  std::string first = Trim(text.substr(0, std::min<size_t>(text.size(), 64)));
  if (!first.empty() && (first[0] == '[' || first[0] == '{')) {
    json j = json::parse(text.begin(), text.end(), nullptr, false);
    if (j.is_discarded()) return InvalidArgument(src + ": not valid JSON");
    if (j.is_array()) {
      for (size_t i = 0; i < j.size(); ++i) {
        const json& row = j[i];
        if (!row.is_object() || !row.contains("tool") ||
            !row["tool"].is_string()) {
          return InvalidArgument(src + ": row " + std::to_string(i) +
                                 ": must be an object with a string 'tool'");
        }
        std::string err =
            AddRow(row["tool"].get<std::string>(), row, &table.user_rows_);
        if (!err.empty()) {
          return InvalidArgument(src + ": row " + std::to_string(i) + ": " +
                                 err);
        }
      }
    } else {
      for (const auto& [tool, row] : j.items()) {
        if (!row.is_object()) {
          return InvalidArgument(src + ": tool '" + tool +
                                 "': must map to an object");
        }
        std::string err = AddRow(tool, row, &table.user_rows_);
        if (!err.empty()) return InvalidArgument(src + ": " + err);
      }
    }
  } else {
    // CSV with a header; '#' starts a comment line; no quoting.
    std::istringstream in{std::string(text)};
    std::string line;
    std::vector<std::string> header;
    uint64_t line_no = 0;
    while (std::getline(in, line)) {
      ++line_no;
      std::string t = Trim(line);
      if (t.empty() || t[0] == '#') continue;
      std::vector<std::string> cells;
      std::stringstream ss(t);
      std::string cell;
      while (std::getline(ss, cell, ',')) cells.push_back(Trim(cell));
      if (!t.empty() && t.back() == ',') cells.push_back("");
      const std::string where = src + ":" + std::to_string(line_no) + ": ";
      if (header.empty()) {
        header = cells;
        if (std::find(header.begin(), header.end(), "tool") == header.end()) {
          return InvalidArgument(where +
                                 "the CSV header must name a 'tool' column "
                                 "(tool,latency,cost[,ttl][,result_size]"
                                 "[,request_type])");
        }
        continue;
      }
      if (cells.size() != header.size()) {
        return InvalidArgument(where + "expected " +
                               std::to_string(header.size()) +
                               " columns, got " + std::to_string(cells.size()));
      }
      json row = json::object();
      std::string tool;
      for (size_t i = 0; i < cells.size(); ++i) {
        if (header[i] == "tool") {
          tool = cells[i];
          continue;
        }
        if (cells[i].empty()) {
          row[header[i]] = nullptr;
          continue;
        }
        if (header[i] == "request_type") {
          row[header[i]] = cells[i];
          continue;
        }
        char* end = nullptr;
        double d = std::strtod(cells[i].c_str(), &end);
        if (end == cells[i].c_str() || *end != '\0') {
          return InvalidArgument(where + "'" + header[i] +
                                 "' must be a number, got '" + cells[i] + "'");
        }
        row[header[i]] = d;
      }
      std::string err = AddRow(tool, row, &table.user_rows_);
      if (!err.empty()) return InvalidArgument(where + err);
    }
    if (header.empty()) return InvalidArgument(src + ": empty tool table");
  }
  return table;
}

ToolTable::Match ToolTable::Lookup(std::string_view tool,
                                   std::string_view builtin_row) const {
  if (auto it = user_rows_.find(tool); it != user_rows_.end()) {
    return {it->second, true, std::string(tool)};
  }
  if (auto it = user_rows_.find("*"); it != user_rows_.end()) {
    return {it->second, true, "*"};
  }
  std::string_view row =
      builtin_row.empty() ? BuiltinRowFor(tool) : builtin_row;
  return {BuiltinProfile(row), false, std::string(row)};
}

Result<TraceSource> ParseTraceSource(std::string_view name) {
  if (name == "openai-chat") return TraceSource::kOpenAiChat;
  if (name == "anthropic") return TraceSource::kAnthropic;
  if (name == "bfcl") return TraceSource::kBfcl;
  if (name == "llmcompiler-movie") return TraceSource::kLlmCompilerMovie;
  if (name == "llmcompiler-parallelqa") {
    return TraceSource::kLlmCompilerParallelQa;
  }
  if (name == "llmcompiler") return TraceSource::kLlmCompiler;
  return InvalidArgument("unknown trace source '" + std::string(name) +
                         "' (expected openai-chat, anthropic, bfcl, "
                         "llmcompiler, llmcompiler-movie or "
                         "llmcompiler-parallelqa)");
}

std::string ConvertReport::Summary() const {
  std::ostringstream out;
  out << "converted " << records << " calls in " << sessions << " sessions\n";
  if (assigned_from_user > 0) {
    out << "assigned latency/cost from --tool-table to " << assigned_from_user
        << " calls of " << tools_from_user << " tools\n";
  }
  if (assigned_from_default > 0) {
    out << "assigned latency/cost from the default table to "
        << assigned_from_default << " calls of " << tools_from_default
        << " tools\n";
  }
  if (assigned_result_size > 0) {
    out << "assigned result_size from the tool table to "
        << assigned_result_size << " calls (the source has no results)\n";
  }
  if (calls_without_result > 0) {
    out << "dropped " << calls_without_result
        << " calls without a matching result\n";
  }
  if (results_without_call > 0) {
    out << "ignored " << results_without_call
        << " results without a matching call\n";
  }
  if (typed_from_table > 0) {
    out << "request_type from --tool-table for " << typed_from_table
        << " calls\n";
  }
  if (classified_calls > 0) {
    out << "request_type and ttl derived by the classifier for "
        << classified_calls << " calls of " << classified_tools << " tools ("
        << classified_with_definition
        << " with the source's tool definition, the rest by name):\n";
    for (const std::string& line : classified) out << line << "\n";
  }
  for (const std::string& n : notes) out << n << "\n";
  return out.str();
}

Result<ConvertResult> ConvertTrace(TraceSource source, std::istream& in,
                                   std::string_view source_name,
                                   const ConvertOptions& options) {
  trace_internal::ToolDefs defs;
  Result<ConvertResult> r = Internal("unhandled trace source");
  switch (source) {
    case TraceSource::kOpenAiChat:
      r = trace_internal::ConvertOpenAiChat(in, source_name, options, &defs);
      break;
    case TraceSource::kAnthropic:
      r = trace_internal::ConvertAnthropic(in, source_name, options, &defs);
      break;
    case TraceSource::kBfcl:
      r = trace_internal::ConvertBfcl(in, source_name, options, &defs);
      break;
    case TraceSource::kLlmCompilerMovie:
    case TraceSource::kLlmCompilerParallelQa:
    case TraceSource::kLlmCompiler:
      r = trace_internal::ConvertLlmCompiler(source, in, source_name, options);
      break;
  }
  if (!r.ok()) return r;
  const ToolTable default_table;
  trace_internal::AssignRequestTypes(
      options.tool_table ? *options.tool_table : default_table, defs, &*r);
  return r;
}

namespace trace_internal {

void Assigner::Assign(TraceRecord* rec, bool needs_size,
                      std::string_view builtin_row) {
  ToolTable::Match m = table_.Lookup(rec->tool, builtin_row);
  rec->latency = m.profile.latency;
  rec->cost = m.profile.cost;
  if (!std::isnan(m.profile.ttl)) rec->ttl = m.profile.ttl;
  if (needs_size) {
    rec->result_size =
        m.profile.result_size.value_or(table_.default_result_size());
    ++report_->assigned_result_size;
  }
  if (m.from_user_table) {
    ++report_->assigned_from_user;
    user_tools_.insert(rec->tool);
  } else {
    ++report_->assigned_from_default;
    default_tools_.insert(rec->tool);
  }
}

void Assigner::Finish() {
  report_->tools_from_user = user_tools_.size();
  report_->tools_from_default = default_tools_.size();
}

std::string ReadAll(std::istream& in) {
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void AddToolDefinition(const json& def, ToolDefs* defs) {
  if (!def.is_object()) return;
  const json* fn = &def;
  if (def.contains("function") && def["function"].is_object()) {
    fn = &def["function"];  // OpenAI {"type":"function","function":{...}}
  }
  if (!fn->contains("name") || !(*fn)["name"].is_string()) return;
  ToolInfo info;
  info.name = (*fn)["name"].get<std::string>();
  if (info.name.empty() || defs->contains(info.name)) return;
  if (fn->contains("description") && (*fn)["description"].is_string()) {
    info.description = (*fn)["description"].get<std::string>();
  }
  for (const char* k : {"parameters", "input_schema", "inputSchema"}) {
    if (fn->contains(k) && (*fn)[k].is_object()) {
      info.input_schema_json = SafeDump((*fn)[k]);
      break;
    }
  }
  defs->emplace(info.name, std::move(info));
}

void AssignRequestTypes(const ToolTable& table, const ToolDefs& defs,
                        ConvertResult* result) {
  // The engine's classifier with the default configuration (no operator
  // rules): the same decision the proxies would make for these tools.
  const Classifier classifier;
  struct Derived {
    std::string line;
    bool with_definition = false;
  };
  std::map<std::string, Derived, std::less<>> derived;  // by tool
  ConvertReport& report = result->report;
  for (TraceRecord& rec : result->trace.records) {
    ToolTable::Match m = table.Lookup(rec.tool);
    if (m.from_user_table && m.profile.request_type.has_value()) {
      rec.request_type = m.profile.request_type;
      ++report.typed_from_table;
      continue;
    }
    if (rec.request_type.has_value()) continue;  // the source's ground truth
    ToolInfo info;
    auto def = defs.find(rec.tool);
    const bool with_def = def != defs.end();
    if (with_def) {
      info = def->second;
    } else {
      info.name = rec.tool;
    }
    const Verdict v = classifier.ClassifyCall(info, rec.arguments);
    rec.request_type = v.request_type;
    // Choice: an INFORMATIONAL call gets the classifier's TTL, or 0 when the
    // classifier will not cache it for another reason than its TTL
    // (open-world without an operator TTL), so the replay bypasses it as
    // the engine would; a table row's ttl stays.
    if (std::isnan(rec.ttl) && v.request_type == RequestType::kInformational) {
      rec.ttl = v.cacheable || v.reason == VerdictReason::kTtlTooShort
                    ? v.ttl_seconds
                    : 0;
    }
    ++report.classified_calls;
    auto [it, fresh] = derived.try_emplace(rec.tool);
    if (fresh) {
      it->second.with_definition = with_def;
      std::ostringstream line;
      line << "  " << rec.tool << ": " << RequestTypeName(v.request_type);
      if (v.request_type == RequestType::kInformational) {
        line << (v.cacheable ? ", cacheable, ttl " : ", not cacheable, ttl ")
             << rec.ttl << " s";
      }
      line << " (" << FeatureSourceName(v.source) << ": " << v.detail << ")";
      it->second.line = line.str();
    }
  }
  report.classified_tools = derived.size();
  // Choice: at most 30 per-tool lines; the rest are counted.
  size_t shown = 0;
  for (const auto& [tool, d] : derived) {
    report.classified_with_definition += d.with_definition;
    if (shown++ < 30) report.classified.push_back(d.line);
  }
  if (derived.size() > 30) {
    report.classified.push_back(
        "  ... and " + std::to_string(derived.size() - 30) + " more tools");
  }
}

void FinishReport(const Trace& trace, ConvertReport* report) {
  std::set<std::string> sessions;
  for (const TraceRecord& r : trace.records) sessions.insert(r.session);
  report->records = trace.records.size();
  report->sessions = sessions.size();
}

}  // namespace trace_internal
}  // namespace toolcache
