// Invariants: the store is opened before the cache (the cache borrows it)
// and only when it is not `memory` and the face caches; an error leaves
// nothing open; every error names its source (--store or file:line).
// Choice: `memory` means the in-process cache alone, never a second
// in-memory copy behind it (as each face did before this module).
#include "src/runtime/startup/engine.h"

#include <spdlog/spdlog.h>

#include <utility>

namespace toolcache::runtime {

Result<Engine> OpenEngine(Config& config, const Clock* clock,
                          EngineOptions options) {
  const bool from_flag = !options.store_flag.empty();
  if (from_flag) config.store = options.store_flag;
  Engine engine;
  if (options.no_cache) return engine;
  if (config.store != "memory") {
    Result<std::unique_ptr<Store>> opened = OpenStore(config.store);
    if (!opened.ok()) {
      std::string where = from_flag ? "--store" : config.source;
      if (!from_flag && config.store_line > 0) {
        where += ":" + std::to_string(config.store_line);
      }
      return Status(opened.status().code(),
                    where + ": " + std::string(opened.status().message()));
    }
    engine.store = std::move(*opened);
    spdlog::info("store: {}", engine.store->name());
  }
  Result<std::unique_ptr<ToolCache>> made = NewToolCache(
      config, clock, engine.store.get(), std::move(options.extra_layers));
  if (!made.ok()) return made.status();
  engine.cache = std::move(*made);
  return engine;
}

}  // namespace toolcache::runtime
