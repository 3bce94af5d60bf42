// The LLM APIs' wire formats, read without I/O and without building a DOM:
// Anthropic Messages, OpenAI Chat Completions and OpenAI Responses.
//
// ParseRequest reads a request body ONCE and keeps byte spans of its
// top-level fields (model, system / instructions, tools and each tool,
// tool_choice, thinking, messages / input and each message or item) and of
// every tool call and tool result in the history, so later stages can
// splice or replace them byte-exactly (the server-side tool loop of issue
// 13 inserts hidden turns, the prompt-cache work of issue 14 rewrites the
// tool list); the proxy itself forwards the original bytes untouched.
// ParseResponse and StreamReader find the tool calls the model asks for in
// a whole response or in a stream of SSE events read one at a time.
//
// Pairs: Anthropic tool_use (assistant) -> tool_result (user) blocks by
// tool_use_id; Chat Completions assistant tool_calls (function or custom)
// -> role "tool" messages by tool_call_id; Responses call items
// (function_call, custom_tool_call, local_shell_call, ... see ItemKind) ->
// their `*_call_output` items by call_id. A custom (freeform) call's
// arguments are {"input":<its input string>}; an item that carries an
// `action` / `operation` object instead has that object as arguments.
//
// Thread-safety: free functions are thread-safe (one simdjson parser per
// thread); a StreamReader belongs to one stream. Ownership: spans index the
// body they were parsed from. A ParsedRequest's text fields (roles, types,
// call and result ids, names, arguments) are views: into the body it was
// parsed from, or into storage the ParsedRequest owns (see ParseRequest);
// a response's strings are copies.
//
// Example:
//   Result<ParsedRequest> r = ParseRequest(Api::kAnthropicMessages, body);
//   for (const ToolResult& t : r->tool_results)
//     if (t.message >= r->turn_begin) Record(t, NormalizedResult(body, t));
#ifndef TOOLCACHE_SRC_LLM_WIRE_H_
#define TOOLCACHE_SRC_LLM_WIRE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "toolcache/status.h"

namespace toolcache::llm {

enum class Api : uint8_t {
  kAnthropicMessages,  // POST /v1/messages
  kOpenAiChat,         // POST /v1/chat/completions
  kOpenAiResponses,    // POST /v1/responses
};
// "anthropic_messages", "openai_chat", "openai_responses" (metric labels).
std::string_view ApiName(Api api);

// Bytes [begin, end) of the body a request was parsed from; empty = absent.
struct Span {
  uint32_t begin = 0;
  uint32_t end = 0;
  bool empty() const { return end <= begin; }
  uint32_t size() const { return end - begin; }
  std::string_view In(std::string_view body) const {
    return body.substr(begin, end - begin);
  }
};

struct ToolDef {
  std::string name;
  Span span;         // the whole tool object
  Span description;  // raw JSON string literal
  Span schema;       // input_schema / parameters object
};

// One message (Anthropic, Chat) or input item (Responses). Views (see
// ParsedRequest).
struct Message {
  Span span;
  Span content;
  std::string_view role;  // "user", "assistant", "tool", ... ("" for items)
  std::string_view type;  // Responses item type ("message", "function_call")
};

// A tool call the model made, in a request's history. Views (see
// ParsedRequest); the fields mean what ToolUse's do.
struct RequestToolUse {
  std::string_view id;
  std::string_view name;
  std::string_view arguments;
  Span span;             // the block / tool_call / item
  uint32_t message = 0;  // index in ParsedRequest::messages
  bool function = true;
};

// A tool call the model made, in a response (copies).
struct ToolUse {
  std::string id;         // tool_use id / tool_call id / call_id
  std::string name;       // tool name as the model sent it
  std::string arguments;  // JSON text of the arguments object
  Span span;              // the block / tool_call / item (requests only)
  uint32_t message = 0;   // index in ParsedRequest::messages (requests only)
  uint32_t choice = 0;    // Chat: the choice it belongs to (responses, n > 1)
  // False for a call whose answer is not a function result (a custom
  // tool call, a Responses local_shell_call / computer_call ...): observed,
  // never answered by the proxy's tool loop.
  bool function = true;
};

// A tool result the client sent back. Views (see ParsedRequest).
struct ToolResult {
  std::string_view id;  // tool_use_id / tool_call_id / call_id
  Span span;            // the block / tool message / output item
  Span content;         // raw content / output value (string or array)
  bool is_error = false;
  uint32_t message = 0;
};

// Choice (issue 32, hopS): the text of ~330 messages, calls and results of
// a 200 KB request are views, not strings (their allocation, copy and
// destruction: ~47,000 of the 710,000 instructions the proxy spent on the
// bench's 200 KB request, callgrind). A view points into the parsed body
// where the value's bytes are its text (a string without escapes, a raw
// `input` object), else into `owned` (a decoded escape, Chat's decoded
// `arguments`, a built `{"input":...}` or `namespace__name`), which copies
// of the ParsedRequest share (it is not changed after the parse).
//
// REQUIRES, while any view is read: the body ParseRequest read keeps its
// buffer and bytes. Moving the std::string keeps its buffer (ParseRequest
// reads in place only from a buffer with 64 bytes of spare capacity, never
// a short string's inline one); assigning to it or destroying it does not.
// A body ParseRequest copied (too little capacity) is the copy in `owned`.
// A holder given another std::string with the same bytes moves the views
// onto it with RebaseViews (ServeSession does).
struct RequestText {
  std::string body;                // the padded copy, when one was made
  std::deque<std::string> values;  // push_back keeps every element in place
};

struct ParsedRequest {
  Api api = Api::kAnthropicMessages;
  bool stream = false;
  std::string model;
  // Top-level spans (empty when absent). `system` is Anthropic's system or
  // Responses' instructions; `messages` is messages or Responses' input.
  Span model_span, system, tools, tool_choice, thinking, messages;
  std::string previous_response_id;  // Responses
  bool conversation = false;         // Responses: a `conversation` is set
  std::vector<ToolDef> tool_defs;
  std::vector<Message> message_list;
  std::vector<RequestToolUse> tool_uses;  // every call in the history
  std::vector<ToolResult> tool_results;   // every result in the history
  // The newest client turn starts at this message: the first one after the
  // last assistant message (or function_call item). Results at or after it
  // answer the previous response.
  uint32_t turn_begin = 0;
  // What the views point into besides the caller's body (null when
  // nothing): the padded copy of the body, decoded and built strings.
  std::shared_ptr<RequestText> owned;
  // The bytes the views into the body point into: the caller's body or
  // owned->body (RebaseViews).
  const char* text_base = nullptr;
};

// Points every view of `request` that indexes the body it was parsed from
// at the same offset of `body` instead. REQUIRES: `body` has the parsed
// body's bytes (a copy of it). No-op when the views index owned storage or
// `body` already.
void RebaseViews(ParsedRequest* request, std::string_view body);

struct ParseLimits {
  // Choice: 512 levels, as the MCP scanner; real requests nest < 30.
  uint32_t max_depth = 512;
};

// INVALID_ARGUMENT "<what>: <detail>" for a body that is not a JSON object,
// has a wrong-typed known field (messages not an array, model not a
// string...), or is nested deeper than the limit (message says "depth").
// Unknown fields are ignored. Spans index `body`; reads past body.size()
// need body.capacity() >= size() + 64, else the body is copied first (into
// the result's `owned`). The result's views point into `body` or `owned`:
// see ParsedRequest's REQUIRES.
Result<ParsedRequest> ParseRequest(Api api, const std::string& body,
                                   const ParseLimits& limits = {});

// Debug hook: how many times ParseRequest ran on the calling thread (tests
// check that no stage parses a request body twice).
uint64_t RequestParseCount();

struct Usage {
  int64_t input_tokens = -1;  // -1 = not reported
  int64_t output_tokens = -1;
  int64_t cache_read_tokens = -1;      // Anthropic / OpenAI cached_tokens
  int64_t cache_creation_tokens = -1;  // Anthropic only
};

struct ParsedResponse {
  // Every choice's calls (Chat with n > 1: choice-major, see ToolUse::choice).
  std::vector<ToolUse> tool_uses;
  Usage usage;
  std::string stop_reason;  // stop_reason / finish_reason (of choices[0]) /
                            // status
  uint32_t choices = 1;     // Chat: how many choices the response has
};

// The tool calls of a whole (non-streamed) response body.
Result<ParsedResponse> ParseResponse(Api api, std::string_view body);

// Follows one response stream event by event (the SSE event name and its
// data) and collects the tool calls the model completes.
//   Anthropic: content_block_start (tool_use) / input_json_delta /
//              content_block_stop; message_stop ends; "error" fails.
//   Chat:      choices[i].delta.tool_calls (function or custom) by choice
//              and call index (every choice of n > 1); data "[DONE]" ends;
//              a chunk with "error" fails.
//   Responses: response.output_item.done with a client call item
//              (ItemKind::kClientCall);
//              response.completed / response.incomplete end;
//              response.failed / error fail.
class StreamReader {
 public:
  explicit StreamReader(Api api) : api_(api) {}
  void OnEvent(std::string_view event, std::string_view data);
  // The terminal event arrived (the stream is whole).
  bool complete() const { return complete_; }
  // The stream reported an error (or a chunk could not be read).
  bool failed() const { return failed_; }
  const std::string& failure() const { return failure_; }
  // Completed tool calls, in the order the model finished them.
  const std::vector<ToolUse>& tool_uses() const { return done_; }
  const Usage& usage() const { return usage_; }
  uint64_t events() const { return events_; }
  // Chat: how many choices the stream carried (1 + the highest index).
  uint32_t choices() const { return choices_; }

 private:
  struct Partial {
    std::string id;
    std::string name;
    std::string arguments;  // custom: the decoded input text so far
    bool tool = false;
    bool custom = false;  // Chat custom (freeform) tool call
  };
  void Anthropic(std::string_view event, std::string_view data);
  void Chat(std::string_view data);
  void Responses(std::string_view event, std::string_view data);
  void Fail(std::string why);

  Api api_;
  bool complete_ = false;
  bool failed_ = false;
  std::string failure_;
  // By block / tool_call index (Chat: choice << 32 | tool_call index).
  std::map<int64_t, Partial> open_;
  uint32_t choices_ = 1;
  std::vector<ToolUse> done_;
  Usage usage_;
  uint64_t events_ = 0;
};

// What a Responses input / output item is, by its `type`:
//   kClientCall:   a call the client runs and answers: function_call,
//                  custom_tool_call (freeform input, Codex's apply_patch),
//                  local_shell_call, computer_call, shell_call,
//                  apply_patch_call, and any later `*_call` kind;
//   kClientOutput: its answer (`*_call_output`);
//   kOther:        messages, reasoning, and the calls the provider runs
//                  itself (web_search_call, file_search_call, mcp_call...).
// Choice: an unknown `*_call` kind counts as a client call, so a new kind
// is observed (and, not known read-only, invalidates) rather than missed.
enum class ItemKind : uint8_t { kClientCall, kClientOutput, kOther };
ItemKind ResponsesItemKind(std::string_view type);
// The tool name of a call item: its `name`, else the type without "_call"
// ("local_shell", "computer", "apply_patch", "shell"). A call of a tool
// declared inside a `namespace` tool (Codex CLI puts each MCP server's
// tools in one: `{"type":"function_call","namespace":"mcp__fs","name":
// "read_text_file"}`) is named `<namespace>__<name>`
// ("mcp__fs__read_text_file", Codex's own flattening and Claude Code's
// `mcp__<server>__<tool>`): the bare name would be another namespace's tool, or
// an agent built-in, and would not be known to run on the client (agent_tools.h
// ResultFromClient).
std::string CallItemName(std::string_view type, std::string_view name,
                         std::string_view name_space = {});

// A tool result's content as an MCP CallToolResult JSON object, the form
// every face stores: a JSON string becomes one text block
// ({"content":[{"type":"text","text":<the string>}]}); an array of content
// blocks / parts is kept as it is ({"content":<array>}). Built by splicing
// the raw bytes, never re-serializing, except that every `cache_control`
// member inside the blocks (at any depth) is dropped (WithoutCacheControl):
// the client's prompt-cache breakpoints belong to its request, not to the
// tool's result (session 19).
std::string NormalizedResult(std::string_view body, const ToolResult& result);

// `content` (one JSON value, well-formed) without any object member named
// `cache_control` (after unescaping), at any depth: the bytes unchanged
// when there is none (or the text is not well-formed), else written
// compactly (whitespace between tokens dropped, strings and numbers as
// spelled).
std::string WithoutCacheControl(std::string_view content);

// Decodes a JSON string literal (with its quotes). False when malformed
// (json::Unquote of the core toolkit: bad escapes, raw control characters).
bool DecodeJsonString(std::string_view literal, std::string* out);

}  // namespace toolcache::llm

#endif  // TOOLCACHE_SRC_LLM_WIRE_H_
