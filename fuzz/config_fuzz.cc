// Fuzz target: the YAML configuration loader (ParseConfig, yaml-cpp
// underneath) and, for every configuration it accepts, building the engine
// from it. Invariants: no crash, no hang, no sanitizer report; a rejected
// configuration says why (a non-empty message); an accepted one builds a
// ToolCache or is refused with a message, never a crash.
#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "toolcache/clock.h"
#include "toolcache/config.h"
#include "toolcache/tool_cache.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Logs cost most of the time and say nothing a failed check would not.
  static const bool quiet = [] {
    spdlog::set_level(spdlog::level::off);
    return true;
  }();
  (void)quiet;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const toolcache::Result<toolcache::Config> config =
      toolcache::ParseConfig(text, "fuzz.yaml");
  if (!config.ok()) {
    FUZZ_CHECK(!config.status().message().empty(),
               "a rejected config without a message");
    return 0;
  }
  toolcache::ManualClock clock(1000);
  auto cache = toolcache::NewToolCache(*config, &clock);
  if (!cache.ok()) {
    FUZZ_CHECK(!cache.status().message().empty(),
               "a refused engine without a message");
  }
  return 0;
}
