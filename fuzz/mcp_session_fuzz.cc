// Fuzz target: the MCP proxy's session state machine (src/mcp/session.cc)
// between a fuzzed client and a model server, over a real ToolCache.
//
// The input is a program: each step a byte choosing an action, then its
// operands:
//   client line     from templates (ids that collide after NormalizeId,
//                   tools/call of read-only, write and destructive tools
//                   with equal and different arguments, cancellations,
//                   initialize, roots changes, tasks, answers to the
//                   server's requests) or raw fuzz bytes;
//   client line too long (OnClientLineTooLong with the sniffed bytes);
//   server answer   the model server answers one of the requests it holds:
//                   a result, an error, invalid UTF-8 in the result, or a
//                   malformed line carrying the request's id;
//   server message  notifications (tools/list_changed, resources/updated,
//                   ...), requests (roots/list) or raw fuzz bytes that are
//                   not responses (a peer answering what nobody asked is
//                   outside the model);
//   time passes.
// At the end the server answers everything it still holds (answers may
// make the session send more) and then goes away (FailInFlight).
// Choice: at most kMaxSteps (64) steps per input. Every step runs the
// engine (a tools/call is classified, keyed and looked up: about 0.1-0.2 ms
// under ASan+UBSan), so a few long programs would dominate the time; the
// state machine's interleavings need a handful of requests, and fuzz/run.sh
// caps this target's inputs at 512 bytes for the same reason.
//
// The model server answers tools/call with the text
// "srv-result:<tool>#<key digest of the arguments>", so a client can tell
// which call an answer belongs to. Invariants:
//   * every client request line (and every rejected line the sniffer saw
//     a request in) gets exactly one answer with its own id (at most one
//     when the client cancelled it), and nothing is left in flight;
//   * every answer carrying a tool result carries the result of a call the
//     client made under that id (no answer served to the wrong request);
//   * no call of the write or destructive tool is answered without reaching
//     the server (COMMAND calls are never served from cache).
#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_input.h"
#include "src/mcp/json_scan.h"
#include "src/mcp/session.h"
#include "toolcache/canonical_json.h"
#include "toolcache/clock.h"
#include "toolcache/config.h"
#include "toolcache/tool_cache.h"

namespace {

using namespace toolcache::mcp;  // NOLINT(build/namespaces): a test file.

constexpr const char* kIds[] = {"1",
                                "2",
                                R"("a")",
                                R"("b")",
                                "1.0",
                                "1e0",
                                R"("toolcache-id-1")",
                                R"("toolcache-refresh-1")",
                                "null",
                                "9007199254740993",
                                "9007199254740992",
                                R"({"x":1})",
                                R"("\u0061")",
                                "-0",
                                "3",
                                R"("s1")"};
constexpr const char* kTools[] = {"read_file", "write_file", "delete_file",
                                  "search", "unknown_tool"};
constexpr const char* kArgs[] = {
    R"({"path":"/a"})",
    R"({"path":"/b"})",
    R"({ "path" : "/a" , "_meta" : {"progressToken":1} })",
    R"({"path":"\/a"})",
    R"({"n":1.0})",
    R"({"n":1})",
    R"({"n":9007199254740993})",
    R"({"q":"x","limit":10})",
    R"([1])",
    R"({})"};
constexpr const char* kToolsResult =
    R"({"tools":[)"
    R"({"name":"read_file","annotations":{"readOnlyHint":true,"openWorldHint":false}},)"
    R"({"name":"write_file","annotations":{"readOnlyHint":false}},)"
    R"({"name":"delete_file","annotations":{"readOnlyHint":false,"destructiveHint":true}},)"
    R"({"name":"search","annotations":{"readOnlyHint":true,"openWorldHint":true}}]})";
constexpr const char* kServerMessages[] = {
    R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})",
    R"({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///a"}})",
    R"({"jsonrpc":"2.0","method":"notifications/resources/list_changed"})",
    R"({"jsonrpc":"2.0","id":"s1","method":"roots/list"})",
    R"({"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{}})",
    R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}})",
    R"({"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t1","status":"completed"}})",
};

constexpr int kMaxSteps = 64;

template <typename T, size_t N>
const T& Pick(const T (&a)[N], uint8_t b) {
  return a[b % N];
}

std::string Line(std::string_view raw) {
  return std::string(raw.substr(0, raw.find('\n')));
}

std::string ComputeResultText(std::string_view tool, std::string_view args) {
  auto key = toolcache::MakeCacheKey("", "srv", tool, args);
  return "srv-result:" + std::string(tool) + "#" +
         (key.ok() ? key->DigestHex() : std::string("bad"));
}

// ComputeResultText, memoized: the templates repeat a few (tool, arguments)
// pairs, and each is keyed (canonicalised and hashed) once per process, not
// at every request and answer. A pure function, so inputs stay independent.
const std::string& ResultText(std::string_view tool, std::string_view args) {
  static std::unordered_map<std::string, std::string> memo;
  std::string k(tool);
  k += '\0';
  k += args;
  auto it = memo.find(k);
  if (it == memo.end()) {
    if (memo.size() >= 4096) memo.clear();  // raw lines bring new pairs
    it = memo.emplace(std::move(k), ComputeResultText(tool, args)).first;
  }
  return it->second;
}

// FUZZ_TRACE=1 in the environment prints the conversation (to debug a
// violated invariant with the replay runner).
bool Tracing() {
  static const bool on = std::getenv("FUZZ_TRACE") != nullptr;
  return on;
}
void Trace(const char* dir, std::string_view line) {
  if (Tracing()) {
    std::fprintf(stderr, "%s %.*s\n", dir, static_cast<int>(line.size()),
                 line.data());
  }
}

class Recorder final : public SessionOutput {
 public:
  void ToClient(std::string_view line) override {
    to_client.emplace_back(line);
  }
  void ToServer(std::string_view line) override {
    to_server.emplace_back(line);
  }
  std::vector<std::string> to_client;
  std::vector<std::string> to_server;
};

// A templated client line and what the harness's bookkeeping needs to know
// of it: what ScanMessage would find in it, known without scanning.
struct ClientLine {
  enum class Kind { kRequest, kCancel, kOther };
  std::string line;
  Kind kind = Kind::kOther;
  std::string id;    // raw id (kRequest) or cancelled requestId (kCancel)
  std::string tool;  // tools/call
  std::string args;  // tools/call arguments (raw)
};

struct Upstream {
  std::string id;  // raw id as the server received it
  std::string method;
  std::string tool;  // tools/call
  std::string args;  // tools/call arguments (raw)
};

class Harness {
 public:
  Harness() {
    toolcache::Config config;
    config.policy = "lru";
    auto made = toolcache::NewToolCache(config, &clock_);
    FUZZ_CHECK(made.ok(), "engine");
    cache_ = std::move(*made);
    session_ =
        std::make_unique<Session>(SessionOptions{.server = "srv", .scope = ""},
                                  cache_.get(), &clock_, &out_);
  }

  // A templated line: the bookkeeping of Client(line) from what the template
  // put in it.
  void Client(const ClientLine& c) {
    if (c.kind == ClientLine::Kind::kRequest) {
      const std::string nid = NormalizeId(c.id);
      ++expected_[nid];
      if (!c.tool.empty()) {
        results_[nid].insert(ResultText(c.tool, c.args));
        if (c.tool == "write_file" || c.tool == "delete_file") ++commands_sent_;
      }
    } else if (c.kind == ClientLine::Kind::kCancel) {
      cancelled_.insert(NormalizeId(c.id));
    }
    Send(c.line);
  }

  // A raw line: the bookkeeping from scanning it.
  void Client(const std::string& line) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) {
      auto m = ScanMessage(line);
      if (m.ok()) {
        if (m->kind() == MessageKind::kRequest) {
          const std::string nid = NormalizeId(m->id);
          ++expected_[nid];
          if (m->method_name == "tools/call") {
            const std::string tool =
                DecodeString(FindMember(m->params, "name"));
            const std::string args(FindMember(m->params, "arguments"));
            results_[nid].insert(ResultText(tool, args));
            if (tool == "write_file" || tool == "delete_file") ++commands_sent_;
          }
        } else if (m->kind() == MessageKind::kNotification &&
                   m->method_name == "notifications/cancelled") {
          cancelled_.insert(NormalizeId(FindMember(m->params, "requestId")));
        }
      } else {
        IdSniffer s;
        s.Feed(line);
        ++expected_[s.is_request() ? NormalizeId(s.id()) : "null"];
      }
    }
    Send(line);
  }

  void Send(const std::string& line) {
    Trace("client   >", line);
    session_->OnClientLine(line);
    Drain();
  }

  void ClientTooLong(const std::string& line) {
    IdSniffer s;
    s.Feed(line);
    ++expected_[s.is_request() ? NormalizeId(s.id()) : "null"];
    Trace("client  >>", line);
    session_->OnClientLineTooLong(s, line.size() + (1 << 20), 1 << 20);
    Drain();
  }

  // The server answers the request it holds at `index` in `how`.
  void Answer(size_t index, uint8_t how) {
    if (held_.empty()) return;
    const Upstream u = held_[index % held_.size()];
    held_.erase(held_.begin() + static_cast<ptrdiff_t>(index % held_.size()));
    std::string result = "{}";
    if (u.method == "tools/list") {
      result = kToolsResult;
    } else if (u.method == "tools/call") {
      result = R"({"content":[{"type":"text","text":")" +
               ResultText(u.tool, u.args) + R"("}]})";
    }
    const std::string head = R"({"jsonrpc":"2.0","id":)" + u.id;
    std::string line;
    switch (how % 8) {
      case 0:
        line = head + R"(,"error":{"code":-32000,"message":"no"}})";
        break;
      case 1:  // invalid UTF-8 in the result
        line =
            head + R"(,"result":{"content":[],"x":")" + "\xC3\x28" + R"("}})";
        break;
      case 2:  // malformed, but the id can be sniffed
        line = head + R"(,"result":{"content":[)";
        break;
      default:
        line = head + R"(,"result":)" + result + "}";
        break;
    }
    Trace("server   <", line);
    session_->OnServerLine(line);
    Drain();
  }

  void Server(const std::string& line) {
    auto m = ScanMessage(line);
    if (m.ok() && m->kind() == MessageKind::kResponse) return;
    if (!m.ok()) {
      IdSniffer s;
      s.Feed(line);
      if (s.is_response()) return;
    }
    // Outside the model: a server that changes the tools' annotations.
    if (line.find("annotations") != std::string::npos ||
        line.find("_file") != std::string::npos) {
      return;
    }
    Trace("server  <<", line);
    session_->OnServerLine(line);
    Drain();
  }

  void Advance(uint8_t b) { clock_.Advance(b / 16.0); }

  void Finish() {
    for (int answers = 0; answers < 4096 && !held_.empty(); ++answers) {
      Answer(0, 3);
    }
    FUZZ_CHECK(held_.empty(), "the session keeps sending the server requests");
    session_->FailInFlight("the fuzz server went away");
    Drain();
    FUZZ_CHECK(session_->in_flight() == 0, "requests left in flight");
    for (const auto& [nid, want] : expected_) {
      const uint64_t got = answered_.count(nid) ? answered_[nid] : 0;
      if (got != want && Tracing()) {
        std::fprintf(stderr, "id %s: %llu requests, %llu answers\n",
                     nid.c_str(), static_cast<unsigned long long>(want),
                     static_cast<unsigned long long>(got));
      }
      if (cancelled_.count(nid)) {
        FUZZ_CHECK(got <= want, "a cancelled request answered twice");
      } else {
        FUZZ_CHECK(got == want, "a request not answered exactly once");
      }
    }
    for (const auto& [nid, got] : answered_) {
      FUZZ_CHECK(expected_.count(nid), "an answer to no request");
    }
    FUZZ_CHECK(commands_reached_ >= commands_sent_,
               "a write or destructive call did not reach the server");
  }

 private:
  void Drain() {
    for (const std::string& line : out_.to_server) {
      Trace("to server", line);
      auto m = ScanMessage(line);
      if (!m.ok() || m->kind() != MessageKind::kRequest) continue;
      Upstream u{std::string(m->id), m->method_name, "", ""};
      if (u.method == "tools/call") {
        u.tool = DecodeString(FindMember(m->params, "name"));
        u.args = std::string(FindMember(m->params, "arguments"));
        if (u.tool == "write_file" || u.tool == "delete_file") {
          ++commands_reached_;
        }
      }
      held_.push_back(std::move(u));
    }
    out_.to_server.clear();
    for (const std::string& line : out_.to_client) {
      Trace("to client", line);
      auto m = ScanMessage(line);
      FUZZ_CHECK(m.ok(), "the client got a malformed line");
      if (m->kind() != MessageKind::kResponse) continue;
      const std::string nid = NormalizeId(m->id);
      ++answered_[nid];
      const size_t at = line.find("srv-result:");
      if (at == std::string::npos) continue;
      const std::string text = line.substr(at, line.find('"', at) - at);
      FUZZ_CHECK(results_.count(nid) && results_[nid].count(text),
                 "an answer carries the result of another call");
      FUZZ_CHECK(text.rfind("srv-result:write_file#", 0) != 0 ||
                     line.find("toolcache/cache") == std::string::npos,
                 "a write call served from cache");
      FUZZ_CHECK(text.rfind("srv-result:delete_file#", 0) != 0 ||
                     line.find("toolcache/cache") == std::string::npos,
                 "a destructive call served from cache");
    }
    out_.to_client.clear();
  }

  toolcache::ManualClock clock_{1000};
  std::unique_ptr<toolcache::ToolCache> cache_;
  Recorder out_;
  std::unique_ptr<Session> session_;
  std::vector<Upstream> held_;
  std::map<std::string, uint64_t> expected_;
  std::map<std::string, uint64_t> answered_;
  std::map<std::string, std::set<std::string>> results_;
  std::set<std::string> cancelled_;
  uint64_t commands_sent_ = 0;
  uint64_t commands_reached_ = 0;
};

ClientLine ClientTemplate(toolcache::fuzz::FuzzInput& in) {
  using Kind = ClientLine::Kind;
  const std::string id = Pick(kIds, in.Byte());
  const std::string head = R"({"jsonrpc":"2.0",)";
  auto request = [&](const std::string& rest) {
    return ClientLine{head + R"("id":)" + id + rest, Kind::kRequest, id};
  };
  switch (in.Byte() % 12) {
    case 0:
    case 1:
    case 2:
    case 3: {
      const std::string tool = Pick(kTools, in.Byte());
      const std::string args = Pick(kArgs, in.Byte());
      ClientLine c = request(R"(,"method":"tools/call","params":{"name":")" +
                             tool + R"(","arguments":)" + args + "}}");
      c.tool = tool;
      c.args = args;
      return c;
    }
    case 4:
      return request(R"(,"method":"tools/list"})");
    case 5:
      return request(
          R"(,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})");
    case 6:
      return {head + R"("method":"notifications/initialized"})"};
    case 7:
      return {
          head +
              R"("method":"notifications/cancelled","params":{"requestId":)" +
              id + "}}",
          Kind::kCancel, id};
    case 8:
      return {head + R"("method":"notifications/roots/list_changed"})"};
    case 9:
      return {head + R"("id":)" + id +
              R"(,"result":{"roots":[{"uri":"file:///r)" +
              std::to_string(in.Byte() % 3) + R"("}]}})"};
    case 10:
      return request(R"(,"method":"tasks/get","params":{"taskId":"t1"}})");
    default:
      return request(R"(,"method":"ping"})");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Logs cost most of the time and say nothing a failed check would not.
  static const bool quiet = [] {
    spdlog::set_level(spdlog::level::off);
    return true;
  }();
  (void)quiet;
  toolcache::fuzz::FuzzInput in(data, size);
  Harness h;
  int steps = 0;
  for (; !in.empty() && steps < kMaxSteps; ++steps) {
    switch (in.Byte() % 8) {
      case 0:
      case 1:
        h.Client(ClientTemplate(in));
        break;
      case 2:
        h.Client(Line(in.Part()));
        break;
      case 3:
        h.ClientTooLong(ClientTemplate(in).line);
        break;
      case 4:
      case 5: {
        const uint8_t index = in.Byte();
        h.Answer(index, in.Byte());
        break;
      }
      case 6: {
        const uint8_t b = in.Byte();
        h.Server(b < 200 ? std::string(Pick(kServerMessages, b))
                         : Line(in.Part()));
        break;
      }
      default:
        h.Advance(in.Byte());
        break;
    }
  }
  if (Tracing()) {
    std::fprintf(stderr, "%d steps%s\n", steps,
                 in.empty() ? "" : " (input left over: capped)");
  }
  h.Finish();
  return 0;
}
