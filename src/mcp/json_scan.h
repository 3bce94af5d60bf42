// Raw JSON-RPC message scanning without building a DOM.
//
// The MCP proxy forwards the exact bytes it received, so it must find a
// message's `id`, `method`, `params`, `result` and `error` members as byte
// spans of the original line, not as re-serialized values. ScanMessage()
// validates the whole line against the RFC 8259 grammar in one pass (UTF-8 is
// not validated: bytes >= 0x80 inside strings pass through untouched) and
// records the spans of the top-level members JSON-RPC cares about.
//
// Thread-safety: free functions without state. Ownership: every returned
// string_view points into the caller's text.
//
// Example:
//   Result<RawMessage> m =
//   ScanMessage(R"({"jsonrpc":"2.0","id":7,"method":"ping"})"); if (m.ok() &&
//   m->kind() == MessageKind::kRequest) Use(m->method_name);
#ifndef TOOLCACHE_SRC_MCP_JSON_SCAN_H_
#define TOOLCACHE_SRC_MCP_JSON_SCAN_H_

#include <cstddef>
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
  std::string_view id;      // raw JSON value text: 7, "abc", null
  std::string_view method;  // raw JSON string literal including quotes
  std::string method_name;  // decoded method (empty when absent)
  std::string_view params;
  std::string_view result;
  std::string_view error;

  MessageKind kind() const;
};

// Validates `line` as exactly one JSON value (surrounding whitespace allowed)
// and, when it is an object, records the JSON-RPC member spans. A duplicated
// top-level member keeps its last occurrence (as JSON.parse does).
// Errors: kInvalidArgument "byte N: <problem>".
Result<RawMessage> ScanMessage(std::string_view line);

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

// The id in a stable textual form for matching a response to its request:
// numbers as nlohmann dumps them (1.0 and 1 differ in JSON-RPC only by
// spelling, so they match), strings re-escaped minimally.
std::string NormalizeId(std::string_view raw_id);

}  // namespace toolcache::mcp

#endif  // TOOLCACHE_SRC_MCP_JSON_SCAN_H_
