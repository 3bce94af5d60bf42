// The CLI's subcommands. Each Add*Command registers one subcommand on the
// root app and returns the function that runs it after parsing; the runner
// returns the process exit code (0 ok, 1 the work failed, 2 bad usage or bad
// input). main.cc owns the table; each command lives in its own cmd_*.cc.
#ifndef TOOLCACHE_APPS_TOOLCACHE_COMMANDS_H_
#define TOOLCACHE_APPS_TOOLCACHE_COMMANDS_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "toolcache/status.h"

namespace toolcache {
struct Config;
class Store;
}  // namespace toolcache

namespace toolcache::cli {

using CommandRunner = std::function<int()>;

struct Command {
  CLI::App* app = nullptr;
  CommandRunner run;
};

Command AddKeyCommand(CLI::App& root);
Command AddClassifyCommand(CLI::App& root);
Command AddSimCommand(CLI::App& root);
Command AddTraceCommand(CLI::App& root);
Command AddMcpCommand(CLI::App& root);
Command AddWrapCommand(CLI::App& root);
Command AddProxyCommand(CLI::App& root);
Command AddServeCommand(CLI::App& root);

// Reads all of `in`, stopping once it is longer than `limit` (0 = no
// limit; then sets *too_long). On a read error (a directory, EIO) returns
// false with errno's text in *error. (read_input.cc)
bool ReadCapped(std::FILE* in, uint64_t limit, std::string* out, bool* too_long,
                std::string* error);

// The process's logger: stderr, each line "<prefix>: [level] ...", the level
// from the flag, else $TOOLCACHE_LOG, else `default_level`. (cli_common.cc)
void SetUpLogging(std::string_view prefix, const std::string& flag_level,
                  const char* default_level);

// "host:port", "[v6]:port", ":port" or "port" -> host (default 127.0.0.1)
// and port; false when the port is not a number in 0..65535.
bool ParseListenAddress(std::string_view s, std::string* host, uint16_t* port);

// The operator's token for a face's operational routes (/metrics,
// /toolcache/stats; docs/CONFIG.md "adminTokenEnv"): the environment
// variable named by --admin-token-env (`flag_env`), else by the
// configuration's adminTokenEnv (`config_env`, `config_where` names its file
// line), else TOOLCACHE_ADMIN_TOKEN; "" when none is set. A token is never
// taken from the command line itself (other users read it in ps). False,
// with *error, when a variable named by the flag or the file is unset or
// empty (a typo must not leave the routes open). (cli_common.cc)
bool ResolveAdminToken(std::string_view flag_env,
                       const std::optional<std::string>& config_env,
                       std::string_view config_where, std::string* token,
                       std::string* error);

// Whether a listen host is a loopback address or name (127.0.0.0/8, ::1,
// localhost): only local processes reach it. (cli_common.cc)
bool IsLoopbackHost(std::string_view host);

// A server command's exit code: its own, or after printing
// "<command>: <why>", 2 for bad input and 1 for a failure.
int ExitCodeOf(std::string_view command, const Result<int>& code);

// Exit codes shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

}  // namespace toolcache::cli

#endif  // TOOLCACHE_APPS_TOOLCACHE_COMMANDS_H_
