// The project's one JSON toolkit: the pieces every JSON reader and writer in
// the tree needs and used to write for itself. RFC 8259 string escaping and
// unescaping, number writing, limits (depth, size) with one error
// vocabulary, and a validating value scanner that reports byte spans.
//
// Inventory (issue 30, item 4; what reads or writes JSON, and its fate):
//   nlohmann::json / ordered_json DOM  config, classify, sim, mcp session
//       answers, stream_serve's message rebuilding: stays where a DOM is
//       needed; its dump() escapes strings exactly as AppendQuoted does
//       (RFC 8785 escapes), so spliced bytes agree. prompt_cache: no request
//       body is parsed into a DOM any more: src/prompt/span_tree.h reads
//       every body (any whitespace, escape, number spelling; duplicate
//       names last-wins) -- with --serve the client's body once, the
//       splice's and offload's edits grafted in -- the rewrite is spliced
//       into the client's bytes (as BodyEdits for the proxy's one writer),
//       and values are compared through their compact dump written from
//       the spans (Unquote + AppendQuoted for strings, nlohmann for one
//       number token at a time). The DOM stays for BreaksJson and the
//       small CacheControl member the stage writes.
//   simdjson On Demand (src/llm/wire.cc, src/sim/trace_formats.cc,
//       src/serve/service.cc): stays, the measured fast path (a 2 KB
//       request parses in ~26,000 instructions); its depth pre-check is
//       CheckLimits below.
//   src/core/canonical_json.cc's own parser (RFC 8785 cache keys): stays;
//       its string and number writers are the ones exposed here.
//   src/mcp/json_scan.* (the MCP proxy's line scanner): migrated. Its
//       validation is ScanValue (error_at gives its "byte N: ..." offsets);
//       it only walks the top-level members. Callgrind, instructions per
//       ScanMessage, its former recursive scanner -> now: a small tools/call
//       3,280 -> 3,235, a 2 KB result 27,320 -> 25,183, a notification
//       2,873 -> 2,813; a whole MCP cache hit through `toolcache mcp`
//       ~53,260 -> ~53,228. DecodeString stays on nlohmann: a lone surrogate
//       escape fails there instead of becoming U+FFFD (Unquote), so two method
//       or tool names cannot decode to one. The scanners of
//       src/sim/trace_formats.cc stay: they read a fixed key order in one
//       pass, finding a string's end 8 bytes at a time (FirstStopByte),
//       where ScanString checks byte by byte, so moving them would raise
//       the trace readers' instructions per record (docs/SIM.md).
//   Hand-written escapers: src/llm/wire.cc JsonQuote, src/llm/offload.cc
//       JsonString (nlohmann round trip), src/mcp/session.cc JsonString
//       (\u00XX for every control byte; wire-only error messages),
//       src/sim/workloads.cc Str (bare quotes), src/serve/service.cc and
//       src/llm/tool_loop.cc JsonString (nlohmann round trips with
//       error_handler_t::replace) -> AppendQuoted / Quote (migrated; the
//       output is the same byte for byte, ill-formed UTF-8 included:
//       json_test's WritesWhatTheFormerNlohmannRoundTripsWrote; service.cc
//       keeps the name as a one-line wrapper). src/classify and the other
//       src/sim writers hold none (they dump nlohmann values; report.cc's
//       GpQuote quotes gnuplot, convert_bfcl.cc reads Python literals).
//       src/metrics Escape is Prometheus label escaping, not JSON, and
//       stays.
//   Hand-written unescapers: src/llm/wire.cc DecodeJsonString -> Unquote
//       (migrated; the llm name stays as a thin wrapper).
//   MCP protocol revisions: IsModernProtocolVersion is defined once
//       (src/mcp/era.cc, >= 2026-07-28 as the SDK).
//
// Thread-safety: pure functions, thread-safe.
//
// Example:
//   std::string out = "{\"name\":";
//   json::AppendQuoted(name, &out);          // "a\"b" -> "\"a\\\"b\""
//   std::string text;
//   if (json::Unquote(literal, &text) != json::Error::kOk) ...
//   json::Span v;
//   json::Error e = json::ScanValue(body, 0, {.max_depth = 64}, &v);
#ifndef TOOLCACHE_SRC_CORE_JSON_H_
#define TOOLCACHE_SRC_CORE_JSON_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace toolcache::json {

// One vocabulary for what is wrong with a JSON text.
enum class Error : uint8_t {
  kOk,
  kTooDeep,           // arrays / objects nested past Limits::max_depth
  kTooLarge,          // longer than Limits::max_bytes
  kUnterminated,      // a string, array or object that does not end
  kBadEscape,         // \x, \u with fewer than 4 hex digits
  kControlCharacter,  // a raw U+0000..U+001F inside a string
  kBadUtf8,           // ill-formed UTF-8 (Unicode table 3-7)
  kBadNumber,         // not the RFC 8259 number grammar
  kSyntax,            // anything else (missing ':', stray byte, ...)
  kTrailing,          // content after the one value
};
// "too_deep", "too_large", ... (metric labels and messages).
std::string_view ErrorName(Error e);

struct Limits {
  // Choice: 512 levels, as the MCP scanner and the LLM request parser;
  // real requests nest fewer than 30.
  uint32_t max_depth = 512;
  // Choice: 64 MiB, the LLM proxy's default body limit.
  uint64_t max_bytes = 64ull << 20;
};

// Bytes [begin, end) of a text.
struct Span {
  uint32_t begin = 0;
  uint32_t end = 0;
  std::string_view In(std::string_view text) const {
    return text.substr(begin, end - begin);
  }
};

// kTooLarge / kTooDeep when `text` breaks a limit, else kOk. Depth is
// counted over brackets outside strings (strings jumped with memchr); the
// rest of the grammar is not checked (a fast pre-check for parsers, such
// as simdjson On Demand, that check depth only where they iterate).
Error CheckLimits(std::string_view text, const Limits& limits = {});

// Validates one JSON value starting at text[pos] (leading whitespace
// skipped) and sets *value to its bytes. Full RFC 8259 grammar: escapes,
// UTF-8, numbers, depth. Trailing bytes after the value are not looked at.
// On an error, *error_at (when given) is the offending byte's offset (the
// text's size when it ended early), for messages such as "byte 12: ...".
Error ScanValue(std::string_view text, size_t pos, const Limits& limits,
                Span* value, size_t* error_at = nullptr);

// kOk when `text` is exactly one JSON value (whitespace around allowed).
Error Validate(std::string_view text, const Limits& limits = {});

// What AppendQuoted does with ill-formed UTF-8.
enum class BadUtf8 : uint8_t {
  kReplace,   // each maximal ill-formed subpart becomes U+FFFD
  kVerbatim,  // bytes copied as they are (REQUIRES the caller checked)
};

// Appends `text` as a JSON string literal, RFC 8259 section 7 with RFC
// 8785's choices (nlohmann's dump() writes the same): \" \\ \b \t \n \f \r,
// other U+0000..U+001F as \u00xx (lowercase hex), everything else verbatim
// ('/' and U+007F included).
void AppendQuoted(std::string_view text, std::string* out,
                  BadUtf8 bad = BadUtf8::kReplace);
std::string Quote(std::string_view text, BadUtf8 bad = BadUtf8::kReplace);

// Decodes a JSON string literal (with its quotes) into UTF-8. Errors:
// kSyntax (no quotes), kBadEscape, kControlCharacter, kUnterminated (a
// quote or backslash inside that ends it early). Choice: a lone surrogate
// escape decodes to U+FFFD rather than failing (what the LLM proxy did;
// providers send such text in tool output).
Error Unquote(std::string_view literal, std::string* out);

// Numbers. Integers in plain decimal; doubles as ECMAScript's
// Number.prototype.toString (shortest round trip, RFC 8785), a non-finite
// double as null.
void AppendInt(int64_t v, std::string* out);
void AppendUint(uint64_t v, std::string* out);
void AppendDouble(double v, std::string* out);
// Reads an integer literal: kBadNumber when `text` is not an integer in the
// JSON grammar or does not fit in int64 (a huge number is refused, never
// wrapped or clamped).
Error ParseInt(std::string_view text, int64_t* v);

}  // namespace toolcache::json

#endif  // TOOLCACHE_SRC_CORE_JSON_H_
