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
// Graft reads another stage's edit of the text (the proxy's splice and
// offload, src/llm/edits.h) into the tree without applying it: the tree
// is then the tree of the edited text, read once over the client's bytes
// plus once over each edit's own bytes (issue 30: one read, one writer).
// A node read from an edit is whole in that edit's text; a node of the
// client's text holding one (mixed) has no contiguous Raw: its bytes are
// Bytes(n) (the edits applied to its range).
//
// Thread-safety: a SpanTree belongs to one thread. Ownership: spans index
// the text given to Read and the texts given to Graft, which must outlive
// the tree.
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
#include <unordered_map>
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
  // The value's bytes (no surrounding whitespace). REQUIRES: !mixed(n).
  std::string_view Raw(uint32_t n) const {
    return sources_[nodes_[n].src].substr(nodes_[n].begin,
                                          nodes_[n].end - nodes_[n].begin);
  }
  // Positions in the node's own text: the text Read (grafted(n) false) or
  // the edit it was grafted from.
  uint32_t begin(uint32_t n) const { return nodes_[n].begin; }
  uint32_t end(uint32_t n) const { return nodes_[n].end; }
  // A member's name as its string literal (quotes included); "" otherwise.
  std::string_view KeyRaw(uint32_t n) const {
    if (nodes_[n].key_begin == kNone) return {};
    return sources_[nodes_[n].key_src].substr(
        nodes_[n].key_begin, nodes_[n].key_end - nodes_[n].key_begin);
  }

  // Reads the edit "bytes [begin, end) of the text Read become `text`"
  // into the tree. The edit must replace whole values of one container
  // the text Read holds, in that container's grammar: in an array, a run
  // of elements (none: an insertion) by `text`, a sequence of values with
  // optional leading and trailing commas; in an object, one member's value
  // by `text`, one value. Grafts must not overlap and must not fall into an
  // earlier graft. False (the tree unchanged but for nodes no longer
  // reachable) otherwise: the caller reads the applied text instead.
  bool Graft(uint32_t begin, uint32_t end, std::string_view text);
  // Whether node `n` was read from a graft's text (its positions index
  // that text, not the text Read).
  bool grafted(uint32_t n) const { return nodes_[n].src != 0; }
  // Whether node `n` (of the text Read) holds a grafted node.
  bool mixed(uint32_t n) const { return nodes_[n].mixed; }
  // The value's bytes with the grafts applied (Raw when not mixed).
  std::string Bytes(uint32_t n) const;
  // Bytes [from, to) of the text Read with the grafts inside applied.
  // REQUIRES: no graft straddles `from` or `to`.
  std::string Slice(uint32_t from, uint32_t to) const;
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
    uint16_t src = 0;      // sources_ index of the value's bytes
    uint16_t key_src = 0;  // ... and of its member name's
    bool mixed = false;
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

  struct GraftEdit {
    uint32_t begin, end;
    std::string_view text;
  };
  std::string_view text_;  // the text being read (Read's, or a graft's)
  std::vector<std::string_view> sources_;  // [0]: Read's, then each graft's
  std::vector<GraftEdit> grafts_;          // in position order
  // A grafted value read at a container's level -> its graft in grafts_.
  std::unordered_map<uint32_t, uint32_t> anchor_;
  size_t pos_ = 0;
  uint32_t max_depth_ = 512;
  std::vector<Node> nodes_;
  uint64_t irregular_ = 0;  // bytes seen so far that the dump would rewrite
};

// Debug hook: how many request bodies the prompt-cache stage parsed into a
// DOM on the calling thread. It has no DOM path any more (SpanTree reads
// every body), so this stays 0; tests pin that.
uint64_t DomParseCount();
// Debug hooks: request bodies the prompt-cache stage read (one SpanTree
// over a whole body; PrepareEdited reads the client's, Prepare the one it
// is given) and wrote itself (Prepare's splice; PrepareEdited leaves the
// writing to the caller) on the calling thread.
uint64_t BodyReadCount();
uint64_t BodyWriteCount();

}  // namespace toolcache::prompt_internal

#endif  // TOOLCACHE_SRC_PROMPT_SPAN_TREE_H_
