// Invariants:
// - Client indexes are dense: a block relayed in round r has index
//   (its round index + offset_), and offset_ counts exactly the blocks the
//   client was shown in rounds before r (all blocks before each served
//   round's first tool_use).
// - From a round's first tool_use block on, nothing of the round reaches
//   the client until Flush; message_delta and message_stop are always held.
#include "src/llm/stream_serve.h"

namespace toolcache::llm {
namespace {

using ojson = nlohmann::ordered_json;

std::string Dump(const ojson& j) {
  return j.dump(-1, ' ', false, ojson::error_handler_t::replace);
}

}  // namespace

std::string AnthropicStreamRelay::Frame(std::string_view event,
                                        std::string_view data) {
  std::string out;
  out.reserve(event.size() + data.size() + 16);
  if (!event.empty()) {
    out += "event: ";
    out.append(event);
    out += "\n";
  }
  out += "data: ";
  out.append(data);
  out += "\n\n";
  return out;
}

std::string AnthropicStreamRelay::OnEvent(std::string_view event,
                                          std::string_view data) {
  if (event == "ping") return holding_ ? "" : Frame(event, data);
  ojson j = ojson::parse(data, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || event == "error") {
    failed_ = true;
    std::string out = held_;
    held_.clear();
    return out + Frame(event, data);
  }
  const std::string type = j.value("type", std::string(event));
  if (type == "message_start") {
    if (j.contains("message") && j["message"].is_object()) {
      message_ = j["message"];
    } else {
      message_ = ojson::object();
    }
    message_["content"] = ojson::array();
    return round_ == 0 ? Frame(event, data) : "";
  }
  if (type == "message_delta") {
    if (!message_.is_object()) message_ = ojson::object();
    if (j.contains("delta") && j["delta"].is_object()) {
      for (auto it = j["delta"].begin(); it != j["delta"].end(); ++it) {
        message_[it.key()] = it.value();
      }
    }
    if (j.contains("usage") && j["usage"].is_object()) {
      if (!message_.contains("usage") || !message_["usage"].is_object()) {
        message_["usage"] = ojson::object();
      }
      for (auto it = j["usage"].begin(); it != j["usage"].end(); ++it) {
        if (!it.value().is_null()) message_["usage"][it.key()] = it.value();
      }
    }
    held_delta_ = std::string(data);
    return "";
  }
  if (type == "message_stop") {
    complete_ = true;
    held_stop_ = std::string(data);
    return "";
  }
  if (type == "content_block_start" || type == "content_block_delta" ||
      type == "content_block_stop") {
    const int64_t index = j.value("index", int64_t{-1});
    if (index < 0 || index > 4096) {
      failed_ = true;
      return Frame(event, data);
    }
    if (!message_.is_object()) message_ = ojson::object();
    ojson& content = message_["content"];
    if (!content.is_array()) content = ojson::array();
    while (content.size() <= static_cast<size_t>(index)) {
      content.push_back(ojson::object());
    }
    ojson& block = content[static_cast<size_t>(index)];
    if (type == "content_block_start") {
      block = j.value("content_block", ojson::object());
      const std::string bt = block.value("type", "");
      if (!holding_ && (bt == "tool_use" || bt == "server_tool_use")) {
        holding_ = true;
        first_tool_ = index;
      }
    } else if (type == "content_block_delta" && j.contains("delta")) {
      const ojson& d = j["delta"];
      const std::string dt = d.value("type", "");
      if (dt == "text_delta") {
        block["text"] = block.value("text", "") + d.value("text", "");
      } else if (dt == "input_json_delta") {
        partial_[index] += d.value("partial_json", "");
      } else if (dt == "thinking_delta") {
        block["thinking"] =
            block.value("thinking", "") + d.value("thinking", "");
      } else if (dt == "signature_delta") {
        block["signature"] = d.value("signature", "");
      } else if (dt == "citations_delta" && d.contains("citation")) {
        if (!block.contains("citations") || !block["citations"].is_array()) {
          block["citations"] = ojson::array();
        }
        block["citations"].push_back(d["citation"]);
      }
    } else if (type == "content_block_stop") {
      auto p = partial_.find(index);
      if (p != partial_.end()) {
        if (!p->second.empty()) {
          ojson input = ojson::parse(p->second, nullptr, false);
          if (input.is_discarded()) {
            failed_ = true;
          } else {
            block["input"] = std::move(input);
          }
        }
        partial_.erase(p);
      }
    }
    std::string framed;
    if (offset_ == 0) {
      framed = Frame(event, data);
    } else {
      j["index"] = index + offset_;
      framed = Frame(event, Dump(j));
    }
    if (holding_) {
      held_ += framed;
      return "";
    }
    return framed;
  }
  // Unknown event types: kept in order with the rest.
  if (holding_) {
    held_ += Frame(event, data);
    return "";
  }
  return Frame(event, data);
}

std::string AnthropicStreamRelay::RoundBody() const {
  return Dump(message_.is_object() ? message_ : ojson::object());
}

std::string AnthropicStreamRelay::ClientBody() const {
  ojson m = message_.is_object() ? message_ : ojson::object();
  ojson content = shown_;
  if (m.contains("content") && m["content"].is_array()) {
    for (const ojson& b : m["content"]) content.push_back(b);
  }
  m["content"] = std::move(content);
  return Dump(m);
}

void AnthropicStreamRelay::NextRound() {
  const ojson& content = message_.is_object() && message_.contains("content")
                             ? message_["content"]
                             : ojson::array();
  const size_t shown =
      first_tool_ >= 0 ? static_cast<size_t>(first_tool_) : content.size();
  for (size_t i = 0; i < shown && i < content.size(); ++i) {
    shown_.push_back(content[i]);
  }
  offset_ += static_cast<uint32_t>(shown);
  ++round_;
  first_tool_ = -1;
  holding_ = false;
  complete_ = false;
  held_.clear();
  held_delta_.clear();
  held_stop_.clear();
  partial_.clear();
  message_ = ojson::object();
}

std::string AnthropicStreamRelay::Flush(const ojson& usage) {
  std::string out = std::move(held_);
  held_.clear();
  if (!held_delta_.empty()) {
    std::string delta = held_delta_;
    if (usage.is_object() && !usage.empty()) {
      ojson j = ojson::parse(held_delta_, nullptr, false);
      if (j.is_object()) {
        j["usage"] = usage;
        delta = Dump(j);
      }
    }
    out += Frame("message_delta", delta);
  }
  if (complete_) {
    out += Frame("message_stop", held_stop_.empty()
                                     ? std::string(R"({"type":"message_stop"})")
                                     : held_stop_);
  }
  return out;
}

}  // namespace toolcache::llm
