// BFCL ground truth -> trace records, and the Python-call parser it needs.
//
// Invariants:
// - ParsePythonCall accepts exactly one call `name(args)` with literal
//   arguments and nothing after it; it never evaluates anything; nesting is
//   bounded (kMaxDepth) so hostile input cannot overflow the stack.
// - One record per call string, in file order (entry, turn, call); session =
//   the entry id. Positional arguments are named from the function docs;
//   without a doc naming them the conversion fails (never guessed).
// - request_type comes from the documented rule over the function docs
//   (BfclRequestType); a tool without a doc gets none and is counted.
// - BFCL has no results: result_size, latency and cost come from the tool
//   table and the report says so; result_digest stays empty.
// - Multi-turn records carry a tenant = the episode's initial world (hash of
//   its initial_config and involved_classes from the question file) plus
//   the hash of the COMMANDs the episode has run so far: two calls share a
//   cached result only if they read the same tool state. Without the
//   question file every episode is its own tenant.
#include "src/sim/convert_bfcl.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "src/core/canonical_json_internal.h"
#include "src/sim/convert_common.h"
#include "src/sim/convert_sources.h"

namespace toolcache {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// Choice: literals nest at most 64 deep; BFCL needs 2.
constexpr int kMaxDepth = 64;

class PyParser {
 public:
  explicit PyParser(std::string_view s) : s_(s) {}

  Result<PythonCall> ParseCall() {
    SkipWs();
    std::string name = Ident();
    if (name.empty()) return Fail("expected a function name");
    while (Peek() == '.') {
      ++pos_;
      std::string part = Ident();
      if (part.empty()) return Fail("expected a name after '.'");
      name += "." + part;
    }
    SkipWs();
    if (Peek() != '(') return Fail("expected '(' after the function name");
    ++pos_;
    ordered_json args = ordered_json::object();
    int positional = 0;
    bool seen_keyword = false;
    SkipWs();
    while (Peek() != ')') {
      if (AtEnd()) return Fail("unterminated argument list");
      // keyword argument: ident '=' (not '==')
      size_t save = pos_;
      std::string key = Ident();
      SkipWs();
      if (!key.empty() && Peek() == '=' && PeekAt(1) != '=') {
        ++pos_;
        SkipWs();
        if (args.contains(key)) {
          return Fail("keyword argument '" + key + "' repeated");
        }
        ordered_json v;
        if (!Value(&v, 0)) return Fail(error_);
        args[key] = std::move(v);
        seen_keyword = true;
      } else {
        pos_ = save;
        if (seen_keyword) {
          return Fail("positional argument after a keyword argument");
        }
        ordered_json v;
        if (!Value(&v, 0)) return Fail(error_);
        args["$" + std::to_string(positional++)] = std::move(v);
      }
      SkipWs();
      if (AtEnd()) return Fail("unterminated argument list");
      if (Peek() == ',') {
        ++pos_;
        SkipWs();
      } else if (Peek() != ')') {
        return Fail("expected ',' or ')' between arguments");
      }
    }
    ++pos_;  // ')'
    SkipWs();
    if (!AtEnd()) return Fail("unexpected text after the call");
    return PythonCall{name, args.dump()};
  }

 private:
  bool AtEnd() const { return pos_ >= s_.size(); }
  char Peek() const { return AtEnd() ? '\0' : s_[pos_]; }
  char PeekAt(size_t k) const {
    return pos_ + k < s_.size() ? s_[pos_ + k] : '\0';
  }
  void SkipWs() {
    while (!AtEnd() && std::isspace(static_cast<unsigned char>(s_[pos_]))) {
      ++pos_;
    }
  }
  std::string Ident() {
    size_t b = pos_;
    if (AtEnd() ||
        !(std::isalpha(static_cast<unsigned char>(Peek())) || Peek() == '_')) {
      return "";
    }
    while (!AtEnd() && (std::isalnum(static_cast<unsigned char>(Peek())) ||
                        Peek() == '_')) {
      ++pos_;
    }
    return std::string(s_.substr(b, pos_ - b));
  }
  Status Fail(const std::string& why) const {
    return InvalidArgument("at offset " + std::to_string(pos_) + ": " + why);
  }
  bool Err(std::string why) {
    error_ = std::move(why);
    return false;
  }

  bool Hex(size_t n, uint32_t* cp) {
    if (pos_ + n > s_.size()) return Err("truncated escape");
    uint32_t v = 0;
    for (size_t i = 0; i < n; ++i) {
      char c = s_[pos_ + i];
      if (!std::isxdigit(static_cast<unsigned char>(c))) {
        return Err("bad hex digit in escape");
      }
      v = v * 16 +
          static_cast<uint32_t>(
              std::isdigit(static_cast<unsigned char>(c))
                  ? c - '0'
                  : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
    }
    pos_ += n;
    *cp = v;
    return true;
  }

  // A string literal; its text must be valid UTF-8 (raw bytes and escapes
  // alike: "\ud800" is a lone surrogate), since it becomes a JSON string.
  bool String(std::string* out) {
    const size_t start = out->size();
    auto done = [&] {
      const char* problem = nullptr;
      std::string_view text = std::string_view(*out).substr(start);
      if (jcs::FindInvalidUtf8(text, &problem) != text.size()) {
        return Err(std::string("string is not valid UTF-8 (") + problem + ")");
      }
      return true;
    };
    const char q = Peek();
    ++pos_;
    const bool triple = PeekAt(0) == q && PeekAt(1) == q;
    if (triple) pos_ += 2;
    while (true) {
      if (AtEnd()) return Err("unterminated string");
      char c = s_[pos_];
      if (c == q) {
        if (!triple) {
          ++pos_;
          return done();
        }
        if (PeekAt(1) == q && PeekAt(2) == q) {
          pos_ += 3;
          return done();
        }
      }
      if (c == '\n' && !triple) return Err("newline inside a string");
      if (c != '\\') {
        out->push_back(c);
        ++pos_;
        continue;
      }
      ++pos_;
      if (AtEnd()) return Err("unterminated string");
      char e = s_[pos_++];
      uint32_t cp = 0;
      switch (e) {
        case 'n':
          out->push_back('\n');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case '0':
          out->push_back('\0');
          break;
        case '\\':
          out->push_back('\\');
          break;
        case '\'':
          out->push_back('\'');
          break;
        case '"':
          out->push_back('"');
          break;
        case '\n':
          break;  // line continuation
        case 'x':
          if (!Hex(2, &cp)) return false;
          jcs::AppendUtf8(cp, out);
          break;
        case 'u':
          if (!Hex(4, &cp)) return false;
          jcs::AppendUtf8(cp, out);
          break;
        case 'U':
          if (!Hex(8, &cp)) return false;
          if (cp > 0x10FFFF) return Err("escape beyond U+10FFFF");
          jcs::AppendUtf8(cp, out);
          break;
        default:  // Python keeps unknown escapes verbatim
          out->push_back('\\');
          out->push_back(e);
      }
    }
  }

  bool Number(ordered_json* out) {
    size_t b = pos_;
    if (Peek() == '-' || Peek() == '+') ++pos_;
    bool is_float = false;
    size_t digits = 0;
    while (std::isdigit(static_cast<unsigned char>(Peek())) || Peek() == '_') {
      ++pos_;
      ++digits;
    }
    if (Peek() == '.') {
      is_float = true;
      ++pos_;
      while (std::isdigit(static_cast<unsigned char>(Peek()))) {
        ++pos_;
        ++digits;
      }
    }
    if (digits == 0) return Err("expected a value");
    if (Peek() == 'e' || Peek() == 'E') {
      is_float = true;
      ++pos_;
      if (Peek() == '-' || Peek() == '+') ++pos_;
      if (!std::isdigit(static_cast<unsigned char>(Peek()))) {
        return Err("bad exponent");
      }
      while (std::isdigit(static_cast<unsigned char>(Peek()))) ++pos_;
    }
    std::string text(s_.substr(b, pos_ - b));
    text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
    errno = 0;
    if (!is_float) {
      char* end = nullptr;
      long long v = std::strtoll(text.c_str(), &end, 10);
      if (errno == 0 && *end == '\0') {
        *out = static_cast<int64_t>(v);
        return true;
      }
    }
    char* end = nullptr;
    double d = std::strtod(text.c_str(), &end);
    if (*end != '\0' || !std::isfinite(d)) return Err("bad number " + text);
    *out = d;
    return true;
  }

  bool Sequence(char close, ordered_json* out, int depth) {
    ++pos_;
    *out = ordered_json::array();
    SkipWs();
    while (Peek() != close) {
      if (AtEnd()) return Err("unterminated list");
      ordered_json v;
      if (!Value(&v, depth + 1)) return false;
      out->push_back(std::move(v));
      SkipWs();
      if (Peek() == ',') {
        ++pos_;
        SkipWs();
      } else if (Peek() != close) {
        return Err(std::string("expected ',' or '") + close + "'");
      }
    }
    ++pos_;
    return true;
  }

  bool Dict(ordered_json* out, int depth) {
    ++pos_;
    *out = ordered_json::object();
    SkipWs();
    while (Peek() != '}') {
      if (AtEnd()) return Err("unterminated dict");
      ordered_json k;
      if (!Value(&k, depth + 1)) return false;
      std::string key;
      if (k.is_string()) {
        key = k.get<std::string>();
      } else if (k.is_number_integer()) {
        key = k.dump();  // Choice: int dict keys become their decimal text
      } else {
        return Err("dict keys must be strings or integers");
      }
      SkipWs();
      if (Peek() != ':') return Err("expected ':' in dict");
      ++pos_;
      SkipWs();
      ordered_json v;
      if (!Value(&v, depth + 1)) return false;
      (*out)[key] = std::move(v);
      SkipWs();
      if (Peek() == ',') {
        ++pos_;
        SkipWs();
      } else if (Peek() != '}') {
        return Err("expected ',' or '}'");
      }
    }
    ++pos_;
    return true;
  }

  bool Value(ordered_json* out, int depth) {
    if (depth > kMaxDepth) return Err("literal nested too deeply");
    SkipWs();
    char c = Peek();
    if (c == '\'' || c == '"') {
      std::string s;
      if (!String(&s)) return false;
      *out = std::move(s);
      return true;
    }
    if (c == '[') return Sequence(']', out, depth);
    if (c == '(') return Sequence(')', out, depth);
    if (c == '{') return Dict(out, depth);
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t b = pos_;
      std::string id = Ident();
      if (id == "True") {
        *out = true;
      } else if (id == "False") {
        *out = false;
      } else if (id == "None") {
        *out = nullptr;
      } else {
        pos_ = b;
        return Err("'" + id +
                   "' is not a literal (only strings, numbers, True, False, "
                   "None, lists, tuples and dicts)");
      }
      return true;
    }
    return Number(out);
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::string error_;
};

std::string DescriptionVerb(const std::string& description) {
  std::string d = description;
  if (auto p = d.find("Tool description:"); p != std::string::npos) {
    d = d.substr(p + 17);
  }
  std::istringstream words(d);
  std::string w;
  while (words >> w) {
    std::transform(w.begin(), w.end(), w.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    while (!w.empty() && !std::isalpha(static_cast<unsigned char>(w.back()))) {
      w.pop_back();
    }
    if (w == "this" || w == "function" || w == "method" || w == "tool") {
      continue;
    }
    return w;
  }
  return "";
}

// 12 hex digits of the SHA-256 of `bytes` (after "sha256:"): a short,
// stable name for a world or an episode's command history.
std::string ShortDigest(std::string_view bytes) {
  return trace_internal::ResultDigest(bytes).substr(7, 12);
}

Status QuestionFileMissing(const std::string& path) {
  return NotFound(path + ": cannot open the BFCL question file");
}

}  // namespace

Result<PythonCall> ParsePythonCall(std::string_view text) {
  return PyParser(text).ParseCall();
}

namespace trace_internal {

BfclToolDoc::Type BfclRequestType(std::string_view doc_file,
                                  const std::string& description) {
  // Rule (docs/TRACES.md): math_api tools are pure arithmetic; otherwise the
  // first verb of the tool description decides, and any verb not on the
  // read list makes the tool a COMMAND (a missed read costs hits; a missed
  // command would serve wrong results, so unknown means COMMAND).
  static const std::set<std::string, std::less<>> kReadVerbs = {
      "display", "displays", "compare", "compares", "estimate", "estimates",
      "find", "finds", "search", "searches", "list", "lists", "return",
      "returns", "count", "counts", "calculate", "calculates", "compute",
      "computes", "convert", "converts", "get", "gets", "retrieve", "retrieves",
      "view", "views", "check", "checks", "filter", "filters", "verify",
      "verifies", "query", "queries",
      // `sort` returns `sorted_content` (its response schema) and the doc
      // does not say the file changes.
      "sort"};
  if (doc_file == "math_api.json") return BfclToolDoc::Type::kInformational;
  return kReadVerbs.contains(DescriptionVerb(description))
             ? BfclToolDoc::Type::kInformational
             : BfclToolDoc::Type::kCommand;
}

Result<std::map<std::string, BfclToolDoc>> LoadBfclFuncDocs(
    const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return NotFound(dir + ": not a directory of BFCL function docs");
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::map<std::string, BfclToolDoc> docs;
  for (const fs::path& f : files) {
    std::ifstream in(f);
    std::string line;
    uint64_t line_no = 0;
    while (std::getline(in, line)) {
      ++line_no;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      ordered_json d = ordered_json::parse(line, nullptr, false);
      const std::string where = f.string() + ":" + std::to_string(line_no);
      if (d.is_discarded() || !d.is_object() || !d.contains("name") ||
          !d["name"].is_string()) {
        return InvalidArgument(where +
                               ": expected a function doc object with a "
                               "'name'");
      }
      BfclToolDoc doc;
      doc.file = f.filename().string();
      const std::string desc =
          d.contains("description") && d["description"].is_string()
              ? d["description"].get<std::string>()
              : "";
      doc.type = BfclRequestType(doc.file, desc);
      if (d.contains("parameters") && d["parameters"].is_object() &&
          d["parameters"].contains("properties") &&
          d["parameters"]["properties"].is_object()) {
        for (const auto& [k, v] : d["parameters"]["properties"].items()) {
          doc.params.push_back(k);
        }
      }
      // Paper-silent: a name documented twice (memory_kv / memory_vector)
      // keeps the first file in name order.
      docs.emplace(d["name"].get<std::string>(), std::move(doc));
    }
  }
  if (docs.empty()) return NotFound(dir + ": no function docs found");
  return docs;
}

std::string LocateBfclQuestions(const std::string& input_path) {
  namespace fs = std::filesystem;
  const fs::path in(input_path);
  const std::string name = in.filename().string();
  constexpr std::string_view kPrefix = "possible_answer_";
  std::vector<fs::path> candidates;
  // Our data layout: possible_answer_X.json beside X.json.
  if (name.starts_with(kPrefix)) {
    candidates.push_back(in.parent_path() / name.substr(kPrefix.size()));
  }
  // Upstream BFCL layout: possible_answer/X.json below X.json's directory.
  if (in.parent_path().filename() == "possible_answer") {
    candidates.push_back(in.parent_path().parent_path() / name);
    if (name.starts_with(kPrefix)) {
      candidates.push_back(in.parent_path().parent_path() /
                           name.substr(kPrefix.size()));
    }
  }
  std::error_code ec;
  for (const fs::path& c : candidates) {
    if (fs::is_regular_file(c, ec) && !fs::equivalent(c, in, ec)) {
      return c.string();
    }
  }
  return "";
}

Result<std::map<std::string, std::string>> LoadBfclWorlds(
    const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return QuestionFileMissing(path);
  std::map<std::string, std::string> worlds;
  std::string line;
  uint64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(line_no);
    json q = json::parse(line, nullptr, false);
    if (q.is_discarded() || !q.is_object() || !q.contains("id") ||
        !q["id"].is_string()) {
      return InvalidArgument(where +
                             ": expected a BFCL question object with an 'id'");
    }
    if (!q.contains("initial_config") || !q["initial_config"].is_object()) {
      return InvalidArgument(
          where +
          ": no 'initial_config' object (pass the multi-turn question file, "
          "e.g. BFCL_v3_multi_turn_base.json)");
    }
    json classes = json::array();
    if (q.contains("involved_classes") && q["involved_classes"].is_array()) {
      std::vector<std::string> names;
      for (const json& c : q["involved_classes"]) {
        if (c.is_string()) names.push_back(c.get<std::string>());
      }
      std::sort(names.begin(), names.end());
      classes = names;
    }
    // Choice: the world is the classes instantiated and their initial state.
    json world = {{"initial_config", q["initial_config"]},
                  {"involved_classes", classes}};
    Result<std::string> canon = CanonicalArguments(world);
    if (!canon.ok()) {
      return InvalidArgument(where +
                             ": 'initial_config': " + canon.status().message());
    }
    worlds[q["id"].get<std::string>()] = ShortDigest(*canon);
  }
  if (worlds.empty()) return InvalidArgument(path + ": no questions");
  return worlds;
}

Status LoadBfclFunctionDefs(const std::string& path, ToolDefs* defs) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return QuestionFileMissing(path);
  std::string line;
  while (std::getline(in, line)) {
    json q = json::parse(line, nullptr, false);
    if (q.is_discarded() || !q.is_object() || !q.contains("function") ||
        !q["function"].is_array()) {
      continue;  // definitions only inform the classifier
    }
    for (const json& def : q["function"]) AddToolDefinition(def, defs);
  }
  return Status::Ok();
}

Result<ConvertResult> ConvertBfcl(std::istream& in,
                                  std::string_view source_name,
                                  const ConvertOptions& options,
                                  ToolDefs* defs) {
  namespace fs = std::filesystem;
  const ToolTable default_table;
  const ToolTable& table =
      options.tool_table ? *options.tool_table : default_table;
  const std::string src(source_name);
  std::string doc_dir = options.bfcl_func_doc_dir;
  if (doc_dir.empty() && !options.input_path.empty()) {
    fs::path guess =
        fs::path(options.input_path).parent_path() / "multi_turn_func_doc";
    std::error_code ec;
    if (fs::is_directory(guess, ec)) doc_dir = guess.string();
  }
  std::map<std::string, BfclToolDoc> docs;
  if (!doc_dir.empty()) {
    Result<std::map<std::string, BfclToolDoc>> d = LoadBfclFuncDocs(doc_dir);
    if (!d.ok()) return d.status();
    docs = std::move(*d);
  }

  // Episode worlds: loaded when the first multi-turn entry is seen (BFCL
  // simple has no state and its question file no initial_config).
  std::string questions = options.bfcl_questions_path;
  const bool questions_given = !questions.empty();
  if (!questions_given && !options.input_path.empty()) {
    questions = LocateBfclQuestions(options.input_path);
  }
  if (questions_given) {
    std::error_code ec;
    if (!fs::is_regular_file(questions, ec)) {
      return QuestionFileMissing(questions);
    }
  }
  std::optional<std::map<std::string, std::string>> worlds;
  bool worlds_tried = false;
  bool definitions_tried = false;
  uint64_t episodes_without_world = 0;
  std::set<std::string> tenants, world_ids;

  ConvertResult result;
  Assigner assigner(table, &result.report);
  std::set<std::string> undocumented;
  uint64_t untyped_calls = 0;
  std::string line;
  uint64_t line_no = 0;
  bool simple = false;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = src + ":" + std::to_string(line_no);
    json entry = json::parse(line, nullptr, false);
    if (entry.is_discarded() || !entry.is_object()) {
      return InvalidArgument(where + ": expected one JSON object per line");
    }
    if (!entry.contains("ground_truth")) {
      return InvalidArgument(
          where +
          ": no 'ground_truth' (convert the possible_answer_*.json "
          "file, which holds the calls; the question file does not)");
    }
    std::string session = entry.contains("id") && entry["id"].is_string()
                              ? entry["id"].get<std::string>()
                              : "entry-" + std::to_string(line_no);
    // Collect (name, ordered args) pairs.
    std::vector<std::pair<std::string, ordered_json>> calls;
    bool entry_simple = false;
    const json& gt = entry["ground_truth"];
    if (!gt.is_array()) {
      return InvalidArgument(where + ": 'ground_truth' must be an array");
    }
    for (size_t t = 0; t < gt.size(); ++t) {
      const json& turn = gt[t];
      if (turn.is_object()) {
        // BFCL simple: {func: {param: [acceptable values...]}}.
        simple = true;
        entry_simple = true;
        for (const auto& [fname, params] : turn.items()) {
          if (!params.is_object()) {
            return InvalidArgument(where + ": '" + fname +
                                   "' must map parameters to value lists");
          }
          ordered_json args = ordered_json::object();
          for (const auto& [p, choices] : params.items()) {
            if (!choices.is_array() || choices.empty()) {
              return InvalidArgument(where + ": parameter '" + p + "' of '" +
                                     fname +
                                     "' must be a non-empty list of values");
            }
            // Choice: the first acceptable value; "" first = omitted.
            if (choices[0] == "") continue;
            args[p] = ordered_json::parse(choices[0].dump());
          }
          calls.emplace_back(fname, std::move(args));
        }
        continue;
      }
      if (!turn.is_array()) {
        return InvalidArgument(where + ": turn " + std::to_string(t) +
                               " must be a list of call strings");
      }
      for (size_t c = 0; c < turn.size(); ++c) {
        if (!turn[c].is_string()) {
          return InvalidArgument(where + ": turn " + std::to_string(t) +
                                 ", call " + std::to_string(c) +
                                 " must be a string");
        }
        const std::string text = turn[c].get<std::string>();
        Result<PythonCall> pc = ParsePythonCall(text);
        if (!pc.ok()) {
          return InvalidArgument(where + ": cannot parse call '" + text +
                                 "': " + pc.status().message());
        }
        ordered_json args = ordered_json::parse(pc->arguments_json);
        // Name positional arguments from the docs.
        ordered_json named = ordered_json::object();
        for (auto& [k, v] : args.items()) {
          if (k.empty() || k[0] != '$') {
            named[k] = v;
            continue;
          }
          size_t i = std::stoul(k.substr(1));
          auto doc = docs.find(pc->name);
          if (doc == docs.end() || i >= doc->second.params.size()) {
            return InvalidArgument(
                where + ": call '" + text + "' has positional argument " +
                std::to_string(i) +
                " and no function doc names it (pass --bfcl-func-docs DIR)");
          }
          const std::string& pname = doc->second.params[i];
          if (args.contains(pname)) {
            return InvalidArgument(where + ": call '" + text + "' gives '" +
                                   pname + "' twice");
          }
          named[pname] = v;
        }
        calls.emplace_back(pc->name, std::move(named));
      }
    }
    // BFCL simple: the question file's function definitions inform the
    // classifier (the simple set has no request types of its own).
    if (entry_simple && !definitions_tried) {
      definitions_tried = true;
      if (!questions.empty()) {
        Status st = LoadBfclFunctionDefs(questions, defs);
        if (!st.ok()) return st;
      }
    }
    // The tool state this episode's calls read (multi-turn only).
    std::string world;
    if (!entry_simple && !calls.empty()) {
      if (!worlds_tried) {
        worlds_tried = true;
        if (!questions.empty()) {
          Result<std::map<std::string, std::string>> w =
              LoadBfclWorlds(questions);
          if (!w.ok()) return w.status();
          worlds = std::move(*w);
        }
      }
      if (worlds.has_value()) {
        auto it = worlds->find(session);
        if (it == worlds->end()) {
          return InvalidArgument(where + ": episode '" + session +
                                 "' is not in the question file " + questions);
        }
        world = "bfcl:" + it->second;
        world_ids.insert(world);
      } else {
        // Choice: without initial states, no sharing across episodes.
        world = "bfcl-episode:" + session;
        ++episodes_without_world;
      }
    }
    std::string history;  // the episode's COMMANDs so far
    uint64_t commands_so_far = 0;
    for (auto& [name, args] : calls) {
      TraceRecord rec;
      rec.session = session;
      rec.tool = name;
      Result<std::string> canon = CanonicalArguments(json::parse(args.dump()));
      if (!canon.ok()) {
        return InvalidArgument(where + ": '" + name +
                               "': " + canon.status().message());
      }
      rec.arguments = std::move(*canon);
      // The multi-turn docs describe the multi-turn APIs only; a BFCL simple
      // function of the same name is a different function.
      if (auto doc = docs.find(name); !entry_simple && doc != docs.end()) {
        rec.request_type = doc->second.type == BfclToolDoc::Type::kCommand
                               ? RequestType::kCommand
                               : RequestType::kInformational;
      } else {
        undocumented.insert(name);
        ++untyped_calls;
      }
      if (!world.empty()) {
        rec.tenant =
            commands_so_far == 0 ? world : world + "+" + ShortDigest(history);
        tenants.insert(rec.tenant);
        // Choice: a COMMAND (or an untyped call, which the replay treats as
        // one) moves the episode to a new state, whether or not the tool
        // really changed anything.
        if (rec.request_type != RequestType::kInformational) {
          history += name + '\x1f' + rec.arguments + '\n';
          ++commands_so_far;
        }
      }
      assigner.Assign(&rec, /*needs_size=*/true);
      result.trace.records.push_back(std::move(rec));
    }
  }
  assigner.Finish();
  if (!world_ids.empty()) {
    result.report.notes.push_back(
        "tenant = initial world (initial_config + involved_classes in " +
        questions + ") + the episode's COMMANDs so far: " +
        std::to_string(world_ids.size()) + " distinct initial worlds, " +
        std::to_string(tenants.size()) + " tenants");
  }
  if (episodes_without_world > 0) {
    result.report.notes.push_back(
        "no BFCL question file found (pass --bfcl-questions FILE): each of " +
        std::to_string(episodes_without_world) +
        " episodes is its own tenant, so no result is shared across "
        "episodes");
  }
  if (!doc_dir.empty()) {
    result.report.notes.push_back("request_type from the function docs in " +
                                  doc_dir);
  }
  if (untyped_calls > 0) {
    result.report.notes.push_back(
        "no request_type for " + std::to_string(untyped_calls) + " calls of " +
        std::to_string(undocumented.size()) + " tools without a function doc" +
        (simple ? " (BFCL simple has no multi-turn docs)" : ""));
  }
  FinishReport(result.trace, &result.report);
  return result;
}

}  // namespace trace_internal
}  // namespace toolcache
