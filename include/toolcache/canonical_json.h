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
// Cache keys need one refinement (NumberForm::kExactIntegers, forced by the
// key builders): an integer that the RFC 8785 text would not denote exactly
// (9007199254740993 would become 9007199254740992) keeps its exact decimal
// digits, because servers in Python, Go, Rust or Java parse it exactly and
// answer the two calls differently. Every document without such an integer
// is written byte for byte as RFC 8785 writes it.
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

// How numbers are written.
enum class NumberForm {
  // RFC 8785: every number as the IEEE-754 double nearest to it, in
  // ECMAScript notation (9007199254740993 -> 9007199254740992).
  kRfc8785,
  // For cache keys: as kRfc8785, except that a number whose exact value is
  // an integer that the kRfc8785 text does not denote exactly is written as
  // that integer's plain decimal digits (9007199254740993,
  // 9.007199254740993e15 and 9007199254740993.0 -> 9007199254740993;
  // 1152921504606846976 = 2^60, which RFC 8785 prints 1152921504606847000,
  // -> 1152921504606846976). The mapping from exact value to text is
  // one-to-one over integers, spellings of one integer (1e16,
  // 10000000000000000) still agree, and a document without such an integer
  // is written byte for byte as kRfc8785. Non-integers keep kRfc8785's
  // double semantics (servers parse fractions as doubles).
  kExactIntegers,
};

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
  // How numbers are written. Default kRfc8785 (plain RFC 8785). The key
  // builders below always use kExactIntegers, whatever this says.
  NumberForm numbers = NumberForm::kRfc8785;
};

// Returns the RFC 8785 canonical form of `json` (no trailing newline), minus
// the dropped top-level members described in `options`. Dropped members are
// still fully validated. On bad input returns kInvalidArgument (or
// kResourceExhausted for the depth/size limits) with a message of the form
// "line L, column C (byte B): <problem>"; columns count bytes, 1-based.
Result<std::string> CanonicalizeJson(std::string_view json,
                                     const CanonicalOptions& options = {});

// The JSON Pointers (RFC 6901: "/n", "/a/0") of the numbers that
// NumberForm::kExactIntegers writes differently from RFC 8785 (integers a
// double cannot hold), in document order, skipping dropped top-level members
// (`options` as for CanonicalizeJson; its `numbers` is ignored). Errors are
// those of CanonicalizeJson. For `toolcache key`, to say why a key differs
// from the RFC 8785 text.
Result<std::vector<std::string>> FindInexactIntegers(
    std::string_view json, const CanonicalOptions& options = {});

// The same canonical form for an already parsed document, for callers that
// hold one. With kRfc8785 every number goes through double, exactly like the
// text path, so both agree on every input both accept. Object members are
// re-sorted by UTF-16 code units (nlohmann's own order is by UTF-8 bytes).
// Fails with kInvalidArgument for non-finite numbers, strings that are not
// valid UTF-8, and binary values; kResourceExhausted for the limits. Note that
// a document parsed by nlohmann has already lost any duplicate member names.
// With kExactIntegers, int64/uint64 values are written exactly; a
// floating-point value that is an integer of magnitude >= 2^53 fails with
// kInvalidArgument (the parser may have rounded its digits away, e.g.
// 9007199254740993.0 or 18446744073709551617): use the text path.
Result<std::string> CanonicalizeJsonValue(const nlohmann::json& value,
                                          const CanonicalOptions& options = {});

// Builds the CacheKey {scope, server, tool, CanonicalizeJson(arguments_json,
// options with drop_meta forced to true and numbers forced to
// kExactIntegers)}: "_meta" is never part of a key, and two calls whose
// integers differ beyond a double's precision get different keys.
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
// object requirement, the same forced "_meta" dropping and exact integers;
// see CanonicalizeJsonValue for the integers it must refuse).
Result<CacheKey> MakeCacheKeyFromValue(std::string_view scope,
                                       std::string_view server,
                                       std::string_view tool,
                                       const nlohmann::json& arguments,
                                       const CanonicalOptions& options = {});

// One top-level member of an arguments object, as the key's canonicalizer
// read it (CanonicalArguments).
struct ArgumentMember {
  std::string name;  // unescaped UTF-8
  // "_meta" or a configured ignorable field: validated, not in the key.
  bool dropped = false;
  // Where the value's canonical text is in CanonicalArguments::canonical
  // (not dropped); read it with CanonicalArguments::Value.
  size_t value_offset = 0;
  size_t value_size = 0;
  std::string dropped_value;  // a dropped member's canonical value
};

// A call's arguments read once: the canonical text MakeCacheKey keys on and
// the top-level members in the caller's order, for the readers that need
// more than the key (the classifier's argument rules, the policy's
// parameter category; src/cache/prepare.h), so none parses the text again.
struct CanonicalArguments {
  std::string canonical;  // as MakeCacheKey's CacheKey::canonical_args
  std::vector<ArgumentMember> members;  // input order, dropped ones too
  // The canonical text of `m`'s value (a view into this object).
  std::string_view Value(const ArgumentMember& m) const;
};

// MakeCacheKey's canonicalization (the same forced options, object check
// and error messages; byte-identical text) that also keeps the top-level
// members. One parse of `arguments_json`.
Result<CanonicalArguments> CanonicalizeArguments(
    std::string_view arguments_json, const CanonicalOptions& options = {});

// The unescaped text of a string literal that the canonicalizer wrote
// (RFC 8785 escapes only: \" \\ \b \f \n \r \t \u00xx). REQUIRES:
// `literal` is such a literal, quotes included.
std::string DecodeCanonicalString(std::string_view literal);

// Test hook: how many argument documents this thread has parsed -- every
// CanonicalizeJson / CanonicalizeArguments / MakeCacheKey, and the readers
// that parse arguments text themselves and say so with CountArgumentParse
// (the heuristic's and the feature builder's text paths). The request path
// reads a call's arguments once; a test holds it to that.
uint64_t ArgumentParsesOnThisThread();
void CountArgumentParse();

}  // namespace toolcache

#endif  // TOOLCACHE_CANONICAL_JSON_H_
