// Differential test of llm::ParseRequest (issue 32, parseF): its verdict
// (accepted, or the refusal's message) and everything it observed (every
// field of ParsedRequest: strings, spans, indexes, flags) over the
// `llm_wire` fuzz corpus and 4,000 generated bodies of the three APIs,
// most with one error planted in a random value (a bad escape, a lone
// surrogate, a malformed number or literal, a raw control character,
// invalid UTF-8, a missing or extra comma, an unclosed bracket), often in
// a value the walk skips (max_tokens, metadata, text content, a tool_use's
// input, a reasoning item). Each input's digest (FNV-1a of the verdict and
// the fields) is compared with src/llm/testdata/wire_verdicts.golden,
// written by the parser as it was before the walk was cut (main
// 8fb2e14f): the cheaper walk must refuse exactly what the old one refused
// and observe the same results. Regenerated once since, in session 14
// (scalars read as spans are consumed, FewerInvalidBodiesAreAccepted
// below): 124 bodies accepted before are refused, every one of them
// invalid JSON (nlohmann::json::accept), 26 refused bodies name another
// place, and no accepted body's observations changed. Regenerate (only
// when a change of verdict is intended, and say so in the commit) with
//   TOOLCACHE_WRITE_WIRE_GOLDEN=1 build/src/llm/toolcache_llm_test
//     --gtest_filter='WireDifferential.*'   (one command line)
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "src/llm/wire.h"

namespace toolcache::llm {
namespace {

const char kGolden[] =
    TOOLCACHE_SOURCE_DIR "/src/llm/testdata/wire_verdicts.golden";

uint64_t Fnv(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

void Put(std::ostringstream& o, std::string_view s) {
  o << s.size() << ':' << s << ';';
}
void Put(std::ostringstream& o, const Span& s) {
  o << s.begin << '-' << s.end << ';';
}

// Everything ParseRequest returns, as text.
std::string Describe(const Result<ParsedRequest>& r) {
  std::ostringstream o;
  if (!r.ok()) {
    o << "refused:" << r.status().message();
    return o.str();
  }
  o << "ok:" << static_cast<int>(r->api) << r->stream << r->conversation << ';';
  Put(o, r->model);
  Put(o, r->previous_response_id);
  for (const Span& s : {r->model_span, r->system, r->tools, r->tool_choice,
                        r->thinking, r->messages}) {
    Put(o, s);
  }
  o << "defs" << r->tool_defs.size() << ';';
  for (const ToolDef& d : r->tool_defs) {
    Put(o, d.name);
    Put(o, d.span);
    Put(o, d.description);
    Put(o, d.schema);
  }
  o << "msgs" << r->message_list.size() << ';';
  for (const Message& m : r->message_list) {
    Put(o, m.span);
    Put(o, m.content);
    Put(o, m.role);
    Put(o, m.type);
  }
  o << "uses" << r->tool_uses.size() << ';';
  for (const RequestToolUse& u : r->tool_uses) {
    Put(o, u.id);
    Put(o, u.name);
    Put(o, u.arguments);
    Put(o, u.span);
    // 0: the choice field responses have (requests never had another).
    o << u.message << ',' << 0 << ',' << u.function << ';';
  }
  o << "results" << r->tool_results.size() << ';';
  for (const ToolResult& t : r->tool_results) {
    Put(o, t.id);
    Put(o, t.span);
    Put(o, t.content);
    o << t.is_error << ',' << t.message << ';';
  }
  o << "turn" << r->turn_begin;
  return o.str();
}

// A deterministic generator (mt19937's raw outputs are fixed by the
// standard; no distribution objects, whose results are not).
class Gen {
 public:
  explicit Gen(uint32_t seed) : rng_(seed) {}
  uint32_t Next(uint32_t n) { return static_cast<uint32_t>(rng_() % n); }
  bool Chance(uint32_t percent) { return Next(100) < percent; }

  // The body of request `api`, with the scalar number `plant` (counted in
  // emission order) replaced by a malformed one, and with a structural
  // error at the end when `structural`.
  std::string Body(int api, int plant) {
    out_.clear();
    scalars_ = 0;
    plant_ = plant;
    out_ += '{';
    Key("model");
    Str("claude-x");
    out_ += ',';
    Key("max_tokens");
    Num();
    if (Chance(50)) {
      out_ += ',';
      Key("metadata");
      Any(2);
    }
    if (Chance(50)) {
      out_ += ',';
      Key("stream");
      Lit();
    }
    if (Chance(40)) {
      out_ += ',';
      Key(api == 2 ? "instructions" : "system");
      if (Chance(50)) {
        Str("be terse");
      } else {
        out_ += '[';
        Block("text");
        out_ += ']';
      }
    }
    if (Chance(60)) {
      out_ += ',';
      Key("tools");
      out_ += '[';
      const int n = 1 + Next(3);
      for (int i = 0; i < n; ++i) {
        if (i) out_ += ',';
        out_ += '{';
        if (api == 1) {
          Key("type");
          Str("function");
          out_ += ',';
          Key("function");
          out_ += '{';
        }
        Strs({{"name", "Tool" + std::to_string(i)},
              {"description", "does things"}});
        out_ += ',';
        Key(api == 0 ? "input_schema" : "parameters");
        Any(2);
        if (api == 1) out_ += '}';
        out_ += '}';
      }
      out_ += ']';
    }
    if (api == 2 && Chance(20)) {
      out_ += ',';
      Key("previous_response_id");
      Str("resp_1");
    }
    out_ += ',';
    Key(api == 2 ? "input" : "messages");
    out_ += '[';
    const int n = 1 + Next(6);
    for (int i = 0; i < n; ++i) {
      if (i) out_ += ',';
      if (api == 0) {
        AnthropicMessage(i);
      } else if (api == 1) {
        ChatMessage(i);
      } else {
        ResponsesItem(i);
      }
    }
    out_ += ']';
    if (Chance(30)) {
      out_ += ',';
      Key("temperature");
      Num();
    }
    out_ += '}';
    Structural();
    return out_;
  }

 private:
  void Key(std::string_view k) {
    // Sometimes a key spelled with an escape ("ty\u0070e").
    if (k.size() > 2 && Chance(3)) {
      out_ += '"';
      out_ += k.substr(0, 2);
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x",
                    static_cast<unsigned char>(k[2]));
      out_ += buf;
      out_ += k.substr(3);
      out_ += "\":";
      return;
    }
    out_ += '"';
    out_ += k;
    out_ += "\":";
  }
  // True when this scalar is the one to spoil (then it was written).
  bool Planted() {
    if (scalars_++ != plant_) return false;
    static constexpr std::string_view kBad[] = {"\"bad\\lescape\"",
                                                "\"\\u12\"",
                                                "\"\\ud800\"",
                                                "\"\\ud800\\u0041\"",
                                                "\"tab\x01here\"",
                                                "\"\xff\xfe\"",
                                                "\"\xc3\"",
                                                "6x4",
                                                "-",
                                                "01",
                                                "1.",
                                                "1e",
                                                "tru",
                                                "nul",
                                                "falsey",
                                                "\"unterminated",
                                                "1,",
                                                "]",
                                                "{",
                                                "\"a\" \"b\"",
                                                "+1",
                                                "NaN",
                                                "\"\\\"",
                                                "\"\\x41\""};
    out_ += kBad[Next(std::size(kBad))];
    return true;
  }
  void Str(std::string_view s) {
    if (Planted()) return;
    out_ += '"';
    out_ += s;
    switch (Next(8)) {
      case 0:
        out_ += "\\n\\\"q\\\"";
        break;
      case 1:
        out_ += "\\u00e9\\ud83d\\ude00";
        break;
      case 2:
        out_ += "\\\\";
        break;
      default:
        break;
    }
    out_ += '"';
  }
  // Members that are all strings, "k1":"v1","k2":"v2",...: Key and Str for
  // each, in order (the same draws as writing them out one by one, so long
  // as computing a value draws nothing: the values are all computed first).
  void Strs(std::initializer_list<std::pair<std::string_view, std::string_view>>
                members) {
    bool first = true;
    for (const auto& [k, v] : members) {
      if (!first) out_ += ',';
      first = false;
      Key(k);
      Str(v);
    }
  }
  void Num() {
    if (Planted()) return;
    static constexpr std::string_view kNums[] = {"64", "-1.5e3", "0", "1024",
                                                 "3.25"};
    out_ += kNums[Next(std::size(kNums))];
  }
  void Lit() {
    if (Planted()) return;
    static constexpr std::string_view kLits[] = {"true", "false", "null"};
    out_ += kLits[Next(std::size(kLits))];
  }
  void Any(int depth) {
    const uint32_t k = depth > 0 ? Next(5) : Next(3);
    if (k == 0) return Str("v");
    if (k == 1) return Num();
    if (k == 2) return Lit();
    if (k == 3) {
      out_ += '{';
      const int n = Next(3);
      for (int i = 0; i < n; ++i) {
        if (i) out_ += ',';
        Key(i == 0 ? "type" : "k" + std::to_string(i));
        Any(depth - 1);
      }
      out_ += '}';
      return;
    }
    out_ += '[';
    const int n = Next(3);
    for (int i = 0; i < n; ++i) {
      if (i) out_ += ',';
      Any(depth - 1);
    }
    out_ += ']';
  }
  void Block(std::string_view type) {
    out_ += '{';
    Strs({{"type", type}, {"text", "some text"}});
    if (Chance(20)) {
      out_ += ',';
      Key("cache_control");
      Any(1);
    }
    out_ += '}';
  }
  std::string Id(int i) { return "call_" + std::to_string(i); }
  void AnthropicMessage(int i) {
    out_ += '{';
    const bool assistant = i % 2 == 1;
    Key("role");
    Str(assistant ? "assistant" : "user");
    out_ += ',';
    Key("content");
    if (Chance(30)) {
      Str("plain text content");
    } else {
      out_ += '[';
      const int n = 1 + Next(3);
      for (int b = 0; b < n; ++b) {
        if (b) out_ += ',';
        if (Chance(40)) {
          Block("text");
        } else if (assistant) {
          out_ += '{';
          Strs(
              {{"type", "tool_use"}, {"id", Id(i * 10 + b)}, {"name", "Read"}});
          out_ += ',';
          Key("input");
          out_ += '{';
          Key("file_path");
          Str("/a.txt");
          if (Chance(50)) {
            out_ += ',';
            Key("opts");
            Any(2);
          }
          out_ += '}';
          out_ += '}';
        } else {
          out_ += '{';
          Strs(
              {{"type", "tool_result"}, {"tool_use_id", Id((i - 1) * 10 + b)}});
          out_ += ',';
          Key("content");
          if (Chance(50)) {
            Str("result text");
          } else {
            out_ += '[';
            Block("text");
            out_ += ']';
          }
          if (Chance(30)) {
            out_ += ',';
            Key("is_error");
            Lit();
          }
          out_ += '}';
        }
      }
      out_ += ']';
    }
    out_ += '}';
  }
  void ChatMessage(int i) {
    out_ += '{';
    const uint32_t kind = Next(4);
    if (kind == 0) {
      Key("role");
      Str("user");
      out_ += ',';
      Key("content");
      if (Chance(50)) {
        Str("hello");
      } else {
        out_ += '[';
        Block("text");
        out_ += ']';
      }
    } else if (kind == 1) {
      Key("role");
      Str("assistant");
      out_ += ',';
      Key("content");
      Lit();
      out_ += ',';
      Key("tool_calls");
      out_ += '[';
      out_ += '{';
      Strs({{"id", Id(i)}, {"type", "function"}});
      out_ += ',';
      Key("function");
      out_ += '{';
      Strs({{"name", "Read"}, {"arguments", "{\\\"file_path\\\":\\\"/a\\\"}"}});
      out_ += "}}]";
    } else if (kind == 2) {
      Strs({{"role", "tool"}, {"tool_call_id", Id(i - 1)}});
      out_ += ',';
      Key("content");
      if (Chance(30)) {
        Str("{\\\"isError\\\":true}");
      } else {
        Str("output");
      }
    } else {
      Strs({{"role", "system"}, {"content", "sys"}, {"name", "n"}});
    }
    out_ += '}';
  }
  void ResponsesItem(int i) {
    out_ += '{';
    const uint32_t kind = Next(6);
    if (kind == 0) {
      // Not Strs: the role's Chance draw must come after the first Key's.
      Key("type");
      Str("message");
      out_ += ',';
      Key("role");
      Str(Chance(50) ? "user" : "assistant");
      out_ += ',';
      Key("content");
      out_ += '[';
      Block("input_text");
      out_ += ']';
    } else if (kind == 1) {
      Strs({{"type", "function_call"},
            {"call_id", Id(i)},
            {"name", "Read"},
            {"arguments", "{}"}});
    } else if (kind == 2) {
      Strs({{"type", "function_call_output"},
            {"call_id", Id(i - 1)},
            {"output", "out"}});
    } else if (kind == 3) {
      Strs({{"type", "custom_tool_call"},
            {"call_id", Id(i)},
            {"name", "apply_patch"},
            {"input", "*** Begin Patch"}});
    } else if (kind == 4) {
      Key("type");
      Str("reasoning");
      out_ += ',';
      Key("summary");
      Any(2);
      out_ += ',';
      Key("encrypted_content");
      Str("abc");
    } else {
      Strs({{"type", "local_shell_call"}, {"call_id", Id(i)}});
      out_ += ',';
      Key("action");
      Any(2);
    }
    out_ += '}';
  }
  void Structural() {
    if (!Chance(10)) return;
    switch (Next(4)) {
      case 0:
        out_ += " x";  // trailing content
        break;
      case 1:
        out_.pop_back();  // unclosed object
        break;
      case 2:
        out_.insert(out_.size() / 2, ",");
        break;
      default:
        out_.insert(out_.size() / 3, "]");
        break;
    }
  }

  std::mt19937 rng_;
  std::string out_;
  int scalars_ = 0;
  int plant_ = -1;
};

// Calls `fn(name, api, body)` for every input: the llm_wire corpus, then
// 4,000 generated bodies (one in eight left whole, the others with one
// scalar spoiled).
template <typename Fn>
void ForEachInput(Fn&& fn) {
  const std::filesystem::path dir =
      std::filesystem::path(TOOLCACHE_SOURCE_DIR) / "fuzz/corpus/llm_wire";
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), {});
    if (data.empty()) continue;
    const Api api = static_cast<Api>(static_cast<uint8_t>(data[0]) % 3);
    std::string body = data.substr(1);
    body = body.substr(0, body.find('\xff'));
    fn("corpus/" + e.path().filename().string(), api, std::move(body));
  }
  for (uint32_t i = 0; i < 4000; ++i) {
    Gen g(i);
    const int api = static_cast<int>(i % 3);
    const int plant = i % 8 == 0 ? -1 : static_cast<int>(g.Next(40));
    fn("gen/" + std::to_string(i), static_cast<Api>(api), g.Body(api, plant));
  }
}

// Name -> digest of every input.
std::map<std::string, std::string> Digests(int* refused) {
  std::map<std::string, std::string> out;
  *refused = 0;
  ForEachInput([&](const std::string& name, Api api, std::string body) {
    body.reserve(body.size() + 64);
    const Result<ParsedRequest> r = ParseRequest(api, body);
    if (!r.ok()) ++*refused;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx",
                  static_cast<unsigned long long>(Fnv(Describe(r))));
    out[name] = std::string(hex) + (r.ok() ? " ok" : " refused");
  });
  return out;
}

TEST(WireDifferential, VerdictsAndObservationsMatchTheGolden) {
  int refused = 0;
  const std::map<std::string, std::string> now = Digests(&refused);
  ASSERT_GT(now.size(), 5000u);
  // The generated set exercises both sides.
  EXPECT_GT(refused, 1000);
  EXPECT_LT(refused, static_cast<int>(now.size()) - 1000);
  if (std::getenv("TOOLCACHE_WRITE_WIRE_GOLDEN") != nullptr) {
    std::ofstream out(kGolden);
    for (const auto& [name, digest] : now) out << name << ' ' << digest << '\n';
    GTEST_SKIP() << "wrote " << kGolden;
  }
  std::ifstream in(kGolden);
  ASSERT_TRUE(in) << kGolden;
  std::map<std::string, std::string> golden;
  std::string line;
  while (std::getline(in, line)) {
    const size_t sp = line.find(' ');
    golden[line.substr(0, sp)] = line.substr(sp + 1);
  }
  EXPECT_EQ(golden.size(), now.size());
  int differ = 0;
  for (const auto& [name, digest] : now) {
    auto it = golden.find(name);
    if (it == golden.end() || it->second != digest) {
      if (++differ <= 20) {
        ADD_FAILURE() << name << ": now " << digest << ", golden "
                      << (it == golden.end() ? "(none)" : it->second);
      }
    }
  }
  EXPECT_EQ(differ, 0) << "inputs whose verdict or observation changed";
}

// session 14: a scalar the walk reads as a span (a message's text, the
// system prompt, a tool result's content, a Responses output) was only
// peeked at, and simdjson On Demand's skip of an unconsumed value counts
// brackets without checking what follows it: `"content":"go":"x"]` as an
// object's last member was accepted and forwarded. Over the same inputs,
// every body the walk accepts and a full RFC 8259 parser (nlohmann)
// refuses is counted: 677 with main f855377e's walk, 553 now (the rest
// are errors inside values the walk never reads, which the provider
// refuses; docs/PROXY.md "Limits and choices"). A ratchet, not a target:
// lower it when the walk checks more.
TEST(WireDifferential, FewerInvalidBodiesAreAccepted) {
  int accepted_invalid = 0;
  int accepted = 0;
  ForEachInput([&](const std::string&, Api api, std::string body) {
    body.reserve(body.size() + 64);
    if (!ParseRequest(api, body).ok()) return;
    ++accepted;
    if (!nlohmann::json::accept(body)) ++accepted_invalid;
  });
  EXPECT_GT(accepted, 2000);
  EXPECT_LE(accepted_invalid, 553);
}

// The shapes behind the change, one per reader of a scalar span.
TEST(WireDifferential, AScalarReadAsASpanIsConsumed) {
  const struct {
    Api api;
    const char* body;
  } kCases[] = {
      {Api::kAnthropicMessages,
       R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":"go":"x"]}]})"},
      {Api::kAnthropicMessages,
       R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":"go"}],"system":"s":"x"]})"},
      {Api::kAnthropicMessages,
       R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"r":"x"]}]}]})"},
      {Api::kOpenAiChat,
       R"({"model":"m","messages":[{"role":"user","content":"go":"x"]}]})"},
      {Api::kOpenAiChat,
       R"({"model":"m","messages":[{"role":"tool","tool_call_id":"c","content":7:"x"]}]})"},
      {Api::kOpenAiResponses,
       R"({"model":"m","input":[{"type":"function_call_output","call_id":"c","output":"o":"x"]}]})"},
      {Api::kOpenAiResponses,
       R"({"model":"m","input":[{"type":"function_call_output","call_id":"c","output":null:"x"]}]})"},
  };
  for (const auto& c : kCases) {
    std::string body = c.body;
    EXPECT_FALSE(ParseRequest(c.api, body).ok()) << body;
    // The same body without the planted ':"x"' and with the right closer
    // is accepted: the refusal is for the planted bytes.
    std::string fixed = body;
    const size_t at = fixed.rfind(":\"x\"]}");
    ASSERT_NE(at, std::string::npos);
    fixed.replace(at, 6, "}");
    EXPECT_TRUE(ParseRequest(c.api, fixed).ok()) << fixed;
  }
}

}  // namespace
}  // namespace toolcache::llm
