// Tool-definition readers (MCP tools/list JSON, JSON Lines, CSV) and the
// evaluation against annotation ground truth.
//
// Invariants:
// - Never throws: JSON parse errors and malformed CSV become
//   INVALID_ARGUMENT naming the source and line.
// - An input with zero tools is an error (nothing to classify is almost
//   always a wrong file).
// - The text is checked once, up front, for NUL bytes (a binary file) and
//   invalid UTF-8, so every format reports them the same way and every
//   string handed on (names, descriptions, JSON output) is valid UTF-8.
// - JSON objects are read with ordered_json so schema property order (the
//   tool-level parameter category) is the file's order.
#include "src/classify/tool_input.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "src/core/canonical_json_internal.h"

namespace toolcache::classify {
namespace {

using Json = nlohmann::ordered_json;

std::string Where(std::string_view source, uint32_t line) {
  std::string s(source);
  if (line > 0) s += ":" + std::to_string(line);
  return s;
}

// 1-based line of byte `pos`.
uint32_t LineOf(std::string_view text, size_t pos) {
  return static_cast<uint32_t>(
      1 + std::count(text.begin(), text.begin() + pos, '\n'));
}

// Rejects what no reader could make sense of: a NUL byte (binary input) or
// bytes that are not UTF-8.
Status CheckText(std::string_view text, std::string_view source) {
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    return InvalidArgument(Where(source, LineOf(text, nul)) +
                           ": NUL byte at byte " + std::to_string(nul) +
                           ": this looks like a binary file, not tool "
                           "definitions (JSON, JSON Lines or CSV text)");
  }
  const char* problem = "invalid UTF-8";
  const size_t bad = jcs::FindInvalidUtf8(text, &problem);
  if (bad != text.size()) {
    return InvalidArgument(Where(source, LineOf(text, bad)) + ": " + problem +
                           " at byte " + std::to_string(bad) +
                           " (tool definitions must be UTF-8 text)");
  }
  return Status::Ok();
}

Status AddTool(const Json& tool, std::string_view source, uint32_t line,
               std::vector<LabeledTool>& out) {
  Result<ToolInfo> info = ToolInfoFromJson(tool);
  if (!info.ok()) {
    std::string where = Where(source, line);
    if (line == 0) where += ": tool #" + std::to_string(out.size() + 1);
    return InvalidArgument(where + ": " + info.status().message());
  }
  out.push_back({std::move(*info), line});
  return Status::Ok();
}

Result<std::vector<LabeledTool>> FromDocument(const Json& doc,
                                              std::string_view source) {
  const Json* tools = nullptr;
  if (doc.is_array()) {
    tools = &doc;
  } else if (doc.is_object()) {
    if (auto it = doc.find("tools"); it != doc.end()) {
      tools = &*it;
    } else if (auto r = doc.find("result");
               r != doc.end() && r->is_object() && r->contains("tools")) {
      tools = &(*r)["tools"];
    } else if (auto e = doc.find("error"); e != doc.end()) {
      return InvalidArgument(
          std::string(source) +
          ": the JSON-RPC response is an error: " + e->dump());
    } else if (doc.contains("name")) {
      std::vector<LabeledTool> out;
      Status s = AddTool(doc, source, 1, out);
      if (!s.ok()) return s;
      return out;
    }
  }
  if (!tools || !tools->is_array()) {
    return InvalidArgument(
        std::string(source) +
        ": expected a tools/list result ({\"tools\": [...]}), a JSON-RPC "
        "response with result.tools, or an array of tool objects");
  }
  std::vector<LabeledTool> out;
  for (const Json& t : *tools) {
    Status s = AddTool(t, source, 0, out);
    if (!s.ok()) return s;
  }
  return out;
}

Result<std::vector<LabeledTool>> FromJsonLines(std::string_view text,
                                               std::string_view source) {
  std::vector<LabeledTool> out;
  uint32_t line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    ++line_no;
    pos = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    Json obj = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (obj.is_discarded()) {
      return InvalidArgument(Where(source, line_no) +
                             ": not valid JSON (expected one tool object per "
                             "line)");
    }
    // BFCL lines ({"id", "question", "function": [...]}) carry several
    // function definitions with their schema under "parameters".
    if (obj.is_object() && !obj.contains("name") && obj.contains("function") &&
        obj["function"].is_array()) {
      for (Json f : obj["function"]) {
        if (f.is_object() && f.contains("parameters") &&
            !f.contains("inputSchema")) {
          f["inputSchema"] = f["parameters"];
        }
        Status s = AddTool(f, source, line_no, out);
        if (!s.ok()) return s;
      }
      continue;
    }
    Status s = AddTool(obj, source, line_no, out);
    if (!s.ok()) return s;
  }
  return out;
}

// RFC 4180 records; each record remembers the line it starts on.
struct CsvRecord {
  std::vector<std::string> fields;
  uint32_t line = 0;
};

Result<std::vector<CsvRecord>> SplitCsv(std::string_view text,
                                        std::string_view source) {
  std::vector<CsvRecord> records;
  CsvRecord cur;
  std::string field;
  bool quoted = false;
  bool field_started = false;
  uint32_t line = 1;
  cur.line = 1;
  auto end_field = [&] {
    cur.fields.push_back(std::move(field));
    field.clear();
    field_started = false;
  };
  auto end_record = [&] {
    end_field();
    const bool blank = cur.fields.size() == 1 && cur.fields[0].empty();
    if (!blank) records.push_back(std::move(cur));
    cur = CsvRecord();
    cur.line = line;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"' && !field_started) {
      quoted = true;
      field_started = true;
    } else if (c == ',') {
      end_field();
    } else if (c == '\n') {
      ++line;
      end_record();
    } else if (c != '\r') {
      field += c;
      field_started = true;
    }
  }
  if (quoted) {
    return InvalidArgument(Where(source, cur.line) +
                           ": unterminated quoted CSV field");
  }
  if (field_started || !field.empty() || !cur.fields.empty()) end_record();
  return records;
}

Result<std::optional<bool>> CsvBool(const std::string& v,
                                    std::string_view where,
                                    std::string_view column) {
  std::string s;
  for (char c : v) {
    if (!std::isspace(static_cast<unsigned char>(c))) {
      s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  if (s.empty()) return std::optional<bool>();
  if (s == "true" || s == "1" || s == "yes") return std::optional<bool>(true);
  if (s == "false" || s == "0" || s == "no") return std::optional<bool>(false);
  return InvalidArgument(std::string(where) + ": column '" +
                         std::string(column) +
                         "' must be true/false or empty, got '" + v + "'");
}

Result<std::vector<LabeledTool>> FromCsv(std::string_view text,
                                         std::string_view source) {
  Result<std::vector<CsvRecord>> records = SplitCsv(text, source);
  if (!records.ok()) return records.status();
  if (records->empty()) {
    return InvalidArgument(std::string(source) + ": empty input");
  }
  std::map<std::string, size_t> col;
  const CsvRecord& header = records->front();
  for (size_t i = 0; i < header.fields.size(); ++i) {
    std::string h = header.fields[i];
    h.erase(0, h.find_first_not_of(" \xEF\xBB\xBF"));  // spaces, UTF-8 BOM
    col.emplace(h, i);
  }
  std::optional<size_t> name_col;
  for (const char* n : {"name", "tool"}) {
    if (auto it = col.find(n); it != col.end()) {
      name_col = it->second;
      break;
    }
  }
  if (!name_col) {
    return InvalidArgument(
        std::string(source) +
        ": not a tools/list JSON, JSON Lines or a CSV with a 'name' (or "
        "'tool') column in its header");
  }
  auto get = [&](const CsvRecord& r, const char* column) -> std::string {
    auto it = col.find(column);
    if (it == col.end() || it->second >= r.fields.size()) return "";
    return r.fields[it->second];
  };
  std::vector<LabeledTool> out;
  for (size_t i = 1; i < records->size(); ++i) {
    const CsvRecord& r = (*records)[i];
    const std::string where = Where(source, r.line);
    if (r.fields.size() != header.fields.size()) {
      return InvalidArgument(where + ": " + std::to_string(r.fields.size()) +
                             " fields, the header has " +
                             std::to_string(header.fields.size()));
    }
    LabeledTool t;
    t.line = r.line;
    t.info.name = r.fields[*name_col];
    if (t.info.name.empty()) {
      return InvalidArgument(where + ": empty tool name");
    }
    t.info.title = get(r, "title");
    t.info.description = get(r, "description");
    t.info.input_schema_json = get(r, "inputSchema");
    t.info.server = get(r, "server");
    ToolAnnotations a;
    for (auto [column, field] : {std::pair{"readOnlyHint", &a.read_only},
                                 std::pair{"destructiveHint", &a.destructive},
                                 std::pair{"idempotentHint", &a.idempotent},
                                 std::pair{"openWorldHint", &a.open_world}}) {
      Result<std::optional<bool>> b = CsvBool(get(r, column), where, column);
      if (!b.ok()) return b.status();
      *field = *b;
    }
    if (a.any()) t.info.annotations = a;
    out.push_back(std::move(t));
  }
  return out;
}

double Ratio(uint32_t num, uint32_t den) {
  return den == 0 ? 0.0 : static_cast<double>(num) / den;
}

}  // namespace

Result<std::vector<LabeledTool>> ParseToolDefinitions(std::string_view text,
                                                      std::string_view source) {
  if (Status s = CheckText(text, source); !s.ok()) return s;
  // Choice: a leading UTF-8 byte order mark (spreadsheet and Windows editor
  // exports) is skipped, so format detection sees the first real character.
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    return InvalidArgument(std::string(source) + ": empty input");
  }
  Result<std::vector<LabeledTool>> out = InvalidArgument("");
  if (text[first] == '{' || text[first] == '[') {
    Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_discarded()) {
      out = FromDocument(doc, source);
    } else if (text[first] == '{' &&
               !Json::parse(text.substr(first, text.find('\n', first) - first),
                            nullptr, /*allow_exceptions=*/false)
                    .is_discarded()) {
      // The first line is a whole JSON value: JSON Lines.
      out = FromJsonLines(text, source);
    } else {
      // One broken JSON document: report where the parser stopped.
      try {
        Json ignored = Json::parse(text);
        (void)ignored;
      } catch (const Json::parse_error& e) {
        return InvalidArgument(std::string(source) +
                               ": invalid JSON: " + e.what());
      }
      return InvalidArgument(std::string(source) + ": invalid JSON");
    }
  } else {
    out = FromCsv(text, source);
  }
  if (out.ok() && out->empty()) {
    return InvalidArgument(std::string(source) + ": no tool definitions found");
  }
  return out;
}

Result<std::vector<CsvRow>> ParseCsv(std::string_view text,
                                     std::string_view source) {
  Result<std::vector<CsvRecord>> records = SplitCsv(text, source);
  if (!records.ok()) return records.status();
  std::vector<CsvRow> rows;
  rows.reserve(records->size());
  for (CsvRecord& r : *records) rows.push_back({std::move(r.fields), r.line});
  return rows;
}

double Confusion::Accuracy() const { return Ratio(tp + tn, total()); }
double Confusion::Precision() const { return Ratio(tp, tp + fp); }
double Confusion::Recall() const { return Ratio(tp, tp + fn); }
double Confusion::F1() const {
  const double p = Precision(), r = Recall();
  return p + r == 0 ? 0.0 : 2 * p * r / (p + r);
}

Evaluation Evaluate(const Classifier& classifier,
                    const std::vector<LabeledTool>& tools) {
  Evaluation e;
  for (const LabeledTool& t : tools) {
    if (!t.info.annotations || !t.info.annotations->read_only) {
      ++e.skipped;
      continue;
    }
    const bool truth_command = !*t.info.annotations->read_only;
    ToolInfo blind = t.info;
    blind.annotations.reset();
    const bool predicted_command =
        classifier.Classify(blind).request_type == RequestType::kCommand;
    Confusion& c = e.command_positive;
    if (truth_command && predicted_command) ++c.tp;
    if (!truth_command && predicted_command) {
      ++c.fp;
      e.lost.push_back(t.info.name);
    }
    if (!truth_command && !predicted_command) ++c.tn;
    if (truth_command && !predicted_command) {
      ++c.fn;
      e.costly.push_back(t.info.name);
    }
  }
  return e;
}

}  // namespace toolcache::classify
