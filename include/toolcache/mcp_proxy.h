// The stdio MCP proxy: `toolcache mcp -- <server command...>`.
//
// RunMcpProxy() spawns the server with pipes on its stdin/stdout (stderr is
// inherited and passes through untouched) and runs a single-threaded poll
// loop between the client (the proxy's own stdin/stdout) and the server.
// Lines are JSON-RPC messages; the protocol logic (forwarding, caching,
// single-flight, invalidation) is the Session in src/mcp/session.h. Output
// is buffered per fd and written when poll reports POLLOUT, so a slow peer
// never deadlocks the other direction; past `max_buffered_bytes` queued for
// a peer, the proxy stops reading the side that feeds it (backpressure).
//
// Lifecycle: client EOF -> the server's stdin is closed once everything
// queued for it is written; SIGTERM `grace_seconds` after the EOF (not the
// close, so a server that stops reading is still stopped) -> SIGKILL after
// another `grace_seconds`. When the server exits (or closes its stdout),
// every request still in flight is answered with a JSON-RPC error naming the
// cause, and the proxy returns the server's exit status (128 + signal for a
// signal the proxy did not send itself). SIGTERM/SIGINT/SIGHUP to the proxy
// start the same shutdown; SIGUSR1 writes the statistics file.
//
// Thread-safety: call once per process (it installs a signalfd for SIGCHLD,
// SIGUSR1, SIGTERM, SIGINT, SIGHUP and ignores SIGPIPE).
//
// Example:
//   McpProxyOptions o;
//   o.command = {"npx", "@modelcontextprotocol/server-memory"};
//   o.cache = cache.get();  // nullptr = pure pass-through
//   Result<int> code = RunMcpProxy(o);
#ifndef TOOLCACHE_MCP_PROXY_H_
#define TOOLCACHE_MCP_PROXY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "toolcache/status.h"
#include "toolcache/tool_cache.h"

namespace toolcache {

struct McpProxyOptions {
  // argv of the server; command[0] is looked up in PATH. REQUIRES: non-empty.
  std::vector<std::string> command;
  // Server identity in cache keys. Default "": the command line joined by
  // spaces (two proxies for the same command share keys by design).
  std::string server_name;
  // Sharing scope of entries ("" = global). The entries' scope is this
  // plus a digest of the server's credential environment (scope.h): the
  // variables of the proxy's environment (which the server inherits) whose
  // names look like secrets, and those named in `credential_env`.
  std::string scope;
  // Variables that are credentials whatever their names (a wrapped
  // server's env block: config `servers.<name>.credentialEnv`).
  std::vector<std::string> credential_env;
  // Share entries between processes whose server credentials differ
  // (config `servers.<name>.shareAcrossCredentials`, CLI
  // --share-across-credentials). Default false: each credential is its own
  // principal; set it only when every credential sees the same data.
  bool share_across_credentials = false;
  // The cache; nullptr forwards everything untouched. Borrowed.
  ToolCache* cache = nullptr;
  // Where to write the JSON statistics on exit and on SIGUSR1 ("" = never).
  std::string stats_path;
  // Choice: 2 s grace and a 64 MiB line limit (below) by default.
  // Seconds between closing the server's stdin and SIGTERM, and between
  // SIGTERM and SIGKILL. Default 2: long enough for a server to flush, short
  // enough that a stuck one does not hold the client.
  double grace_seconds = 2.0;
  // Longest accepted client line. A longer one is discarded and answered
  // with -32700. Server lines longer than this are streamed through to the
  // client unparsed (never dropped) and never cached; the request they
  // answer (found by its id) is retired and its waiting duplicates are
  // re-sent upstream. Default 64 MiB.
  uint64_t max_line_bytes = uint64_t{64} << 20;
  // Backpressure: while more than this many bytes wait to be written to the
  // client, the proxy stops reading the server (and the client, whose cache
  // hits would queue there too); while more wait for the server, it stops
  // reading the client. A peer that stops reading then stalls its
  // counterpart through the pipes, as a direct connection would, instead of
  // growing the proxy's memory. Once the server has exited its remaining
  // output is still drained. Choice: default 16 MiB.
  uint64_t max_buffered_bytes = uint64_t{16} << 20;
  int client_in_fd = 0;
  int client_out_fd = 1;
};

// Runs the proxy until the server has exited. Returns the exit code the
// process should use, or an error when the server cannot be started.
Result<int> RunMcpProxy(const McpProxyOptions& options);

// Writes `stats` (plus proxy counters) to `path` atomically (temporary file
// + rename), in the one stats shape of every face (src/runtime/stats.h):
// {"face": "mcp", "cache": {...}, "session": {"clientParseErrors", ...}}.
Status WriteToolCacheStats(const std::string& path, const ToolCacheStats& stats,
                           uint64_t client_parse_errors,
                           uint64_t server_parse_errors,
                           uint64_t failed_on_exit);

}  // namespace toolcache

#endif  // TOOLCACHE_MCP_PROXY_H_
