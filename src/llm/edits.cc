// Invariants:
// - Apply copies each byte of the body at most once and writes the result
//   in one pass (one reserve, no intermediate bodies).
// Choice: an overlapping edit is skipped, not merged: stages edit disjoint
// parts (splice: assistant turns; offload: tool result contents and the
// tool list's end), so an overlap is a bug to count, not to resolve. The
// one overlap by design -- the prompt cache rewrites the tool list offload
// appended to, or the last message content whose result offload replaced
// -- is resolved before Apply: the prompt cache read those edits, its text
// holds them, and ReplaceOver drops them.
#include "src/llm/edits.h"

#include <algorithm>

namespace toolcache::llm {

namespace {
thread_local uint64_t apply_count = 0;
}  // namespace

uint64_t BodyEdits::ApplyCount() { return apply_count; }

void BodyEdits::ReplaceOver(uint32_t begin, uint32_t end, std::string text) {
  end = std::max(begin, end);
  std::erase_if(edits_, [&](const Edit& e) {
    const bool edge_insert =
        e.begin == e.end && begin < end && (e.begin == begin || e.end == end);
    return begin <= e.begin && e.end <= end && !edge_insert;
  });
  edits_.push_back({begin, end, std::move(text)});
}

void BodyEdits::Replace(uint32_t begin, uint32_t end, std::string text) {
  edits_.push_back({begin, std::max(begin, end), std::move(text)});
}

std::string BodyEdits::Apply(std::string_view body) {
  ++apply_count;
  std::stable_sort(
      edits_.begin(), edits_.end(),
      [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
  size_t grow = 0;
  for (const Edit& e : edits_) grow += e.text.size();
  std::string out;
  out.reserve(body.size() + grow);
  uint32_t from = 0;
  for (const Edit& e : edits_) {
    if (e.begin < from || e.end > body.size()) {
      ++skipped_;
      continue;
    }
    out.append(body.substr(from, e.begin - from));
    out.append(e.text);
    from = e.end;
  }
  out.append(body.substr(std::min<size_t>(from, body.size())));
  return out;
}

uint32_t BodyEdits::Map(uint32_t pos) const {
  int64_t at = pos;
  for (const Edit& e : edits_) {
    if (e.begin < pos) {
      at += static_cast<int64_t>(e.text.size()) -
            static_cast<int64_t>(e.end - e.begin);
    }
  }
  return static_cast<uint32_t>(std::max<int64_t>(0, at));
}

}  // namespace toolcache::llm
