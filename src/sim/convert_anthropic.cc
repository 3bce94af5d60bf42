// Anthropic-format transcripts -> trace records.
//
// Invariants:
// - One record per `tool_use` block (first occurrence of each id) that has a
//   `tool_result` block with the same `tool_use_id` anywhere in the input;
//   records keep the order of the tool_use blocks (sorted by time when every
//   record has one). Unpaired calls are dropped and counted; unpaired
//   results are ignored and counted.
// - error is the tool_result's `is_error`; result_size / result_digest are
//   the bytes / SHA-256 of its content (string, or text of its blocks).
// - Claude-Code-like lines carry ISO-8601 `timestamp`s: when both the call's
//   and the result's line have one (and the difference is within the
//   reader's kMaxTraceLatencySeconds), latency is measured (result - call) and
//   time is seconds since the first timestamp; otherwise the tool table
//   assigns latency and no record gets a time (all-or-nothing, as the reader
//   requires).
// - A Messages API request body's `tools` are collected for the classifier
//   (ConvertTrace types every call, Anthropic transcripts carry no type).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "src/sim/convert_common.h"
#include "src/sim/convert_sources.h"

namespace toolcache::trace_internal {
namespace {

using nlohmann::json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// "2025-06-02T18:46:59.937Z" (or "+00:00" / no zone, read as UTC) -> epoch
// seconds; NaN when it does not parse.
double ParseIsoTime(const json& v) {
  if (!v.is_string()) return kNaN;
  const std::string s = v.get<std::string>();
  std::tm tm{};
  double frac = 0;
  int y, mo, d, h, mi, sec;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi,
                  &sec) != 6) {
    return kNaN;
  }
  size_t pos = 19;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    double scale = 0.1;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
      frac += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
  }
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  return static_cast<double>(timegm(&tm)) + frac;
}

struct Call {
  TraceRecord rec;
  double call_time = kNaN;
  double result_time = kNaN;
  bool paired = false;
};

class Converter {
 public:
  explicit Converter(const ToolTable& table)
      : assigner_(table, &result_.report) {}

  // One input item: a plain message {role, content} or a session line
  // {type, message, sessionId, timestamp}. `where` prefixes errors.
  Status AddItem(const json& item, const std::string& where) {
    if (!item.is_object()) {
      return InvalidArgument(where + ": expected a JSON object");
    }
    const json* message = &item;
    std::string session;
    double stamp = kNaN;
    if (!item.contains("role")) {
      if (item.contains("message") && item["message"].is_object()) {
        message = &item["message"];
      } else {
        ++skipped_;  // summary, system, snapshot lines: no message
        return Status::Ok();
      }
    }
    if (item.contains("sessionId") && item["sessionId"].is_string()) {
      session = item["sessionId"].get<std::string>();
    } else if (item.contains("session_id") && item["session_id"].is_string()) {
      session = item["session_id"].get<std::string>();
    }
    if (item.contains("timestamp")) stamp = ParseIsoTime(item["timestamp"]);
    if (!message->contains("content")) return Status::Ok();
    const json& content = (*message)["content"];
    if (content.is_string() || content.is_null()) return Status::Ok();
    if (!content.is_array()) {
      return InvalidArgument(where +
                             ": 'content' must be a string or an array of "
                             "blocks");
    }
    for (size_t b = 0; b < content.size(); ++b) {
      const json& block = content[b];
      const std::string at = where + ", content[" + std::to_string(b) + "]";
      if (!block.is_object() || !block.contains("type")) continue;
      const json& type = block["type"];
      if (type == "tool_use") {
        if (!block.contains("id") || !block["id"].is_string()) {
          return InvalidArgument(at + ": tool_use without a string 'id'");
        }
        if (!block.contains("name") || !block["name"].is_string() ||
            block["name"].get<std::string>().empty()) {
          return InvalidArgument(at + ": tool_use without a 'name'");
        }
        const std::string id = block["id"].get<std::string>();
        if (index_.contains(id)) continue;  // repeated line of one message
        json input = block.contains("input") && !block["input"].is_null()
                         ? block["input"]
                         : json::object();
        Result<std::string> canon = CanonicalArguments(input);
        if (!canon.ok()) {
          return InvalidArgument(at + ": 'input': " + canon.status().message());
        }
        Call c;
        c.rec.session = session;
        c.rec.tool = block["name"].get<std::string>();
        c.rec.arguments = std::move(*canon);
        c.call_time = stamp;
        index_[id] = calls_.size();
        calls_.push_back(std::move(c));
      } else if (type == "tool_result") {
        if (!block.contains("tool_use_id") ||
            !block["tool_use_id"].is_string()) {
          return InvalidArgument(at +
                                 ": tool_result without a string "
                                 "'tool_use_id'");
        }
        auto it = index_.find(block["tool_use_id"].get<std::string>());
        if (it == index_.end() || calls_[it->second].paired) {
          ++result_.report.results_without_call;
          continue;
        }
        Call& c = calls_[it->second];
        const std::string bytes = ResultContentBytes(
            block.contains("content") ? block["content"] : json());
        c.paired = true;
        c.rec.result_size = bytes.size();
        c.rec.result_digest = ResultDigest(bytes);
        c.rec.error = block.contains("is_error") &&
                      block["is_error"].is_boolean() &&
                      block["is_error"].get<bool>();
        c.result_time = stamp;
      }
    }
    return Status::Ok();
  }

  ConvertResult Finish() {
    std::vector<Call> kept;
    for (Call& c : calls_) {
      if (c.paired) {
        kept.push_back(std::move(c));
      } else {
        ++result_.report.calls_without_result;
      }
    }
    const bool timed =
        !kept.empty() &&
        std::all_of(kept.begin(), kept.end(), [](const Call& c) {
          // A latency the trace reader refuses (a clock
          // that jumped years) leaves the session untimed.
          return !std::isnan(c.call_time) && !std::isnan(c.result_time) &&
                 c.result_time >= c.call_time &&
                 c.result_time - c.call_time <= kMaxTraceLatencySeconds;
        });
    double t0 = kNaN;
    if (timed) {
      std::stable_sort(kept.begin(), kept.end(),
                       [](const Call& a, const Call& b) {
                         return a.call_time < b.call_time;
                       });
      t0 = kept.front().call_time;
    }
    for (Call& c : kept) {
      assigner_.Assign(&c.rec, /*needs_size=*/false);
      if (timed) {
        c.rec.time = c.call_time - t0;
        c.rec.latency = c.result_time - c.call_time;
      }
      result_.trace.records.push_back(std::move(c.rec));
    }
    assigner_.Finish();
    if (timed) {
      result_.report.notes.push_back(
          "measured latency and time from the transcript's timestamps for "
          "all " +
          std::to_string(kept.size()) +
          " calls (latency lines above count only the cost assignment)");
    }
    if (skipped_ > 0) {
      result_.report.notes.push_back("skipped " + std::to_string(skipped_) +
                                     " lines without a message");
    }
    FinishReport(result_.trace, &result_.report);
    return std::move(result_);
  }

 private:
  ConvertResult result_;
  Assigner assigner_;
  std::vector<Call> calls_;
  std::map<std::string, size_t> index_;
  uint64_t skipped_ = 0;
};

}  // namespace

Result<ConvertResult> ConvertAnthropic(std::istream& in,
                                       std::string_view source_name,
                                       const ConvertOptions& options,
                                       ToolDefs* defs) {
  const ToolTable default_table;
  const ToolTable& table =
      options.tool_table ? *options.tool_table : default_table;
  Converter conv(table);
  const std::string src(source_name);
  const std::string text = ReadAll(in);
  json whole = json::parse(text, nullptr, false);
  if (!whole.is_discarded()) {
    const json* items = &whole;
    if (whole.is_object() && whole.contains("messages")) {
      items = &whole["messages"];  // a Messages API request body
      // Its tool definitions inform the classifier only.
      if (whole.contains("tools") && whole["tools"].is_array()) {
        for (const json& def : whole["tools"]) AddToolDefinition(def, defs);
      }
    }
    if (items->is_array()) {
      for (size_t i = 0; i < items->size(); ++i) {
        Status s =
            conv.AddItem((*items)[i], src + ": message " + std::to_string(i));
        if (!s.ok()) return s;
      }
      return conv.Finish();
    }
    if (!whole.is_object()) {
      return InvalidArgument(src +
                             ": expected JSON Lines of messages, a JSON "
                             "array of messages, or an object with "
                             "'messages'");
    }
    // A single-line JSONL file: fall through to the line loop.
  }
  std::istringstream lines(text);
  std::string line;
  uint64_t line_no = 0;
  while (std::getline(lines, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = src + ":" + std::to_string(line_no);
    json item = json::parse(line, nullptr, false);
    if (item.is_discarded()) {
      return InvalidArgument(where + ": not valid JSON");
    }
    Status s = conv.AddItem(item, where);
    if (!s.ok()) return s;
  }
  return conv.Finish();
}

}  // namespace toolcache::trace_internal
