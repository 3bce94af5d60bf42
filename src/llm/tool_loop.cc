// Invariants:
// - TryServe returns a turn only when every call of the model's turn was
//   answered by ToolCache::Begin with kServe; a call that is not served is
//   never partly answered: the whole turn goes to the client.
// - Hidden messages are stored and spliced back as the exact bytes the
//   upstream received (they are built once, here, and never re-rendered).
// - A store key names (API, scope, the whole prefix the hidden turns
//   continue: system / instructions, tools and every earlier client
//   message, in canonical bytes; then the visible assistant message's
//   identity): two conversations share state only when their scopes and
//   full prefixes are identical (issue 27, item 3).
// Choice: canonical bytes of a prefix value are its JSON with keys sorted,
//   every `cache_control` member removed (clients move breakpoints from
//   turn to turn), a content of text blocks only collapsed to its text and
//   a message without `type` given type "message" (a Responses string
//   `input` and the item the client sends back for it agree). Anything
//   else a client changes in its history makes the state miss (the request
//   is forwarded as sent), never splice into another conversation.
// - saved_ and memo_ hold at most options_.max_local keys each (cleared
//   when full). memo_ maps a value's raw SHA-256 to its canonical digest,
//   so a conversation's history is parsed once, not on every request.
// - Stored state is sealed (src/store/sealed.h): a damaged value is never
//   spliced; the request goes as the client sent it.
#include "src/llm/tool_loop.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <functional>
#include <optional>

#include "src/core/json.h"
#include "src/core/sha256.h"
#include "src/llm/agent_tools.h"
#include "src/store/sealed.h"

namespace toolcache::llm {
namespace {

using ojson = nlohmann::ordered_json;

// "conv2": values are sealed since version 2 (unsealed "conv" values of
// earlier versions are not read).
constexpr std::string_view kNamespace = "conv2";

std::string Dump(const ojson& j) {
  return j.dump(-1, ' ', false, ojson::error_handler_t::replace);
}

ojson Parse(std::string_view text) {
  return ojson::parse(text, nullptr, /*allow_exceptions=*/false);
}

// The text of a message's content: a string, or the text of its text
// blocks / parts in order.
std::string TextOf(const ojson& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (!content.is_array()) return out;
  for (const ojson& b : content) {
    if (!b.is_object()) continue;
    auto t = b.find("type");
    auto x = b.find("text");
    if (t != b.end() && t->is_string() &&
        (*t == "text" || *t == "output_text" || *t == "input_text") &&
        x != b.end() && x->is_string()) {
      out += x->get<std::string>();
    }
  }
  return out;
}

std::string Identity(std::string_view role, const std::vector<std::string>& ids,
                     const std::string& text) {
  std::string s(role);
  if (!ids.empty()) {
    s += ":id:";
    for (const std::string& id : ids) {
      s += id;
      s.push_back(',');
    }
    return s;
  }
  if (text.empty()) return "";
  return s + ":tx:" + ToHex(ComputeSha256(text));
}

// Identity of any message of a request (call ids, result ids, or text).
std::string MessageIdentity(const ParsedRequest& request, std::string_view body,
                            uint32_t index) {
  if (index >= request.message_list.size()) return "";
  const Message& m = request.message_list[index];
  std::vector<std::string> ids;
  for (const RequestToolUse& u : request.tool_uses) {
    if (u.message == index) ids.emplace_back(u.id);
  }
  for (const ToolResult& r : request.tool_results) {
    if (r.message == index) ids.emplace_back(r.id);
  }
  std::string role(m.role.empty() ? m.type : m.role);
  if (!ids.empty()) return Identity(role, ids, "");
  ojson j = Parse(m.span.In(body));
  if (!j.is_object()) return "";
  auto c = j.find("content");
  return Identity(role, {}, c == j.end() ? "" : TextOf(*c));
}

// The canonical form of a prefix value (see the Choice above).
nlohmann::json Canonical(const nlohmann::json& v) {
  using json = nlohmann::json;
  if (v.is_array()) {
    // Only text blocks: their text (a string content says the same).
    bool text_only = !v.empty();
    std::string text;
    for (const json& b : v) {
      if (!text_only) break;
      if (!b.is_object()) {
        text_only = false;
        break;
      }
      auto t = b.find("type");
      auto x = b.find("text");
      text_only = t != b.end() && t->is_string() &&
                  (*t == "text" || *t == "input_text" || *t == "output_text") &&
                  x != b.end() && x->is_string();
      for (auto it = b.begin(); text_only && it != b.end(); ++it) {
        text_only = it.key() == "type" || it.key() == "text" ||
                    it.key() == "cache_control";
      }
      if (text_only) text += x->get<std::string>();
    }
    if (text_only) return json(text);
    json out = json::array();
    for (const json& e : v) out.push_back(Canonical(e));
    return out;
  }
  if (!v.is_object()) return v;
  json out = json::object();
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (it.key() == "cache_control") continue;
    out[it.key()] = Canonical(it.value());
  }
  if (out.contains("role") && !out.contains("type")) out["type"] = "message";
  return out;
}

// SHA-256 of the canonical bytes of the JSON text `raw` (the raw bytes when
// they are not JSON).
Sha256Digest CanonicalDigestOf(std::string_view raw) {
  nlohmann::json j = nlohmann::json::parse(raw, nullptr, false);
  if (j.is_discarded()) return ComputeSha256(raw);
  return ComputeSha256(Canonical(j).dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace));
}

using DigestFn = std::function<Sha256Digest(std::string_view)>;

// The running digest of a request's prefix: P(0) covers the API, the
// scope, system / instructions and tools; P(k+1) = SHA-256(P(k), the
// canonical digest of message k).
class PrefixDigest {
 public:
  PrefixDigest(const ParsedRequest& r, std::string_view body,
               std::string_view scope, DigestFn canonical)
      : request_(r), body_(body), canonical_(std::move(canonical)) {
    std::string head = "llm-prefix-v1\n";
    head.append(ApiName(r.api));
    head.push_back('\n');
    const std::string quoted_scope = json::Quote(scope);
    for (std::string_view part :
         {std::string_view(quoted_scope),
          r.system.empty() ? std::string_view("null") : r.system.In(body),
          r.tools.empty() ? std::string_view("null") : r.tools.In(body)}) {
      const Sha256Digest d = canonical_(part);
      head.append(d.begin(), d.end());
    }
    digests_.push_back(ComputeSha256(head));
  }
  // P(k): the digest of everything before message k.
  const Sha256Digest& At(uint32_t k) {
    while (digests_.size() <= k) {
      const uint32_t i = static_cast<uint32_t>(digests_.size() - 1);
      Extend(i < request_.message_list.size()
                 ? request_.message_list[i].span.In(body_)
                 : std::string_view("null"));
    }
    return digests_[k];
  }
  // Appends a message that is not in the request (Responses' string input).
  void Extend(std::string_view raw_message) {
    std::string step(digests_.back().begin(), digests_.back().end());
    const Sha256Digest d = canonical_(raw_message);
    step.append(d.begin(), d.end());
    digests_.push_back(ComputeSha256(step));
  }

 private:
  const ParsedRequest& request_;
  std::string_view body_;
  DigestFn canonical_;
  std::vector<Sha256Digest> digests_;
};

void AddInto(const ojson& from, ojson* total) {
  for (auto it = from.begin(); it != from.end(); ++it) {
    const ojson& v = it.value();
    auto t = total->find(it.key());
    if (v.is_number_integer()) {
      const int64_t add = v.get<int64_t>();
      if (t != total->end() && t->is_number_integer()) {
        *t = t->get<int64_t>() + add;
      } else {
        (*total)[it.key()] = add;
      }
    } else if (v.is_object()) {
      if (t == total->end() || !t->is_object()) {
        (*total)[it.key()] = ojson::object();
      }
      AddInto(v, &(*total)[it.key()]);
    } else if (t == total->end()) {
      (*total)[it.key()] = v;
    }
  }
}

}  // namespace

std::string AssistantMessage(Api api, std::string_view body) {
  ojson j = Parse(body);
  if (!j.is_object()) return "";
  if (api == Api::kAnthropicMessages) {
    auto c = j.find("content");
    if (c == j.end() || !c->is_array()) return "";
    return "{\"role\":\"assistant\",\"content\":" + Dump(*c) + "}";
  }
  if (api == Api::kOpenAiResponses) {
    // The output items, comma-joined, each as it goes back into `input`.
    // Only items a request accepts back and nothing the client must act
    // on (a computer_call, a custom tool call...): else "" (not served).
    auto out = j.find("output");
    if (out == j.end() || !out->is_array() || out->empty()) return "";
    std::string items;
    for (const ojson& item : *out) {
      if (!item.is_object()) return "";
      const std::string type = item.value("type", "");
      if (type != "reasoning" && type != "message" && type != "function_call") {
        return "";
      }
      if (!items.empty()) items.push_back(',');
      items += Dump(item);
    }
    return items;
  }
  if (api != Api::kOpenAiChat) return "";
  auto ch = j.find("choices");
  if (ch == j.end() || !ch->is_array() || ch->empty()) return "";
  const ojson& m = (*ch)[0].value("message", ojson::object());
  ojson a = ojson::object();
  a["role"] = "assistant";
  a["content"] = m.value("content", ojson());
  auto tc = m.find("tool_calls");
  if (tc != m.end() && tc->is_array() && !tc->empty()) a["tool_calls"] = *tc;
  return Dump(a);
}

std::string RequestFingerprint(const ParsedRequest& request,
                               std::string_view body, uint32_t message) {
  return MessageIdentity(request, body, message);
}

std::string ResponseFingerprint(Api api, std::string_view body,
                                const ParsedResponse& response) {
  if (api == Api::kOpenAiResponses) {
    // Items: the client sends each back as its own input item; the anchor
    // is the first that is not reasoning (see Splice).
    ojson j = Parse(body);
    if (!j.is_object() || !j.contains("output") || !j["output"].is_array()) {
      return "";
    }
    for (const ojson& item : j["output"]) {
      if (!item.is_object()) return "";
      const std::string type = item.value("type", "");
      if (type == "reasoning") continue;
      if (type == "function_call") {
        return Identity("function_call", {item.value("call_id", "")}, "");
      }
      if (type == "message") {
        auto c = item.find("content");
        return Identity(item.value("role", "assistant"), {},
                        c == item.end() ? "" : TextOf(*c));
      }
      return "";
    }
    return "";
  }
  std::vector<std::string> ids;
  for (const ToolUse& u : response.tool_uses) ids.push_back(u.id);
  if (!ids.empty()) return Identity("assistant", ids, "");
  ojson j = Parse(body);
  if (!j.is_object()) return "";
  if (api == Api::kAnthropicMessages) {
    auto c = j.find("content");
    return Identity("assistant", {}, c == j.end() ? "" : TextOf(*c));
  }
  if (api == Api::kOpenAiChat) {
    auto ch = j.find("choices");
    if (ch == j.end() || !ch->is_array() || ch->empty()) return "";
    const ojson& first = (*ch)[0];
    auto m = first.find("message");
    if (m == first.end() || !m->is_object()) return "";
    auto c = m->find("content");
    return Identity("assistant", {}, c == m->end() ? "" : TextOf(*c));
  }
  return "";
}

Result<std::string> AppendMessages(const ParsedRequest& request,
                                   std::string_view body,
                                   std::string_view messages) {
  std::string out;
  out.reserve(body.size() + messages.size() + 1);
  if (!request.message_list.empty()) {
    const uint32_t at = request.message_list.back().span.end;
    out.append(body.substr(0, at));
    out.push_back(',');
    out.append(messages);
    out.append(body.substr(at));
    return out;
  }
  if (request.messages.empty() || body[request.messages.begin] != '[') {
    return InvalidArgument("request has no message array");
  }
  const uint32_t at = request.messages.begin + 1;
  out.append(body.substr(0, at));
  out.append(messages);
  out.append(body.substr(at));
  return out;
}

void AddUsage(std::string_view body, ojson* total) {
  ojson j = Parse(body);
  if (!j.is_object()) return;
  auto u = j.find("usage");
  if (u == j.end() || !u->is_object()) return;
  if (!total->is_object()) *total = ojson::object();
  AddInto(*u, total);
}

std::string WithUsage(std::string_view body, const ojson& total) {
  ojson j = Parse(body);
  if (!j.is_object() || !total.is_object() || total.empty()) {
    return std::string(body);
  }
  j["usage"] = total;
  return Dump(j);
}

ToolLoop::ToolLoop(ToolCache* cache, Store* store, const Observer* router,
                   ServeOptions options, Offloader* offloader)
    : cache_(cache),
      store_(store),
      router_(router),
      options_(std::move(options)),
      offloader_(offloader) {}

bool ToolLoop::Supports(Api api, bool stream) {
  (void)stream;  // every API's streams have a relay (stream_relay.h)
  return api == Api::kAnthropicMessages || api == Api::kOpenAiChat ||
         api == Api::kOpenAiResponses;
}

std::string_view ToolLoop::BypassReason(const ParsedRequest& request) {
  if (!request.previous_response_id.empty()) return "previous_response_id";
  if (request.conversation) return "conversation";
  return "";
}

bool ToolLoop::Serves(std::string_view tool, const ToolScopes& scopes) const {
  // The operator's list names tools to serve, client-local ones included.
  if (std::find(options_.tools.begin(), options_.tools.end(), tool) !=
      options_.tools.end()) {
    return true;
  }
  // Choice (issue 28): `all` means every tool that does not run on the
  // client's own machine (agent_tools.h); serving those saves milliseconds
  // and risks stale files and the client's own bookkeeping (read-before-
  // edit, its agents, its jobs, the tools a ToolSearch loaded).
  return options_.all_tools && !scopes.Local(tool);
}

namespace {

// A text block with a non-empty `citations` array.
bool Cited(const ojson& b) {
  if (!b.is_object() || b.value("type", "") != "text") return false;
  auto c = b.find("citations");
  return c != b.end() && c->is_array() && !c->empty();
}

// True when `blocks` hold a cited text block, directly or inside a
// search_result block: what API version 2026-10-21 refuses in a user
// message.
bool HasUserCitations(const ojson& blocks) {
  for (const ojson& b : blocks) {
    if (Cited(b)) return true;
    if (b.is_object() && b.value("type", "") == "search_result") {
      auto c = b.find("content");
      if (c != b.end() && c->is_array() &&
          std::any_of(c->begin(), c->end(), Cited)) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

ServeRules AnthropicServeRules(std::string_view version) {
  // ISO dates compare as strings.
  return {.user_citations = version.size() != 10 || version < "2026-10-21"};
}

namespace {

// Removes every `cache_control` member of `j`, at any depth.
void DropCacheControl(ojson* j) {
  if (j->is_object()) j->erase("cache_control");
  if (!j->is_structured()) return;
  for (ojson& v : *j) DropCacheControl(&v);  // an object's member values
}

}  // namespace

std::string ToolLoop::RenderResult(Api api, std::string_view stored,
                                   const ServeRules& rules) {
  ojson j = Parse(stored);
  if (!j.is_object()) return "";
  auto c = j.find("content");
  if (c == j.end() || !c->is_array() || c->empty()) return "";
  // Session 19 (attackK finding 5): a breakpoint recorded inside the
  // blocks (entries of older versions, other faces) is the recording
  // client's; served into another request it exceeded the provider's
  // four (400) and moved the client's prompt-cache breakpoints.
  DropCacheControl(&*c);
  bool all_text = true;
  for (const ojson& b : *c) {
    if (!b.is_object() || b.value("type", "") != "text" ||
        !b.contains("text") || !b["text"].is_string()) {
      all_text = false;
    }
  }
  // One text block: the plain string the client's tool runner sends.
  if (all_text && c->size() == 1)
    return json::Quote((*c)[0]["text"].get<std::string>());
  if (api == Api::kAnthropicMessages) {
    if (!rules.user_citations && HasUserCitations(*c)) return "";
    return Dump(*c);
  }
  // Chat tool messages and Responses outputs: text here.
  if (!all_text) return "";
  ojson parts = ojson::array();
  const char* type = api == Api::kOpenAiResponses ? "input_text" : "text";
  for (const ojson& b : *c) {
    parts.push_back({{"type", type}, {"text", b["text"]}});
  }
  return Dump(parts);
}

std::optional<ServedTurn> ToolLoop::TryServe(
    Api api, std::string_view body, const ParsedResponse& response,
    const ToolScopes& scopes, std::optional<std::string_view> state_scope,
    const ServeRules& rules) {
  const std::string_view scope = scopes.credential;
  if (!Supports(api, false) || response.tool_uses.empty()) return std::nullopt;
  // n > 1: the client chooses among the choices; never serve for it.
  if (response.choices > 1) return std::nullopt;
  const std::string_view want = api == Api::kAnthropicMessages ? "tool_use"
                                : api == Api::kOpenAiChat      ? "tool_calls"
                                                               : "completed";
  if (response.stop_reason != want) return std::nullopt;
  // Decide on every call first (Peek changes nothing). Each call's key is
  // the one the observer records under (agent_tools.h: a shell read is
  // `<tool>#read-only` with its cosmetic fields dropped), derived once here
  // for both loops.
  std::vector<CallKey> keys(response.tool_uses.size());
  for (size_t i = 0; i < response.tool_uses.size(); ++i) {
    const ToolUse& u = response.tool_uses[i];
    if (u.id.empty()) return std::nullopt;
    // Retrieval of an offloaded result: always the proxy's own.
    if (offloader_ != nullptr && Offloader::IsRetrieval(u.name)) continue;
    if (!u.function || !Serves(u.name, scopes)) return std::nullopt;
    // A client tool's result is the client workspace's (ToolScopes): a
    // request that names none the proxy recognises is not served.
    if (!scopes.Servable(u.name)) {
      spdlog::info("{}: not served: {}: client workspace unknown", ApiName(api),
                   u.name);
      return std::nullopt;
    }
    auto [server, routed] = router_->Route(u.name);
    keys[i] = KeyCall(u.name, routed, u.arguments,
                      scopes.ShellMovedBefore(kNoShellMove));
    if (!keys[i].bypass.empty()) {
      spdlog::info("{}: not served: {}: {}", ApiName(api), u.name,
                   keys[i].bypass == kShellMovedReason
                       ? kShellMovedDetail
                       : "it changes the working directory");
      return std::nullopt;
    }
    // The tools as this request's principal declared them (Observer).
    const std::shared_ptr<const ToolInfo> definition =
        router_->Definition(scopes, server, keys[i].tool);
    Probe p = cache_->Peek({.server = server,
                            .scope = scopes.For(u.name),
                            .tool = keys[i].tool,
                            .arguments_json = keys[i].arguments,
                            .definition = definition.get()});
    if (!p.would_hit || !p.result_json ||
        RenderResult(api, *p.result_json, rules).empty()) {
      return std::nullopt;
    }
  }
  ServedTurn turn;
  std::string assistant = AssistantMessage(api, body);
  if (assistant.empty()) return std::nullopt;
  // Serve through the engine's request path (counts the hit, teaches the
  // policy the access). A call that is no longer a hit ends the attempt.
  std::vector<std::string> rendered;
  // The engine's latency_saved grows by each served entry's stored latency;
  // this loop is the proxy's only Begin caller, so under serve_mu_ the
  // difference is this turn's.
  std::lock_guard<std::mutex> serving(serve_mu_);
  const double saved_before = cache_->Stats().latency_saved_seconds;
  for (size_t i = 0; i < response.tool_uses.size(); ++i) {
    const ToolUse& u = response.tool_uses[i];
    if (offloader_ != nullptr && Offloader::IsRetrieval(u.name)) {
      rendered.push_back(json::Quote(
          offloader_->Answer(state_scope.value_or(scope), u.arguments)));
      turn.tools.push_back(u.name);
      continue;
    }
    const std::string_view server = router_->Route(u.name).first;
    const WaiterId waiter = (1ull << 62) + next_waiter_.fetch_add(1);
    const std::shared_ptr<const ToolInfo> definition =
        router_->Definition(scopes, server, keys[i].tool);
    CallPlan plan = cache_->Begin({.server = server,
                                   .scope = scopes.For(u.name),
                                   .tool = keys[i].tool,
                                   .arguments_json = keys[i].arguments,
                                   .definition = definition.get()},
                                  waiter);
    if (plan.action != CallAction::kServe || !plan.result_json) {
      if (plan.action != CallAction::kServe) (void)cache_->Cancel(waiter);
      return std::nullopt;
    }
    std::string r = RenderResult(api, *plan.result_json, rules);
    if (r.empty()) return std::nullopt;
    rendered.push_back(std::move(r));
    turn.tools.push_back(u.name);
  }
  turn.latency_saved_seconds =
      std::max(0.0, cache_->Stats().latency_saved_seconds - saved_before);
  turn.messages = std::move(assistant);
  if (api == Api::kAnthropicMessages) {
    turn.messages += ",{\"role\":\"user\",\"content\":[";
    for (size_t i = 0; i < rendered.size(); ++i) {
      if (i > 0) turn.messages.push_back(',');
      turn.messages += "{\"type\":\"tool_result\",\"tool_use_id\":" +
                       json::Quote(response.tool_uses[i].id) +
                       ",\"content\":" + rendered[i] + "}";
    }
    turn.messages += "]}";
  } else if (api == Api::kOpenAiResponses) {
    for (size_t i = 0; i < rendered.size(); ++i) {
      turn.messages += ",{\"type\":\"function_call_output\",\"call_id\":" +
                       json::Quote(response.tool_uses[i].id) +
                       ",\"output\":" + rendered[i] + "}";
    }
  } else {
    for (size_t i = 0; i < rendered.size(); ++i) {
      turn.messages += ",{\"role\":\"tool\",\"tool_call_id\":" +
                       json::Quote(response.tool_uses[i].id) +
                       ",\"content\":" + rendered[i] + "}";
    }
  }
  turn.calls = static_cast<uint32_t>(rendered.size());
  return turn;
}

Sha256Digest ToolLoop::Canonical(std::string_view raw) {
  // Choice: values under 256 bytes are canonicalized each time (cheaper
  // than the memo's lock and entry).
  if (raw.size() < 256) return CanonicalDigestOf(raw);
  const Sha256Digest id = ComputeSha256(raw);
  const std::string key(id.begin(), id.end());
  {
    std::lock_guard<std::mutex> lock(memo_mu_);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
  }
  const Sha256Digest d = CanonicalDigestOf(raw);
  std::lock_guard<std::mutex> lock(memo_mu_);
  if (memo_.size() >= options_.max_local) memo_.clear();
  memo_.emplace(key, d);
  return d;
}

std::string ToolLoop::StoreKeyOf(Api api, const Sha256Digest& prefix,
                                 std::string_view anchor) const {
  // "llm2": keyed by the whole prefix (keys of "llm1", by the last two
  // messages, are no longer read).
  std::string k = "llm2/";
  k.append(ApiName(api));
  k.push_back('/');
  std::string m(prefix.begin(), prefix.end());
  m.push_back('\n');
  m.append(anchor);
  k.append(ToHex(ComputeSha256(m)));
  return k;
}

bool ToolLoop::Save(const ParsedRequest& client, std::string_view client_body,
                    std::string_view scope, std::string_view final_body,
                    const ParsedResponse& final_response,
                    std::string_view hidden, std::string_view replacement,
                    uint32_t replaced_items) {
  const std::string self =
      ResponseFingerprint(client.api, final_body, final_response);
  if (self.empty() || hidden.empty()) return false;
  const uint32_t n = static_cast<uint32_t>(client.message_list.size());
  PrefixDigest prefix(client, client_body, scope,
                      [this](std::string_view raw) { return Canonical(raw); });
  Sha256Digest digest = prefix.At(n);
  std::string text;
  if (n == 0 && !client.messages.empty() &&
      DecodeJsonString(client.messages.In(client_body), &text)) {
    // Responses' `input` as a string: one user message (the client sends
    // it back as one).
    prefix.Extend("{\"role\":\"user\",\"content\":" + json::Quote(text) + "}");
    digest = prefix.At(1);
  }
  const std::string key = StoreKeyOf(client.api, digest, self);
  // Value: the hidden messages, then "\n" and the replacement if any, then
  // "\n" and the count of client items it replaces if not one message (no
  // compact JSON contains a raw newline).
  std::string value(hidden);
  if (!replacement.empty()) {
    value.push_back('\n');
    value.append(replacement);
    if (replaced_items > 0) {
      value.push_back('\n');
      value.append(std::to_string(replaced_items));
    }
  }
  Status st = store_->Put({.ns = kNamespace, .key = key}, SealValue(value),
                          options_.state_ttl_seconds);
  if (!st.ok()) {
    spdlog::warn("tool loop: conversation state not saved: {}", st.message());
    return false;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (saved_.size() >= options_.max_local) saved_.clear();
  saved_[key] = true;
  return true;
}

std::string ToolLoop::Splice(const ParsedRequest& request,
                             const std::string& body, std::string_view scope,
                             SpliceReport* report) {
  BodyEdits edits;
  SplicePlan(request, body, scope, report, &edits);
  if (edits.empty()) return body;
  return edits.Apply(body);
}

void ToolLoop::SplicePlan(const ParsedRequest& request, const std::string& body,
                          std::string_view scope, SpliceReport* report,
                          BodyEdits* edits) {
  // Candidate assistant messages (not the first message: hidden turns
  // always follow a client message).
  std::vector<uint32_t> at;      // the anchor (the visible message)
  std::vector<uint32_t> starts;  // where hidden turns go (before reasoning)
  std::vector<std::string> keys;
  std::vector<std::string> ids(request.message_list.size());
  auto id = [&](uint32_t i) -> const std::string& {
    if (ids[i].empty()) ids[i] = MessageIdentity(request, body, i);
    return ids[i];
  };
  const bool items = request.api == Api::kOpenAiResponses;
  PrefixDigest prefix(request, body, scope,
                      [this](std::string_view raw) { return Canonical(raw); });
  for (uint32_t i = 1; i < request.message_list.size(); ++i) {
    const Message& m = request.message_list[i];
    if (m.role != "assistant" && !(items && m.type == "function_call")) {
      continue;
    }
    if (id(i).empty()) continue;
    // Responses: the response's reasoning items precede its anchor; the
    // hidden turns go before them.
    uint32_t start = i;
    while (items && start > 1 &&
           request.message_list[start - 1].type == "reasoning") {
      --start;
    }
    if (start < 1) continue;
    std::string key = StoreKeyOf(request.api, prefix.At(start), id(i));
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = saved_.find(key);
      // Known to have no hidden turns before it.
      if (it != saved_.end() && !it->second) continue;
    }
    at.push_back(i);
    starts.push_back(start);
    keys.push_back(std::move(key));
  }
  if (at.empty()) return;
  std::vector<std::optional<StoreValue>> found(at.size());
  for (size_t b = 0; b < at.size(); b += kMaxStoreBatch) {
    const size_t e = std::min(at.size(), b + kMaxStoreBatch);
    std::vector<StoreKey> batch;
    for (size_t i = b; i < e; ++i) {
      batch.push_back({.ns = kNamespace, .key = keys[i]});
    }
    auto got = store_->Get(batch);
    if (!got.ok()) {
      ++report->store_errors;
      spdlog::warn("tool loop: conversation state not read: {}",
                   got.status().message());
      continue;
    }
    for (size_t i = b; i < e; ++i) found[i] = std::move((*got)[i - b]);
  }
  size_t from = 0;
  for (size_t k = 0; k < at.size(); ++k) {
    if (!found[k]) {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = saved_.find(keys[k]);
      if (it != saved_.end() && it->second) {
        ++report->missing;
      } else if (report->store_errors == 0) {
        if (saved_.size() >= options_.max_local) saved_.clear();
        saved_[keys[k]] = false;
      }
      continue;
    }
    std::optional<std::string_view> sealed = UnsealValue(*found[k]->bytes);
    if (!sealed) {
      ++report->corrupt;
      spdlog::warn(
          "tool loop: stored conversation state is damaged (check failed); "
          "not spliced");
      continue;
    }
    const std::string_view value = *sealed;
    const Span first = request.message_list[starts[k]].span;
    Span span = request.message_list[at[k]].span;
    const size_t nl = value.find('\n');
    const size_t nl2 = nl == std::string::npos ? nl : value.find('\n', nl + 1);
    if (nl2 != std::string::npos) {
      // The replacement stands for `n` client items (a Responses stream
      // that showed items of hidden rounds); a history without them all
      // is left as sent.
      uint64_t n = 0;
      std::from_chars(value.data() + nl2 + 1, value.data() + value.size(), n);
      const uint64_t last = starts[k] + n - 1;
      bool whole = n > 0 && last >= at[k] && last < request.message_list.size();
      for (uint64_t i = starts[k]; whole && i <= last; ++i) {
        const Message& m = request.message_list[i];
        whole = m.role == "assistant" || m.type == "reasoning" ||
                m.type == "function_call";
      }
      if (!whole) {
        ++report->missing;
        continue;
      }
      span = request.message_list[last].span;
    }
    if (first.begin < from) continue;  // inside an earlier replacement
    std::string text(value.substr(0, nl));
    text.push_back(',');
    if (nl == std::string::npos) {
      from = first.begin;
    } else {
      text.append(
          value.substr(nl + 1, nl2 == std::string::npos ? nl2 : nl2 - nl - 1));
      from = span.end;
    }
    edits->Replace(first.begin, static_cast<uint32_t>(from), std::move(text));
    ++report->spliced;
  }
}

ServeSession::ServeSession(ToolLoop* loop, ParsedRequest client,
                           std::string client_body,
                           const std::string& upstream_body, ToolScopes scope,
                           std::optional<std::string> state_scope,
                           const BodyEdits* edits)
    : loop_(loop),
      client_(std::move(client)),
      client_body_(std::move(client_body)),
      scope_(std::move(scope)),
      state_scope_(state_scope ? std::move(*state_scope) : scope_.credential) {
  // The client's views (wire.h) stay valid after the caller's body is
  // rewritten: they index client_body_, which a moved-in body already is
  // (the proxy's Splice); a copy gets them moved onto it.
  RebaseViews(&client_, client_body_);
  // Where hidden messages go: after the last message of the upstream body.
  const std::string* body = &upstream_body;
  // The upstream body's spans: the client's parse moved through the
  // stages' edits (no second parse), or a parse when the body was
  // rewritten some other way.
  Result<ParsedRequest> up = ParsedRequest{};
  if (edits != nullptr) {
    auto map = [&](Span s) {
      return Span{edits->Map(s.begin), edits->Map(s.end)};
    };
    up->messages = map(client_.messages);
    if (!client_.message_list.empty()) {
      up->message_list.push_back(
          {.span = map(client_.message_list.back().span)});
    }
    if (up->messages.end > body->size()) return;
  } else {
    up = ParseRequest(client_.api, *body);
    if (!up.ok()) return;
  }
  uint32_t at = 0;
  if (!up->message_list.empty()) {
    at = up->message_list.back().span.end;
  } else if (!up->messages.empty() && (*body)[up->messages.begin] == '[') {
    at = up->messages.begin + 1;
  } else if (!up->messages.empty() && (*body)[up->messages.begin] == '"') {
    // Responses' `input` as a string: hidden rounds send it as the one
    // user message it stands for, followed by the hidden items.
    const Span in = up->messages;
    prefix_ = body->substr(0, in.begin) +
              "[{\"role\":\"user\",\"content\":" + std::string(in.In(*body)) +
              "}";
    suffix_ = "]" + body->substr(in.end);
    comma_ = true;
    usable_ = true;
    return;
  } else {
    return;
  }
  prefix_ = body->substr(0, at);
  suffix_ = body->substr(at);
  // With messages before, the hidden ones are preceded by a comma.
  comma_ = !up->message_list.empty();
  usable_ = true;
}

std::optional<std::string> ServeSession::OnResponse(
    std::string_view body, const ParsedResponse& response) {
  AddUsage(body, &usage_);
  if (!usable_ || rounds_ >= loop_->options().max_rounds) return std::nullopt;
  std::optional<ServedTurn> turn = loop_->TryServe(
      client_.api, body, response, scope_, state_scope_, rules_);
  if (!turn) return std::nullopt;
  if (!hidden_.empty()) hidden_.push_back(',');
  hidden_ += turn->messages;
  served_calls_ += turn->calls;
  latency_saved_ += turn->latency_saved_seconds;
  for (std::string& t : turn->tools) tools_.push_back(std::move(t));
  ++rounds_;
  std::string next;
  next.reserve(prefix_.size() + hidden_.size() + suffix_.size() + 1);
  next.append(prefix_);
  if (comma_) next.push_back(',');
  next.append(hidden_);
  next.append(suffix_);
  return next;
}

void ServeSession::FinishStream(std::string_view round_body,
                                std::string_view client_body,
                                bool relayed_earlier) {
  if (hidden_.empty()) return;
  Result<ParsedResponse> shown = ParseResponse(client_.api, client_body);
  if (!shown.ok()) return;
  std::string replacement;
  uint32_t items = 0;
  if (relayed_earlier) {
    replacement = AssistantMessage(client_.api, round_body);
    if (replacement.empty()) return;
    if (client_.api == Api::kOpenAiResponses) {
      // The client holds every item it was shown, each its own input item.
      nlohmann::ordered_json j = Parse(client_body);
      if (!j.is_object() || !j.contains("output") || !j["output"].is_array() ||
          j["output"].empty()) {
        return;
      }
      items = static_cast<uint32_t>(j["output"].size());
    }
  }
  saved_ = loop_->Save(client_, client_body_, state_scope_, client_body, *shown,
                       hidden_, replacement, items);
}

std::string ServeSession::Finish(std::string_view body,
                                 const ParsedResponse& response) {
  if (hidden_.empty()) return std::string(body);
  saved_ =
      loop_->Save(client_, client_body_, state_scope_, body, response, hidden_);
  return WithUsage(body, usage_);
}

}  // namespace toolcache::llm
