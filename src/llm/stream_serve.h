// AnthropicStreamRelay: one client SSE message over the tool loop's rounds
// (Anthropic Messages with stream: true), free of I/O.
//
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
#ifndef TOOLCACHE_SRC_LLM_STREAM_SERVE_H_
#define TOOLCACHE_SRC_LLM_STREAM_SERVE_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace toolcache::llm {

class AnthropicStreamRelay {
 public:
  // Bytes to write to the client now (possibly none).
  std::string OnEvent(std::string_view event, std::string_view data);

  bool round_complete() const { return complete_; }
  bool failed() const { return failed_; }
  // The current round's message as a JSON response body.
  std::string RoundBody() const;
  // The message the client has been shown so far plus the current round's
  // held blocks, as a JSON response body (what the client will send back).
  std::string ClientBody() const;
  // True when blocks of earlier rounds were relayed (the client's message
  // differs from the final round's).
  bool relayed_earlier() const { return offset_ > 0; }

  // The round's calls were served: drop its held events; the next round's
  // events continue the client's message.
  void NextRound();
  // The round goes to the client: its held events (message_delta's usage
  // replaced by `usage` when it is a non-empty object).
  std::string Flush(const nlohmann::ordered_json& usage);

 private:
  static std::string Frame(std::string_view event, std::string_view data);

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

}  // namespace toolcache::llm

#endif  // TOOLCACHE_SRC_LLM_STREAM_SERVE_H_
