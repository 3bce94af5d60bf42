// The name / title / description / schema / argument heuristic.
//
// Invariants:
// - Deterministic: the same ToolInfo and arguments always give the same
//   Features; no state, no randomness, no tool-name lists (only general verb
//   and TTL lexicons).
// - Only an explicit signal produces a request type. Without one the
//   heuristic has no opinion and the Classifier's default (COMMAND) applies,
//   so an unknown tool is never cached.
// - Within the heuristic, execution or mutation evidence (execution and
//   strong mutation verbs anywhere in a first sentence, code/SQL/body or
//   file-output parameters, also one level down a parameter, a parameter
//   described as executed, a state-changing boolean option, action lists,
//   agent nouns, a description returning a job id, a dry-run switch or a
//   boolean named by a state-changing verb, a listed write operation,
//   measuring test coverage) vetoes INFORMATIONAL evidence of any strength;
//   otherwise COMMAND evidence wins over INFORMATIONAL evidence of equal or
//   lower strength (safety first), and a schema action enum with a mutating
//   value wins over any INFORMATIONAL evidence; strengths, strongest first:
//   name verb, schema action enum, title verb, description verb, weak
//   (noun-like) name verb.
// - TTL classes come from evidence (live words of the name, of a first
//   sentence, or two of a description; the context of "history" and
//   "stats"), never lengthened by a single static word against live ones.
// - Every Features::detail names the rule and quotes the deciding words.
// - Never throws: malformed schema or arguments are treated as absent.
#include "src/classify/heuristic.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <nlohmann/json.hpp>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "toolcache/canonical_json.h"

namespace toolcache::classify {
namespace {

using Json = nlohmann::ordered_json;

// General verb lexicons (not derived from any evaluation set).
constexpr auto kCommandVerbs = std::to_array<std::string_view>({
    "add",
    "append",
    "apply",
    "approve",
    "archive",
    "assign",
    "ban",
    "block",
    "book",
    "buy",
    "cancel",
    "change",
    "charge",
    "clear",
    "close",
    "comment",
    "commit",
    "copy",
    "create",
    "delete",
    "deploy",
    "deposit",
    "destroy",
    "disable",
    "dismiss",
    "drop",
    "edit",
    "email",
    "enable",
    "exec",
    "execute",
    "follow",
    "fork",
    "grant",
    "increment",
    "decrement",
    "insert",
    "install",
    "invite",
    "invoke",
    "kill",
    "lock",
    "login",
    "logout",
    "mark",
    "merge",
    "modify",
    "move",
    "mute",
    "notify",
    "order",
    "overwrite",
    "patch",
    "pay",
    "pin",
    "post",
    "prioritize",
    "publish",
    "purchase",
    "rent",
    "purge",
    "push",
    "put",
    "react",
    "register",
    "reject",
    "rename",
    "reply",
    "request",
    "reserve",
    "reset",
    "restart",
    "restore",
    "revert",
    "revoke",
    "run",
    "save",
    "schedule",
    "send",
    "set",
    "share",
    "sign",
    "start",
    "stop",
    "store",
    "submit",
    "subscribe",
    "sync",
    "terminate",
    "toggle",
    "transfer",
    "trigger",
    "truncate",
    "update",
    "upload",
    "upsert",
    "vote",
    "withdraw",
    "write",
    "remove",
    "replace",
    "star",
    "kick",
    "mint",
    "refresh",
    "prune",
    // Session, browser and infrastructure actions.
    "navigate",
    "click",
    "fill",
    "hover",
    "drag",
    "drop",
    "press",
    "type",
    "select",
    "resize",
    "emulate",
    "scroll",
    "switch",
    "go",
    "connect",
    "disconnect",
    "reconnect",
    "wipe",
    "clean",
    "cleanup",
    "scale",
    "rollback",
    "provision",
    "finalize",
    "refund",
    "migrate",
    "complete",
    "forward",
    "cordon",
    "drain",
    "stage",
    "checkout",
    "rebase",
    "clone",
    "init",
    "initialize",
    "stash",
    "launch",
    "spawn",
    "end",
    "uninstall",
    "abort",
    "open",
    "retry",
    "tag",
    // Session state: entering or leaving a mode, a worktree, a page.
    "enter",
    "exit",
    "leave",
    "quit",
});

constexpr auto kInformationalVerbs = std::to_array<std::string_view>({
    "browse",    "calculate", "check",    "compare", "compute",  "convert",
    "count",     "describe",  "detect",   "diff",    "discover", "estimate",
    "exists",    "explain",   "extract",  "fetch",   "find",     "get",
    "identify",  "inspect",   "list",     "locate",  "look",     "lookup",
    "measure",   "parse",     "predict",  "preview", "read",     "recommend",
    "retrieve",  "scan",      "search",   "show",    "solve",    "suggest",
    "summarize", "translate", "validate", "verify",  "view",     "return",
    "provide",   "display",   "obtain",   "audit",   "crawl",    "scrape",
    "map",       "research",  "ping",     "gather",  "grep",     "glob",
});

// Verbs ambiguous between computing and executing ("evaluate" an expression
// vs "evaluate" JavaScript in a page; "query" a catalogue vs "query" = run
// SQL): as a name verb they give no opinion, so the description and the
// parameters decide (safety: no evidence -> unknown -> COMMAND).
constexpr auto kAmbiguousVerbs = std::to_array<std::string_view>({
    "evaluate",
    "eval",
    "query",
    "analyze",
    "analyse",
    "process",
    "generate",
    "resolve",
});

// Verbs that execute something or start work elsewhere. In the first
// sentence of a title or description (any position, base or -s/-ing form)
// they veto INFORMATIONAL, except "run"/"perform" followed by an
// observation noun ("Run an accessibility audit").
constexpr auto kExecutionVerbs = std::to_array<std::string_view>({
    "execute",
    "exec",
    "run",
    "invoke",
    "trigger",
    "launch",
    "spawn",
    "start",
    "perform",
    "eval",
    "evaluate",
});

// Mutating verbs that are rarely nouns: anywhere in the first sentence of a
// title or description they veto INFORMATIONAL ("Send structured feedback
// on a previous search result").
constexpr auto kStrongMutationVerbs = std::to_array<std::string_view>({
    "create",    "delete",  "remove",    "send",    "submit",   "charge",
    "insert",    "modify",  "overwrite", "destroy", "drop",     "kill",
    "terminate", "install", "uninstall", "publish", "upload",   "invite",
    "cancel",    "refund",  "purchase",  "pay",     "transfer", "append",
    "rename",    "edit",    "write",     "upsert",  "truncate", "deploy",
    "navigate",  "click",   "wipe",      "revoke",  "grant",    "approve",
    "reject",    "archive", "restart",   "stop",    "enqueue",  "schedule",
    "trigger",   "execute", "invoke",    "launch",  "spawn",    "save",
});

// Nouns naming an observation: a name whose head is one of them ("git_log",
// "browser_take_screenshot", "db-stats") reads, unless other evidence says
// otherwise; after "run"/"perform" they make the phrase a reading one.
constexpr auto kObservationNouns = std::to_array<std::string_view>({
    "screenshot", "snapshot",   "log",         "logs",          "status",
    "stats",      "statistics", "info",        "information",   "details",
    "detail",     "metadata",   "history",     "schema",        "usage",
    "version",    "health",     "blame",       "diff",          "reflog",
    "size",       "count",      "insight",     "messages",      "requests",
    "errors",     "events",     "output",      "results",       "text",
    "html",       "tree",       "metrics",     "audit",         "report",
    "search",     "query",      "aggregation", "lookup",        "analysis",
    "check",      "scan",       "indexes",     "documentation", "docs",
    "profile",    "transcript", "research",
});

// Parameter names that carry code, a statement or a request body: the tool
// executes or sends it (veto). The conditional ones count only when the
// property's or tool's text names code ("JavaScript", "SQL", "script", ...).
constexpr auto kExecutionParams = std::to_array<std::string_view>({
    "script",
    "sql",
    "statement",
    "statements",
    "command",
    "cmd",
    "commands",
    "javascript",
    "js",
    "payload",
    "body",
});
constexpr auto kCodeCueParams = std::to_array<std::string_view>({
    "code",
    "expression",
    "function",
    "query",
});
constexpr auto kCodeCues = std::to_array<std::string_view>({
    "javascript",
    "js",
    "sql",
    "script",
    "statement",
    "python",
    "shell",
    "execute",
    "executes",
    "evaluate",
    "evaluated",
    "code",
    "function",
    "graphql",
    "mutation",
    "ddl",
    "dml",
});

// Multi-purpose verbs: the call's action argument decides.
constexpr auto kDispatchVerbs = std::to_array<std::string_view>({
    "manage",
    "handle",
    "perform",
    "do",
    "use",
});

// Nouns naming something that acts on its own: a name without a verb
// whose head is one of them ("x_agent", "Agent"), or a verbless first
// sentence headed by one ("Autonomous web research agent."), starts it
// (execution veto). "user agent" (the HTTP header) is not one.
constexpr auto kAgentNouns = std::to_array<std::string_view>({
    "agent",
    "agents",
    "subagent",
    "subagents",
    "bot",
    "autopilot",
});

// Parameters holding a list of steps the tool performs ("actions": [{"type":
// "click"}, ...]): an enum on their items' type/action property with a
// mutating or executing value makes the tool act (veto).
constexpr auto kActionListParams = std::to_array<std::string_view>({
    "actions",
    "steps",
    "operations",
    "commands",
    "instructions",
});

// Session 14's rules (action lists under any name, payments and storage
// destinations, one-time verification, sessions, anyOf action values);
// TOOLCACHE_SESSION14_OFF builds without them, to check that their tests
// fail without them.
#ifndef TOOLCACHE_SESSION14_OFF
constexpr bool kSession14Rules = true;
#else
constexpr bool kSession14Rules = false;
#endif

// Session 15's rules (element and device interactions, side outputs into a
// folder); TOOLCACHE_SESSION15_OFF builds without them, to check that their
// tests fail without them.
#ifndef TOOLCACHE_SESSION15_OFF
constexpr bool kSession15Rules = true;
#else
constexpr bool kSession15Rules = false;
#endif

// Session 15, second round (bfcl_live's writes: people, scenes and stated
// effects); TOOLCACHE_SESSION15B_OFF builds without them, to check that
// their tests fail without them.
#ifndef TOOLCACHE_SESSION15B_OFF
constexpr bool kSession15bRules = true;
#else
constexpr bool kSession15bRules = false;
#endif

// Session 15, third round (which verb decides: the first sentence's main
// verbs, credentials kept with a session); TOOLCACHE_SESSION15C_OFF builds
// without them, to check that their tests fail without them.
#ifndef TOOLCACHE_SESSION15C_OFF
constexpr bool kSession15cRules = true;
#else
constexpr bool kSession15cRules = false;
#endif

// TTL lexicons (paper section 4.1 classes), matched against name tokens.
constexpr auto kRealtimeWords = std::to_array<std::string_view>({
    "weather",      "forecast",      "price",    "prices",   "pricing",
    "stock",        "stocks",        "quote",    "quotes",   "status",
    "now",          "current",       "latest",   "live",     "realtime",
    "notification", "notifications", "news",     "trending", "traffic",
    "time",         "rate",          "rates",    "exchange", "market",
    "feed",         "alert",         "alerts",   "balance",  "presence",
    "online",       "queue",         "inbox",    "unread",   "recent",
    "today",        "ticker",        "score",    "scores",   "log",
    "logs",         "activity",      "events",   "metrics",  "health",
    "process",      "processes",     "running",  "output",   "console",
    "screenshot",   "snapshot",      "session",  "sessions", "progress",
    "active",       "usage",         "incident", "freebusy", "availability",
    "uptime",       "oncall",
});
// Words of a title or description's first sentence that mark live data.
constexpr auto kRealtimeTextWords = std::to_array<std::string_view>({
    "recent",    "recently", "current", "currently", "latest",
    "live",      "realtime", "now",     "today",     "status",
    "logs",      "log",      "running", "balance",   "price",
    "prices",    "queue",    "active",  "progress",  "ongoing",
    "streaming", "balances", "busy",    "incident",  "incidents",
});
// Session 16: a call that waits for something to happen answers about a
// moment, not stored data, and a repeat waits anew (executeautomation's
// `playwright_assert_response`, "Wait for and validate a previously
// initiated HTTP response wait operation", consumes the wait another call
// started), so it is never cached: a TTL cap of 0, which no minimum TTL
// setting and no server-wide TTL lifts (only the operator's own TTL for
// the tool). "wait" or "waits" in the name, or one of these in the first
// sentence of the title or description; later sentences say how to use
// the tool ("wait briefly and retry", "waits for user selection").
constexpr auto kWaitTextWords =
    std::to_array<std::string_view>({"wait", "waits", "waiting"});
constexpr auto kComputationalWords = std::to_array<std::string_view>({
    "calculate",  "calculator", "compute",  "convert",  "conversion",
    "diff",       "analyze",    "analyse",  "analysis", "summarize",
    "summary",    "translate",  "solve",    "estimate", "evaluate",
    "predict",    "hash",       "encode",   "decode",   "math",
    "statistics", "stats",      "distance", "calc",
});
// Words for data that does not change once published (issue 31: TTL from
// evidence about volatility, not from nouns). Files, contents, records,
// messages, sheets, code trees, books in a shop and the verb "read" say
// nothing about how often the data changes: they get the default TTL.
constexpr auto kStaticWords = std::to_array<std::string_view>({
    "wiki",   "wikipedia", "definition",    "define",    "dictionary",
    "docs",   "doc",       "documentation", "commit",    "commits",
    "blame",  "tag",       "tags",          "history",   "encyclopedia",
    "schema", "spec",      "manual",        "reference", "license",
    "readme", "advisory",  "advisories",    "paper",
});

// Verbs that are as often nouns in prose ("in order to", "a pull request",
// "a workflow run"): in titles and descriptions they count only as the
// sentence's first word.
constexpr auto kNounLikeVerbs = std::to_array<std::string_view>({
    "order",   "set",   "post",   "comment", "request", "book",     "store",
    "copy",    "block", "star",   "sign",    "run",     "share",    "lock",
    "pin",     "mark",  "update", "change",  "patch",   "schedule", "count",
    "diff",    "check", "scan",   "view",    "show",    "list",     "search",
    "query",   "look",  "exists", "type",    "select",  "end",      "complete",
    "forward", "tag",   "stage",  "map",     "drop",    "audit",    "crawl",
    "retry",   "scale", "switch", "clean",   "drain",   "go",       "display",
    "provide", "open",
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

// Tokens joined without separators: "file_path" -> "filepath".
std::string Normalized(const std::vector<std::string>& tokens) {
  std::string out;
  for (const std::string& t : tokens) out += t;
  return out;
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

// Strongest-first evidence for a request type. kWeakName: a noun-like verb
// that is not the name's first word ("network_request", "playwright_post"),
// weaker than any text evidence.
enum class Strength { kNone, kWeakName, kDescription, kTitle, kSchema, kName };

struct Evidence {
  Strength strength = Strength::kNone;
  std::string detail;
};

struct ToolLevel {
  Evidence command;
  Evidence informational;
  // Execution or mutation evidence that vetoes INFORMATIONAL whatever its
  // strength: execution verbs, strong mutation verbs anywhere in the first
  // sentence, code/statement/body parameters, file-output parameters.
  Evidence veto;
  // The vetoes no annotation outranks (a subset of `veto`): the caller
  // supplies code, SQL or a command the tool executes; the tool writes a
  // file; its first sentence says it sends or pays. A readOnlyHint that
  // contradicts one of these is wrong (issue 31: 8 of 575 were).
  Evidence hard_veto;
  bool dispatch = false;  // the name's verb is multi-purpose
  // A schema action enum allows a mutating value: the tool's operations
  // include a write, whatever verb its name shows ("box_preview" with
  // action create | list | delete).
  bool action_enum_mutates = false;
  std::string ambiguous;  // the name's verb computes or executes
  std::vector<std::string> name_tokens;
  std::optional<std::string> schema_category;
  // Session 15: what the parameters target on a page or device screen (an
  // element selector or reference, x and y, a text "to <name verb>").
  std::string element_target;
  bool param_x = false;
  bool param_y = false;
  bool param_z = false;
  // Session 15b: a parameter description that says what the call puts in
  // front of a person ("The question posed to the user").
  std::string person_cue;
  // Session 15c: a credential parameter (password, secret) and a parameter
  // that keeps a session or counts attempts (remember_me, login_attempts).
  std::string credential_param;
  std::string session_param;
};

void Note(Evidence& e, Strength s, std::string detail) {
  if (s > e.strength) {
    e.strength = s;
    e.detail = std::move(detail);
  }
}

// A veto no annotation outranks: noted as a veto and as a hard veto.
void NoteHard(ToolLevel& out, Strength s, const std::string& detail) {
  Note(out.veto, s, detail);
  Note(out.hard_veto, s, detail);
}

// Sends and payments: a first-sentence verb that moves a message or money
// is a hard veto.
constexpr auto kHardMutationVerbs = std::to_array<std::string_view>({
    "send",
    "submit",
    "charge",
    "pay",
    "purchase",
    "refund",
    "transfer",
});

// The observation noun `word` names, if any ("logs", "heapsnapshot" ->
// "snapshot", "searches" -> "search"); empty if none.
std::string ObservationNoun(std::string_view word) {
  if (In(kObservationNouns, word)) return std::string(word);
  for (std::string_view suffix : {"es", "s"}) {
    if (word.size() > suffix.size() + 2 &&
        word.substr(word.size() - suffix.size()) == suffix &&
        In(kObservationNouns, word.substr(0, word.size() - suffix.size()))) {
      return std::string(word.substr(0, word.size() - suffix.size()));
    }
  }
  for (std::string_view n : {"snapshot", "screenshot"}) {
    if (word.size() > n.size() && word.substr(word.size() - n.size()) == n) {
      return std::string(n);
    }
  }
  return "";
}

bool IsAmbiguous(std::string_view t) { return In(kAmbiguousVerbs, t); }

// The verb of a name, parsed as a phrase: the first token if it is a verb
// ("get_issue", "post_message"); else the first verb that is not also a
// common noun, left to right ("api_retrieve_a_block" -> 'retrieve', not
// 'block'; "pull_request_read" -> 'read'; "firecrawl_search_feedback" ->
// 'search', whose object 'feedback' leaves the action to the description);
// else a noun-like verb as weak evidence ("network_request"). Tokens joined
// by "or"/"and" to the verb also count ("create_or_update").
// "run"/"perform" + an observation head ("run_accessibility_audit") reads.
// A name without a verb whose head is an observation noun ("git_log",
// "take_screenshot", "db_stats") reads, at description strength.
void NameVerbs(const std::vector<std::string>& tokens, ToolLevel& out) {
  if (tokens.empty()) return;
  auto known = [&](size_t i) {
    return BaseVerb(tokens[i]) != VerbClass::kNone || IsAmbiguous(tokens[i]);
  };
  size_t verb = tokens.size();
  bool weak = false;
  if (known(0)) {
    verb = 0;
  } else {
    for (size_t i = 1; i < tokens.size() && verb == tokens.size(); ++i) {
      if (known(i) && !IsNounLike(tokens[i])) verb = i;
    }
    // A mutating verb before the chosen one, joined to it by a preposition
    // ("mark_notification_as_read", "set_flag_to_read"), is the phrase's
    // action and the later verb its complement: the earlier verb decides
    // ("pull_request_read" has no preposition and still reads).
    for (size_t j = 1; j < verb && verb < tokens.size(); ++j) {
      if (BaseVerb(tokens[j]) != VerbClass::kCommand ||
          BaseVerb(tokens[verb]) == VerbClass::kCommand) {
        continue;
      }
      bool joined = false;
      for (size_t k = j + 1; k < verb; ++k) {
        for (std::string_view prep : {"as", "to", "into", "for"}) {
          if (tokens[k] == prep) joined = true;
        }
      }
      if (joined) {
        verb = j;
        break;
      }
    }
    for (size_t i = 1; i < tokens.size() && verb == tokens.size(); ++i) {
      if (known(i)) {
        verb = i;
        weak = true;
      }
    }
  }
  const std::string head = ObservationNoun(tokens.back());
  if (verb == tokens.size()) {
    if (In(kAgentNouns, tokens.back()) &&
        !(tokens.size() >= 2 && tokens[tokens.size() - 2] == "user")) {
      Note(out.veto, Strength::kName,
           "agent-noun rule: name head '" + tokens.back() +
               "' (starts an agent)");
      return;
    }
    if (!head.empty()) {
      Note(out.informational, Strength::kDescription,
           "observation-noun rule: name head '" + tokens.back() + "'");
    }
    return;
  }
  auto consider = [&](size_t i) {
    const std::string& w = tokens[i];
    if (IsAmbiguous(w)) {
      out.ambiguous = w;
      if (!head.empty() && i + 1 < tokens.size()) {
        Note(out.informational, Strength::kDescription,
             "observation-noun rule: ambiguous name verb '" + w +
                 "' with head '" + tokens.back() + "'");
      }
      return;
    }
    const VerbClass c = BaseVerb(w);
    const Strength s = weak ? Strength::kWeakName : Strength::kName;
    if ((w == "run" || w == "perform") && !head.empty() &&
        i + 1 < tokens.size()) {
      Note(out.informational, s,
           "name-phrase rule: '" + w + " ... " + tokens.back() + "'");
      return;
    }
    const std::string what =
        std::string(weak ? "weak " : "") + "name-verb rule: '" + w + "'";
    // "return" reads only in prose ("Returns the list ..."): every function
    // returns data, so a name that says `return_order` names the act of
    // returning goods (issue 27 item 17; tau2-bench labels it a write).
    if (w == "return") {
      Note(out.command, s,
           what + " (as a name verb: returning an order or item is a write)");
      return;
    }
    if (c == VerbClass::kCommand) Note(out.command, s, what);
    if (c == VerbClass::kInformational) Note(out.informational, s, what);
    if (c == VerbClass::kDispatch) out.dispatch = true;
  };
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

// Lowercase alphabetic words of the whole of `text`.
std::vector<std::string> AllWords(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (size_t i = 0; i <= text.size(); ++i) {
    const char ch = i < text.size() ? text[i] : ' ';
    if (std::isalpha(static_cast<unsigned char>(ch))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  return words;
}

// Lowercase alphabetic words of the first sentence of `text`: leading
// whitespace and Markdown headings skipped; ends at ". ", "\n" or the end.
std::vector<std::string> FirstSentenceWords(std::string_view text) {
  size_t start = 0;
  while (start < text.size()) {
    while (start < text.size() &&
           std::isspace(static_cast<unsigned char>(text[start]))) {
      ++start;
    }
    if (start < text.size() && text[start] == '#') {
      const size_t nl = text.find('\n', start);
      start = nl == std::string_view::npos ? text.size() : nl + 1;
      continue;
    }
    break;
  }
  size_t end = start;
  while (end < text.size() && text[end] != '\n' &&
         !(text[end] == '.' &&
           (end + 1 == text.size() ||
            std::isspace(static_cast<unsigned char>(text[end + 1]))))) {
    ++end;
  }
  return AllWords(text.substr(start, end - start));
}

// `word` as a base form for the veto lists: itself, or, when
// `third_person` forms count, without -s/-es ("executes"); never -ing or -ed
// ("starting from", "created by" describe).
std::string VetoBase(const std::string& word, bool (*in)(std::string_view word),
                     bool third_person) {
  if (in(word)) return word;
  if (!third_person) return "";
  for (std::string_view suffix : {"es", "s"}) {
    if (word.size() <= suffix.size() + 2 ||
        word.substr(word.size() - suffix.size()) != suffix) {
      continue;
    }
    std::string stem = word.substr(0, word.size() - suffix.size());
    for (const std::string& c :
         {stem, stem + "e",
          stem.size() >= 2 && stem[stem.size() - 1] == stem[stem.size() - 2]
              ? stem.substr(0, stem.size() - 1)
              : stem}) {
      if (in(c)) return c;
    }
  }
  return "";
}

bool IsExecutionVerb(std::string_view w) { return In(kExecutionVerbs, w); }
bool IsStrongMutationVerb(std::string_view w) {
  return In(kStrongMutationVerbs, w);
}

bool IsNegation(std::string_view w) {
  return w == "not" || w == "never" || w == "no" || w == "without" ||
         w == "cannot" || w == "t";  // "doesn't", "don't"
}

// Words that end a noun phrase (prepositions, conjunctions, relatives).
constexpr auto kPhraseStops = std::to_array<std::string_view>({
    "on",  "in",  "against", "for", "to",   "with",   "from",  "of",
    "by",  "and", "or",      "at",  "into", "that",   "which", "using",
    "via", "as",  "then",    "if",  "when", "across",
});

// The head noun of the phrase after words[i] ("Run an accessibility audit on
// the page" -> "audit"): determiners skipped, ends at a preposition.
std::string ObjectHead(const std::vector<std::string>& words, size_t i) {
  static constexpr auto kDeterminers = std::to_array<std::string_view>({
      "a",
      "an",
      "the",
      "this",
      "that",
      "these",
      "those",
      "one",
      "some",
      "any",
      "all",
      "your",
      "our",
      "my",
      "its",
      "their",
      "new",
  });
  std::string head;
  for (size_t j = i + 1; j < words.size(); ++j) {
    if (In(kPhraseStops, words[j])) break;
    if (head.empty() && In(kDeterminers, words[j])) continue;
    head = words[j];
  }
  return head;
}

// A description that says the call returns the id of a job, run or task
// ("it returns a job ID immediately, and you poll ...") describes starting
// asynchronous work, anywhere in the text: execution veto.
void AsyncJobEvidence(std::string_view text, ToolLevel& out) {
  static constexpr auto kJobNouns = std::to_array<std::string_view>(
      {"job", "run", "task", "operation", "crawl", "batch", "agent"});
  const std::vector<std::string> words = AllWords(text);
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w != "return" && w != "returns" && w != "returned" &&
        w != "returning") {
      continue;
    }
    for (size_t j = i + 1; j + 1 < words.size() && j <= i + 5; ++j) {
      if (In(kJobNouns, words[j]) &&
          (words[j + 1] == "id" || words[j + 1] == "ids" ||
           words[j + 1] == "identifier")) {
        Note(out.veto, Strength::kDescription,
             "async-job rule: description '" + w + " ... " + words[j] + " " +
                 words[j + 1] + "' (starts asynchronous work)");
        return;
      }
    }
  }
}

// A sentence after the first that adds an action ("Retrieve the content.
// Also connects the agent to the editor so the avatar is visible"; "It
// also creates the folder when missing"; "This will overwrite ..."): the
// side effect is said after the call's main purpose, so the first
// sentence's reading verb must not decide alone. The opener ("also",
// "additionally", "it/this also", "it/this will") followed by a command,
// strong-mutation or execution verb vetoes INFORMATIONAL; a reading verb
// after the opener ("Also returns the total") or a negation ("Also does
// not modify ...") does not.
void AddedActionEvidence(std::string_view text, ToolLevel& out) {
  size_t begin = 0;
  bool first = true;
  for (size_t i = 0; i <= text.size(); ++i) {
    const bool end = i == text.size() || text[i] == '\n' ||
                     ((text[i] == '.' || text[i] == '!' || text[i] == '?') &&
                      (i + 1 == text.size() ||
                       std::isspace(static_cast<unsigned char>(text[i + 1]))));
    if (!end) continue;
    const std::vector<std::string> words =
        AllWords(text.substr(begin, i - begin));
    begin = i + 1;
    if (words.empty()) continue;
    if (first) {
      first = false;
      continue;
    }
    size_t k = 0;
    if (words[0] == "also" || words[0] == "additionally") {
      k = 1;
    } else if (words.size() > 2 && (words[0] == "it" || words[0] == "this") &&
               (words[1] == "also" || words[1] == "will")) {
      k = words[2] == "also" ? 3 : 2;
    } else if (kSession15bRules && words.size() > 3 && words[0] == "this" &&
               (words[1] == "function" || words[1] == "tool" ||
                words[1] == "method" || words[1] == "endpoint" ||
                words[1] == "call") &&
               words[2] == "also") {
      // Session 15b: "This function also logs the authentication attempt."
      k = 3;
    } else {
      continue;
    }
    if (k >= words.size() || IsNegation(words[k])) continue;
    const std::string& w = words[k];
    // Session 15b: after "also", "logs"/"records" is a verb that keeps a
    // record of the call (user_authentication "also logs the attempt").
    const bool records =
        kSession15bRules && (w == "logs" || w == "records" || w == "log" ||
                             w == "record" || w == "stores" || w == "saves");
    const bool acts =
        records || ClassifyVerb(w, /*inflected=*/true) == VerbClass::kCommand ||
        !VetoBase(w, IsStrongMutationVerb, /*third_person=*/true).empty() ||
        !VetoBase(w, IsExecutionVerb, /*third_person=*/true).empty();
    if (!acts) continue;
    Note(out.veto, Strength::kDescription,
         "added-action rule: a later sentence of the description says '" +
             words[0] + (k > 1 ? " " + words[1] : "") +
             (k > 2 ? " " + words[2] : "") + " " + w +
             "' (a side effect besides the main purpose)");
    return;
  }
}

// Session 12, example rule: what follows "such as", "e.g.", "for example"
// or "for instance" illustrates the data, not the call ("Generate a sankey
// chart ..., such as, the user journey ... to completing a purchase";
// "..., such as, evaluate Huawei and Apple phones"): a sentence's evidence
// ends there.
void CutAtExample(std::vector<std::string>& words) {
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& a = words[i - 1];
    const std::string& b = words[i];
    if ((a == "such" && b == "as") || (a == "e" && b == "g") ||
        (a == "for" && (b == "example" || b == "instance"))) {
      words.resize(i - 1);
      return;
    }
  }
}

// Type evidence and vetoes from the first sentence of a title or
// description: the first lexicon verb decides the type (noun-like verbs only
// as the first word); execution verbs and strong mutation verbs anywhere
// veto; real-time words are collected for the TTL.
void TextEvidence(std::string_view text, Strength strength,
                  std::string_view what, ToolLevel& out) {
  std::vector<std::string> words = FirstSentenceWords(text);
  CutAtExample(words);
  bool decided = false;
  // A verbless first sentence headed by an agent noun ("Autonomous web
  // research agent."): the tool starts an agent.
  if (!words.empty() &&
      ClassifyVerb(words[0], /*inflected=*/true) == VerbClass::kNone &&
      !IsAmbiguous(words[0]) && !IsExecutionVerb(words[0])) {
    for (size_t i = 1; i < words.size(); ++i) {
      // Only the leading noun phrase: "... using an AI agent" is not it.
      if (In(kPhraseStops, words[i])) break;
      if (!In(kAgentNouns, words[i]) || words[i - 1] == "user") continue;
      if (i + 1 == words.size() || words[i + 1] == "that" ||
          words[i + 1] == "which" || words[i + 1] == "who") {
        Note(out.veto, strength,
             "agent-noun rule: " + std::string(what) + " headed by '" +
                 words[i] + "' (starts an agent)");
      }
      break;
    }
  }
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    const bool negated = i > 0 && IsNegation(words[i - 1]);
    // A third-person form ("creates") is a verb after a subject-like word;
    // elsewhere it is as often a plural noun ("list transfers").
    static constexpr auto kSubjects = std::to_array<std::string_view>(
        {"it", "and", "that", "which", "then", "also", "tool", "or", "who",
         "server", "this"});
    const bool subject = i > 0 && In(kSubjects, words[i - 1]);
    const bool counts_as_verb = i == 0 || !IsNounLike(w);
    // Execution: "Execute a SQL query", "Starts a crawl job"; but "Run an
    // accessibility audit" / "Performs filtered searches" read.
    if (const std::string e = VetoBase(w, IsExecutionVerb, i == 0 || subject);
        !e.empty() && (i == 0 || !IsNounLike(e)) && !negated) {
      const std::string head = ObjectHead(words, i);
      if ((e == "run" || e == "perform") && !ObservationNoun(head).empty()) {
        if (!decided) {
          Note(out.informational, strength,
               "phrase rule: " + std::string(what) + " '" + w + " ... " + head +
                   "'");
          decided = true;
        }
      } else {
        Note(out.veto, strength,
             "execution rule: " + std::string(what) + " verb '" + w + "'" +
                 (head.empty() ? "" : " ('" + head + "')"));
      }
      continue;
    }
    if (const std::string m =
            VetoBase(w, IsStrongMutationVerb, i == 0 || subject);
        !m.empty() && (i == 0 || !IsNounLike(m)) && !negated) {
      const std::string detail =
          "mutation rule: " + std::string(what) + " verb '" + w + "'";
      if (In(kHardMutationVerbs, m)) {
        NoteHard(out, strength, detail);
      } else {
        Note(out.veto, strength, detail);
      }
    }
    if (decided) continue;
    VerbClass c = ClassifyVerb(w, /*inflected=*/true);
    if (!counts_as_verb) c = VerbClass::kNone;
    const std::string detail =
        "text-verb rule: " + std::string(what) + " verb '" + w + "'";
    if (c == VerbClass::kCommand) {
      Note(out.command, strength, detail);
      decided = true;
    } else if (c == VerbClass::kInformational) {
      Note(out.informational, strength, detail);
      decided = true;
    }
    // Dispatch and ambiguous verbs ("Use this tool to ...", "Evaluate")
    // do not decide.
  }
}

// The leading verb of an action value such as "send", "get_comments",
// "createIssue".
VerbClass ActionVerb(std::string_view value, std::string* verb) {
  const std::vector<std::string> tokens = TokenizeName(value);
  if (tokens.empty()) return VerbClass::kNone;
  *verb = tokens.front();
  return ClassifyVerb(tokens.front(), /*inflected=*/true);
}

bool ContainsCue(std::string_view text,
                 std::span<const std::string_view> cues) {
  std::string word;
  for (size_t i = 0; i <= text.size(); ++i) {
    const char ch = i < text.size() ? text[i] : ' ';
    if (std::isalpha(static_cast<unsigned char>(ch))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    } else if (!word.empty()) {
      if (std::find(cues.begin(), cues.end(), word) != cues.end()) return true;
      word.clear();
    }
  }
  return false;
}

// A property schema whose type is boolean ("type": "boolean" or a type list
// holding it).
bool IsBooleanSchema(const Json& p) {
  if (!p.is_object()) return false;
  auto t = p.find("type");
  if (t == p.end()) return false;
  if (t->is_string()) return t->get<std::string>() == "boolean";
  if (t->is_array()) {
    for (const Json& v : *t) {
      if (v.is_string() && v.get<std::string>() == "boolean") return true;
    }
  }
  return false;
}

// The clauses of a parameter description, each as lowercase words: split at
// sentence ends, line breaks, parentheses, colons and semicolons.
std::vector<std::vector<std::string>> Clauses(std::string_view text) {
  std::vector<std::vector<std::string>> out;
  size_t begin = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    const bool end = i == text.size() || text[i] == '\n' || text[i] == '(' ||
                     text[i] == ')' || text[i] == ':' || text[i] == ';' ||
                     (text[i] == '.' &&
                      (i + 1 == text.size() ||
                       std::isspace(static_cast<unsigned char>(text[i + 1]))));
    if (!end) continue;
    std::vector<std::string> words = AllWords(text.substr(begin, i - begin));
    if (!words.empty()) out.push_back(std::move(words));
    begin = i + 1;
  }
  return out;
}

// A parameter whose description says its value is executed ("The WIQL
// query string to execute.", "JavaScript code to evaluate in the page",
// "the statement to be executed"): the tool runs what the caller passes
// (veto). The verb is an infinitive or a passive with "be", and has no
// object of its own (it ends its clause or a preposition follows): "the
// connection to run the operation against" names where, not what, is run.
void ParamExecutionText(const std::string& path, std::string_view pdesc,
                        ToolLevel& out) {
  static constexpr auto kInfinitive = std::to_array<std::string_view>(
      {"execute", "exec", "invoke", "run", "evaluate", "eval", "launch",
       "spawn", "trigger"});
  static constexpr auto kPassive = std::to_array<std::string_view>(
      {"executed", "evaluated", "invoked", "run", "launched", "triggered",
       "spawned"});
  for (const std::vector<std::string>& words : Clauses(pdesc)) {
    for (size_t i = 1; i < words.size(); ++i) {
      const std::string& w = words[i];
      const std::string& prev = words[i - 1];
      const bool verb = (prev == "to" && In(kInfinitive, w)) ||
                        ((prev == "be" || prev == "being") && In(kPassive, w));
      if (!verb) continue;
      if (i >= 2 && IsNegation(words[i - 2])) continue;
      if (i + 1 < words.size() && !In(kPhraseStops, words[i + 1])) continue;
      Note(out.veto, Strength::kSchema,
           "parameter-text execution rule: parameter '" + path +
               "' described '... " + prev + " " + w + "'");
      return;
    }
  }
}

// A boolean option described by an imperative verb that changes state
// ("clear": "Clear after returning", "prune": "Prune remote-tracking
// references", "Whether to delete the source branch"): setting it makes the
// call act (veto). A leading "whether to", "if true", "when true" or "set to
// true to" is skipped; -ed/-ing forms ("Archived projects only") describe.
// Options that shape the returned data ("Remove all script tags from the
// HTML", "Enable summary generation for results") do not count: the verb
// list has no output-shaping verbs (enable, apply, add, follow, ...), and a
// clause naming the output (html, output, response, result, text, content,
// markdown) is skipped.
void BooleanOptionText(const std::string& path, std::string_view pdesc,
                       ToolLevel& out) {
  static constexpr auto kStateVerbs = std::to_array<std::string_view>({
      "clear",  "prune",   "delete", "remove",    "purge",     "wipe",
      "reset",  "drop",    "kill",   "terminate", "overwrite", "save",
      "write",  "send",    "submit", "publish",   "commit",    "push",
      "deploy", "install", "create", "archive",   "execute",   "run",
      "invoke", "launch",  "start",  "trigger",   "spawn",     "close",
      "stop",   "cancel",  "lock",   "unlock",    "merge",     "notify",
  });
  static constexpr auto kOutputWords = std::to_array<std::string_view>(
      {"html", "output", "response", "result", "results", "text", "content",
       "markdown"});
  const std::vector<std::string> words = FirstSentenceWords(pdesc);
  for (const std::string& w : words) {
    if (In(kOutputWords, w)) return;
  }
  size_t i = 0;
  auto skip = [&](std::initializer_list<std::string_view> prefix) {
    if (i > 0 || words.size() < prefix.size() + 1) return;
    size_t j = 0;
    for (std::string_view p : prefix) {
      if (words[j++] != p) return;
    }
    i = j;
  };
  skip({"whether", "to"});
  skip({"if", "true"});
  skip({"when", "true"});
  skip({"set", "to", "true", "to"});
  skip({"true", "to"});
  // The passive form of the same option ("Whether changes made during the
  // session should be saved to the profile"): "whether"/"if" opens it and
  // the state verb follows "be"/"is"/"are" as a participle.
  if (i == 0 && !words.empty() && (words[0] == "whether" || words[0] == "if")) {
    for (size_t j = 1; j + 1 < words.size(); ++j) {
      if (words[j] != "be" && words[j] != "is" && words[j] != "are") continue;
      const std::string& p = words[j + 1];
      if (p.size() < 4 || p.substr(p.size() - 2) != "ed") break;
      const std::string stem = p.substr(0, p.size() - 2);
      for (const std::string& c :
           {stem, stem + "e",
            stem.size() >= 2 && stem[stem.size() - 1] == stem[stem.size() - 2]
                ? stem.substr(0, stem.size() - 1)
                : stem}) {
        if (!In(kStateVerbs, c)) continue;
        Note(out.veto, Strength::kSchema,
             "option rule: boolean parameter '" + path + "' described '... " +
                 words[j] + " " + p + "' (setting it acts)");
        return;
      }
      break;
    }
  }
  if (i >= words.size()) return;
  const std::string& w = words[i];
  std::string base = In(kStateVerbs, w) ? w : "";
  // "Deletes the branch" (-s/-es only; never -ed/-ing).
  for (std::string_view suffix : {"es", "s"}) {
    if (!base.empty() || w.size() <= suffix.size() + 2 ||
        w.substr(w.size() - suffix.size()) != suffix) {
      continue;
    }
    const std::string stem = w.substr(0, w.size() - suffix.size());
    if (In(kStateVerbs, stem)) base = stem;
    if (In(kStateVerbs, stem + "e")) base = stem + "e";
  }
  if (base.empty()) return;
  Note(out.veto, Strength::kSchema,
       "option rule: boolean parameter '" + path + "' described '" + w +
           " ...' (setting it acts)");
}

// Boolean options nested deeper than one level ("sessionOptions.profile.
// persistChanges": "Whether changes made during the session should be saved
// to the profile", on by default): the option rule at every depth up to
// four, through object properties and array items.
// `below_only`: the options of `props` itself are judged by the caller
// (SchemaFeatures' one-level walk); only those under them are walked here.
void NestedBooleanOptions(const Json& props, const std::string& path, int depth,
                          ToolLevel& out, bool below_only = false) {
  if (depth > 4 || !props.is_object()) return;
  for (auto it = props.begin(); it != props.end(); ++it) {
    if (!it.value().is_object()) continue;
    const std::string sub_path = path + "." + it.key();
    if (!below_only && IsBooleanSchema(it.value())) {
      if (auto d = it.value().find("description");
          d != it.value().end() && d->is_string()) {
        BooleanOptionText(sub_path, d->get<std::string>(), out);
      }
    }
    if (auto p = it.value().find("properties"); p != it.value().end()) {
      NestedBooleanOptions(*p, sub_path, depth + 1, out);
    } else if (auto items = it.value().find("items");
               items != it.value().end() && items->is_object()) {
      if (auto ip = items->find("properties"); ip != items->end()) {
        NestedBooleanOptions(*ip, sub_path + "[]", depth + 1, out);
      }
    }
  }
}

// Session 12, second round, switch rule: a boolean parameter that switches
// the call's effect off ("dryRun": "If true, only outputs result without
// actually saving"; "dry_run", "simulate", "noSave") exists only on calls
// that change something (veto). A boolean whose whole name is a
// state-changing verb ("activate": "If true (default), found tools are
// activated") switches an effect on (veto), unless its description names
// the output ("Save the result as markdown" shapes the response).
// Choice: only the whole name counts for the on-switch ("saveImages",
// "enableSummary", "storeInCache" are options of reads in the seen sets).
void SwitchParamEvidence(const std::string& key,
                         const std::vector<std::string>& tokens,
                         std::string_view pdesc, ToolLevel& out) {
  static constexpr auto kOffSwitches = std::to_array<std::string_view>(
      {"dryrun", "simulate", "simulateonly", "nosave", "whatif"});
  static constexpr auto kOnSwitches = std::to_array<std::string_view>(
      {"activate", "persist", "save", "commit", "apply", "install", "subscribe",
       "register", "publish", "deploy"});
  static constexpr auto kOutputWords = std::to_array<std::string_view>(
      {"html", "output", "response", "result", "results", "text", "content",
       "markdown", "format"});
  bool off = false;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] == "dryrun" || (tokens[i] == "dry" && i + 1 < tokens.size() &&
                                  tokens[i + 1] == "run")) {
      off = true;
    }
  }
  const std::string norm = Normalized(tokens);
  off = off || In(kOffSwitches, norm);
  if (off) {
    NoteHard(out, Strength::kSchema,
             "switch rule: boolean parameter '" + key +
                 "' turns the call's effect off (the call has one)");
    return;
  }
  if (!In(kOnSwitches, norm)) return;
  for (const std::string& w : AllWords(pdesc)) {
    if (In(kOutputWords, w)) return;
  }
  NoteHard(out, Strength::kSchema,
           "switch rule: boolean parameter '" + key +
               "' turns an effect on (a state-changing verb as its name)");
}

// Session 14's rules that read one parameter (defined with the others
// below); SchemaFeatures calls it from its walk over the parameters.
void Session14ParamEvidence(const std::string& key,
                            const std::vector<std::string>& tokens,
                            const Json& value, std::string_view pdesc,
                            ToolLevel& out);

// Session 15b rule 4 (acting clause): the first sentence says the call
// performs, executes or takes actions, beside whatever else it provides
// (hacking.query: "handles queries ..., providing information or
// performing actions as needed"): the call may act, so it is not cached.
// Not: "without performing any actions" (negation), "Performs a search"
// (the object is what it reads), "Lists the actions of a workflow" (no
// acting verb), "Run an accessibility audit".
void ActingClauseEvidence(const ToolInfo& tool, ToolLevel& t) {
  if (!kSession15bRules) return;
  static constexpr auto kActVerbs = std::to_array<std::string_view>(
      {"perform", "performs", "performing", "execute", "executes", "executing",
       "take", "takes", "taking"});
  static constexpr auto kActionNouns = std::to_array<std::string_view>(
      {"action", "actions", "operation", "operations"});
  const std::vector<std::string> words = FirstSentenceWords(tool.description);
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    if (!In(kActVerbs, words[i])) continue;
    if (i > 0 && IsNegation(words[i - 1])) continue;
    size_t j = i + 1;
    while (j < words.size() && j <= i + 3 &&
           (words[j] == "the" || words[j] == "a" || words[j] == "an" ||
            words[j] == "other" || words[j] == "further" ||
            words[j] == "some" || words[j] == "requested")) {
      ++j;
    }
    if (j < words.size() && In(kActionNouns, words[j])) {
      Note(t.veto, Strength::kDescription,
           "acting-clause rule: the description says '" + words[i] + " " +
               words[j] + "' (the call may act)");
      return;
    }
  }
}

void Session15ParamEvidence(const std::string& key,
                            const std::vector<std::string>& tokens,
                            const Json& value, std::string_view pdesc,
                            ToolLevel& out);
void SideOutputParam(const std::string& key,
                     const std::vector<std::string>& tokens, const Json& value,
                     std::string_view pdesc, ToolLevel& out);

void SchemaFeatures(std::string_view schema_text, std::string_view tool_text,
                    ToolLevel& out) {
  if (schema_text.empty()) return;
  Json schema = Json::parse(schema_text, nullptr, /*allow_exceptions=*/false);
  if (!schema.is_object()) return;
  auto props = schema.find("properties");
  if (props == schema.end() || !props->is_object()) return;
  // Paper: the first parameter of a multi-parameter call is the category.
  if (props->size() >= 2) out.schema_category = props->begin().key();
  static constexpr auto kSqlCues = std::to_array<std::string_view>(
      {"sql", "graphql", "cypher", "ddl", "dml"});
  static const Json kNoProperties = Json::object();
  for (auto it = props->begin(); it != props->end(); ++it) {
    const std::string& key = it.key();
    const std::vector<std::string> tokens = TokenizeName(key);
    const std::string norm = Normalized(tokens);
    const bool is_object = it.value().is_object();
    const bool has_enum = is_object && it.value().contains("enum");
    std::string pdesc;
    if (is_object) {
      if (auto d = it.value().find("description");
          d != it.value().end() && d->is_string()) {
        pdesc = d->get<std::string>();
      }
    }
    // The parameter's own text: its value is executed, or it is an option
    // that makes the call act.
    ParamExecutionText(key, pdesc, out);
    Session14ParamEvidence(key, tokens, it.value(), pdesc, out);
    Session15ParamEvidence(key, tokens, it.value(), pdesc, out);
    if (IsBooleanSchema(it.value())) {
      BooleanOptionText(key, pdesc, out);
      SwitchParamEvidence(key, tokens, pdesc, out);
    }
    // Code, a statement or a body: the tool executes or sends it.
    if (In(kExecutionParams, norm) && !(In(kActionKeys, norm) && has_enum)) {
      NoteHard(out, Strength::kSchema,
               "execution rule: parameter '" + key + "'");
    } else if (In(kCodeCueParams, norm) && !has_enum) {
      // "code" is no cue for a parameter named "code" ("The discount code"
      // names no program); "function" and "expression" stay cues for their
      // own parameters (a formula to evaluate: safety first).
      std::vector<std::string_view> cues(kCodeCues.begin(), kCodeCues.end());
      if (norm == "code") std::erase(cues, std::string_view("code"));
      const bool cue =
          norm == "query"
              ? ContainsCue(pdesc, kSqlCues) || ContainsCue(tool_text, kSqlCues)
              : ContainsCue(pdesc, cues) || ContainsCue(tool_text, cues);
      if (cue) {
        NoteHard(out, Strength::kSchema,
                 "execution rule: parameter '" + key + "' holds code");
      }
    }
    // One level down (an object's properties, an array's item properties):
    // code or a statement inside a parameter ("actions[].script",
    // "params.sql"), and a list of steps whose type allows an action
    // ("actions": [{"type": "click" | "executeJavascript" | ...}]).
    if (is_object) {
      const Json* sub = nullptr;
      std::string path = key;
      if (auto p = it.value().find("properties");
          p != it.value().end() && p->is_object()) {
        sub = &*p;
      } else if (auto items = it.value().find("items");
                 items != it.value().end() && items->is_object()) {
        if (auto ip = items->find("properties");
            ip != items->end() && ip->is_object()) {
          sub = &*ip;
          path += "[]";
        }
      }
      if (sub == nullptr) sub = &kNoProperties;
      // Two levels down and deeper: boolean options only.
      NestedBooleanOptions(*sub, path, 2, out, /*below_only=*/true);
      for (auto si = sub->begin(); si != sub->end(); ++si) {
        const std::string snorm = Normalized(TokenizeName(si.key()));
        const bool s_enum = si.value().is_object() &&
                            si.value().contains("enum") &&
                            si.value().at("enum").is_array();
        if (si.value().is_object()) {
          const std::string sub_path = path + "." + si.key();
          if (auto d = si.value().find("description");
              d != si.value().end() && d->is_string()) {
            ParamExecutionText(sub_path, d->get<std::string>(), out);
            if (IsBooleanSchema(si.value())) {
              BooleanOptionText(sub_path, d->get<std::string>(), out);
            }
          }
        }
        if (In(kExecutionParams, snorm) &&
            !(In(kActionKeys, snorm) && s_enum)) {
          NoteHard(out, Strength::kSchema,
                   "execution rule: parameter '" + path + "." + si.key() + "'");
        }
        if (!s_enum || !In(kActionListParams, norm) ||
            !(In(kActionKeys, snorm) || snorm == "type" || snorm == "kind")) {
          continue;
        }
        for (const Json& v : si.value().at("enum")) {
          std::string verb;
          if (v.is_string() &&
              (ActionVerb(v.get<std::string>(), &verb) == VerbClass::kCommand ||
               IsExecutionVerb(verb))) {
            Note(out.veto, Strength::kSchema,
                 "action-list rule: '" + path + "." + si.key() + "' allows '" +
                     v.get<std::string>() + "'");
            break;
          }
        }
      }
    }
    // A file the tool writes: "outputPath", "savePng", "filePath" described
    // as where to save.
    bool pathish = false, outputish = false;
    for (const std::string& t : tokens) {
      if (t == "path" || t == "dir" || t == "directory" || t == "file" ||
          t == "filename" || t == "folder" || t == "png" || t == "pdf") {
        pathish = true;
      }
      if (t == "output" || t == "save" || t == "download" || t == "downloads" ||
          t == "export" || t == "destination" || t == "dest") {
        outputish = true;
      }
    }
    static constexpr auto kSaveCues = std::to_array<std::string_view>(
        {"save", "saved", "saves", "write", "written", "writes"});
    if (pathish && (outputish || ContainsCue(pdesc, kSaveCues))) {
      NoteHard(out, Strength::kSchema,
               "file-output rule: parameter '" + key + "'");
    } else {
      SideOutputParam(key, tokens, it.value(), pdesc, out);
    }
    if (!In(kActionKeys, norm)) continue;
    // The values: an "enum", or (rule 5, Session 14) the "const" of each
    // anyOf/oneOf branch, itself or its same-named property (x64dbg's
    // action: anyOf [{action: const "get_all"}, ..., {action: const "set"}]).
    Json alternatives = Json::array();
    if (has_enum) {
      alternatives = it.value().at("enum");
    } else if (kSession14Rules && is_object) {
      for (const char* comb : {"anyOf", "oneOf"}) {
        auto c = it.value().find(comb);
        if (c == it.value().end() || !c->is_array()) continue;
        for (const Json& b : *c) {
          if (!b.is_object()) continue;
          if (auto k = b.find("const"); k != b.end())
            alternatives.push_back(*k);
          if (auto bp = b.find("properties");
              bp != b.end() && bp->is_object()) {
            if (auto own = bp->find(key);
                own != bp->end() && own->is_object()) {
              if (auto k = own->find("const"); k != own->end()) {
                alternatives.push_back(*k);
              }
            }
          }
        }
      }
    }
    if (alternatives.empty()) continue;
    const Json* values = &alternatives;
    if (!values->is_array()) continue;
    bool all_informational = !values->empty();
    for (const Json& v : *values) {
      std::string verb;
      const VerbClass c = v.is_string()
                              ? ActionVerb(v.get<std::string>(), &verb)
                              : VerbClass::kNone;
      if (c == VerbClass::kCommand) {
        out.action_enum_mutates = true;
        Note(out.command, Strength::kSchema,
             "action-enum rule: '" + key + "' allows '" + v.get<std::string>() +
                 "'");
      }
      if (c != VerbClass::kInformational) all_informational = false;
    }
    if (all_informational) {
      Note(out.informational, Strength::kSchema,
           "action-enum rule: '" + key + "' allows only reading actions");
    }
  }
}

// Verbs that turn their object into something else: on a computed value
// ("convert_time", "convert_ids") they read, on a stored record they change
// it ("convert_issue_to_subtask", "db_cluster_upgrade_major_version").
constexpr auto kTransformVerbs = std::to_array<std::string_view>({
    "convert",
    "transform",
    "upgrade",
    "downgrade",
    "migrate",
    "promote",
    "demote",
});

// Transform-record rule: a transform verb in the name and a required
// parameter that identifies one stored record (a name whose last token is
// "id": "issueId", "cluster_id") -> veto: the record is transformed.
void TransformedRecord(const ToolInfo& tool, ToolLevel& t) {
  std::string verb;
  for (const std::string& token : t.name_tokens) {
    if (In(kTransformVerbs, token)) verb = token;
  }
  if (verb.empty()) return;
  const nlohmann::json schema =
      nlohmann::json::parse(tool.input_schema_json, nullptr, false);
  if (schema.is_discarded() || !schema.is_object()) return;
  auto required = schema.find("required");
  if (required == schema.end() || !required->is_array()) return;
  for (const nlohmann::json& r : *required) {
    if (!r.is_string()) continue;
    const std::vector<std::string> parts = TokenizeName(r.get<std::string>());
    if (!parts.empty() && parts.back() == "id") {
      Note(t.veto, Strength::kName,
           "transform-record rule: '" + verb + "' applied to the record '" +
               r.get<std::string>() + "' identifies");
      return;
    }
  }
}

// The start of a camelCase verb phrase after a snake_case prefix
// ("hosting_listInstalledWordPressPluginsV1" -> "listInstalled...",
// "linear_markNotificationAsRead" -> "markNotification..."): the two
// conventions mark a namespace and a function, as "__" or "." do, so the
// phrase's first word is the verb position and a participle or a split
// brand name inside it ("Installed", "Word|Press") is not the verb. 0 if
// the last "_" segment of `name` is not camelCase or does not open with a
// verb.
size_t CamelPhraseStartImpl(std::string_view name) {
  const size_t p = name.rfind('_');
  if (p == std::string_view::npos || p + 1 >= name.size()) return 0;
  const std::string_view rest = name.substr(p + 1);
  if (!std::islower(static_cast<unsigned char>(rest[0]))) return 0;
  bool camel = false;
  for (size_t i = 1; i < rest.size(); ++i) {
    if (std::isupper(static_cast<unsigned char>(rest[i])) &&
        std::islower(static_cast<unsigned char>(rest[i - 1]))) {
      camel = true;
    }
  }
  if (!camel) return 0;
  // A prefix that itself names an action is not a namespace: in
  // "delete_listMembers" or "create_searchIndex" the prefix's verb is the
  // call's, and the camel part its object ("list", "search" as nouns).
  for (const std::string& t : TokenizeName(name.substr(0, p))) {
    if (BaseVerb(t) != VerbClass::kNone || IsAmbiguous(t)) return 0;
  }
  const std::vector<std::string> tokens = TokenizeName(rest);
  if (tokens.empty()) return 0;
  if (BaseVerb(tokens[0]) == VerbClass::kNone && !IsAmbiguous(tokens[0])) {
    return 0;
  }
  return p + 1;
}

// Verbs of checking whose object may be a claim the remote system holds.
constexpr auto kCheckVerbs = std::to_array<std::string_view>({
    "verify",
    "validate",
});

// Remote-check rule: a checking verb opening the name's function part
// whose every parameter only names a remote resource (last token "id",
// "uuid" or "domain": "validate_server(uuid)",
// "hosting_verifyDomainOwnershipV1(domain)") -> veto. Nothing to check is
// passed in, so the check runs against the remote system's own state and
// the system acts on its result (re-validates a server, records a
// verification); with content to check ("validate(code)",
// "verify_signature(payload, signature)") the verb reads.
void RemoteCheck(const ToolInfo& tool, const std::vector<std::string>& fn,
                 ToolLevel& t) {
  if (fn.empty() || !In(kCheckVerbs, fn[0])) return;
  const nlohmann::json schema =
      nlohmann::json::parse(tool.input_schema_json, nullptr, false);
  if (schema.is_discarded() || !schema.is_object()) return;
  auto props = schema.find("properties");
  if (props == schema.end() || !props->is_object() || props->empty()) return;
  for (const auto& [key, value] : props->items()) {
    const std::vector<std::string> parts = TokenizeName(key);
    if (parts.empty() || (parts.back() != "id" && parts.back() != "uuid" &&
                          parts.back() != "domain")) {
      return;
    }
  }
  Note(t.veto, Strength::kName,
       "remote-check rule: '" + fn[0] +
           "' with only resource identifiers as input checks remote state "
           "(the remote system acts)");
}

// The sentences of `text` as lowercase word lists (ends at ". ", "! ",
// "? ", a newline or the end; empty sentences dropped).
std::vector<std::vector<std::string>> Sentences(std::string_view text) {
  std::vector<std::vector<std::string>> out;
  size_t begin = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    const bool end = i == text.size() || text[i] == '\n' ||
                     ((text[i] == '.' || text[i] == '!' || text[i] == '?') &&
                      (i + 1 == text.size() ||
                       std::isspace(static_cast<unsigned char>(text[i + 1]))));
    if (!end) continue;
    std::vector<std::string> words = AllWords(text.substr(begin, i - begin));
    begin = i + 1;
    if (!words.empty()) out.push_back(std::move(words));
  }
  return out;
}

// Stated-purpose rule: a sentence anywhere in the description that states
// a write as a requirement of the call ("must", "required", "requires",
// "need(s) to"), by an infinitive of purpose ("You must provide an absolute
// rootPath of workspace to save workflow files") or a future passive ("A
// directory is required: the files will be saved there"), vetoes
// INFORMATIONAL. An optional output ("pass saveTo to write logs to a
// file"; "if ..., the logs will be written") or data at rest ("History is
// persisted locally") does not: the sentence must say the call needs it,
// without a condition (if, when, unless, optional, optionally, or).
void StatedPurposeEvidence(std::string_view text, ToolLevel& out) {
  static constexpr auto kPurposeVerbs =
      std::to_array<std::string_view>({"save", "write", "store", "persist"});
  static constexpr auto kPassives = std::to_array<std::string_view>(
      {"saved", "written", "stored", "persisted"});
  static constexpr auto kRequire = std::to_array<std::string_view>(
      {"must", "required", "requires", "require", "need", "needs"});
  static constexpr auto kConditions = std::to_array<std::string_view>(
      {"if", "when", "unless", "optional", "optionally", "or"});
  for (const std::vector<std::string>& words : Sentences(text)) {
    bool required = false;
    bool conditional = false;
    for (const std::string& w : words) {
      required = required || In(kRequire, w);
      conditional = conditional || In(kConditions, w);
    }
    if (!required || conditional) continue;
    for (size_t i = 1; i < words.size(); ++i) {
      const std::string& prev = words[i - 1];
      const bool negated = (i >= 2 && IsNegation(words[i - 2])) ||
                           (i >= 3 && IsNegation(words[i - 3]));
      std::string said;
      if (prev == "to" && In(kPurposeVerbs, words[i]) && i + 1 < words.size()) {
        said = "to " + words[i];
      } else if (prev == "be" && i >= 2 && words[i - 2] == "will" &&
                 In(kPassives, words[i])) {
        said = "will be " + words[i];
      }
      if (said.empty() || negated) continue;
      Note(out.veto, Strength::kDescription,
           "stated-purpose rule: the description requires '" + said +
               "' (a write stated as what the call needs)");
      return;
    }
  }
}

// Parameter names that carry content to deliver or a place to write:
// a tool taking one does something with it (sends, stores, renders to a
// file, prompts or asks a paid model: "prompt", "question", a free-text
// "description" to generate from), so the read-evidence rule does not
// apply.
constexpr auto kContentParamTokens = std::to_array<std::string_view>({
    "content",     "contents",  "body",         "text",        "message",
    "messages",    "html",      "markdown",     "path",        "paths",
    "file",        "files",     "filename",     "filepath",    "dir",
    "directory",   "folder",    "output",       "destination", "dest",
    "target",      "recipient", "recipients",   "email",       "emails",
    "code",        "script",    "sql",          "command",     "cmd",
    "prompt",      "payload",   "instructions", "attachment",  "attachments",
    "comment",     "note",      "password",     "secret",      "question",
    "description",
});

// Words that say the output is not a function of the input: the answer
// differs per call (random values, or a model writes it), so "generate"
// creates rather than computes.
constexpr auto kNondeterministicWords = std::to_array<std::string_view>({
    "random",
    "randomly",
    "randomized",
    "password",
    "passwords",
    "passphrase",
    "uuid",
    "uuids",
    "nonce",
    "secret",
    "secrets",
    "unique",
    // A model writes the answer: it differs per call, and the call costs.
    "ai",
    "llm",
    "gpt",
});

// The name verbs the read-evidence rule may read from the definition alone:
// "generate" and "analyze" compute from their inputs when nothing names a
// remote record; "query" reads when no statement is passed (a sql/script
// parameter is a veto before this rule). "process", "resolve", "evaluate"
// stay ambiguous ("process_payment", "resolve_incident").
bool ComputesFromInputs(std::string_view verb) {
  return verb == "generate" || verb == "analyze" || verb == "analyse";
}

// True when a word of `words` is a write (said in `said`): a strong
// mutation or execution verb (base, -s, -ed or -ing form of a strong
// mutation verb; an execution verb that is also a common noun only as the
// first word of a sentence, and not as the first word of a parameter's
// description: "Start date", "Run ID" name the parameter), a command verb in
// base form after "or"/"and"
// ("Preview fixes or apply them"), or, with `opener` (the tool's title and
// description, not a parameter's), a command verb opening the sentence.
bool WriteWord(const std::vector<std::string>& words, bool opener,
               std::string* said) {
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    std::string base = VetoBase(w, IsStrongMutationVerb, true);
    if (base.empty()) {
      const std::string e = VetoBase(w, IsExecutionVerb, true);
      if (!e.empty() && (opener || i > 0) && (i == 0 || !IsNounLike(e))) {
        base = e;
      }
    }
    if (base.empty()) {
      for (std::string_view suffix : {"ed", "d", "ing"}) {
        if (w.size() <= suffix.size() + 2 || !w.ends_with(suffix)) continue;
        std::string stem = w.substr(0, w.size() - suffix.size());
        if (IsStrongMutationVerb(stem) || IsStrongMutationVerb(stem + "e")) {
          base = stem;
          break;
        }
      }
    }
    if (base.empty() && opener && i == 0 &&
        ClassifyVerb(w, /*inflected=*/true) == VerbClass::kCommand) {
      base = w;
    }
    // A conjoined imperative: "Preview fixes or apply them".
    if (base.empty() && i > 0 &&
        (words[i - 1] == "or" || words[i - 1] == "and") &&
        BaseVerb(w) == VerbClass::kCommand) {
      base = w;
    }
    if (!base.empty()) {
      *said = w;
      return true;
    }
  }
  return false;
}

// Read-evidence rule: when the name's verb is unknown, ambiguous, or the
// name opens with a noun (nothing else decided), the rest of the definition
// decides from what the call does: no parameter carries content or a place
// to write (kContentParamTokens), no word of the title, description or a
// parameter's description is a write (WriteWord), and either a sentence of
// the description opens with a reading verb ("Returns trace overview ...",
// "Returns stocks matching the filters"), or the name's verb computes from
// its inputs (generate, analyze: no parameter names a remote record, no
// word says the output is random; query: the statement vetoes already) ->
// INFORMATIONAL at description strength. Otherwise no opinion, COMMAND as
// before.
void ReadEvidence(const ToolInfo& tool, ToolLevel& t) {
  if (t.command.strength != Strength::kNone ||
      t.informational.strength != Strength::kNone ||
      t.veto.strength != Strength::kNone || t.dispatch ||
      t.action_enum_mutates) {
    return;
  }
  std::vector<std::vector<std::string>> texts = Sentences(tool.description);
  for (auto& s : Sentences(tool.title)) texts.push_back(std::move(s));
  // A parameter's description opens with "Set the title ...": it says
  // what the argument sets in the output, so only strong mutation and
  // execution words count there.
  std::vector<std::vector<std::string>> param_texts;
  bool has_id = false;
  const Json schema =
      Json::parse(tool.input_schema_json, nullptr, /*allow_exceptions=*/false);
  if (schema.is_object()) {
    auto props = schema.find("properties");
    if (props != schema.end() && props->is_object()) {
      for (auto it = props->begin(); it != props->end(); ++it) {
        const std::vector<std::string> parts = TokenizeName(it.key());
        // "outputType", "file_format", "textStyle": a format, not content.
        static constexpr auto kFormatHeads = std::to_array<std::string_view>(
            {"type", "types", "format", "formats", "mode", "kind", "style",
             "size", "limit", "length", "encoding", "filter", "filters"});
        const bool format = parts.size() >= 2 && In(kFormatHeads, parts.back());
        for (const std::string& p : parts) {
          if (In(kContentParamTokens, p) && !format) return;
        }
        if (it.key() == "to" || it.key() == "cc" || it.key() == "bcc") return;
        if (!parts.empty() &&
            (parts.back() == "id" || parts.back() == "ids" ||
             parts.back() == "uuid" || parts.back() == "uid")) {
          has_id = true;
        }
        if (it.value().is_object()) {
          if (auto d = it.value().find("description");
              d != it.value().end() && d->is_string()) {
            for (auto& s : Sentences(d->get<std::string>())) {
              param_texts.push_back(std::move(s));
            }
          }
        }
      }
    }
  }
  for (auto* list : {&texts, &param_texts}) {
    for (std::vector<std::string>& words : *list) CutAtExample(words);
  }
  std::string said;
  for (const std::vector<std::string>& words : texts) {
    if (WriteWord(words, /*opener=*/true, &said)) return;
  }
  for (const std::vector<std::string>& words : param_texts) {
    if (WriteWord(words, /*opener=*/false, &said)) return;
  }
  // A label before a colon opens a clause of its own ("Tool description:
  // Calculate the mean of a list of numbers.", BFCL's preamble).
  std::string clauses = tool.description;
  for (size_t p = clauses.find(": "); p != std::string::npos;
       p = clauses.find(": ", p + 2)) {
    clauses[p] = '.';
  }
  for (const std::vector<std::string>& words : Sentences(clauses)) {
    size_t k = 0;
    if (words.size() > 1 && (words[0] == "it" || words[0] == "this")) k = 1;
    if (ClassifyVerb(words[k], /*inflected=*/true) ==
        VerbClass::kInformational) {
      Note(t.informational, Strength::kDescription,
           "read-evidence rule: a sentence opens with '" + words[k] +
               "' and nothing in the definition writes");
      return;
    }
  }
  if (t.ambiguous == "query" || (ComputesFromInputs(t.ambiguous) && !has_id)) {
    for (const auto* list : {&texts, &param_texts}) {
      for (const std::vector<std::string>& words : *list) {
        for (const std::string& w : words) {
          if (In(kNondeterministicWords, w)) return;
        }
      }
    }
    Note(t.informational, Strength::kDescription,
         "read-evidence rule: ambiguous name verb '" + t.ambiguous +
             "' with only filter/format parameters and nothing in the "
             "definition writes");
  }
}

// Session 12, second round, operation-list rule: a description that
// enumerates the tool's operations after a label and a colon ("Project
// variable ops: get/set."; "Actions: list, create, delete") is a write when
// any listed operation's leading verb is a command, strong-mutation or
// execution verb; items are separated by '/', ',', '|', "or" and "and" and
// the list ends at a sentence end, a line break or a semicolon; a list
// names at least two operations, and a quoted or braced value after the
// colon is an example's field ('config={operation:"create"}'). "Code env
// ops: list/get" and "Project ops: list/get/metadata/flow/map" stay reads.
// Choice: the labels are ops, operation(s), action(s); "commands:" lists
// shell commands an agent may type ("Common commands: ls, cat"), not the
// tool's operations.
void OperationListEvidence(std::string_view text, ToolLevel& out) {
  static constexpr auto kLabels = std::to_array<std::string_view>(
      {"ops", "op", "operations", "operation", "actions", "action"});
  std::string word;
  for (size_t i = 0; i <= text.size(); ++i) {
    const char ch = i < text.size() ? text[i] : ' ';
    if (std::isalpha(static_cast<unsigned char>(ch))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      continue;
    }
    const bool label = In(kLabels, word);
    word.clear();
    if (!label) continue;
    size_t j = i;
    while (j < text.size() && text[j] == ' ') ++j;
    if (j >= text.size() || text[j] != ':') continue;
    // The list: up to a sentence end, a line break or a semicolon.
    size_t end = j + 1;
    while (end < text.size() && text[end] != '\n' && text[end] != ';' &&
           !(text[end] == '.' &&
             (end + 1 == text.size() ||
              std::isspace(static_cast<unsigned char>(text[end + 1]))))) {
      ++end;
    }
    const std::string_view list = text.substr(j + 1, end - j - 1);
    // A value, not a list: 'config={operation:"create"}' in an example.
    const size_t first = list.find_first_not_of(' ');
    if (first == std::string_view::npos || list[first] == '"' ||
        list[first] == '\'' || list[first] == '{') {
      continue;
    }
    std::vector<std::string> items;
    std::string item;
    for (size_t k = 0; k <= list.size(); ++k) {
      const char c = k < list.size() ? list[k] : ',';
      if (c == '/' || c == ',' || c == '|') {
        items.push_back(item);
        item.clear();
      } else {
        item += c;
      }
    }
    // An enumeration names at least two operations.
    if (items.size() < 2) continue;
    for (const std::string& raw : items) {
      // "get or set", "create and delete": each alternative's first word
      // counts.
      std::vector<std::string> parts;
      {
        std::string cur;
        const std::string_view r = raw;
        size_t b = 0;
        for (size_t k = 0; k <= r.size(); ++k) {
          if (k < r.size() && r[k] != ' ') continue;
          const std::string_view t = r.substr(b, k - b);
          b = k + 1;
          if (t.empty()) continue;
          if (t == "or" || t == "and") {
            parts.push_back(cur);
            cur.clear();
            continue;
          }
          if (cur.empty()) cur = std::string(t);
        }
        parts.push_back(cur);
      }
      for (const std::string& value : parts) {
        if (value.empty()) continue;
        std::string verb;
        const VerbClass c = ActionVerb(value, &verb);
        if (verb.empty()) continue;
        if (c == VerbClass::kCommand || IsExecutionVerb(verb) ||
            IsStrongMutationVerb(verb)) {
          NoteHard(out, Strength::kDescription,
                   "operation-list rule: the description lists operations "
                   "including '" +
                       value + "'");
          return;
        }
      }
    }
  }
}

// Session 12, second round, test-run rule: a first sentence about test or
// code coverage ("Perform comprehensive test coverage analysis ...")
// describes running the project's test suite: it executes the project's
// code (veto). A sentence whose verb before the phrase reads ("Get test
// coverage for a file") or whose coverage is a stored artifact ("coverage
// report", "coverage data", "coverage file", "coverage results") reads.
void TestRunEvidence(std::string_view text, ToolLevel& out) {
  static constexpr auto kArtifacts = std::to_array<std::string_view>(
      {"report", "reports", "data", "file", "files", "result", "results",
       "information", "info", "summary"});
  std::vector<std::string> words = FirstSentenceWords(text);
  CutAtExample(words);
  for (size_t i = 1; i < words.size(); ++i) {
    if (words[i] != "coverage") continue;
    const std::string& prev = words[i - 1];
    if (prev != "test" && prev != "tests" && prev != "code") continue;
    if (i + 1 < words.size() && In(kArtifacts, words[i + 1])) return;
    for (size_t j = 0; j + 1 < i; ++j) {
      if (ClassifyVerb(words[j], /*inflected=*/true) ==
          VerbClass::kInformational) {
        return;
      }
    }
    NoteHard(out, Strength::kDescription,
             "test-run rule: description '" + prev +
                 " coverage' (measuring it runs the project's tests)");
    return;
  }
}

// Session 14 (issue 31): the effects the sixth and seventh held-out sets
// let through, each read off the definition's structure. Every one is a
// hard veto (a readOnlyHint does not outrank it).

// The last word of a parameter name that holds a list of steps the call
// performs ("browserCommands", "test_case_steps").
constexpr auto kActionListSuffixes = std::to_array<std::string_view>(
    {"commands", "actions", "steps", "operations", "instructions"});
// Browser or execution words in an action list's description or item keys.
constexpr auto kActingWords = std::to_array<std::string_view>(
    {"click", "clicking", "fill", "filling", "type", "typing", "press",
     "evaluate", "script", "javascript", "execute", "executed", "perform",
     "performed", "interact"});

bool SchemaIsListish(const Json& p, std::string_view pdesc) {
  if (!p.is_object()) return false;
  if (auto t = p.find("type"); t != p.end() && t->is_string()) {
    const std::string ty = t->get<std::string>();
    if (ty == "array") return true;
    if (ty != "string") return false;
    // A list passed as JSON text ("Optional JSON array of browser commands").
    for (const std::string& w : AllWords(pdesc)) {
      if (w == "array" || w == "list") return true;
    }
    return false;
  }
  return p.contains("items");
}

// Rule 1, action lists under any name: a list parameter named "...Commands",
// "..._steps" (a prefix and one of kActionListSuffixes) whose description or
// item schema names acting (click, fill, execute, ...), or any array whose
// item properties are browser actions ({"click": ..., "fill": ...}).
void ActionListNameEvidence(const std::string& key, const Json& p,
                            std::string_view pdesc, ToolLevel& out) {
  const std::vector<std::string> tokens = TokenizeName(key);
  if (tokens.empty() || !SchemaIsListish(p, pdesc)) return;
  std::vector<std::string> words = AllWords(pdesc);
  bool item_acts = false;
  if (auto items = p.find("items"); items != p.end() && items->is_object()) {
    if (auto d = items->find("description");
        d != items->end() && d->is_string()) {
      for (std::string& w : AllWords(d->get<std::string>())) {
        words.push_back(std::move(w));
      }
    }
    if (auto ip = items->find("properties");
        ip != items->end() && ip->is_object()) {
      for (auto it = ip->begin(); it != ip->end(); ++it) {
        const std::string k = Normalized(TokenizeName(it.key()));
        if (k == "click" || k == "fill" || k == "press" || k == "evaluate" ||
            k == "script" || k == "javascript") {
          item_acts = true;
        }
      }
    }
  }
  if (item_acts) {
    NoteHard(
        out, Strength::kSchema,
        "action-list rule: the items of '" + key + "' are browser actions");
    return;
  }
  if (tokens.size() < 2 || !In(kActionListSuffixes, tokens.back())) return;
  for (const std::string& w : words) {
    if (In(kActingWords, w)) {
      NoteHard(out, Strength::kSchema,
               "action-list rule: '" + key + "' is a list of " + tokens.back() +
                   " the call performs ('" + w + "')");
      return;
    }
  }
}

// Rule 2, payments and storage destinations: a parameter carrying a payment
// ("payment_tx", "proof_of_payment", a transaction paying a fee) or a remote
// place the result is stored ("s3_bucket", "s3_key", "upload_url").
// Not: a payment method or status used as a filter ("payment_status",
// "payment_intent" on list_disputes), a bucket a read names ("bucket_name").
void PaymentStorageEvidence(const std::string& key,
                            const std::vector<std::string>& tokens,
                            std::string_view pdesc, ToolLevel& out) {
  auto has = [&](std::string_view w) {
    return std::find(tokens.begin(), tokens.end(), w) != tokens.end();
  };
  const std::vector<std::string> words = AllWords(pdesc);
  auto says = [&](std::string_view w) {
    return std::find(words.begin(), words.end(), w) != words.end();
  };
  if (has("payment") && (has("tx") || has("transaction") || has("proof"))) {
    NoteHard(out, Strength::kSchema,
             "payment rule: parameter '" + key + "' carries a payment");
    return;
  }
  if ((has("tx") || has("transaction")) && says("fee") &&
      (says("transaction") || says("payment") || says("paid"))) {
    NoteHard(
        out, Strength::kSchema,
        "payment rule: parameter '" + key + "' is a transaction paying a fee");
    return;
  }
  if ((has("s3") && (has("bucket") || has("key"))) ||
      (has("upload") && has("url"))) {
    NoteHard(out, Strength::kSchema,
             "storage-destination rule: parameter '" + key +
                 "' names where the result is "
                 "stored");
  }
}

// Rule 3, one-time secrets: a verify/confirm/activate/redeem call that takes
// a one-time code consumes it (verifying the emailed code activates the
// account). A parameter named "code" that holds source code (its
// description says so) is no secret; "validate" is a check, not a
// redemption (shopify's validate(code) reads).
bool ConsumesOneTimeSecret(const ToolLevel& t,
                           const std::vector<std::string>& tokens,
                           std::string_view pdesc) {
  static constexpr auto kRedeemVerbs = std::to_array<std::string_view>(
      {"verify", "confirm", "activate", "redeem"});
  static constexpr auto kSecretNames = std::to_array<std::string_view>(
      {"code", "otp", "pin", "totp", "verificationcode", "confirmationcode",
       "activationcode", "otpcode", "mfacode", "authcode", "oauthcode",
       "authorizationcode"});
  static constexpr auto kSourceCues = std::to_array<std::string_view>(
      {"source", "snippet", "program", "language", "function", "script"});
  bool verb = false;
  for (const std::string& w : t.name_tokens) verb = verb || In(kRedeemVerbs, w);
  if (!verb || !In(kSecretNames, Normalized(tokens))) return false;
  return !ContainsCue(pdesc, kSourceCues);
}

// Rule 3b: a call whose output is a fresh challenge or nonce (its name's
// object and its description say so) issues a new one per call.
bool IssuesChallenge(const ToolInfo& tool, const ToolLevel& t) {
  bool named = false;
  for (const std::string& w : t.name_tokens) {
    named = named || w == "challenge" || w == "nonce";
  }
  if (!named) return false;
  // A challenge to sign or verify with (trust_challenge: "Get a verification
  // challenge ... must be signed"), not a puzzle (leetcode's
  // get_daily_challenge, a fresh5 read: "the daily challenge" problem).
  bool said = false, crypto = false;
  for (const std::string& w : AllWords(tool.description)) {
    said = said || w == "challenge" || w == "nonce";
    crypto = crypto || w == "sign" || w == "signed" || w == "signature" ||
             w == "verification" || w == "authenticate" ||
             w == "authentication";
  }
  return said && crypto;
}

// Rule 4, stateful conversations and shared browser pages: the description
// tells the caller to pass a returned conversation/thread/session id back
// (each call starts or continues that thread). The second half, a name
// whose verb moves a browser page to a url, reads one parameter
// (SharedPageEvidence, below).
void SessionEvidence(const ToolInfo& tool, ToolLevel& out) {
  const std::vector<std::string> words = AllWords(tool.description);
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    const bool pass = words[i] == "pass" || words[i] == "passing";
    if (!pass) continue;
    for (size_t j = i + 1; j < std::min(words.size(), i + 5); ++j) {
      if (words[j] == "returned" || words[j] == "back") {
        for (size_t k = i + 1; k < std::min(words.size(), i + 6); ++k) {
          const std::string& w = words[k];
          if (w.find("conversation") != std::string::npos ||
              w.find("thread") != std::string::npos ||
              w.find("session") != std::string::npos) {
            NoteHard(out, Strength::kDescription,
                     "session rule: the call returns a " + w +
                         " that later calls continue (stateful)");
            return;
          }
        }
      }
    }
  }
}

// Rule 6, a submission stated anywhere: a sentence in which the call itself
// submits, uploads or publishes something to a destination ("Computes
// sequential hash chains ..., submits to the Beats service for a signed
// receipt"; "Uploads local commits to the remote branch"). Only the
// third-person verb followed by "to" within two words counts: "the files
// users uploaded to the bucket" describes stored data (a read). Every such
// sentence in the seen sets is on a write (7 tools).
void SubmissionEvidence(std::string_view text, ToolLevel& out) {
  const std::vector<std::string> words = AllWords(text);
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w != "submits" && w != "uploads" && w != "publishes") continue;
    for (size_t j = i + 1; j < std::min(words.size(), i + 4); ++j) {
      if (words[j] == "to") {
        NoteHard(out, Strength::kDescription,
                 "submission rule: the description says the call '" + w +
                     "' to a destination");
        return;
      }
    }
  }
}

// Rule 4's second half: a name whose verb moves the server's browser page
// ("visit_page", "navigate_page") and a parameter naming a url.
// fetch_url-style reads move no shared page and keep their verdicts.
void SharedPageEvidence(const std::string& key,
                        const std::vector<std::string>& tokens,
                        ToolLevel& out) {
  if (out.name_tokens.empty()) return;
  const std::string& v = out.name_tokens.front();
  if (v != "visit" && v != "navigate" && v != "goto") return;
  if (tokens.empty() || (tokens.back() != "url" && tokens.back() != "uri")) {
    return;
  }
  NoteHard(out, Strength::kSchema,
           "session rule: '" + v + "' with a url ('" + key +
               "') moves the server's browser page (stateful)");
}

void Session14ParamEvidence(const std::string& key,
                            const std::vector<std::string>& tokens,
                            const Json& value, std::string_view pdesc,
                            ToolLevel& out) {
  if (!kSession14Rules) return;
  SharedPageEvidence(key, tokens, out);
  if (!value.is_object()) return;
  ActionListNameEvidence(key, value, pdesc, out);
  PaymentStorageEvidence(key, tokens, pdesc, out);
  if (ConsumesOneTimeSecret(out, tokens, pdesc)) {
    NoteHard(out, Strength::kSchema,
             "verification rule: parameter '" + key +
                 "' is a one-time secret the call consumes");
  }
}

// The rules that read the tool's own text (the per-parameter ones run in
// SchemaFeatures' walk, Session14ParamEvidence).
void Session14Evidence(const ToolInfo& tool, ToolLevel& t) {
  if (!kSession14Rules) return;
  SubmissionEvidence(tool.description, t);
  if (IssuesChallenge(tool, t)) {
    NoteHard(t, Strength::kDescription,
             "verification rule: the call issues a fresh challenge");
  }
  SessionEvidence(tool, t);
}

// Session 15: the writes fresh8 let through, each read off the definition's
// structure (what the call acts on, where it puts its output). Both are hard
// vetoes (a readOnlyHint does not outrank them).

// Words of a name that make a call on a page element or a screen point a
// read: it returns what it finds there (get_element_text, query_selector,
// find_element, take_screenshot, browser_snapshot, wait_for_selector,
// is_visible, verify_element_visible, describe_point, resolve_uid_...).
constexpr auto kElementReadWords = std::to_array<std::string_view>(
    {"get",    "read",       "query",       "find",     "list",      "search",
     "fetch",  "inspect",    "describe",    "resolve",  "wait",      "is",
     "has",    "screenshot", "screenshots", "snapshot", "snapshots", "locate",
     "count",  "exists",     "verify",      "assert",   "expect",    "extract",
     "scrape", "crawl",      "view",        "show",     "capture",   "measure",
     "observe"});
// What a selector or reference names on a page: an element or a control.
constexpr auto kElementWords = std::to_array<std::string_view>(
    {"element", "elements", "checkbox", "radio", "button", "input", "field",
     "dropdown", "link", "textarea", "control"});
// Where an element reference comes from: the page, its snapshot, the DOM.
constexpr auto kPageWords = std::to_array<std::string_view>(
    {"page", "snapshot", "screen", "dom", "webview", "window", "viewport"});

// Rule 1's per-parameter half: a parameter that targets an element or a
// screen point. A selector (a name ending in selector/xpath/locator) whose
// description names an element ("Selector for the checkbox/radio
// element"); a reference (uid, ref, element, target, elementRef, ...) whose
// description names an element of a page or snapshot ("The uid of an
// element on the page from the page content snapshot"); numeric x and y; a
// parameter described as "<what> to <the name's verb>" ("Text to tap" on
// tap_text). Not targets: kubectl's labelSelector ("Filter resources by
// label selector"), spider's root_selector ("Root CSS query selector for
// content extraction": no element named), a dashboard uid, postman's
// elementId (no page), latitude/longitude.
void ElementTargetParam(const std::string& key,
                        const std::vector<std::string>& tokens,
                        const Json& value, std::string_view pdesc,
                        ToolLevel& out) {
  if (tokens.empty() || !value.is_object()) return;
  const std::string norm = Normalized(tokens);
  if (auto t = value.find("type"); t != value.end() && t->is_string()) {
    const std::string ty = t->get<std::string>();
    if (norm == "x" && (ty == "number" || ty == "integer")) out.param_x = true;
    if (norm == "y" && (ty == "number" || ty == "integer")) out.param_y = true;
    // x, y and z (or a zoom) address a map tile or a 3-D point, not a
    // point on a screen.
    if ((norm == "z" || norm == "zoom") &&
        (ty == "number" || ty == "integer")) {
      out.param_z = true;
    }
  }
  const std::vector<std::string> words = AllWords(pdesc);
  auto says = [&](const auto& list) {
    for (const std::string& w : words) {
      if (In(list, w)) return true;
    }
    return false;
  };
  const std::string& last = tokens.back();
  const bool selector =
      last == "selector" || last == "xpath" || last == "locator";
  const bool reference = last == "uid" || last == "ref" || last == "element" ||
                         norm == "target" || norm == "elementid" ||
                         norm == "elementuid";
  if ((selector && says(kElementWords)) ||
      (reference && says(kElementWords) && says(kPageWords))) {
    if (out.element_target.empty()) {
      out.element_target = "'" + key + "' targets a page element";
    }
    return;
  }
  // "Text to tap" on tap_text: the name is the verb and this parameter, and
  // the parameter is the object of that verb. (browserbase's
  // stagehand_observe, a heldout2 read, has an `instruction` "for what
  // specific elements ... to observe on the web page": not in its name.)
  if (std::find(out.name_tokens.begin(), out.name_tokens.end(), norm) ==
      out.name_tokens.end()) {
    return;
  }
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] != "to" || i == 0) continue;
    const std::string& v = words[i + 1];
    if (In(kElementReadWords, v)) continue;
    for (const std::string& n : out.name_tokens) {
      if (n == v && out.element_target.empty()) {
        out.element_target =
            "'" + key + "' is what the call's verb '" + v + "' acts on";
      }
    }
  }
}

// Rule 1: a call that targets an element or a screen point and whose name
// does not say it reads (kElementReadWords) acts on the page or device:
// browser_check ("Check a checkbox or radio button", selector), tap_text
// ("Tap on the text found on the screen", text "Text to tap"), tap(x, y).
// "check" reads elsewhere (check_app_status has no target). A name with
// "to <verb>" as its target must also say where: the description names
// the screen or page.
void ElementInteractionEvidence(const ToolInfo& tool, ToolLevel& t) {
  if (!kSession15Rules) return;
  std::string target = t.element_target;
  if (target.empty() && t.param_x && t.param_y && !t.param_z) {
    target = "'x' and 'y' target a screen point";
  }
  if (target.empty()) return;
  // A read word after a preposition is an object, not the verb
  // ("scroll_into_view" scrolls).
  for (size_t i = 0; i < t.name_tokens.size(); ++i) {
    if (!In(kElementReadWords, t.name_tokens[i])) continue;
    if (i > 0 &&
        (t.name_tokens[i - 1] == "into" || t.name_tokens[i - 1] == "to" ||
         t.name_tokens[i - 1] == "in")) {
      continue;
    }
    return;
  }
  if (target.find("acts on") != std::string::npos) {
    // "on the screen", "on screen", "on the page", "on an element"; not a
    // page the call only names ("Summarize a web page").
    const std::vector<std::string> words = AllWords(tool.description);
    bool where = false;
    for (size_t i = 0; i + 1 < words.size() && !where; ++i) {
      if (words[i] != "on") continue;
      size_t j = i + 1;
      if (j + 1 < words.size() &&
          (words[j] == "the" || words[j] == "a" || words[j] == "an")) {
        ++j;
      }
      where =
          words[j] == "screen" || words[j] == "page" || words[j] == "element";
    }
    if (!where) return;
  }
  NoteHard(t, Strength::kSchema,
           "element-interaction rule: " + target +
               " and the name says no read (it acts on the page or device)");
}

// Rule 2: a side output into a local folder. A path or folder parameter
// (a name ending in path/dir/directory/folder) named for output ("outDir",
// "targetDir"), or described as the place the call puts files ("a folder
// ... where the images are placed", "directory to put the assets in").
// The existing file-output rule already takes output/save/download/export
// names and save/write descriptions. Stay reads: a path the call reads or
// lists ("Path to the file to read", "Directory to list"), a folder
// "where the logs are stored" (stored data, not a destination), a JSONPath
// "to extract specific data".
void SideOutputParam(const std::string& key,
                     const std::vector<std::string>& tokens, const Json& value,
                     std::string_view pdesc, ToolLevel& out) {
  if (!kSession15Rules || tokens.empty() || !value.is_object()) return;
  if (auto ty = value.find("type");
      ty != value.end() && (!ty->is_string() || *ty != "string")) {
    return;
  }
  const std::string& last = tokens.back();
  const bool dir = last == "dir" || last == "directory" || last == "folder";
  if (!dir && last != "path") return;
  if (Normalized(tokens) == "jsonpath") return;
  const bool out_named = (tokens.size() >= 2 && tokens[0] == "out") ||
                         (dir && std::find(tokens.begin(), tokens.end(),
                                           "target") != tokens.end());
  static constexpr auto kPutParticiples = std::to_array<std::string_view>(
      {"placed", "put", "saved", "written", "downloaded", "exported"});
  static constexpr auto kPutVerbs = std::to_array<std::string_view>(
      {"place", "put", "save", "write", "download", "export"});
  const std::vector<std::string> words = AllWords(pdesc);
  std::string cue;
  for (size_t i = 0; i < words.size() && cue.empty(); ++i) {
    if (words[i] == "where") {
      for (size_t j = i + 1; j < std::min(words.size(), i + 7); ++j) {
        if (In(kPutParticiples, words[j])) {
          cue = "where ... " + words[j];
          break;
        }
      }
    } else if (words[i] == "to" && i + 1 < words.size() &&
               In(kPutVerbs, words[i + 1])) {
      cue = "to " + words[i + 1];
    }
  }
  if (!out_named && cue.empty()) return;
  NoteHard(out, Strength::kSchema,
           "side-output rule: parameter '" + key + "' is a local " +
               (out_named ? std::string("output folder (its name)")
                          : "destination ('" + cue + "')"));
}

// Session 15, second round: the writes bfcl_live let through (seen since
// its one measurement), each read off what the call acts on or who it
// talks to. Rules 1 and 2 are hard vetoes; rule 3 is in AddedActionEvidence
// ("This function also logs ..."), rule 4 in ActingClauseEvidence.

// Who a call can put something in front of: a person or the console.
constexpr auto kPersonWords = std::to_array<std::string_view>(
    {"user", "users", "person", "human", "operator"});
constexpr auto kConsoleWords =
    std::to_array<std::string_view>({"console", "terminal", "stdout", "user",
                                     "users", "person", "human", "operator"});

// Session 15b rule 1 (people): a call that interacts with a person. The call
// itself asks or prompts the user ("This function prompts the user with a
// question and returns their response": the answer is the person's, not
// data), or puts something before the user or the console ("This function
// prints a provided message to the console"); or a parameter is what it
// puts there (SimpleQuestion.ask's question, "The question posed to the
// user"). The call is the subject: in the description's first sentence a
// third-person verb (prompts, asks, prints, displays, shows, presents), or
// the opening word in base form ("Ask the user to confirm ..."); in a
// parameter, a participle (posed, presented, shown, displayed, printed).
// Not: an instruction to the assistant anywhere in the text ("If the
// project is not given, ask the user", "present the results to the user":
// MCP descriptions say this on 28 seen reads), text an assistant is told
// to show ("should be shown to the user"), something returned for a user
// ("Generates a greeting message for a user"), a question put to a model
// or a repository ("Ask any question about a GitHub repository").
std::string PersonCue(std::string_view text, bool parameter) {
  static constexpr auto kAskVerbs =
      std::to_array<std::string_view>({"prompts", "asks", "reprompts"});
  static constexpr auto kAskOpeners =
      std::to_array<std::string_view>({"prompt", "ask"});
  static constexpr auto kShowVerbs = std::to_array<std::string_view>(
      {"prints", "displays", "shows", "presents", "outputs"});
  static constexpr auto kShowOpeners =
      std::to_array<std::string_view>({"print", "display", "show", "present"});
  static constexpr auto kShownParticiples = std::to_array<std::string_view>(
      {"presented", "posed", "shown", "displayed", "printed"});
  static constexpr auto kModals = std::to_array<std::string_view>(
      {"be", "should", "can", "could", "may", "must", "will", "would", "you",
       "is", "are", "being", "been", "was", "were", "to"});
  const std::vector<std::string> words =
      parameter ? AllWords(text) : FirstSentenceWords(text);
  for (size_t i = 0; i < words.size(); ++i) {
    // After a modal or "to" the assistant is told what to do; after a
    // determiner the word is a noun ("the prompts users saved").
    static constexpr auto kDeterminers = std::to_array<std::string_view>(
        {"the", "a", "an", "your", "my", "our", "their", "its", "all", "any",
         "these", "those", "this", "of"});
    if (i > 0 && (IsNegation(words[i - 1]) || In(kModals, words[i - 1]) ||
                  In(kDeterminers, words[i - 1]))) {
      continue;
    }
    const std::string& w = words[i];
    const bool ask =
        !parameter && (In(kAskVerbs, w) || (i == 0 && In(kAskOpeners, w)));
    const bool show =
        parameter ? In(kShownParticiples, w)
                  : In(kShowVerbs, w) || (i == 0 && In(kShowOpeners, w));
    if (ask) {
      // "prompts the user", "asks the user"; not "the prompts users saved".
      size_t j = i + 1;
      if (j < words.size() && words[j] == "the") ++j;
      if (j < words.size() && In(kPersonWords, words[j])) {
        return "'" + w + " the " + words[j] + "'";
      }
    }
    if (!show) continue;
    for (size_t k = i + 1; k + 1 < words.size() && k <= i + 6; ++k) {
      if (words[k] != "to") continue;
      size_t m = k + 1;
      if (m < words.size() && words[m] == "the") ++m;
      if (m < words.size() && In(kConsoleWords, words[m])) {
        return "'" + w + " ... to the " + words[m] + "'";
      }
      break;
    }
  }
  return "";
}

void PersonInteractionEvidence(const ToolInfo& tool, ToolLevel& t) {
  if (!kSession15bRules) return;
  std::string where = "the description";
  std::string cue = PersonCue(tool.description, /*parameter=*/false);
  if (cue.empty() && !t.person_cue.empty()) {
    cue = t.person_cue;
    where = "a parameter";
  }
  if (cue.empty()) return;
  NoteHard(t, Strength::kSchema,
           "person rule: " + where + " says " + cue +
               " (the call interacts with a person or the console)");
}

// Session 15b rule 2 (stated effect first): the description opens with what the
// call does, and that verb books something or moves the viewer; it outranks a
// reading name verb (RideSharing_2_GetRide "Book a cab to travel to ...";
// look "Adjust the viewing angle of the camera ..."; look_at "Orients the
// view to focus on a 3D coordinate"). The opener must be the first word,
// in base or -s form, followed by a determiner (a verb, not a noun: "Book
// details for an ISBN", "Order status of ..." stay reads); a view verb
// needs the viewer as its object (view, camera, viewpoint, angle,
// perspective). Not: "Get available rides for booking", "Retrieve ... to
// book", "Look up a word" (up is not a determiner), "Rotate an image by
// 90 degrees" (an image the call returns, not the viewer).
void OpeningEffectEvidence(const ToolInfo& tool, ToolLevel& t) {
  if (!kSession15bRules) return;
  static constexpr auto kBookVerbs = std::to_array<std::string_view>(
      {"book", "reserve", "order", "rent", "hire", "buy"});
  static constexpr auto kViewVerbs = std::to_array<std::string_view>(
      {"adjust", "orient", "rotate", "turn", "point", "pan", "tilt", "aim",
       "move", "focus", "set", "change"});
  static constexpr auto kViewerWords = std::to_array<std::string_view>(
      {"view", "camera", "viewpoint", "viewing", "perspective", "gaze"});
  const std::vector<std::string> words = FirstSentenceWords(tool.description);
  if (words.size() < 3) return;
  std::string base = words[0];
  if (!In(kBookVerbs, base) && !In(kViewVerbs, base)) {
    for (std::string_view suffix : {"es", "s"}) {
      if (base.size() > suffix.size() + 2 &&
          base.compare(base.size() - suffix.size(), suffix.size(), suffix) ==
              0) {
        const std::string stem = base.substr(0, base.size() - suffix.size());
        if (In(kBookVerbs, stem) || In(kViewVerbs, stem)) {
          base = stem;
          break;
        }
      }
    }
  }
  const std::string& d = words[1];
  if (d != "a" && d != "an" && d != "the" && d != "one" && d != "your") return;
  if (In(kBookVerbs, base)) {
    NoteHard(t, Strength::kSchema,
             "stated-effect rule: the description opens with '" + words[0] +
                 " " + d + " " + words[2] +
                 "' (it books or orders, whatever the name's verb)");
    return;
  }
  if (!In(kViewVerbs, base)) return;
  for (size_t i = 2; i < words.size() && i <= 6; ++i) {
    if (In(kViewerWords, words[i])) {
      NoteHard(t, Strength::kSchema,
               "stated-effect rule: the description opens with '" + words[0] +
                   " " + d + " ... " + words[i] +
                   "' (it moves the viewer: scene or camera state)");
      return;
    }
    if (In(kPhraseStops, words[i])) return;
  }
}

void Session15ParamEvidence(const std::string& key,
                            const std::vector<std::string>& tokens,
                            const Json& value, std::string_view pdesc,
                            ToolLevel& out) {
  if (kSession15bRules && out.person_cue.empty()) {
    const std::string cue = PersonCue(pdesc, /*parameter=*/true);
    if (!cue.empty()) out.person_cue = cue + " ('" + key + "')";
  }
  if (kSession15cRules) {
    for (const std::string& tk : tokens) {
      if (out.credential_param.empty() &&
          (tk == "password" || tk == "passwd" || tk == "passphrase" ||
           tk == "secret")) {
        out.credential_param = key;
      }
      if (out.session_param.empty() &&
          (tk == "remember" || tk == "attempts" || tk == "attempt" ||
           tk == "session" || tk == "logged" || tk == "signed")) {
        out.session_param = key;
      }
    }
  }
  if (!kSession15Rules) return;
  ElementTargetParam(key, tokens, value, pdesc, out);
}

// Session 15c rule 1 (which verb decides): the main verbs of the
// description's first sentence, read by position, not by word: the opening
// word (base or -s form), the verb after a leading subject ("This function
// searches", "It returns") or after "A function/tool to" ("A function to
// manage ..."), and verbs coordinated with it in the same form ("searches
// ... and plays"). Participles never count ("a provided query", "tickets
// booked by", "rides for booking"), and a verb after a purpose clause
// ("to <verb>", "for <verb>ing", "in order to") belongs to the purpose, not
// to the call. An acting main verb (a command verb, or "play") makes the
// call a write whatever the name's verb (Trains_1_GetTrainTickets "Reserve
// tickets ..."; play_spotify_song "This function searches ... and plays the
// selected track"); a dispatch main verb ("manage") whose sentence lists
// acting -ing forms ("including adding ..., deleting ...") too
// (todo.list_action). Vetoes INFORMATIONAL.
bool MainVerbForm(const std::string& w, bool third_person) {
  if (w.size() < 3) return false;
  auto ends = [&](std::string_view suf) {
    return w.size() > suf.size() &&
           w.compare(w.size() - suf.size(), suf.size(), suf) == 0;
  };
  if (ends("ing") || ends("ed")) return false;
  return third_person == ends("s");
}

bool ActingVerb(const std::string& w) {
  // Execution verbs are the text rules' (with their "run an audit" reads).
  if (!VetoBase(w, IsExecutionVerb, /*third_person=*/true).empty()) {
    return false;
  }
  if (ClassifyVerb(w, /*inflected=*/true) == VerbClass::kCommand) return true;
  return w == "play" || w == "plays";
}

void MainVerbEvidence(const ToolInfo& tool, ToolLevel& t) {
  // Only where a reading verb would decide: a call already a write keeps
  // its own evidence (and its strength against annotations).
  if (!kSession15cRules || t.veto.strength != Strength::kNone ||
      t.informational.strength == Strength::kNone ||
      t.command.strength >= t.informational.strength) {
    return;
  }
  std::vector<std::string> words = FirstSentenceWords(tool.description);
  CutAtExample(words);
  if (words.size() < 2) return;
  static constexpr auto kSubjectNouns = std::to_array<std::string_view>(
      {"function", "tool", "method", "endpoint", "api", "call", "service"});
  size_t head = words.size();
  bool third = false;
  if ((words[0] == "this" || words[0] == "the" || words[0] == "a" ||
       words[0] == "an") &&
      words.size() > 3 && In(kSubjectNouns, words[1])) {
    if (words[2] == "to" && MainVerbForm(words[3], false)) {
      head = 3;
    } else if (MainVerbForm(words[2], true)) {
      head = 2;
      third = true;
    }
  } else if (words[0] == "it" && MainVerbForm(words[1], true)) {
    head = 1;
    third = true;
  } else if (ClassifyVerb(words[0], /*inflected=*/true) != VerbClass::kNone ||
             IsAmbiguous(words[0]) || ActingVerb(words[0])) {
    if (MainVerbForm(words[0], false)) {
      head = 0;
    } else if (MainVerbForm(words[0], true)) {
      head = 0;
      third = true;
    }
  }
  if (head == words.size()) return;
  // A verb that is as often a noun opens a noun phrase unless an object
  // follows ("Book details for an ISBN" vs "Book a table").
  static constexpr auto kObjectStarts = std::to_array<std::string_view>(
      {"a", "an", "the", "it", "them", "this", "that", "its", "their", "your",
       "all", "any", "one"});
  if (head == 0 && IsNounLike(words[0]) && !In(kObjectStarts, words[1])) {
    return;
  }
  auto known = [&](const std::string& w) {
    return ClassifyVerb(w, /*inflected=*/true) != VerbClass::kNone ||
           IsAmbiguous(w) || ActingVerb(w);
  };
  if (!known(words[head])) return;
  std::vector<size_t> mains = {head};
  for (size_t j = head + 1; j + 1 < words.size(); ++j) {
    const std::string& w = words[j];
    const std::string& n = words[j + 1];
    // A purpose clause: what follows is what the result is for.
    if ((w == "to" && MainVerbForm(n, false) && known(n)) ||
        (w == "for" && n.size() > 4 &&
         n.compare(n.size() - 3, 3, "ing") == 0) ||
        (w == "order" && n == "to")) {
      break;
    }
    // A verb form after "and" is as often a noun ("phone number and email
    // address", "assignments, and updates on issues"): it counts only
    // before an object ("and plays the selected track").
    const bool object_follows =
        j + 2 < words.size() && In(kObjectStarts, words[j + 2]);
    if ((w == "and" || w == "then") && MainVerbForm(n, third) && known(n) &&
        object_follows && !IsNegation(words[j - 1])) {
      mains.push_back(j + 1);
    }
  }
  for (size_t i : mains) {
    if (!ActingVerb(words[i])) continue;
    Note(t.veto, Strength::kDescription,
         "main-verb rule: the description's first sentence says '" + words[i] +
             "'" +
             (i == head ? ""
                        : " (a main verb after '" + words[head] + " ...')") +
             " (it acts, whatever the name's verb)");
    return;
  }
  if (BaseVerb(words[head]) != VerbClass::kDispatch &&
      ClassifyVerb(words[head], /*inflected=*/true) != VerbClass::kDispatch) {
    return;
  }
  for (size_t i = head + 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.size() > 5 && w.compare(w.size() - 3, 3, "ing") == 0 &&
        ActingVerb(w)) {
      Note(t.veto, Strength::kDescription,
           "main-verb rule: the description's first sentence says '" +
               words[head] + " ... " + w +
               "' (it manages by acting, whatever the name's verb)");
      return;
    }
  }
}

// Session 15c rule 2 (credentials kept with a session): a call that takes a
// password or secret together with a parameter that keeps the session or
// counts attempts (remember_me, login_attempts) logs a user in: it keeps a
// session and counts failures, a write whatever its verb
// (user_authentication.validate/verify). A credential check without such a
// parameter (validate_api_key: yes or no) is left to the other rules.
void CredentialSessionEvidence(ToolLevel& t) {
  if (!kSession15cRules || t.credential_param.empty() ||
      t.session_param.empty() || t.veto.strength != Strength::kNone ||
      t.command.strength >= t.informational.strength) {
    return;
  }
  Note(t.veto, Strength::kSchema,
       "credential-session rule: parameters '" + t.credential_param +
           "' and '" + t.session_param +
           "' (a login that keeps a session or counts attempts)");
}

ToolLevel AnalyzeTool(const ToolInfo& tool) {
  ToolLevel t;
  t.name_tokens = TokenizeName(tool.name);
  // Namespaced names ("grocery_store.find_nearby", "srv__get_x",
  // "hosting_listPluginsV1"): the verb is sought in the function part first.
  size_t cut = 0;
  for (std::string_view sep : {"__", ".", "/", ":"}) {
    const size_t p = tool.name.rfind(sep);
    if (p != std::string::npos) cut = std::max(cut, p + sep.size());
  }
  cut = std::max(cut, CamelPhraseStartImpl(tool.name));
  const std::vector<std::string> function_part =
      TokenizeName(std::string_view(tool.name).substr(cut));
  if (cut > 0) NameVerbs(function_part, t);
  if (t.command.strength == Strength::kNone &&
      t.informational.strength == Strength::kNone && !t.dispatch &&
      t.ambiguous.empty()) {
    NameVerbs(t.name_tokens, t);
  }
  SchemaFeatures(tool.input_schema_json, tool.title + " " + tool.description,
                 t);
  TransformedRecord(tool, t);
  RemoteCheck(tool, function_part, t);
  TextEvidence(tool.title, Strength::kTitle, "title", t);
  TextEvidence(tool.description, Strength::kDescription, "description", t);
  AsyncJobEvidence(tool.description, t);
  AddedActionEvidence(tool.description, t);
  StatedPurposeEvidence(tool.description, t);
  OperationListEvidence(tool.description, t);
  TestRunEvidence(tool.description, t);
  ReadEvidence(tool, t);
  Session14Evidence(tool, t);
  ElementInteractionEvidence(tool, t);
  PersonInteractionEvidence(tool, t);
  OpeningEffectEvidence(tool, t);
  ActingClauseEvidence(tool, t);
  MainVerbEvidence(tool, t);
  CredentialSessionEvidence(t);
  return t;
}

struct TtlEvidence {
  TtlCategory category = TtlCategory::kNone;
  std::string why;
  // The call waits for an event (kWaitTextWords): never cached.
  bool waits = false;
};

// A real-time name word, or the plural of one ("balances", "incidents").
std::string LiveNameWord(const std::string& t) {
  if (In(kRealtimeWords, t)) return t;
  for (std::string_view suffix : {"es", "s"}) {
    if (t.size() > suffix.size() + 2 &&
        t.substr(t.size() - suffix.size()) == suffix &&
        In(kRealtimeWords, t.substr(0, t.size() - suffix.size()))) {
      return t.substr(0, t.size() - suffix.size());
    }
  }
  return "";
}

// Context words that make a "history" immutable (a commit log, a release
// list) or live (the change history of an object that keeps changing).
constexpr auto kImmutableHistoryWords = std::to_array<std::string_view>({
    "commit",
    "commits",
    "git",
    "blame",
    "version",
    "versions",
    "revision",
    "revisions",
    "release",
    "releases",
    "tag",
    "tags",
    "changelog",
});
constexpr auto kChangeWords = std::to_array<std::string_view>({
    "change",
    "changes",
    "activity",
    "edit",
    "edits",
    "update",
    "updates",
    "action",
    "actions",
    "status",
});
// Systems whose statistics change with every write: "stats" of one of them
// ("db_stats", "describe-index-stats", "Get queue statistics") measure live
// state; "player_stats" or "calculate_stats" do not say so.
constexpr auto kLiveSystemNouns = std::to_array<std::string_view>({
    "index",      "indexes",     "indices", "db",     "database", "databases",
    "collection", "collections", "queue",   "queues", "cluster",  "server",
    "instance",   "table",       "tables",  "cache",  "bucket",   "namespace",
    "namespaces", "storage",     "disk",
});

// The TTL class from evidence (issue 18: not from one word alone):
// 1. real-time: a live word (or its plural) in the name; or one in the
//    first sentence of the title/description; or two different live words
//    anywhere in the description ("... logs have been truncated. Only
//    showing the most recent entries");
// 2. "history": static only with an immutable context (commit, version,
//    release, ...); with a change context ("change history", "activity")
//    real-time; with neither, static as before;
// 3. "stats"/"statistics" in the name of a live system (index, database,
//    queue, ... in the name or first sentence) are real-time;
// 4. else computational, then static words of the name.
TtlEvidence TtlOf(const ToolInfo& tool, const std::vector<std::string>& name) {
  for (const std::string& t : name) {
    if (t == "wait" || t == "waits") {
      return {TtlCategory::kRealtime, "'" + t + "' in the name", true};
    }
  }
  // The first sentences' words, read once for both checks below.
  const std::vector<std::string> title_words = FirstSentenceWords(tool.title);
  const std::vector<std::string> description_words =
      FirstSentenceWords(tool.description);
  const std::pair<const std::vector<std::string>*, std::string_view>
      first_sentences[] = {{&title_words, "title"},
                           {&description_words, "description"}};
  for (const auto& [words, where] : first_sentences) {
    for (const std::string& w : *words) {
      if (In(kWaitTextWords, w)) {
        return {
            TtlCategory::kRealtime,
            "'" + w + "' in the first sentence of the " + std::string(where),
            true};
      }
    }
  }
  for (const std::string& t : name) {
    if (const std::string w = LiveNameWord(t); !w.empty()) {
      return {TtlCategory::kRealtime, "real-time word '" + t + "' in the name"};
    }
  }
  std::vector<std::string> context = name;
  for (const auto& [words, where] : first_sentences) {
    for (const std::string& w : *words) {
      if (In(kRealtimeTextWords, w)) {
        return {TtlCategory::kRealtime,
                "real-time word '" + w + "' in the " + std::string(where)};
      }
      context.push_back(w);
    }
  }
  {
    // Beyond the first sentence "status", "active" and "now" mostly name a
    // field or a filter ("filter by status"), so they do not count there;
    // a plural is its singular ("price", "prices": one word).
    std::vector<std::string> live;
    for (std::string w : AllWords(tool.description)) {
      if (w == "status" || w == "active" || w == "now" ||
          !In(kRealtimeTextWords, w)) {
        continue;
      }
      if (w.size() > 3 && w.back() == 's' &&
          In(kRealtimeTextWords, std::string_view(w).substr(0, w.size() - 1))) {
        w.pop_back();
      }
      if (std::find(live.begin(), live.end(), w) == live.end()) {
        live.push_back(w);
      }
      if (live.size() == 2) {
        return {TtlCategory::kRealtime, "real-time words '" + live[0] +
                                            "' and '" + live[1] +
                                            "' in the description"};
      }
    }
  }
  auto in_context = [&](auto& list) -> std::string {
    for (const std::string& w : context) {
      if (In(list, w)) return w;
    }
    return "";
  };
  const bool history =
      std::find(name.begin(), name.end(), "history") != name.end() ||
      std::find(name.begin(), name.end(), "histories") != name.end();
  if (history && in_context(kImmutableHistoryWords).empty()) {
    if (const std::string c = in_context(kChangeWords); !c.empty()) {
      return {TtlCategory::kRealtime,
              "'history' in the name with the change word '" + c +
                  "' (a history that grows with each change)"};
    }
  }
  if (const std::string system = in_context(kLiveSystemNouns);
      !system.empty()) {
    for (const std::string& t : name) {
      if (t == "stats" || t == "statistics") {
        return {TtlCategory::kRealtime, "'" + t + "' of a '" + system +
                                            "' (statistics of a live system)"};
      }
    }
  }
  TtlEvidence best;
  for (const std::string& t : name) {
    if (In(kComputationalWords, t)) {
      best = {TtlCategory::kComputational,
              "computational word '" + t + "' in the name"};
    }
    if (In(kStaticWords, t) && best.category == TtlCategory::kNone) {
      best = {TtlCategory::kStatic, "static word '" + t + "' in the name"};
    }
  }
  return best;
}

class HeuristicExtractor final : public FeatureExtractor {
 public:
  FeatureSource source() const override { return FeatureSource::kHeuristic; }

  std::optional<Features> Extract(
      const ToolInfo& tool, std::string_view arguments_json) const override {
    if (arguments_json.empty()) return Decide(tool, nullptr);
    // The text path (tool-level queries, callers without a parsed form, and
    // arguments the key's canonicalizer refused): one lenient parse.
    CountArgumentParse();
    const Json json =
        Json::parse(arguments_json, nullptr, /*allow_exceptions=*/false);
    CallArguments args;
    args.is_object = json.is_object();
    if (args.is_object) {
      for (auto it = json.begin(); it != json.end(); ++it) {
        args.names.push_back(it.key());
        args.action_values.push_back(
            In(kActionKeys, it.key()) && it.value().is_string()
                ? std::optional<std::string>(it.value().get<std::string>())
                : std::nullopt);
      }
    }
    return Decide(tool, &args);
  }

  // The call path: the members the key's canonicalizer read, in the
  // caller's order ("_meta" included, as the text path sees it).
  std::optional<Features> ExtractCall(
      const ToolInfo& tool, std::string_view arguments_json,
      const CanonicalArguments* parsed) const override {
    if (parsed == nullptr) return Extract(tool, arguments_json);
    CallArguments args;
    args.is_object = true;
    for (const ArgumentMember& m : parsed->members) {
      args.names.push_back(m.name);
      const std::string_view v = parsed->Value(m);
      args.action_values.push_back(
          In(kActionKeys, m.name) && !v.empty() && v.front() == '"'
              ? std::optional<std::string>(DecodeCanonicalString(v))
              : std::nullopt);
    }
    return Decide(tool, &args);
  }

 private:
  // A call's top-level arguments, in the caller's order: the names, and the
  // value of each action-named (kActionKeys) string argument.
  struct CallArguments {
    bool is_object = false;
    std::vector<std::string_view> names;
    std::vector<std::optional<std::string>> action_values;
  };

  // `args`: nullptr for a tool-level query.
  std::optional<Features> Decide(const ToolInfo& tool,
                                 const CallArguments* args) const {
    const ToolLevel t = AnalyzeTool(tool);
    Features f;
    // Tool level. Safety first: execution/mutation evidence vetoes any
    // INFORMATIONAL evidence; otherwise COMMAND evidence wins unless
    // INFORMATIONAL evidence is strictly stronger. Only the name's verb and
    // a schema action enum may overrule a trusted read-only annotation.
    if (t.hard_veto.strength != Strength::kNone) {
      f.request_type = RequestType::kCommand;
      f.detail = t.hard_veto.detail + " (hard veto)";
      f.weak_command = false;
    } else if (t.veto.strength != Strength::kNone) {
      f.request_type = RequestType::kCommand;
      f.detail = t.veto.detail;
      f.weak_command = true;
    } else if (t.command.strength != Strength::kNone &&
               (t.command.strength >= t.informational.strength ||
                t.action_enum_mutates)) {
      f.request_type = RequestType::kCommand;
      f.detail = t.command.detail;
      f.weak_command = t.command.strength < Strength::kSchema;
    } else if (t.informational.strength != Strength::kNone) {
      f.request_type = RequestType::kInformational;
      f.detail = t.informational.detail;
    }
    if (t.schema_category) f.parameter_category = t.schema_category;

    // Call level.
    if (args != nullptr && args->is_object) {
      // Paper-silent: a single-argument call has no category (grouping by
      // its only argument would make every group a single object).
      f.parameter_category = args->names.size() >= 2
                                 ? std::string(args->names.front())
                                 : std::string();
      for (size_t i = 0; i < args->names.size(); ++i) {
        const std::string_view key = args->names[i];
        if (!In(kActionKeys, key) || !args->action_values[i]) continue;
        const std::string& value = *args->action_values[i];
        std::string verb;
        const VerbClass c = ActionVerb(value, &verb);
        const std::string what =
            "action-argument rule: " + std::string(key) + "='" + value + "'";
        if (c == VerbClass::kCommand) {
          f.request_type = RequestType::kCommand;
          f.detail = what;
          f.weak_command = false;
          break;
        }
        // A reading action decides, unless the name itself is a mutating
        // verb ("send_message" with action=read stays COMMAND) or an
        // execution veto stands.
        if (c == VerbClass::kInformational &&
            t.command.strength != Strength::kName &&
            t.veto.strength == Strength::kNone) {
          f.request_type = RequestType::kInformational;
          f.detail = what;
          break;
        }
      }
    }

    const TtlEvidence ttl = TtlOf(tool, t.name_tokens);
    if (ttl.waits) {
      f.ttl_seconds = 0;
      f.ttl_cap = true;
      f.ttl_detail =
          "a call that waits for an event is never cached (" + ttl.why + ")";
      if (!f.detail.empty()) f.detail += "; ";
      f.detail += f.ttl_detail;
    } else if (ttl.category != TtlCategory::kNone) {
      f.ttl_seconds = TtlCategorySeconds(ttl.category);
      // Data that changes by the minute bounds how long an answer may be
      // kept; it is no reason to keep one longer than the operator's
      // default (a `ttlSeconds: 30` stays 30 s).
      f.ttl_cap = ttl.category == TtlCategory::kRealtime;
      f.ttl_detail = "TTL class " + std::string(TtlCategoryName(ttl.category)) +
                     " from " + ttl.why;
      if (!f.detail.empty()) f.detail += "; ";
      f.detail += f.ttl_detail;
    }
    if (!f.request_type && !f.ttl_seconds && !f.parameter_category) {
      return std::nullopt;
    }
    if (!f.request_type) {
      std::string why =
          t.dispatch ? "multi-purpose name verb without an action argument"
          : !t.ambiguous.empty()
              ? "ambiguous name verb '" + t.ambiguous +
                    "' (computes or executes) and no other evidence"
              : "no verb recognized";
      f.detail = f.detail.empty() ? why : why + "; " + f.detail;
    }
    return f;
  }
};

}  // namespace

size_t CamelPhraseStart(std::string_view name) {
  return CamelPhraseStartImpl(name);
}

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
    // "-ies" is always "-y" ("queries", "replies"): "stories" is not a
    // form of "store".
    if (suffix == "ies") {
      const VerbClass c = BaseVerb(stem + "y");
      if (c != VerbClass::kNone) return c;
      continue;
    }
    for (const std::string& candidate :
         {stem, stem + "e",
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
    if (!LiveNameWord(t).empty()) return TtlCategory::kRealtime;
    if (In(kComputationalWords, t)) best = TtlCategory::kComputational;
    if (In(kStaticWords, t) && best == TtlCategory::kNone) {
      best = TtlCategory::kStatic;
    }
  }
  return best;
}

TtlCategory ToolTtlCategory(const ToolInfo& tool) {
  return TtlOf(tool, TokenizeName(tool.name)).category;
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
