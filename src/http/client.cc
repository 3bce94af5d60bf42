// Invariants:
// - A CallImpl and its connection run on the Loop it was started on; the
//   pool is the only state shared across loops (one mutex), and a pooled
//   connection is only handed out to a call on its own loop.
// - At most one operation (connect, handshake, write, read) and one
//   deadline (deadline.h) are pending per call; the deadline closes the
//   socket, so a stuck peer ends the pending operation with an error. End
//   and Cancel stop it, releasing the call.
// - The sink hears OnHead at most once, then OnData pieces, then OnEnd
//   exactly once, unless the call was cancelled (then nothing more).
// - A connection goes back to the pool only after its response ended as
//   framed, the upstream allowed keep-alive, no byte past the response was
//   read and the call was not cancelled.
// - Each read of the socket is parsed whole before the next read: the sink
//   hears one OnData per read (pieces of up to 32 KiB), then OnBatchEnd.
#include <openssl/ssl.h>

#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <chrono>
#include <map>
#include <mutex>
#include <tuple>

#include "src/http/asio_internal.h"
#include "src/http/deadline.h"
#include "src/http/field_arena.h"
#include "src/http/http.h"

namespace toolcache::http {
namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

std::chrono::steady_clock::duration Seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(s));
}

// One upstream connection: plain TCP or TLS over TCP.
struct Conn {
  Conn(Loop* l, ssl::context* ctx, bool use_tls)
      : loop(l), tcp_socket(l->ioc), tls(use_tls) {
    if (use_tls) tls_stream.emplace(l->ioc, *ctx);
  }
  tcp::socket& Socket() { return tls ? tls_stream->next_layer() : tcp_socket; }
  void Close() {
    beast::error_code ec;
    Socket().shutdown(tcp::socket::shutdown_both, ec);
    Socket().close(ec);
  }
  template <class F>
  void With(F&& f) {
    if (tls) {
      f(*tls_stream);
    } else {
      f(tcp_socket);
    }
  }

  Loop* loop;
  tcp::socket tcp_socket;
  std::optional<ssl::stream<tcp::socket>> tls_stream;
  bool tls;
  beast::flat_buffer buffer;  // bytes read past the last response
  Clock::time_point idle_since;
};

using PoolKey = std::tuple<Loop*, bool, std::string, uint16_t>;

class ClientImpl;

class CallImpl : public Call, public std::enable_shared_from_this<CallImpl> {
 public:
  CallImpl(ClientImpl* client, Loop* loop, Url url, ClientRequest request,
           std::shared_ptr<ResponseSink> sink)
      : client_(client),
        loop_(loop),
        url_(std::move(url)),
        sink_(std::move(sink)),
        deadline_(loop->ioc),
        resolver_(loop->ioc) {
    Serialize(request);
    head_ = request.method == "HEAD";
    body_ = std::move(request.body);
  }

  void Begin();
  void Cancel() override;
  void Resume() override;

 private:
  void Serialize(const ClientRequest& r);
  void Connect();
  void Handshake();
  void WriteRequest();
  void ReadHead();
  void Read();   // more bytes into conn_->buffer, then Parse
  void Parse();  // the buffer's bytes through the parser, to the sink
  void Arm(double seconds, const char* what);
  void OnDeadline();
  void Fail(const beast::error_code& ec, const std::string& where);
  void End(const Status& st);

  ClientImpl* client_;
  Loop* loop_;
  Url url_;
  std::shared_ptr<ResponseSink> sink_;
  std::string wire_;  // request line and headers
  std::string body_;  // the body, written after wire_ without a copy
  std::unique_ptr<Conn> conn_;
  Deadline deadline_;
  const char* armed_ = "";  // the phase the deadline is set for
  tcp::resolver resolver_;
  // hopR: the response head's fields come from arena_ (field_arena.h), not
  // one heap block each (~900 of a 2 KB proxied request, ~1,900 streamed).
  FieldArena arena_;  // declared before parser_, which uses it
  std::optional<
      bhttp::response_parser<bhttp::buffer_body, ArenaAllocator<char>>>
      parser_;
  // Choice: reads of up to 32 KiB (Beast's own reads start at 512 bytes
  // and grow slowly: 5-6 reads per small streamed response); decoded body
  // bytes are handed over in pieces of up to 32 KiB, one per read.
  static constexpr size_t kReadSize = 32768;
  char chunk_[32768];
  const char* timed_out_ = nullptr;  // what timed out, when the timer fired
  bool reused_ = false;
  bool retried_ = false;
  bool got_bytes_ = false;
  bool paused_ = false;
  bool done_ = false;
  bool head_ = false;  // a HEAD request: its response has no body
};

class ClientImpl final : public Client {
 public:
  explicit ClientImpl(const ClientOptions& o)
      : options_(o), ssl_(ssl::context::tls_client) {}

  Status Init() {
    beast::error_code ec;
    ssl_.set_default_verify_paths(ec);
    if (!options_.ca_file.empty()) {
      ssl_.load_verify_file(options_.ca_file, ec);
      if (ec) {
        return InvalidArgument("cannot load CA file '" + options_.ca_file +
                               "': " + ec.message());
      }
    }
    ssl_.set_verify_mode(options_.verify_peer ? ssl::verify_peer
                                              : ssl::verify_none);
    return Status::Ok();
  }

  std::shared_ptr<Call> Start(Loop* loop, const Url& url, ClientRequest request,
                              std::shared_ptr<ResponseSink> sink) override {
    auto call = std::make_shared<CallImpl>(this, loop, url, std::move(request),
                                           std::move(sink));
    call->Begin();
    return call;
  }

  std::unique_ptr<Conn> Take(Loop* loop, const Url& url) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = idle_.find(PoolKey{loop, url.tls, url.host, url.port});
    if (it == idle_.end()) return nullptr;
    auto& list = it->second;
    const auto now = Clock::now();
    while (!list.empty()) {
      std::unique_ptr<Conn> c = std::move(list.back());
      list.pop_back();
      if (now - c->idle_since < Seconds(options_.max_idle_seconds) &&
          c->Socket().is_open()) {
        return c;
      }
      c->Close();
    }
    return nullptr;
  }

  void Put(const Url& url, std::unique_ptr<Conn> c) {
    c->idle_since = Clock::now();
    std::lock_guard<std::mutex> lock(mu_);
    auto& list = idle_[PoolKey{c->loop, url.tls, url.host, url.port}];
    if (list.size() >= options_.max_idle_per_origin) {
      list.front()->Close();
      list.erase(list.begin());
    }
    list.push_back(std::move(c));
  }

  void CloseIdle() override {
    std::map<PoolKey, std::vector<std::unique_ptr<Conn>>> idle;
    {
      std::lock_guard<std::mutex> lock(mu_);
      idle.swap(idle_);
    }
    for (auto& [key, list] : idle) {
      for (auto& c : list) c->Close();
    }
  }

  const ClientOptions& options() const { return options_; }
  ssl::context* ssl() { return &ssl_; }

 private:
  ClientOptions options_;
  ssl::context ssl_;
  std::mutex mu_;
  std::map<PoolKey, std::vector<std::unique_ptr<Conn>>>
      idle_;  // GUARDED_BY(mu_)
};

void CallImpl::Serialize(const ClientRequest& r) {
  wire_.reserve(512 + r.headers.size() * 64);
  wire_ += r.method;
  wire_ += ' ';
  wire_ += url_.path_prefix;
  // The prefix stays a path prefix: a target is always joined after a '/'.
  if (r.target.empty() || r.target.front() != '/') wire_ += '/';
  wire_ += r.target;
  wire_ += " HTTP/1.1\r\nhost: ";
  wire_ += url_.HostHeader();
  wire_ += "\r\n";
  for (const Header& h : r.headers) {
    if (IsHopByHop(h.name)) continue;
    wire_ += h.name;
    wire_ += ": ";
    wire_ += h.value;
    wire_ += "\r\n";
  }
  if (!r.body.empty() || r.method == "POST" || r.method == "PUT" ||
      r.method == "PATCH") {
    wire_ += "content-length: ";
    wire_ += std::to_string(r.body.size());
    wire_ += "\r\n";
  }
  wire_ += "\r\n";
}

void CallImpl::Begin() {
  conn_ = client_->Take(loop_, url_);
  if (conn_) {
    reused_ = true;
    WriteRequest();
  } else {
    Connect();
  }
}

void CallImpl::Arm(double seconds, const char* what) {
  armed_ = what;
  deadline_.Set(Seconds(seconds),
                [self = shared_from_this()] { self->OnDeadline(); });
}

void CallImpl::OnDeadline() {
  if (done_) return;
  timed_out_ = armed_;
  if (conn_) conn_->Close();
  resolver_.cancel();
}

void CallImpl::Connect() {
  reused_ = false;
  conn_ = std::make_unique<Conn>(loop_, client_->ssl(), url_.tls);
  Arm(client_->options().connect_timeout_seconds, "connect");
  resolver_.async_resolve(
      url_.host, std::to_string(url_.port),
      [self = shared_from_this()](beast::error_code ec,
                                  tcp::resolver::results_type results) {
        if (self->done_) return;
        if (ec) return self->Fail(ec, "resolve " + self->url_.host);
        net::async_connect(
            self->conn_->Socket(), results,
            [self](beast::error_code ec2, const tcp::endpoint&) {
              if (self->done_) return;
              if (ec2) {
                return self->Fail(ec2, "connect to " + self->url_.host + ":" +
                                           std::to_string(self->url_.port));
              }
              beast::error_code ignored;
              self->conn_->Socket().set_option(tcp::no_delay(true), ignored);
              if (self->url_.tls) {
                self->Handshake();
              } else {
                self->deadline_.Clear();
                self->WriteRequest();
              }
            });
      });
}

void CallImpl::Handshake() {
  auto& s = *conn_->tls_stream;
  if (!SSL_set_tlsext_host_name(s.native_handle(), url_.host.c_str())) {
    return Fail(beast::error_code(static_cast<int>(::ERR_get_error()),
                                  net::error::get_ssl_category()),
                "TLS SNI");
  }
  if (client_->options().verify_peer) {
    s.set_verify_callback(ssl::host_name_verification(url_.host));
  }
  s.async_handshake(ssl::stream_base::client,
                    [self = shared_from_this()](beast::error_code ec) {
                      if (self->done_) return;
                      if (ec) return self->Fail(ec, "TLS handshake");
                      self->deadline_.Clear();
                      self->WriteRequest();
                    });
}

void CallImpl::WriteRequest() {
  Arm(client_->options().response_timeout_seconds, "response");
  // hopR: over plain TCP the request is first offered to the non-blocking
  // socket at once; when the kernel takes it whole (a pooled connection,
  // the common case) the head is read next without a completion round
  // trip (Asio posts a completed write's handler: one more epoll_wait and
  // handler per request). A partial write leaves the rest to async_write;
  // an error is not acted on here but met again by async_write, whose
  // handler fails the call (and retries it on a stale pooled connection)
  // as before. The sink never hears anything inside Start: OnSent is its
  // first call either way and only stamps a time.
  size_t offered = 0;
  if (!conn_->tls) {
    const std::array<net::const_buffer, 2> all{net::buffer(wire_),
                                               net::buffer(body_)};
    beast::error_code ec;
    // Set once per connection (each call is an ioctl).
    if (!conn_->tcp_socket.non_blocking()) {
      conn_->tcp_socket.non_blocking(true, ec);
    }
    if (!ec) offered = conn_->tcp_socket.write_some(all, ec);
    if (ec) offered = 0;
    if (offered == wire_.size() + body_.size()) {
      sink_->OnSent();
      if (done_) return;  // cancelled from OnSent
      ReadHead();
      return;
    }
  }
  conn_->With([&](auto& stream) {
    // Head and body in one gathered write (the body is not copied); what
    // the direct write above took is skipped.
    std::array<net::const_buffer, 2> bufs{net::buffer(wire_),
                                          net::buffer(body_)};
    if (offered >= wire_.size()) {
      bufs[1] += offered - wire_.size();
      bufs[0] += wire_.size();
    } else {
      bufs[0] += offered;
    }
    // Asio's default condition (transfer_all) writes at most 64 KiB per
    // call (strace, 200 KB body: 4 sendmsg); this one offers all of it.
    net::async_write(
        stream, bufs,
        [](const beast::error_code& e, size_t) -> size_t {
          return e ? 0 : size_t{1} << 30;
        },
        [self = shared_from_this()](beast::error_code ec, size_t) {
          if (self->done_) return;
          if (ec) return self->Fail(ec, "write request");
          self->sink_->OnSent();
          if (self->done_) return;  // cancelled from OnSent
          self->ReadHead();
        });
  });
}

void CallImpl::ReadHead() {
  parser_.reset();  // its fields go back to the arena first
  arena_.Reset();
  parser_.emplace(std::piecewise_construct, std::make_tuple(),
                  std::make_tuple(ArenaAllocator<char>(&arena_)));
  parser_->body_limit(boost::none);
  parser_->header_limit(1 << 20);
  // RFC 9112 section 6.3 rule 1: a response to HEAD ends with its header
  // section, whatever its Content-Length or Transfer-Encoding say.
  if (head_) parser_->skip(true);
  // Bytes read past the previous response on this connection (none when
  // it ended as framed) are parsed first.
  Parse();
}

void CallImpl::Read() {
  const bool head = !parser_->is_header_done();
  if (!head) Arm(client_->options().idle_timeout_seconds, "idle body");
  conn_->With([&](auto& stream) {
    stream.async_read_some(
        conn_->buffer.prepare(kReadSize),
        [self = shared_from_this(), head](beast::error_code ec, size_t n) {
          if (self->done_) return;
          if (n > 0) self->got_bytes_ = true;
          self->conn_->buffer.commit(n);
          if (ec == net::error::eof ||
              ec == net::ssl::error::stream_truncated) {
            // A close-delimited body ends here; anything else is cut short.
            if (self->parser_->got_some()) {
              beast::error_code eof;
              self->parser_->put_eof(eof);
              if (!eof && self->parser_->is_done()) {
                return self->End(Status::Ok());
              }
            }
            return self->Fail(
                ec, head ? "read response head" : "read response body");
          }
          if (ec) {
            return self->Fail(
                ec, head ? "read response head" : "read response body");
          }
          self->Parse();
        });
  });
}

// Invariant: called with the connection's buffer holding every unparsed
// byte; returns having delivered all it could decode (one OnData for the
// body bytes of this batch), then ends, pauses, or reads more.
void CallImpl::Parse() {
  beast::error_code ec;
  if (!parser_->is_header_done()) {
    if (conn_->buffer.size() > 0) {
      conn_->buffer.consume(parser_->put(conn_->buffer.data(), ec));
      if (ec == bhttp::error::need_more) ec = {};
      if (ec) return Fail(ec, "read response head");
    }
    if (!parser_->is_header_done()) return Read();
    got_bytes_ = true;
    // From here on one put() decodes every chunk the buffer holds.
    parser_->eager(true);
    const auto& msg = parser_->get();
    Headers headers;
    headers.reserve(24);
    for (const auto& f : msg) {
      headers.push_back({std::string(f.name_string()), std::string(f.value())});
    }
    sink_->OnHead(static_cast<int>(msg.result_int()), headers);
    if (done_) return;  // cancelled from OnHead
  }
  size_t filled = 0;
  bool more = true;
  while (!parser_->is_done() && conn_->buffer.size() > 0) {
    auto& body = parser_->get().body();
    body.data = chunk_ + filled;
    body.size = sizeof chunk_ - filled;
    const size_t used = parser_->put(conn_->buffer.data(), ec);
    conn_->buffer.consume(used);
    filled = sizeof chunk_ - body.size;
    if (ec == bhttp::error::need_more) {
      ec = {};
      break;
    }
    if (ec == bhttp::error::need_buffer) ec = {};  // chunk_ is full
    if (ec) return Fail(ec, "read response body");
    if (filled == sizeof chunk_) {  // the piece is full: hand it over
      more = sink_->OnData(std::string_view(chunk_, filled));
      if (done_) return;
      filled = 0;
      if (!more) break;
    } else if (used == 0) {
      break;
    }
  }
  if (filled > 0) {
    more = sink_->OnData(std::string_view(chunk_, filled));
    if (done_) return;
  }
  if (parser_->is_done()) return End(Status::Ok());
  if (!more) {
    paused_ = true;
    deadline_.Clear();
    return;
  }
  sink_->OnBatchEnd();
  if (done_) return;
  Read();
}

void CallImpl::Resume() {
  if (!paused_ || done_) return;
  paused_ = false;
  Parse();
}

void CallImpl::Fail(const beast::error_code& ec, const std::string& where) {
  if (done_) return;
  // A reused keep-alive connection that the upstream closed while idle:
  // the request never reached it, so one retry on a new connection is safe.
  if (reused_ && !got_bytes_ && !retried_ && timed_out_ == nullptr) {
    retried_ = true;
    deadline_.Clear();
    conn_->Close();
    Connect();
    return;
  }
  std::string msg;
  if (timed_out_ != nullptr) {
    msg = std::string("timeout (") + timed_out_ + ") during " + where;
  } else if (ec == bhttp::error::partial_message || ec == net::error::eof ||
             ec == net::ssl::error::stream_truncated) {
    msg = "upstream closed the connection during " + where;
  } else {
    msg = where + ": " + ec.message();
  }
  End(Unavailable(msg));
}

void CallImpl::End(const Status& st) {
  if (done_) return;
  done_ = true;
  deadline_.Stop();
  // Bytes past the end of the response are not the next request's
  // response: such a connection is closed, never pooled.
  if (st.ok() && parser_ && parser_->keep_alive() && conn_ &&
      conn_->buffer.size() == 0 && conn_->Socket().is_open()) {
    client_->Put(url_, std::move(conn_));
  } else if (conn_) {
    conn_->Close();
  }
  auto sink = std::move(sink_);
  sink->OnEnd(st);
}

void CallImpl::Cancel() {
  if (done_) return;
  done_ = true;
  deadline_.Stop();
  resolver_.cancel();
  if (conn_) conn_->Close();
  sink_.reset();
}

}  // namespace

Result<std::unique_ptr<Client>> NewClient(const ClientOptions& options) {
  auto c = std::make_unique<ClientImpl>(options);
  Status s = c->Init();
  if (!s.ok()) return s;
  return std::unique_ptr<Client>(std::move(c));
}

}  // namespace toolcache::http
