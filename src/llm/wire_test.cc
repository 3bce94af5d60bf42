#include "src/llm/wire.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/core/json.h"

namespace toolcache::llm {
namespace {

std::string Padded(std::string s) {
  s.reserve(s.size() + 64);
  return s;
}

const char kAnthropic[] = R"({
  "model": "claude-sonnet-4-5",
  "max_tokens": 1024,
  "system": [{"type": "text", "text": "You are terse."}],
  "tools": [
    {"name": "Read", "description": "Reads a file", "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}}},
    {"name": "mcp__fs__read_file", "description": "Read \"quoted\"", "input_schema": {"type": "object"}}
  ],
  "tool_choice": {"type": "auto"},
  "unknown_field": {"nested": [1, 2, 3]},
  "messages": [
    {"role": "user", "content": "read a.txt"},
    {"role": "assistant", "content": [
      {"type": "text", "text": "ok"},
      {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/a.txt"}}
    ]},
    {"role": "user", "content": [
      {"type": "tool_result", "tool_use_id": "toolu_1", "content": "hello\nworld"},
      {"type": "text", "text": "thanks"}
    ]}
  ],
  "stream": true
})";

// hopS: the parse's text is views. A body with too little capacity is
// parsed from a copy the result keeps, so its views outlive the caller's
// string (ASan: heap-use-after-free when the copy was the parse's local).
TEST(WireTest, ViewsOfAnUnpaddedBodyOutliveTheCallersString) {
  Result<ParsedRequest> r = Internal("unset");
  {
    std::string body(kAnthropic);
    body.shrink_to_fit();
    ASSERT_LT(body.capacity(), body.size() + 64);
    r = ParseRequest(Api::kAnthropicMessages, body);
    ASSERT_TRUE(r.ok()) << r.status().message();
    body.assign(body.size(), 'x');  // the caller reuses its buffer
  }
  ASSERT_EQ(r->message_list.size(), 3u);
  EXPECT_EQ(r->message_list[1].role, "assistant");
  ASSERT_EQ(r->tool_uses.size(), 1u);
  EXPECT_EQ(r->tool_uses[0].id, "toolu_1");
  EXPECT_EQ(r->tool_uses[0].name, "Read");
  EXPECT_EQ(r->tool_uses[0].arguments, R"({"file_path": "/a.txt"})");
  ASSERT_EQ(r->tool_results.size(), 1u);
  EXPECT_EQ(r->tool_results[0].id, "toolu_1");
  // A copy of the result shares what it owns.
  const ParsedRequest copy = *r;
  r = Internal("unset");
  EXPECT_EQ(copy.tool_uses[0].arguments, R"({"file_path": "/a.txt"})");
}

// Escaped strings are decoded into the parser's buffer, which the next
// parse on the thread reuses: their views are copies the result owns, and
// so are Chat's decoded arguments (escaped JSON text).
TEST(WireTest, DecodedTextOutlivesTheNextParse) {
  const std::string body = Padded(
      R"({"model":"m","messages":[{"role":"us\u0065r","content":"x"},)"
      R"({"role":"assistant","content":null,"tool_calls":[{"id":"call\u005f1",)"
      R"("type":"function","function":{"name":"R\u0065ad","arguments":"{\"path\":\"a\"}"}}]},)"
      R"({"role":"tool","tool_call_id":"call\u005f1","content":"ok"}]})");
  Result<ParsedRequest> r = ParseRequest(Api::kOpenAiChat, body);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::string other = Padded(
      R"({"model":"m","messages":[{"role":"\u0061aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",)"
      R"("content":"\u0062bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}]})");
  ASSERT_TRUE(ParseRequest(Api::kOpenAiChat, other).ok());
  EXPECT_EQ(r->message_list[0].role, "user");
  ASSERT_EQ(r->tool_uses.size(), 1u);
  EXPECT_EQ(r->tool_uses[0].id, "call_1");
  EXPECT_EQ(r->tool_uses[0].name, "Read");
  EXPECT_EQ(r->tool_uses[0].arguments, R"({"path":"a"})");
  ASSERT_EQ(r->tool_results.size(), 1u);
  EXPECT_EQ(r->tool_results[0].id, "call_1");
}

// A holder of a copy of the body moves the views onto it (RebaseViews):
// they no longer depend on the string that was parsed.
TEST(WireTest, RebasedViewsIndexTheNewCopy) {
  Result<ParsedRequest> r = Internal("unset");
  std::string kept;
  {
    const std::string body = Padded(kAnthropic);
    r = ParseRequest(Api::kAnthropicMessages, body);
    ASSERT_TRUE(r.ok());
    kept = body;
    RebaseViews(&*r, kept);
  }
  const auto in = [&](std::string_view v) {
    return v.data() >= kept.data() &&
           v.data() + v.size() <= kept.data() + kept.size();
  };
  EXPECT_TRUE(in(r->message_list[2].role));
  EXPECT_TRUE(in(r->tool_uses[0].arguments));
  EXPECT_EQ(r->tool_uses[0].id, "toolu_1");
  EXPECT_EQ(r->tool_results[0].id, "toolu_1");
  EXPECT_EQ(r->message_list[2].role, "user");
}

TEST(ParseRequest, AnthropicFieldsPairsAndExactSpans) {
  const std::string body = Padded(kAnthropic);
  Result<ParsedRequest> r = ParseRequest(Api::kAnthropicMessages, body);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->stream);
  EXPECT_EQ(r->model, "claude-sonnet-4-5");
  EXPECT_EQ(r->model_span.In(body), "\"claude-sonnet-4-5\"");
  EXPECT_EQ(r->system.In(body),
            R"([{"type": "text", "text": "You are terse."}])");
  EXPECT_EQ(r->tool_choice.In(body), R"({"type": "auto"})");
  ASSERT_EQ(r->tool_defs.size(), 2u);
  EXPECT_EQ(r->tool_defs[0].name, "Read");
  EXPECT_EQ(r->tool_defs[1].description.In(body), R"("Read \"quoted\"")");
  EXPECT_EQ(r->tool_defs[0].schema.In(body).substr(0, 17),
            R"({"type": "object")");
  EXPECT_EQ(r->tools.In(body).front(), '[');
  EXPECT_EQ(r->tools.In(body).back(), ']');
  ASSERT_EQ(r->message_list.size(), 3u);
  EXPECT_EQ(r->message_list[0].span.In(body),
            R"({"role": "user", "content": "read a.txt"})");
  EXPECT_EQ(r->message_list[1].role, "assistant");
  EXPECT_EQ(r->turn_begin, 2u);
  ASSERT_EQ(r->tool_uses.size(), 1u);
  EXPECT_EQ(r->tool_uses[0].id, "toolu_1");
  EXPECT_EQ(r->tool_uses[0].name, "Read");
  EXPECT_EQ(r->tool_uses[0].arguments, R"({"file_path": "/a.txt"})");
  EXPECT_EQ(
      r->tool_uses[0].span.In(body),
      R"({"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/a.txt"}})");
  ASSERT_EQ(r->tool_results.size(), 1u);
  const ToolResult& t = r->tool_results[0];
  EXPECT_EQ(t.id, "toolu_1");
  EXPECT_EQ(t.message, 2u);
  EXPECT_FALSE(t.is_error);
  EXPECT_EQ(t.content.In(body), R"("hello\nworld")");
  EXPECT_EQ(NormalizedResult(body, t),
            R"({"content":[{"type":"text","text":"hello\nworld"}]})");
  // Every span is a slice of the body: splicing it out and back is exact.
  const Span m = r->messages;
  EXPECT_EQ(std::string(body.substr(0, m.begin)) + std::string(m.In(body)) +
                std::string(body.substr(m.end)),
            body);
}

TEST(ParseRequest, AnthropicBlockContentAndErrors) {
  const std::string body = Padded(R"({"model":"m","messages":[
    {"role":"assistant","content":[{"type":"tool_use","id":"a","name":"t","input":{}}]},
    {"role":"user","content":[{"type":"tool_result","tool_use_id":"a","is_error":true,
      "content":[{"type":"text","text":"boom"}]}]}]})");
  Result<ParsedRequest> r = ParseRequest(Api::kAnthropicMessages, body);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->tool_results.size(), 1u);
  EXPECT_TRUE(r->tool_results[0].is_error);
  EXPECT_EQ(NormalizedResult(body, r->tool_results[0]),
            R"({"content":[{"type":"text","text":"boom"}]})");
}

// Session 19 (attackK finding 5): the client's prompt-cache breakpoints
// are its request's, not the tool's result: not recorded, at any depth,
// under any spelling of the name; a result without one keeps its bytes.
TEST(ParseRequest, NormalizedResultDropsCacheControl) {
  const std::string body = Padded(R"({"model":"m","messages":[
    {"role":"assistant","content":[{"type":"tool_use","id":"a","name":"t","input":{}}]},
    {"role":"user","content":[{"type":"tool_result","tool_use_id":"a",
      "content":[{"type":"text","text":"one \"cache_control\"", "cache_control": {"type":"ephemeral"}},
                 {"type":"search_result","source":"s","title":"t","content":[
                   {"type":"text","text":"two","cache\u005fcontrol":{"type":"ephemeral","ttl":"1h"}}]},
                 {"cache_control":null,"type":"text","text":"three"}]}]}]})");
  Result<ParsedRequest> r = ParseRequest(Api::kAnthropicMessages, body);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->tool_results.size(), 1u);
  EXPECT_EQ(
      NormalizedResult(body, r->tool_results[0]),
      R"({"content":[{"type":"text","text":"one \"cache_control\""},)"
      R"({"type":"search_result","source":"s","title":"t","content":[)"
      R"({"type":"text","text":"two"}]},{"type":"text","text":"three"}]})");
  // Nothing to drop: the client's bytes as sent (spacing, escapes).
  const std::string kept =
      R"([ {"type": "text", "text": "caf\u00e9 cache_control"} ])";
  EXPECT_EQ(WithoutCacheControl(kept), kept);
  EXPECT_EQ(WithoutCacheControl(R"({"cache_control":{"a":[1,2]},"b":-1.5e3})"),
            R"({"b":-1.5e3})");
  EXPECT_EQ(WithoutCacheControl(R"([{"cache_control":1}, [true, null]])"),
            R"([{},[true,null]])");
}

// A message with two "content" members: the provider reads the last, so
// the blocks of the first are not observed (review finding: a FAKE
// tool_result in the first was recorded as t1's result), in either order.
TEST(ParseRequest, AnthropicRepeatedContentMemberLastWins) {
  const std::string body = Padded(R"({"model":"m","messages":[
    {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"t","input":{}}]},
    {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"FAKE"}],"content":"hi"}]})");
  Result<ParsedRequest> r = ParseRequest(Api::kAnthropicMessages, body);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->tool_uses.size(), 1u);
  EXPECT_TRUE(r->tool_results.empty());
  ASSERT_EQ(r->message_list.size(), 2u);
  EXPECT_EQ(r->message_list[1].content.In(body), R"("hi")");

  const std::string real = Padded(R"({"model":"m","messages":[
    {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"t","input":{}},
      {"type":"tool_use","id":"t2","name":"t","input":{}}],
     "content":[{"type":"tool_use","id":"t3","name":"t","input":{}}]},
    {"role":"user","content":"hi","content":[{"type":"tool_result","tool_use_id":"t3","content":"REAL"}]}]})");
  Result<ParsedRequest> q = ParseRequest(Api::kAnthropicMessages, real);
  ASSERT_TRUE(q.ok()) << q.status().message();
  ASSERT_EQ(q->tool_uses.size(), 1u);
  EXPECT_EQ(q->tool_uses[0].id, "t3");
  ASSERT_EQ(q->tool_results.size(), 1u);
  EXPECT_EQ(q->tool_results[0].id, "t3");
}

TEST(ParseRequest, ChatCompletionsToolCallsAndToolMessages) {
  const std::string body = Padded(R"({"model":"gpt-4o","stream":false,
    "tools":[{"type":"function","function":{"name":"get_weather","description":"Weather","parameters":{"type":"object"}}}],
    "messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"},
      {"role":"assistant","content":null,"tool_calls":[
        {"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
        {"id":"call_2","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},
      {"role":"tool","tool_call_id":"call_1","content":"sunny"},
      {"role":"tool","tool_call_id":"call_2","content":"{\"isError\": true, \"content\": []}"}]})");
  Result<ParsedRequest> r = ParseRequest(Api::kOpenAiChat, body);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->tool_defs.size(), 1u);
  EXPECT_EQ(r->tool_defs[0].name, "get_weather");
  EXPECT_EQ(r->tool_defs[0].description.In(body), "\"Weather\"");
  ASSERT_EQ(r->tool_uses.size(), 2u);
  EXPECT_EQ(r->tool_uses[0].arguments, R"({"city":"Paris"})");
  EXPECT_EQ(r->turn_begin, 3u);
  ASSERT_EQ(r->tool_results.size(), 2u);
  EXPECT_EQ(r->tool_results[0].id, "call_1");
  EXPECT_FALSE(r->tool_results[0].is_error);
  // Chat has no error flag: an MCP result serialized as text says it.
  EXPECT_TRUE(r->tool_results[1].is_error);
}

TEST(ParseRequest, ResponsesItems) {
  const std::string body = Padded(R"({"model":"gpt-5","instructions":"be brief",
    "previous_response_id":"resp_1",
    "tools":[{"type":"function","name":"lookup","parameters":{"type":"object"}},{"type":"web_search"}],
    "input":[{"type":"function_call","call_id":"c1","name":"lookup","arguments":"{\"q\":1}"},
             {"type":"function_call_output","call_id":"c1","output":"42"}]})");
  Result<ParsedRequest> r = ParseRequest(Api::kOpenAiResponses, body);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->system.In(body), "\"be brief\"");
  EXPECT_EQ(r->previous_response_id, "resp_1");
  ASSERT_EQ(r->tool_defs.size(), 2u);
  EXPECT_EQ(r->tool_defs[1].name, "");
  ASSERT_EQ(r->tool_uses.size(), 1u);
  EXPECT_EQ(r->tool_uses[0].id, "c1");
  ASSERT_EQ(r->tool_results.size(), 1u);
  EXPECT_EQ(r->turn_begin, 1u);
  EXPECT_EQ(NormalizedResult(body, r->tool_results[0]),
            R"({"content":[{"type":"text","text":"42"}]})");
  // A plain string input is one user message.
  const std::string plain = Padded(R"({"model":"m","input":"hello"})");
  Result<ParsedRequest> p = ParseRequest(Api::kOpenAiResponses, plain);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->messages.In(plain), "\"hello\"");
}

// Issue 28: every call item kind is seen, not only function_call.
TEST(ParseRequest, ResponsesCustomAndOtherCallItems) {
  const std::string body = Padded(R"({"model":"gpt-5","input":[
    {"type":"custom_tool_call","call_id":"c1","name":"apply_patch","input":"*** Begin Patch\n*** End Patch"},
    {"type":"custom_tool_call_output","call_id":"c1","output":"Done!"},
    {"type":"local_shell_call","call_id":"c2","action":{"type":"exec","command":["cat","a"]}},
    {"type":"local_shell_call_output","call_id":"c2","output":"hi"},
    {"type":"web_search_call","id":"ws1","status":"completed"},
    {"type":"computer_call","call_id":"c3","action":{"type":"click","x":1,"y":2}},
    {"type":"computer_call_output","call_id":"c3","output":{"type":"computer_screenshot","image_url":"data:"}}]})");
  Result<ParsedRequest> r = ParseRequest(Api::kOpenAiResponses, body);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->tool_uses.size(), 3u);
  EXPECT_EQ(r->tool_uses[0].name, "apply_patch");
  EXPECT_EQ(r->tool_uses[0].arguments,
            R"({"input":"*** Begin Patch\n*** End Patch"})");
  EXPECT_FALSE(r->tool_uses[0].function);
  EXPECT_EQ(r->tool_uses[1].name, "local_shell");
  EXPECT_EQ(r->tool_uses[1].arguments,
            R"({"type":"exec","command":["cat","a"]})");
  EXPECT_EQ(r->tool_uses[2].name, "computer");
  ASSERT_EQ(r->tool_results.size(), 3u);
  EXPECT_EQ(r->tool_results[0].id, "c1");
  EXPECT_EQ(
      NormalizedResult(body, r->tool_results[2]),
      R"({"content":[{"type":"computer_screenshot","image_url":"data:"}]})");
  // The newest turn starts after the last call item.
  EXPECT_EQ(r->turn_begin, 6u);
  EXPECT_EQ(ResponsesItemKind("mcp_call"), ItemKind::kOther);
  EXPECT_EQ(ResponsesItemKind("shell_call"), ItemKind::kClientCall);
  EXPECT_EQ(ResponsesItemKind("apply_patch_call_output"),
            ItemKind::kClientOutput);
}

TEST(ParseRequest, ChatCustomToolCalls) {
  const std::string body = Padded(R"({"model":"m","messages":[
    {"role":"assistant","tool_calls":[{"id":"t1","type":"custom","custom":{"name":"apply_patch","input":"patch"}}]},
    {"role":"tool","tool_call_id":"t1","content":"ok"}]})");
  Result<ParsedRequest> r = ParseRequest(Api::kOpenAiChat, body);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->tool_uses.size(), 1u);
  EXPECT_EQ(r->tool_uses[0].name, "apply_patch");
  EXPECT_EQ(r->tool_uses[0].arguments, R"({"input":"patch"})");
  EXPECT_FALSE(r->tool_uses[0].function);
}

TEST(StreamReader, ChatCustomToolCallStreamed) {
  StreamReader s(Api::kOpenAiChat);
  s.OnEvent(
      "",
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"t1","type":"custom","custom":{"name":"apply_patch","input":"*** Begin"}}]}}]})");
  s.OnEvent(
      "",
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"custom":{"input":" Patch\n\"x\""}}]}}]})");
  s.OnEvent("", "[DONE]");
  ASSERT_TRUE(s.complete());
  ASSERT_EQ(s.tool_uses().size(), 1u);
  EXPECT_EQ(s.tool_uses()[0].name, "apply_patch");
  EXPECT_EQ(s.tool_uses()[0].arguments,
            R"({"input":"*** Begin Patch\n\"x\""})");
  EXPECT_FALSE(s.tool_uses()[0].function);
}

TEST(ParseResponse, ResponsesCustomToolCallWholeAndStreamed) {
  const std::string item =
      R"({"type":"custom_tool_call","id":"ctc_1","call_id":"c9","name":"apply_patch","input":"*** Begin Patch"})";
  Result<ParsedResponse> r =
      ParseResponse(Api::kOpenAiResponses,
                    R"({"status":"completed","output":[)" + item + "]}");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->tool_uses.size(), 1u);
  EXPECT_EQ(r->tool_uses[0].id, "c9");
  EXPECT_EQ(r->tool_uses[0].name, "apply_patch");
  EXPECT_EQ(r->tool_uses[0].arguments, R"({"input":"*** Begin Patch"})");
  EXPECT_FALSE(r->tool_uses[0].function);
  StreamReader s(Api::kOpenAiResponses);
  s.OnEvent("response.output_item.done",
            R"({"type":"response.output_item.done","output_index":0,"item":)" +
                item + "}");
  s.OnEvent(
      "response.completed",
      R"({"type":"response.completed","response":{"status":"completed"}})");
  ASSERT_TRUE(s.complete());
  ASSERT_EQ(s.tool_uses().size(), 1u);
  EXPECT_EQ(s.tool_uses()[0].name, "apply_patch");
}

// Codex CLI declares each MCP server's tools inside a `namespace` tool and
// its calls name the namespace apart ({"namespace":"mcp__fs","name":
// "read_text_file"}). Read by the bare name, a call of the client's own MCP
// server was another tool's (an agent built-in, another namespace's tool of
// that name) and was not known to run on the client, so one container's file
// was served to another under the same key. Each path names it in full.
TEST(ParseRequest, ResponsesNamespacedCallsAreNamedInFull) {
  const std::string body = Padded(R"({"model":"gpt-5.5","input":[
    {"type":"function_call","call_id":"c1","namespace":"mcp__fs","name":"read_text_file","arguments":"{\"path\":\"/w/.env\"}"},
    {"type":"function_call_output","call_id":"c1","output":"A"},
    {"type":"function_call","call_id":"c2","namespace":"mcp__remote","name":"exec_command","arguments":"{\"cmd\":\"id\"}"},
    {"type":"function_call_output","call_id":"c2","output":"uid=1"},
    {"type":"function_call","call_id":"c3","name":"exec_command","arguments":"{\"cmd\":\"id\"}"},
    {"type":"function_call_output","call_id":"c3","output":"uid=0"}]})");
  Result<ParsedRequest> r = ParseRequest(Api::kOpenAiResponses, body);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->tool_uses.size(), 3u);
  EXPECT_EQ(r->tool_uses[0].name, "mcp__fs__read_text_file");
  EXPECT_EQ(r->tool_uses[1].name, "mcp__remote__exec_command");
  EXPECT_EQ(r->tool_uses[2].name, "exec_command");
  // A namespace that is not a string is refused like a bad name.
  EXPECT_FALSE(ParseRequest(Api::kOpenAiResponses,
                            Padded(R"({"input":[{"type":"function_call",)"
                                   R"("call_id":"c","namespace":7,)"
                                   R"("name":"n","arguments":"{}"}]})"))
                   .ok());

  const std::string item =
      R"({"type":"function_call","id":"fc_1","call_id":"c9","namespace":"mcp__fs","name":"read_text_file","arguments":"{}"})";
  Result<ParsedResponse> whole =
      ParseResponse(Api::kOpenAiResponses,
                    R"({"status":"completed","output":[)" + item + "]}");
  ASSERT_TRUE(whole.ok());
  ASSERT_EQ(whole->tool_uses.size(), 1u);
  EXPECT_EQ(whole->tool_uses[0].name, "mcp__fs__read_text_file");
  StreamReader s(Api::kOpenAiResponses);
  s.OnEvent("response.output_item.done",
            R"({"type":"response.output_item.done","output_index":0,"item":)" +
                item + "}");
  s.OnEvent(
      "response.completed",
      R"({"type":"response.completed","response":{"status":"completed"}})");
  ASSERT_TRUE(s.complete());
  ASSERT_EQ(s.tool_uses().size(), 1u);
  EXPECT_EQ(s.tool_uses()[0].name, "mcp__fs__read_text_file");
  // Anthropic and Chat have no namespaces: the member is not read there.
  Result<ParsedResponse> anthropic = ParseResponse(
      Api::kAnthropicMessages,
      R"({"content":[{"type":"tool_use","id":"t","namespace":"x","name":"Read","input":{}}]})");
  ASSERT_TRUE(anthropic.ok());
  ASSERT_EQ(anthropic->tool_uses.size(), 1u);
  EXPECT_EQ(anthropic->tool_uses[0].name, "Read");
}

TEST(ParseRequest, RejectsBadBodiesWithAReason) {
  struct Case {
    std::string body;
    std::string expect;
  };
  std::string deep =
      "{\"messages\":[{\"role\":\"user\",\"content\":" + std::string(600, '[') +
      std::string(600, ']') + "}]}";
  std::string deep_unknown = "{\"extra\":" + std::string(600, '[') +
                             std::string(600, ']') + ",\"messages\":[]}";
  const Case cases[] = {
      {"not json", "request body"},
      {"[1,2]", "request body"},
      {R"({"messages": {"role": "user"}})", "messages"},
      {R"({"model": 7, "messages": []})", "model"},
      {R"({"messages": [{"role": "user", "content": [{"type": 5}]}]})", "type"},
      {R"({"stream": "yes", "messages": []})", "stream"},
      {R"({"messages": []} trailing)", "request body"},
      {"{\"model\": \"\xff\"}", "request body"},
      {deep, "depth"},
      {deep_unknown, "depth"},
      {R"({"messages": [)", "request body"},
  };
  for (const Case& c : cases) {
    Result<ParsedRequest> r =
        ParseRequest(Api::kAnthropicMessages, Padded(c.body));
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos)
        << c.body.substr(0, 60) << " -> " << r.status().message();
  }
}

// The depth pre-check counts stage 1's structurals (parseG); these pin the
// verdict json::CheckLimits's byte pass gave, at the limit and around it.
std::string DepthMessage(uint32_t limit) {
  return "request body: nested deeper than the depth limit of " +
         std::to_string(limit);
}

std::string ParseMessage(const std::string& body, uint32_t limit) {
  Result<ParsedRequest> r =
      ParseRequest(Api::kAnthropicMessages, Padded(body), {.max_depth = limit});
  return r.ok() ? "ok" : std::string(r.status().message());
}

TEST(ParseRequest, DepthLimitHoldsAtTheBoundaryInSkippedValues) {
  // "system" is skipped by the walk (raw bytes): only the pre-check sees
  // its brackets. The root object is level 1.
  auto body = [](int n) {
    return R"({"model":"m","messages":[],"system":)" + std::string(n, '[') +
           std::string(n, ']') + "}";
  };
  EXPECT_EQ(ParseMessage(body(7), 8), "ok");
  EXPECT_EQ(ParseMessage(body(8), 8), DepthMessage(8));
  EXPECT_EQ(ParseMessage(body(511), 512), "ok");
  EXPECT_EQ(ParseMessage(body(512), 512), DepthMessage(512));
}

TEST(ParseRequest, DepthCountsNoBracketInsideAString) {
  const std::string in_string = R"({"model":"m","messages":[],"system":")" +
                                std::string(40, '[') + R"(\"\\\")" +
                                std::string(40, '{') + R"("})";
  EXPECT_EQ(ParseMessage(in_string, 8), "ok");
}

TEST(ParseRequest, DepthRefusalWinsOverOtherFaults) {
  const std::string deep = std::string(20, '[');
  // Each fault below would be reported on its own; with brackets nested
  // past the limit the depth message is given, as before parseG.
  EXPECT_EQ(ParseMessage("{\"model\":\"\xff\",\"system\":" + deep, 8),
            DepthMessage(8));  // bad UTF-8: stage 1 fails
  EXPECT_EQ(ParseMessage("{\"model\":7,\"system\":" + deep, 8),
            DepthMessage(8));  // the walk fails
  EXPECT_EQ(
      ParseMessage(R"({"model":"m","system":)" + deep + R"("unclosed)", 8),
      DepthMessage(8));  // unclosed string after the brackets
  EXPECT_EQ(ParseMessage(R"({"model":"m","system":"unclosed)" + deep, 8),
            ParseMessage(R"({"model":"m","system":"unclosed)", 8));
  // Closers at depth 0 do not lend depth to later openers.
  EXPECT_EQ(ParseMessage("]]]]]]]]]]" + deep, 8), DepthMessage(8));
}

// xorshift64: the depth tests' random bodies, reproducible from a seed.
struct XorShift {
  uint64_t seed;
  uint64_t operator()() {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
  }
};

TEST(ParseRequest, DepthVerdictAgreesWithTheBytePass) {
  // Random bodies from JSON's structural alphabet, compared with
  // json::CheckLimits, the byte-level pre-check used before parseG.
  XorShift next{0x9e3779b97f4a7c15ull};
  const std::string alphabet = "[]{}\"\\a,:1 y_";
  int refused_deep = 0;
  for (int i = 0; i < 4000; ++i) {
    std::string body = R"({"model":"m","system":[)";
    const size_t n = next() % 48;
    for (size_t k = 0; k < n; ++k) body += alphabet[next() % alphabet.size()];
    const uint32_t limit = 2 + static_cast<uint32_t>(next() % 6);
    const bool byte_deep =
        json::CheckLimits(body, {.max_depth = limit}) == json::Error::kTooDeep;
    const std::string got = ParseMessage(body, limit);
    if (byte_deep) {
      ++refused_deep;
      ASSERT_EQ(got, DepthMessage(limit)) << body;
    } else if (body.find('\\') == std::string::npos) {
      // A backslash outside a string is not JSON; stage 1 and the byte pass
      // read the quote after it differently (docs/PROXY.md).
      ASSERT_NE(got, DepthMessage(limit)) << body;
    }
  }
  EXPECT_GT(refused_deep, 100);
}

TEST(ParseRequest, DepthOfValidBodiesAgreesWithTheBytePass) {
  // Valid JSON nested around the limit inside a value the walk skips, so
  // only the structural count decides (a miscount is not covered by the
  // refusal path's byte pass). Runs of brackets, strings holding brackets
  // and scalars, of random lengths, so that openers and closers fall on
  // every position of the count's eight-index steps (session 15).
  XorShift next{0x2545f4914f6cdd1dull};
  int deep = 0;
  int ok = 0;
  for (int i = 0; i < 3000; ++i) {
    const uint32_t limit = 3 + static_cast<uint32_t>(next() % 12);
    // A random valid value: open up to `target` levels in bursts, with
    // scalars and bracket-holding strings between, then close them all.
    std::string value = "[";
    std::vector<char> stack = {']'};
    const uint32_t target = 1 + static_cast<uint32_t>(next() % (limit + 2));
    const int steps = 4 + static_cast<int>(next() % 40);
    bool need_comma = false;
    for (int k = 0; k < steps; ++k) {
      const uint64_t r = next() % 6;
      const bool in_object = !stack.empty() && stack.back() == '}';
      if (r <= 1 && stack.size() < target) {
        if (need_comma) value += ',';
        if (in_object) value += "\"k\":";
        const bool obj = next() % 2 == 0;
        value += obj ? '{' : '[';
        stack.push_back(obj ? '}' : ']');
        need_comma = false;
      } else if (r == 2 && stack.size() > 1) {
        value += stack.back();
        stack.pop_back();
        need_comma = true;
      } else {
        if (need_comma) value += ',';
        if (in_object) value += "\"k\":";
        value += (r == 3) ? "\"[{]}\"" : (r == 4 ? "12" : "true");
        need_comma = true;
      }
    }
    while (!stack.empty()) {
      value += stack.back();
      stack.pop_back();
    }
    const std::string body =
        R"({"model":"m","messages":[],"system":)" + value + "}";
    const bool byte_deep =
        json::CheckLimits(body, {.max_depth = limit}) == json::Error::kTooDeep;
    const std::string got = ParseMessage(body, limit);
    ASSERT_EQ(got, byte_deep ? DepthMessage(limit) : "ok") << body;
    ++(byte_deep ? deep : ok);
  }
  EXPECT_GT(deep, 300);
  EXPECT_GT(ok, 300);
}

TEST(ParseRequest, AnEscapeAnywhereInAShortStringIsDecoded) {
  // The view path's backslash test looks at 16 bytes at a time (parseG):
  // an escape at every offset of strings across the block sizes.
  for (size_t len = 0; len <= 70; ++len) {
    for (size_t at = 0; at <= len; ++at) {
      std::string raw(len, 'a'), want(len, 'a');
      if (at < len) {
        raw.replace(at, 1, "\\u0041");
        want[at] = 'A';
      }
      Result<ParsedRequest> r =
          ParseRequest(Api::kAnthropicMessages,
                       Padded(R"({"model":")" + raw + R"(","messages":[]})"));
      ASSERT_TRUE(r.ok()) << raw;
      ASSERT_EQ(r->model, want) << raw;
    }
  }
}

TEST(ParseRequest, UnpaddedBodiesAreCopiedNotOverread) {
  std::string body = R"({"model":"m","messages":[]})";
  body.shrink_to_fit();
  Result<ParsedRequest> r = ParseRequest(Api::kAnthropicMessages, body);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->model, "m");
}

TEST(ParseResponse, FindsToolCallsOfEachApi) {
  Result<ParsedResponse> a = ParseResponse(
      Api::kAnthropicMessages,
      R"({"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"x"},{"type":"tool_use","id":"toolu_9","name":"Read","input":{"file_path":"/a"}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":3,"cache_creation_input_tokens":2}})");
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_EQ(a->tool_uses.size(), 1u);
  EXPECT_EQ(a->tool_uses[0].id, "toolu_9");
  EXPECT_EQ(a->tool_uses[0].arguments, R"({"file_path":"/a"})");
  EXPECT_EQ(a->stop_reason, "tool_use");
  EXPECT_EQ(a->usage.cache_read_tokens, 3);
  EXPECT_EQ(a->usage.cache_creation_tokens, 2);
  Result<ParsedResponse> c = ParseResponse(
      Api::kOpenAiChat,
      R"({"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":7,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":4}}})");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->tool_uses.size(), 1u);
  EXPECT_EQ(c->tool_uses[0].arguments, R"({"a":1})");
  EXPECT_EQ(c->usage.cache_read_tokens, 4);
  Result<ParsedResponse> r = ParseResponse(
      Api::kOpenAiResponses,
      R"({"id":"resp_1","status":"completed","output":[{"type":"function_call","id":"fc_1","call_id":"call_7","name":"f","arguments":"{}"}]})");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->tool_uses.size(), 1u);
  EXPECT_EQ(r->tool_uses[0].id, "call_7");
  EXPECT_FALSE(ParseResponse(Api::kOpenAiChat, "{\"choices\":").ok());
}

TEST(StreamReader, AnthropicToolUseFromDeltas) {
  StreamReader s(Api::kAnthropicMessages);
  s.OnEvent(
      "message_start",
      R"({"type":"message_start","message":{"usage":{"input_tokens":5}}})");
  s.OnEvent(
      "content_block_start",
      R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})");
  s.OnEvent("content_block_stop", R"({"type":"content_block_stop","index":0})");
  s.OnEvent(
      "content_block_start",
      R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}})");
  s.OnEvent("ping", R"({"type":"ping"})");
  s.OnEvent(
      "content_block_delta",
      R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"file_"}})");
  s.OnEvent(
      "content_block_delta",
      R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"path\": \"/a\"}"}})");
  EXPECT_TRUE(s.tool_uses().empty());  // not complete before its stop
  s.OnEvent("content_block_stop", R"({"type":"content_block_stop","index":1})");
  ASSERT_EQ(s.tool_uses().size(), 1u);
  EXPECT_EQ(s.tool_uses()[0].arguments, R"({"file_path": "/a"})");
  EXPECT_FALSE(s.complete());
  s.OnEvent(
      "message_delta",
      R"({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}})");
  s.OnEvent("message_stop", R"({"type":"message_stop"})");
  EXPECT_TRUE(s.complete());
  EXPECT_FALSE(s.failed());
  EXPECT_EQ(s.usage().input_tokens, 5);
  EXPECT_EQ(s.usage().output_tokens, 9);
}

// llmhop: starts of blocks that are not tool_use are not parsed; a text
// block open around a tool_use block changes nothing, and a tool_use start
// that is not JSON still fails the stream.
TEST(StreamReader, AnthropicTextBlocksAroundAToolUse) {
  StreamReader s(Api::kAnthropicMessages);
  s.OnEvent(
      "content_block_start",
      R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})");
  s.OnEvent(
      "content_block_start",
      R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_9","name":"Grep","input":{}}})");
  s.OnEvent(
      "content_block_delta",
      R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}})");
  s.OnEvent("content_block_stop", R"({"type":"content_block_stop","index":0})");
  EXPECT_TRUE(s.tool_uses().empty());
  s.OnEvent(
      "content_block_delta",
      R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"q\":1}"}})");
  s.OnEvent("content_block_stop", R"({"type":"content_block_stop","index":1})");
  ASSERT_EQ(s.tool_uses().size(), 1u);
  EXPECT_EQ(s.tool_uses()[0].id, "toolu_9");
  EXPECT_EQ(s.tool_uses()[0].arguments, R"({"q":1})");
  EXPECT_FALSE(s.failed());

  StreamReader bad(Api::kAnthropicMessages);
  bad.OnEvent(
      "content_block_start",
      R"({"type":"content_block_start","index":0,"content_block":{"type":"tool_use",)");
  EXPECT_TRUE(bad.failed());
}

// A tool_use start whose type is spelled with an escape ("tool\u005fuse",
// the same string to a JSON parser) is parsed and collected (review
// finding: the raw-bytes filter skipped it).
TEST(StreamReader, AnthropicEscapedToolUseStartIsCollected) {
  StreamReader s(Api::kAnthropicMessages);
  s.OnEvent(
      "content_block_start",
      R"({"type":"content_block_start","index":0,"content_block":{"type":"tool\u005fuse","id":"toolu_e","name":"Read","input":{}}})");
  s.OnEvent(
      "content_block_delta",
      R"({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"q\":2}"}})");
  s.OnEvent("content_block_stop", R"({"type":"content_block_stop","index":0})");
  EXPECT_FALSE(s.failed());
  ASSERT_EQ(s.tool_uses().size(), 1u);
  EXPECT_EQ(s.tool_uses()[0].id, "toolu_e");
  EXPECT_EQ(s.tool_uses()[0].name, "Read");
  EXPECT_EQ(s.tool_uses()[0].arguments, R"({"q":2})");
}

TEST(StreamReader, AnthropicErrorEventFails) {
  StreamReader s(Api::kAnthropicMessages);
  s.OnEvent(
      "error",
      R"({"type":"error","error":{"type":"overloaded_error","message":"x"}})");
  EXPECT_TRUE(s.failed());
  EXPECT_FALSE(s.complete());
}

TEST(StreamReader, ChatToolCallDeltasAndDone) {
  StreamReader s(Api::kOpenAiChat);
  s.OnEvent(
      "",
      R"({"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}}]})");
  s.OnEvent(
      "",
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}}]})");
  s.OnEvent(
      "",
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","function":{"name":"t2","arguments":"{}"}}]}}]})");
  s.OnEvent(
      "",
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}}]})");
  s.OnEvent(
      "",
      R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})");
  EXPECT_TRUE(s.tool_uses().empty());
  s.OnEvent("", "[DONE]");
  ASSERT_TRUE(s.complete());
  ASSERT_EQ(s.tool_uses().size(), 2u);
  EXPECT_EQ(s.tool_uses()[0].id, "call_1");
  EXPECT_EQ(s.tool_uses()[0].arguments, R"({"city":"Paris"})");
  EXPECT_EQ(s.tool_uses()[1].name, "t2");
}

TEST(StreamReader, ResponsesFunctionCallItems) {
  StreamReader s(Api::kOpenAiResponses);
  s.OnEvent("response.created",
            R"({"type":"response.created","response":{"id":"r"}})");
  s.OnEvent(
      "response.output_item.added",
      R"({"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"c1","name":"f","arguments":""}})");
  s.OnEvent(
      "response.function_call_arguments.delta",
      R"({"type":"response.function_call_arguments.delta","delta":"{\"a\""})");
  s.OnEvent(
      "response.output_item.done",
      R"({"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc","call_id":"c1","name":"f","arguments":"{\"a\":1}"}})");
  EXPECT_FALSE(s.complete());
  s.OnEvent(
      "response.completed",
      R"({"type":"response.completed","response":{"usage":{"input_tokens":3,"output_tokens":2,"input_tokens_details":{"cached_tokens":1}}}})");
  ASSERT_TRUE(s.complete());
  ASSERT_EQ(s.tool_uses().size(), 1u);
  EXPECT_EQ(s.tool_uses()[0].arguments, R"({"a":1})");
  EXPECT_EQ(s.usage().cache_read_tokens, 1);
  StreamReader f(Api::kOpenAiResponses);
  f.OnEvent("response.failed", R"({"type":"response.failed"})");
  EXPECT_TRUE(f.failed());
}

TEST(StreamReader, GarbageEventFails) {
  StreamReader s(Api::kOpenAiChat);
  s.OnEvent("", "{not json");
  EXPECT_TRUE(s.failed());
}

TEST(DecodeJsonString, Escapes) {
  std::string out;
  ASSERT_TRUE(DecodeJsonString(R"("a\n\"\u00e9\ud83d\ude00")", &out));
  EXPECT_EQ(out, "a\n\"\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_FALSE(DecodeJsonString(R"("bad\q")", &out));
  EXPECT_FALSE(DecodeJsonString("nope", &out));
}

// Regression (fuzz/corpus/llm_wire/crash-invalid-escape-in-result): an
// invalid escape inside a tool result string passed simdjson's stage 1 and
// the result was stored as text that is not JSON.
TEST(ParseRequest, RejectsAToolResultThatIsNotValidJson) {
  const std::string bad = Padded(R"({"model":"m","messages":[
    {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]},
    {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a\lb"}]}]})");
  Result<ParsedRequest> r = ParseRequest(Api::kAnthropicMessages, bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("t1"), std::string::npos);
  const std::string good = Padded(R"({"model":"m","messages":[
    {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]},
    {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a\nb"}]}]})");
  EXPECT_TRUE(ParseRequest(Api::kAnthropicMessages, good).ok());
}

// llmhop: message, content and block spans come from where each value
// starts and where its iteration ended (no skip-and-rewind): with
// whitespace before and after every token they still cover exactly each
// value's bytes, for Anthropic and for OpenAI messages.
TEST(ParseRequest, SpansAreExactWithWhitespaceEverywhere) {
  const std::string use =
      R"({ "type" : "tool_use" , "id" : "t1" , "name" : "Read" , "input" : { "p" : 1 } })";
  const std::string result =
      R"({"type":"tool_result","tool_use_id":"t1","content":[ {"type":"text","text":"x"} ] })";
  const std::string content = "[ \n " + result + " \t\n ]";
  const std::string m0 = R"({ "role" : "user" , "content" : "go" })";
  const std::string m1 = R"({"role":"assistant","content":[ )" + use + " ]}";
  const std::string m2 = R"({ "role":"user", "content" : )" + content + " }";
  const std::string messages =
      "[\n  " + m0 + " ,\n  " + m1 + "\r\n,  " + m2 + "\n\t]";
  const std::string body =
      Padded(R"({ "model" : "m" , "messages" : )" + messages + " \n }\n");
  Result<ParsedRequest> r = ParseRequest(Api::kAnthropicMessages, body);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->messages.In(body), messages);
  ASSERT_EQ(r->message_list.size(), 3u);
  EXPECT_EQ(r->message_list[0].span.In(body), m0);
  EXPECT_EQ(r->message_list[1].span.In(body), m1);
  EXPECT_EQ(r->message_list[2].span.In(body), m2);
  EXPECT_EQ(r->message_list[0].content.In(body), R"("go")");
  EXPECT_EQ(r->message_list[2].content.In(body), content);
  ASSERT_EQ(r->tool_uses.size(), 1u);
  EXPECT_EQ(r->tool_uses[0].span.In(body), use);
  ASSERT_EQ(r->tool_results.size(), 1u);
  EXPECT_EQ(r->tool_results[0].span.In(body), result);

  const std::string c0 =
      R"({ "role" : "assistant" , "content" : null , "tool_calls" : [ {"id":"c1","type":"function","function":{"name":"Read","arguments":"{}"}} ] })";
  const std::string c1 =
      R"({"role":"tool","tool_call_id":"c1","content":"ok"}  )";
  const std::string chat =
      Padded(R"({"model":"m","messages":[ )" + c0 + " ,\n" + c1 + "]}");
  Result<ParsedRequest> c = ParseRequest(Api::kOpenAiChat, chat);
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->message_list.size(), 2u);
  EXPECT_EQ(c->message_list[0].span.In(chat), c0);
  EXPECT_EQ(c->message_list[1].span.In(chat),
            R"({"role":"tool","tool_call_id":"c1","content":"ok"})");
  ASSERT_EQ(c->tool_results.size(), 1u);
  EXPECT_EQ(c->tool_results[0].span.In(chat), c->message_list[1].span.In(chat));

  // Members the reader skips, last in their object (cache_control on a
  // block, unknown nested values on a message).
  const std::string b0 =
      R"({"type":"tool_result","tool_use_id":"t1","content":"ok","cache_control":{"type":"ephemeral","n":[1,{"x":[]}]}})";
  const std::string s0 = R"({"role":"user","content":[)" + b0 +
                         R"(],"extra":{"a":[1,[2,{"b":{}}]]}})";
  const std::string skipped = Padded(
      R"({"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"R","input":{}}]},)" +
      s0 + R"(],"stream":true})");
  Result<ParsedRequest> k = ParseRequest(Api::kAnthropicMessages, skipped);
  ASSERT_TRUE(k.ok()) << k.status().message();
  ASSERT_EQ(k->message_list.size(), 2u);
  EXPECT_EQ(k->message_list[1].span.In(skipped), s0);
  ASSERT_EQ(k->tool_results.size(), 1u);
  EXPECT_EQ(k->tool_results[0].span.In(skipped), b0);
  EXPECT_TRUE(k->stream);

  // Empty values.
  const std::string empty = Padded(
      R"({"model":"m","messages":[ { } , {"role":"user","content":[ ]} ]})");
  Result<ParsedRequest> e = ParseRequest(Api::kAnthropicMessages, empty);
  ASSERT_TRUE(e.ok()) << e.status().message();
  ASSERT_EQ(e->message_list.size(), 2u);
  EXPECT_EQ(e->message_list[0].span.In(empty), "{ }");
  EXPECT_EQ(e->message_list[1].content.In(empty), "[ ]");
  EXPECT_EQ(e->messages.In(empty),
            R"([ { } , {"role":"user","content":[ ]} ])");
}

// llmhop: a tool result that is a string has its escapes checked without
// a second parse (ValidResultContent); every verdict stays the full
// parser's: valid escapes pass, invalid ones, raw control characters and
// bad \u escapes fail, in strings and in other values.
TEST(ParseRequest, ToolResultStringsKeepTheFullParsersVerdict) {
  auto parse = [](std::string_view content) {
    const std::string body = Padded(
        R"({"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":)" +
        std::string(content) + "}]}]}");
    return ParseRequest(Api::kAnthropicMessages, body).ok();
  };
  for (std::string_view good :
       {R"("")", R"("plain")", R"("a\nb\tc\"d\\e\/f\bg\fh\ri")", R"("\\")",
        R"("x\\\"")", R"("\u00e9\ud83d\ude00")",
        R"([{"type":"text","text":"a\nb"}])", R"(12.5)", R"(null)"}) {
    EXPECT_TRUE(parse(good)) << good;
  }
  for (std::string_view bad :
       {R"("a\lb")", R"("\x41")", R"("a\ ")", R"("\u12G4")", R"("\u12")",
        "\"a\x01b\"", "\"tab\there\"", R"([{"type":"text","text":"a\qb"}])",
        R"([1,,2])", R"({"a" 1})", R"(01)", R"(tru)"}) {
    EXPECT_FALSE(parse(bad)) << bad;
  }
}

// Chat with n > 1: every choice's calls are found, each labelled with its
// choice; finish_reason is choices[0]'s.
TEST(ParseResponse, ChatFindsTheCallsOfEveryChoice) {
  Result<ParsedResponse> c = ParseResponse(
      Api::kOpenAiChat,
      R"({"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"Read","arguments":"{\"p\":1}"}}]},"finish_reason":"tool_calls"},{"index":1,"message":{"role":"assistant","content":"no tools"},"finish_reason":"stop"},{"index":2,"message":{"role":"assistant","tool_calls":[{"id":"call_c","type":"function","function":{"name":"Grep","arguments":"{}"}},{"id":"call_d","type":"function","function":{"name":"Read","arguments":"{\"p\":2}"}}]},"finish_reason":"tool_calls"}]})");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->choices, 3u);
  EXPECT_EQ(c->stop_reason, "tool_calls");
  ASSERT_EQ(c->tool_uses.size(), 3u);
  EXPECT_EQ(c->tool_uses[0].id, "call_a");
  EXPECT_EQ(c->tool_uses[0].choice, 0u);
  EXPECT_EQ(c->tool_uses[1].id, "call_c");
  EXPECT_EQ(c->tool_uses[1].choice, 2u);
  EXPECT_EQ(c->tool_uses[2].arguments, R"({"p":2})");
  EXPECT_EQ(c->tool_uses[2].choice, 2u);
  EXPECT_FALSE(
      ParseResponse(Api::kOpenAiChat, R"({"choices":[{"index":"x"}]})").ok());
}

// Streamed n > 1: deltas of several choices interleave, and tool_call
// indexes restart at 0 in each choice; calls are kept apart by choice.
TEST(StreamReader, ChatKeepsTheCallsOfEachChoiceApart) {
  StreamReader s(Api::kOpenAiChat);
  for (
      const char* chunk : {
          R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"Read","arguments":""}}]}}]})",
          R"({"choices":[{"index":1,"delta":{"tool_calls":[{"index":0,"id":"call_b","function":{"name":"Grep","arguments":"{\"q\":"}}]}}]})",
          R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"p\":1}"}}]}}]})",
          R"({"choices":[{"index":1,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"x\"}"}}]}}]})",
          R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})",
          R"({"choices":[{"index":1,"delta":{},"finish_reason":"tool_calls"}]})",
      }) {
    s.OnEvent("", chunk);
  }
  s.OnEvent("", "[DONE]");
  ASSERT_TRUE(s.complete());
  EXPECT_FALSE(s.failed());
  EXPECT_EQ(s.choices(), 2u);
  ASSERT_EQ(s.tool_uses().size(), 2u);
  EXPECT_EQ(s.tool_uses()[0].id, "call_a");
  EXPECT_EQ(s.tool_uses()[0].arguments, R"({"p":1})");
  EXPECT_EQ(s.tool_uses()[0].choice, 0u);
  EXPECT_EQ(s.tool_uses()[1].id, "call_b");
  EXPECT_EQ(s.tool_uses()[1].name, "Grep");
  EXPECT_EQ(s.tool_uses()[1].arguments, R"({"q":"x"})");
  EXPECT_EQ(s.tool_uses()[1].choice, 1u);
}

}  // namespace
}  // namespace toolcache::llm

namespace toolcache::llm {
namespace {

// Regression (parseF, found by WireDifferential): a string the walk reads
// as a view into the body must still be consumed, as get_string() did. A
// value left unconsumed is skipped by On Demand, and the skip counts
// brackets without checking what follows the value: an object's last
// member followed by ':"x"' and a ']' for its '}' was accepted.
TEST(ParseRequest, AStringReadAsAViewIsStillConsumed) {
  const std::pair<Api, const char*> kBodies[] = {
      {Api::kAnthropicMessages,
       R"({"model":"m","messages":[{"content":"go","role":"user":"x"]}]})"},
      {Api::kAnthropicMessages,
       R"({"messages":[{"role":"user","content":"go"}],"model":"m":"x"]})"},
      {Api::kAnthropicMessages,
       R"({"messages":[{"role":"assistant","content":[{"type":"tool_use","input":{},"id":"t1","name":"Read":"x"]}]}]})"},
      {Api::kOpenAiChat,
       R"({"messages":[{"role":"tool","content":"r","tool_call_id":"c1":"x"]}]})"},
      {Api::kOpenAiResponses,
       R"({"input":[{"type":"function_call","name":"R","arguments":"{}","call_id":"c":"x"]}]})"},
      {Api::kOpenAiResponses,
       R"({"input":"go","previous_response_id":"resp_1":"x"]})"},
  };
  for (const auto& [api, text] : kBodies) {
    EXPECT_FALSE(ParseRequest(api, Padded(text)).ok()) << text;
  }
  // Escaped strings are still decoded; plain ones read whole. (The body
  // outlives the parse: its views index it.)
  const std::string body = Padded(
      R"({"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"toolu\u005f1","name":"Read","input":{}}]}]})");
  const Result<ParsedRequest> r = ParseRequest(Api::kAnthropicMessages, body);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->tool_uses.size(), 1u);
  EXPECT_EQ(r->tool_uses[0].id, "toolu_1");
  EXPECT_EQ(r->tool_uses[0].name, "Read");
  EXPECT_EQ(r->message_list[0].role, "assistant");
}

}  // namespace
}  // namespace toolcache::llm
