// A span tree of any JSON text (RFC 8259): the prompt-cache stage's one
// reader for request bodies (issue 30: no DOM is built and nothing is
// serialised again; the rewrite splices bytes, every other byte stays the
// client's).
//
// Read accepts what nlohmann's parser accepts (whitespace anywhere between
// tokens, every escape, every number spelling, duplicate member names)
// except lone surrogate escapes and nesting past max_depth, which it
// refuses (a refused body is passed through unchanged). Duplicate names:
// Find returns the LAST member of that name (what src/llm/wire.cc and the
// providers read); DumpMembers lists an object's members as the DOM holds
// them (first position, last value). Each node knows whether its bytes are
// already in nlohmann's compact dump form (canon); AppendDump writes any
// scalar or member name in that form, so meaning-level comparisons need no
// DOM.
//
// Thread-safety: a SpanTree belongs to one thread. Ownership: spans index
// the text given to Read, which must outlive the tree.
//
// Example:
//   SpanTree t;
//   if (t.Read(body) && t.kind(0) == 'o')
//     for (uint32_t m = t.first(0); m != SpanTree::kNone; m = t.next(m))
//       Use(t.Name(m), t.Raw(m));
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
  // False (and an empty tree) when `text` is not one JSON value (leading
  // and trailing whitespace allowed), holds a lone surrogate escape, or
  // nests deeper than max_depth. Node 0 is the root value.
  bool Read(std::string_view text, uint32_t max_depth = 512);

  // 'o' object, 'a' array, 's' string, 'n' number, 't' true, 'f' false,
  // 'z' null.
  char kind(uint32_t n) const { return nodes_[n].kind; }
  // The value's bytes (no surrounding whitespace).
  std::string_view Raw(uint32_t n) const {
    return text_.substr(nodes_[n].begin, nodes_[n].end - nodes_[n].begin);
  }
  uint32_t begin(uint32_t n) const { return nodes_[n].begin; }
  uint32_t end(uint32_t n) const { return nodes_[n].end; }
  // A member's name as its string literal (quotes included); "" otherwise.
  std::string_view KeyRaw(uint32_t n) const {
    if (nodes_[n].key_begin == kNone) return {};
    return text_.substr(nodes_[n].key_begin,
                        nodes_[n].key_end - nodes_[n].key_begin);
  }
  bool HasKey(uint32_t n) const { return nodes_[n].key_begin != kNone; }
  // A member's first byte (its name's opening quote).
  uint32_t KeyBegin(uint32_t m) const { return nodes_[m].key_begin; }
  // A member's decoded name.
  std::string Name(uint32_t m) const;
  // Whether member `m`'s decoded name is `name`.
  bool NameIs(uint32_t m, std::string_view name) const;
  // Whether node `n` is a string whose decoded text is `text`.
  bool TextIs(uint32_t n, std::string_view text) const;
  // Whether the value's bytes are already nlohmann's compact dump of it
  // (no whitespace, the dump's escapes and number forms, no duplicate
  // names at any depth).
  bool canon(uint32_t n) const { return nodes_[n].canon; }
  // Whether object `n` holds two members of one name.
  bool dups(uint32_t n) const { return nodes_[n].dups; }
  // Appends scalar `n` (string, number, literal) as nlohmann's dump writes
  // it. REQUIRES: kind(n) is not 'o' or 'a'.
  void AppendDump(uint32_t n, std::string* out) const;
  // Appends member `m`'s name as a string literal in dump form.
  void AppendName(uint32_t m, std::string* out) const;
  // Object `n`'s members as its DOM holds them: each name once, at its
  // first position, with its last value.
  // Linear in the members (one hash lookup each).
  void DumpMembers(uint32_t n, std::vector<uint32_t>* out) const;
  // Test hook: the name lookups and comparisons DumpMembers has made on
  // this thread, ever (tests bound its work by the difference).
  static uint64_t DumpMembersWork();
  // Children (members / elements) in order.
  uint32_t first(uint32_t n) const { return nodes_[n].first; }
  uint32_t next(uint32_t n) const { return nodes_[n].next; }
  uint32_t count(uint32_t n) const { return nodes_[n].count; }
  // The last member of object `n` named `key` (decoded name), or kNone.
  uint32_t Find(uint32_t n, std::string_view key) const;
  // A string node's decoded text.
  std::string Text(uint32_t n) const;

 private:
  struct Node {
    char kind;
    uint32_t begin = 0, end = 0;
    uint32_t key_begin = kNone;  // the member name's opening quote
    uint32_t key_end = 0;        // past its closing quote
    uint32_t first = kNone, next = kNone, count = 0;
    bool canon = true;
    bool dups = false;
  };
  bool Value(uint32_t depth, uint32_t* index);
  bool String();
  bool Number();
  void Space();

  std::string_view text_;
  size_t pos_ = 0;
  uint32_t max_depth_ = 512;
  std::vector<Node> nodes_;
  uint64_t irregular_ = 0;  // bytes seen so far that the dump would rewrite
};

// Debug hook: how many request bodies the prompt-cache stage parsed into a
// DOM on the calling thread. It has no DOM path any more (SpanTree reads
// every body), so this stays 0; tests pin that.
uint64_t DomParseCount();

}  // namespace toolcache::prompt_internal

#endif  // TOOLCACHE_SRC_PROMPT_SPAN_TREE_H_
