// Invariants:
// - One thread; poll() is the only place the loop blocks. Every fd the proxy
//   writes to is non-blocking and has its own output buffer; bytes leave a
//   buffer only in the order they entered it.
// - A line is handed to the Session only when complete (terminated by '\n',
//   or cut off by end of input); the '\n' is not part of the line, and the
//   Session's output gets exactly one '\n' appended per message.
// - An over-long server line is streamed to the client as its bytes arrive;
//   whatever the Session sends the client meanwhile is held and appended
//   after that line's '\n', so messages never interleave.
// - The server's stdin is closed only after its buffer drained (or the
//   server stopped reading); the proxy returns only after waitpid() reaped
//   the server.
// - waitpid() runs when something hints the server may have exited
//   (SIGCHLD, its stdout closed, a poll timeout, a shutdown) and otherwise
//   at most every kReapEverySeconds while the loop turns, never per message.
// - Memory: a line is held once. A line the session forwards verbatim is
//   moved from its LineReader into the peer's OutQueue (ProxyOutput::Offer);
//   a cache hit queues the stored result where it is (shared, not copied);
//   blocks leave the queue as soon as they are written. A message therefore
//   costs about its own size while it passes, plus the stored copy when it
//   is admitted.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/atomic_file.h"
#include "src/mcp/child.h"
#include "src/mcp/line_reader.h"
#include "src/mcp/session.h"
#include "src/runtime/signals.h"
#include "src/runtime/stats.h"
#include "toolcache/mcp_proxy.h"
#include "toolcache/scope.h"

namespace toolcache {
namespace {

constexpr size_t kReadChunk = 64 * 1024;
// Choice: without a hint that the server may have exited (SIGCHLD on the
// signalfd, its stdout closed, a poll timeout, shutting down), the loop
// reaps at most this often instead of on every turn (a waitpid() per
// message was a quarter of a cache hit's syscalls).
constexpr double kReapEverySeconds = 0.05;

double Now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Output queue of one fd.
struct OutBuffer {
  int fd = -1;
  mcp::OutQueue queue;
  bool broken = false;  // EPIPE or another write error

  bool pending() const { return !broken && !queue.empty(); }
  size_t queued() const { return broken ? 0 : queue.size(); }
  // Writes as much as the fd takes now.
  void Flush() {
    while (pending()) {
      const std::string_view front = queue.Front();
      ssize_t n = write(fd, front.data(), front.size());
      if (n > 0) {
        queue.Consume(static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      broken = true;
      queue.Clear();  // nobody will read it
    }
  }
};

class ProxyOutput final : public mcp::SessionOutput {
 public:
  ProxyOutput(OutBuffer* client, OutBuffer* server)
      : client_(client), server_(server) {}
  void ToClient(std::string_view line) override {
    if (client_->broken) return;
    Queue(ClientQueue(), line);
  }
  void ToServer(std::string_view line) override {
    if (server_open && !server_->broken) Queue(server_->queue, line);
  }
  void ToClientParts(std::span<const mcp::MessagePart> parts) override {
    if (client_->broken) return;
    mcp::OutQueue& q = ClientQueue();
    for (const mcp::MessagePart& p : parts) {
      // Small pieces are copied into the gathered block: one write() for a
      // small hit instead of one per piece.
      if (p.keep && p.bytes.size() >= kMoveBytes) {
        q.PushShared(p.bytes, p.keep);
      } else {
        q.Push(p.bytes);
      }
    }
    q.Push("\n");
  }
  // The line `reader` is handing to the session: if the session forwards it
  // verbatim, its buffer is moved into the peer's queue instead of copied.
  // Offer(nullptr, {}) once the session returned.
  void Offer(mcp::LineReader* reader, std::string_view line) {
    offer_reader_ = reader;
    offer_line_ = line;
  }
  // Bytes of an over-long server line, passed through as they arrive.
  void StreamToClient(std::string_view part) {
    streaming_ = true;
    if (!client_->broken) client_->queue.Push(part);
  }
  // Ends the streamed line, then releases what was held meanwhile.
  void EndStream() {
    if (!streaming_) return;
    streaming_ = false;
    if (!client_->broken) {
      client_->queue.Push("\n");
      client_->queue.Splice(held_);
    }
    held_.Clear();
  }
  bool streaming() const { return streaming_; }
  size_t held_bytes() const { return held_.size(); }
  bool server_open = true;

 private:
  // Choice: lines and stored results from 64 KiB on are moved or shared
  // rather than copied (smaller ones are gathered into one block per write,
  // and the reader keeps its buffer).
  static constexpr size_t kMoveBytes = 64 * 1024;

  mcp::OutQueue& ClientQueue() { return streaming_ ? held_ : client_->queue; }
  void Queue(mcp::OutQueue& q, std::string_view line) {
    if (offer_reader_ != nullptr && line.size() >= kMoveBytes &&
        line.data() == offer_line_.data() &&
        line.size() == offer_line_.size()) {
      mcp::ByteBuffer taken = offer_reader_->TakeLine(line);
      offer_reader_ = nullptr;  // moved once; the bytes stay where they are
      if (!taken.empty()) {
        q.PushOwned(std::move(taken));
        q.Push("\n");
        return;
      }
    }
    q.Push(line);
    q.Push("\n");
  }

  OutBuffer* client_;
  OutBuffer* server_;
  bool streaming_ = false;
  mcp::OutQueue held_;  // session output for the client while streaming
  mcp::LineReader* offer_reader_ = nullptr;
  std::string_view offer_line_;
};

std::string DescribeStatus(int status) {
  if (WIFEXITED(status)) {
    return "server exited with status " + std::to_string(WEXITSTATUS(status));
  }
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    return "server killed by signal " + std::to_string(sig) + " (" +
           strsignal(sig) + ")";
  }
  return "server stopped";
}

}  // namespace

Status WriteToolCacheStats(const std::string& path, const ToolCacheStats& s,
                           uint64_t client_parse_errors,
                           uint64_t server_parse_errors,
                           uint64_t failed_on_exit) {
  // The one stats shape (src/runtime/stats.h); the session's own counters
  // sit under "session".
  runtime::StatsSnapshot snap("mcp", &s);
  snap.face_fields["session"] = {{"clientParseErrors", client_parse_errors},
                                 {"serverParseErrors", server_parse_errors},
                                 {"failedOnServerExit", failed_on_exit}};
  return WriteFileAtomically(path, runtime::SerializeStats(snap), "stats file");
}

namespace mcp {

void WriteSessionStats(const std::string& path, ToolCache* cache,
                       const Session& session) {
  if (path.empty()) return;
  const ToolCacheStats st =
      cache != nullptr ? cache->Stats() : ToolCacheStats{};
  const SessionCounters& c = session.counters();
  Status s = WriteToolCacheStats(path, st, c.client_parse_errors,
                                 c.server_parse_errors, c.failed_on_exit);
  if (!s.ok()) spdlog::warn("{}", s.message());
}

}  // namespace mcp

Result<int> RunMcpProxy(const McpProxyOptions& o) {
  if (o.command.empty()) return InvalidArgument("no server command given");
  // Without a name the server is known by its command line, with the
  // secrets on it redacted: the identity is logged and stored with every
  // entry (the secrets themselves scope the entries: SecretArguments).
  std::string identity = o.server_name;
  if (identity.empty()) {
    std::string joined;
    for (const std::string& a : o.command) {
      if (!joined.empty()) joined += ' ';
      joined += a;
    }
    identity = DistinctIdentity(RedactedCommandLine(o.command), joined);
  }

  // Signals: handled through a signalfd inside the loop.
  Result<std::unique_ptr<runtime::SignalFd>> signals =
      runtime::SignalFd::Open({SIGCHLD});
  if (!signals.ok()) return signals.status();
  std::unique_ptr<runtime::SignalFd> sig = std::move(*signals);
  const int sig_fd = sig->fd();

  Result<mcp::ChildProcess> spawned = mcp::SpawnChild(o.command);
  if (!spawned.ok()) {
    sig.reset();
    return spawned.status();
  }
  const pid_t pid = spawned.value().pid;
  const int to_child = spawned.value().to_child;
  const int from_child = spawned.value().from_child;
  spdlog::info("started server pid={} identity='{}'", pid, identity);

  int out_flags = fcntl(o.client_out_fd, F_GETFL);
  mcp::SetNonBlocking(o.client_out_fd);

  OutBuffer client_out{.fd = o.client_out_fd};
  OutBuffer server_in{.fd = to_child};
  ProxyOutput output(&client_out, &server_in);
  SystemClock clock;
  // The principal: the operator's scope plus what decides whose data the
  // server reads (it inherits our environment, uid and folder), unless
  // shared on purpose.
  Principal principal{.base = o.scope};
  if (!o.share_across_credentials) {
    // The secret and data-choosing environment, the command line's
    // secrets, the OS user and the working directory
    // (ThisStdioServerCredentials, session 19).
    std::vector<Credential> parts =
        ThisStdioServerCredentials(o.credential_env, o.command);
    if (spdlog::should_log(spdlog::level::debug)) {
      // Names only: values never reach a log.
      std::string names;
      for (const Credential& c : parts) {
        if (!names.empty()) names += ' ';
        names += c.name;
      }
      spdlog::debug("principal from: {}", names);
    }
    principal.credential = CredentialDigest(std::move(parts));
  }
  // A server's `public` answer is shared only with processes of the same
  // principal material (revK): another uid, folder or data-choosing
  // variable is another server instance with other data, whatever it
  // declares. "" under --share-across-credentials: every caller.
  mcp::Session session({.server = identity,
                        .scope = ScopeOf(principal),
                        .public_group = principal.credential},
                       o.cache, &clock, &output);
  mcp::LineReader client_reader(o.max_line_bytes);
  mcp::LineReader server_reader(o.max_line_bytes);
  mcp::IdSniffer client_sniffer;  // over-long client line being discarded
  mcp::IdSniffer server_sniffer;  // over-long server line being streamed
  bool client_long = false;
  auto on_client_line = [&](std::string_view line) {
    output.Offer(&client_reader, line);
    session.OnClientLine(line);
    output.Offer(nullptr, {});
  };
  // Choice: an over-long client line is discarded (never forwarded) and
  // answered -32700, under its id when the sniffer saw one.
  auto on_client_long = [&](std::string_view part, bool end, uint64_t total) {
    if (!client_long) client_sniffer.Reset();
    client_long = !end;
    client_sniffer.Feed(part);
    if (end)
      session.OnClientLineTooLong(client_sniffer, total, o.max_line_bytes);
  };
  auto on_server_line = [&](std::string_view line) {
    output.Offer(&server_reader, line);
    session.OnServerLine(line);
    output.Offer(nullptr, {});
  };
  // Choice: an over-long server line is streamed through unparsed (never
  // dropped, never cached; the proxy itself never holds more than
  // --max-line-bytes of it) and the request it answers is retired by the
  // id the sniffer saw go by.
  auto on_server_long = [&](std::string_view part, bool end, uint64_t total) {
    if (!output.streaming()) server_sniffer.Reset();
    server_sniffer.Feed(part);
    output.StreamToClient(part);
    if (!end) return;
    output.EndStream();
    if (server_reader.truncated()) {
      // Cut off by the server's exit: its request is failed with the rest.
      spdlog::warn("server output ended inside a line of {} bytes", total);
      return;
    }
    session.OnServerLineTooLong(server_sniffer, total, o.max_line_bytes);
  };

  auto write_stats = [&] {
    mcp::WriteSessionStats(o.stats_path, o.cache, session);
  };

  bool client_in_open = true;
  bool server_out_open = true;
  bool server_in_open = true;
  bool exited = false;
  int exit_status = 0;
  bool we_signalled = false;     // the proxy sent SIGTERM/SIGKILL itself
  bool shutting_down = false;    // client gone or proxy told to stop
  mcp::StopLadder ladder;        // SIGTERM a grace after the stop, then SIGKILL
  bool client_was_full = false;  // backpressure state last logged
  bool server_was_full = false;
  bool backpressure_seen = false;
  std::vector<char> chunk(kReadChunk);
  bool reap_due = true;  // a hint that the server may have exited
  double last_reap = 0;

  auto close_server_in = [&] {
    if (!server_in_open) return;
    close(to_child);
    server_in_open = false;
    output.server_open = false;
  };
  auto begin_shutdown = [&](const char* why) {
    if (shutting_down) return;
    shutting_down = true;
    spdlog::info("shutting down: {}", why);
    ladder.Begin(Now(), o.grace_seconds);
  };
  auto reap = [&] {
    if (exited) return;
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      exited = true;
      exit_status = status;
      spdlog::info("{}", DescribeStatus(status));
    }
  };

  while (true) {
    double now = Now();
    bool reap_skipped = true;
    if (reap_due || shutting_down || !server_out_open || server_in.broken ||
        now - last_reap >= kReapEverySeconds) {
      reap();
      reap_due = false;
      last_reap = now;
      reap_skipped = false;
    }
    if (exited && !server_out_open) break;
    // Once the client stopped and the server's queue drained, close its stdin.
    if (shutting_down && server_in_open && !server_in.pending()) {
      close_server_in();
    }
    if (server_in.broken) close_server_in();
    if (client_out.broken && !shutting_down)
      begin_shutdown("client stdout closed");
    if (!exited) {
      const int sent = ladder.Step(pid, now);
      if (sent == SIGTERM) {
        spdlog::info("server still running after {}s: SIGTERM",
                     o.grace_seconds);
      } else if (sent == SIGKILL) {
        spdlog::warn("server ignored SIGTERM: SIGKILL");
      }
      if (sent != 0) we_signalled = true;
    }

    // Backpressure: do not read a side whose output would queue behind a
    // peer that is not reading. What is held behind a streamed over-long
    // line pauses only the client (its source): the server must still be
    // read for that line to end.
    bool client_full = client_out.queued() > o.max_buffered_bytes;
    bool server_full = server_in.queued() > o.max_buffered_bytes ||
                       output.held_bytes() > o.max_buffered_bytes;
    if (client_full != client_was_full || server_full != server_was_full) {
      // The first pause is worth an info line; a slow reader makes the state
      // flip per chunk after that, so later flips are debug.
      bool first = !backpressure_seen && (client_full || server_full);
      backpressure_seen = backpressure_seen || first;
      spdlog::log(first ? spdlog::level::info : spdlog::level::debug,
                  "backpressure: {} bytes queued for the client ({} held "
                  "behind a streamed line), {} for the server (limit {}): "
                  "reading client {}, server {}",
                  client_out.queued(), output.held_bytes(), server_in.queued(),
                  o.max_buffered_bytes,
                  client_full || server_full ? "paused" : "resumed",
                  client_full && !exited ? "paused" : "resumed");
      client_was_full = client_full;
      server_was_full = server_full;
    }

    pollfd fds[5];
    nfds_t nfds = 0;
    fds[nfds++] = {sig_fd, POLLIN, 0};
    int ci = -1, so = -1;
    if (client_in_open && !shutting_down && !client_full && !server_full) {
      ci = static_cast<int>(nfds);
      fds[nfds++] = {o.client_in_fd, POLLIN, 0};
    }
    if (client_out.pending()) fds[nfds++] = {o.client_out_fd, POLLOUT, 0};
    if (server_in_open && server_in.pending()) {
      fds[nfds++] = {to_child, POLLOUT, 0};
    }
    // Once the server exited, drain it regardless: its output is finite.
    if (server_out_open && (exited || !client_full)) {
      so = static_cast<int>(nfds);
      fds[nfds++] = {from_child, POLLIN, 0};
    }
    int timeout_ms = -1;
    const double next = ladder.next_at();
    if (!exited && next > 0) {
      timeout_ms = static_cast<int>((next - now) * 1000) + 1;
      if (timeout_ms < 0) timeout_ms = 0;
    }
    if (exited && server_out_open) timeout_ms = 0;  // drain what is left
    // Reap by polling too: SIGCHLD may go to another thread of an embedding
    // process (tests) instead of our signalfd.
    if (!exited && (so < 0 || shutting_down) &&
        (timeout_ms < 0 || timeout_ms > 50)) {
      timeout_ms = 50;
    }
    // A turn that skipped the reap must not block past the next one: the
    // server may have exited since the last (its SIGCHLD lost to another
    // thread, its stdout held open by a grandchild), with a request waiting.
    if (!exited && reap_skipped) {
      const int until_reap =
          static_cast<int>((last_reap + kReapEverySeconds - now) * 1000) + 1;
      if (timeout_ms < 0 || timeout_ms > until_reap) {
        timeout_ms = std::max(until_reap, 0);
      }
    }
    int n = poll(fds, nfds, timeout_ms);
    if (n < 0) {
      if (errno == EINTR) {
        reap_due = true;
        continue;
      }
      spdlog::error("poll: {}", std::strerror(errno));
      break;
    }
    if (n == 0) reap_due = true;  // a timeout: the ladder, or the reap poll

    if (fds[0].revents & POLLIN) {
      reap_due = true;
      signalfd_siginfo si_info;
      while (read(sig_fd, &si_info, sizeof si_info) ==
             static_cast<ssize_t>(sizeof si_info)) {
        switch (si_info.ssi_signo) {
          case SIGUSR1:
            write_stats();
            break;
          case SIGTERM:
          case SIGINT:
          case SIGHUP:
            begin_shutdown("signal received");
            // Forward the stop request right away.
            ladder.Hurry(Now(), o.grace_seconds);
            break;
          default:
            break;  // SIGCHLD: reaped at the top of the loop
        }
      }
    }

    if (so >= 0 && (fds[so].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t r = read(from_child, chunk.data(), chunk.size());
      if (r > 0) {
        server_reader.Feed(
            std::string_view(chunk.data(), static_cast<size_t>(r)),
            on_server_line, on_server_long);
      } else if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
        server_out_open = false;
        close(from_child);
        // Choice: a final server line without '\n' is still a message.
        server_reader.Finish(on_server_line, on_server_long);
        if (!shutting_down) begin_shutdown("server closed its stdout");
      }
    } else if (exited && server_out_open && n == 0) {
      // The server exited and nothing more is readable right now (a
      // grandchild may still hold the pipe open): stop reading.
      server_out_open = false;
      close(from_child);
      server_reader.Finish(on_server_line, on_server_long);
    }

    if (ci >= 0 && (fds[ci].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t r = read(o.client_in_fd, chunk.data(), chunk.size());
      if (r > 0) {
        client_reader.Feed(
            std::string_view(chunk.data(), static_cast<size_t>(r)),
            on_client_line, on_client_long);
      } else if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
        client_in_open = false;
        // Choice: a final line without '\n' is still a message.
        client_reader.Finish(on_client_line, on_client_long);
        begin_shutdown("client closed stdin");
      }
    }
    // Write what is queued right away (no extra poll round per message);
    // what does not fit waits for POLLOUT.
    if (server_in_open && server_in.pending()) server_in.Flush();
    if (client_out.pending()) client_out.Flush();
  }

  // The server is gone: answer what it never will.
  output.EndStream();
  std::string cause = DescribeStatus(exit_status);
  if (session.in_flight() > 0) session.FailInFlight(cause);
  close_server_in();
  // Final flush to the client, bounded so a stuck client cannot hold us.
  double flush_deadline = Now() + 5.0;
  while (client_out.pending() && Now() < flush_deadline) {
    client_out.Flush();
    if (!client_out.pending()) break;
    pollfd p{o.client_out_fd, POLLOUT, 0};
    poll(&p, 1, 100);
  }
  write_stats();
  if (out_flags >= 0) fcntl(o.client_out_fd, F_SETFL, out_flags);
  sig.reset();  // closes the signalfd, restores the mask

  if (WIFEXITED(exit_status)) return WEXITSTATUS(exit_status);
  if (WIFSIGNALED(exit_status)) {
    // Choice: a server the proxy itself stopped (after client EOF) ends the
    // session normally: exit 0.
    if (we_signalled) return 0;
    return 128 + WTERMSIG(exit_status);
  }
  return 1;
}

}  // namespace toolcache
