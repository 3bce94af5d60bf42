// Stream relays: one client SSE message over the tool loop's rounds, free
// of I/O. AnthropicStreamRelay for Anthropic Messages, ChatStreamRelay for
// Chat Completions, ResponsesStreamRelay for OpenAI Responses (all with
// stream: true); NewStreamRelay picks one.
//
// AnthropicStreamRelay.
// Each round's events arrive one at a time. Text and thinking blocks are
// relayed to the client as they come; from the round's first tool_use
// block on, its events are held, and message_delta / message_stop always
// are: only when the round ends is it known whether the proxy serves its
// calls. Served: the held events are dropped and the next round continues
// the same client message (its message_start is dropped, its block indexes
// follow the ones already sent). Not served: the held events are flushed,
// with message_delta's usage replaced by the sum over the rounds. So the
// client sees one well-formed message (message_start, blocks with dense
// indexes, message_delta, message_stop) and never a served tool call.
//
// The relay also assembles each round's message (as the SDK's
// finalMessage does), so the tool loop can treat it like a JSON response.
//
// Thread-safety: none (one stream). Example:
//   AnthropicStreamRelay relay;
//   parser.Feed(bytes, [&](const SseEvent& e) {
//     client.Write(relay.OnEvent(e.event, e.data)); });
//   if (served) relay.NextRound(); else client.Write(relay.Flush(usage));
#ifndef TOOLCACHE_SRC_LLM_STREAM_RELAY_H_
#define TOOLCACHE_SRC_LLM_STREAM_RELAY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "src/llm/wire.h"

namespace toolcache::llm {

// What the proxy needs of a relay, whatever the API.
class StreamRelay {
 public:
  virtual ~StreamRelay() = default;
  // Bytes to write to the client now (possibly none).
  virtual std::string OnEvent(std::string_view event,
                              std::string_view data) = 0;

  // The round's terminal event arrived.
  virtual bool round_complete() const = 0;
  virtual bool failed() const = 0;
  // The current round's message as a JSON response body (the API's
  // non-streamed shape, so ParseResponse and the tool loop read it).
  virtual std::string RoundBody() const = 0;
  // The message the client has been shown so far plus the current round's
  // held part, as a JSON response body (what the client will send back).
  virtual std::string ClientBody() const = 0;
  // True when parts of earlier rounds were relayed (the client's message
  // differs from the final round's).
  virtual bool relayed_earlier() const = 0;

  // The round's calls were served: drop its held events; the next round's
  // events continue the client's message.
  virtual void NextRound() = 0;
  // The round goes to the client: its held events (usage replaced by
  // `usage` when it is a non-empty object) and the terminal event.
  virtual std::string Flush(const nlohmann::ordered_json& usage) = 0;
  // An error event in the API's stream shape carrying `error_body` (the
  // provider's JSON error object).
  virtual std::string ErrorEvent(std::string_view error_body) const = 0;
};

// The relay of `api`'s streams (Anthropic Messages, Chat Completions or
// Responses); null for an API without one.
std::unique_ptr<StreamRelay> NewStreamRelay(Api api);

class AnthropicStreamRelay final : public StreamRelay {
 public:
  std::string OnEvent(std::string_view event, std::string_view data) override;
  bool round_complete() const override { return complete_; }
  bool failed() const override { return failed_; }
  std::string RoundBody() const override;
  std::string ClientBody() const override;
  bool relayed_earlier() const override { return offset_ > 0; }
  void NextRound() override;
  std::string Flush(const nlohmann::ordered_json& usage) override;
  std::string ErrorEvent(std::string_view error_body) const override;

 private:
  uint32_t round_ = 0;
  uint32_t offset_ = 0;      // client indexes used by earlier rounds
  int64_t first_tool_ = -1;  // this round's first tool_use index
  bool holding_ = false;
  bool complete_ = false;
  bool failed_ = false;
  std::string held_;                // framed events held back
  std::string held_delta_;          // message_delta data (rewritten at Flush)
  nlohmann::ordered_json message_;  // this round, assembled
  std::string held_stop_;           // message_stop data
  // Blocks relayed in earlier rounds (the start of the client's message).
  nlohmann::ordered_json shown_ = nlohmann::ordered_json::array();
  std::map<int64_t, std::string> partial_;  // input_json_delta by index
};

// ChatStreamRelay: Chat Completions chunks (`data: {...}` lines, then
// `data: [DONE]`). Content and refusal deltas are relayed as they come;
// from the round's first tool_calls delta or finish_reason on, its chunks
// are held, as are the usage chunk (stream_options.include_usage) and
// [DONE]. Later rounds' chunks carry round 1's id, created and model (the
// client sees one completion), their role delta is dropped. Not served:
// the held chunks are flushed (the tool_calls indexes are the final
// round's own, so dense from 0), the usage chunk's usage replaced by the
// sum. Only choice 0 is served: a chunk of another choice (n > 1) turns
// the relay into a pass-through whose rounds are never served.
class ChatStreamRelay final : public StreamRelay {
 public:
  std::string OnEvent(std::string_view event, std::string_view data) override;
  bool round_complete() const override { return complete_; }
  bool failed() const override { return failed_; }
  std::string RoundBody() const override;
  std::string ClientBody() const override;
  bool relayed_earlier() const override { return !shown_text_.empty(); }
  void NextRound() override;
  std::string Flush(const nlohmann::ordered_json& usage) override;
  std::string ErrorEvent(std::string_view error_body) const override;

 private:
  struct Call {
    std::string id, type, name, arguments;
  };
  struct Held {
    std::string data;    // the chunk as relayed (rewritten when needed)
    bool usage = false;  // carries a usage object (rewritten at Flush)
  };
  std::string Release();  // the held chunks, framed
  std::string Body(const std::string& text) const;

  uint32_t round_ = 0;
  bool holding_ = false;
  bool complete_ = false;
  bool failed_ = false;
  bool many_ = false;  // a choice other than 0 was seen: never served
  nlohmann::ordered_json first_;  // round 1's id, object, created, model
  std::string text_;              // this round's content
  std::string relayed_text_;      // of it, what the client was shown
  std::string shown_text_;        // content relayed in earlier rounds
  std::string refusal_;
  std::map<int64_t, Call> calls_;  // by tool_calls index
  nlohmann::ordered_json finish_;  // finish_reason (null until seen)
  nlohmann::ordered_json usage_;   // this round's usage
  std::vector<Held> held_;
};

// ResponsesStreamRelay: Responses events (`event: response.*` with
// `{type, sequence_number, ...}`). Items before the round's first
// function_call output item are relayed as they come; from it on the
// round's events are held, as is its terminal event (response.completed /
// response.incomplete). Later rounds' response.created / in_progress /
// queued are dropped and their output_index values continue after the
// items the client was shown. Every event the client receives gets the
// next sequence_number of one dense sequence from 0 (the upstream's own
// numbers restart each round). Not served: the held events are flushed,
// the terminal event's response carrying round 1's id, created_at and
// model, every item shown in earlier rounds before the round's own in
// `output`, and `usage` replaced by the sum. An `error` event or
// response.failed passes at once (held events first): the stream failed.
class ResponsesStreamRelay final : public StreamRelay {
 public:
  std::string OnEvent(std::string_view event, std::string_view data) override;
  bool round_complete() const override { return complete_; }
  bool failed() const override { return failed_; }
  std::string RoundBody() const override;
  std::string ClientBody() const override;
  bool relayed_earlier() const override { return !shown_.empty(); }
  void NextRound() override;
  std::string Flush(const nlohmann::ordered_json& usage) override;
  std::string ErrorEvent(std::string_view error_body) const override;

  // Items the client was shown in earlier rounds (the start of its output).
  size_t shown_items() const { return shown_.size(); }

 private:
  struct Held {
    std::string event;
    nlohmann::ordered_json data;
    std::string raw;  // the upstream's bytes while `data` is unchanged
  };
  // `data` framed with the next client sequence_number; `raw` (the
  // upstream's bytes of an unchanged `data`) is sent as is when that
  // number is already its own.
  std::string Emit(std::string_view event, nlohmann::ordered_json data,
                   std::string_view raw = {});
  std::string Release();  // the held events, framed
  // This round's output items: the terminal response's, else the
  // output_item.done items by index.
  nlohmann::ordered_json RoundOutput() const;

  uint32_t round_ = 0;
  int64_t seq_ = 0;          // the client's next sequence_number
  int64_t offset_ = 0;       // client output_index used by earlier rounds
  int64_t first_call_ = -1;  // this round's first function_call index
  bool holding_ = false;
  bool complete_ = false;
  bool failed_ = false;
  nlohmann::ordered_json first_;     // round 1's response (created)
  nlohmann::ordered_json response_;  // this round's, latest seen
  std::string terminal_;             // the terminal event's name
  std::map<int64_t, nlohmann::ordered_json> items_;  // output_item.done
  nlohmann::ordered_json shown_ = nlohmann::ordered_json::array();
  std::vector<Held> held_;
};

}  // namespace toolcache::llm

#endif  // TOOLCACHE_SRC_LLM_STREAM_RELAY_H_
