// A stdio MCP server started as a child process, shared by the faces that
// run one: the stdio proxy (`toolcache mcp`, proxy.cc) and the Streamable
// HTTP endpoint of `toolcache serve` (one child per session, http_server.cc).
#ifndef TOOLCACHE_SRC_MCP_CHILD_H_
#define TOOLCACHE_SRC_MCP_CHILD_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "toolcache/status.h"

namespace toolcache::mcp {

// Sets O_NONBLOCK on `fd` (a failure leaves it blocking).
void SetNonBlocking(int fd);

// The child's pid and the parent's ends of its stdin and stdout pipes, both
// non-blocking and close-on-exec. The caller owns the fds and the pid.
struct ChildProcess {
  pid_t pid = -1;
  int to_child = -1;    // the child's stdin
  int from_child = -1;  // the child's stdout
};

// Starts `command` (argv; argv[0] searched on PATH) with stdin and stdout on
// pipes, stderr inherited, no signal blocked and default dispositions for
// the signals the proxies handle or ignore (SIGPIPE, SIGCHLD, SIGUSR1,
// SIGTERM, SIGINT, SIGHUP), whatever the calling thread blocks.
// INVALID_ARGUMENT "cannot start server '<argv0>': <why>" when it cannot be
// started or `command` is empty; INTERNAL when the pipes cannot be made.
Result<ChildProcess> SpawnChild(const std::vector<std::string>& command);

// The one stop sequence for a child: the caller closes its stdin once what
// was queued for it is written, then the ladder sends SIGTERM `grace`
// seconds after Begin and SIGKILL `grace` seconds after that. Polled: the
// owner's loop calls Step every turn until the child is reaped. Used by the
// stdio proxy and by serve's /mcp/<name> workers.
//
// Thread-safety: none (the thread that owns the child).
//
// Example:
//   StopLadder ladder;
//   ladder.Begin(Now(), grace);          // and close the child's stdin
//   while (!reaped) { ...; (void)ladder.Step(pid, Now()); poll(...); }
class StopLadder {
 public:
  // Starts the clock at `now` (seconds, any monotonic origin); a second
  // call is ignored.
  void Begin(double now, double grace_seconds);
  bool begun() const { return term_at_ > 0; }
  // Sends the signal due at `now` to `pid` (a child not yet reaped) and
  // returns it: SIGTERM, SIGKILL, or 0 when none is due. SIGKILL is sent
  // once (then nothing more is due).
  int Step(pid_t pid, double now);
  // Sends the SIGTERM at the next Step instead of after the grace (the
  // proxy was told to stop itself); begins the ladder if needed. The
  // SIGKILL still follows a grace after the SIGTERM.
  void Hurry(double now, double grace_seconds);
  // When the next signal is due (0: none: not begun, or SIGKILL sent).
  double next_at() const {
    if (!begun() || killed_) return 0;
    return kill_at_ == 0 ? term_at_ : kill_at_;
  }

 private:
  double grace_ = 0;
  double term_at_ = 0;  // 0 = not begun
  double kill_at_ = 0;  // 0 = SIGTERM not sent yet
  bool killed_ = false;
};

}  // namespace toolcache::mcp

#endif  // TOOLCACHE_SRC_MCP_CHILD_H_
