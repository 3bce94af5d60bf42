// McpHttp: the MCP Streamable HTTP server, beside the stdio proxy and the
// HTTP client transport (http_upstream.h) in src/mcp/; `toolcache serve`
// mounts it as its MCP endpoint (src/serve/server.cc). Every configured stdio
// MCP server (`servers.<name>.command`) is served to remote clients at
// /mcp/<name> over the MCP Streamable HTTP transport, in both eras:
//
// 2026-07-28 (stateless): a POST whose body claims the revision in
// params._meta (or a notification under MCP-Protocol-Version: 2026-07-28)
// is one request answered on its own, with no session: it goes to the
// pooled child of (<name>, tenant), started once and shared by every modern
// request of that tenant, ids rewritten so clients cannot collide. The
// proxy speaks the child's era upstream: server/discover when it answers
// that, else initialize 2025-11-25 on the clients' behalf (then results
// get resultType, and list/read results ttlMs 0 / cacheScope private, and
// server/discover is answered from the initialize result). What must
// outlive a request is in the Store, so instances sharing one answer alike.
//
// 2025 era (2025-03-26 .. 2025-11-25):
//
//   POST   one JSON-RPC message (or, before 2025-06-18, a batch). Requests
//          are answered as application/json, or as a text/event-stream
//          when the client's Accept lists it (then the server's
//          notifications and requests sent meanwhile go on that stream);
//          notifications and responses alone get 202.
//   GET    opens the session's server -> client SSE stream (one at a time;
//          a second gets 409).
//   DELETE ends the session and its child process.
//
// Sessions: an initialize without `Mcp-Session-Id` starts one: a child
// process of its own and an mcp::Session (src/mcp/session.h) driven by one
// worker thread, exactly as the stdio proxy drives it, so caching,
// single-flight, the classifier, invalidation and scopes are the stdio
// proxy's. The session id comes back in the `Mcp-Session-Id` header and is
// required afterwards (400 without it, 404 when unknown or ended).
//
// Thread-safety: Handle runs on the HTTP loops (any number at once); Sweep
// and StatsJson from any thread. Ownership: borrows the cache and clock;
// owns the sessions, their threads and their children.
//
// Example:
//   McpHttp mcp({.cache = cache, .clock = &clock,
//                .servers = {{"fs", {"npx", "server-filesystem", "/tmp"}}}});
//   // in the HTTP handler:
//   if (McpHttp::Matches(req.Path())) return mcp.Handle(std::move(req), res);
#ifndef TOOLCACHE_SRC_MCP_HTTP_SERVER_H_
#define TOOLCACHE_SRC_MCP_HTTP_SERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/http/http.h"
#include "src/mcp/era.h"
#include "toolcache/clock.h"
#include "toolcache/tool_cache.h"

namespace toolcache::mcp_http {

struct McpServerSpec {
  std::string name;                  // path segment and cache identity
  std::vector<std::string> command;  // argv; command[0] is looked up in PATH
  // CredentialDigest of the child's principal (ServeMcpServer::credential);
  // "" = the tenant alone is the scope.
  std::string credential;
};

// What the HTTP face checks before MCP sees a request (Host, Origin, the
// bearer token): nullopt = rejected, with `error` filled in; else the
// tenant (the cache scope, "" = global).
struct McpGate {
  int status = 0;
  std::string message;
};
using McpAdmit = std::function<std::optional<std::string>(
    const http::Request& request, McpGate* error)>;

struct McpHttpOptions {
  ToolCache* cache = nullptr;    // nullptr: pass-through (no caching)
  const Clock* clock = nullptr;  // required
  std::vector<McpServerSpec> servers;
  McpAdmit admit;  // required
  // Sessions open at once (over every server); an initialize beyond gets
  // 503. Choice: 32, each is a child process.
  uint32_t max_sessions = 32;
  // Sessions one tenant may hold open at once; an initialize beyond gets
  // 429, so one tenant cannot lock the others out. 0 = max_sessions.
  uint32_t max_sessions_per_tenant = 0;
  // A session without a request this long is ended (its child stopped); a
  // later request gets 404 and the client starts anew. Choice: 30 min.
  double idle_timeout_seconds = 1800;
  // Seconds between closing a child's stdin and SIGTERM, and between SIGTERM
  // and SIGKILL (as `toolcache mcp --grace`).
  double grace_seconds = 2;
  // Longest server message parsed (as `toolcache mcp --max-line-bytes`); a
  // longer answer is replaced by a JSON-RPC error to its request.
  uint64_t max_line_bytes = uint64_t{64} << 20;
  // Server messages that are not responses, kept while no stream can carry
  // them (no GET stream, no open SSE POST); older ones are dropped.
  size_t max_backlog = 256;
};

class McpHttp {
 public:
  explicit McpHttp(McpHttpOptions options);
  // Ends every session (Shutdown).
  ~McpHttp();
  McpHttp(const McpHttp&) = delete;
  McpHttp& operator=(const McpHttp&) = delete;

  // True for "/mcp" and "/mcp/..." paths (this endpoint's).
  static bool Matches(std::string_view path);
  // Answers one request (on its connection's loop), now or later.
  void Handle(const http::Request& request, const http::ResponderPtr& res);
  // Ends sessions idle past idle_timeout_seconds, reaps ended ones.
  void Sweep();
  // Ends every session and waits for the workers (their children are
  // stopped). REQUIRES: the HTTP loops still exist (replies are posted).
  void Shutdown();
  // {"sessionsOpen":..,"sessionsStarted":..,...,"servers":{name:{...}}}
  std::string StatsJson() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// ----------------------------------------------- pure helpers (unit tests)

// The MCP protocol revisions this endpoint accepts in MCP-Protocol-Version.
bool IsKnownProtocolVersion(std::string_view version);
// True for the stateless revisions (>= 2026-07-28): the one definition,
// src/mcp/era.h's, with the SDK's meaning.
using mcp::IsModernProtocolVersion;
// The supported revisions as a JSON array, newest first (for the -32022
// error's data.supported).
std::string SupportedVersionsJson();

// The era of one POSTed message and the 2026-07-28 header checks, as the
// reference SDK server (@modelcontextprotocol/server 2.4.0) classifies it:
// body first (params._meta["io.modelcontextprotocol/protocolVersion"]), the
// MCP-Protocol-Version header a cross-check. Rejections (status != 0):
//   400 -32020 header and body disagree (MCP-Protocol-Version vs the body
//       claim, Mcp-Method vs method, Mcp-Name vs params.name/params.uri), or
//       a modern request lacks MCP-Protocol-Version, Mcp-Method or Mcp-Name;
//   400 -32022 the named revision is not supported (data: supported,
//   requested); 400 -32602 the header names 2026-07-28 but the request has no
//   envelope.
struct EraCheck {
  bool modern = false;
  int status = 0;  // 0 = accepted
  int code = 0;
  std::string message;
  std::string data;  // JSON for error.data, or ""
};
EraCheck CheckEra(std::string_view message, std::string_view version_header,
                  std::string_view method_header, std::string_view name_header);

// Splits a POST body into its JSON-RPC messages. A single object gives one;
// an array (a batch) its elements, each as a span of `body`. Errors (as
// JSON-RPC codes): -32700 not JSON; -32600 empty batch, an element that is
// not an object, or a batch when `batches_allowed` is false.
struct SplitBody {
  int error_code = 0;  // 0 = ok
  std::string error;
  bool batch = false;
  std::vector<std::string_view> messages;
};
SplitBody SplitPostBody(std::string_view body, bool batches_allowed);

// Which response the client's Accept header asks for.
enum class McpAccept { kNone, kJson, kSse };
// kSse when text/event-stream is listed (the reference servers' default:
// notifications sent while a request runs reach the client), else kJson
// when application/json or */* is, else kNone.
McpAccept ChooseResponse(std::string_view accept);

// One SSE event carrying one JSON-RPC message.
std::string SseEvent(std::string_view message);

}  // namespace toolcache::mcp_http

#endif  // TOOLCACHE_SRC_MCP_HTTP_SERVER_H_
