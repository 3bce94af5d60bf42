// One start-up for every face (`serve`, `proxy`, `mcp` stdio and --url):
// from the parsed configuration and the command line, open the shared store
// (unless it is `memory` or the face runs without a cache) and build the
// ToolCache on it. Each face then only wires the engine into its options.
//
// Errors are face-neutral and name where the bad value came from: a store
// given with --store reads "--store: store 'x': ...", one from the file
// "c.yaml:3: store 'x': ..."; a bad policy "c.yaml:5: ...". The caller
// prefixes its command name and exits 2 (kExitUsage).
//
// Thread-safety: call once, from main's thread, before any face starts.
// Ownership: the Engine owns both; the cache borrows the store and the
// clock, so keep the Engine and the clock alive while the face runs.
//
// Example:
//   SystemClock clock;
//   Result<runtime::Engine> engine = runtime::OpenEngine(
//       config, &clock, {.store_flag = a.store, .no_cache = a.no_cache});
//   if (!engine.ok()) { std::cerr << "toolcache mcp: " << ...; return 2; }
//   o.cache = engine->cache.get();  // nullptr with --no-cache
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "toolcache/classifier.h"
#include "toolcache/clock.h"
#include "toolcache/config.h"
#include "toolcache/status.h"
#include "toolcache/store.h"
#include "toolcache/tool_cache.h"

namespace toolcache::runtime {

struct EngineOptions {
  // The --store flag's value; "" keeps the configuration's `store:`.
  std::string store_flag;
  // --no-cache: neither store nor cache (the face forwards everything).
  bool no_cache = false;
  // Extra classifier layers (the LLM proxy's agent tools), run after the
  // annotations and before the heuristic.
  std::vector<std::unique_ptr<FeatureExtractor>> extra_layers;
};

struct Engine {
  std::unique_ptr<Store> store;      // nullptr: `memory` or --no-cache
  std::unique_ptr<ToolCache> cache;  // nullptr: --no-cache
};

// Opens the store and builds the cache as above. `config.store` is set to
// the --store value when one was given (the face's config then shows it).
[[nodiscard]] Result<Engine> OpenEngine(Config& config, const Clock* clock,
                                        EngineOptions options);

}  // namespace toolcache::runtime
