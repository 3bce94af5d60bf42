// Invariants (AnthropicStreamRelay):
// - Client indexes are dense: a block relayed in round r has index
//   (its round index + offset_), and offset_ counts exactly the blocks the
//   client was shown in rounds before r (all blocks before each served
//   round's first tool_use).
// - From a round's first tool_use block on, nothing of the round reaches
//   the client until Flush; message_delta and message_stop are always held.
// Invariants (ChatStreamRelay):
// - Every chunk the client receives carries round 1's id, created and
//   model; a round's chunks from its first tool_calls delta or
//   finish_reason on, its usage chunk and [DONE] reach the client only
//   through Flush (or Release when the stream fails).
// Invariants (ResponsesStreamRelay):
// - The client's sequence_numbers are 0, 1, 2, ... in the order it
//   receives events (Emit is the only place that frames an event).
// - A client output_index is (the round's index + offset_), offset_
//   counting the items shown in earlier rounds, which shown_ holds.
// - From a round's first function_call item on, nothing of the round
//   reaches the client until Flush (or Release when the stream fails).
#include "src/llm/stream_relay.h"

namespace toolcache::llm {
namespace {

using ojson = nlohmann::ordered_json;

std::string Dump(const ojson& j) {
  return j.dump(-1, ' ', false, ojson::error_handler_t::replace);
}

std::string StringOf(const ojson& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string SseFrame(std::string_view event, std::string_view data) {
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

}  // namespace

std::unique_ptr<StreamRelay> NewStreamRelay(Api api) {
  switch (api) {
    case Api::kAnthropicMessages:
      return std::make_unique<AnthropicStreamRelay>();
    case Api::kOpenAiChat:
      return std::make_unique<ChatStreamRelay>();
    case Api::kOpenAiResponses:
      return std::make_unique<ResponsesStreamRelay>();
  }
  return nullptr;
}

std::string AnthropicStreamRelay::ErrorEvent(
    std::string_view error_body) const {
  return SseFrame("error", error_body);
}

std::string AnthropicStreamRelay::OnEvent(std::string_view event,
                                          std::string_view data) {
  if (event == "ping") return holding_ ? "" : SseFrame(event, data);
  ojson j = ojson::parse(data, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || event == "error") {
    failed_ = true;
    std::string out = held_;
    held_.clear();
    return out + SseFrame(event, data);
  }
  const std::string type = j.value("type", std::string(event));
  if (type == "message_start") {
    if (j.contains("message") && j["message"].is_object()) {
      message_ = j["message"];
    } else {
      message_ = ojson::object();
    }
    message_["content"] = ojson::array();
    return round_ == 0 ? SseFrame(event, data) : "";
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
      return SseFrame(event, data);
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
      framed = SseFrame(event, data);
    } else {
      j["index"] = index + offset_;
      framed = SseFrame(event, Dump(j));
    }
    if (holding_) {
      held_ += framed;
      return "";
    }
    return framed;
  }
  // Unknown event types: kept in order with the rest.
  if (holding_) {
    held_ += SseFrame(event, data);
    return "";
  }
  return SseFrame(event, data);
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
    out += SseFrame("message_delta", delta);
  }
  if (complete_) {
    out +=
        SseFrame("message_stop", held_stop_.empty()
                                     ? std::string(R"({"type":"message_stop"})")
                                     : held_stop_);
  }
  return out;
}

std::string ChatStreamRelay::ErrorEvent(std::string_view error_body) const {
  return "data: " + std::string(error_body) + "\n\n";
}

std::string ChatStreamRelay::Release() {
  std::string out;
  for (const Held& h : held_) out += "data: " + h.data + "\n\n";
  held_.clear();
  return out;
}

std::string ChatStreamRelay::OnEvent(std::string_view /*event*/,
                                     std::string_view data) {
  if (data == "[DONE]") {
    complete_ = true;
    return "";
  }
  ojson j = ojson::parse(data, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.contains("error")) {
    failed_ = true;
    return Release() + "data: " + std::string(data) + "\n\n";
  }
  if (many_) return "data: " + std::string(data) + "\n\n";
  bool changed = false;
  if (round_ == 0) {
    if (!first_.is_object()) {
      first_ = ojson::object();
      for (const char* k : {"id", "object", "created", "model"}) {
        if (j.contains(k)) first_[k] = j[k];
      }
    }
  } else {
    for (auto it = first_.begin(); it != first_.end(); ++it) {
      auto f = j.find(it.key());
      if (f != j.end() && *f != it.value()) {
        *f = it.value();
        changed = true;
      }
    }
  }
  const bool has_usage = j.contains("usage") && j["usage"].is_object();
  if (has_usage) usage_ = j["usage"];
  // The usage chunk (no choices) is held; a provider that reports usage in
  // every chunk (continuous usage stats) still has its text relayed.
  auto ch = j.find("choices");
  const bool no_choices = ch == j.end() || !ch->is_array() || ch->empty();
  bool hold = holding_ || (has_usage && no_choices);
  bool empty = true;  // no choice carries anything to show
  std::string content;
  if (ch != j.end() && ch->is_array()) {
    for (const ojson& c : *ch) {
      if (c.is_object() && c.value("index", int64_t{0}) != 0) many_ = true;
    }
    if (many_) {
      // n > 1: alternatives the loop does not serve; relay as they come.
      return Release() + "data: " + std::string(data) + "\n\n";
    }
    for (ojson& c : *ch) {
      if (!c.is_object()) continue;
      auto d = c.find("delta");
      if (d != c.end() && d->is_object()) {
        if (round_ > 0 && d->contains("role")) {
          d->erase("role");
          changed = true;
        }
        auto tc = d->find("tool_calls");
        if (tc != d->end() && tc->is_array()) {
          for (const ojson& t : *tc) {
            if (!t.is_object()) continue;
            const int64_t i =
                t.value("index", static_cast<int64_t>(calls_.size()));
            Call& call = calls_[i];
            if (t.contains("id") && t["id"].is_string()) {
              call.id = t["id"].get<std::string>();
            }
            if (t.contains("type") && t["type"].is_string()) {
              call.type = t["type"].get<std::string>();
            }
            auto f = t.find("function");
            if (f != t.end() && f->is_object()) {
              if (f->contains("name") && (*f)["name"].is_string()) {
                call.name += (*f)["name"].get<std::string>();
              }
              if (f->contains("arguments") && (*f)["arguments"].is_string()) {
                call.arguments += (*f)["arguments"].get<std::string>();
              }
            }
          }
          hold = true;
        }
        auto x = d->find("content");
        if (x != d->end() && x->is_string()) {
          content += x->get<std::string>();
        }
        auto r = d->find("refusal");
        if (r != d->end() && r->is_string()) {
          refusal_ += r->get<std::string>();
          if (!r->get<std::string>().empty()) empty = false;
        }
        for (auto it = d->begin(); it != d->end(); ++it) {
          if (it.key() != "content" && it.key() != "refusal" &&
              !it.value().is_null()) {
            empty = false;
          }
        }
      }
      auto f = c.find("finish_reason");
      if (f != c.end() && !f->is_null()) {
        finish_ = *f;
        hold = true;
      }
      auto lp = c.find("logprobs");
      if (lp != c.end() && !lp->is_null()) empty = false;
    }
  } else {
    empty = false;  // an unknown chunk: kept in order
  }
  text_ += content;
  if (!content.empty()) empty = false;
  const std::string out = changed ? Dump(j) : std::string(data);
  if (hold) {
    holding_ = true;
    held_.push_back({out, has_usage});
    return "";
  }
  relayed_text_ += content;
  // A later round's opening chunk (role, empty content): nothing to show.
  if (round_ > 0 && empty) return "";
  return "data: " + out + "\n\n";
}

std::string ChatStreamRelay::Body(const std::string& text) const {
  ojson message = ojson::object();
  message["role"] = "assistant";
  if (text.empty() && !calls_.empty()) {
    message["content"] = nullptr;
  } else {
    message["content"] = text;
  }
  if (!refusal_.empty()) message["refusal"] = refusal_;
  if (!calls_.empty()) {
    ojson calls = ojson::array();
    for (const auto& [i, c] : calls_) {
      calls.push_back(
          {{"id", c.id},
           {"type", c.type.empty() ? std::string("function") : c.type},
           {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    }
    message["tool_calls"] = std::move(calls);
  }
  ojson body = ojson::object();
  for (const char* k : {"id", "created", "model"}) {
    if (first_.is_object() && first_.contains(k)) body[k] = first_[k];
  }
  body["object"] = "chat.completion";
  ojson choice = ojson::object();
  choice["index"] = 0;
  choice["message"] = std::move(message);
  choice["finish_reason"] = finish_;
  // n > 1: no choices, so nothing in it is served.
  body["choices"] = many_ ? ojson::array() : ojson::array({std::move(choice)});
  if (usage_.is_object()) body["usage"] = usage_;
  return Dump(body);
}

std::string ChatStreamRelay::RoundBody() const { return Body(text_); }

std::string ChatStreamRelay::ClientBody() const {
  return Body(shown_text_ + text_);
}

void ChatStreamRelay::NextRound() {
  shown_text_ += relayed_text_;
  ++round_;
  holding_ = false;
  complete_ = false;
  text_.clear();
  relayed_text_.clear();
  refusal_.clear();
  calls_.clear();
  finish_ = nullptr;
  usage_ = nullptr;
  held_.clear();
}

std::string ChatStreamRelay::Flush(const ojson& usage) {
  std::string out;
  for (const Held& h : held_) {
    std::string data = h.data;
    if (h.usage && usage.is_object() && !usage.empty()) {
      ojson j = ojson::parse(h.data, nullptr, false);
      if (j.is_object()) {
        j["usage"] = usage;
        data = Dump(j);
      }
    }
    out += "data: " + data + "\n\n";
  }
  held_.clear();
  if (complete_) out += "data: [DONE]\n\n";
  return out;
}

std::string ResponsesStreamRelay::Emit(std::string_view event, ojson data,
                                       std::string_view raw) {
  const int64_t seq = seq_++;
  auto it = data.find("sequence_number");
  if (!raw.empty() && it != data.end() && it->is_number_integer() &&
      it->get<int64_t>() == seq) {
    return SseFrame(event, raw);
  }
  data["sequence_number"] = seq;
  return SseFrame(event, Dump(data));
}

std::string ResponsesStreamRelay::Release() {
  std::string out;
  for (Held& h : held_) out += Emit(h.event, std::move(h.data), h.raw);
  held_.clear();
  return out;
}

std::string ResponsesStreamRelay::ErrorEvent(
    std::string_view error_body) const {
  ojson j = ojson::parse(error_body, nullptr, false);
  ojson e = j.is_object() && j.contains("error") && j["error"].is_object()
                ? j["error"]
                : (j.is_object() ? j : ojson::object());
  ojson out = ojson::object();
  out["type"] = "error";
  out["code"] =
      e.contains("code") && e["code"].is_string() ? e["code"] : ojson();
  out["message"] = e.contains("message") && e["message"].is_string()
                       ? e["message"]
                       : ojson(std::string(error_body));
  out["param"] =
      e.contains("param") && e["param"].is_string() ? e["param"] : ojson();
  out["sequence_number"] = seq_;
  return SseFrame("error", Dump(out));
}

std::string ResponsesStreamRelay::OnEvent(std::string_view event,
                                          std::string_view data) {
  ojson j = ojson::parse(data, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    failed_ = true;
    return Release() + SseFrame(event, data);
  }
  std::string type = StringOf(j, "type");
  if (type.empty()) type = std::string(event);
  const std::string name = event.empty() ? type : std::string(event);
  if (type == "error" || type == "response.failed") {
    failed_ = true;
    auto r = j.find("response");
    if (round_ > 0 && first_.is_object() && r != j.end() && r->is_object()) {
      for (const char* k : {"id", "created_at", "model"}) {
        if (first_.contains(k)) (*r)[k] = first_[k];
      }
      return Release() + Emit(name, std::move(j));
    }
    return Release() + Emit(name, std::move(j), data);
  }
  if (type == "response.created" || type == "response.in_progress" ||
      type == "response.queued") {
    if (j.contains("response") && j["response"].is_object()) {
      response_ = j["response"];
      if (round_ == 0 && !first_.is_object()) first_ = response_;
    }
    return round_ == 0 ? Emit(name, std::move(j), data) : "";
  }
  if (type == "response.completed" || type == "response.incomplete") {
    complete_ = true;
    if (j.contains("response") && j["response"].is_object()) {
      response_ = j["response"];
    }
    held_.push_back({name, std::move(j), std::string(data)});
    return "";
  }
  bool changed = false;
  auto oi = j.find("output_index");
  if (oi != j.end() && oi->is_number_integer()) {
    const int64_t index = oi->get<int64_t>();
    if (index < 0 || index > 4096) {
      failed_ = true;
      return Release() + Emit(name, std::move(j), data);
    }
    auto item = j.find("item");
    const bool has_item = item != j.end() && item->is_object();
    if (type == "response.output_item.added" && !holding_ && has_item &&
        StringOf(*item, "type") == "function_call") {
      holding_ = true;
      first_call_ = index;
    }
    if (type == "response.output_item.done" && has_item) items_[index] = *item;
    if (offset_ > 0) {
      j["output_index"] = index + offset_;
      changed = true;
    }
  }
  const std::string_view raw = changed ? std::string_view() : data;
  if (holding_) {
    held_.push_back({name, std::move(j), std::string(raw)});
    return "";
  }
  return Emit(name, std::move(j), raw);
}

ojson ResponsesStreamRelay::RoundOutput() const {
  if (response_.is_object()) {
    auto out = response_.find("output");
    if (out != response_.end() && out->is_array() && !out->empty()) {
      return *out;
    }
  }
  ojson out = ojson::array();
  for (const auto& [i, item] : items_) out.push_back(item);
  return out;
}

std::string ResponsesStreamRelay::RoundBody() const {
  ojson r = response_.is_object() ? response_ : ojson::object();
  r["output"] = RoundOutput();
  return Dump(r);
}

std::string ResponsesStreamRelay::ClientBody() const {
  ojson r = response_.is_object() ? response_ : ojson::object();
  if (first_.is_object()) {
    for (const char* k : {"id", "created_at", "model"}) {
      if (first_.contains(k)) r[k] = first_[k];
    }
  }
  ojson output = shown_;
  for (const ojson& item : RoundOutput()) output.push_back(item);
  r["output"] = std::move(output);
  return Dump(r);
}

void ResponsesStreamRelay::NextRound() {
  const ojson out = RoundOutput();
  const size_t shown =
      first_call_ >= 0 ? static_cast<size_t>(first_call_) : out.size();
  for (size_t i = 0; i < shown && i < out.size(); ++i) {
    shown_.push_back(out[i]);
  }
  offset_ += static_cast<int64_t>(shown);
  ++round_;
  first_call_ = -1;
  holding_ = false;
  complete_ = false;
  response_ = nullptr;
  items_.clear();
  held_.clear();
}

std::string ResponsesStreamRelay::Flush(const ojson& usage) {
  const bool rewrite = round_ > 0 || (usage.is_object() && !usage.empty());
  if (rewrite && !held_.empty()) {
    ojson& last = held_.back().data;
    const std::string type = StringOf(last, "type");
    if ((type == "response.completed" || type == "response.incomplete") &&
        last.contains("response") && last["response"].is_object()) {
      ojson client = ojson::parse(ClientBody(), nullptr, false);
      if (usage.is_object() && !usage.empty()) client["usage"] = usage;
      last["response"] = std::move(client);
      held_.back().raw.clear();
    }
  }
  return Release();
}

}  // namespace toolcache::llm
