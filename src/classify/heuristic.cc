// The name / title / description / schema / argument heuristic.
//
// Invariants:
// - Deterministic: the same ToolInfo and arguments always give the same
//   Features; no state, no randomness, no tool-name lists (only general verb
//   and TTL lexicons).
// - Only an explicit signal produces a request type. Without one the
//   heuristic has no opinion and the Classifier's default (COMMAND) applies,
//   so an unknown tool is never cached.
// - Within the heuristic, COMMAND evidence wins over INFORMATIONAL evidence
//   of equal or lower strength (safety first); strengths, strongest first:
//   name verb, schema action enum, title verb, description verb.
// - Never throws: malformed schema or arguments are treated as absent.
#include "src/classify/heuristic.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>

namespace toolcache::classify {
namespace {

using Json = nlohmann::ordered_json;

// General verb lexicons (not derived from any evaluation set).
constexpr auto kCommandVerbs = std::to_array<std::string_view>({
    "add",      "append",   "apply",      "approve",   "archive",   "assign",
    "ban",      "block",    "book",       "buy",       "cancel",    "change",
    "charge",   "clear",    "close",      "comment",   "commit",    "copy",
    "create",   "delete",   "deploy",     "deposit",   "destroy",   "disable",
    "dismiss",  "drop",     "edit",       "email",     "enable",    "exec",
    "execute",  "follow",   "fork",       "grant",     "increment", "decrement",
    "insert",   "install",  "invite",     "invoke",    "kill",      "lock",
    "login",    "logout",   "mark",       "merge",     "modify",    "move",
    "mute",     "notify",   "order",      "overwrite", "patch",     "pay",
    "pin",      "post",     "prioritize", "publish",   "purchase",  "rent",
    "purge",    "push",     "put",        "react",     "register",  "reject",
    "rename",   "reply",    "request",    "reserve",   "reset",     "restart",
    "restore",  "revert",   "revoke",     "run",       "save",      "schedule",
    "send",     "set",      "share",      "sign",      "start",     "stop",
    "store",    "submit",   "subscribe",  "sync",      "terminate", "toggle",
    "transfer", "trigger",  "truncate",   "update",    "upload",    "upsert",
    "vote",     "withdraw", "write",      "remove",    "replace",   "star",
    "kick",     "mint",     "refresh",
});

constexpr auto kInformationalVerbs = std::to_array<std::string_view>({
    "analyze",  "analyse",  "browse",   "calculate", "check",     "compare",
    "compute",  "convert",  "count",    "describe",  "detect",    "diff",
    "discover", "estimate", "evaluate", "exists",    "explain",   "extract",
    "fetch",    "find",     "get",      "identify",  "inspect",   "list",
    "locate",   "look",     "lookup",   "measure",   "parse",     "predict",
    "preview",  "query",    "read",     "recommend", "retrieve",  "scan",
    "search",   "show",     "solve",    "suggest",   "summarize", "translate",
    "validate", "verify",   "view",
});

// Multi-purpose verbs: the call's action argument decides.
constexpr auto kDispatchVerbs = std::to_array<std::string_view>({
    "manage",
    "handle",
    "perform",
    "do",
    "use",
});

// TTL lexicons (paper section 4.1 classes), matched against name tokens.
constexpr auto kRealtimeWords = std::to_array<std::string_view>({
    "weather",      "forecast",      "price",  "prices",   "pricing",
    "stock",        "stocks",        "quote",  "quotes",   "status",
    "now",          "current",       "latest", "live",     "realtime",
    "notification", "notifications", "news",   "trending", "traffic",
    "time",         "rate",          "rates",  "exchange", "market",
    "feed",         "alert",         "alerts", "balance",  "presence",
    "online",       "queue",         "inbox",  "unread",   "recent",
    "today",        "ticker",        "score",  "scores",   "log",
    "logs",         "activity",      "events", "metrics",  "health",
});
constexpr auto kComputationalWords = std::to_array<std::string_view>({
    "calculate",  "calculator", "compute",  "convert",  "conversion",
    "diff",       "analyze",    "analyse",  "analysis", "summarize",
    "summary",    "translate",  "solve",    "estimate", "evaluate",
    "predict",    "hash",       "encode",   "decode",   "math",
    "statistics", "stats",      "distance", "calc",
});
constexpr auto kStaticWords = std::to_array<std::string_view>({
    "wiki",     "wikipedia", "definition",    "define",    "dictionary",
    "docs",     "doc",       "documentation", "file",      "files",
    "contents", "content",   "read",          "commit",    "commits",
    "blame",    "tag",       "tags",          "history",   "encyclopedia",
    "schema",   "spec",      "manual",        "reference", "license",
    "readme",   "gist",      "tree",          "advisory",  "advisories",
    "book",     "movie",     "paper",         "code",
});

// Verbs that are as often nouns in prose ("in order to", "a pull request",
// "a workflow run"): in titles and descriptions they count only as the
// sentence's first word.
constexpr auto kNounLikeVerbs = std::to_array<std::string_view>({
    "order", "set",   "post",   "comment", "request", "book",     "store",
    "copy",  "block", "star",   "sign",    "run",     "share",    "lock",
    "pin",   "mark",  "update", "change",  "patch",   "schedule", "count",
    "diff",  "check", "scan",   "view",    "show",    "list",     "search",
    "query", "look",  "exists",
});

// Argument names that carry the operation of a multi-purpose tool.
constexpr auto kActionKeys = std::to_array<std::string_view>({
    "action",
    "operation",
    "op",
    "method",
    "command",
    "cmd",
    "mode",
    "verb",
});

template <size_t N>
bool In(const std::array<std::string_view, N>& list, std::string_view word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

// The verb lexicons as one hash table, built once (thread-safe static init).
const std::unordered_map<std::string_view, VerbClass>& VerbTable() {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string_view, VerbClass>();
    for (std::string_view v : kDispatchVerbs) (*t)[v] = VerbClass::kDispatch;
    for (std::string_view v : kInformationalVerbs) {
      (*t)[v] = VerbClass::kInformational;
    }
    // Inserted last: a word in two lists is COMMAND (safety).
    for (std::string_view v : kCommandVerbs) (*t)[v] = VerbClass::kCommand;
    return t;
  }();
  return *table;
}

VerbClass Lookup(std::string_view t) {
  const auto& table = VerbTable();
  auto it = table.find(t);
  return it == table.end() ? VerbClass::kNone : it->second;
}

VerbClass BaseVerb(std::string_view t) {
  const VerbClass c = Lookup(t);
  if (c != VerbClass::kNone) return c;
  // "unstar", "rerun", "unassign": a prefixed mutating verb still mutates.
  for (std::string_view prefix : {"un", "re"}) {
    if (t.size() > prefix.size() + 2 && t.substr(0, prefix.size()) == prefix &&
        Lookup(t.substr(prefix.size())) == VerbClass::kCommand) {
      return VerbClass::kCommand;
    }
  }
  return VerbClass::kNone;
}

bool IsNounLike(const std::string& word) {
  static const auto* set = [] {
    auto* s = new std::unordered_set<std::string>();
    for (std::string_view n : kNounLikeVerbs) {
      s->emplace(n);
      s->emplace(std::string(n) + "s");
      s->emplace(std::string(n) + "es");
    }
    return s;
  }();
  return set->count(word) > 0;
}

// Strongest-first evidence for a request type.
enum class Strength { kNone, kDescription, kTitle, kSchema, kName };

struct Evidence {
  Strength strength = Strength::kNone;
  std::string detail;
};

struct ToolLevel {
  Evidence command;
  Evidence informational;
  bool dispatch = false;  // the name's verb is multi-purpose
  std::vector<std::string> name_tokens;
  std::optional<std::string> schema_category;
};

void Note(Evidence& e, Strength s, std::string detail) {
  if (s > e.strength) {
    e.strength = s;
    e.detail = std::move(detail);
  }
}

// The verb of a name: the first token if it is a verb ("get_issue"), else
// the last token ("issue_read"), else the first verb-like token in between.
// Tokens joined by "or"/"and" to the verb also count ("create_or_update").
void NameVerbs(const std::vector<std::string>& tokens, ToolLevel& out) {
  if (tokens.empty()) return;
  auto consider = [&](size_t i) {
    const VerbClass c = BaseVerb(tokens[i]);
    const std::string what = "name verb '" + tokens[i] + "'";
    if (c == VerbClass::kCommand) Note(out.command, Strength::kName, what);
    if (c == VerbClass::kInformational) {
      Note(out.informational, Strength::kName, what);
    }
    if (c == VerbClass::kDispatch) out.dispatch = true;
    return c != VerbClass::kNone;
  };
  size_t verb = tokens.size();
  if (BaseVerb(tokens.front()) != VerbClass::kNone) {
    verb = 0;
  } else if (BaseVerb(tokens.back()) != VerbClass::kNone) {
    verb = tokens.size() - 1;
  } else {
    for (size_t i = 1; i + 1 < tokens.size(); ++i) {
      if (BaseVerb(tokens[i]) != VerbClass::kNone) {
        verb = i;
        break;
      }
    }
  }
  if (verb == tokens.size()) return;
  consider(verb);
  // Conjoined verbs: "create_or_update_file", "get_or_create".
  for (size_t i = verb + 1; i + 1 < tokens.size(); i += 2) {
    if (tokens[i] != "or" && tokens[i] != "and") break;
    consider(i + 1);
  }
  for (size_t i = verb; i >= 2; i -= 2) {
    if (tokens[i - 1] != "or" && tokens[i - 1] != "and") break;
    consider(i - 2);
  }
}

// The first lexicon verb of the first sentence of `text`.
void TextVerb(std::string_view text, Strength strength, std::string_view what,
              ToolLevel& out) {
  const size_t end = text.find_first_of(".\n");
  const std::string_view sentence = text.substr(0, end);
  std::string word;
  int index = 0;
  auto flush = [&]() -> bool {
    if (word.empty()) return false;
    VerbClass c = ClassifyVerb(word, /*inflected=*/true);
    if (index++ > 0 && c != VerbClass::kNone) {
      // Noun-like words count only as the first word ("Search issues" yes;
      // "Get a pull request" -> 'get', never 'request').
      if (IsNounLike(word)) c = VerbClass::kNone;
    }
    const std::string detail = std::string(what) + " verb '" + word + "'";
    word.clear();
    if (c == VerbClass::kCommand) {
      Note(out.command, strength, detail);
      return true;
    }
    if (c == VerbClass::kInformational) {
      Note(out.informational, strength, detail);
      return true;
    }
    return false;  // dispatch verbs ("Use this tool to ...") do not decide
  };
  for (char ch : sentence) {
    if (std::isalpha(static_cast<unsigned char>(ch))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    } else if (flush()) {
      return;
    }
  }
  flush();
}

// The leading verb of an action value such as "send", "get_comments",
// "createIssue".
VerbClass ActionVerb(std::string_view value, std::string* verb) {
  const std::vector<std::string> tokens = TokenizeName(value);
  if (tokens.empty()) return VerbClass::kNone;
  *verb = tokens.front();
  return ClassifyVerb(tokens.front(), /*inflected=*/true);
}

void SchemaFeatures(std::string_view schema_text, ToolLevel& out) {
  if (schema_text.empty()) return;
  Json schema = Json::parse(schema_text, nullptr, /*allow_exceptions=*/false);
  if (!schema.is_object()) return;
  auto props = schema.find("properties");
  if (props == schema.end() || !props->is_object()) return;
  // Paper: the first parameter of a multi-parameter call is the category.
  if (props->size() >= 2) out.schema_category = props->begin().key();
  for (auto it = props->begin(); it != props->end(); ++it) {
    if (!In(kActionKeys, it.key()) || !it.value().is_object()) continue;
    auto values = it.value().find("enum");
    if (values == it.value().end() || !values->is_array()) continue;
    bool all_informational = !values->empty();
    for (const Json& v : *values) {
      std::string verb;
      const VerbClass c = v.is_string()
                              ? ActionVerb(v.get<std::string>(), &verb)
                              : VerbClass::kNone;
      if (c == VerbClass::kCommand) {
        Note(out.command, Strength::kSchema,
             "schema '" + it.key() + "' allows '" + v.get<std::string>() + "'");
      }
      if (c != VerbClass::kInformational) all_informational = false;
    }
    if (all_informational) {
      Note(out.informational, Strength::kSchema,
           "schema '" + it.key() + "' allows only reading actions");
    }
  }
}

ToolLevel AnalyzeTool(const ToolInfo& tool) {
  ToolLevel t;
  t.name_tokens = TokenizeName(tool.name);
  // Namespaced names ("grocery_store.find_nearby", "srv__get_x"): the verb
  // is sought in the function part first.
  size_t cut = 0;
  for (std::string_view sep : {"__", ".", "/", ":"}) {
    const size_t p = tool.name.rfind(sep);
    if (p != std::string::npos) cut = std::max(cut, p + sep.size());
  }
  if (cut > 0)
    NameVerbs(TokenizeName(std::string_view(tool.name).substr(cut)), t);
  if (t.command.strength == Strength::kNone &&
      t.informational.strength == Strength::kNone && !t.dispatch) {
    NameVerbs(t.name_tokens, t);
  }
  SchemaFeatures(tool.input_schema_json, t);
  TextVerb(tool.title, Strength::kTitle, "title", t);
  TextVerb(tool.description, Strength::kDescription, "description", t);
  return t;
}

class HeuristicExtractor final : public FeatureExtractor {
 public:
  FeatureSource source() const override { return FeatureSource::kHeuristic; }

  std::optional<Features> Extract(
      const ToolInfo& tool, std::string_view arguments_json) const override {
    const ToolLevel t = AnalyzeTool(tool);
    Features f;
    // Tool level: COMMAND evidence wins unless INFORMATIONAL evidence is
    // strictly stronger (e.g. name "get_x" vs a description "... to create").
    if (t.command.strength != Strength::kNone &&
        t.command.strength >= t.informational.strength) {
      f.request_type = RequestType::kCommand;
      f.detail = t.command.detail;
    } else if (t.informational.strength != Strength::kNone) {
      f.request_type = RequestType::kInformational;
      f.detail = t.informational.detail;
    }
    if (t.schema_category) f.parameter_category = t.schema_category;

    // Call level.
    if (!arguments_json.empty()) {
      Json args =
          Json::parse(arguments_json, nullptr, /*allow_exceptions=*/false);
      if (args.is_object()) {
        // Paper-silent: a single-argument call has no category (grouping by
        // its only argument would make every group a single object).
        f.parameter_category =
            args.size() >= 2 ? args.begin().key() : std::string();
        for (auto it = args.begin(); it != args.end(); ++it) {
          if (!In(kActionKeys, it.key()) || !it.value().is_string()) continue;
          std::string verb;
          const VerbClass c = ActionVerb(it.value().get<std::string>(), &verb);
          const std::string what = "argument " + it.key() + "='" +
                                   it.value().get<std::string>() + "'";
          if (c == VerbClass::kCommand) {
            f.request_type = RequestType::kCommand;
            f.detail = what;
            break;
          }
          // A reading action decides, unless the name itself is a mutating
          // verb ("send_message" with action=read stays COMMAND).
          if (c == VerbClass::kInformational &&
              t.command.strength != Strength::kName) {
            f.request_type = RequestType::kInformational;
            f.detail = what;
            break;
          }
        }
      }
    }

    const TtlCategory category = TtlCategoryOf(t.name_tokens);
    if (category != TtlCategory::kNone) {
      f.ttl_seconds = TtlCategorySeconds(category);
      if (!f.detail.empty()) f.detail += "; ";
      f.detail += "TTL class " + std::string(TtlCategoryName(category));
    }
    if (!f.request_type && !f.ttl_seconds && !f.parameter_category) {
      return std::nullopt;
    }
    if (!f.request_type) {
      std::string why = t.dispatch ? "multi-purpose name verb without an "
                                     "action argument"
                                   : "no verb recognized";
      f.detail = f.detail.empty() ? why : why + "; " + f.detail;
    }
    return f;
  }
};

}  // namespace

std::vector<std::string> TokenizeName(std::string_view name) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) out.push_back(std::move(cur));
    cur.clear();
  };
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (!std::isalnum(c)) {
      flush();
      continue;
    }
    if (std::isupper(c) && !cur.empty()) {
      const unsigned char prev = static_cast<unsigned char>(name[i - 1]);
      const bool next_lower =
          i + 1 < name.size() &&
          std::islower(static_cast<unsigned char>(name[i + 1]));
      // "getX" -> get|x ; "HTTPStatus" -> http|status.
      if (std::islower(prev) || std::isdigit(prev) ||
          (std::isupper(prev) && next_lower)) {
        flush();
      }
    }
    cur += static_cast<char>(std::tolower(c));
  }
  flush();
  return out;
}

VerbClass ClassifyVerb(std::string_view token, bool inflected) {
  const VerbClass base = BaseVerb(token);
  if (base != VerbClass::kNone || !inflected) return base;
  // "gets", "searches", "listing", "creating", "created", "retrieves".
  for (std::string_view suffix : {"ies", "es", "s", "ing", "ed"}) {
    if (token.size() <= suffix.size() + 2 ||
        token.substr(token.size() - suffix.size()) != suffix) {
      continue;
    }
    const std::string stem(token.substr(0, token.size() - suffix.size()));
    for (const std::string& candidate :
         {stem, stem + "e", suffix == "ies" ? stem + "y" : stem,
          // "running" -> "run", "submitted" -> "submit"
          stem.size() >= 2 && stem[stem.size() - 1] == stem[stem.size() - 2]
              ? stem.substr(0, stem.size() - 1)
              : stem}) {
      const VerbClass c = BaseVerb(candidate);
      if (c != VerbClass::kNone) return c;
    }
  }
  return VerbClass::kNone;
}

TtlCategory TtlCategoryOf(const std::vector<std::string>& name_tokens) {
  // Paper-silent: when several classes match, the shortest TTL wins (safer).
  TtlCategory best = TtlCategory::kNone;
  for (const std::string& t : name_tokens) {
    if (In(kRealtimeWords, t)) return TtlCategory::kRealtime;
    if (In(kComputationalWords, t)) best = TtlCategory::kComputational;
    if (In(kStaticWords, t) && best == TtlCategory::kNone) {
      best = TtlCategory::kStatic;
    }
  }
  return best;
}

TtlCategory ToolTtlCategory(const ToolInfo& tool) {
  return TtlCategoryOf(TokenizeName(tool.name));
}

std::string_view TtlCategoryName(TtlCategory category) {
  switch (category) {
    case TtlCategory::kRealtime:
      return "real-time";
    case TtlCategory::kComputational:
      return "computational";
    case TtlCategory::kStatic:
      return "static";
    case TtlCategory::kNone:
      break;
  }
  return "none";
}

double TtlCategorySeconds(TtlCategory category) {
  switch (category) {
    case TtlCategory::kRealtime:
      return kRealtimeTtlSeconds;
    case TtlCategory::kComputational:
      return kComputationalTtlSeconds;
    case TtlCategory::kStatic:
      return kStaticTtlSeconds;
    case TtlCategory::kNone:
      break;
  }
  return 0;
}

std::unique_ptr<FeatureExtractor> MakeHeuristicExtractor() {
  return std::make_unique<HeuristicExtractor>();
}

}  // namespace toolcache::classify
