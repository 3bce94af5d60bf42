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
// the original's mode (and owner where allowed), backup included.
//
// Thread-safety: pure functions. Ownership: values.
//
// Example:
//   Result<WrapOutcome> w = WrapMcpServers(text, {.toolcache =
//   "/usr/bin/toolcache"}); if (w.ok()) WriteFile(path, w->text);  //
//   w->changed lists the servers
#ifndef TOOLCACHE_MCP_WRAP_H_
#define TOOLCACHE_MCP_WRAP_H_

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
};

// INVALID_ARGUMENT when `json_text` is not JSON, has no `mcpServers` object,
// or a server entry is not an object.
Result<WrapOutcome> WrapMcpServers(std::string_view json_text,
                                   const WrapOptions& options);
Result<WrapOutcome> UnwrapMcpServers(std::string_view json_text);

}  // namespace toolcache

#endif  // TOOLCACHE_MCP_WRAP_H_
