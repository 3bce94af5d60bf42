// Offloader: the out-of-context offload (docs/PROXY_SERVE.md "Offload") for the
// LLM proxy, free of I/O besides the Store.
//
// A tool result in the newest client turn larger than the threshold
// (default 2,000 tokens, estimated as bytes / 4) is replaced by a preview:
// its size, a reference, how to read more, its head and its tail. The whole
// text is stored (namespace "offl2", per scope, sealed: a damaged value
// is never used). The proxy adds one tool,
// `toolcache_read`, at the end of the request's tool list from the
// conversation's first request on, and answers calls to it itself in the
// server-side tool loop (tool_loop.h): a byte range or the lines matching a
// pattern of a stored result.
//
// Prompt-cache safety: the preview of a result is memoised by the digest of
// its call id and raw bytes (in the store), so a result offloaded once is
// replaced by
// the same bytes in every later request, in whatever turn it then is; a
// result that was not offloaded when it was newest is never rewritten later;
// the tool definition is the same bytes at the same place every time.
//
// Thread-safety: thread-safe (the store is; one mutex around the local
// memo). Ownership: borrows the store.
//
// Example:
//   Offloader off(store, {});
//   body = off.Rewrite(parsed, body, scope, &report);
//   if (off.IsRetrieval(call.name)) text = off.Answer(scope, call.arguments);
#ifndef TOOLCACHE_SRC_LLM_OFFLOAD_H_
#define TOOLCACHE_SRC_LLM_OFFLOAD_H_

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "src/llm/edits.h"
#include "src/llm/wire.h"
#include "toolcache/store.h"

namespace toolcache::llm {

struct OffloadOptions {
  // Results above this many tokens (bytes / 4) are offloaded.
  uint64_t threshold_tokens = 2000;
  // Preview: this many bytes of the head and of the tail.
  size_t head_bytes = 1500;
  size_t tail_bytes = 500;
  // Stored results and previews live this long. Choice: 7 days.
  double ttl_seconds = 7 * 86400.0;
  // Most bytes one retrieval call returns.
  size_t max_read_bytes = 8000;
};

struct OffloadReport {
  uint32_t offloaded = 0;      // results replaced now for the first time
  uint32_t reused = 0;         // memoised previews put in again
  uint64_t bytes_removed = 0;  // request bytes saved
  uint32_t store_errors = 0;
  uint32_t corrupt = 0;  // stored previews damaged (not used)
  bool tool_added = false;
};

inline constexpr std::string_view kRetrievalTool = "toolcache_read";

class Offloader {
 public:
  Offloader(Store* store, OffloadOptions options);

  // `body` with the retrieval tool appended to its tool list (when it has
  // one) and oversized results replaced; `body` itself when unchanged.
  std::string Rewrite(const ParsedRequest& request, const std::string& body,
                      std::string_view scope, OffloadReport* report);
  // Rewrite as edits over `body` (the bytes `request` was parsed from),
  // added to *edits for the one writer (edits.h); Rewrite applies them.
  void Plan(const ParsedRequest& request, const std::string& body,
            std::string_view scope, OffloadReport* report, BodyEdits* edits);

  static bool IsRetrieval(std::string_view tool) {
    return tool == kRetrievalTool;
  }
  // The answer to a retrieval call (always text; errors say what is wrong).
  std::string Answer(std::string_view scope, std::string_view arguments_json);

  // The text of a result's content (a JSON string, or the text of an array
  // of text blocks or Responses input_text parts, joined by newlines);
  // false when it has other blocks.
  static bool ResultText(std::string_view content, std::string* text);
  // "tc_" + 16 hex digits of the SHA-256 of `text`.
  static std::string RefOf(std::string_view text);

 private:
  std::string Preview(std::string_view text, const std::string& ref) const;
  std::string MemoKey(std::string_view scope, std::string_view id,
                      std::string_view raw) const;

  Store* store_;
  OffloadOptions options_;
  std::mutex mu_;
  // GUARDED_BY(mu_): memo key -> preview ("" = known not offloaded).
  std::unordered_map<std::string, std::string> memo_;
};

}  // namespace toolcache::llm

#endif  // TOOLCACHE_SRC_LLM_OFFLOAD_H_
