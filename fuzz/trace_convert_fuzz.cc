// Fuzz target: the trace readers and converters (src/sim convert_*): every
// TraceSource, the tool-table parser, the Python-call parser (BFCL) and
// ReadTrace (JSON Lines). The first byte picks the reader; the rest is its
// input. Invariants: no crash, no hang, no sanitizer report; an error has a
// message; a converted trace is readable again: WriteTrace's output
// read back with ReadTrace gives as many records.
#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_input.h"
#include "src/sim/trace_convert.h"
#include "toolcache/trace.h"

namespace {

constexpr toolcache::TraceSource kSources[] = {
    toolcache::TraceSource::kOpenAiChat,
    toolcache::TraceSource::kAnthropic,
    toolcache::TraceSource::kBfcl,
    toolcache::TraceSource::kLlmCompilerMovie,
    toolcache::TraceSource::kLlmCompilerParallelQa,
    toolcache::TraceSource::kLlmCompiler,
};
constexpr size_t kNumSources = sizeof(kSources) / sizeof(kSources[0]);

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Logs cost most of the time and say nothing a failed check would not.
  static const bool quiet = [] {
    spdlog::set_level(spdlog::level::off);
    return true;
  }();
  (void)quiet;
  toolcache::fuzz::FuzzInput in(data, size);
  const uint8_t choice = in.Byte() % (kNumSources + 3);
  const std::string body(in.rest());
  if (choice < kNumSources) {
    std::istringstream stream(body);
    toolcache::ConvertOptions options;
    auto converted =
        toolcache::ConvertTrace(kSources[choice], stream, "fuzz", options);
    if (!converted.ok()) {
      FUZZ_CHECK(!converted.status().message().empty(),
                 "conversion failed without a message");
      return 0;
    }
    std::ostringstream written;
    toolcache::WriteTrace(converted->trace, written);
    std::istringstream back(written.str());
    auto reread = toolcache::ReadTrace(back, "written");
    FUZZ_CHECK(reread.ok(), "a converted trace cannot be read back");
    FUZZ_CHECK(reread->records.size() == converted->trace.records.size(),
               "a converted trace reads back with another record count");
    return 0;
  }
  switch (choice - kNumSources) {
    case 0: {
      auto table = toolcache::ToolTable::Parse(body, "fuzz.csv");
      if (table.ok())
        (void)table->Lookup("search");
      else
        FUZZ_CHECK(!table.status().message().empty(), "no message");
      break;
    }
    case 1: {
      auto call = toolcache::ParsePythonCall(body);
      if (!call.ok())
        FUZZ_CHECK(!call.status().message().empty(), "no message");
      break;
    }
    default: {
      std::istringstream stream(body);
      auto trace = toolcache::ReadTrace(stream, "fuzz.jsonl");
      if (!trace.ok()) {
        FUZZ_CHECK(!trace.status().message().empty(), "no message");
      }
      break;
    }
  }
  return 0;
}
