// Canonical JSON (RFC 8785, "JCS") for tool arguments, and the helpers that
// turn (scope, server, tool, arguments) into a CacheKey.
//
// CanonicalizeJson() is a strict single-pass parser + serializer: the output
// is the RFC 8785 form (members sorted by UTF-16 code units of their names,
// no whitespace, ECMAScript number formatting, minimal string escaping), so two
// argument documents that mean the same thing produce the same bytes. Input
// that RFC 8785 / I-JSON (RFC 7493) does not allow is rejected with a Status
// whose message names the byte offset, the line:column and the problem:
// invalid UTF-8 (overlong forms, UTF-8-encoded surrogates, > U+10FFFF), lone
// or unpaired \u surrogate escapes, duplicate member names (compared after
// unescaping), raw control characters in strings, numbers that overflow a
// double (1e400), trailing garbage, nesting deeper than `max_depth` and input
// longer than `max_bytes`. Numbers are IEEE-754 doubles: 1.0 -> 1,
// -0 -> 0, 9007199254740993 -> 9007199254740992.
//
// Thread-safety: free functions without shared state; call from any thread.
// Ownership: inputs are borrowed for the duration of the call; outputs are
// returned by value.
//
// Example:
//   Result<std::string> c = CanonicalizeJson(R"({"b": 1.0, "a": [true]})");
//   // *c == R"({"a":[true],"b":1})"
//   Result<CacheKey> key = MakeCacheKey("", "fs", "read_file",
//                                       R"({"path":"/etc/hosts"})");
//   if (!key.ok()) return key.status();  // bad arguments: bypass the cache
//   uint64_t id = key->Id();
#ifndef TOOLCACHE_CANONICAL_JSON_H_
#define TOOLCACHE_CANONICAL_JSON_H_

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "toolcache/key.h"
#include "toolcache/status.h"

namespace toolcache {

// Choice: max depth 128 (reasons below; listed in docs/KEYS.md).
// Default nesting limit. 128 levels is far beyond any real tool-argument
// document (MCP arguments are rarely deeper than 5), keeps the recursive
// parser's stack use bounded (< 64 KiB), and bounds the re-sorting work of
// nested objects (each byte is moved at most once per enclosing object).
inline constexpr int32_t kDefaultMaxJsonDepth = 128;
// Choice: max input 16 MiB (docs/KEYS.md).
// Default input size limit: 16 MiB. Arguments larger than this are not worth
// a cache key; the call simply bypasses the cache.
inline constexpr uint64_t kDefaultMaxJsonBytes = uint64_t{16} << 20;

struct CanonicalOptions {
  // Maximum nesting of arrays/objects; a top-level scalar has depth 0, `[]`
  // and `{}` have depth 1. Deeper input fails with kResourceExhausted.
  // Default kDefaultMaxJsonDepth (128). Lower it to bound CPU and stack per
  // request; raising it above a few thousand risks stack exhaustion.
  int32_t max_depth = kDefaultMaxJsonDepth;
  // Maximum input size in bytes (the text for CanonicalizeJson, the
  // canonical output for CanonicalizeJsonValue); 0 = unlimited. Larger input
  // fails with kResourceExhausted. Default kDefaultMaxJsonBytes (16 MiB).
  uint64_t max_bytes = kDefaultMaxJsonBytes;
  // When the document is an object, drop its TOP-LEVEL member "_meta" (MCP
  // request metadata: progress tokens etc., never part of a cache key).
  // Default true. Set false (and leave ignore_fields empty) for plain RFC 8785
  // canonicalization, as `toolcache key --canonical` does. The key builders
  // below always drop "_meta", whatever this says.
  bool drop_meta = true;
  // Names of further TOP-LEVEL object members to drop (configured ignorable
  // argument fields such as a request id or a nonce). Nested members with
  // these names are kept. Default empty.
  std::vector<std::string> ignore_fields;
};

// Returns the RFC 8785 canonical form of `json` (no trailing newline), minus
// the dropped top-level members described in `options`. Dropped members are
// still fully validated. On bad input returns kInvalidArgument (or
// kResourceExhausted for the depth/size limits) with a message of the form
// "line L, column C (byte B): <problem>"; columns count bytes, 1-based.
Result<std::string> CanonicalizeJson(std::string_view json,
                                     const CanonicalOptions& options = {});

// The same canonical form for an already parsed document, for callers that
// hold one (the MCP proxy). Every number goes through double, exactly like the
// text path, so both agree on every input both accept. Object members are
// re-sorted by UTF-16 code units (nlohmann's own order is by UTF-8 bytes).
// Fails with kInvalidArgument for non-finite numbers, strings that are not
// valid UTF-8, and binary values; kResourceExhausted for the limits. Note that
// a document parsed by nlohmann has already lost any duplicate member names.
Result<std::string> CanonicalizeJsonValue(const nlohmann::json& value,
                                          const CanonicalOptions& options = {});

// Builds the CacheKey {scope, server, tool, CanonicalizeJson(arguments_json,
// options with drop_meta forced to true)}: "_meta" is never part of a key.
// The arguments must be a JSON object, as they are in MCP (tools/call
// "arguments") and in the LLM APIs (tool_use "input", function-call
// "arguments"); any other value fails with kInvalidArgument
// "arguments: must be a JSON object (...), got an array" (or a string, a
// number, a boolean, null). Other errors are those of CanonicalizeJson,
// prefixed with "arguments: ".
Result<CacheKey> MakeCacheKey(std::string_view scope, std::string_view server,
                              std::string_view tool,
                              std::string_view arguments_json,
                              const CanonicalOptions& options = {});

// As MakeCacheKey, from an already parsed arguments document (the same
// object requirement and the same forced "_meta" dropping).
Result<CacheKey> MakeCacheKeyFromValue(std::string_view scope,
                                       std::string_view server,
                                       std::string_view tool,
                                       const nlohmann::json& arguments,
                                       const CanonicalOptions& options = {});

}  // namespace toolcache

#endif  // TOOLCACHE_CANONICAL_JSON_H_
