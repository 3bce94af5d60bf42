// Agent tools: what the LLM proxy knows about the tools coding agents run
// on their own machine (issue 28), free of I/O.
//
// Claude Code, Codex CLI, Gemini CLI and OpenCode declare tools that run in
// the client against the client's files and processes (Read, Edit, Bash,
// apply_patch, exec_command, ...). The proxy observes them (would-hits,
// invalidation) but never serves them by default: a served Read saves
// milliseconds, may be stale (the file changed outside the agent), breaks
// the client's read-before-edit bookkeeping, and costs more tokens than
// the client's own "unchanged" stub (docs/PROXY_SERVE.md).
//
// This file holds:
//   - FindAgentTool: the table of known agent tools (read / write / shell);
//   - ClassifyShellCommand: a conservative read-only shell recogniser
//     (cat, ls, grep, head, git log/show/diff/status ... are read-only;
//     any redirection to a file, -i, tee, subshell, substitution or unknown
//     program makes the command a write);
//   - ClientMarkerOf: the stubs and truncation notices a client puts in a
//     tool result instead of the result ("File unchanged since last read",
//     "[... omitted N of M lines ...]"), never recorded;
//   - NewAgentToolExtractor: a classifier layer (classifier.h) that says
//     INFORMATIONAL for agent reads and read-only shell commands and
//     COMMAND for agent writes and every other shell command.
//
// Thread-safety: free functions are pure and thread-safe; the extractor is
// immutable. Ownership: results are copies or views into static tables.
//
// Example:
//   ShellVerdict v = ClassifyShellCommand("git log --oneline | head -5");
//   // v.read_only == true
//   if (RunsOnClient("Read")) /* observed, not served by default */;
//   if (ClientMarkerOf(text) != ClientMarker::kNone) /* not a result */;
#ifndef TOOLCACHE_SRC_LLM_AGENT_TOOLS_H_
#define TOOLCACHE_SRC_LLM_AGENT_TOOLS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "src/llm/wire.h"
#include "toolcache/classifier.h"

namespace toolcache::llm {

enum class AgentToolKind : uint8_t {
  kRead,   // reads client files / state (Read, Glob, Grep, read_file ...)
  kWrite,  // changes them (Edit, Write, apply_patch ...)
  kShell,  // runs a command: read-only or a write by ClassifyShellCommand
  kLocal,  // runs on the client, neither (TodoWrite, update_plan, Task ...)
};

struct AgentTool {
  std::string_view agent;  // "claude-code", "codex", "gemini-cli", "opencode"
  AgentToolKind kind;
};

// The known agent tool `name` denotes (exact, case-sensitive), nullopt for
// any other tool (MCP tools, declared tools, provider tools).
std::optional<AgentTool> FindAgentTool(std::string_view name);

// True when `name` is a tool that runs on the client's machine against the
// client's state: never served unless the operator names it (`serve: [Read]`).
bool RunsOnClient(std::string_view name);

// True when `name`'s result is read on the client's machine, in its working
// folder: a known agent tool (RunsOnClient) or a tool of an MCP server the
// agent runs itself (`mcp__<server>__<tool>`). Such results are owned by the
// client's workspace as well as the credential (ToolScopes).
bool ResultFromClient(std::string_view name);

// What a request says about the client's installation and working folder,
// as the pinned agents send it (docs/PROXY.md "Whose workspace"):
//   - Claude Code 2.1.x: `metadata.user_id`, a JSON string holding
//     "device_id" (64 hex, per installation), and the system prompt's
//     " - Primary working directory: <path>" line;
//   - Codex CLI 0.171: the `x-codex-turn-metadata` header's
//     "installation_id", and the input's
//     "<environment_context>\n  <cwd><path></cwd>".
// Both parts empty unless both are found (Choice: a folder without an
// installation is not recognised: two containers share paths).
struct ClientWorkspace {
  std::string installation;
  std::string folder;
  bool known() const { return !installation.empty() && !folder.empty(); }
};
// `body`: the whole request as `parsed` (ParseRequest) read it;
// `turn_metadata`: the x-codex-turn-metadata header. The folder is sought in
// the system prompt and in the messages before the first tool result (the
// agents put their environment there, and a result, e.g. a file read, must
// not name the folder), the installation in what follows the messages. Each
// search is one memmem over its region: on a 200 KB conversation,
// std::string_view::find over every message cost ~1.6 M instructions per
// request, twice the rest of the proxy's work (session 16).
ClientWorkspace FindClientWorkspace(std::string_view body,
                                    const ParsedRequest& parsed,
                                    std::string_view turn_metadata);

// The result scopes of one request (scope.h): `credential` for tools that
// run elsewhere; `client` (the credential plus the client's workspace) for
// ResultFromClient tools, or nullopt when the request names no workspace
// the proxy recognises. Implicit from one scope string: every tool uses it
// (the scope before workspaces, for tests and other faces).
// True when the request's headers name a coding agent every built-in tool
// of which runs on the client's machine: Claude Code (`x-app: cli`, or a
// user agent starting "claude-cli/"), Codex CLI (an `originator` or user
// agent starting "codex", or an `x-codex-turn-metadata` header). The
// agents add tools every month (Claude Code 2.1.328 sends ListAgents,
// CronList, WebFetch, ToolSearch, ... which the table above does not
// name): for such a client every tool is the client's (ToolScopes::agent).
bool AgentClient(std::string_view user_agent, std::string_view x_app,
                 std::string_view originator, std::string_view turn_metadata);

// No Bash call of the request changed directory (FirstShellMove).
inline constexpr size_t kNoShellMove = SIZE_MAX;

struct ToolScopes {
  ToolScopes(std::string_view scope)  // NOLINT: one scope for every tool
      : credential(scope), client(std::string(scope)), principal(scope) {}
  ToolScopes(const std::string& scope)  // NOLINT: as above
      : ToolScopes(std::string_view(scope)) {}
  ToolScopes(const char* scope)  // NOLINT: as above
      : ToolScopes(std::string_view(scope)) {}
  ToolScopes(std::string c, std::optional<std::string> w)
      : credential(std::move(c)), client(std::move(w)), principal(credential) {}
  std::string credential;
  std::optional<std::string> client;
  // Who sent the request: its credential's scope, `credential` itself
  // unless `proxy.scope: global` made that "" for everyone. The observer's
  // table of calls awaiting results is keyed and shared out by it (session
  // 19), so under `global` too one key's calls are its own.
  std::string principal;
  // The request comes from a coding agent (AgentClient): every tool it
  // calls runs on its machine, whether the table knows the name or not.
  bool agent = false;
  // FirstShellMove of the request: the calls after this index in its
  // tool_uses, and the calls its response asks for, run in a Bash that an
  // earlier call moved (KeyCall's `shell_moved`).
  size_t shell_moved_at = kNoShellMove;
  // True when the call at `use` (an index into the request's tool_uses;
  // kNoShellMove = a call of the response, or one not in the history) runs
  // after a directory change.
  bool ShellMovedBefore(size_t use) const {
    return shell_moved_at != kNoShellMove &&
           (use == kNoShellMove || use > shell_moved_at);
  }
  // True when `tool` runs on the client's machine against its state: a
  // known agent tool (RunsOnClient) or, from an agent, any tool but one of
  // an MCP server (`mcp__*`, which `serve: true` serves per workspace).
  bool Local(std::string_view tool) const;
  // The scope `tool`'s entries are recorded and looked up under: `client`
  // for a client tool (ResultFromClient, or any tool of an agent),
  // `credential` otherwise and when `client` is unknown (observed only;
  // never served, see Servable).
  const std::string& For(std::string_view tool) const;
  // False for a client tool without a known workspace: its call is not
  // served ("client workspace unknown").
  bool Servable(std::string_view tool) const;
};

struct ShellVerdict {
  bool read_only = false;
  // Why, for logs and tests: "read-only", "redirection", "unknown program
  // 'make'", "substitution", "sed without -n", ...
  std::string reason;
};

// Classifies one shell command line (bash syntax). Read-only only when
// every pipeline stage of every `&&` / `||` / `;` list element is a known
// read-only program used without a writing option. Redirections to
// /dev/null and fd duplications (2>&1) are allowed (Choice: agents append
// them to most reads; they write nothing).
ShellVerdict ClassifyShellCommand(std::string_view command);

// The command line of a shell tool call's arguments (JSON object text):
// Bash / run_shell_command / bash {"command": "..."}, exec_command
// {"cmd": "..."}, Codex shell / local_shell {"command": ["bash","-lc",
// "..."]} (an argv that is not a `sh -c` wrapper is joined, quoted).
// nullopt when the arguments carry none.
std::optional<std::string> ShellCommandOf(std::string_view arguments_json);

// The arguments as they key the cache: for agent shell tools the fields
// that do not change what runs (Claude Code's `description`, Codex's
// `justification`, timeouts) are dropped so that two `cat a.txt` with
// different descriptions are one entry. Other tools: unchanged.
std::string KeyArguments(std::string_view name, std::string_view arguments);

// The tool name a call is cached under: for an agent shell tool whose
// command ClassifyShellCommand finds read-only, `name` + "#read-only"
// (Choice: the classifier's hard list names `bash` and `shell`, rightly
// never cacheable as such; the read-only subset gets its own name, which
// the agent-tool layer re-checks, so the hard list still decides every
// other command, which invalidates as a write). Otherwise `name`.
std::string KeyTool(std::string_view name, std::string_view arguments);
inline constexpr std::string_view kReadOnlyShellSuffix = "#read-only";

// How a call keys the cache, the one place the observer (recording,
// would-hits) and the tool loop (serving) derive it from: `tool` =
// KeyTool(routed, arguments), `arguments` = KeyArguments(name, ...).
// `name` is the tool as the client named it, `routed` its name after the
// proxy's server routing (`mcp__srv__t` -> `t`).
//
// `shell_moved`: an earlier call of the conversation left Claude Code's
// `Bash` in another working directory (ShellMoved). Its shell keeps the
// directory from call to call, so a read-only `Bash` command that reads
// through a relative path (ShellReadsRelative) then reads another file
// than the same text read before: such a call is not keyed (`bypass` set,
// nothing looked up, served or recorded). Absolute paths are still keyed.
struct CallKey {
  std::string tool;
  std::string arguments;
  // Non-empty: the call is not keyed, for this reason (a metrics label).
  std::string_view bypass;
};
CallKey KeyCall(std::string_view name, std::string_view routed,
                std::string_view arguments, bool shell_moved = false);
// A read-only `Bash` command that itself changes directory (`cd src`,
// `cd src && cat a`) is never keyed either: a served one would not run,
// and the client's shell would stay where the model believes it left.
inline constexpr std::string_view kShellMovedReason = "shell_directory_changed";
inline constexpr std::string_view kShellMovedDetail =
    "working directory changed by an earlier cd";
inline constexpr std::string_view kShellMovesReason = "shell_changes_directory";

// True when a shell command line may leave the shell in another working
// directory for the commands after it: a command run by the shell itself
// (not in a subshell `( ... )`, a substitution, a process substitution or
// a background or pipeline element counted conservatively as the shell's)
// that is `cd`, `pushd`, `popd`, `.`, `source` or `eval`, that defines
// text run later in the same shell (`alias`, `function`, `name() {...}`,
// `trap`, `mapfile -C`), or whose command word the shell computes (`$x`,
// `$(...)`, `$'..'`, brace expansion, a glob). Read as bash reads it:
// quotes and backslashes removed, line continuations joined, redirections
// and assignment prefixes before the word skipped, `builtin` / `command` /
// `time` / `exec` and reserved words passed over, case patterns, here-
// document bodies and `(( ))` arithmetic not taken for commands or
// subshells. Choice: when the line cannot be read (an unbalanced quote or
// parenthesis) it counts; a false move only costs hits. Not seen: an alias
// or function from the user's shell set-up, a hook.
bool ShellChangesDirectory(std::string_view command);

// True when a read-only shell command line (ClassifyShellCommand) may read
// through the working directory: some command of it has no path argument
// (`ls`, `git status`, `rg foo`), or one that is not absolute (`cat
// main.py`, `< notes.txt`). A pipeline stage after `|` may have none (it
// reads its input); a `cd /abs` makes what follows it absolute; find's
// paths are the words before its expression; grep/egrep/fgrep/rg/sed/jq/awk's
// first word without -e/-f is their pattern; a word of digits after an
// option is its value. Absolute: starting with '/' or '~'.
bool ShellReadsRelative(std::string_view command);

// The index in request.tool_uses of the first Claude Code `Bash` call
// whose command changes directory (ShellChangesDirectory); kNoShellMove
// when none does. The calls after it (and every call the response asks
// for) run in a shell that may be elsewhere. A call's arguments are read
// without a JSON document when they are a flat object (Claude Code's), and
// its command is read as a shell line only when it names a mover word or
// holds a character that could spell one (a quote, `\`, `$`, a backquote,
// `{ * ? [`, a lone `.`).
size_t FirstShellMove(const ParsedRequest& request);
// True when the call `name`(`arguments`) is a Claude Code `Bash` call whose
// command changes directory (with FirstShellMove's prefilter).
bool ShellCallMoves(std::string_view name, std::string_view arguments);

enum class ClientMarker : uint8_t {
  kNone,
  kUnchanged,  // a dedupe stub: "file unchanged since your last Read"
  kTruncated,  // a partial result with the client's truncation notice
};

// What the text of a tool result (a JSON-decoded string, or the text of
// its blocks concatenated) is, for the markers of Claude Code 2.x and
// Codex CLI 0.1xx. Such a result is never recorded: it stands for an
// earlier result or for part of one.
ClientMarker ClientMarkerOf(std::string_view text);
std::string_view ClientMarkerName(ClientMarker marker);

// The classifier layer for agent tools of `client_server` (the proxy's
// server name for client tools, ObserverOptions::client_server); no
// opinion for any other server or tool.
std::unique_ptr<FeatureExtractor> NewAgentToolExtractor(
    std::string client_server);

}  // namespace toolcache::llm

#endif  // TOOLCACHE_SRC_LLM_AGENT_TOOLS_H_
