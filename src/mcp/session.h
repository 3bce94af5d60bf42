// Session: the MCP proxy's protocol logic, free of I/O.
//
// The stdio proxy (proxy.cc) feeds it complete lines from the client and from
// the server; the session writes lines to either side through SessionOutput.
// Everything it does not interpret is forwarded as the exact received bytes,
// in order. It interprets:
//   client -> server  tools/call          (cache: serve a hit, join a flight,
//                                          or forward and track)
//                     notifications/cancelled (single-flight waiters)
//                     any request          (tracked so a dying server can be
//                                          answered with an error)
//   server -> client  responses to tracked requests (tools/list teaches the
//                     cache the tools; tools/call results are admitted)
//                     notifications/tools/list_changed,
//                     notifications/resources/updated (invalidation)
// A malformed client line is answered with a JSON-RPC -32700 parse error; a
// malformed server line is logged and dropped (there is no request to answer).
//
// Thread-safety: none; one thread drives a session. Ownership: borrows the
// cache (may be null: pure pass-through), the clock and the output.
//
// Example:
//   Session s({.server = "fs"}, cache.get(), &clock, &out);
//   s.OnClientLine(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
//   s.OnServerLine(R"({"jsonrpc":"2.0","id":1,"result":{"tools":[]}})");
#ifndef TOOLCACHE_SRC_MCP_SESSION_H_
#define TOOLCACHE_SRC_MCP_SESSION_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "toolcache/clock.h"
#include "toolcache/tool_cache.h"

namespace toolcache::mcp {

// JSON-RPC / MCP error codes the proxy emits.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
// MCP SDK's ErrorCode.ConnectionClosed.
inline constexpr int kConnectionClosed = -32000;

class SessionOutput {
 public:
  virtual ~SessionOutput() = default;
  // One JSON-RPC message, without the trailing newline.
  virtual void ToClient(std::string_view line) = 0;
  virtual void ToServer(std::string_view line) = 0;
};

struct SessionOptions {
  std::string server;  // server identity for cache keys
  std::string scope;   // sharing scope ("" = global)
};

struct SessionCounters {
  uint64_t client_lines = 0;
  uint64_t server_lines = 0;
  uint64_t client_parse_errors = 0;
  uint64_t server_parse_errors = 0;
  uint64_t failed_on_exit = 0;  // requests answered with an error because
                                // the server went away
};

class Session {
 public:
  Session(SessionOptions options, ToolCache* cache, const Clock* clock,
          SessionOutput* out);

  void OnClientLine(std::string_view line);
  void OnServerLine(std::string_view line);
  // A client line longer than the proxy's limit was discarded: answer -32700.
  void OnClientLineTooLong(uint64_t bytes, uint64_t limit);
  // The server is gone: answer every request still waiting for it with a
  // kConnectionClosed error whose message names `cause`.
  void FailInFlight(std::string_view cause);

  // Requests forwarded upstream (or waiting on a flight) and not answered.
  size_t in_flight() const { return pending_.size() + followers_.size(); }
  const SessionCounters& counters() const { return counters_; }
  const std::string& protocol_version() const { return protocol_version_; }

 private:
  enum class Tracked { kOther, kInitialize, kToolsList, kToolsCall };
  struct Pending {
    std::string raw_id;
    Tracked what = Tracked::kOther;
    double started = 0;
    TicketId ticket = 0;  // kToolsCall through the cache
    WaiterId waiter = 0;
    bool bypass = false;
    bool cancelled = false;  // leader cancelled while others wait
    bool first_page = true;  // tools/list without a cursor
  };

  void HandleToolsCall(std::string_view line, std::string_view raw_id,
                       const std::string& nid, std::string_view params);
  void HandleCancelled(std::string_view line, std::string_view params);
  void HandleCallResponse(std::string_view line, Pending& p,
                          std::string_view result, std::string_view error);
  void SendError(bool to_client, std::string_view raw_id, int code,
                 std::string_view message);

  SessionOptions options_;
  ToolCache* cache_;
  const Clock* clock_;
  SessionOutput* out_;
  // Client requests forwarded upstream, by normalized id.
  std::unordered_map<std::string, Pending> pending_;
  // Single-flight followers: waiter -> raw client id.
  std::unordered_map<WaiterId, std::string> followers_;
  // Normalized client id -> waiter, for followers (cancellation).
  std::unordered_map<std::string, WaiterId> follower_ids_;
  // Leader waiter -> normalized id in pending_.
  std::unordered_map<WaiterId, std::string> leader_ids_;
  WaiterId next_waiter_ = 1;
  std::string protocol_version_;
  SessionCounters counters_;
};

// The hit response: {"jsonrpc":"2.0","id":<raw_id>,"result":<result>} where
// `result` gets `_meta["toolcache/cache"] = {"hit":true,"ageSeconds":age}`
// spliced in; every other byte of `result` is kept.
std::string BuildHitResponse(std::string_view raw_id, std::string_view result,
                             double age_seconds);

// Learns the tools of one tools/list result page (declared here, defined in
// tools_list.cc).
void LearnToolsFromListResult(ToolCache* cache, std::string_view server,
                              std::string_view result, bool replace);

}  // namespace toolcache::mcp

#endif  // TOOLCACHE_SRC_MCP_SESSION_H_
