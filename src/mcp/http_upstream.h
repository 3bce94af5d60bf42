// HttpUpstream: the server side of the MCP proxy when the server is remote,
// spoken over MCP's Streamable HTTP transport (spec 2025-03-26 / 2025-06-18,
// "Transports"). The Session (session.h) is the same as for a child process;
// what it sends the server (SessionOutput::ToServer) goes to Send(), and
// every message the server sends back reaches the session through the
// `to_session` callback, as if it were a line the server wrote.
//
//   request       -> POST <url>, Accept: application/json, text/event-stream
//                    -> 200 application/json: one message (or a batch)
//                    -> 200 text/event-stream: messages until the answer
//   notification,
//   response      -> POST -> 202 Accepted (no body)
//   after init    -> GET <url> (text/event-stream) for server-initiated
//                    messages, when the server offers it (405: it does not)
//   shutdown      -> DELETE <url> with the session id
//
// Headers: Mcp-Session-Id from the initialize response is sent on every
// later request; MCP-Protocol-Version carries the version the initialize
// result negotiated; the operator's extra headers (--header, config
// `headers:`) go on every request. Header values are never logged.
//
// MCP 2026-07-28 (stateless): a message whose params._meta claims the
// revision (the stdio client speaks it) goes without initialize and without
// Mcp-Session-Id, with MCP-Protocol-Version: 2026-07-28, Mcp-Method and,
// where the spec asks, Mcp-Name (ModernHeadersOf). The server's answer,
// whatever it is (including a 2025 server's error, after which the client
// falls back to initialize itself), goes to the client as is; no GET
// stream is opened for a modern client.
//
// Failures never leave a request unanswered: when a POST for a request ends
// without its answer (connect refused, timeout, HTTP 4xx/5xx, a body that is
// not JSON-RPC, an SSE stream that ended early) the session gets a JSON-RPC
// error response under the request's id (below), exactly as if the server
// had answered with it, so the session's bookkeeping (single-flight
// followers, never caching errors) is the one it has for server errors.
//   transport failure, HTTP error  -> -32000 "toolcache: <what happened>"
//   unusable 2xx body               -> -32603 "toolcache: <what happened>"
//   HTTP error whose body is a JSON-RPC error for this id -> passed as is
// Choice: session expiry (404 to a request that carried Mcp-Session-Id, as
// the spec says; or 400 whose body mentions a session, what the SDK's
// example servers such as server-everything answer for an unknown id) is
// handled by re-initializing transparently: the client's own initialize
// request is replayed under a proxy id (its answer is not forwarded), then
// notifications/initialized, then the failed message is sent once more.
// The client keeps its session; the server's per-session state (subscriptions,
// log level) is lost, as it would be for any reconnecting client. A server
// that restarted is thus recovered on the next message. When the
// re-initialization fails, the waiting requests get -32000 errors and the
// next message tries again.
// Choice: SSE streams are not resumed (no GET with Last-Event-ID after a
// POST stream broke): the request is answered with an error instead, which
// the client may retry. The GET stream is reopened after it ends (1 s, then
// doubling to 30 s while it keeps failing), with the Last-Event-ID of the
// last event id it carried, so that the server replays what it sent in
// between.
// When it cannot be resumed that way -- it carried no event id, or the
// server answers the resume attempt with an HTTP error (then the id is
// dropped and the next attempt opens a fresh stream) -- the notifications
// the server sent in between (resources/updated, list_changed) are lost:
// `on_gap` is called with the reason when the server ends the stream (not
// when a transport error cuts it: the server may be down, and cached
// answers are still served meanwhile) or refuses the resume, and again when
// a fresh stream opens; the proxy invalidates the server's entries each
// time (Session::ServerMessagesMayBeLost).
//
// Thread-safety: none; everything runs on the one loop given (the caller
// posts client lines there). Ownership: borrows the client and the loop.
//
// Example:
//   HttpUpstream up(opts, client, loop,
//                   [&](std::string_view m, std::string_view stream_id) {
//                     session.OnServerLineOnStream(m, stream_id);
//                   });
//   up.Send(R"({"jsonrpc":"2.0","id":1,"method":"initialize",...})");
#ifndef TOOLCACHE_SRC_MCP_HTTP_UPSTREAM_H_
#define TOOLCACHE_SRC_MCP_HTTP_UPSTREAM_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "src/http/http.h"
#include "src/http/sse.h"
#include "toolcache/status.h"

namespace toolcache::mcp {

// ------------------------------------------------------- pure helpers

// "Name: value" (from --header) -> {name, value}; the value is trimmed of
// surrounding blanks. INVALID_ARGUMENT naming the problem (no colon, an
// empty or non-token name, a CR/LF in the value); the message never
// contains the value.
Result<http::Header> ParseHeaderArg(std::string_view text);

// `text` with every ${NAME} replaced by the environment variable NAME
// (`getenv` is injectable for tests). "$$" is a literal "$"; any other "$"
// is kept. INVALID_ARGUMENT when a referenced variable is unset or a
// "${" is not closed; the message names the variable, never a value.
Result<std::string> ExpandEnv(
    std::string_view text,
    const std::function<const char*(const char*)>& getenv_fn);

// An MCP endpoint URL split for the HTTP client: the origin, and the
// request target (path and query, "/" when empty) sent verbatim.
struct McpEndpoint {
  http::Url origin;  // path_prefix is always ""
  std::string target;
  // scheme://host[:port]/path without the query (it may hold a token) and
  // with the path's secret-looking segments redacted (RedactedUrl:
  // ".../api/mcp/s/<redacted>"), for messages, logs and the identity.
  std::string display;
};
// INVALID_ARGUMENT for anything but an absolute http(s) URL with a host
// (no userinfo, no fragment).
Result<McpEndpoint> ParseMcpEndpoint(std::string_view url);

// Reads the response to one POST (or GET): a JSON body or an SSE stream.
// Messages are handed to `emit` as single lines (raw CR/LF, which valid JSON
// holds only as whitespace, removed): each SSE "message" event as it
// completes; a JSON body when it ended (a batch array is split into its
// elements). Non-2xx bodies are kept (up to a bound) and never emitted.
class ResponseReader {
 public:
  using Emit = std::function<void(std::string_view message)>;
  // Choice: 64 MiB, the stdio proxy's default line limit.
  explicit ResponseReader(uint64_t max_body_bytes = uint64_t{64} << 20);

  void OnHead(int status, const http::Headers& headers);
  void OnData(std::string_view bytes, const Emit& emit);
  // The body ended (`transport` is the client's OnEnd status). OK when the
  // response was usable: a 2xx whose body, if any, held JSON-RPC messages.
  // Otherwise why not, e.g. "HTTP 500 Internal Server Error: <body start>",
  // "the response is not JSON: ...", "the event stream ended inside an
  // event", or the transport's own message.
  Status OnEnd(const Status& transport, const Emit& emit);

  int status() const { return status_; }
  bool is_sse() const { return sse_; }
  // The whole body of a non-2xx or JSON response (bounded).
  const std::string& body() const { return body_; }
  std::string_view session_id() const { return session_id_; }
  // Events / messages emitted so far.
  uint64_t messages() const { return messages_; }
  // Last SSE event id seen (for Last-Event-ID on a GET stream).
  const std::string& last_event_id() const { return last_event_id_; }

 private:
  void EmitOne(std::string_view message, const Emit& emit);

  uint64_t max_body_bytes_;
  int status_ = 0;
  bool sse_ = false;
  bool json_ = false;
  std::string content_type_;
  std::string session_id_;
  std::string body_;
  bool body_too_large_ = false;
  http::SseParser sse_parser_;
  std::string last_event_id_;
  uint64_t messages_ = 0;
};

// MCP 2026-07-28 header values (SEP-2243, as the SDK encodes them): a value
// that is a plain ASCII field value (0x20-0x7E and tab, no surrounding
// blanks, not empty) goes as is; anything else as "=?base64?<utf-8 b64>?=".
std::string EncodeMcpHeaderValue(std::string_view value);
// The inverse; nullopt for a sentinel whose Base64 is invalid.
std::optional<std::string> DecodeMcpHeaderValue(std::string_view header);

// What the 2026-07-28 Streamable HTTP transport puts in headers for one
// message: the revision the body claims in params._meta, its method and the
// name it acts on (params.name for tools/call and prompts/get, params.uri
// for resources/read). `modern` is false for anything else.
struct ModernHeaders {
  bool modern = false;
  std::string version;
  std::string method;
  std::string name;  // "" = no Mcp-Name
};
ModernHeaders ModernHeadersOf(std::string_view message);

// ------------------------------------------------------------ upstream

struct HttpUpstreamOptions {
  McpEndpoint endpoint;
  http::Headers extra_headers;  // already expanded; values never logged
  // Open the GET stream for server-initiated messages after initialize.
  bool open_get_stream = true;
};

struct HttpUpstreamCounters {
  uint64_t posts = 0;
  uint64_t failed_posts = 0;        // transport failures and HTTP errors
  uint64_t synthesized_errors = 0;  // requests answered by the proxy
  uint64_t reinitializations = 0;
  uint64_t get_streams = 0;  // GET streams opened (200)
};

class HttpUpstream {
 public:
  // `stream_id`: the id (as sent) of the request whose POST response
  // carried `message` -- its answer, or a server request or notification
  // on its SSE stream, which concern that request -- or "" for the GET
  // stream (Session::OnServerLineOnStream).
  using ToSession =
      std::function<void(std::string_view message, std::string_view stream_id)>;
  // Called on the loop when server-initiated messages may have been lost
  // (the GET stream ended or reopened without resuming); `why` is for logs.
  using OnGap = std::function<void(std::string_view why)>;
  HttpUpstream(HttpUpstreamOptions options, http::Client* client,
               http::Loop* loop, ToSession to_session, OnGap on_gap = {});
  ~HttpUpstream();

  // One message from the session to the server (SessionOutput::ToServer).
  void Send(std::string_view line);
  // Calls (POSTs, DELETE) not yet ended, besides the GET stream.
  size_t active() const { return active_; }
  // Stops the GET stream, cancels every call still running (their requests
  // are the caller's to fail: Session::FailInFlight), then ends the server
  // session with DELETE when there is one; `done` runs on the loop once
  // that ended (at most `timeout_seconds` later; never before Shutdown
  // returned).
  void Shutdown(double timeout_seconds, std::function<void()> done);
  const std::string& session_id() const { return session_id_; }
  const HttpUpstreamCounters& counters() const { return counters_; }

 private:
  struct Outgoing;
  class PostSink;
  class GetSink;
  friend class PostSink;
  friend class GetSink;

  void Post(std::shared_ptr<Outgoing> m);
  void OnPostEnd(const std::shared_ptr<Outgoing>& m, ResponseReader& reader,
                 const Status& status);
  void Fail(const Outgoing& m, int code, const std::string& why);
  bool SessionExpired(const Outgoing& m, const ResponseReader& r) const;
  void Reinitialize();
  void OnReinitialized(const Status& status);
  void Release();  // sends what waited behind an initialize
  http::Headers RequestHeaders(bool json_body, bool with_session) const;
  void OpenGetStream();
  void OnGetHead(bool sse, int status);
  void OnGetEnd(int status, const Status& st);
  void Gap(std::string_view why);

  HttpUpstreamOptions options_;
  http::Client* client_;
  http::Loop* loop_;
  ToSession to_session_;
  std::string session_id_;
  std::string protocol_version_;
  std::string init_params_;  // the client's initialize params (raw JSON)
  // The revision the client's last 2026-07-28 message claimed ("" = none).
  std::string modern_version_;
  // An initialize (the client's, or a re-initialization) is in flight:
  // other messages wait in held_.
  bool gate_ = false;
  bool need_reinit_ = false;  // the last re-initialization failed
  std::deque<std::shared_ptr<Outgoing>> held_;
  std::unordered_map<uint64_t, std::shared_ptr<http::Call>> calls_;
  uint64_t next_token_ = 0;
  size_t active_ = 0;
  uint64_t reinit_seq_ = 0;
  bool shutting_down_ = false;
  // GET stream.
  bool initialized_ = false;  // notifications/initialized was accepted
  bool get_supported_ = true;
  std::shared_ptr<http::Call> get_call_;
  std::function<void()> get_retry_cancel_;
  double get_backoff_ = 1;
  std::string last_event_id_;
  OnGap on_gap_;
  bool get_open_ = false;      // the current GET is an open event stream
  bool get_resuming_ = false;  // the current GET carries Last-Event-ID
  // A stream ended without a way to resume it: the next one that opens
  // fresh reports a gap too.
  bool get_unresumed_ = false;
  HttpUpstreamCounters counters_;
  // Set false by the destructor: callbacks still queued on the loop
  // (timers) check it before touching `this`.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace toolcache::mcp

#endif  // TOOLCACHE_SRC_MCP_HTTP_UPSTREAM_H_
