// Invariants:
// - A Connection and everything it touches run on its Loop's one thread; the
//   only cross-thread entry points are Server::Stop and the connection count
//   (atomic).
// - At most one read is pending on a socket. While no request is being read
//   the connection keeps a "watch" read pending: it detects a client that
//   went away mid-response and collects the first bytes of the next
//   (pipelined) request into buffer_, which the next parse starts from.
//   The watch (and a head read) waits for readiness without a speculative
//   read only when drained_ says the last read, in the same handler,
//   emptied the socket; otherwise it reads speculatively, so bytes whose
//   readiness event was already consumed are never left unread.
// - Response bytes leave in the order they were queued; one write is pending
//   at a time. A response is complete when Send's bytes or Finish's last
//   chunk are written; only then is the next request read.
// - Handler callbacks (OnClientGone / OnDrained) are cleared when the
//   response ends or the connection closes, so no reference cycle outlives
//   a request.
// - Server::Stop closes every connection on its own loop before the loop
//   stops, a response in progress with OnClientGone: nothing a handler
//   started for a request outlives the loops.
// - Once the server drains (Server::Drain) no connection is accepted, and
//   a connection never starts another request: it closes when idle, or
//   after the response in progress (keep_alive_ is cleared).
// - A body with a Content-Length is read into direct_body_ (the parser
//   holds the header only); chunked bodies go through the parser.
// - No byte reaches the parser before the framing rules (framing.h) have
//   accepted the whole head: a request whose body length is ambiguous is
//   answered 400/501 and its connection closes, so what follows it is
//   never read as a request (RFC 9112 section 6.3).
// - A head the framing rules accepted is read by LeanParseHead
//   (lean_head.h) when it has the common shape (GET/POST, HTTP/1.1, plain
//   fields, no Connection but "keep-alive", no Transfer-Encoding /
//   Upgrade), else by Beast; lean_ says which, and
//   the lean form gives the request Beast would (differential test
//   HttpServer.TheLeanHeadParseGivesWhatBeastGives).
// Choice: plain tcp::socket plus our own timers instead of beast::tcp_stream,
// because the watch read must outlive a response without a stream timeout.
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <array>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <charconv>
#include <chrono>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "src/http/asio_internal.h"
#include "src/http/deadline.h"
#include "src/http/field_arena.h"
#include "src/http/framing.h"
#include "src/http/http.h"
#include "src/http/lean_head.h"
#include "src/http/uninit_string.h"

namespace toolcache::http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;

using RequestParser =
    bhttp::request_parser<bhttp::string_body, ArenaAllocator<char>>;

std::chrono::steady_clock::duration Seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(s));
}

class ServerImpl;

class Connection : public std::enable_shared_from_this<Connection>,
                   public Responder {
 public:
  Connection(ServerImpl* server, Loop* loop, tcp::socket socket);
  ~Connection() override;

  void Begin() { ReadRequest(); }
  // The server drains (Server::Drain): close now when idle, else after the
  // response in progress.
  void Drain();
  // The server stops (Server::Stop): close now; a response in progress
  // hears OnClientGone first.
  void Abandon();

  // Responder.
  void Send(int status, Headers headers, std::string body) override;
  void Start(int status, Headers headers) override;
  bool Write(std::string_view data) override;
  void Finish() override;
  void Abort() override;
  size_t Buffered() const override { return out_bytes_; }
  // llmsse: a streamed response's head and pieces leave in one write.
  void Cork() override { corked_ = true; }
  void Uncork() override {
    corked_ = false;
    DoWrite();
  }
  void OnClientGone(std::function<void()> f) override {
    if (gone_) {
      if (f) f();
      return;
    }
    on_gone_ = std::move(f);
  }
  // A callback registered after the queue already emptied (the direct
  // write in DoWrite took every byte, nothing in flight) would never run:
  // it is then run from a posted handler.
  void OnDrained(std::function<void()> f) override {
    on_drained_ = std::move(f);
    if (on_drained_ && !writing_ && out_.empty() &&
        phase_ == Phase::kResponding) {
      PostDoWrite();
    }
  }
  Loop* loop() override { return loop_; }

 private:
  enum class Phase { kReading, kResponding, kClosed };

  void ReadRequest();
  void ReadHead();
  void ReadBodyDirect(size_t length);
  void OnRequest(beast::error_code ec);
  void Watch();
  bool ReadNow(beast::error_code& ec);
  void ArmReadDeadline(double seconds);
  void Head(int status, const Headers& headers, bool chunked,
            size_t content_length, std::string* out);
  void Queue(std::string bytes);
  // from_handler: called from a posted or completion handler, where the
  // end of a response (ResponseDone, OnDrained) may run; from Queue, Uncork
  // or Finish it is posted instead, never run inside the caller.
  void DoWrite(bool from_handler = false);
  void PostDoWrite();
  void ResponseDone();
  void Close();
  void ClientGone();
  void BadRequest(int status, std::string_view reason);

  ServerImpl* server_;
  Loop* loop_;
  tcp::socket socket_;
  Deadline read_deadline_;
  Deadline write_deadline_;
  beast::flat_buffer buffer_;
  FieldArena arena_;  // parser_'s header fields (declared before it)
  std::optional<RequestParser> parser_;
  std::optional<HeadScanner> scanner_;  // the current request's head
  // The current request's head was read by LeanParseHead into lean_
  // (parser_ holds nothing of it) until OnRequest hands it on.
  bool lean_ = false;
  Request lean_request_;
  Phase phase_ = Phase::kReading;
  uint64_t served_ = 0;  // requests handed to the handler
  double head_at_ = 0;   // the current request's header arrived
  bool direct_ = false;  // the body is read into direct_body_
  std::string direct_body_;
  bool reading_ = false;          // a parse read is pending
  bool reading_started_ = false;  // the read deadline of this request is set
  bool watching_ = false;         // a watch read is pending
  // The last read of the current handler emptied the socket (a short read
  // or EAGAIN): no readiness event has been consumed since, so waiting for
  // the next one cannot miss bytes. Cleared by every completion that did
  // not come from such a read (a write, a body read).
  bool drained_ = false;
  bool writing_ = false;
  // The handler is running inside OnRequest (on this loop's stack).
  bool in_handler_ = false;
  // A response the handler completed while in_handler_ is ended by
  // OnRequest after the handler returns, instead of by a posted handler.
  bool done_deferred_ = false;
  bool gone_ = false;
  bool started_ = false;   // Start() called for the current response
  bool finished_ = false;  // the current response is fully queued
  bool chunked_ = false;
  bool corked_ = false;        // Queue holds bytes back until Uncork
  bool head_request_ = false;  // the current request is HEAD: no body out
  bool keep_alive_ = true;
  int version_ = 11;
  std::deque<std::string> out_;
  size_t out_bytes_ = 0;
  std::function<void()> on_gone_;
  std::function<void()> on_drained_;
};

class ServerImpl final : public Server {
 public:
  ServerImpl(const ServerOptions& o, Handler h) : options_(o), handler_(h) {
    if (options_.max_connections == 0) {
      rlimit rl{};
      const uint64_t nofile =
          getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
              ? static_cast<uint64_t>(rl.rlim_cur)
              : 8192;
      options_.max_connections = DefaultMaxConnections(nofile);
    }
    const int n = std::max(1, o.threads);
    for (int i = 0; i < n; ++i) loops_.push_back(std::make_unique<Loop>());
    for (auto& l : loops_) {
      guards_.emplace_back(net::make_work_guard(l->ioc));
    }
  }

  Status Listen() {
    beast::error_code ec;
    auto addr = net::ip::make_address(options_.host, ec);
    if (ec) {
      return InvalidArgument("bad listen address '" + options_.host +
                             "': " + ec.message());
    }
    tcp::endpoint ep(addr, options_.port);
    acceptor_.emplace(loops_[0]->ioc);
    acceptor_->open(ep.protocol(), ec);
    if (!ec) acceptor_->set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_->bind(ep, ec);
    if (!ec) acceptor_->listen(net::socket_base::max_listen_connections, ec);
    if (ec) {
      return Unavailable("cannot listen on " + options_.host + ":" +
                         std::to_string(options_.port) + ": " + ec.message());
    }
    port_ = acceptor_->local_endpoint().port();
    Accept();
    return Status::Ok();
  }

  uint16_t port() const override { return port_; }

  void Run() override {
    std::vector<std::thread> threads;
    for (size_t i = 1; i < loops_.size(); ++i) {
      threads.emplace_back([this, i] { loops_[i]->ioc.run(); });
    }
    loops_[0]->ioc.run();
    for (auto& t : threads) t.join();
  }

  // Each loop first closes its connections (a response in progress hears
  // OnClientGone, so its handler cancels what it started and lets go of
  // the responder), then stops. Choice: a plain ioc.stop() left a handler
  // and its upstream call, which own each other until one of them ends
  // (the proxy's Exchange and its http::Call), alive past the loops: never
  // freed (LeakSanitizer, e2e_proxy_ops' short drain; Session 16).
  void Stop() override {
    for (auto& l : loops_) {
      net::post(l->ioc, [this, loop = l.get()] {
        CloseConnections(loop);
        loop->ioc.stop();
      });
    }
  }

  void Drain() override {
    if (draining_.exchange(true)) return;
    net::post(loops_[0]->ioc, [this] {
      beast::error_code ec;
      if (acceptor_) acceptor_->close(ec);
    });
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [ptr, entry] : connections_) {
      net::post(entry.loop->ioc, [weak = entry.weak] {
        if (auto c = weak.lock()) c->Drain();
      });
    }
  }

  bool draining() const { return draining_.load(); }

  // Connections register once they run on their loop, so Drain can reach
  // them; a connection unregisters in its destructor.
  void Register(Connection* c, Loop* loop, std::weak_ptr<Connection> weak) {
    std::lock_guard<std::mutex> lock(mu_);
    connections_[c] = {loop, std::move(weak)};
  }
  void Unregister(Connection* c) {
    std::lock_guard<std::mutex> lock(mu_);
    connections_.erase(c);
  }

  // On `loop`'s thread: closes every connection of that loop (Stop).
  void CloseConnections(Loop* loop) {
    std::vector<std::weak_ptr<Connection>> on_loop;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& [ptr, entry] : connections_) {
        if (entry.loop == loop) on_loop.push_back(entry.weak);
      }
    }
    for (auto& weak : on_loop) {
      if (auto c = weak.lock()) c->Abandon();
    }
  }

  uint64_t open_connections() const override { return open_.load(); }

  const ServerOptions& options() const { return options_; }
  const Handler& handler() const { return handler_; }
  std::atomic<uint64_t>& open() { return open_; }

 private:
  void Accept() {
    Loop* loop = loops_[next_++ % loops_.size()].get();
    acceptor_->async_accept(loop->ioc, [this, loop](beast::error_code ec,
                                                    tcp::socket socket) {
      if (ec == net::error::operation_aborted || draining_.load()) return;
      if (ec == net::error::no_descriptors || ec.value() == ENFILE) {
        // Out of descriptors: the pending connection stays in the listen
        // queue and accept would fail again at once (a busy loop). Wait,
        // then retry; log once per episode.
        if (!starved_) {
          starved_ = true;
          spdlog::warn(
              "accept: {} ({} connections open, limit {}); pausing accepts "
              "{} ms at a time until descriptors free up",
              ec.message(), open_.load(), options_.max_connections,
              static_cast<int>(options_.accept_backoff_seconds * 1000));
        }
        RunAfter(loops_[0].get(), options_.accept_backoff_seconds, [this] {
          if (!draining_.load() && acceptor_ && acceptor_->is_open()) Accept();
        });
        return;
      }
      if (starved_ && !ec) {
        starved_ = false;
        spdlog::info("accept: descriptors available again");
      }
      if (!ec) {
        if (open_.load() >= options_.max_connections) {
          beast::error_code ignored;
          socket.close(ignored);
        } else {
          socket.set_option(tcp::no_delay(true), ec);
          // llmsse: DoWrite offers bytes with a non-blocking write_some.
          socket.non_blocking(true, ec);
          // The connection starts on its own loop.
          net::post(loop->ioc, [this, loop, s = std::move(socket)]() mutable {
            auto c = std::make_shared<Connection>(this, loop, std::move(s));
            Register(c.get(), loop, c);
            c->Begin();
          });
        }
      }
      Accept();
    });
  }

  ServerOptions options_;
  Handler handler_;
  // Declared before loops_: connections destroyed with a loop's pending
  // handlers unregister themselves and count themselves out (open_).
  std::atomic<bool> draining_{false};
  std::atomic<uint64_t> open_{0};
  struct Registered {
    Loop* loop;
    std::weak_ptr<Connection> weak;
  };
  std::mutex mu_;
  std::unordered_map<Connection*, Registered> connections_;  // GUARDED_BY(mu_)
  std::vector<std::unique_ptr<Loop>> loops_;
  std::vector<net::executor_work_guard<net::io_context::executor_type>> guards_;
  std::optional<tcp::acceptor> acceptor_;
  size_t next_ = 0;
  bool starved_ = false;  // accept failed for lack of descriptors (loop 0)
  uint16_t port_ = 0;
};

Connection::Connection(ServerImpl* server, Loop* loop, tcp::socket socket)
    : server_(server),
      loop_(loop),
      socket_(std::move(socket)),
      read_deadline_(loop->ioc),
      write_deadline_(loop->ioc) {
  ++server_->open();
  // ReadNow's synchronous reads must return EAGAIN, not block.
  beast::error_code ec;
  socket_.non_blocking(true, ec);
}

Connection::~Connection() {
  server_->Unregister(this);
  --server_->open();
}

void Connection::Drain() {
  keep_alive_ = false;  // the response in progress is the last one
  if (phase_ != Phase::kReading) return;
  // Idle between requests (nothing of the next one has arrived): close.
  const bool arriving =
      buffer_.size() > 0 || lean_ || (parser_ && parser_->got_some());
  if (!arriving) Close();
}

void Connection::Abandon() {
  if (phase_ == Phase::kResponding && !gone_) {
    ClientGone();
  } else {
    Close();
  }
}

void Connection::ArmReadDeadline(double seconds) {
  // Choice: a client too slow to send its request (or idle past the
  // keep-alive timeout) is closed without a response.
  read_deadline_.Set(Seconds(seconds),
                     [self = shared_from_this()] { self->Close(); });
}

void Connection::ReadRequest() {
  if (phase_ == Phase::kClosed) return;
  // A new request (or the rest of one) is read only after the previous
  // answer went out: the HEAD flag of that answer no longer applies (a 400
  // for the next request's framing must carry its body).
  head_request_ = false;
  if (served_ > 0 && buffer_.size() == 0 && server_->draining()) {
    Close();
    return;
  }
  const ServerOptions& o = server_->options();
  const bool fresh = phase_ != Phase::kReading || !reading_started_;
  phase_ = Phase::kReading;
  // Idle until the first byte, then the whole request within the read
  // timeout: approximated by the longer of the two for the whole read.
  if (fresh) {
    reading_started_ = true;
    ArmReadDeadline(buffer_.size() > 0 ? o.read_timeout_seconds
                                       : std::max(o.idle_timeout_seconds,
                                                  o.read_timeout_seconds));
  }
  if (watching_) return;  // the watch read completes into buffer_ first
  parser_.reset();        // its fields go back to the arena first
  arena_.Reset();
  parser_.emplace(std::piecewise_construct, std::make_tuple(),
                  std::make_tuple(ArenaAllocator<char>(&arena_)));
  parser_->header_limit(static_cast<uint32_t>(
      std::min<uint64_t>(o.max_header_bytes, UINT32_MAX)));
  parser_->body_limit(o.max_body_bytes);
  scanner_.emplace(static_cast<size_t>(o.max_header_bytes));
  ReadHead();
}

// The head is read into buffer_ and judged by the framing rules
// (framing.h) before the parser sees it; only a head they accept is handed
// to the parser, whose body read follows.
void Connection::ReadHead() {
  if (phase_ == Phase::kClosed) return;
  const std::string_view have(static_cast<const char*>(buffer_.data().data()),
                              buffer_.size());
  const HeadScan scan = scanner_->Scan(have);
  if (scan.verdict == FramingVerdict::kIncomplete) {
    // Read what the kernel holds now; wait for the reactor only when it
    // holds nothing (see ReadNow).
    beast::error_code ec;
    if (ReadNow(ec)) {
      ReadHead();
      return;
    }
    if (ec != net::error::would_block) {
      head_at_ = SteadySeconds();
      OnRequest(ec);
      return;
    }
    reading_ = true;
    socket_.async_wait(tcp::socket::wait_read,
                       [self = shared_from_this()](beast::error_code ec2) {
                         self->reading_ = false;
                         if (ec2) {
                           self->head_at_ = SteadySeconds();
                           self->OnRequest(ec2);
                           return;
                         }
                         self->ReadHead();
                       });
    return;
  }
  head_at_ = SteadySeconds();
  beast::error_code ec;
  if (scan.verdict != FramingVerdict::kOk) {
    // What parses of the head goes to the bad-request hook (its error
    // shape may depend on the path); the verdict decides the answer.
    parser_->put(net::buffer(buffer_.data()), ec);
    if (scan.verdict == FramingVerdict::kHeadTooLarge) {
      BadRequest(431, "request header section larger than the limit of " +
                          std::to_string(server_->options().max_header_bytes) +
                          " bytes");
    } else {
      BadRequest(FramingStatus(scan.verdict),
                 std::string(FramingReason(scan.verdict)));
    }
    return;
  }
  buffer_.consume(scan.head_begin);
  const ServerOptions& o = server_->options();
  uint64_t lean_length = 0;
  const size_t head_size = scan.head_end - scan.head_begin;
  if (head_size <= o.max_header_bytes / 2 &&
      LeanParseHead(
          std::string_view(static_cast<const char*>(buffer_.data().data()),
                           head_size),
          o.max_body_bytes, &lean_request_, &lean_length)) {
    lean_ = true;
    buffer_.consume(head_size);
    if (lean_length == 0) {
      OnRequest({});
    } else {
      ReadBodyDirect(static_cast<size_t>(lean_length));
    }
    return;
  }
  const size_t used = parser_->put(
      net::buffer(buffer_.data().data(), scan.head_end - scan.head_begin), ec);
  buffer_.consume(used);
  if (!ec && !parser_->is_header_done()) ec = bhttp::error::partial_message;
  if (ec) {
    if (ec == bhttp::error::partial_message) {
      // Cannot happen for a head the scanner ended; answered, not hung.
      BadRequest(400, "malformed HTTP request head");
      return;
    }
    OnRequest(ec);
    return;
  }
  if (parser_->is_done()) {
    OnRequest({});
    return;
  }
  const auto length = parser_->content_length();
  if (length && !parser_->chunked()) {
    ReadBodyDirect(static_cast<size_t>(*length));
    return;
  }
  reading_ = true;
  bhttp::async_read(socket_, buffer_, *parser_,
                    [self = shared_from_this()](beast::error_code ec2, size_t) {
                      self->reading_ = false;
                      self->drained_ = false;
                      self->OnRequest(ec2);
                    });
}

// A body of known length is read straight into its final string, in reads
// as large as the kernel has data for (Choice: the parser's path reads
// through buffer_ a few KiB at a time, ~70 reads and wake-ups for a 200 KB
// body, and copies every byte once more). The header's body limit was
// checked by the parser.
void Connection::ReadBodyDirect(size_t length) {
  direct_body_.clear();
  direct_body_.reserve(length + kBodyPadding);
  // sse200: every byte is written below (the copy from buffer_, then the
  // socket read) before the request sees it; resize() zeroed them first
  // (~205,000 instructions per 200 KB body, callgrind).
  ResizeForOverwrite(&direct_body_, length);
  const size_t have = std::min(buffer_.size(), length);
  net::buffer_copy(net::buffer(direct_body_.data(), have), buffer_.data());
  buffer_.consume(have);
  direct_ = true;
  if (have == length) {
    reading_ = false;
    OnRequest({});
    return;
  }
  // llmsse: Asio's default condition (transfer_all) reads at most 64 KiB
  // per call; this one asks for the rest at once (strace, 200 KB body: 4
  // reads and wake-ups, now 1 when the bytes are there).
  net::async_read(
      socket_, net::buffer(direct_body_.data() + have, length - have),
      [](const beast::error_code& ec, size_t) -> size_t {
        return ec ? 0 : size_t{1} << 30;
      },
      [self = shared_from_this()](beast::error_code ec, size_t) {
        self->reading_ = false;
        self->drained_ = false;
        // The client went away mid-body.
        if (ec == net::error::eof) ec = bhttp::error::partial_message;
        self->OnRequest(ec);
      });
}

void Connection::OnRequest(beast::error_code ec) {
  const bool direct = direct_;
  direct_ = false;
  const bool lean = lean_;
  read_deadline_.Clear();
  reading_started_ = false;
  if (phase_ == Phase::kClosed) return;
  if (ec) {
    if (ec == bhttp::error::end_of_stream || ec == net::error::eof ||
        ec == net::error::operation_aborted ||
        ec == net::error::connection_reset || !socket_.is_open()) {
      Close();
      return;
    }
    if (ec == bhttp::error::body_limit) {
      BadRequest(413, "request body larger than the limit of " +
                          std::to_string(server_->options().max_body_bytes) +
                          " bytes");
    } else if (ec == bhttp::error::header_limit) {
      BadRequest(431, "request header section larger than the limit of " +
                          std::to_string(server_->options().max_header_bytes) +
                          " bytes");
    } else if (ec == bhttp::error::partial_message) {
      Close();  // the client went away mid-request
    } else {
      BadRequest(400, "malformed HTTP request: " + ec.message());
    }
    lean_ = false;
    return;
  }
  lean_ = false;
  Request req;
  if (lean) {
    req.method = std::move(lean_request_.method);
    req.target = std::move(lean_request_.target);
    req.version = 11;
    req.headers = std::move(lean_request_.headers);
    // HTTP/1.1 without "Connection: close" (LeanParseHead).
    keep_alive_ = !server_->draining();
    version_ = 11;
    head_request_ = false;
    if (direct) {
      req.body = std::move(direct_body_);
      direct_body_ = std::string();
    }
  }
  req.head_at = head_at_;
  req.received_at = SteadySeconds();
  if (!lean) {
    req.headers.reserve(16);
    // With a direct body the parser holds the header only.
    auto& msg = parser_->get();
    req.method = std::string(msg.method_string());
    req.target = std::string(msg.target());
    req.version = msg.version();
    for (const auto& f : msg) {
      req.headers.push_back(
          {std::string(f.name_string()), std::string(f.value())});
    }
    keep_alive_ = msg.keep_alive() && !server_->draining();
    version_ = msg.version();
    head_request_ = msg.method() == bhttp::verb::head;
    if (direct) {
      req.body = std::move(direct_body_);
      direct_body_ = std::string();
    } else {
      req.body = std::move(msg.body());
    }
  }
  parser_.reset();
  if (req.body.capacity() < req.body.size() + kBodyPadding) {
    req.body.reserve(req.body.size() + kBodyPadding);
  }
  ++served_;
  phase_ = Phase::kResponding;
  started_ = finished_ = gone_ = false;
  Watch();
  in_handler_ = true;
  server_->handler()(std::move(req),
                     std::static_pointer_cast<Responder>(shared_from_this()));
  in_handler_ = false;
  if (done_deferred_) {
    // The handler answered before returning (a hit from memory): end the
    // response here, outside the caller of Finish/Send, instead of in a
    // posted handler, which costs the loop one more epoll_wait per
    // request. Only when a watch is pending on an empty buffer: the next
    // request then arrives through the watch's completion, never inside
    // this call, so a pipelined run cannot nest (otherwise it is posted).
    done_deferred_ = false;
    writing_ = false;
    if (watching_ && buffer_.size() == 0) {
      DoWrite(/*from_handler=*/true);
    } else {
      PostDoWrite();
    }
  }
}

void Connection::Watch() {
  if (watching_ || phase_ == Phase::kClosed) return;
  // Choice: no watch while bytes of a pipelined request wait in buffer_:
  // the client is clearly alive, and a pending watch read would hold the
  // next request back until the client sends more.
  if (buffer_.size() > 0) return;
  watching_ = true;
  auto done = [self = shared_from_this()](beast::error_code ec) {
    self->watching_ = false;
    if (ec) {
      if (self->phase_ == Phase::kResponding) {
        self->ClientGone();
      } else {
        self->Close();
      }
      return;
    }
    if (self->phase_ == Phase::kReading) {
      self->ReadRequest();
    } else {
      self->Watch();
    }
  };
  if (!drained_) {
    // The socket may hold bytes whose readiness the reactor already
    // reported: read them (or learn that there are none) first.
    socket_.async_read_some(buffer_.prepare(4096),
                            [self = shared_from_this(), done = std::move(done)](
                                beast::error_code ec, size_t n) mutable {
                              if (!ec) {
                                self->buffer_.commit(n);
                                self->drained_ = n < 4096;
                              }
                              done(ec);
                            });
    return;
  }
  // Choice: the last read (in this same handler, so no readiness event was
  // consumed since) emptied the socket: wait for readiness without a read
  // that would only say EAGAIN, and read when the reactor says readable.
  socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this(),
                                              done = std::move(done)](
                                                 beast::error_code ec) mutable {
    if (!ec) {
      self->watching_ = false;  // ReadNow's reads are synchronous
      if (!self->ReadNow(ec) && ec == net::error::would_block) {
        ec = {};  // a spurious wake-up: wait again
        self->drained_ = true;
        if (self->phase_ == Phase::kClosed) return;
        self->Watch();
        return;
      }
    }
    done(ec);
  });
}

// One non-blocking read into buffer_ of what the kernel holds now. True
// when bytes arrived (drained_ says whether they were all it had); false
// with `ec` set otherwise (would_block: nothing there yet; eof: closed).
bool Connection::ReadNow(beast::error_code& ec) {
  constexpr size_t kChunk = 16384;
  const size_t n = socket_.read_some(buffer_.prepare(kChunk), ec);
  if (ec) {
    drained_ = ec == net::error::would_block;
    return false;
  }
  buffer_.commit(n);
  drained_ = n < kChunk;
  return true;
}

void Connection::ClientGone() {
  gone_ = true;
  auto f = std::move(on_gone_);
  on_gone_ = nullptr;
  on_drained_ = nullptr;
  if (f) f();
  Close();
}

void Connection::Head(int status, const Headers& headers, bool chunked,
                      size_t content_length, std::string* out) {
  // Choice: string_view literals, so no append measures its text (strlen
  // per piece was ~700 instructions of a small reply, callgrind).
  using namespace std::string_view_literals;
  std::string_view reason = ReasonPhrase(status);
  out->append(version_ == 10 ? "HTTP/1.0 "sv : "HTTP/1.1 "sv);
  char digits[24];
  out->append(digits,
              std::to_chars(digits, digits + sizeof digits, status).ptr);
  out->push_back(' ');
  out->append(reason.empty() ? "Unknown"sv : reason);
  out->append("\r\n"sv);
  for (const Header& h : headers) {
    // The three framing names are 10, 14 and 17 bytes long: other lengths
    // skip the comparisons.
    const size_t len = h.name.size();
    if ((len == 10 || len == 14 || len == 17) &&
        (EqualsIgnoreCase(h.name, "content-length") ||
         EqualsIgnoreCase(h.name, "transfer-encoding") ||
         EqualsIgnoreCase(h.name, "connection"))) {
      continue;
    }
    out->append(h.name);
    out->append(": "sv);
    out->append(h.value);
    out->append("\r\n"sv);
  }
  if (chunked) {
    out->append("transfer-encoding: chunked\r\n"sv);
  } else if (content_length != SIZE_MAX) {
    out->append("content-length: "sv);
    out->append(
        digits,
        std::to_chars(digits, digits + sizeof digits, content_length).ptr);
    out->append("\r\n"sv);
  }
  if (!keep_alive_) {
    out->append("connection: close\r\n"sv);
  } else if (version_ == 10) {
    out->append("connection: keep-alive\r\n"sv);
  }
  out->append("\r\n"sv);
}

void Connection::Send(int status, Headers headers, std::string body) {
  if (phase_ != Phase::kResponding || started_ || gone_) return;
  started_ = finished_ = true;
  corked_ = false;
  std::string head;
  // One allocation: a body below 16 KiB is appended to the head below.
  head.reserve(256 + headers.size() * 48 +
               (body.size() < 16384 && !head_request_ ? body.size() : 0));
  Head(status, headers, false, body.size(), &head);
  // A HEAD answer carries the length the body would have had, and no body
  // (RFC 9110 section 9.3.2).
  if (head_request_) {
    Queue(std::move(head));
    return;
  }
  if (body.size() < 16384) {
    head += body;
    Queue(std::move(head));
  } else {
    Queue(std::move(head));
    Queue(std::move(body));
  }
}

void Connection::Start(int status, Headers headers) {
  if (phase_ != Phase::kResponding || started_ || gone_) return;
  started_ = true;
  std::string head;
  if (head_request_) {
    // No body follows a HEAD answer: keep the Content-Length it was given
    // (the upstream's), no chunked framing, and the connection reusable.
    chunked_ = false;
    size_t length = SIZE_MAX;
    const std::string_view cl = FindHeader(headers, "content-length");
    if (!cl.empty() && cl.size() <= 19 &&
        cl.find_first_not_of("0123456789") == std::string_view::npos) {
      length = static_cast<size_t>(std::stoull(std::string(cl)));
    }
    Head(status, headers, false, length, &head);
    Queue(std::move(head));
    return;
  }
  chunked_ = version_ >= 11;
  if (!chunked_) keep_alive_ = false;  // HTTP/1.0: the close ends the body
  Head(status, headers, chunked_, SIZE_MAX, &head);
  Queue(std::move(head));
}

bool Connection::Write(std::string_view data) {
  if (gone_ || phase_ != Phase::kResponding) return false;
  if (!started_ || finished_ || data.empty()) return !gone_;
  if (head_request_) return true;  // a HEAD answer has no body
  std::string chunk;
  if (chunked_) {
    char size[20];
    int n = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    chunk.reserve(data.size() + static_cast<size_t>(n) + 2);
    chunk.append(size, static_cast<size_t>(n));
    chunk.append(data);
    chunk.append("\r\n");
  } else {
    chunk.assign(data);
  }
  Queue(std::move(chunk));
  return true;
}

void Connection::Finish() {
  if (phase_ != Phase::kResponding || !started_ || finished_) return;
  finished_ = true;
  corked_ = false;
  if (chunked_) {
    Queue("0\r\n\r\n");
  } else {
    Queue(std::string());  // marks the end for DoWrite
  }
}

void Connection::Abort() {
  if (phase_ == Phase::kClosed) return;
  on_gone_ = nullptr;
  on_drained_ = nullptr;
  Close();
}

void Connection::Queue(std::string bytes) {
  if (phase_ == Phase::kClosed) return;
  out_bytes_ += bytes.size();
  out_.push_back(std::move(bytes));
  if (!corked_) DoWrite();
}

void Connection::PostDoWrite() {
  writing_ = true;
  if (in_handler_) {  // OnRequest ends it once the handler has returned
    done_deferred_ = true;
    return;
  }
  net::post(socket_.get_executor(), [self = shared_from_this()] {
    self->writing_ = false;
    self->DoWrite(/*from_handler=*/true);
  });
}

void Connection::DoWrite(bool from_handler) {
  if (writing_ || phase_ == Phase::kClosed) return;
  while (!out_.empty() && out_.front().empty()) out_.pop_front();
  if (out_.empty()) {
    if (!from_handler && (finished_ || on_drained_)) {
      PostDoWrite();
      return;
    }
    if (finished_) {
      ResponseDone();
    } else if (on_drained_) {
      auto f = std::move(on_drained_);
      on_drained_ = nullptr;
      f();
    }
    return;
  }
  // llmsse: the queued bytes are first offered to the socket at once; what
  // it takes whole needs no completion handler (Asio's round trip was one
  // more epoll_wait and handler per write: a streamed response writes once
  // per upstream read). The end of a response (ResponseDone, OnDrained)
  // runs from a posted or completion handler, never inside the caller of
  // Queue, Uncork or Finish (from_handler).
  {
    std::array<net::const_buffer, 16> now{};  // unused slots stay empty
    for (size_t i = 0; i < out_.size() && i < now.size(); ++i) {
      now[i] = net::buffer(out_[i]);
    }
    beast::error_code ec;
    size_t n = socket_.write_some(now, ec);
    if (ec) n = 0;  // EAGAIN and errors: async_write below meets them
    out_bytes_ -= n;
    while (!out_.empty() && n >= out_.front().size()) {
      n -= out_.front().size();
      out_.pop_front();
    }
    if (n > 0) out_.front().erase(0, n);
    if (out_.empty()) {
      if (finished_ || on_drained_) PostDoWrite();
      return;
    }
  }
  writing_ = true;
  // The client stopped reading.
  write_deadline_.Set(Seconds(server_->options().write_timeout_seconds),
                      [self = shared_from_this()] { self->ClientGone(); });
  // Gather up to 16 queued pieces into one write.
  std::vector<net::const_buffer> bufs;
  for (size_t i = 0; i < out_.size() && i < 16; ++i) {
    bufs.emplace_back(net::buffer(out_[i]));
  }
  net::async_write(socket_, bufs,
                   [self = shared_from_this(), count = bufs.size()](
                       beast::error_code ec, size_t n) {
                     self->writing_ = false;
                     self->drained_ = false;
                     self->write_deadline_.Clear();
                     if (ec) {
                       self->ClientGone();
                       return;
                     }
                     for (size_t i = 0; i < count; ++i) self->out_.pop_front();
                     self->out_bytes_ -= n;
                     self->DoWrite(/*from_handler=*/true);
                   });
}

void Connection::ResponseDone() {
  on_gone_ = nullptr;
  on_drained_ = nullptr;
  started_ = finished_ = false;
  if (!keep_alive_) {
    beast::error_code ec;
    socket_.shutdown(tcp::socket::shutdown_send, ec);
    Close();
    return;
  }
  ReadRequest();
}

void Connection::BadRequest(int status, std::string_view reason) {
  keep_alive_ = false;
  phase_ = Phase::kResponding;
  started_ = finished_ = false;
  Request partial;
  if (lean_) {  // a lean head whose body failed: what it said
    partial.method = lean_request_.method;
    partial.target = lean_request_.target;
    partial.headers = lean_request_.headers;
    parser_.reset();
  } else if (parser_) {
    const auto& msg = parser_->get();
    partial.method = std::string(msg.method_string());
    partial.target = std::string(msg.target());
    for (const auto& f : msg) {
      partial.headers.push_back(
          {std::string(f.name_string()), std::string(f.value())});
    }
    parser_.reset();
  }
  const auto& hook = server_->options().on_bad_request;
  if (hook) {
    hook(status, reason, partial, *this);
  }
  if (!started_) {
    Send(status, {{"content-type", "text/plain; charset=utf-8"}},
         std::string(reason) + "\n");
  }
}

void Connection::Close() {
  if (phase_ == Phase::kClosed) return;
  phase_ = Phase::kClosed;
  on_gone_ = nullptr;
  on_drained_ = nullptr;
  read_deadline_.Stop();
  write_deadline_.Stop();
  beast::error_code ec;
  socket_.shutdown(tcp::socket::shutdown_both, ec);
  socket_.close(ec);
}

}  // namespace

uint32_t DefaultMaxConnections(uint64_t nofile) {
  return static_cast<uint32_t>(std::clamp<uint64_t>(nofile / 2, 16, 4096));
}

Result<std::unique_ptr<Server>> NewServer(const ServerOptions& options,
                                          Handler handler) {
  auto server = std::make_unique<ServerImpl>(options, std::move(handler));
  Status s = server->Listen();
  if (!s.ok()) return s;
  return std::unique_ptr<Server>(std::move(server));
}

double SteadySeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::function<void()> RunAfter(Loop* loop, double seconds,
                               std::function<void()> f) {
  auto timer = std::make_shared<net::steady_timer>(loop->ioc);
  timer->expires_after(Seconds(seconds));
  timer->async_wait([timer, f = std::move(f)](beast::error_code ec) {
    if (!ec) f();
  });
  return [timer] { timer->cancel(); };
}

void Post(Loop* loop, std::function<void()> f) {
  net::post(loop->ioc, std::move(f));
}

}  // namespace toolcache::http
