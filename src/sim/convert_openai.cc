// OpenAI-chat trajectories -> trace records.
//
// Invariants:
// - One record per assistant `tool_calls[i]` that has a `role: tool` message
//   with the same `tool_call_id` in the same trajectory; records keep the
//   order of the calls. A call with no result is dropped and counted; a
//   result with no call is ignored and counted. Nothing is guessed.
// - result_size is the byte count of the tool message content (string, or
//   the concatenated text of its parts), result_digest its SHA-256.
// - error is true only when the tool message itself says so (`is_error` or
//   `error` set to true); the content is never inspected for error words.
// - latency/cost come from the tool table (chat logs carry no timings).
// - A trajectory's `tools` / `functions` definitions are collected for the
//   classifier (ConvertTrace types every call the source leaves untyped).
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "src/sim/convert_common.h"
#include "src/sim/convert_sources.h"

namespace toolcache::trace_internal {
namespace {

using nlohmann::json;

// Choice: the keys under which a trajectory object holds its messages, in
// the order they are tried (documented in docs/TRACES.md).
constexpr std::string_view kMessageKeys[] = {"messages", "traj", "trajectory",
                                             "conversation", "conversations"};
constexpr std::string_view kSessionKeys[] = {
    "id", "session_id", "conversation_id", "trajectory_id"};
constexpr std::string_view kUserKeys[] = {"user", "user_id"};

std::string IdText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  return "";
}

class Converter {
 public:
  Converter(std::string_view source, const ToolTable& table, ToolDefs* defs)
      : source_(source), assigner_(table, &result_.report), defs_(defs) {}

  // `where` prefixes error messages ("chats.json: trajectory 3").
  Status AddTrajectory(const json& traj, size_t index,
                       const std::string& where) {
    const json* messages = nullptr;
    std::string session, user;
    if (traj.is_array()) {
      messages = &traj;
    } else if (traj.is_object()) {
      for (std::string_view k : kMessageKeys) {
        auto it = traj.find(std::string(k));
        if (it != traj.end()) {
          messages = &*it;
          break;
        }
      }
      for (std::string_view k : kSessionKeys) {
        auto it = traj.find(std::string(k));
        if (it != traj.end() && !IdText(*it).empty()) {
          session = IdText(*it);
          break;
        }
      }
      // Tool definitions (Chat Completions `tools`, legacy `functions`)
      // inform the classifier only.
      for (const char* k : {"tools", "functions"}) {
        auto it = traj.find(k);
        if (it != traj.end() && it->is_array()) {
          for (const json& def : *it) AddToolDefinition(def, defs_);
        }
      }
      for (std::string_view k : kUserKeys) {
        auto it = traj.find(std::string(k));
        if (it != traj.end() && !IdText(*it).empty()) {
          user = IdText(*it);
          break;
        }
      }
    }
    if (messages == nullptr || !messages->is_array()) {
      return InvalidArgument(
          where +
          ": no message list (expected an array of messages, or an object "
          "holding one under 'messages', 'traj', 'trajectory', "
          "'conversation' or 'conversations')");
    }
    if (session.empty()) session = "traj-" + std::to_string(index);

    struct Call {
      TraceRecord rec;
      std::string id;
      bool paired = false;
    };
    std::vector<Call> calls;
    for (size_t m = 0; m < messages->size(); ++m) {
      const json& msg = (*messages)[m];
      const std::string at = where + ", message " + std::to_string(m);
      if (!msg.is_object()) {
        return InvalidArgument(at + ": a message must be a JSON object");
      }
      const std::string role = msg.contains("role") && msg["role"].is_string()
                                   ? msg["role"].get<std::string>()
                                   : "";
      if (role == "assistant" && msg.contains("tool_calls") &&
          !msg["tool_calls"].is_null()) {
        const json& tcs = msg["tool_calls"];
        if (!tcs.is_array()) {
          return InvalidArgument(at + ": 'tool_calls' must be an array");
        }
        for (size_t i = 0; i < tcs.size(); ++i) {
          const std::string tc_at =
              at + ", tool_calls[" + std::to_string(i) + "]";
          const json& tc = tcs[i];
          if (!tc.is_object() || !tc.contains("function") ||
              !tc["function"].is_object()) {
            return InvalidArgument(tc_at + ": missing 'function' object");
          }
          const json& fn = tc["function"];
          if (!fn.contains("name") || !fn["name"].is_string() ||
              fn["name"].get<std::string>().empty()) {
            return InvalidArgument(tc_at + ": missing 'function.name'");
          }
          if (!tc.contains("id") || IdText(tc["id"]).empty()) {
            return InvalidArgument(tc_at +
                                   ": missing 'id' (needed to pair the call "
                                   "with its tool message)");
          }
          json args;
          if (!fn.contains("arguments") || fn["arguments"].is_null()) {
            args = json::object();
          } else if (fn["arguments"].is_string()) {
            const std::string text = fn["arguments"].get<std::string>();
            // Choice: an empty arguments string means no arguments ({}).
            if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
              args = json::object();
            } else {
              args = json::parse(text, nullptr, false);
              if (args.is_discarded()) {
                return InvalidArgument(
                    tc_at + ": 'function.arguments' is not valid JSON: " +
                    text.substr(0, 80));
              }
            }
          } else {
            args = fn["arguments"];
          }
          Result<std::string> canon = CanonicalArguments(args);
          if (!canon.ok()) {
            return InvalidArgument(
                tc_at + ": 'function.arguments': " + canon.status().message());
          }
          Call c;
          c.id = IdText(tc["id"]);
          c.rec.session = session;
          c.rec.user = user;
          c.rec.tool = fn["name"].get<std::string>();
          c.rec.arguments = std::move(*canon);
          calls.push_back(std::move(c));
        }
      } else if (role == "tool") {
        if (!msg.contains("tool_call_id") ||
            IdText(msg["tool_call_id"]).empty()) {
          return InvalidArgument(at + ": tool message without 'tool_call_id'");
        }
        const std::string id = IdText(msg["tool_call_id"]);
        Call* match = nullptr;
        for (Call& c : calls) {
          if (!c.paired && c.id == id) {
            match = &c;
            break;
          }
        }
        if (match == nullptr) {
          ++result_.report.results_without_call;
          continue;
        }
        const std::string bytes = ResultContentBytes(
            msg.contains("content") ? msg["content"] : json());
        match->paired = true;
        match->rec.result_size = bytes.size();
        match->rec.result_digest = ResultDigest(bytes);
        for (const char* k : {"is_error", "error"}) {
          if (msg.contains(k) && msg[k].is_boolean() && msg[k].get<bool>()) {
            match->rec.error = true;
          }
        }
      }
    }
    for (Call& c : calls) {
      if (!c.paired) {
        ++result_.report.calls_without_result;
        continue;
      }
      assigner_.Assign(&c.rec, /*needs_size=*/false);
      result_.trace.records.push_back(std::move(c.rec));
    }
    return Status::Ok();
  }

  ConvertResult Finish() {
    assigner_.Finish();
    FinishReport(result_.trace, &result_.report);
    return std::move(result_);
  }

 private:
  std::string source_;
  ConvertResult result_;
  Assigner assigner_;
  ToolDefs* defs_;
};

bool LooksLikeMessage(const json& v) {
  return v.is_object() && v.contains("role");
}

}  // namespace

Result<ConvertResult> ConvertOpenAiChat(std::istream& in,
                                        std::string_view source_name,
                                        const ConvertOptions& options,
                                        ToolDefs* defs) {
  const ToolTable default_table;
  const ToolTable& table =
      options.tool_table ? *options.tool_table : default_table;
  Converter conv(source_name, table, defs);
  const std::string src(source_name);
  const std::string text = ReadAll(in);
  json whole = json::parse(text, nullptr, false);
  if (!whole.is_discarded()) {
    if (whole.is_array() && !whole.empty() && LooksLikeMessage(whole[0])) {
      // A bare message list: one trajectory.
      Status s = conv.AddTrajectory(whole, 0, src + ": trajectory 0");
      if (!s.ok()) return s;
    } else if (whole.is_array()) {
      for (size_t i = 0; i < whole.size(); ++i) {
        Status s = conv.AddTrajectory(
            whole[i], i, src + ": trajectory " + std::to_string(i));
        if (!s.ok()) return s;
      }
    } else if (whole.is_object()) {
      Status s = conv.AddTrajectory(whole, 0, src + ": trajectory 0");
      if (!s.ok()) return s;
    } else {
      return InvalidArgument(src +
                             ": expected a JSON array of trajectories, one "
                             "trajectory object, or JSON Lines of them");
    }
    return conv.Finish();
  }
  // JSON Lines: one trajectory object per line.
  std::istringstream lines(text);
  std::string line;
  uint64_t line_no = 0;
  size_t index = 0;
  while (std::getline(lines, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json traj = json::parse(line, nullptr, false);
    const std::string where = src + ":" + std::to_string(line_no);
    if (traj.is_discarded()) {
      return InvalidArgument(where +
                             ": not valid JSON (the input is neither one JSON "
                             "document nor JSON Lines)");
    }
    Status s = conv.AddTrajectory(
        traj, index, where + ": trajectory " + std::to_string(index));
    if (!s.ok()) return s;
    ++index;
  }
  return conv.Finish();
}

}  // namespace toolcache::trace_internal
