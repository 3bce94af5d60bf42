// The admin routes of a face without an HTTP server of its own (`toolcache
// mcp`, stdio and --url, with --metrics-listen HOST:PORT): GET /metrics
// (Prometheus text) and GET /toolcache/stats (the one stats shape,
// src/runtime/stats.h), served from the engine's counters on a small HTTP
// server of one loop thread. EnginePrometheus renders those counters with
// the metric registry every HTTP face uses (src/metrics/metrics.h).
//
// Trust: the same browser guard as `serve` and `proxy` (Host allow-list,
// Origin and Sec-Fetch-Site checks; src/http/browser_guard.h); no token, as
// /metrics on the other faces. Listen on loopback (the default host).
//
// Thread-safety: Start and the destructor from one thread; the routes run
// on the server's thread and call `stats` there (ToolCache::Stats is
// thread-safe). The server's thread blocks every signal, so SIGTERM and
// SIGCHLD still reach the face's own signalfd.
//
// Example:
//   Result<std::unique_ptr<runtime::AdminServer>> admin =
//       runtime::AdminServer::Start({.host = "127.0.0.1", .port = 0,
//                                    .face = "mcp", .stats = [&] {
//                                      return cache->Stats(); }});
//   std::cerr << "metrics on " << (*admin)->url() << "/metrics\n";
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "toolcache/status.h"
#include "toolcache/tool_cache.h"

namespace toolcache::runtime {

// The engine's counters as Prometheus text: toolcache_engine_calls_total
// {outcome}, toolcache_engine_bypasses_total{reason},
// toolcache_engine_events_total{what}, toolcache_store_errors_total
// {reason}, toolcache_engine_saved_seconds, toolcache_engine_bytes_served_
// total, toolcache_cache_entries, toolcache_cache_bytes.
std::string EnginePrometheus(const ToolCacheStats& s);

struct AdminOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0: any free port (url() tells which)
  std::string face;   // "mcp": the stats document's "face"
  // The engine's counters now; nullptr: a face without a cache (zeros).
  std::function<ToolCacheStats()> stats;
};

class AdminServer {
 public:
  // Binds and starts serving; UNAVAILABLE when the address cannot be bound.
  [[nodiscard]] static Result<std::unique_ptr<AdminServer>> Start(
      AdminOptions options);
  virtual ~AdminServer() = default;  // stops the server, joins its thread
  // "http://host:port" as bound.
  virtual std::string url() const = 0;
};

}  // namespace toolcache::runtime
