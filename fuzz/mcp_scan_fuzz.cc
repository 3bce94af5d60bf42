// Fuzz target: the MCP proxy's line framing and raw JSON-RPC scanning
// (src/mcp/json_scan.cc, line_reader.h).
//
// Input: a limit byte, then '\xff'-separated parts: a byte stream and the
// sizes to cut it into. Invariants (besides no crash, no sanitizer report):
//   * LineReader hands out the same lines and the same over-long line sizes
//     however the stream is cut, and never a line above its limit;
//   * IdSniffer recovers the same id and member flags however a line is cut;
//   * a line ScanMessage accepts is JSON nlohmann accepts, and its id,
//     method and params spans hold the values nlohmann finds there;
//   * NormalizeId is idempotent; RepairUtf8 yields valid UTF-8 and leaves
//     valid UTF-8 alone.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_input.h"
#include "src/mcp/json_scan.h"
#include "src/mcp/line_reader.h"

namespace {

using namespace toolcache::mcp;  // NOLINT(build/namespaces): a test file.

struct Framed {
  std::vector<std::string> lines;
  std::vector<uint64_t> long_totals;
  std::string long_bytes;  // every byte handed to on_long, in order
  bool operator==(const Framed&) const = default;
};

Framed Frame(const std::vector<std::string_view>& pieces, uint64_t limit) {
  LineReader reader(limit);
  Framed f;
  auto on_line = [&](std::string_view line) {
    FUZZ_CHECK(line.size() <= limit, "LineReader handed out an over-long line");
    f.lines.emplace_back(line);
  };
  auto on_long = [&](std::string_view part, bool end, uint64_t total) {
    f.long_bytes.append(part);
    if (end) f.long_totals.push_back(total);
  };
  for (std::string_view p : pieces) reader.Feed(p, on_line, on_long);
  reader.Finish(on_line, on_long);
  return f;
}

struct Sniffed {
  std::string id;
  bool object, method, result, error;
  bool operator==(const Sniffed&) const = default;
};

Sniffed Sniff(const std::vector<std::string_view>& pieces) {
  IdSniffer s;
  for (std::string_view p : pieces) s.Feed(p);
  return {s.id(), s.is_object(), s.has_method(), s.has_result(), s.has_error()};
}

bool HasSurrogateEscape(std::string_view line) {
  for (size_t i = line.find("\\u"); i != std::string_view::npos;
       i = line.find("\\u", i + 1)) {
    if (i + 3 < line.size() && (line[i + 2] == 'd' || line[i + 2] == 'D') &&
        std::string_view("89abcdefABCDEF").find(line[i + 3]) !=
            std::string_view::npos) {
      return true;
    }
  }
  return false;
}

bool NumberOverflows(std::string_view line) {
  try {
    const nlohmann::json parsed = nlohmann::json::parse(line);
    return parsed.is_discarded();
  } catch (const nlohmann::json::out_of_range&) {
    return true;
  } catch (const nlohmann::json::exception&) {
  }
  return false;
}

void CheckLine(std::string_view line, std::string_view sizes) {
  FUZZ_CHECK(Sniff(toolcache::fuzz::Chunks(line, sizes)) == Sniff({line}),
             "IdSniffer depends on how the line is cut");
  const std::string repaired = RepairUtf8(line);
  FUZZ_CHECK(IsValidUtf8(repaired), "RepairUtf8 left invalid UTF-8");
  if (IsValidUtf8(line)) {
    FUZZ_CHECK(repaired == line, "RepairUtf8 altered valid UTF-8");
  }
  auto m = ScanMessage(line);
  if (!m.ok()) return;
  const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  // RFC 8259 lets a \u escape name a lone surrogate; nlohmann refuses it.
  if (j.is_discarded() && HasSurrogateEscape(line)) return;
  // RFC 8259 sets no range on numbers (9e999); nlohmann refuses non-finite.
  if (j.is_discarded() && NumberOverflows(line)) return;
  FUZZ_CHECK(!j.is_discarded(), "ScanMessage accepts what nlohmann rejects");
  FUZZ_CHECK(m->is_object == j.is_object(), "object or not");
  if (!j.is_object()) return;
  auto same = [&](std::string_view span, const char* name) {
    if (!j.contains(name)) {
      FUZZ_CHECK(span.empty(), "a span for an absent member");
      return;
    }
    const nlohmann::json v = nlohmann::json::parse(span, nullptr, false);
    FUZZ_CHECK(!v.is_discarded() && v == j[name],
               "a member span holds another value");
  };
  same(m->id, "id");
  if (j.contains("method") && !j["method"].is_string()) {
    FUZZ_CHECK(m->method.empty(), "a non-string method taken as a method");
  } else {
    same(m->method, "method");
  }
  same(m->params, "params");
  same(m->result, "result");
  same(m->error, "error");
  if (!m->method.empty() && j["method"].is_string()) {
    FUZZ_CHECK(m->method_name == j["method"].get<std::string>(),
               "method name decoded wrongly");
  }
  if (!m->id.empty()) {
    const std::string nid = NormalizeId(m->id);
    FUZZ_CHECK(NormalizeId(nid) == nid, "NormalizeId is not idempotent");
    (void)ClassifyId(m->id);
  }
  if (!m->params.empty()) {
    size_t members = 0;
    ForEachMember(m->params, [&](const std::string&, std::string_view value) {
      ++members;
      FUZZ_CHECK(!value.empty(), "an empty member value");
    });
    if (j["params"].is_object()) {
      FUZZ_CHECK(members >= j["params"].size(), "members lost");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  toolcache::fuzz::FuzzInput in(data, size);
  const uint64_t limit = 1 + in.Byte() % 128;
  const std::string_view stream = in.Part();
  const std::string_view sizes = in.Part();
  const Framed whole = Frame({stream}, limit);
  FUZZ_CHECK(Frame(toolcache::fuzz::Chunks(stream, sizes), limit) == whole,
             "LineReader depends on how the stream is cut");
  // Every line of the stream, unlimited, through the scanners.
  const Framed lines = Frame({stream}, uint64_t{1} << 30);
  for (const std::string& line : lines.lines) CheckLine(line, sizes);
  return 0;
}
