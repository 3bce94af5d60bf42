// A span tree of a JSON text already in nlohmann's compact dump form: the
// prompt-cache stage's reader for request bodies (issue 30: no DOM is built
// and nothing is serialised again; the rewrite splices bytes).
//
// Read succeeds only when dump(parse(text)) == text would hold: no
// whitespace, strings escaped as the dump writes them (\" \\ \b \f \n \r
// \t, \u00xx for other control bytes, nothing else escaped), well-formed
// UTF-8, integers in int64 / uint64 range without "-0", other numbers
// equal to their dump, no duplicate member names. Any other text is not
// read (the caller falls back to the DOM), so a rewrite made of this text's
// bytes equals the DOM's serialisation byte for byte.
//
// Thread-safety: a SpanTree belongs to one thread. Ownership: spans index
// the text given to Read, which must outlive the tree.
//
// Example:
//   SpanTree t;
//   if (t.Read(body) && t.kind(0) == 'o')
//     for (uint32_t m = t.first(0); m != SpanTree::kNone; m = t.next(m))
//       Use(t.Key(m), t.Raw(m));
#ifndef TOOLCACHE_SRC_PROMPT_SPAN_TREE_H_
#define TOOLCACHE_SRC_PROMPT_SPAN_TREE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace toolcache::prompt_internal {

class SpanTree {
 public:
  static constexpr uint32_t kNone = 0xffffffffu;
  // False (and an empty tree) when `text` is not in compact dump form.
  // Node 0 is the root value.
  bool Read(std::string_view text, uint32_t max_depth = 512);

  // 'o' object, 'a' array, 's' string, 'n' number, 't' true, 'f' false,
  // 'z' null.
  char kind(uint32_t n) const { return nodes_[n].kind; }
  // The value's bytes.
  std::string_view Raw(uint32_t n) const {
    return text_.substr(nodes_[n].begin, nodes_[n].end - nodes_[n].begin);
  }
  uint32_t begin(uint32_t n) const { return nodes_[n].begin; }
  uint32_t end(uint32_t n) const { return nodes_[n].end; }
  // A member's name as its string literal (quotes included); "" otherwise.
  std::string_view KeyRaw(uint32_t n) const {
    return text_.substr(nodes_[n].key_begin,
                        nodes_[n].begin - 1 - nodes_[n].key_begin);
  }
  bool HasKey(uint32_t n) const { return nodes_[n].key_begin != kNone; }
  // Children (members / elements) in order.
  uint32_t first(uint32_t n) const { return nodes_[n].first; }
  uint32_t next(uint32_t n) const { return nodes_[n].next; }
  uint32_t count(uint32_t n) const { return nodes_[n].count; }
  // The member of object `n` named `key` (unescaped name), or kNone.
  uint32_t Find(uint32_t n, std::string_view key) const;
  // A string node's decoded text.
  std::string Text(uint32_t n) const;

 private:
  struct Node {
    char kind;
    uint32_t begin = 0, end = 0;
    uint32_t key_begin = kNone;  // the member name's opening quote
    uint32_t first = kNone, next = kNone, count = 0;
  };
  bool Value(uint32_t depth, uint32_t* index);
  bool String();
  bool Number();

  std::string_view text_;
  size_t pos_ = 0;
  uint32_t max_depth_ = 512;
  std::vector<Node> nodes_;
};

// Debug hook: how many request bodies the prompt-cache stage parsed into a
// DOM on the calling thread (the fallback for bodies SpanTree does not
// read); tests check that a body in dump form is never parsed that way.
uint64_t DomParseCount();
// Test hook: false makes the calling thread's Prepare calls take the DOM
// path for every body (the differential test compares the two paths).
void UseSpanPathForTesting(bool on);

}  // namespace toolcache::prompt_internal

#endif  // TOOLCACHE_SRC_PROMPT_SPAN_TREE_H_
