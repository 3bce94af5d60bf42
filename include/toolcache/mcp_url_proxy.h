// The MCP proxy in front of a remote server: `toolcache mcp --url URL`.
//
// RunMcpUrlProxy() speaks JSON-RPC lines with the client on its stdin and
// stdout, exactly as RunMcpProxy (mcp_proxy.h) does, but the server is a
// Streamable HTTP endpoint (MCP spec, "Transports"): each message the
// client sends becomes a POST, answers come back as a JSON body or an SSE
// stream, server-initiated messages on a GET stream when the server offers
// one, and the session ends with DELETE. The protocol logic (caching,
// single-flight, invalidation) is the same Session; src/mcp/http_upstream.h
// documents the transport and how failures become JSON-RPC errors (never a
// hang or a silent drop) and how an expired server session is
// re-initialized.
//
// Lifecycle: client EOF (or SIGTERM/SIGINT/SIGHUP) -> requests still
// waiting get `grace_seconds` to be answered -> the rest are answered with
// an error -> DELETE of the server session (at most `grace_seconds`) ->
// return 0. SIGUSR1 writes the statistics file.
//
// Thread-safety: call once per process (it blocks SIGTERM, SIGINT, SIGHUP
// and SIGUSR1 for a signalfd, and ignores SIGPIPE). One extra thread runs
// the HTTP event loop and the session; the calling thread reads the client.
//
// Example:
//   McpUrlProxyOptions o;
//   o.url = "https://mcp.example.com/mcp";
//   o.headers = {{"Authorization", "Bearer ${GITHUB_TOKEN}"}};
//   o.cache = cache.get();
//   Result<int> code = RunMcpUrlProxy(o);
#ifndef TOOLCACHE_MCP_URL_PROXY_H_
#define TOOLCACHE_MCP_URL_PROXY_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "toolcache/status.h"
#include "toolcache/tool_cache.h"

namespace toolcache {

struct McpUrlProxyOptions {
  // http:// or https:// endpoint (path and query kept). REQUIRES: non-empty.
  std::string url;
  // Extra request headers, {name, value}; ${VAR} in a value is replaced by
  // the environment variable VAR when the proxy starts ("$$" = "$"). Values
  // are never logged.
  std::vector<std::pair<std::string, std::string>> headers;
  // Server identity in cache keys. Default "": the URL without its query,
  // secret-looking path segments redacted (RedactedUrl in scope.h).
  std::string server_name;
  // Sharing scope of entries ("" = global), plus a digest (scope.h) of
  // every configured header and of the URL's path and query (either may
  // hold a token): two processes with different credentials never share.
  std::string scope;
  // Share entries across credentials anyway (see McpProxyOptions).
  bool share_across_credentials = false;
  ToolCache* cache = nullptr;  // nullptr: pure pass-through. Borrowed.
  std::string stats_path;
  // Extra CA bundle (PEM) trusted besides the system's.
  std::string ca_file;
  // Longest wait for a response to start, and between two pieces of it.
  // Choice: 300 s by default: tools may run for minutes; shorter turns slow
  // tools into errors, longer holds a dead server's requests longer.
  double timeout_seconds = 300;
  // Choice: 10 s to connect (capped by timeout_seconds).
  double connect_timeout_seconds = 10;
  // Wait at shutdown for answers, and for the DELETE. Default 2.
  double grace_seconds = 2.0;
  uint64_t max_line_bytes = uint64_t{64} << 20;
  // Open a GET event stream for server-initiated messages (when offered).
  bool get_stream = true;
  int client_in_fd = 0;
  int client_out_fd = 1;
};

// Runs until the client closed its input or a stop signal; returns the exit
// code (0). INVALID_ARGUMENT for a bad URL, header, unset variable or CA file.
Result<int> RunMcpUrlProxy(const McpUrlProxyOptions& options);

}  // namespace toolcache

#endif  // TOOLCACHE_MCP_URL_PROXY_H_
