// The stream relay over two rounds: the client sees one well-formed
// message (one message_start, dense indexes, one message_delta with the
// summed usage, one message_stop) and never the served tool_use block.
#include "src/llm/stream_serve.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/http/sse.h"

namespace toolcache::llm {
namespace {

using ojson = nlohmann::ordered_json;

struct Ev {
  std::string event;
  std::string data;
};

std::vector<Ev> Round(bool first_text, const std::string& text, bool tool) {
  std::vector<Ev> v;
  v.push_back(
      {"message_start",
       R"({"type":"message_start","message":{"id":"msg_x","type":"message","role":"assistant","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}})"});
  int i = 0;
  if (first_text) {
    v.push_back(
        {"content_block_start",
         R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"});
    v.push_back({"ping", R"({"type":"ping"})"});
    v.push_back(
        {"content_block_delta",
         R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":")" +
             text + R"("}})"});
    v.push_back(
        {"content_block_stop", R"({"type":"content_block_stop","index":0})"});
    ++i;
  }
  if (tool) {
    const std::string n = std::to_string(i);
    v.push_back(
        {"content_block_start",
         R"({"type":"content_block_start","index":)" + n +
             R"(,"content_block":{"type":"tool_use","id":"toolu_h","name":"Read","input":{}}})"});
    v.push_back(
        {"content_block_delta",
         R"({"type":"content_block_delta","index":)" + n +
             R"(,"delta":{"type":"input_json_delta","partial_json":"{\"file_path\":"}})"});
    v.push_back(
        {"content_block_delta",
         R"({"type":"content_block_delta","index":)" + n +
             R"(,"delta":{"type":"input_json_delta","partial_json":"\"/w/a.txt\"}"}})"});
    v.push_back({"content_block_stop",
                 R"({"type":"content_block_stop","index":)" + n + "}"});
  }
  v.push_back(
      {"message_delta",
       std::string(R"({"type":"message_delta","delta":{"stop_reason":")") +
           (tool ? "tool_use" : "end_turn") +
           R"(","stop_sequence":null},"usage":{"output_tokens":5}})"});
  v.push_back({"message_stop", R"({"type":"message_stop"})"});
  return v;
}

TEST(AnthropicStreamRelay, ServedRoundIsHiddenAndIndexesStayDense) {
  AnthropicStreamRelay relay;
  std::string client;
  for (const Ev& e : Round(true, "Reading.", true)) {
    client += relay.OnEvent(e.event, e.data);
  }
  ASSERT_TRUE(relay.round_complete());
  EXPECT_EQ(client.find("tool_use"), std::string::npos);
  EXPECT_EQ(client.find("message_stop"), std::string::npos);
  ojson r1 = ojson::parse(relay.RoundBody());
  EXPECT_EQ(r1["content"][0]["text"], "Reading.");
  EXPECT_EQ(r1["content"][1]["input"]["file_path"], "/w/a.txt");
  EXPECT_EQ(r1["stop_reason"], "tool_use");
  relay.NextRound();
  for (const Ev& e : Round(true, "Done.", false)) {
    client += relay.OnEvent(e.event, e.data);
  }
  ASSERT_TRUE(relay.round_complete());
  EXPECT_TRUE(relay.relayed_earlier());
  ojson usage = {{"input_tokens", 20}, {"output_tokens", 10}};
  client += relay.Flush(usage);

  std::vector<http::SseEvent> events;
  http::SseParser parser;
  parser.Feed(client, [&](const http::SseEvent& e) { events.push_back(e); });
  EXPECT_FALSE(parser.mid_event());
  int starts = 0, stops = 0, deltas = 0;
  std::vector<int64_t> block_starts;
  for (const auto& e : events) {
    ojson j = ojson::parse(e.data);
    if (e.event == "message_start") ++starts;
    if (e.event == "message_stop") ++stops;
    if (e.event == "message_delta") {
      ++deltas;
      EXPECT_EQ(j["usage"]["input_tokens"], 20);
      EXPECT_EQ(j["delta"]["stop_reason"], "end_turn");
    }
    if (e.event == "content_block_start") {
      block_starts.push_back(j["index"].get<int64_t>());
    }
  }
  EXPECT_EQ(starts, 1);
  EXPECT_EQ(stops, 1);
  EXPECT_EQ(deltas, 1);
  EXPECT_EQ(block_starts, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(events.back().event, "message_stop");
  ojson shown = ojson::parse(relay.ClientBody());
  ASSERT_EQ(shown["content"].size(), 2u);
  EXPECT_EQ(shown["content"][1]["text"], "Done.");
}

TEST(AnthropicStreamRelay, UnservedToolRoundIsFlushedWhole) {
  AnthropicStreamRelay relay;
  std::string client;
  for (const Ev& e : Round(false, "", true)) {
    client += relay.OnEvent(e.event, e.data);
  }
  client += relay.Flush(ojson());
  EXPECT_NE(client.find("\"toolu_h\""), std::string::npos);
  EXPECT_NE(client.find("\"output_tokens\":5"), std::string::npos);
  EXPECT_EQ(client.rfind("event: message_stop"),
            client.size() - std::string("event: message_stop\ndata: "
                                        "{\"type\":\"message_stop\"}\n\n")
                                .size());
}

TEST(AnthropicStreamRelay, ErrorEventPassesAndFails) {
  AnthropicStreamRelay relay;
  std::string out = relay.OnEvent(
      "error", R"({"type":"error","error":{"type":"overloaded_error"}})");
  EXPECT_TRUE(relay.failed());
  EXPECT_NE(out.find("overloaded_error"), std::string::npos);
}

// One Chat Completions round as the provider streams it: role chunk, text,
// a tool call in three deltas, finish_reason, the usage chunk, [DONE].
std::vector<std::string> ChatRound(const std::string& id,
                                   const std::string& text, bool tool,
                                   int prompt_tokens) {
  const std::string head =
      R"({"id":")" + id + R"(","object":"chat.completion.chunk","created":)" +
      (id == "c1" ? "100" : "200") + R"(,"model":"m","choices":)";
  auto chunk = [&](const std::string& delta, const std::string& finish) {
    return head + R"([{"index":0,"delta":)" + delta +
           R"(,"logprobs":null,"finish_reason":)" + finish + "}]}";
  };
  std::vector<std::string> v;
  v.push_back(chunk(R"({"role":"assistant","content":""})", "null"));
  if (!text.empty()) {
    v.push_back(chunk(R"({"content":")" + text + R"("})", "null"));
  }
  if (tool) {
    v.push_back(chunk(
        R"({"tool_calls":[{"index":0,"id":"call_h","type":"function","function":{"name":"Read","arguments":""}}]})",
        "null"));
    v.push_back(chunk(
        R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]})",
        "null"));
    v.push_back(chunk(
        R"({"tool_calls":[{"index":0,"function":{"arguments":"\"/a\"}"}}]})",
        "null"));
  }
  v.push_back(chunk("{}", tool ? R"("tool_calls")" : R"("stop")"));
  v.push_back(head + R"([],"usage":{"prompt_tokens":)" +
              std::to_string(prompt_tokens) +
              R"(,"completion_tokens":5,"total_tokens":)" +
              std::to_string(prompt_tokens + 5) + "}}");
  v.push_back("[DONE]");
  return v;
}

std::vector<std::string> DataLines(const std::string& client) {
  std::vector<std::string> out;
  http::SseParser parser;
  parser.Feed(client, [&](const http::SseEvent& e) { out.push_back(e.data); });
  EXPECT_FALSE(parser.mid_event());
  return out;
}

TEST(ChatStreamRelay, ServedRoundIsHiddenAndTheClientSeesOneCompletion) {
  ChatStreamRelay relay;
  std::string client;
  for (const std::string& d : ChatRound("c1", "Reading.", true, 10)) {
    client += relay.OnEvent("", d);
  }
  ASSERT_TRUE(relay.round_complete());
  EXPECT_EQ(client.find("call_h"), std::string::npos);
  EXPECT_EQ(client.find("[DONE]"), std::string::npos);
  EXPECT_EQ(client.find("finish_reason\":\"tool_calls"), std::string::npos);
  EXPECT_NE(client.find("Reading."), std::string::npos);  // streamed at once
  ojson r1 = ojson::parse(relay.RoundBody());
  EXPECT_EQ(r1["choices"][0]["message"]["content"], "Reading.");
  EXPECT_EQ(r1["choices"][0]["message"]["tool_calls"][0]["id"], "call_h");
  EXPECT_EQ(
      r1["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"],
      "{\"path\":\"/a\"}");
  EXPECT_EQ(r1["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(r1["usage"]["prompt_tokens"], 10);
  relay.NextRound();
  for (const std::string& d : ChatRound("c2", "Done.", false, 20)) {
    client += relay.OnEvent("", d);
  }
  ASSERT_TRUE(relay.round_complete());
  EXPECT_TRUE(relay.relayed_earlier());
  client += relay.Flush(
      {{"prompt_tokens", 30}, {"completion_tokens", 10}, {"total_tokens", 40}});
  std::vector<std::string> data = DataLines(client);
  ASSERT_GE(data.size(), 4u);
  EXPECT_EQ(data.back(), "[DONE]");
  int roles = 0, finishes = 0, usages = 0;
  std::string text;
  for (size_t i = 0; i + 1 < data.size(); ++i) {
    ojson j = ojson::parse(data[i]);
    EXPECT_EQ(j["id"], "c1");  // one completion: round 1's id, created
    EXPECT_EQ(j["created"], 100);
    if (j.contains("usage")) {
      ++usages;
      EXPECT_EQ(j["usage"]["prompt_tokens"], 30);
      EXPECT_EQ(i, data.size() - 2);  // the last chunk before [DONE]
    }
    for (const ojson& c : j["choices"]) {
      if (c["delta"].contains("role")) ++roles;
      if (c["delta"].contains("tool_calls")) ADD_FAILURE() << data[i];
      if (!c["finish_reason"].is_null()) {
        ++finishes;
        EXPECT_EQ(c["finish_reason"], "stop");
      }
      text += c["delta"].value("content", "");
    }
  }
  EXPECT_EQ(roles, 1);
  EXPECT_EQ(finishes, 1);
  EXPECT_EQ(usages, 1);
  EXPECT_EQ(text, "Reading.Done.");
  ojson shown = ojson::parse(relay.ClientBody());
  EXPECT_EQ(shown["choices"][0]["message"]["content"], "Reading.Done.");
}

TEST(ChatStreamRelay, UnservedToolRoundIsFlushedWithItsIndexes) {
  ChatStreamRelay relay;
  std::string client;
  for (const std::string& d : ChatRound("c1", "", true, 10)) {
    client += relay.OnEvent("", d);
  }
  client += relay.Flush(ojson());
  std::vector<std::string> data = DataLines(client);
  ASSERT_EQ(data.size(), 7u);  // role, 3 tool deltas, finish, usage, DONE
  EXPECT_EQ(data.back(), "[DONE]");
  EXPECT_EQ(
      ojson::parse(data[1])["choices"][0]["delta"]["tool_calls"][0]["index"],
      0);
  EXPECT_EQ(ojson::parse(data[5])["usage"]["prompt_tokens"], 10);
}

TEST(ChatStreamRelay, UsageInEveryChunkStillStreamsText) {
  ChatStreamRelay relay;
  std::string out = relay.OnEvent(
      "",
      R"({"id":"c","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}],"usage":{"prompt_tokens":3}})");
  EXPECT_NE(out.find("Hi"), std::string::npos);  // not held to the end
  EXPECT_EQ(ojson::parse(relay.RoundBody())["usage"]["prompt_tokens"], 3);
}

TEST(ChatStreamRelay, ErrorChunkAndManyChoicesPassThrough) {
  ChatStreamRelay relay;
  std::string out = relay.OnEvent(
      "", R"({"error":{"message":"overloaded","type":"server_error"}})");
  EXPECT_TRUE(relay.failed());
  EXPECT_NE(out.find("overloaded"), std::string::npos);
  EXPECT_EQ(relay.ErrorEvent("{}"), "data: {}\n\n");

  ChatStreamRelay many;
  out = many.OnEvent(
      "",
      R"({"id":"c","choices":[{"index":1,"delta":{"tool_calls":[{"index":0,"id":"x","function":{"name":"Read","arguments":"{}"}}]},"finish_reason":"tool_calls"}]})");
  EXPECT_NE(out.find("\"x\""), std::string::npos);  // relayed at once
  EXPECT_TRUE(ojson::parse(many.RoundBody())["choices"].empty());  // unserved
}

}  // namespace
}  // namespace toolcache::llm
