// Rewriting MCP client configurations (`mcpServers`, the format of Claude
// Code's .mcp.json and Claude Desktop's claude_desktop_config.json) so every
// stdio server runs behind `toolcache mcp`, and back.
//
// Wrap turns {"command": C, "args": A, "env": E, ...} into
// {"command": <toolcache>, "args": ["mcp", "--name", <key>, [--config F,]
// "--", C, A...], "env": E, ...}; every other field and the member order are
// kept. Servers with a `url` or a non-stdio `type` are left alone, and so are
// servers already wrapped (wrapping is idempotent). A server counts as
// wrapped only when its command's file name is `toolcache` or its args have
// exactly the shape wrap writes ("mcp", "--name", its key, [--config F],
// "--", ...), so another CLI's `mcp ... -- ...` subcommand is never touched.
// Unwrap restores C and A from everything after that "--". The files keep
// the original's mode (and owner where allowed), backup included. Wrapping
// a server already wrapped with another toolcache command (its file name is
// `toolcache`: an old build path, say) retargets it to the new command.
//
// ChooseToolcacheCommand picks that command: the bare name `toolcache` when
// the `toolcache` that PATH finds is this very program, so the file survives
// rebuilds and upgrades; the absolute path only when asked or when PATH
// finds no toolcache or another one.
//
// Thread-safety: pure functions. Ownership: values.
//
// Example:
//   Result<WrapOutcome> w = WrapMcpServers(text, {.toolcache =
//   "/usr/bin/toolcache"}); if (w.ok()) WriteFile(path, w->text);  //
//   w->changed lists the servers
#ifndef TOOLCACHE_SRC_MCP_WRAP_H_
#define TOOLCACHE_SRC_MCP_WRAP_H_

#include <string>
#include <string_view>
#include <vector>

#include "toolcache/status.h"

namespace toolcache {

struct WrapOptions {
  std::string toolcache = "toolcache";  // command that runs toolcache
  std::string config_path;              // passed as --config when non-empty
};

struct WrapOutcome {
  std::string text;                  // the rewritten file (2-space indent)
  std::vector<std::string> changed;  // servers wrapped / unwrapped
  std::vector<std::string> skipped;  // "name: why" for servers left alone
  // "name: OLD -> NEW" for already wrapped servers whose toolcache command
  // changed (also listed in `changed`).
  std::vector<std::string> retargeted;
};

struct ToolcacheCommand {
  std::string command;  // what to write as the servers' "command"
  std::string note;     // why it is an absolute path; empty when not asked
};

// The command that runs this program, `self_exe` (an absolute path, e.g.
// /proc/self/exe resolved), for a client whose PATH is `path_env`: the name
// "toolcache" when the first executable `toolcache` in an absolute
// directory of `path_env` is the same file as `self_exe` (symlinks
// followed); otherwise `self_exe`, with `note` saying why. `absolute`
// forces `self_exe` without a note. Reads the file system (stat) only.
ToolcacheCommand ChooseToolcacheCommand(std::string_view self_exe,
                                        std::string_view path_env,
                                        bool absolute);

// INVALID_ARGUMENT when `json_text` is not JSON, has no `mcpServers` object,
// or a server entry is not an object.
Result<WrapOutcome> WrapMcpServers(std::string_view json_text,
                                   const WrapOptions& options);
Result<WrapOutcome> UnwrapMcpServers(std::string_view json_text);

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_MCP_WRAP_H_
