// The JSON Lines trace format (docs/TRACES.md): reader and writer.
//
// Invariants:
// - ReadTrace never guesses: a missing required field, a wrongly typed
//   field, an unknown field (other than the "x_" extension prefix) or a
//   duplicate member rejects the whole trace with "<source>:<line>: <reason>".
// - Every record it returns has a non-empty tool, canonical arguments (an
//   object), finite non-negative latency/cost/ttl, and result_size, latency,
//   cost and time within the documented bounds (kMaxTrace* in trace.h).
// - `time` is all-or-nothing: either every record carries it (non-decreasing)
//   or none does.
// - WriteTrace(ReadTrace(x)) is a fixed point: reading what it writes gives
//   back equal records.
#include "toolcache/trace.h"

#include <cmath>
#include <fstream>
#include <istream>
#include <limits>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <string>

#include "src/sim/convert_common.h"

namespace toolcache {
namespace {

using nlohmann::json;

// Choice: fields starting with "x_" are ignored so that tools can carry notes
// (e.g. the converters' provenance) without breaking strict readers.
constexpr std::string_view kExtensionPrefix = "x_";

const std::set<std::string, std::less<>>& KnownFields() {
  static const auto* fields = new std::set<std::string, std::less<>>{
      "time",      "session",      "user",          "tenant", "tool",
      "arguments", "result_size",  "latency",       "cost",   "ttl",
      "error",     "request_type", "result_digest", "server"};
  return *fields;
}

// Returns "" when `v` is a finite number in [0, max] and stores it in *out.
std::string NonNegativeNumber(const json& v, std::string_view field,
                              double* out,
                              double max = std::numeric_limits<double>::max()) {
  if (!v.is_number()) {
    return "'" + std::string(field) + "' must be a non-negative number, got " +
           v.type_name();
  }
  double d = v.get<double>();
  if (!std::isfinite(d) || d < 0) {
    return "'" + std::string(field) + "' must be a non-negative number, got " +
           trace_internal::SafeDump(v);
  }
  if (d > max) {
    return "'" + std::string(field) + "' " + trace_internal::SafeDump(v) +
           " exceeds the maximum " + json(max).dump() + " (docs/TRACES.md)";
  }
  *out = d;
  return "";
}

}  // namespace

namespace trace_internal {

std::string ParseTraceRecord(std::string_view line, TraceRecord* rec) {
  // Duplicate top-level members: nlohmann keeps the last silently; we refuse.
  std::string duplicate;
  std::set<std::string> seen;
  json::parser_callback_t cb = [&](int depth, json::parse_event_t event,
                                   json& parsed) {
    if (event == json::parse_event_t::key && depth == 1) {
      std::string k = parsed.get<std::string>();
      if (!seen.insert(k).second && duplicate.empty()) duplicate = k;
    }
    return true;
  };
  json j =
      json::parse(line.begin(), line.end(), cb, /*allow_exceptions=*/false);
  if (j.is_discarded()) return "not valid JSON";
  if (!j.is_object()) {
    return std::string("a record must be a JSON object, got ") + j.type_name();
  }
  if (!duplicate.empty()) return "duplicate field '" + duplicate + "'";
  for (const auto& [k, v] : j.items()) {
    if (!KnownFields().contains(k) && !k.starts_with(kExtensionPrefix)) {
      return "unknown field '" + k +
             "' (fields starting with 'x_' are ignored; see docs/TRACES.md)";
    }
  }
  // Required.
  if (!j.contains("tool")) return "missing required field 'tool'";
  if (!j["tool"].is_string() || j["tool"].get<std::string>().empty()) {
    return "'tool' must be a non-empty string";
  }
  rec->tool = j["tool"].get<std::string>();
  if (!j.contains("arguments")) return "missing required field 'arguments'";
  if (!j["arguments"].is_object()) {
    return std::string("'arguments' must be a JSON object, got ") +
           j["arguments"].type_name();
  }
  Result<std::string> args = trace_internal::CanonicalArguments(j["arguments"]);
  if (!args.ok()) return "'arguments': " + args.status().message();
  rec->arguments = std::move(*args);
  if (!j.contains("result_size")) return "missing required field 'result_size'";
  const json& size = j["result_size"];
  if (!size.is_number_unsigned() &&
      !(size.is_number_integer() && size.get<int64_t>() >= 0)) {
    return "'result_size' must be a non-negative integer, got " +
           trace_internal::SafeDump(size);
  }
  rec->result_size = size.get<uint64_t>();
  if (rec->result_size > kMaxTraceResultSize) {
    return "'result_size' " + std::to_string(rec->result_size) +
           " exceeds the maximum " + std::to_string(kMaxTraceResultSize) +
           " (1 TiB)";
  }
  // Optional.
  std::string err;
  if (j.contains("time") && !j["time"].is_null()) {
    if (!(err = NonNegativeNumber(j["time"], "time", &rec->time,
                                  kMaxTraceTimeSeconds))
             .empty()) {
      return err;
    }
  }
  for (const char* f :
       {"session", "user", "tenant", "result_digest", "server"}) {
    if (!j.contains(f)) continue;
    if (!j[f].is_string()) {
      return "'" + std::string(f) + "' must be a string, got " +
             j[f].type_name();
    }
  }
  if (j.contains("session")) rec->session = j["session"].get<std::string>();
  if (j.contains("user")) rec->user = j["user"].get<std::string>();
  if (j.contains("tenant")) rec->tenant = j["tenant"].get<std::string>();
  if (j.contains("server")) rec->server = j["server"].get<std::string>();
  if (j.contains("result_digest")) {
    rec->result_digest = j["result_digest"].get<std::string>();
  }
  if (j.contains("latency") &&
      !(err = NonNegativeNumber(j["latency"], "latency", &rec->latency,
                                kMaxTraceLatencySeconds))
           .empty()) {
    return err;
  }
  if (j.contains("cost") &&
      !(err = NonNegativeNumber(j["cost"], "cost", &rec->cost, kMaxTraceCost))
           .empty()) {
    return err;
  }
  if (j.contains("ttl") && !j["ttl"].is_null() &&
      !(err = NonNegativeNumber(j["ttl"], "ttl", &rec->ttl)).empty()) {
    return err;
  }
  if (j.contains("error")) {
    if (!j["error"].is_boolean()) {
      return std::string("'error' must be true or false, got ") +
             trace_internal::SafeDump(j["error"]);
    }
    rec->error = j["error"].get<bool>();
  }
  if (j.contains("request_type") && !j["request_type"].is_null()) {
    const json& t = j["request_type"];
    std::optional<RequestType> type;
    if (t.is_string()) type = ParseRequestType(t.get<std::string>());
    if (!type) {
      return "'request_type' must be \"INFORMATIONAL\" or \"COMMAND\", got " +
             trace_internal::SafeDump(t);
    }
    rec->request_type = type;
  }
  return "";
}

}  // namespace trace_internal

namespace {

void WriteNumber(std::ostream& out, double d) { out << json(d).dump(); }

}  // namespace

Result<Trace> ReadTrace(std::istream& in, std::string_view source_name) {
  Trace trace;
  trace.name = std::string(source_name);
  std::string line;
  uint64_t line_no = 0;
  std::optional<bool> timed;  // set by the first record
  double last_time = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    TraceRecord rec;
    std::string reason = trace_internal::ParseTraceRecord(line, &rec);
    const bool has_time = !std::isnan(rec.time);
    if (reason.empty() && timed.has_value() && *timed != has_time) {
      reason = has_time ? "'time' is present here but missing on earlier "
                          "records (all records or none carry 'time')"
                        : "'time' is missing here but present on earlier "
                          "records (all records or none carry 'time')";
    }
    if (reason.empty() && has_time && rec.time < last_time) {
      reason = "'time' " + json(rec.time).dump() +
               " is before the previous record's time " +
               json(last_time).dump();
    }
    if (!reason.empty()) {
      return InvalidArgument(std::string(source_name) + ":" +
                             std::to_string(line_no) + ": " + reason);
    }
    timed = has_time;
    if (has_time) last_time = rec.time;
    trace.records.push_back(std::move(rec));
  }
  if (in.bad()) {
    return Unavailable(std::string(source_name) + ": read error");
  }
  return trace;
}

Result<Trace> ReadTraceFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open trace file");
  Result<Trace> t = ReadTrace(in, path);
  if (!t.ok()) return t;
  std::string stem = path.substr(path.find_last_of('/') + 1);
  if (auto dot = stem.find('.'); dot != std::string::npos && dot > 0) {
    stem.resize(dot);
  }
  t->name = stem;
  return t;
}

void WriteTrace(const Trace& trace, std::ostream& out) {
  for (const TraceRecord& r : trace.records) {
    out << '{';
    if (!std::isnan(r.time)) {
      out << "\"time\":";
      WriteNumber(out, r.time);
      out << ',';
    }
    out << "\"session\":" << trace_internal::SafeDump(r.session)
        << ",\"user\":" << trace_internal::SafeDump(r.user);
    if (!r.tenant.empty()) {
      out << ",\"tenant\":" << trace_internal::SafeDump(r.tenant);
    }
    if (!r.server.empty()) {
      out << ",\"server\":" << trace_internal::SafeDump(r.server);
    }
    out << ",\"tool\":" << trace_internal::SafeDump(r.tool)
        << ",\"arguments\":" << (r.arguments.empty() ? "{}" : r.arguments)
        << ",\"result_size\":" << r.result_size << ",\"latency\":";
    WriteNumber(out, r.latency);
    out << ",\"cost\":";
    WriteNumber(out, r.cost);
    if (!std::isnan(r.ttl)) {
      out << ",\"ttl\":";
      WriteNumber(out, r.ttl);
    }
    out << ",\"error\":" << (r.error ? "true" : "false");
    if (r.request_type.has_value()) {
      out << ",\"request_type\":\"" << RequestTypeName(*r.request_type) << '"';
    }
    if (!r.result_digest.empty()) {
      out << ",\"result_digest\":" << trace_internal::SafeDump(r.result_digest);
    }
    out << "}\n";
  }
}

}  // namespace toolcache
