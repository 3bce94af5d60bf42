// Invariants:
// - Two threads. The calling thread only reads the client (stdin) and the
//   signalfd, and posts complete lines to the loop; the loop thread owns
//   the Session, the HttpUpstream and the client's stdout. No state is
//   shared between them except through http::Post and the `finished`
//   promise.
// - Lines reach the session in the order the client wrote them (Post keeps
//   order on a one-thread io_context).
// - Every request the session tracks is answered before the proxy returns:
//   by the server, by HttpUpstream::Fail, or by Session::FailInFlight at
//   shutdown.
// - The entries' scope binds the credentials the server sees (UrlScope):
//   processes with different headers or URL paths and queries never share,
//   unless the operator says so (share_across_credentials).
// - The URL is shown (logs, the identity without --name, so every entry's
//   server name) only as McpEndpoint::display: no query, secret-looking
//   path segments redacted.
// Choice: the loop thread writes to stdout blocking. A client that stops
//   reading stalls the proxy (as a blocked pipe stalls a stdio server)
//   instead of growing a queue.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "src/http/http.h"
#include "src/mcp/http_upstream.h"
#include "src/mcp/line_reader.h"
#include "src/mcp/session.h"
#include "src/runtime/signals.h"
#include "toolcache/mcp_proxy.h"
#include "toolcache/mcp_url_proxy.h"
#include "toolcache/scope.h"

namespace toolcache {
namespace {

double Now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void WriteAll(int fd, std::string_view bytes, bool* broken) {
  while (!*broken && !bytes.empty()) {
    ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      poll(&p, 1, 1000);
    } else {
      *broken = true;  // the client is gone: nobody reads
    }
  }
}

class UrlOutput final : public mcp::SessionOutput {
 public:
  explicit UrlOutput(int fd) : fd_(fd) {}
  void ToClient(std::string_view line) override {
    std::string buf;
    buf.reserve(line.size() + 1);
    buf.append(line);
    buf += '\n';
    WriteAll(fd_, buf, &broken_);
  }
  void ToServer(std::string_view line) override {
    if (upstream != nullptr) upstream->Send(line);
  }
  mcp::HttpUpstream* upstream = nullptr;

 private:
  int fd_;
  bool broken_ = false;
};

// The principal of this process: the operator's scope plus a digest of
// what authenticates it to the server: every configured header, as sent,
// and the URL's path and query (hosted servers put the account's secret in
// the path: Zapier's /api/mcp/s/<secret>/mcp, Pipedream's /<uuid>/<app>).
// Choice: the whole path and query, not only the segments that look
// secret: a short token must scope too, and one URL is one principal.
std::string UrlScope(const McpUrlProxyOptions& o,
                     const mcp::HttpUpstreamOptions& uo) {
  Principal p{.base = o.scope};
  if (o.share_across_credentials) return ScopeOf(p);
  std::vector<Credential> parts;
  for (const http::Header& h : uo.extra_headers) {
    std::string name = h.name;
    for (char& c : name) {
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    parts.push_back({std::move(name), h.value});
  }
  parts.push_back({"?target", uo.endpoint.target});
  p.credential = CredentialDigest(std::move(parts));
  return ScopeOf(p);
}

}  // namespace

Result<int> RunMcpUrlProxy(const McpUrlProxyOptions& o) {
  Result<mcp::McpEndpoint> endpoint = mcp::ParseMcpEndpoint(o.url);
  if (!endpoint.ok()) return endpoint.status();
  mcp::HttpUpstreamOptions uo;
  uo.endpoint = *endpoint;
  uo.open_get_stream = o.get_stream;
  for (const auto& [name, value] : o.headers) {
    Result<http::Header> h = mcp::ParseHeaderArg(name + ": " + value);
    if (!h.ok()) return h.status();
    Result<std::string> v = mcp::ExpandEnv(h->value, &std::getenv);
    if (!v.ok()) {
      return InvalidArgument("header '" + h->name +
                             "': " + v.status().message());
    }
    uo.extra_headers.push_back({h->name, std::move(*v)});
  }
  http::ClientOptions co;
  co.connect_timeout_seconds =
      std::min(o.connect_timeout_seconds, o.timeout_seconds);
  co.response_timeout_seconds = o.timeout_seconds;
  co.idle_timeout_seconds = o.timeout_seconds;
  co.ca_file = o.ca_file;
  Result<std::unique_ptr<http::Client>> client = http::NewClient(co);
  if (!client.ok()) return client.status();
  const std::string identity =
      o.server_name.empty() ? DistinctIdentity(uo.endpoint.display, o.url)
                            : o.server_name;
  const std::string scope = UrlScope(o, uo);

  // Signals: blocked here before the loop thread starts (it inherits the
  // mask) and read through a signalfd by this thread.
  Result<std::unique_ptr<runtime::SignalFd>> signals =
      runtime::SignalFd::Open();
  if (!signals.ok()) return signals.status();
  std::unique_ptr<runtime::SignalFd> sig = std::move(*signals);
  const int sig_fd = sig->fd();
  spdlog::info("proxying {} as '{}'", uo.endpoint.display, identity);

  std::unique_ptr<http::LoopThread> loop_thread = http::NewLoopThread();
  http::Loop* loop = loop_thread->loop();
  UrlOutput output(o.client_out_fd);
  SystemClock clock;
  // A server's `public` answer is shared by the callers of the same URL
  // (revK): another URL (an account's path secret, another host under one
  // --name) may be another instance with other data. "" under
  // --share-across-credentials: every caller.
  const std::string public_group = o.share_across_credentials
                                       ? std::string()
                                       : CredentialDigest({{"?url", o.url}});
  mcp::Session session(
      {.server = identity, .scope = scope, .public_group = public_group},
      o.cache, &clock, &output);
  mcp::HttpUpstream upstream(
      uo, client->get(), loop,
      [&session](std::string_view m, std::string_view stream_id) {
        session.OnServerLineOnStream(m, stream_id);
      },
      [&session](std::string_view why) {
        session.ServerMessagesMayBeLost(why);
      });
  output.upstream = &upstream;

  auto write_stats = [&] {  // on the loop thread
    mcp::WriteSessionStats(o.stats_path, o.cache, session);
  };

  mcp::LineReader reader(o.max_line_bytes);
  mcp::IdSniffer sniffer;
  bool client_long = false;
  auto on_line = [&](std::string_view line) {
    http::Post(loop,
               [&session, l = std::string(line)] { session.OnClientLine(l); });
  };
  // Choice: as in the stdio proxy, an over-long client line is discarded and
  // answered -32700, under its id when the sniffer saw one.
  auto on_long = [&](std::string_view part, bool end, uint64_t total) {
    if (!client_long) sniffer.Reset();
    client_long = !end;
    sniffer.Feed(part);
    if (!end) return;
    http::Post(loop, [&session, s = sniffer, total, limit = o.max_line_bytes] {
      session.OnClientLineTooLong(s, total, limit);
    });
  };

  std::vector<char> chunk(64 * 1024);
  std::string why = "client closed stdin";
  bool running = true;
  while (running) {
    pollfd fds[2] = {{sig_fd, POLLIN, 0}, {o.client_in_fd, POLLIN, 0}};
    int n = poll(fds, 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      why = std::string("poll: ") + std::strerror(errno);
      break;
    }
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo si;
      while (read(sig_fd, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
        if (si.ssi_signo == SIGUSR1) {
          http::Post(loop, write_stats);
        } else {
          why = "signal received";
          running = false;
        }
      }
    }
    if (running && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t r = read(o.client_in_fd, chunk.data(), chunk.size());
      if (r > 0) {
        reader.Feed(std::string_view(chunk.data(), static_cast<size_t>(r)),
                    on_line, on_long);
      } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
        // Choice: a final line without '\n' is still a message.
        reader.Finish(on_line, on_long);
        running = false;
      }
    }
  }
  spdlog::info("shutting down: {}", why);

  // On the loop: give waiting requests the grace period, then cancel the
  // rest, answer them, and end the server session.
  std::promise<void> finished;
  const double deadline = Now() + o.grace_seconds;
  std::function<void()> drain;
  drain = [&] {
    if ((session.in_flight() > 0 || upstream.active() > 0) &&
        Now() < deadline) {
      (void)http::RunAfter(loop, 0.02, drain);
      return;
    }
    upstream.Shutdown(o.grace_seconds, [&] {
      write_stats();
      finished.set_value();
    });
    if (session.in_flight() > 0) session.FailInFlight("toolcache " + why);
  };
  http::Post(loop, drain);
  finished.get_future().wait();

  (*client)->CloseIdle();
  loop_thread.reset();  // stops the loop, joins its thread
  sig.reset();          // closes the signalfd, restores the mask
  return 0;
}

}  // namespace toolcache
