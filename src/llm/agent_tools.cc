// Invariants:
// - ClassifyShellCommand says read_only only for a command every word of
//   which was read: a syntax it does not model (subshell, substitution,
//   here-doc, background job, assignment prefix, unbalanced quote) is a
//   write. False "write" costs a would-hit; false "read-only" would let a
//   stale entry live, so every doubt is a write.
// - The tool table is exact-match on the names the agents send (their
//   source / tool lists); a tool of the same name from another client is
//   treated alike (Choice: the names are distinctive; the operator can
//   still serve one by naming it).
// - ClientMarkerOf matches the literal stub prefixes the clients write
//   (Claude Code 2.1: its own `wXt` test; Codex 0.171: its truncation
//   notices), never a regular expression over the whole result.
#include "src/llm/agent_tools.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "toolcache/llm_proxy.h"

namespace toolcache::llm {
namespace {

using ojson = nlohmann::ordered_json;

struct Entry {
  std::string_view name;
  std::string_view agent;
  AgentToolKind kind;
};

// Sources: Claude Code 2.1.328's tool list as sent in /v1/messages (2.1.332
// sends the same; tools not named here are the client's too when the
// request comes from the agent: AgentClient); Codex
// CLI 0.171 (codex-rs/core/src/tools/spec.rs); Gemini CLI and OpenCode
// tool names from their documentation.
constexpr std::array kTools = {
    // Claude Code
    Entry{"Read", "claude-code", AgentToolKind::kRead},
    Entry{"Glob", "claude-code", AgentToolKind::kRead},
    Entry{"Grep", "claude-code", AgentToolKind::kRead},
    Entry{"LS", "claude-code", AgentToolKind::kRead},
    Entry{"NotebookRead", "claude-code", AgentToolKind::kRead},
    Entry{"BashOutput", "claude-code", AgentToolKind::kLocal},
    Entry{"Bash", "claude-code", AgentToolKind::kShell},
    Entry{"Edit", "claude-code", AgentToolKind::kWrite},
    Entry{"MultiEdit", "claude-code", AgentToolKind::kWrite},
    Entry{"Write", "claude-code", AgentToolKind::kWrite},
    Entry{"NotebookEdit", "claude-code", AgentToolKind::kWrite},
    Entry{"KillShell", "claude-code", AgentToolKind::kWrite},
    Entry{"KillBash", "claude-code", AgentToolKind::kWrite},
    Entry{"TodoWrite", "claude-code", AgentToolKind::kLocal},
    Entry{"Task", "claude-code", AgentToolKind::kLocal},
    Entry{"ExitPlanMode", "claude-code", AgentToolKind::kLocal},
    Entry{"SlashCommand", "claude-code", AgentToolKind::kLocal},
    Entry{"Skill", "claude-code", AgentToolKind::kLocal},
    // Codex CLI
    Entry{"shell", "codex", AgentToolKind::kShell},
    Entry{"local_shell", "codex", AgentToolKind::kShell},
    Entry{"exec_command", "codex", AgentToolKind::kShell},
    Entry{"shell_command", "codex", AgentToolKind::kShell},
    Entry{"write_stdin", "codex", AgentToolKind::kWrite},
    Entry{"apply_patch", "codex", AgentToolKind::kWrite},
    Entry{"read_file", "codex", AgentToolKind::kRead},
    Entry{"list_dir", "codex", AgentToolKind::kRead},
    Entry{"grep_files", "codex", AgentToolKind::kRead},
    Entry{"view_image", "codex", AgentToolKind::kRead},
    Entry{"update_plan", "codex", AgentToolKind::kLocal},
    // Gemini CLI
    Entry{"read_many_files", "gemini-cli", AgentToolKind::kRead},
    Entry{"list_directory", "gemini-cli", AgentToolKind::kRead},
    Entry{"search_file_content", "gemini-cli", AgentToolKind::kRead},
    Entry{"glob", "gemini-cli", AgentToolKind::kRead},
    Entry{"write_file", "gemini-cli", AgentToolKind::kWrite},
    Entry{"replace", "gemini-cli", AgentToolKind::kWrite},
    Entry{"run_shell_command", "gemini-cli", AgentToolKind::kShell},
    Entry{"save_memory", "gemini-cli", AgentToolKind::kWrite},
    // OpenCode
    Entry{"read", "opencode", AgentToolKind::kRead},
    Entry{"list", "opencode", AgentToolKind::kRead},
    Entry{"grep", "opencode", AgentToolKind::kRead},
    Entry{"edit", "opencode", AgentToolKind::kWrite},
    Entry{"write", "opencode", AgentToolKind::kWrite},
    Entry{"patch", "opencode", AgentToolKind::kWrite},
    Entry{"bash", "opencode", AgentToolKind::kShell},
    Entry{"todowrite", "opencode", AgentToolKind::kLocal},
    Entry{"todoread", "opencode", AgentToolKind::kLocal},
};

// ------------------------------------------------------------ the lexer

enum class TokKind { kWord, kOp };
struct Tok {
  TokKind kind;
  std::string text;  // the word with quotes removed / the operator
};

// Splits a command line into words and operators. False (with `why`) for
// any syntax the recogniser does not model.
bool Lex(std::string_view s, std::vector<Tok>* out, std::string* why) {
  std::string word;
  bool in_word = false;
  auto flush = [&] {
    if (in_word) out->push_back({TokKind::kWord, word});
    word.clear();
    in_word = false;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\'') {
      const size_t end = s.find('\'', i + 1);
      if (end == std::string_view::npos)
        return *why = "unbalanced quote", false;
      word.append(s.substr(i + 1, end - i - 1));
      in_word = true;
      i = end;
    } else if (c == '"') {
      size_t j = i + 1;
      for (; j < s.size() && s[j] != '"'; ++j) {
        if (s[j] == '`' || (s[j] == '$' && j + 1 < s.size() &&
                            (s[j + 1] == '(' || s[j + 1] == '{'))) {
          return *why = "substitution", false;
        }
        if (s[j] == '\\' && j + 1 < s.size()) ++j;
        word.push_back(s[j]);
      }
      if (j >= s.size()) return *why = "unbalanced quote", false;
      in_word = true;
      i = j;
    } else if (c == '\\') {
      if (i + 1 >= s.size()) return *why = "trailing backslash", false;
      if (s[i + 1] == '\n') {
        ++i;  // line continuation
        continue;
      }
      word.push_back(s[++i]);
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      flush();
    } else if (c == '\n' || c == ';') {
      flush();
      out->push_back({TokKind::kOp, ";"});
    } else if (c == '|' || c == '&') {
      flush();
      if (i + 1 < s.size() && s[i + 1] == c) {
        out->push_back({TokKind::kOp, std::string(2, c)});
        ++i;
      } else if (c == '|') {
        out->push_back({TokKind::kOp, "|"});
      } else if (i + 1 < s.size() && s[i + 1] == '>') {
        // &>file / &>>file: a redirection of both streams.
        out->push_back({TokKind::kOp, "&>"});
        ++i;
        if (i + 1 < s.size() && s[i + 1] == '>') ++i;
      } else {
        return *why = "background job", false;
      }
    } else if (c == '>' || c == '<') {
      // A redirection: the fd digits before it are part of `word`.
      std::string op = in_word ? word : "";
      if (!op.empty() && !std::all_of(op.begin(), op.end(), [](char d) {
            return d >= '0' && d <= '9';
          })) {
        flush();
        op.clear();
      } else {
        word.clear();
        in_word = false;
      }
      op.push_back(c);
      while (i + 1 < s.size() && (s[i + 1] == '>' || s[i + 1] == '<' ||
                                  s[i + 1] == '&' || s[i + 1] == '|')) {
        op.push_back(s[++i]);
      }
      out->push_back({TokKind::kOp, op});
    } else if (c == '(' || c == ')' || c == '{' || c == '}' || c == '`') {
      return *why = "subshell or group", false;
    } else if (c == '$' && i + 1 < s.size() &&
               (s[i + 1] == '(' || s[i + 1] == '{')) {
      return *why = "substitution", false;
    } else if (c == '#' && !in_word) {
      // A comment runs to the end of its line, not of the command: what
      // follows the newline is another command (`cat a # x\nrm -rf b`).
      const size_t nl = s.find('\n', i);
      if (nl == std::string_view::npos) break;
      i = nl - 1;  // the loop's ++i lands on the newline, a separator
    } else {
      word.push_back(c);
      in_word = true;
    }
  }
  flush();
  return true;
}

bool StartsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

bool AnyArg(const std::vector<std::string>& args, auto pred) {
  return std::any_of(args.begin() + 1, args.end(), pred);
}

// True when `arg` spells the long option `name` ("--output") or an
// abbreviation of it at least three characters long ("--ou", "--out=F"):
// GNU getopt and git's option parser accept unambiguous prefixes.
bool SpellsLong(std::string_view arg, std::string_view name) {
  if (!StartsWith(arg, "--")) return false;
  arg = arg.substr(0, arg.find('='));
  return arg.size() >= 3 && StartsWith(name, arg);
}

// True when `arg` is a cluster of short options ("-uo") holding `opt`.
bool ShortCluster(std::string_view arg, char opt) {
  return arg.size() >= 2 && arg[0] == '-' && arg[1] != '-' &&
         arg.find(opt, 1) != std::string_view::npos;
}

// Programs that only read and print (their writing options are checked
// below); everything else is a write.
constexpr std::array kReadOnly = {
    "cat",     "head",     "tail",     "wc",        "ls",       "pwd",
    "echo",    "printf",   "nl",       "file",      "stat",     "du",
    "df",      "tree",     "which",    "whoami",    "uname",    "basename",
    "dirname", "realpath", "readlink", "grep",      "egrep",    "fgrep",
    "rg",      "find",     "sort",     "uniq",      "cut",      "tr",
    "diff",    "cmp",      "comm",     "jq",        "column",   "od",
    "hexdump", "md5sum",   "sha1sum",  "sha256sum", "true",     "test",
    "[",       "cd",       "date",     "id",        "hostname", "fd",
    "git",     "sed",      "type",     "command"};

// One simple command (argv) with the redirections already checked.
ShellVerdict SimpleCommand(const std::vector<std::string>& argv) {
  if (argv.empty()) return {false, "empty command"};
  const std::string& p = argv[0];
  if (p.find('=') != std::string::npos) {
    return {false, "assignment prefix"};
  }
  if (std::find(kReadOnly.begin(), kReadOnly.end(), p) == kReadOnly.end()) {
    return {false, "unknown program '" + p + "'"};
  }
  auto has = [&](std::initializer_list<std::string_view> opts) {
    return AnyArg(argv, [&](const std::string& a) {
      for (std::string_view o : opts) {
        if (a == o ||
            (StartsWith(o, "--") && StartsWith(a, std::string(o) + "="))) {
          return true;
        }
      }
      return false;
    });
  };
  if (p == "find") {
    if (has({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint",
             "-fprint0", "-fprintf", "-fls"})) {
      return {false, "find with an action that runs or writes"};
    }
  } else if (p == "rg") {
    if (has({"--pre"})) return {false, "rg --pre runs a program"};
  } else if (p == "fd") {
    if (has({"-x", "--exec", "-X", "--exec-batch"})) {
      return {false, "fd --exec runs a program"};
    }
  } else if (p == "sort") {
    // -o in any short cluster (-uo F, -oF), --output and its abbreviations,
    // --compress-program (runs a program).
    if (AnyArg(argv, [](const std::string& a) {
          return ShortCluster(a, 'o') || SpellsLong(a, "--output") ||
                 SpellsLong(a, "--compress-program");
        })) {
      return {false, "sort -o writes a file"};
    }
  } else if (p == "tree") {
    if (AnyArg(argv, [](const std::string& a) {
          return ShortCluster(a, 'o') || ShortCluster(a, 'R') ||
                 ShortCluster(a, 'H') || SpellsLong(a, "--output");
        })) {
      return {false, "tree -o/-R/-H writes files"};
    }
  } else if (p == "file") {
    if (AnyArg(argv, [](const std::string& a) {
          return ShortCluster(a, 'C') || SpellsLong(a, "--compile");
        })) {
      return {false, "file -C writes a magic file"};
    }
  } else if (p == "date") {
    // Prints only with no operand but a +FORMAT; -s/--set and an operand
    // set the clock.
    if (AnyArg(argv, [](const std::string& a) {
          return ShortCluster(a, 's') || SpellsLong(a, "--set") ||
                 (!a.empty() && a[0] != '-' && a[0] != '+');
        })) {
      return {false, "date that sets the clock"};
    }
  } else if (p == "hostname") {
    // Any operand or -F/--file sets the name.
    if (AnyArg(argv, [](const std::string& a) {
          return a.empty() || a[0] != '-' || ShortCluster(a, 'F') ||
                 SpellsLong(a, "--file") || SpellsLong(a, "--boot");
        })) {
      return {false, "hostname that sets the name"};
    }
  } else if (p == "command") {
    // `command -v NAME` / `-V` look a name up; `command PROG ...` runs PROG.
    if (argv.size() < 2 || (argv[1] != "-v" && argv[1] != "-V")) {
      return {false, "command runs its argument"};
    }
  } else if (p == "uniq") {
    // `uniq IN OUT` writes OUT.
    int positional = 0;
    for (size_t i = 1; i < argv.size(); ++i) {
      if (argv[i].empty() || argv[i][0] != '-') ++positional;
    }
    if (positional > 1) return {false, "uniq with an output file"};
  } else if (p == "sed") {
    // Only `sed -n` with print-only scripts (`1,200p`, `/re/p`, `$p`).
    bool quiet = false;
    for (size_t i = 1; i < argv.size(); ++i) {
      const std::string& a = argv[i];
      if (a == "-n" || a == "--quiet" || a == "--silent") {
        quiet = true;
      } else if (StartsWith(a, "-")) {
        return {false, "sed option " + a};
      }
    }
    if (!quiet) return {false, "sed without -n"};
    // The first non-option word is the script.
    for (size_t i = 1; i < argv.size(); ++i) {
      const std::string& a = argv[i];
      if (StartsWith(a, "-")) continue;
      for (char ch : a) {
        const bool ok = (ch >= '0' && ch <= '9') || ch == ',' || ch == 'p' ||
                        ch == '$' || ch == ';' || ch == ' ';
        if (!ok) return {false, "sed script not print-only"};
      }
      break;
    }
  } else if (p == "git") {
    size_t i = 1;
    // Global options: -C dir and --no-pager are harmless; -c (config,
    // aliases, pagers) and the rest are not modelled.
    while (i < argv.size() && StartsWith(argv[i], "-")) {
      if (argv[i] == "-C" && i + 1 < argv.size()) {
        i += 2;
      } else if (argv[i] == "--no-pager") {
        ++i;
      } else {
        return {false, "git option " + argv[i]};
      }
    }
    if (i >= argv.size()) return {false, "git without a subcommand"};
    const std::string& sub = argv[i];
    static constexpr std::array kGitRead = {
        "log",      "show",    "diff",     "status",     "rev-parse",
        "ls-files", "blame",   "grep",     "describe",   "shortlog",
        "cat-file", "ls-tree", "rev-list", "merge-base", "show-ref",
        "branch",   "tag",     "remote",   "reflog",     "whatchanged"};
    if (std::find(kGitRead.begin(), kGitRead.end(), sub) == kGitRead.end()) {
      return {false, "git " + sub};
    }
    if (AnyArg(argv, [](const std::string& a) {
          return SpellsLong(a, "--output") || SpellsLong(a, "--ext-diff") ||
                 SpellsLong(a, "--textconv") ||
                 SpellsLong(a, "--open-files-in-pager") || StartsWith(a, "-O");
        })) {
      return {false, "git option that writes or runs"};
    }
    std::vector<std::string> rest(argv.begin() + static_cast<long>(i),
                                  argv.end());
    auto only = [&](std::initializer_list<std::string_view> allowed) {
      for (size_t k = 1; k < rest.size(); ++k) {
        if (std::find(allowed.begin(), allowed.end(), rest[k]) ==
            allowed.end()) {
          return false;
        }
      }
      return true;
    };
    if (sub == "branch" &&
        !only({"-a", "-r", "-v", "-vv", "--list", "--show-current", "--all",
               "--remotes", "--no-color", "--merged"})) {
      return {false, "git branch that changes branches"};
    }
    if (sub == "tag" && !only({"-l", "--list", "-n"})) {
      return {false, "git tag that creates a tag"};
    }
    if (sub == "remote" && !only({"-v", "--verbose"})) {
      return {false, "git remote that changes remotes"};
    }
    if (sub == "reflog" &&
        !(rest.size() == 1 || rest[1] == "show" || StartsWith(rest[1], "-"))) {
      return {false, "git reflog that expires or deletes"};
    }
  } else if (p == "command") {
    if (!has({"-v", "-V"})) return {false, "command runs a program"};
  }
  return {true, "read-only"};
}

// A redirection operator and its target: true when it writes nothing.
bool HarmlessRedirection(std::string_view op, std::string_view target) {
  // Input redirections read a file ("<"); here-docs/strings are not
  // modelled (their body may hide anything else on the line).
  if (op == "<" || op == "0<") return true;
  if (op.find('<') != std::string_view::npos) return false;
  // fd duplication: 2>&1, 1>&2, >&2.
  if (op.ends_with(">&") && !target.empty() &&
      std::all_of(target.begin(), target.end(),
                  [](char d) { return d >= '0' && d <= '9'; })) {
    return true;
  }
  return target == "/dev/null";
}

}  // namespace

std::optional<AgentTool> FindAgentTool(std::string_view name) {
  for (const Entry& e : kTools) {
    if (e.name == name) return AgentTool{e.agent, e.kind};
  }
  return std::nullopt;
}

bool RunsOnClient(std::string_view name) {
  return FindAgentTool(name).has_value();
}

bool ResultFromClient(std::string_view name) {
  return RunsOnClient(name) || name.starts_with("mcp__");
}

namespace {

// Where `needle` first occurs in `text` (npos if nowhere): glibc's memmem,
// vectorised, where std::string_view::find compares at every occurrence of
// the needle's first byte (a space or '<': everywhere in a conversation).
size_t Find(std::string_view text, std::string_view needle) {
  // An empty view may hold a null pointer, which memmem must not get.
  if (needle.empty() || needle.size() > text.size()) {
    return needle.empty() ? 0 : std::string_view::npos;
  }
  const void* at =
      memmem(text.data(), text.size(), needle.data(), needle.size());
  return at == nullptr
             ? std::string_view::npos
             : static_cast<size_t>(static_cast<const char*>(at) - text.data());
}

// The text after the first `open` up to (not including) the next `stop`;
// "" when `open` is absent or nothing ends the value.
std::string_view Between(std::string_view text, std::string_view open,
                         std::string_view stop) {
  const size_t at = Find(text, open);
  if (at == std::string_view::npos) return {};
  text.remove_prefix(at + open.size());
  const size_t end = Find(text, stop);
  if (end == std::string_view::npos) return {};
  return text.substr(0, end);
}

}  // namespace

ClientWorkspace FindClientWorkspace(std::string_view body,
                                    const ParsedRequest& parsed,
                                    std::string_view turn_metadata) {
  const std::string_view system = parsed.system.In(body);
  std::string_view messages = parsed.messages.In(body);
  if (!parsed.tool_results.empty() &&
      parsed.tool_results.front().message < parsed.message_list.size()) {
    const Span first =
        parsed.message_list[parsed.tool_results.front().message].span;
    if (first.begin >= parsed.messages.begin) {
      messages = messages.substr(0, first.begin - parsed.messages.begin);
    }
  }
  const std::string_view after_messages =
      parsed.messages.empty() || parsed.messages.end > body.size()
          ? std::string_view()
          : body.substr(parsed.messages.end);
  ClientWorkspace w;
  // Claude Code: the system prompt's environment block (JSON-escaped, so
  // the line ends at "\n"), and metadata.user_id's device_id. The metadata
  // follows the messages: the last structural occurrence after them is the
  // request's (inside a string it would be escaped).
  // Some requests carry the block in the first user message instead (a
  // system reminder): the first occurrence there, before any tool result.
  constexpr std::string_view kLine = " - Primary working directory: ";
  std::string_view folder = Between(system, kLine, "\\n");
  if (folder.empty()) folder = Between(messages, kLine, "\\n");
  if (!folder.empty()) {
    constexpr std::string_view kUser = "\"metadata\":{\"user_id\":\"";
    std::string_view user;
    for (std::string_view rest = after_messages;;) {
      const size_t at = Find(rest, kUser);
      if (at == std::string_view::npos) break;
      rest.remove_prefix(at + kUser.size());
      user = rest;
    }
    w.installation =
        std::string(Between(user, "\\\"device_id\\\":\\\"", "\\\""));
    w.folder = std::string(folder);
  } else {
    // Codex CLI: the first environment context of the input and the turn
    // metadata header (plain JSON).
    std::string_view context =
        Between(messages, "<environment_context>", "</environment_context>");
    folder = Between(context, "<cwd>", "</cwd>");
    if (!folder.empty()) {
      w.installation =
          std::string(Between(turn_metadata, "\"installation_id\":\"", "\""));
      w.folder = std::string(folder);
    }
  }
  if (!w.known()) return {};
  return w;
}

bool AgentClient(std::string_view user_agent, std::string_view x_app,
                 std::string_view originator, std::string_view turn_metadata) {
  return x_app == "cli" || user_agent.starts_with("claude-cli/") ||
         user_agent.starts_with("codex") || originator.starts_with("codex") ||
         !turn_metadata.empty();
}

bool ToolScopes::Local(std::string_view tool) const {
  return RunsOnClient(tool) || (agent && !tool.starts_with("mcp__"));
}

const std::string& ToolScopes::For(std::string_view tool) const {
  return client && (agent || ResultFromClient(tool)) ? *client : credential;
}

bool ToolScopes::Servable(std::string_view tool) const {
  return client.has_value() || !(agent || ResultFromClient(tool));
}

ShellVerdict ClassifyShellCommand(std::string_view command) {
  while (!command.empty() &&
         (command.back() == '\n' || command.back() == ' ' ||
          command.back() == '\t' || command.back() == '\r')) {
    command.remove_suffix(1);
  }
  std::vector<Tok> toks;
  std::string why;
  if (!Lex(command, &toks, &why)) return {false, why};
  std::vector<std::string> argv;
  bool any = false;
  for (size_t i = 0; i <= toks.size(); ++i) {
    const bool end = i == toks.size();
    if (!end && toks[i].kind == TokKind::kWord) {
      argv.push_back(toks[i].text);
      continue;
    }
    if (!end && toks[i].text.find_first_of("<>") != std::string::npos) {
      const std::string& op = toks[i].text;
      if (i + 1 >= toks.size() || toks[i + 1].kind != TokKind::kWord) {
        return {false, "redirection without a target"};
      }
      if (!HarmlessRedirection(op, toks[i + 1].text)) {
        return {false, "redirection"};
      }
      ++i;  // skip the target
      continue;
    }
    // An operator (|, ||, &&, ;) or the end: argv is one simple command.
    if (argv.empty()) return {false, "empty command"};
    ShellVerdict v = SimpleCommand(argv);
    if (!v.read_only) return v;
    any = true;
    argv.clear();
  }
  if (!any) return {false, "empty command"};
  return {true, "read-only"};
}

std::optional<std::string> ShellCommandOf(std::string_view arguments_json) {
  ojson j = ojson::parse(arguments_json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  for (const char* field : {"command", "cmd", "commands"}) {
    auto it = j.find(field);
    if (it == j.end()) continue;
    if (it->is_string()) return it->get<std::string>();
    if (!it->is_array() || it->empty()) return std::nullopt;
    std::vector<std::string> argv;
    for (const ojson& a : *it) {
      if (!a.is_string()) return std::nullopt;
      argv.push_back(a.get<std::string>());
    }
    // ["bash", "-lc", "<script>"]: the script.
    if (argv.size() == 3 &&
        (argv[0] == "bash" || argv[0] == "sh" || argv[0] == "zsh" ||
         argv[0] == "/bin/bash" || argv[0] == "/bin/sh") &&
        (argv[1] == "-c" || argv[1] == "-lc")) {
      return argv[2];
    }
    // A plain argv (or a list of command lines for `commands`).
    std::string line;
    const bool lines = std::string_view(field) == "commands";
    for (const std::string& a : argv) {
      if (!line.empty()) line += lines ? " && " : " ";
      if (lines) {
        line += a;
        continue;
      }
      line.push_back('\'');
      for (char c : a) {
        if (c == '\'') {
          line += "'\\''";
        } else {
          line.push_back(c);
        }
      }
      line.push_back('\'');
    }
    return line;
  }
  return std::nullopt;
}

std::string KeyArguments(std::string_view name, std::string_view arguments) {
  std::optional<AgentTool> t = FindAgentTool(name);
  if (!t || t->kind != AgentToolKind::kShell) return std::string(arguments);
  ojson j = ojson::parse(arguments, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::string(arguments);
  bool changed = false;
  for (const char* cosmetic :
       {"description", "justification", "timeout", "timeout_ms",
        "yield_time_ms", "max_output_tokens", "run_in_background"}) {
    changed |= j.erase(cosmetic) > 0;
  }
  return changed ? j.dump() : std::string(arguments);
}

std::string KeyTool(std::string_view name, std::string_view arguments) {
  std::optional<AgentTool> t = FindAgentTool(name);
  if (!t || t->kind != AgentToolKind::kShell) return std::string(name);
  std::optional<std::string> cmd = ShellCommandOf(arguments);
  if (!cmd || !ClassifyShellCommand(*cmd).read_only) return std::string(name);
  return std::string(name) + std::string(kReadOnlyShellSuffix);
}

CallKey KeyCall(std::string_view name, std::string_view routed,
                std::string_view arguments, bool shell_moved) {
  CallKey k;
  k.arguments = KeyArguments(name, arguments);
  k.tool = KeyTool(routed, k.arguments);
  // Only Claude Code's Bash keeps one shell's directory across calls
  // (Codex's exec_command carries its `workdir`, and is keyed by it).
  if (name != "Bash" || !k.tool.ends_with(kReadOnlyShellSuffix)) return k;
  // A served `cd` would never run: the client's shell would stay where
  // the model believes it left.
  if (ShellCallMoves(name, k.arguments)) {
    k.bypass = kShellMovesReason;
  } else if (shell_moved) {
    std::optional<std::string> cmd = ShellCommandOf(k.arguments);
    if (!cmd || ShellReadsRelative(*cmd)) k.bypass = kShellMovedReason;
  }
  return k;
}

namespace {

// Words that change the shell's own directory, or run text in this shell
// that may: cd / pushd / popd; `.` / source / eval run text; alias,
// function and trap define text that runs later in the same shell (an
// alias on a later line, a DEBUG or RETURN trap); mapfile / readarray -C
// call their callback in it. `exec` is not one: it replaces the shell, and
// Claude Code's `&& pwd -P` after the command never runs.
constexpr std::array<std::string_view, 10> kMoverWords = {
    "cd",    "pushd", "popd",     "source",  "eval",
    "alias", "trap",  "function", "mapfile", "readarray"};

bool MovesShell(std::string_view w) {
  return w == "." || std::find(kMoverWords.begin(), kMoverWords.end(), w) !=
                         kMoverWords.end();
}

// Words after which the next word is still in command position: reserved
// words, and builtins whose argument is a command run by this shell.
bool KeepsCommandPosition(std::string_view w) {
  for (std::string_view k :
       {"builtin", "command", "exec", "coproc", "!", "{", "if", "then", "else",
        "elif", "do", "while", "until", "time"}) {
    if (w == k) return true;
  }
  return false;
}

// Prefix builtins whose options come before the command they run
// (`command -p cd`, `time -p cd`).
bool TakesOptionsBeforeCommand(std::string_view w) {
  return w == "builtin" || w == "command" || w == "exec" || w == "time";
}

// A command word the shell may turn into another: brace expansion
// (`{cd,sub}`) or a glob (`c?` matches a file named `cd`); `{`, `[` and
// `[[` themselves are words.
bool Expands(std::string_view w) {
  if (w == "{" || w == "[" || w == "[[") return false;
  return w.find_first_of("{*?[") != std::string_view::npos;
}

// `NAME=`, `NAME+=`, `NAME[...]=`: an assignment prefix (`X=1 cd a`).
bool Assignment(std::string_view w) {
  size_t i = 0;
  while (i < w.size() && (w[i] == '_' || (w[i] >= 'a' && w[i] <= 'z') ||
                          (w[i] >= 'A' && w[i] <= 'Z') ||
                          (i > 0 && w[i] >= '0' && w[i] <= '9'))) {
    ++i;
  }
  if (i == 0 || i == w.size()) return false;
  if (w[i] == '[') {  // an array element; `c[d]` alone is a glob
    const size_t close = w.find(']', i);
    if (close == std::string_view::npos) return false;
    i = close + 1;
    if (i == w.size()) return false;
  }
  return w[i] == '=' || (w[i] == '+' && i + 1 < w.size() && w[i + 1] == '=');
}

// Absolute on the client: from the root, or from a home directory.
bool AbsolutePath(std::string_view w) {
  return !w.empty() && (w.front() == '/' || w.front() == '~');
}

bool AllDigits(std::string_view w) {
  return !w.empty() && std::all_of(w.begin(), w.end(),
                                   [](char c) { return c >= '0' && c <= '9'; });
}

// One simple command of a read-only line: true when it may read through
// the working directory (ShellReadsRelative's rules).
bool CommandReadsRelative(const std::vector<std::string>& argv,
                          bool reads_input) {
  const std::string& p = argv[0];
  bool pattern = p == "grep" || p == "egrep" || p == "fgrep" || p == "rg" ||
                 p == "sed" || p == "jq" || p == "awk";
  const bool find = p == "find";
  bool expression = false;  // find: past its paths
  bool after_option = false;
  int paths = 0;
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.size() > 1 && a[0] == '-') {
      if (a == "-e" || a == "--regexp" || a == "--expression") {
        pattern = false;
        ++i;  // the pattern, not a path
        continue;
      }
      if (a == "-f" || SpellsLong(a, "--regexp") || SpellsLong(a, "--file") ||
          SpellsLong(a, "--expression")) {
        pattern = false;  // -f FILE: FILE is read, a path
      }
      expression |= find;
      after_option = true;
      continue;
    }
    if (find && (expression || a == "(" || a == "!")) {
      expression = true;
      continue;
    }
    if (after_option && AllDigits(a)) {
      after_option = false;
      continue;
    }
    after_option = false;
    if (pattern) {
      pattern = false;
      continue;
    }
    ++paths;
    if (!AbsolutePath(a)) return true;
  }
  return paths == 0 && !reads_input;
}

}  // namespace

namespace {

// Reads a command line as bash does, far enough to tell whether a command
// runs in the shell itself (not in a subshell, a substitution or another
// process) and names a MovesShell word or a word the shell computes (an
// expansion, an ANSI-C or locale quote: which command runs cannot be read
// off the text). Nested text ($(...), `...`, <(...), ${...}, "...") is
// walked only to find where it ends; a here-document's body is skipped.
// What it cannot read (an unbalanced quote or parenthesis) sets `unsure`.
//
// Choice: a scanner of its own beside Lex (docs/SECURITY.md "Session 19:
// the Bash cd rule's escapes"): Lex answers "is every word of this line
// known?" and stops at the first construct it does not model, with the
// reason the classifier reports; this one must walk through those
// constructs (subshells, substitutions, here-documents, case patterns,
// groups, function bodies) to answer "does a cd run at the top?".
// Characters that only continue a word in DirectoryScan::List (not a
// quote, an escape, an expansion, a blank, an operator or a comment).
constexpr std::array<bool, 256> kPlain = [] {
  std::array<bool, 256> t{};
  t.fill(true);
  for (unsigned char c : std::string_view("\\'\"`$<>&;|()# \t\n")) {
    t[c] = false;
  }
  return t;
}();

class DirectoryScan {
 public:
  explicit DirectoryScan(std::string_view s) : s_(s) {}

  bool Moves() {
    size_t i = 0;
    const bool moved = List(&i, /*nested=*/false);
    return moved || unsure_;
  }

 private:
  enum class Target : uint8_t { kNone, kFile, kHeredoc, kHeredocTabs };

  // Scans commands from s_[*pos]: to the end of the line or, `nested`, to
  // the `)` that closes it (*pos is then just past it). True when a mover
  // runs at the top (never when nested).
  bool List(size_t* pos, bool nested) {
    const Level level(this);
    if (unsure_) return false;
    int depth = 0;         // ( ... ) subshells opened in this list
    int cases = 0;         // open `case` ... `esac`: `)` ends a pattern
    bool command = true;   // the next word is in command position
    bool options = false;  // after `command`, `time`...: options may follow
    bool lookup = false;   // after `command`: -v / -V only look a name up
    Target target = Target::kNone;
    std::vector<std::pair<std::string, bool>> heredocs;  // delimiter, <<-
    std::string word;
    bool in_word = false;
    bool computed = false;  // the word holds an expansion or $'..' / $".."
    bool moved = false;
    auto flush = [&] {
      if (!in_word) return;
      if (target != Target::kNone) {
        if (target != Target::kFile) {
          heredocs.emplace_back(word, target == Target::kHeredocTabs);
        }
        target = Target::kNone;
      } else if (command) {
        if (options && !word.empty() && word.front() == '-') {
          if (lookup && (word == "-v" || word == "-V")) command = false;
        } else if (!Assignment(word)) {
          // Every mover and reserved word is short and starts with one of
          // these: most command words (grep, ls, git) skip the tables.
          const bool listed =
              !word.empty() && word.size() <= 9 &&
              std::string_view("!.{abcdefimprstuw").find(word.front()) !=
                  std::string_view::npos;
          if (!nested && depth == 0 &&
              (computed || Expands(word) || (listed && MovesShell(word)))) {
            moved = true;
          }
          if (word == "case") ++cases;
          if (word == "esac" && cases > 0) --cases;
          command = listed && KeepsCommandPosition(word);
          options = listed && TakesOptionsBeforeCommand(word);
          lookup = word == "command";
        }
      }
      word.clear();
      in_word = false;
      computed = false;
    };
    auto separate = [&] {
      flush();
      command = true;
      options = false;
      target = Target::kNone;
    };
    word.reserve(32);
    size_t i = *pos;
    for (; i < s_.size() && !unsure_; ++i) {
      const char c = s_[i];
      if (kPlain[static_cast<unsigned char>(c)]) {
        // Most characters: the word goes on. Its text only matters for a
        // command word (or an assignment before one) and a here-document's
        // delimiter.
        if (command || target != Target::kNone) word.push_back(c);
        in_word = true;
        continue;
      }
      const char next = i + 1 < s_.size() ? s_[i + 1] : '\0';
      if (c == '\\') {
        if (next == '\n') {
          ++i;  // a line continuation: the word goes on
          continue;
        }
        if (next != '\0') word.push_back(s_[++i]);
        in_word = true;
      } else if (c == '\'') {
        const size_t end = s_.find('\'', i + 1);
        if (end == std::string_view::npos) return Unsure();
        word.append(s_.substr(i + 1, end - i - 1));
        in_word = true;
        i = end;
      } else if (c == '"') {
        i = DoubleQuoted(i + 1, &word, &computed);
        in_word = true;
      } else if (c == '`') {
        i = Closing(i + 1, '`');
        in_word = computed = true;
      } else if (c == '$' &&
                 (next == '(' || next == '{' || next == '\'' || next == '"')) {
        if (next == '(') {
          i = Substitution(i + 2);
        } else if (next == '{') {
          i = Braced(i + 2);
        } else if (next == '\'') {
          i = Closing(i + 2, '\'');
        } else {
          std::string ignored;
          i = DoubleQuoted(i + 2, &ignored, &computed);
        }
        in_word = computed = true;
      } else if (c == '$') {
        word.push_back(c);
        in_word = computed = true;
      } else if ((c == '<' || c == '>') && next == '(') {
        i = Nested(i + 2);  // a process substitution: a word
        in_word = computed = true;
      } else if (c == '<' || c == '>' || (c == '&' && next == '>')) {
        // A redirection; fd digits before it belong to it.
        if (in_word && (computed || !AllDigits(word))) flush();
        word.clear();
        in_word = computed = false;
        if (c == '&') ++i;
        if (s_.substr(i, 3) == "<<<") {
          i += 2;
          target = Target::kFile;
        } else if (s_.substr(i, 3) == "<<-") {
          i += 2;
          target = Target::kHeredocTabs;
        } else if (s_.substr(i, 2) == "<<") {
          i += 1;
          target = Target::kHeredoc;
        } else {
          while (i + 1 < s_.size() &&
                 (s_[i + 1] == '>' || s_[i + 1] == '&' || s_[i + 1] == '|')) {
            ++i;
          }
          target = Target::kFile;
        }
      } else if (c == ' ' || c == '\t') {
        flush();
      } else if (c == '\n') {
        separate();
        if (!heredocs.empty()) {
          i = SkipHeredocs(i + 1, &heredocs) - 1;
        }
      } else if (c == ';' || c == '&' || c == '|') {
        separate();
      } else if (c == '(' && next == '(' && command && !in_word) {
        i = Arithmetic(i + 2);  // `(( ... ))`: `<<` is a shift there
        command = false;
      } else if (c == '(') {
        separate();
        ++depth;
      } else if (c == ')') {
        flush();
        if (cases > 0 && depth == 0) {
          separate();  // the end of a case pattern: a command follows
        } else if (depth == 0 && nested) {
          *pos = i + 1;
          return moved;
        } else {
          // Past a subshell only an operator may follow; a stray `)` is
          // read as a pattern's end (Choice: conservative).
          depth = std::max(0, depth - 1);
          separate();
        }
      } else if (c == '#' && !in_word) {
        const size_t nl = s_.find('\n', i);
        if (nl == std::string_view::npos) break;
        i = nl - 1;  // the newline separates
      } else {
        word.push_back(c);
        in_word = true;
      }
    }
    flush();
    if (nested || depth > 0) unsure_ = true;  // never closed
    *pos = i;
    return moved;
  }

  // From just inside `$(`: past `$((` arithmetic or a substitution, the
  // index of its last `)`.
  size_t Substitution(size_t i) {
    return i < s_.size() && s_[i] == '(' ? Arithmetic(i + 1) : Nested(i);
  }

  // From just inside `((`: the index of the `)` that closes it.
  size_t Arithmetic(size_t i) {
    int open = 2;
    for (; i < s_.size(); ++i) {
      if (s_[i] == '\\') {
        ++i;
      } else if (s_[i] == '(') {
        ++open;
      } else if (s_[i] == ')' && --open == 0) {
        return i;
      }
    }
    Unsure();
    return s_.size();
  }

  bool Unsure() {
    unsure_ = true;
    return false;
  }

  // From just inside `$(` / `<(`: the index of its closing `)`.
  size_t Nested(size_t i) {
    List(&i, /*nested=*/true);
    return i - 1;
  }

  // From just inside `"`: the index of the closing `"`. Appends the text
  // to `word`; an expansion inside sets `computed`.
  size_t DoubleQuoted(size_t i, std::string* word, bool* computed) {
    const Level level(this);
    for (; i < s_.size() && !unsure_; ++i) {
      const char c = s_[i];
      const char next = i + 1 < s_.size() ? s_[i + 1] : '\0';
      if (c == '"') return i;
      if (c == '\\' && next != '\0') {
        ++i;
        if (next == '\n') continue;
        // Only these are escaped inside double quotes; else `\` stays.
        if (next != '$' && next != '`' && next != '"' && next != '\\') {
          word->push_back(c);
        }
        word->push_back(next);
      } else if (c == '`') {
        i = Closing(i + 1, '`');
        *computed = true;
      } else if (c == '$' && next == '(') {
        i = Substitution(i + 2);
        *computed = true;
      } else if (c == '$' && next == '{') {
        i = Braced(i + 2);
        *computed = true;
      } else {
        if (c == '$') *computed = true;
        word->push_back(c);
      }
    }
    Unsure();
    return s_.size();
  }

  // From just inside a backquote, or `$'`: the index of the closing
  // `close` (a backslash escapes the next character in both).
  size_t Closing(size_t i, char close) {
    for (; i < s_.size(); ++i) {
      if (s_[i] == '\\') {
        ++i;
      } else if (s_[i] == close) {
        return i;
      }
    }
    Unsure();
    return s_.size();
  }

  // From just inside `${`: the index of its closing `}`.
  size_t Braced(size_t i) {
    const Level level(this);
    int open = 1;
    for (; i < s_.size() && !unsure_; ++i) {
      const char c = s_[i];
      const char next = i + 1 < s_.size() ? s_[i + 1] : '\0';
      if (c == '\\') {
        ++i;
      } else if (c == '\'') {
        i = s_.find('\'', i + 1);
        if (i == std::string_view::npos) break;
      } else if (c == '"') {
        std::string ignored;
        bool computed = false;
        i = DoubleQuoted(i + 1, &ignored, &computed);
      } else if (c == '`') {
        i = Closing(i + 1, '`');
      } else if (c == '$' && next == '(') {
        i = Substitution(i + 2);
      } else if (c == '$' && next == '{') {
        ++open;
        ++i;
      } else if (c == '}' && --open == 0) {
        return i;
      }
    }
    Unsure();
    return s_.size();
  }

  // From the line after the one that named them: past the bodies of the
  // pending here-documents, in order. Returns where the next line starts.
  size_t SkipHeredocs(size_t i,
                      std::vector<std::pair<std::string, bool>>* docs) {
    for (const auto& [delimiter, tabs] : *docs) {
      while (i < s_.size()) {
        size_t nl = s_.find('\n', i);
        if (nl == std::string_view::npos) nl = s_.size();
        std::string_view line = s_.substr(i, nl - i);
        if (tabs) {
          while (!line.empty() && line.front() == '\t') line.remove_prefix(1);
        }
        i = std::min(nl + 1, s_.size());
        if (line == delimiter) break;
      }
    }
    docs->clear();
    return i;
  }

  // Nested text ($(...) in "..." in ${...}) is read by recursion. Choice:
  // past 64 levels the line is not read and counts as a move, so that a
  // request built of nested substitutions cannot overflow the stack.
  static constexpr int kMaxLevel = 64;
  class Level {
   public:
    explicit Level(DirectoryScan* scan) : scan_(scan) {
      if (++scan_->level_ > kMaxLevel) scan_->unsure_ = true;
    }
    ~Level() { --scan_->level_; }
    Level(const Level&) = delete;
    Level& operator=(const Level&) = delete;

   private:
    DirectoryScan* scan_;
  };

  std::string_view s_;
  bool unsure_ = false;
  int level_ = 0;
};

}  // namespace

bool ShellChangesDirectory(std::string_view s) {
  return DirectoryScan(s).Moves();
}

bool ShellReadsRelative(std::string_view command) {
  std::vector<Tok> toks;
  std::string why;
  if (!Lex(command, &toks, &why)) return true;
  std::vector<std::string> argv;
  bool anchored = false;     // a `cd /abs &&` before, in this && chain
  bool reads_input = false;  // after `|`, or with `< /abs/file`
  for (size_t i = 0; i <= toks.size(); ++i) {
    const bool end = i == toks.size();
    if (!end && toks[i].kind == TokKind::kWord) {
      argv.push_back(toks[i].text);
      continue;
    }
    if (!end && toks[i].text.find_first_of("<>") != std::string::npos) {
      if (i + 1 >= toks.size()) return true;
      // An input file is read; outputs are /dev/null or fds (read-only).
      if (toks[i].text.find('<') != std::string::npos) {
        if (!anchored && !AbsolutePath(toks[i + 1].text)) return true;
        reads_input = true;
      }
      ++i;
      continue;
    }
    const std::string_view op = end ? "" : std::string_view(toks[i].text);
    if (!argv.empty() && !anchored) {
      if (argv[0] == "cd") {
        if (argv.size() < 2 || !AbsolutePath(argv[1]) || op != "&&") {
          return true;
        }
        anchored = true;
      } else if (CommandReadsRelative(argv, reads_input)) {
        return true;
      }
    }
    // `cd /abs && a; b`: b runs where the shell was when cd failed.
    if (op == ";" || op == "||") anchored = false;
    reads_input = op == "|";
    argv.clear();
  }
  return false;
}

namespace {

// The prefilter: false when a command line cannot leave the shell
// elsewhere, without reading it as a shell would. A move needs a mover
// word spelled out, or a character that lets the shell spell one from
// other text: a quote or a backslash (`c''d`, `c\d`, `c\<newline>d`), `$`
// or a backquote (a computed word), `{` `*` `?` `[` (brace expansion,
// `{sour,}ce`; a glob matching a file named `cd`), or a `.` standing alone
// (`. env.sh`). Only for the rest does ShellChangesDirectory read the line.
bool MayMoveShell(std::string_view command) {
  static constexpr std::array<bool, 256> kSpecial = [] {
    std::array<bool, 256> t{};
    for (unsigned char c : std::string_view("'\"\\$`{*?[")) t[c] = true;
    return t;
  }();
  auto lower = [](char c) { return c >= 'a' && c <= 'z'; };
  size_t run = 0;  // the lowercase letters just before i
  for (size_t i = 0; i <= command.size(); ++i) {
    const char c = i < command.size() ? command[i] : ' ';
    if (lower(c)) {
      ++run;
      continue;
    }
    // Without the characters above, a mover runs only as a whole word, so
    // a run of lowercase letters that is one.
    if (run >= 2 && run <= 9 && MovesShell(command.substr(i - run, run))) {
      return true;
    }
    run = 0;
    if (kSpecial[static_cast<unsigned char>(c)]) return true;
    if (c == '.' &&
        (i == 0 || !std::isalnum(static_cast<unsigned char>(command[i - 1]))) &&
        (i + 1 >= command.size() || command[i + 1] == ' ' ||
         command[i + 1] == '\t' || command[i + 1] == '\n')) {
      return true;
    }
  }
  return false;
}

// The raw text of the JSON string that starts at raw[*i] (just past its
// opening quote), escapes left in; *i ends past the closing quote. False
// when the string does not end. Sets `escaped` when it holds a backslash.
bool RawJsonString(std::string_view raw, size_t* i, std::string_view* text,
                   bool* escaped) {
  *escaped = false;
  for (size_t j = *i; j < raw.size(); ++j) {
    if (raw[j] == '\\') {
      *escaped = true;
      ++j;
    } else if (raw[j] == '"') {
      *text = raw.substr(*i, j - *i);
      *i = j + 1;
      return true;
    }
  }
  return false;
}

// Appends the decoded JSON string body `text` (RawJsonString) to `out`.
// False for a bad escape, a lone surrogate or a control character.
bool DecodeJsonString(std::string_view text, std::string* out) {
  auto hex4 = [&](size_t at, uint32_t* v) {
    if (at + 4 > text.size()) return false;
    *v = 0;
    for (size_t k = at; k < at + 4; ++k) {
      const char c = text[k];
      const int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
      if (d < 0) return false;
      *v = *v * 16 + static_cast<uint32_t>(d);
    }
    return true;
  };
  for (size_t j = 0; j < text.size(); ++j) {
    const unsigned char c = static_cast<unsigned char>(text[j]);
    if (c < 0x20) return false;
    if (c != '\\') {
      out->push_back(static_cast<char>(c));
      continue;
    }
    if (++j >= text.size()) return false;
    switch (text[j]) {
      case '"':
      case '\\':
      case '/':
        out->push_back(text[j]);
        break;
      case 'b':
        out->push_back('\b');
        break;
      case 'f':
        out->push_back('\f');
        break;
      case 'n':
        out->push_back('\n');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'u': {
        uint32_t cp = 0;
        if (!hex4(j + 1, &cp)) return false;
        j += 4;
        if (cp >= 0xDC00 && cp <= 0xDFFF) return false;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t lo = 0;
          if (j + 2 >= text.size() || text[j + 1] != '\\' ||
              text[j + 2] != 'u' || !hex4(j + 3, &lo) || lo < 0xDC00 ||
              lo > 0xDFFF) {
            return false;
          }
          j += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        if (cp < 0x80) {
          out->push_back(static_cast<char>(cp));
        } else if (cp < 0x800) {
          out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
          out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else if (cp < 0x10000) {
          out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
          out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
          out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else {
          out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
          out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
          out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
          out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        }
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

// What FlatCommandOf found.
enum class Flat : uint8_t {
  kCommand,  // the command line, in *command or *decoded
  kNone,     // a flat object naming no command: nothing runs
  kOther,    // another shape: ShellCommandOf decides
};

// Claude Code's Bash arguments, read without building a JSON document: an
// object whose member values are strings, numbers or literals. The command
// is what ShellCommandOf would return: the first of the members "command",
// "cmd", "commands" present (a string; any other value: kOther). A second
// member of one of those names, or any other shape, is kOther. The
// command's text is a view into `raw` when it has no escape, else decoded
// into `decoded`. Choice: the document parse cost ~12,000 instructions a
// call (session 19, `node bench/llm_proxy_count.mjs --history bash`), and
// FirstShellMove reads every Bash call of the history up to the first move.
Flat FlatCommandOf(std::string_view raw, std::string_view* command,
                   std::string* decoded) {
  auto blank = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  };
  size_t i = 0;
  auto skip = [&] {
    while (i < raw.size() && blank(raw[i])) ++i;
  };
  constexpr std::array<std::string_view, 3> kFields = {"command", "cmd",
                                                       "commands"};
  std::array<std::optional<std::pair<std::string_view, bool>>, 3> found;
  std::string key_text;
  skip();
  if (i >= raw.size() || raw[i++] != '{') return Flat::kOther;
  for (bool first = true;; first = false) {
    skip();
    if (i < raw.size() && raw[i] == '}' && first) break;
    if (i >= raw.size() || raw[i++] != '"') return Flat::kOther;
    std::string_view key;
    bool escaped = false;
    if (!RawJsonString(raw, &i, &key, &escaped)) return Flat::kOther;
    if (escaped) {
      key_text.clear();
      if (!DecodeJsonString(key, &key_text)) return Flat::kOther;
      key = key_text;
    }
    const auto field = std::find(kFields.begin(), kFields.end(), key);
    skip();
    if (i >= raw.size() || raw[i++] != ':') return Flat::kOther;
    skip();
    if (i >= raw.size()) return Flat::kOther;
    if (raw[i] == '"') {
      ++i;
      std::string_view value;
      if (!RawJsonString(raw, &i, &value, &escaped)) return Flat::kOther;
      if (field != kFields.end()) {
        auto& slot = found[static_cast<size_t>(field - kFields.begin())];
        if (slot) return Flat::kOther;  // which one counts: the parser's
        slot.emplace(value, escaped);
      }
    } else {
      if (field != kFields.end()) return Flat::kOther;
      // A number or a literal: up to the next separator.
      const size_t start = i;
      while (i < raw.size() && raw[i] != ',' && raw[i] != '}' &&
             !blank(raw[i])) {
        if (raw[i] == '{' || raw[i] == '[' || raw[i] == '"') {
          return Flat::kOther;
        }
        ++i;
      }
      if (i == start) return Flat::kOther;
    }
    skip();
    if (i >= raw.size()) return Flat::kOther;
    if (raw[i] == '}') break;
    if (raw[i++] != ',') return Flat::kOther;
  }
  ++i;
  skip();
  if (i != raw.size()) return Flat::kOther;
  for (const auto& slot : found) {
    if (!slot) continue;
    if (!slot->second) {
      *command = slot->first;
      return Flat::kCommand;
    }
    decoded->clear();
    if (!DecodeJsonString(slot->first, decoded)) return Flat::kOther;
    *command = *decoded;
    return Flat::kCommand;
  }
  return Flat::kNone;
}

}  // namespace

bool ShellCallMoves(std::string_view name, std::string_view arguments) {
  if (name != "Bash") return false;
  std::string_view command;
  std::string decoded;
  switch (FlatCommandOf(arguments, &command, &decoded)) {
    case Flat::kCommand:
      return MayMoveShell(command) && ShellChangesDirectory(command);
    case Flat::kNone:
      return false;
    case Flat::kOther:
      break;
  }
  std::optional<std::string> cmd = ShellCommandOf(arguments);
  return cmd && MayMoveShell(*cmd) && ShellChangesDirectory(*cmd);
}

size_t FirstShellMove(const ParsedRequest& request) {
  for (size_t i = 0; i < request.tool_uses.size(); ++i) {
    const RequestToolUse& u = request.tool_uses[i];
    if (ShellCallMoves(u.name, u.arguments)) return i;
  }
  return kNoShellMove;
}

ClientMarker ClientMarkerOf(std::string_view text) {
  // Claude Code 2.1: the dedupe stubs its own code recognises by prefix.
  static constexpr std::array kUnchanged = {
      std::string_view("File unchanged since last read."),
      std::string_view("Wasted call \xE2\x80\x94 file unchanged since"),
      std::string_view("<system-reminder>This file is already in your "
                       "context"),
  };
  for (std::string_view p : kUnchanged) {
    if (StartsWith(text, p)) return ClientMarker::kUnchanged;
  }
  // Truncation notices: Claude Code's partial views and cut outputs,
  // Codex's head+tail truncation of tool output.
  if (StartsWith(text, "Total output lines: ")) return ClientMarker::kTruncated;
  static constexpr std::array kTruncated = {
      std::string_view("[Truncated: PARTIAL view \xE2\x80\x94 "),
      std::string_view(" lines truncated] ..."),
      std::string_view(" tokens truncated\xE2\x80\xA6"),
      std::string_view(" chars truncated\xE2\x80\xA6"),
      std::string_view("Output too large"),
  };
  for (std::string_view p : kTruncated) {
    if (text.find(p) != std::string_view::npos) return ClientMarker::kTruncated;
  }
  return ClientMarker::kNone;
}

std::string_view ClientMarkerName(ClientMarker marker) {
  switch (marker) {
    case ClientMarker::kNone:
      return "none";
    case ClientMarker::kUnchanged:
      return "client_unchanged_stub";
    case ClientMarker::kTruncated:
      return "client_truncated";
  }
  return "none";
}

namespace {

class AgentToolExtractor final : public FeatureExtractor {
 public:
  explicit AgentToolExtractor(std::string server)
      : server_(std::move(server)) {}
  FeatureSource source() const override { return FeatureSource::kHeuristic; }

  std::optional<Features> Extract(
      const ToolInfo& tool, std::string_view arguments_json) const override {
    if (tool.server != server_) return std::nullopt;
    std::string_view name = tool.name;
    const bool read_key = name.ends_with(kReadOnlyShellSuffix);
    if (read_key) name.remove_suffix(kReadOnlyShellSuffix.size());
    std::optional<AgentTool> t = FindAgentTool(name);
    if (!t || (read_key && t->kind != AgentToolKind::kShell)) {
      return std::nullopt;
    }
    Features f;
    // Choice: final, so the heuristic's words ("Executes a bash command")
    // cannot veto a recognised read, nor a description rescue a write.
    f.final_type = true;
    const std::string who =
        std::string(t->agent) + " tool '" + std::string(name) + "'";
    switch (t->kind) {
      case AgentToolKind::kRead:
        f.request_type = RequestType::kInformational;
        f.detail = who + " reads client files";
        return f;
      case AgentToolKind::kWrite:
        f.request_type = RequestType::kCommand;
        f.detail = who + " changes client files";
        return f;
      case AgentToolKind::kLocal:
        f.request_type = RequestType::kCommand;
        f.detail = who + " acts on the client's session";
        return f;
      case AgentToolKind::kShell:
        break;
    }
    // A tool-level query (no arguments): a shell may write.
    std::optional<std::string> cmd;
    if (!arguments_json.empty()) cmd = ShellCommandOf(arguments_json);
    if (!cmd) {
      f.request_type = RequestType::kCommand;
      f.detail = who + " runs shell commands";
      return f;
    }
    ShellVerdict v = ClassifyShellCommand(*cmd);
    // Only the read-only key may be INFORMATIONAL (the plain name is on
    // the hard list for bash / shell anyway).
    f.request_type = v.read_only && read_key ? RequestType::kInformational
                                             : RequestType::kCommand;
    f.detail = who + ": " + v.reason;
    return f;
  }

 private:
  std::string server_;
};

}  // namespace

std::unique_ptr<FeatureExtractor> NewAgentToolExtractor(
    std::string client_server) {
  return std::make_unique<AgentToolExtractor>(std::move(client_server));
}

}  // namespace toolcache::llm

namespace toolcache {

std::unique_ptr<FeatureExtractor> NewAgentToolLayer(std::string client_server) {
  return llm::NewAgentToolExtractor(std::move(client_server));
}

}  // namespace toolcache
