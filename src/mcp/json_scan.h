// Raw JSON-RPC message scanning without building a DOM.
//
// The MCP proxy forwards the exact bytes it received, so it must find a
// message's `id`, `method`, `params`, `result` and `error` members as byte
// spans of the original line, not as re-serialized values. ScanMessage()
// validates the whole line against the RFC 8259 grammar in one pass, with
// the core JSON toolkit's scanner (src/core/json.h ScanValue: one grammar,
// one UTF-8 check, 512 levels of nesting without recursion), and records
// the spans of the top-level members JSON-RPC cares about. Strings must be
// well-formed UTF-8 (RFC 8259 section 8.1: JSON exchanged between systems
// is UTF-8); a peer that mishandles other bytes never sees them.
//
// IdSniffer is the tolerant counterpart for lines the proxy cannot hold or
// parse (over-long lines it streams or discards, malformed lines): fed the
// bytes in pieces, it recovers the top-level `id` and whether `method`,
// `result` or `error` were present, so the request such a line belongs to
// can still be answered.
//
// Thread-safety: free functions without state; an IdSniffer is used by one
// thread. Ownership: every returned string_view points into the caller's
// text.
//
// Example:
//   Result<RawMessage> m =
//   ScanMessage(R"({"jsonrpc":"2.0","id":7,"method":"ping"})"); if (m.ok() &&
//   m->kind() == MessageKind::kRequest) Use(m->method_name);
#ifndef TOOLCACHE_SRC_MCP_JSON_SCAN_H_
#define TOOLCACHE_SRC_MCP_JSON_SCAN_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "toolcache/status.h"

namespace toolcache::mcp {

enum class MessageKind {
  kRequest,       // method + id
  kNotification,  // method, no id
  kResponse,      // id + (result | error), no method
  kOther,         // valid JSON that is none of the above (batch, scalar...)
};

// Spans of one JSON-RPC message's top-level members (empty = absent).
struct RawMessage {
  bool is_object = false;
  std::string_view jsonrpc;  // raw JSON value text of "jsonrpc"
  std::string_view id;       // raw JSON value text: 7, "abc", null
  std::string_view method;   // raw JSON string literal including quotes
  std::string method_name;   // decoded method (empty when absent)
  std::string_view params;
  std::string_view result;
  std::string_view error;
  // A top-level member other than jsonrpc, id, method, params, result and
  // error (JSON-RPC 2.0 section 4 defines no other).
  bool other_members = false;
  // One of the six members above appeared twice (ScanMessage refuses it).
  bool duplicate_member = false;

  MessageKind kind() const;
};

// Validates `line` as exactly one JSON value (surrounding whitespace allowed)
// and, when it is an object, records the JSON-RPC member spans. A line
// where jsonrpc, id, method, params, result or error appears twice is
// refused (readers disagree on which one counts); another duplicated
// member keeps its last occurrence (as JSON.parse does).
// Errors: kInvalidArgument "byte N: <problem>" (e.g. "byte 12: invalid
// UTF-8 in string").
Result<RawMessage> ScanMessage(std::string_view line);

// True when `text` is well-formed UTF-8 (no overlong forms, surrogates or
// code points above U+10FFFF).
bool IsValidUtf8(std::string_view text);

// `text` with every maximal ill-formed subsequence replaced by U+FFFD (the
// WHATWG / Unicode "maximal subpart" practice, which is what a TextDecoder
// based peer would see); well-formed input comes back unchanged.
std::string RepairUtf8(std::string_view text);

// Recovers a JSON-RPC message's top-level `id` and member names from bytes
// fed in any number of pieces, without buffering the message and without
// requiring it to be valid JSON. Member names are compared as written (a
// name spelled with escapes is not recognized). Memory is bounded: at most
// kMaxIdBytes of the id are kept.
class IdSniffer {
 public:
  static constexpr size_t kMaxIdBytes = 256;

  void Feed(std::string_view bytes);
  void Reset() { *this = IdSniffer(); }

  // The raw text of the last top-level `id` member seen, when it is a valid
  // JSON string or number (null, objects, truncated or over-long ids give
  // ""). Usable as a raw id in replies and with NormalizeId.
  std::string id() const;
  bool is_object() const { return is_object_; }
  bool has_method() const { return has_method_; }
  bool has_result() const { return has_result_; }
  bool has_error() const { return has_error_; }
  // A request (id + method), or a response (id + result/error, no method).
  bool is_request() const { return !id().empty() && has_method_; }
  bool is_response() const {
    return !id().empty() && !has_method_ && (has_result_ || has_error_);
  }

 private:
  enum class Phase { kKey, kColon, kValue };
  bool started_ = false;
  bool done_ = false;
  bool is_object_ = false;
  bool in_string_ = false;
  bool escape_ = false;
  bool capturing_key_ = false;
  bool capturing_id_ = false;
  bool key_too_long_ = false;
  bool id_too_long_ = false;
  bool has_id_ = false;
  bool has_method_ = false;
  bool has_result_ = false;
  bool has_error_ = false;
  int64_t depth_ = 0;
  Phase phase_ = Phase::kKey;
  std::string key_;
  std::string id_;
};

// Calls `f(name, value)` for every top-level member of the JSON object text
// `object` (already validated), with `name` decoded. Returns false when
// `object` is not an object.
bool ForEachMember(std::string_view object,
                   const std::function<void(const std::string& name,
                                            std::string_view value)>& f);

// The raw span of top-level member `name` of the validated object text
// `object`, or an empty view when absent.
std::string_view FindMember(std::string_view object, std::string_view name);

// Decodes a raw JSON string literal (with quotes). Empty on malformed input.
std::string DecodeString(std::string_view literal);

// The id in a stable textual form for matching a response to its request,
// coarse enough that every spelling a peer may echo maps to it: a number by
// the IEEE-754 double it parses to, written as ECMAScript does (1, 1.0, 1e0
// -> "1"; 9007199254740993 -> "9007199254740992", what a JavaScript server
// echoes; a Python server's exact echo maps there too), a string re-escaped
// minimally, anything else as compact JSON. Two ids with one normal form
// cannot be told apart in answers, so the session never has two such
// requests in flight upstream (it remaps the later one).
std::string NormalizeId(std::string_view raw_id);

// What kind of JSON-RPC id a request carries, for deciding whether the
// session can rely on the server answering it under an id it recognizes.
enum class IdKind {
  kString,       // a JSON string
  kSafeInteger,  // an integer literal (no fraction, no exponent) within
                 // +-(2^53 - 1): every JSON parser reads it exactly
  kOtherNumber,  // 1.5, 1.0, 1e3, 9007199254740993: MCP allows integers
                 // only, and such numbers are echoed in other spellings or
                 // rejected (a TypeScript SDK server drops the message)
  kNull,         // JSON-RPC 2.0 allows but discourages it; MCP forbids it
  kOther,        // true, {"x":1}, [1]: not a JSON-RPC id at all
};
IdKind ClassifyId(std::string_view raw_id);

}  // namespace toolcache::mcp

#endif  // TOOLCACHE_SRC_MCP_JSON_SCAN_H_
