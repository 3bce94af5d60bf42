// Edits over the one parse of an LLM request body: each rewriting stage
// (the tool loop's splice, offload) says what to replace or insert at byte
// spans of the client's body, and one writer applies them all and
// serialises once (issue 30: "LLM stages produce edits applied once").
//
// Thread-safety: a BodyEdits belongs to one request. Ownership: texts are
// copies; positions index the body the request was parsed from.
//
// Example:
//   BodyEdits edits;
//   loop.SplicePlan(parsed, body, scope, &sr, &edits);
//   offloader.Plan(parsed, body, scope, &orep, &edits);
//   ... the prompt cache's rewrite, ReplaceOver what it read ...
//   if (!edits.empty()) body = edits.Apply(body);
#ifndef TOOLCACHE_SRC_LLM_EDITS_H_
#define TOOLCACHE_SRC_LLM_EDITS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace toolcache::llm {

class BodyEdits {
 public:
  // Replaces bytes [begin, end) of the body by `text` (begin == end:
  // inserts). REQUIRES: begin <= end.
  void Replace(uint32_t begin, uint32_t end, std::string text);
  void Insert(uint32_t at, std::string text) {
    Replace(at, at, std::move(text));
  }
  // Replaces [begin, end) by `text`, which already holds what the edits
  // made so far inside that range wrote (the prompt cache's rewrite of a
  // tool list or message content read with them, prompt_cache.h): those
  // edits are dropped. An insertion exactly at `begin` or `end` stays.
  void ReplaceOver(uint32_t begin, uint32_t end, std::string text);
  bool empty() const { return edits_.empty(); }
  size_t size() const { return edits_.size(); }

  // The body with every edit applied, in position order (insertions at one
  // position in the order they were made). An edit that overlaps an
  // earlier one is skipped and counted in skipped().
  std::string Apply(std::string_view body);
  uint32_t skipped() const { return skipped_; }

  // Where position `pos` of the original body is in Apply's result: moved
  // by every edit that starts before it. REQUIRES: no edit spans `pos`.
  uint32_t Map(uint32_t pos) const;

  struct Edit {
    uint32_t begin;
    uint32_t end;
    std::string text;
  };
  // The edits made so far, in the order they were made (Apply sorts them).
  const std::vector<Edit>& edits() const { return edits_; }

  // Debug hook: how many bodies Apply wrote on the calling thread.
  static uint64_t ApplyCount();

 private:
  std::vector<Edit> edits_;
  uint32_t skipped_ = 0;
};

}  // namespace toolcache::llm

#endif  // TOOLCACHE_SRC_LLM_EDITS_H_
