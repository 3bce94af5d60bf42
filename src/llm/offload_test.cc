// Offload against a real (memory) store: previews in the newest turn,
// byte-identical re-sends (memoised, also by a new process on the same
// store), older turns never newly rewritten, the retrieval tool and its
// answers.
#include "src/llm/offload.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace toolcache::llm {
namespace {

using nlohmann::json;

std::string BigText() {
  std::string t;
  for (int i = 0; i < 800; ++i) {
    t += "line " + std::to_string(i) + (i == 437 ? " NEEDLE here" : "") +
         " lorem ipsum dolor sit amet\n";
  }
  return t;
}

// An Anthropic request: user, assistant(tool_use id1), user(result1) and,
// when `second`, assistant(tool_use id2), user(result2).
std::string Request(const std::string& r1, const std::string* r2 = nullptr,
                    bool tools = true) {
  std::string b = R"({"model":"m",)";
  if (tools) {
    b += R"("tools":[{"name":"Read","input_schema":{"type":"object"}}],)";
  }
  b +=
      R"("messages":[{"role":"user","content":"go"},)"
      R"({"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]},)"
      R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":)" +
      json(r1).dump() + "}]}";
  if (r2 != nullptr) {
    b +=
        R"(,{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Read","input":{}}]},)"
        R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":)" +
        json(*r2).dump() + "}]}";
  }
  b += "]}";
  b.reserve(b.size() + 64);
  return b;
}

class OffloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = OpenStore("memory");
    ASSERT_TRUE(s.ok());
    store_ = std::move(*s);
    off_ = std::make_unique<Offloader>(store_.get(), OffloadOptions{});
  }
  std::string Rewrite(Offloader* off, const std::string& body,
                      OffloadReport* rep, const std::string& scope = "s") {
    auto p = ParseRequest(Api::kAnthropicMessages, body);
    EXPECT_TRUE(p.ok()) << p.status().message();
    return off->Rewrite(*p, body, scope, rep);
  }
  std::unique_ptr<Store> store_;
  std::unique_ptr<Offloader> off_;
};

TEST_F(OffloadTest, NewestResultBecomesPreviewAndResendsAreIdentical) {
  const std::string text = BigText();
  OffloadReport rep;
  const std::string out = Rewrite(off_.get(), Request(text), &rep);
  EXPECT_EQ(rep.offloaded, 1u);
  EXPECT_TRUE(rep.tool_added);
  EXPECT_GT(rep.bytes_removed, 20000u);
  json j = json::parse(out);
  ASSERT_EQ(j["tools"].size(), 2u);
  EXPECT_EQ(j["tools"][1]["name"], "toolcache_read");
  const std::string preview = j["messages"][2]["content"][0]["content"];
  const std::string ref = Offloader::RefOf(text);
  EXPECT_NE(preview.find(ref), std::string::npos);
  EXPECT_EQ(preview.find("line 0 "), preview.find("head (bytes 0-") + 24);
  EXPECT_NE(preview.find("line 799 "), std::string::npos);
  EXPECT_EQ(preview.find("line 400 "), std::string::npos);
  EXPECT_LT(out.size(), 4000u);
  // The same request again: the same bytes.
  OffloadReport again;
  EXPECT_EQ(Rewrite(off_.get(), Request(text), &again), out);
  EXPECT_EQ(again.reused, 1u);
  // Next turn: the result is in an older turn now and is replaced by the
  // same bytes; the request extends the previous one byte for byte.
  const std::string small = "small";
  OffloadReport next;
  const std::string out2 = Rewrite(off_.get(), Request(text, &small), &next);
  EXPECT_EQ(next.reused, 1u);
  EXPECT_EQ(out2.substr(0, out.size() - 2), out.substr(0, out.size() - 2));
  // A new process on the same store: still the same bytes.
  Offloader fresh(store_.get(), OffloadOptions{});
  OffloadReport restarted;
  EXPECT_EQ(Rewrite(&fresh, Request(text, &small), &restarted), out2);
  EXPECT_EQ(restarted.reused, 1u);
}

// A shared store can hand back damaged values (another writer, a bad
// disk): a damaged preview is never put into a request and a damaged text
// never answers toolcache_read.
TEST_F(OffloadTest, DamagedStoredValuesAreNeverUsed) {
  const std::string text = BigText();
  OffloadReport rep;
  const std::string out = Rewrite(off_.get(), Request(text), &rep);
  ASSERT_EQ(rep.offloaded, 1u);
  auto plan = std::make_shared<FaultPlan>();
  plan->corrupt_values = true;
  std::unique_ptr<Store> damaged = NewFaultInjectionStore(store_.get(), plan);
  // Newest turn: the preview is made again, the same bytes as before.
  Offloader newest(damaged.get(), OffloadOptions{});
  OffloadReport rn;
  EXPECT_EQ(Rewrite(&newest, Request(text), &rn), out);
  EXPECT_EQ(rn.corrupt, 1u);
  EXPECT_EQ(rn.offloaded, 1u);
  // Older turn: the result goes whole.
  Offloader older(damaged.get(), OffloadOptions{});
  const std::string small = "small";
  OffloadReport ro;
  json j = json::parse(Rewrite(&older, Request(text, &small), &ro));
  EXPECT_EQ(ro.corrupt, 1u);
  EXPECT_EQ(ro.offloaded, 0u);
  EXPECT_EQ(j["messages"][2]["content"][0]["content"], text);
  // toolcache_read: a clear message instead of damaged bytes; the healthy
  // store still answers.
  const std::string read =
      R"({"ref":")" + Offloader::RefOf(text) + R"(","pattern":"NEEDLE"})";
  const std::string refused = older.Answer("s", read);
  EXPECT_NE(refused.find("is damaged"), std::string::npos) << refused;
  EXPECT_EQ(refused.find("NEEDLE here"), std::string::npos);
  EXPECT_EQ(off_->Answer("s", read).find("438: line 437 NEEDLE here"), 0u);
}

TEST_F(OffloadTest, OlderTurnsAreNeverNewlyRewritten) {
  const std::string text = BigText();
  const std::string small = "small";
  OffloadReport rep;
  const std::string body = Request(text, &small);
  const std::string out = Rewrite(off_.get(), body, &rep);
  EXPECT_EQ(rep.offloaded, 0u);
  // Only the tool was added: the big older result is untouched.
  EXPECT_NE(out.find(json(text).dump()), std::string::npos);
}

// The same text under another call id in an older turn (e.g. a result the
// tool loop served whole in a hidden turn) is not replaced because an
// equal result was offloaded elsewhere: the upstream saw it whole.
TEST_F(OffloadTest, MemoIsPerCallNotPerText) {
  const std::string text = BigText();
  OffloadReport rep;
  Rewrite(off_.get(), Request(text), &rep);
  ASSERT_EQ(rep.offloaded, 1u);
  std::string body = Request(text, &text);
  // Make the first (older) result answer another call: t9.
  for (size_t at; (at = body.find("\"t1\"")) != std::string::npos;) {
    body.replace(at, 4, "\"t9\"");
  }
  auto p = ParseRequest(Api::kAnthropicMessages, body);
  ASSERT_TRUE(p.ok());
  OffloadReport next;
  const std::string out = off_->Rewrite(*p, body, "s", &next);
  // The older t9 result stays whole; the newest (t2) is offloaded.
  EXPECT_EQ(next.reused, 0u);
  EXPECT_EQ(next.offloaded, 1u);
  EXPECT_NE(out.find(json(text).dump()), std::string::npos);
}

TEST_F(OffloadTest, SmallResultsAndNoToolList) {
  OffloadReport rep;
  const std::string body = Request("short", nullptr, /*tools=*/false);
  EXPECT_EQ(Rewrite(off_.get(), body, &rep), body);
  EXPECT_FALSE(rep.tool_added);
  EXPECT_EQ(rep.offloaded, 0u);
}

// Responses: the flat function tool with "strict": false (Responses
// defaults to strict), and a function_call_output's output offloaded
// whether it is a string or a list of input_text parts.
TEST_F(OffloadTest, ResponsesToolIsFlatAndNotStrictAndOutputsAreOffloaded) {
  const std::string text = BigText();
  const json parts =
      json::array({{{"type", "input_text"}, {"text", text.substr(0, 9000)}},
                   {{"type", "input_text"}, {"text", text.substr(9000)}}});
  for (const json& output : {json(text), parts}) {
    SCOPED_TRACE(output.is_string() ? "string" : "input_text parts");
    const std::string body =
        R"({"model":"m","tools":[{"type":"function","name":"Read",)"
        R"("parameters":{"type":"object"}}],"input":[)"
        R"({"role":"user","content":"go"},)"
        R"({"type":"function_call","call_id":"c1","name":"Read",)"
        R"("arguments":"{}"},)"
        R"({"type":"function_call_output","call_id":"c1","output":)" +
        output.dump() + "}]}";
    auto p = ParseRequest(Api::kOpenAiResponses, body);
    ASSERT_TRUE(p.ok()) << p.status().message();
    Offloader off(store_.get(), OffloadOptions{});
    OffloadReport rep;
    const json j = json::parse(off.Rewrite(*p, body, "s", &rep));
    EXPECT_EQ(rep.offloaded, 1u);
    ASSERT_EQ(j["tools"].size(), 2u);
    const json& tool = j["tools"][1];
    EXPECT_EQ(tool["type"], "function");
    EXPECT_EQ(tool["name"], "toolcache_read");
    EXPECT_EQ(tool["strict"], false);
    EXPECT_EQ(tool["parameters"]["required"], json::array({"ref"}));
    EXPECT_FALSE(tool.contains("function"));
    const json& out = j["input"][2]["output"];
    ASSERT_TRUE(out.is_string());
    const std::string preview = out;
    // The parts are joined by a newline: the reference is of that text.
    const std::string whole =
        output.is_string() ? text
                           : text.substr(0, 9000) + "\n" + text.substr(9000);
    EXPECT_NE(preview.find(Offloader::RefOf(whole)), std::string::npos);
    EXPECT_LT(preview.size(), 3000u);
  }
}

TEST_F(OffloadTest, RetrievalReadsRangesAndPatternsInScope) {
  const std::string text = BigText();
  OffloadReport rep;
  Rewrite(off_.get(), Request(text), &rep);
  const std::string ref = Offloader::RefOf(text);
  std::string range =
      off_->Answer("s", R"({"ref":")" + ref + R"(","offset":10,"length":20})");
  EXPECT_EQ(range, "[bytes 10-30 of " + std::to_string(text.size()) + "]\n" +
                       text.substr(10, 20));
  std::string grep =
      off_->Answer("s", R"({"ref":")" + ref + R"(","pattern":"NEEDLE"})");
  EXPECT_EQ(grep, "438: line 437 NEEDLE here lorem ipsum dolor sit amet\n");
  // The pattern is literal text, never a regular expression: regex syntax
  // matches nothing here, and a pathological pattern costs one scan.
  EXPECT_NE(off_->Answer("s", R"({"ref":")" + ref + R"(","pattern":"NEED+LE"})")
                .find("no line matches"),
            std::string::npos);
  EXPECT_NE(
      off_->Answer("s", R"({"ref":")" + ref + R"(","pattern":"((a*)*)*b"})")
          .find("no line matches"),
      std::string::npos);
  // An empty pattern (what a model filling every parameter sends) is no
  // pattern: the byte range is read, not every line.
  EXPECT_EQ(off_->Answer("s", R"({"ref":")" + ref +
                                  R"(","offset":10,"length":20,"pattern":""})"),
            range);
  EXPECT_NE(off_->Answer("other", R"({"ref":")" + ref + R"("})")
                .find("unknown or expired"),
            std::string::npos);
  EXPECT_NE(off_->Answer("s", "[1]").find("give"), std::string::npos);
}

}  // namespace
}  // namespace toolcache::llm
