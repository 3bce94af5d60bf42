// Invariants:
// - A memoised preview is never recomputed: once the store (or memo_)
//   holds the preview of a raw result, every later request gets exactly
//   those bytes for it.
// - Only results of the newest turn are offloaded for the first time.
// - Memo keys name the occurrence (the call id) and its bytes: the same
//   text under another call id (e.g. a result the tool loop served whole in
//   a hidden turn) is never replaced because this one was.
// - Stored texts and previews are keyed by scope: a reference read from
//   another scope finds nothing.
// - Stored texts and previews are sealed (src/store/sealed.h): a damaged
//   preview is never put into a request and a damaged text never answers
//   toolcache_read.
#include "src/llm/offload.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "src/core/json.h"
#include "src/core/sha256.h"
#include "src/store/sealed.h"

namespace toolcache::llm {
namespace {

using ojson = nlohmann::ordered_json;

// "offl2": values are sealed since version 2 (unsealed "offl" values of
// earlier versions are not read).
constexpr std::string_view kNamespace = "offl2";

std::string JsonString(std::string_view s) { return json::Quote(s); }

// Moves `i` back to the start of a UTF-8 sequence.
size_t Utf8Floor(std::string_view s, size_t i) {
  while (i > 0 && i < s.size() &&
         (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) {
    --i;
  }
  return i;
}

}  // namespace

Offloader::Offloader(Store* store, OffloadOptions options)
    : store_(store), options_(options) {}

bool Offloader::ResultText(std::string_view content, std::string* text) {
  ojson j = ojson::parse(content, nullptr, /*allow_exceptions=*/false);
  if (j.is_string()) {
    *text = j.get<std::string>();
    return true;
  }
  if (!j.is_array()) return false;
  text->clear();
  for (const ojson& b : j) {
    // "text" blocks (Anthropic, Chat) or "input_text" parts (Responses).
    const std::string type = b.is_object() ? b.value("type", "") : "";
    if ((type != "text" && type != "input_text") || !b.contains("text") ||
        !b["text"].is_string()) {
      return false;
    }
    if (!text->empty()) text->push_back('\n');
    *text += b["text"].get<std::string>();
  }
  return true;
}

std::string Offloader::RefOf(std::string_view text) {
  return "tc_" + ToHex(ComputeSha256(text)).substr(0, 16);
}

std::string Offloader::MemoKey(std::string_view scope, std::string_view id,
                               std::string_view raw) const {
  return "p/" + std::string(scope) + "/" +
         ToHex(ComputeSha256(std::string(id) + '\0' + std::string(raw)));
}

std::string Offloader::Preview(std::string_view text,
                               const std::string& ref) const {
  const size_t lines =
      static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  size_t head = Utf8Floor(text, std::min(options_.head_bytes, text.size()));
  size_t tail_from =
      text.size() > options_.tail_bytes ? text.size() - options_.tail_bytes : 0;
  tail_from = std::max(head, tail_from);
  while (tail_from < text.size() &&
         (static_cast<unsigned char>(text[tail_from]) & 0xC0) == 0x80) {
    ++tail_from;
  }
  std::string out =
      "[toolcache: this tool result was offloaded to keep the context "
      "small: " +
      std::to_string(text.size()) + " bytes, ~" +
      std::to_string((text.size() + 3) / 4) + " tokens, " +
      std::to_string(lines) + " lines. Reference \"" + ref +
      "\". Only its head and tail are shown. To read more, call the " +
      std::string(kRetrievalTool) + " tool with {\"ref\": \"" + ref +
      "\", \"offset\": <byte>, \"length\": <bytes>} or {\"ref\": \"" + ref +
      "\", \"pattern\": \"<text>\"}.]\n--- head (bytes 0-" +
      std::to_string(head) + ") ---\n";
  out.append(text.substr(0, head));
  out += "\n--- tail (bytes " + std::to_string(tail_from) + "-" +
         std::to_string(text.size()) + ") ---\n";
  out.append(text.substr(tail_from));
  return out;
}

std::string Offloader::Rewrite(const ParsedRequest& request,
                               const std::string& body, std::string_view scope,
                               OffloadReport* report) {
  BodyEdits edits;
  Plan(request, body, scope, report, &edits);
  if (edits.empty()) return body;
  return edits.Apply(body);
}

void Offloader::Plan(const ParsedRequest& request, const std::string& body,
                     std::string_view scope, OffloadReport* report,
                     BodyEdits* edits) {
  // The retrieval tool, after the client's tools, in every request that
  // has a tool list.
  bool has = false;
  for (const ToolDef& d : request.tool_defs) has |= IsRetrieval(d.name);
  if (!request.tool_defs.empty() && !has) {
    const std::string schema =
        R"J({"type":"object","properties":{"ref":{"type":"string","description":"the reference of an offloaded result"},"offset":{"type":"integer","description":"first byte to read (default 0)"},"length":{"type":"integer","description":"bytes to read (default and at most 8000)"},"pattern":{"type":"string","description":"text to find (matched literally, case-sensitive): return the lines containing it instead"}},"required":["ref"]})J";
    const std::string description = JsonString(
        "Reads part of a tool result that was offloaded from the "
        "conversation (its preview names the reference): a byte range, or "
        "the lines matching a pattern.");
    const std::string named = R"("name":")" + std::string(kRetrievalTool) +
                              R"(","description":)" + description;
    std::string def;
    if (request.api == Api::kAnthropicMessages) {
      def = "{" + named + R"(,"input_schema":)" + schema + "}";
    } else if (request.api == Api::kOpenAiChat) {
      def = R"({"type":"function","function":{)" + named + R"(,"parameters":)" +
            schema + "}}";
    } else {
      // Responses: a flat function tool. Choice: "strict": false, said
      // explicitly: Responses defaults to strict, which makes the model
      // fill every optional parameter (an empty pattern, a zero length).
      def = R"({"type":"function",)" + named + R"(,"parameters":)" + schema +
            R"(,"strict":false})";
    }
    const uint32_t at = request.tool_defs.back().span.end;
    edits->Insert(at, "," + def);
    report->tool_added = true;
  }
  // Oversized results: memoised previews anywhere, new ones in the newest
  // turn only.
  const uint64_t limit = options_.threshold_tokens * 4;
  struct Candidate {
    const ToolResult* result;
    std::string key;
    std::string preview;  // found
    bool known = false;
  };
  std::vector<Candidate> cands;
  for (const ToolResult& r : request.tool_results) {
    if (r.content.size() <= limit) continue;
    Candidate c{&r, MemoKey(scope, r.id, r.content.In(body)), "", false};
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = memo_.find(c.key);
      if (it != memo_.end()) {
        c.known = true;
        c.preview = it->second;
      }
    }
    // Known not offloaded and not new: nothing to do.
    if (c.known && c.preview.empty() && r.message < request.turn_begin) {
      continue;
    }
    cands.push_back(std::move(c));
  }
  std::vector<size_t> ask;
  for (size_t i = 0; i < cands.size(); ++i) {
    if (!cands[i].known) ask.push_back(i);
  }
  for (size_t b = 0; b < ask.size(); b += kMaxStoreBatch) {
    const size_t e = std::min(ask.size(), b + kMaxStoreBatch);
    std::vector<StoreKey> keys;
    for (size_t i = b; i < e; ++i) {
      keys.push_back({.ns = kNamespace, .key = cands[ask[i]].key});
    }
    auto got = store_->Get(keys);
    if (!got.ok()) {
      ++report->store_errors;
      spdlog::warn(
          "offload: store read failed ({}); oversized results sent "
          "whole",
          got.status().message());
      continue;
    }
    for (size_t i = b; i < e; ++i) {
      if (!(*got)[i - b]) continue;
      std::optional<std::string_view> preview =
          UnsealValue(*(*got)[i - b]->bytes);
      if (!preview) {
        // Choice: a damaged preview counts as none. In the newest turn the
        // preview is made again (the same bytes under the same options)
        // and stored over it; in an older turn the result goes whole.
        ++report->corrupt;
        spdlog::warn(
            "offload: a stored preview is damaged (check failed); not used");
        continue;
      }
      cands[ask[i]].preview = std::string(*preview);
      cands[ask[i]].known = true;
    }
  }
  for (Candidate& c : cands) {
    const ToolResult& r = *c.result;
    if (c.preview.empty()) {
      std::string text;
      if (r.message < request.turn_begin || report->store_errors > 0 ||
          !ResultText(r.content.In(body), &text) || text.size() <= limit) {
        if (r.message < request.turn_begin && report->store_errors == 0) {
          std::lock_guard<std::mutex> lock(mu_);
          memo_[c.key] = "";
        }
        continue;
      }
      const std::string ref = RefOf(text);
      std::string preview = JsonString(Preview(text, ref));
      Status st = store_->Put(
          {.ns = kNamespace, .key = "t/" + std::string(scope) + "/" + ref},
          SealValue(text), options_.ttl_seconds);
      if (st.ok()) {
        st = store_->Put({.ns = kNamespace, .key = c.key}, SealValue(preview),
                         options_.ttl_seconds);
      }
      if (!st.ok()) {
        ++report->store_errors;
        spdlog::warn("offload: result not stored ({}); sent whole",
                     st.message());
        continue;
      }
      c.preview = std::move(preview);
      ++report->offloaded;
    } else {
      ++report->reused;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (memo_.size() >= 65536) memo_.clear();
      memo_[c.key] = c.preview;
    }
    report->bytes_removed += r.content.size() - c.preview.size();
    edits->Replace(r.content.begin, r.content.end, c.preview);
  }
}

std::string Offloader::Answer(std::string_view scope,
                              std::string_view arguments_json) {
  ojson a = ojson::parse(arguments_json, nullptr, /*allow_exceptions=*/false);
  if (!a.is_object() || !a.contains("ref") || !a["ref"].is_string()) {
    return "toolcache_read: give {\"ref\": \"tc_...\"} and an offset / "
           "length or a pattern";
  }
  const std::string ref = a["ref"].get<std::string>();
  const std::string key = "t/" + std::string(scope) + "/" + ref;
  StoreKey k{.ns = kNamespace, .key = key};
  auto got = store_->Get({&k, 1});
  if (!got.ok()) {
    return "toolcache_read: the store is not available: " +
           got.status().message();
  }
  if (!(*got)[0]) {
    return "toolcache_read: unknown or expired reference \"" + ref + "\"";
  }
  std::optional<std::string_view> sealed = UnsealValue(*(*got)[0]->bytes);
  if (!sealed) {
    spdlog::warn(
        "offload: the stored result \"{}\" is damaged (check "
        "failed); not read",
        ref);
    return "toolcache_read: the stored result \"" + ref +
           "\" is damaged and cannot be read; run the original tool again";
  }
  const std::string_view text = *sealed;
  // An empty pattern is no pattern (it would match every line).
  if (a.contains("pattern") && a["pattern"].is_string() &&
      !a["pattern"].get_ref<const std::string&>().empty()) {
    const std::string pattern = a["pattern"].get<std::string>();
    // Choice: the pattern is matched literally (grep -F), never as a regular
    // expression: it comes from the model, and a backtracking regex engine
    // on a stored result of megabytes is a way to stall the proxy.
    std::string out;
    size_t line_no = 0, matches = 0, pos = 0;
    while (pos <= text.size()) {
      size_t nl = text.find('\n', pos);
      if (nl == std::string::npos) nl = text.size();
      ++line_no;
      std::string_view line(text.data() + pos, nl - pos);
      const bool hit = line.find(pattern) != std::string_view::npos;
      if (hit) {
        ++matches;
        std::string row = std::to_string(line_no) + ": " +
                          std::string(line.substr(0, 500)) + "\n";
        if (out.size() + row.size() > options_.max_read_bytes) {
          out += "[more matches not shown]\n";
          break;
        }
        out += row;
      }
      pos = nl + 1;
    }
    if (matches == 0) return "[no line matches \"" + pattern + "\"]";
    return out;
  }
  int64_t offset = 0;
  int64_t length = static_cast<int64_t>(options_.max_read_bytes);
  if (a.contains("offset") && a["offset"].is_number_integer()) {
    offset = a["offset"].get<int64_t>();
  }
  if (a.contains("length") && a["length"].is_number_integer()) {
    length = a["length"].get<int64_t>();
  }
  offset = std::clamp<int64_t>(offset, 0, static_cast<int64_t>(text.size()));
  length = std::clamp<int64_t>(
      length, 0,
      std::min<int64_t>(static_cast<int64_t>(options_.max_read_bytes),
                        static_cast<int64_t>(text.size()) - offset));
  return "[bytes " + std::to_string(offset) + "-" +
         std::to_string(offset + length) + " of " +
         std::to_string(text.size()) + "]\n" +
         std::string(text.substr(static_cast<size_t>(offset),
                                 static_cast<size_t>(length)));
}

}  // namespace toolcache::llm
