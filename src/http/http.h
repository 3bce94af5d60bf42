// toolcache's HTTP/1.1 layer: a server and an upstream client, both
// asynchronous, on Boost.Beast/Asio (OpenSSL for TLS to the upstream). Free
// of LLM specifics, so every HTTP face (the LLM proxy, later `toolcache
// serve`) uses the same small interface; Beast and Asio stay inside
// server.cc and client.cc.
//
// Model: the server runs N event loops (one thread each). Every accepted
// connection lives on one loop for its whole life, and so does everything a
// handler starts for it (upstream calls, timers): handler code for one
// connection is single-threaded and needs no locks.
//
//   Server:  accept -> read request (header / body / depth limits, timeouts)
//            -> Handler(request, responder) -> the handler answers whole
//            (Send) or streamed (Start, Write..., Finish) -> keep-alive.
//            While a response is in progress the connection watches its
//            socket: when the client goes away, OnClientGone fires (the
//            handler cancels its upstream call).
//   Client:  Start(loop, url, request, sink) -> a pooled keep-alive
//            connection (or a new one: TCP, TLS with SNI and certificate
//            verification) -> OnHead, OnData (decoded body pieces, as they
//            arrive; return false to pause until Resume), OnEnd(status).
//
// Thread-safety: Server::Stop may be called from any thread; everything
// else is called on the loop that owns the connection or call. Ownership:
// the handler gets a shared Responder; a Call is shared by its owner and
// its pending I/O, and Cancel() ends it.
//
// Example:
//   auto server = NewServer({.port = 0}, [&](Request req, ResponderPtr res) {
//     res->Send(200, {{"content-type", "text/plain"}}, "hello");
//   });
//   std::thread t([&] { (*server)->Run(); });
//   ... (*server)->port() ...; (*server)->Stop(); t.join();
#ifndef TOOLCACHE_SRC_HTTP_HTTP_H_
#define TOOLCACHE_SRC_HTTP_HTTP_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "toolcache/status.h"

namespace toolcache::http {

struct Header {
  std::string name;
  std::string value;
};
using Headers = std::vector<Header>;

// The value of the first header named `name` (ASCII case-insensitive), or
// an empty view.
std::string_view FindHeader(const Headers& headers, std::string_view name);
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// The token of an `Authorization: Bearer <token>` header value (the scheme
// ASCII case-insensitive, RFC 6750 2.1), or an empty view when `authorization`
// is not of that form.
std::string_view BearerToken(std::string_view authorization);
// Whether a presented token equals a configured one, in time that depends
// only on the presented token's length, never on where the two differ. An
// empty configured token equals nothing.
bool TokenEquals(std::string_view presented, std::string_view configured);

// Request bodies keep this many spare bytes of capacity past their end, so
// parsers that read ahead in blocks (simdjson) can use them in place.
inline constexpr size_t kBodyPadding = 64;

struct Request {
  std::string method;  // "POST"
  std::string target;  // origin-form: "/v1/messages?beta=true"
  int version = 11;    // 10 or 11
  Headers headers;     // as received, in order
  std::string body;    // capacity() >= size() + kBodyPadding
  // When the header section had arrived and when the body was complete
  // (steady clock, seconds since its epoch): the client's upload time is
  // the difference (for stage timings).
  double head_at = 0;
  double received_at = 0;

  std::string_view Header(std::string_view name) const {
    return FindHeader(headers, name);
  }
  // The target without its query.
  std::string_view Path() const;
};

// One event loop of the server (opaque; defined in asio_internal.h).
class Loop;

// How a handler answers one request. Every method is called on the
// connection's loop. After Send or Finish (or Abort) the responder is spent;
// later calls do nothing.
class Responder {
 public:
  virtual ~Responder() = default;
  // A whole response; Content-Length is set from `body`.
  virtual void Send(int status, Headers headers, std::string body) = 0;
  // Starts a streamed response: chunked for HTTP/1.1 clients, ended by
  // closing the connection for HTTP/1.0 ones. Any Content-Length or
  // Transfer-Encoding in `headers` is dropped.
  virtual void Start(int status, Headers headers) = 0;
  // Queues one piece of a started response. False when the client is gone.
  virtual bool Write(std::string_view data) = 0;
  // Ends a started response.
  virtual void Finish() = 0;
  // Closes the connection without ending the response (the client sees a
  // truncated body, as a dropped upstream would have given it).
  virtual void Abort() = 0;
  // Bytes queued for the client and not yet written.
  virtual size_t Buffered() const = 0;
  // Between Cork and Uncork, what Start and Write queue is held back, so
  // it leaves in one gathered write at Uncork (a streamed response's head
  // with its first piece; the pieces of one upstream read). Send, Finish
  // and Abort uncork too. Default: writes leave as they are queued.
  virtual void Cork() {}
  virtual void Uncork() {}
  // `f` runs once if the client disconnects before the response ended.
  virtual void OnClientGone(std::function<void()> f) = 0;
  // `f` runs once when Buffered() next falls to 0 (for backpressure).
  virtual void OnDrained(std::function<void()> f) = 0;
  // The loop this connection lives on (for upstream calls).
  virtual Loop* loop() = 0;
};
using ResponderPtr = std::shared_ptr<Responder>;
using Handler = std::function<void(Request request, ResponderPtr responder)>;

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0 = any free port (see Server::port)
  // Event loops (threads). Choice: 2 by default, the machine's core count.
  int threads = 2;
  // A request whose header section is larger gets 431 and the connection
  // closes. Choice: 64 KiB (agents send long user-agent / beta headers).
  uint64_t max_header_bytes = 64 << 10;
  // A request whose body is larger gets 413 and the connection closes.
  // Choice: 32 MiB, the largest request the LLM providers accept.
  uint64_t max_body_bytes = 32ull << 20;
  // An idle keep-alive connection is closed after this long.
  double idle_timeout_seconds = 120;
  // A request must arrive whole within this long once it started.
  double read_timeout_seconds = 60;
  // A write to the client that makes no progress this long closes it.
  double write_timeout_seconds = 60;
  // Connections beyond this are closed as soon as they are accepted.
  // 0 (the default): derived from the soft RLIMIT_NOFILE, leaving headroom
  // for upstream sockets, store files and children (DefaultMaxConnections).
  uint32_t max_connections = 0;
  // When accept fails for lack of descriptors (EMFILE / ENFILE) the server
  // waits this long before accepting again (logged once per episode)
  // instead of retrying at once, which spins a core while the listen queue
  // holds a connection it cannot take. Choice: 50 ms.
  double accept_backoff_seconds = 0.05;
  // Answers requests the server cannot hand to the handler (malformed,
  // too large): status, reason and request (its headers may be partial).
  // Default: a plain-text body.
  std::function<void(int status, std::string_view reason,
                     const Request& partial, Responder& out)>
      on_bad_request;
};

class Server {
 public:
  virtual ~Server() = default;
  // The bound port (useful with port 0).
  virtual uint16_t port() const = 0;
  // Runs the loops on this thread and threads-1 more; returns after Stop.
  virtual void Run() = 0;
  // Closes every open connection, a response in progress as if its client
  // left (OnClientGone runs), then stops every loop; Run() returns. A loop
  // busy in a handler stops once that returns. Thread-safe; safe from a
  // signal-handling thread.
  virtual void Stop() = 0;
  // Starts a graceful shutdown: the listening socket closes (new
  // connections are refused), idle keep-alive connections close, and every
  // connection closes once its response in progress (or a request already
  // arriving) is answered, with `connection: close` when its head has not
  // left yet. Run() keeps serving until Stop(); open_connections() falling
  // to 0 says the drain is over. Thread-safe.
  virtual void Drain() {}
  // Connections open now (a gauge for metrics).
  virtual uint64_t open_connections() const = 0;
};

// The connection limit for a soft descriptor limit of `nofile`: half of
// it, at least 16 and at most 4096 (Choice: the other half is headroom
// for one upstream socket per proxied connection, store files, children's
// pipes; 1024 -> 512).
uint32_t DefaultMaxConnections(uint64_t nofile);

// Binds and listens (so port() is valid on return); Run() serves.
// UNAVAILABLE when the address cannot be bound.
Result<std::unique_ptr<Server>> NewServer(const ServerOptions& options,
                                          Handler handler);

// ---------------------------------------------------------------- client

// An upstream origin: "http://host:port/prefix" or "https://host/prefix".
struct Url {
  bool tls = false;
  std::string host;         // without brackets for IPv6
  uint16_t port = 0;        // 80 / 443 unless given
  std::string path_prefix;  // "" or "/prefix" (no trailing '/')
  // "host" or "host:port" for the Host header (port only when not default).
  std::string HostHeader() const;
};
// INVALID_ARGUMENT naming the problem for anything but http(s) URLs with a
// host (no userinfo, query or fragment).
Result<Url> ParseUrl(std::string_view text);

struct ClientRequest {
  std::string method;
  std::string target;  // path + query, appended to the URL's path_prefix
  Headers headers;     // Host and Content-Length are set by the client
  std::string body;
};

// Receives one upstream response, on the loop the call was started on.
class ResponseSink {
 public:
  virtual ~ResponseSink() = default;
  // The request has been written to the upstream socket (a connection
  // taken from the pool or opened). For stage timings; optional.
  virtual void OnSent() {}
  virtual void OnHead(int status, const Headers& headers) = 0;
  // One decoded piece of the body (chunked framing removed). Return false
  // to pause reading until Call::Resume.
  virtual bool OnData(std::string_view data) = 0;
  // Everything decoded from one read of the upstream socket (the head
  // and/or body pieces) has been delivered and the call waits for more
  // bytes; not called when OnData paused the call, nor before OnEnd. A sink
  // that holds its own writes back (Responder::Cork) releases them here.
  virtual void OnBatchEnd() {}
  // Exactly once: OK when the body ended as framed, else why not
  // (UNAVAILABLE "connect ...", "timeout ...", "upstream closed ...").
  // Not called after Cancel.
  virtual void OnEnd(const Status& status) = 0;
};

class Call {
 public:
  virtual ~Call() = default;
  // Ends the call now (closes its connection); the sink hears nothing more.
  virtual void Cancel() = 0;
  // Continues reading after OnData returned false.
  virtual void Resume() = 0;
};

struct ClientOptions {
  double connect_timeout_seconds = 10;
  // From the request written to the response head. Choice: 600 s, an LLM
  // may think for minutes before its first byte.
  double response_timeout_seconds = 600;
  // Between two body reads of a response in progress.
  double idle_timeout_seconds = 600;
  // Idle keep-alive connections kept per loop and origin.
  uint32_t max_idle_per_origin = 64;
  // Idle pooled connections older than this are not reused.
  double max_idle_seconds = 50;
  // Extra CA bundle (PEM) trusted for TLS upstreams, besides the system's.
  std::string ca_file;
  bool verify_peer = true;
};

class Client {
 public:
  virtual ~Client() = default;
  // Starts `request` against `url` on `loop`. The sink is called on that
  // loop. A call on a reused connection that fails before any response
  // byte is retried once on a new connection (the server closed it idle).
  virtual std::shared_ptr<Call> Start(Loop* loop, const Url& url,
                                      ClientRequest request,
                                      std::shared_ptr<ResponseSink> sink) = 0;
  // Closes every pooled idle connection. Call it before the loops their
  // sockets live on are destroyed (a pooled socket must not outlive its
  // loop). Idle connections have no pending operations, so any thread may
  // call it.
  virtual void CloseIdle() = 0;
};

// INVALID_ARGUMENT when ca_file cannot be loaded.
Result<std::unique_ptr<Client>> NewClient(const ClientOptions& options);

// Runs `f` on `loop` after `seconds` unless the returned cancel function
// was called first (cancel is callable on that loop only).
std::function<void()> RunAfter(Loop* loop, double seconds,
                               std::function<void()> f);

// Runs `f` on `loop` soon. Callable from any thread (the way another
// loop's handler answers a request that waits on this one).
void Post(Loop* loop, std::function<void()> f);

// An event loop of its own on a thread it starts, for a client that runs
// outside any server (`toolcache mcp --url`). The loop runs until the
// LoopThread is destroyed; the destructor stops it and joins the thread
// (close the Client's idle connections first: Client::CloseIdle).
// (loop_thread.cc)
class LoopThread {
 public:
  virtual ~LoopThread() = default;
  virtual Loop* loop() = 0;
};
std::unique_ptr<LoopThread> NewLoopThread();

// Seconds on the steady clock (since its epoch), as in Request::head_at.
double SteadySeconds();

// Standard reason phrase ("Not Found"), "" for unknown codes.
std::string_view ReasonPhrase(int status);

// Whether `target` may be appended to an upstream's path prefix (a proxy's
// forwarded request): origin-form (starts with '/'), and no path segment
// that is, raw or percent-encoded in any case, "." or "..", or that holds
// an encoded '/' or a '\' (raw or encoded). Such a target could leave the
// prefix (RFC 3986 section 5.2.4 dot-segment removal at the upstream or a
// hop before it). On false, `why` (when given) says what was found.
bool IsPrefixSafeTarget(std::string_view target, std::string* why = nullptr);

// True for headers a proxy must not forward (RFC 9110 section 7.6.1:
// Connection, Keep-Alive, Proxy-*, TE, Trailer, Transfer-Encoding,
// Upgrade), and for Host and Content-Length, which are set per hop.
bool IsHopByHop(std::string_view name);

// A server process around its event loops. BlockServerSignals() blocks
// SIGTERM, SIGINT, SIGHUP and SIGUSR1 in the calling thread (threads started
// later inherit the mask) and ignores SIGPIPE: call it before the server
// starts its loops. ServeUntilSignal() then runs `run` (blocking) while one
// thread waits for those signals: SIGTERM/SIGINT/SIGHUP call `stop`, SIGUSR1
// writes `stats()` to `stats_path` (atomically, when not empty), as does the
// end of `run`. (run.cc)
void BlockServerSignals();
void ServeUntilSignal(const std::function<void()>& run,
                      const std::function<void()>& stop,
                      const std::function<std::string()>& stats,
                      const std::string& stats_path);

}  // namespace toolcache::http

#endif  // TOOLCACHE_SRC_HTTP_HTTP_H_
