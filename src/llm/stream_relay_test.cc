// The stream relay over two rounds: the client sees one well-formed
// message (one message_start, dense indexes, one message_delta with the
// summed usage, one message_stop) and never the served tool_use block.
#include "src/llm/stream_relay.h"

#include <gtest/gtest.h>

#include <memory>
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

// A Responses round as the API streams it: items are {"text"} messages or
// {"call"} function_calls; sequence_number from 0 (each round restarts).
struct RItem {
  std::string text;     // a message's text, or
  std::string call_id;  // a function_call's call_id
};

std::vector<Ev> ResponsesRound(const std::string& id,
                               const std::vector<RItem>& items,
                               int64_t input_tokens) {
  std::vector<Ev> v;
  int64_t seq = 0;
  auto push = [&](const std::string& type, ojson d) {
    ojson j = ojson::object();
    j["type"] = type;
    j["sequence_number"] = seq++;
    for (auto it = d.begin(); it != d.end(); ++it) j[it.key()] = it.value();
    v.push_back({type, j.dump()});
  };
  ojson output = ojson::array();
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string n = std::to_string(i);
    if (items[i].call_id.empty()) {
      output.push_back({{"type", "message"},
                        {"id", id + "_msg" + n},
                        {"status", "completed"},
                        {"role", "assistant"},
                        {"content",
                         {{{"type", "output_text"},
                           {"text", items[i].text},
                           {"annotations", ojson::array()}}}}});
    } else {
      output.push_back({{"type", "function_call"},
                        {"id", id + "_fc" + n},
                        {"call_id", items[i].call_id},
                        {"name", "Read"},
                        {"arguments", R"({"file_path":"/w/a.txt"})"},
                        {"status", "completed"}});
    }
  }
  ojson r = {{"id", id},
             {"object", "response"},
             {"created_at", 1700000000 + input_tokens},
             {"status", "in_progress"},
             {"model", "gpt-" + id},
             {"output", ojson::array()}};
  push("response.created", {{"response", r}});
  push("response.in_progress", {{"response", r}});
  for (size_t i = 0; i < output.size(); ++i) {
    const ojson& item = output[i];
    const int64_t index = static_cast<int64_t>(i);
    ojson added = item;
    added["status"] = "in_progress";
    if (item["type"] == "function_call") {
      added["arguments"] = "";
      push("response.output_item.added",
           {{"output_index", index}, {"item", added}});
      push("response.function_call_arguments.delta",
           {{"output_index", index},
            {"item_id", item["id"]},
            {"delta", item["arguments"]}});
      push("response.function_call_arguments.done",
           {{"output_index", index},
            {"item_id", item["id"]},
            {"arguments", item["arguments"]}});
    } else {
      added["content"] = ojson::array();
      push("response.output_item.added",
           {{"output_index", index}, {"item", added}});
      push("response.content_part.added",
           {{"output_index", index},
            {"item_id", item["id"]},
            {"content_index", 0},
            {"part", {{"type", "output_text"}, {"text", ""}}}});
      push("response.output_text.delta",
           {{"output_index", index},
            {"item_id", item["id"]},
            {"content_index", 0},
            {"delta", item["content"][0]["text"]}});
      push("response.output_text.done", {{"output_index", index},
                                         {"item_id", item["id"]},
                                         {"content_index", 0},
                                         {"text", item["content"][0]["text"]}});
      push("response.content_part.done", {{"output_index", index},
                                          {"item_id", item["id"]},
                                          {"content_index", 0},
                                          {"part", item["content"][0]}});
    }
    push("response.output_item.done",
         {{"output_index", index}, {"item", item}});
  }
  r["status"] = "completed";
  r["output"] = output;
  r["usage"] = {{"input_tokens", input_tokens},
                {"input_tokens_details", {{"cached_tokens", 0}}},
                {"output_tokens", 5},
                {"output_tokens_details", {{"reasoning_tokens", 0}}},
                {"total_tokens", input_tokens + 5}};
  push("response.completed", {{"response", r}});
  return v;
}

std::vector<http::SseEvent> Parse(const std::string& client) {
  std::vector<http::SseEvent> events;
  http::SseParser parser;
  parser.Feed(client, [&](const http::SseEvent& e) { events.push_back(e); });
  EXPECT_FALSE(parser.mid_event());
  return events;
}

TEST(ResponsesStreamRelay, ServedRoundIsHiddenAndTheClientSeesOneResponse) {
  std::unique_ptr<StreamRelay> relay = NewStreamRelay(Api::kOpenAiResponses);
  ASSERT_NE(relay, nullptr);
  std::string client;
  for (const Ev& e :
       ResponsesRound("resp_1", {{"Reading.", ""}, {"", "call_h"}}, 10)) {
    client += relay->OnEvent(e.event, e.data);
  }
  ASSERT_TRUE(relay->round_complete());
  EXPECT_EQ(client.find("function_call"), std::string::npos);
  EXPECT_EQ(client.find("response.completed"), std::string::npos);
  EXPECT_NE(client.find("Reading."), std::string::npos);  // relayed at once
  ojson r1 = ojson::parse(relay->RoundBody());
  EXPECT_EQ(r1["id"], "resp_1");
  ASSERT_EQ(r1["output"].size(), 2u);
  EXPECT_EQ(r1["output"][1]["call_id"], "call_h");
  EXPECT_EQ(r1["usage"]["input_tokens"], 10);
  relay->NextRound();
  for (const Ev& e : ResponsesRound("resp_2", {{"Done.", ""}}, 20)) {
    client += relay->OnEvent(e.event, e.data);
  }
  ASSERT_TRUE(relay->round_complete());
  EXPECT_FALSE(relay->failed());
  EXPECT_TRUE(relay->relayed_earlier());
  ojson usage = {{"input_tokens", 30},
                 {"input_tokens_details", {{"cached_tokens", 0}}},
                 {"output_tokens", 10},
                 {"output_tokens_details", {{"reasoning_tokens", 0}}},
                 {"total_tokens", 40}};
  client += relay->Flush(usage);

  std::vector<http::SseEvent> events = Parse(client);
  std::vector<int64_t> seqs, added;
  int created = 0, in_progress = 0, completed = 0;
  for (const auto& e : events) {
    ojson j = ojson::parse(e.data);
    EXPECT_EQ(j["type"], e.event);
    seqs.push_back(j["sequence_number"].get<int64_t>());
    if (e.event == "response.created") ++created;
    if (e.event == "response.in_progress") ++in_progress;
    if (e.event == "response.output_item.added") {
      added.push_back(j["output_index"].get<int64_t>());
      EXPECT_EQ(j["item"]["type"], "message");
    }
    if (e.event == "response.output_text.delta") {
      EXPECT_EQ(j["output_index"], j["delta"] == "Reading." ? 0 : 1);
    }
    if (e.event == "response.completed") {
      ++completed;
      const ojson& r = j["response"];
      EXPECT_EQ(r["id"], "resp_1");
      EXPECT_EQ(r["model"], "gpt-resp_1");
      EXPECT_EQ(r["created_at"], 1700000010);
      EXPECT_EQ(r["status"], "completed");
      EXPECT_EQ(r["usage"], usage);
      ASSERT_EQ(r["output"].size(), 2u);
      EXPECT_EQ(r["output"][0]["content"][0]["text"], "Reading.");
      EXPECT_EQ(r["output"][1]["content"][0]["text"], "Done.");
    }
  }
  EXPECT_EQ(created, 1);
  EXPECT_EQ(in_progress, 1);
  EXPECT_EQ(completed, 1);
  EXPECT_EQ(events.back().event, "response.completed");
  EXPECT_EQ(added, (std::vector<int64_t>{0, 1}));
  for (size_t i = 0; i < seqs.size(); ++i) {
    EXPECT_EQ(seqs[i], static_cast<int64_t>(i));
  }
  EXPECT_EQ(client.find("call_h"), std::string::npos);
  // What the client sends back: the items it was shown, then the round's.
  ojson shown = ojson::parse(relay->ClientBody());
  EXPECT_EQ(shown["id"], "resp_1");
  ASSERT_EQ(shown["output"].size(), 2u);
  EXPECT_EQ(shown["output"][0]["type"], "message");
  EXPECT_EQ(ojson::parse(relay->RoundBody())["output"].size(), 1u);
}

TEST(ResponsesStreamRelay, UnservedRoundIsFlushedUnchangedButNumbered) {
  const std::vector<Ev> round2 =
      ResponsesRound("resp_b", {{"Again.", ""}, {"", "call_b"}}, 7);
  ResponsesStreamRelay relay;
  std::string client;
  for (const Ev& e : ResponsesRound("resp_a", {{"", "call_a"}}, 5)) {
    client += relay.OnEvent(e.event, e.data);
  }
  // Round 1 shows the client only its opening events.
  EXPECT_EQ(Parse(client).size(), 2u);
  relay.NextRound();
  EXPECT_FALSE(relay.relayed_earlier());
  for (const Ev& e : round2) client += relay.OnEvent(e.event, e.data);
  client += relay.Flush(ojson());
  std::vector<http::SseEvent> events = Parse(client);
  // Round 2's events after its created/in_progress, each unchanged except
  // for its sequence_number (continuing round 1's 0, 1) and the response
  // id/created_at/model of round 1.
  ASSERT_EQ(events.size(), 2 + round2.size() - 2);
  for (size_t i = 0; i < events.size(); ++i) {
    ojson j = ojson::parse(events[i].data);
    EXPECT_EQ(j["sequence_number"], static_cast<int64_t>(i));
    if (i < 2) continue;
    ojson want = ojson::parse(round2[i].data);
    EXPECT_EQ(events[i].event, round2[i].event);
    want["sequence_number"] = i;
    if (want["type"] == "response.completed") {
      want["response"]["id"] = "resp_a";
      want["response"]["created_at"] = 1700000005;
      want["response"]["model"] = "gpt-resp_a";
    }
    EXPECT_EQ(j, want) << i;
  }
  ojson last = ojson::parse(events.back().data);
  EXPECT_EQ(last["response"]["output"][1]["call_id"], "call_b");
  EXPECT_EQ(last["response"]["usage"]["input_tokens"], 7);

  // A single round: every event byte for byte (renumbering is a no-op).
  ResponsesStreamRelay one;
  std::string plain, want;
  for (const Ev& e : round2) {
    plain += one.OnEvent(e.event, e.data);
    want += "event: " + e.event + "\ndata: " + e.data + "\n\n";
  }
  plain += one.Flush(ojson());
  EXPECT_EQ(plain, want);
  // The upstream's bytes pass as they are (escapes kept) while its
  // numbering is the client's.
  const std::string delta =
      R"({"type":"response.output_text.delta","sequence_number":2,)"
      R"("output_index":0,"item_id":"m","content_index":0,"delta":"caf\u00e9"})";
  ResponsesStreamRelay esc;
  for (size_t i = 0; i < 2; ++i) {
    (void)esc.OnEvent(round2[i].event, round2[i].data);
  }
  EXPECT_EQ(esc.OnEvent("response.output_text.delta", delta),
            "event: response.output_text.delta\ndata: " + delta + "\n\n");
}

TEST(ResponsesStreamRelay, ErrorAndFailedEventsPassAndFail) {
  ResponsesStreamRelay relay;
  std::string client;
  const std::vector<Ev> round = ResponsesRound("resp_e", {{"", "call_e"}}, 3);
  for (size_t i = 0; i < 4; ++i) {  // created .. arguments delta
    client += relay.OnEvent(round[i].event, round[i].data);
  }
  EXPECT_FALSE(relay.failed());
  client += relay.OnEvent(
      "error",
      R"({"type":"error","code":"server_error","message":"overloaded","param":null,"sequence_number":4})");
  EXPECT_TRUE(relay.failed());
  EXPECT_FALSE(relay.round_complete());
  std::vector<http::SseEvent> events = Parse(client);
  ASSERT_EQ(events.size(), 5u);  // the held call events, then the error
  EXPECT_EQ(events[2].event, "response.output_item.added");
  EXPECT_EQ(events.back().event, "error");
  EXPECT_EQ(ojson::parse(events.back().data)["message"], "overloaded");

  // A hidden round's non-2xx body: an error event in the stream's shape,
  // numbered after what the client has.
  ResponsesStreamRelay served;
  for (const Ev& e : round) (void)served.OnEvent(e.event, e.data);
  served.NextRound();
  std::vector<http::SseEvent> err = Parse(served.ErrorEvent(
      R"({"error":{"message":"slow down","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}})"));
  ASSERT_EQ(err.size(), 1u);
  EXPECT_EQ(err[0].event, "error");
  EXPECT_EQ(ojson::parse(err[0].data),
            ojson::parse(R"({"type":"error","code":"rate_limit_exceeded",)"
                         R"("message":"slow down","param":null,)"
                         R"("sequence_number":2})"));

  ResponsesStreamRelay failed;
  (void)failed.OnEvent(round[0].event, round[0].data);
  std::string out = failed.OnEvent(
      "response.failed",
      R"({"type":"response.failed","sequence_number":1,"response":{"id":"resp_e","status":"failed","error":{"code":"server_error","message":"boom"}}})");
  EXPECT_TRUE(failed.failed());
  EXPECT_NE(out.find("boom"), std::string::npos);
  EXPECT_FALSE(failed.OnEvent("", "not json").empty());
}

}  // namespace
}  // namespace toolcache::llm
