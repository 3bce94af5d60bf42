// Internal helpers shared by the trace reader and the converters: canonical
// argument text, result digests, and JSON type checks with messages that name
// the field. Not part of the public API.
#ifndef TOOLCACHE_SRC_SIM_CONVERT_COMMON_H_
#define TOOLCACHE_SRC_SIM_CONVERT_COMMON_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "toolcache/status.h"
#include "toolcache/trace.h"

namespace toolcache::trace_internal {

// RFC 8785 canonical text of a JSON object of tool arguments.
// REQUIRES: nothing; returns InvalidArgument when `args` is not an object or
// holds a value JCS cannot represent (NaN / infinity).
Result<std::string> CanonicalArguments(const nlohmann::json& args);

// "sha256:<64 lowercase hex>" of the bytes: the result digest the converters
// write so that the simulator can count stale results served from cache.
std::string ResultDigest(std::string_view bytes);

// The text a tool result contributes to its size and digest: a string is
// itself; an array of content parts/blocks is the concatenation of the `text`
// of each text part and the compact JSON of every other part; anything else
// is its compact JSON. null contributes nothing.
std::string ResultContentBytes(const nlohmann::json& content);

// Parses one JSON Lines trace record (docs/TRACES.md) into *rec; returns ""
// or the reason it is rejected (the reference reader, in trace.cc).
std::string ParseTraceRecord(std::string_view line, TraceRecord* rec);

// JSON dump that never throws on invalid UTF-8 (replaces bad bytes).
std::string SafeDump(const nlohmann::json& value);

}  // namespace toolcache::trace_internal

#endif  // TOOLCACHE_SRC_SIM_CONVERT_COMMON_H_
