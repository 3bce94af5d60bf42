// The Redis backend: hiredis (Debian's libhiredis) over a small pool of
// blocking connections with a timeout.
//
// Keys are "<prefix>:<ns>:<key>" (prefix "toolcache" by default), so one
// Redis database can hold several deployments and an operator can find and
// flush a namespace with SCAN/UNLINK. Values are plain strings with PX
// expiry; counters are strings INCRBY understands.
//
// Invariants:
// - A connection is used by one thread at a time (taken from idle_ under
//   mu_); a connection that saw an I/O error, a timeout or a protocol error
//   is freed, never reused (its stream may be out of step).
// - Every call is one pipelined round trip: its commands are appended, then
//   their replies read in order.
// - A counter that does not exist is created by SET NX before INCRBY in the
//   same pipeline, so it starts at `initial` even when several processes
//   race to create it.
//
// Choice: no background reconnect thread: a call that finds no idle
// connection opens one (connect timeout = the command timeout), so the
// store comes back by itself once the server does; the circuit breaker
// (OpenStore wraps this store in it) keeps a dead server from costing a
// timeout per call.
#include <hiredis/hiredis.h>
#include <signal.h>
#include <sys/time.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "src/store/backends.h"

namespace toolcache::store_internal {
namespace {

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

struct CtxFree {
  void operator()(redisContext* c) const { redisFree(c); }
};
using Ctx = std::unique_ptr<redisContext, CtxFree>;

// One command's arguments (binary-safe).
struct Command {
  std::vector<std::string> args;
};

class RedisStore final : public Store {
 public:
  RedisStore(std::string name, RedisOptions o)
      : name_(std::move(name)), o_(std::move(o)) {}

  std::string_view name() const override { return name_; }

  Result<std::vector<std::optional<StoreValue>>> Get(
      std::span<const StoreKey> keys) override {
    if (Status s = CheckBatch(keys.size()); !s.ok()) return s;
    std::vector<Command> cmds;
    cmds.reserve(keys.size() * 2);
    for (const StoreKey& k : keys) {
      if (Status s = CheckKey(k); !s.ok()) return s;
      std::string full = FullKey(k);
      cmds.push_back({{"GET", full}});
      cmds.push_back({{"PTTL", std::move(full)}});
    }
    Result<std::vector<Reply>> replies = Run(cmds);
    if (!replies.ok()) return replies.status();
    std::vector<std::optional<StoreValue>> out(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      const redisReply* v = (*replies)[2 * i].get();
      const redisReply* ttl = (*replies)[2 * i + 1].get();
      if (v->type == REDIS_REPLY_NIL) continue;
      if (v->type != REDIS_REPLY_STRING || ttl->type != REDIS_REPLY_INTEGER) {
        return Internal("redis GET: unexpected reply type " +
                        std::to_string(v->type));
      }
      if (ttl->integer == -2) continue;  // expired between GET and PTTL
      out[i] = StoreValue{std::make_shared<const std::string>(v->str, v->len),
                          ttl->integer < 0
                              ? kNoExpiry
                              : static_cast<double>(ttl->integer) / 1000.0};
    }
    return out;
  }

  Status Put(const StoreKey& key, std::string_view value,
             double ttl_seconds) override {
    if (Status s = CheckKey(key); !s.ok()) return s;
    if (Status s = CheckTtl(ttl_seconds); !s.ok()) return s;
    Command c{{"SET", FullKey(key), std::string(value)}};
    if (ttl_seconds != kNoExpiry) {
      const double ms = std::ceil(ttl_seconds * 1000.0);
      c.args.push_back("PX");
      c.args.push_back(std::to_string(
          static_cast<long long>(std::min(std::max(ms, 1.0), 9.0e15))));
    }
    Result<std::vector<Reply>> r = Run({&c, 1});
    return r.ok() ? Status::Ok() : r.status();
  }

  Result<bool> Erase(const StoreKey& key) override {
    if (Status s = CheckKey(key); !s.ok()) return s;
    Command c{{"UNLINK", FullKey(key)}};
    Result<std::vector<Reply>> r = Run({&c, 1});
    if (!r.ok()) return r.status();
    return (*r)[0]->type == REDIS_REPLY_INTEGER && (*r)[0]->integer > 0;
  }

  Result<std::vector<uint64_t>> AddToCounters(std::span<const StoreKey> keys,
                                              uint64_t delta,
                                              uint64_t initial) override {
    if (Status s = CheckBatch(keys.size()); !s.ok()) return s;
    std::vector<Command> cmds;
    cmds.reserve(keys.size() * 2);
    for (const StoreKey& k : keys) {
      if (Status s = CheckKey(k); !s.ok()) return s;
      std::string full = FullKey(k);
      cmds.push_back({{"SET", full, std::to_string(initial), "NX"}});
      cmds.push_back({{"INCRBY", std::move(full), std::to_string(delta)}});
    }
    Result<std::vector<Reply>> replies = Run(cmds, /*errors_ok=*/true);
    if (!replies.ok()) return replies.status();
    std::vector<uint64_t> out;
    out.reserve(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      const redisReply* r = (*replies)[2 * i + 1].get();
      if (r->type == REDIS_REPLY_ERROR) {
        return InvalidArgument("redis INCRBY: " + std::string(r->str, r->len) +
                               " (the key holds a value, not a counter)");
      }
      if (r->type != REDIS_REPLY_INTEGER) {
        return Internal("redis INCRBY: unexpected reply type");
      }
      out.push_back(static_cast<uint64_t>(r->integer));
    }
    return out;
  }

 private:
  std::string FullKey(const StoreKey& k) const {
    std::string s;
    s.reserve(o_.prefix.size() + k.ns.size() + k.key.size() + 2);
    s += o_.prefix;
    s += ':';
    s += k.ns;
    s += ':';
    s += k.key;
    return s;
  }

  std::string Where() const {
    return "redis " + o_.host + ":" + std::to_string(o_.port);
  }

  timeval Timeout() const {
    timeval tv{};
    tv.tv_sec = o_.timeout_ms / 1000;
    tv.tv_usec = (o_.timeout_ms % 1000) * 1000;
    return tv;
  }

  // The status of a context that failed.
  Status ContextError(const redisContext* c, std::string_view what) const {
    const std::string msg = Where() + ": " + std::string(what) + ": " +
                            (c != nullptr ? c->errstr : "out of memory");
    if (c != nullptr && c->err == REDIS_ERR_IO &&
        (errno == EAGAIN || errno == EWOULDBLOCK || errno == ETIMEDOUT ||
         errno == EINPROGRESS)) {
      return DeadlineExceeded(msg);
    }
    return Unavailable(msg);
  }

  Status ReplyError(const redisReply* r, std::string_view what) const {
    const std::string text(r->str, r->len);
    const std::string msg = Where() + ": " + std::string(what) + ": " + text;
    if (text.rfind("OOM", 0) == 0) return ResourceExhausted(msg);
    if (text.rfind("LOADING", 0) == 0 || text.rfind("READONLY", 0) == 0 ||
        text.rfind("MASTERDOWN", 0) == 0 || text.rfind("BUSY", 0) == 0 ||
        text.rfind("NOAUTH", 0) == 0 || text.rfind("WRONGPASS", 0) == 0) {
      return Unavailable(msg);
    }
    return Internal(msg);
  }

  Result<Ctx> Connect() {
    Ctx c(redisConnectWithTimeout(o_.host.c_str(), o_.port, Timeout()));
    if (c == nullptr || c->err) return ContextError(c.get(), "connect");
    if (redisSetTimeout(c.get(), Timeout()) != REDIS_OK) {
      return ContextError(c.get(), "set timeout");
    }
    std::vector<Command> setup;
    if (!o_.password.empty()) setup.push_back({{"AUTH", o_.password}});
    if (o_.db != 0) setup.push_back({{"SELECT", std::to_string(o_.db)}});
    if (!setup.empty()) {
      Result<std::vector<Reply>> r = Pipeline(c.get(), setup, false);
      if (!r.ok()) return r.status();
    }
    return c;
  }

  // Sends `cmds` and reads their replies on `c`. An error reply fails the
  // call unless `errors_ok`.
  Result<std::vector<Reply>> Pipeline(redisContext* c,
                                      std::span<const Command> cmds,
                                      bool errors_ok) const {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const Command& cmd : cmds) {
      argv.clear();
      lens.clear();
      for (const std::string& a : cmd.args) {
        argv.push_back(a.data());
        lens.push_back(a.size());
      }
      if (redisAppendCommandArgv(c, static_cast<int>(argv.size()), argv.data(),
                                 lens.data()) != REDIS_OK) {
        return ContextError(c, cmd.args[0]);
      }
    }
    std::vector<Reply> replies;
    replies.reserve(cmds.size());
    for (const Command& cmd : cmds) {
      void* raw = nullptr;
      if (redisGetReply(c, &raw) != REDIS_OK || raw == nullptr) {
        return ContextError(c, cmd.args[0]);
      }
      replies.emplace_back(static_cast<redisReply*>(raw));
    }
    if (!errors_ok) {
      for (size_t i = 0; i < replies.size(); ++i) {
        if (replies[i]->type == REDIS_REPLY_ERROR) {
          return ReplyError(replies[i].get(), cmds[i].args[0]);
        }
      }
    }
    return replies;
  }

  Result<std::vector<Reply>> Run(std::span<const Command> cmds,
                                 bool errors_ok = false) {
    Ctx c;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        c = std::move(idle_.back());
        idle_.pop_back();
      }
    }
    if (c == nullptr) {
      Result<Ctx> made = Connect();
      if (!made.ok()) return made.status();
      c = std::move(*made);
    }
    Result<std::vector<Reply>> r = Pipeline(c.get(), cmds, errors_ok);
    // Error replies leave the stream in step; I/O errors do not.
    if (c->err == 0) {
      std::lock_guard<std::mutex> lock(mu_);
      if (idle_.size() < static_cast<size_t>(o_.pool)) {
        idle_.push_back(std::move(c));
      }
    }
    return r;
  }

  const std::string name_;
  const RedisOptions o_;
  std::mutex mu_;
  std::vector<Ctx> idle_;  // GUARDED_BY(mu_)
};

}  // namespace

std::unique_ptr<Store> NewRedisStore(std::string name, RedisOptions o) {
  // hiredis writes with write(2): a server that died mid-call would raise
  // SIGPIPE and kill the process. Choice: ignore SIGPIPE when nobody set a
  // handler (the write then fails with EPIPE: store_unavailable).
  struct sigaction old {};
  if (sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) {
    signal(SIGPIPE, SIG_IGN);
  }
  return std::make_unique<RedisStore>(std::move(name), std::move(o));
}

}  // namespace toolcache::store_internal
