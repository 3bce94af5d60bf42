// Invariants:
// - Read accepts what nlohmann's parser accepts, except lone surrogate
//   escapes (which nlohmann refuses too) and depth past max_depth; a
//   refused body is the caller's to pass through unchanged.
// - Nodes are stored in pre-order; a node's children are linked in order.
// - irregular_ grows at every byte the dump would write otherwise
//   (whitespace, an escape the dump does not use, a number spelled other
//   than its dump, a duplicate name), so a node is canon exactly when it
//   did not grow between the node's first and last byte.
// - Graft appends the nodes read from an edit's text after every node of
//   the text Read (pre-order holds within each text), links them into the
//   container in place of the values replaced, and marks that container
//   and its ancestors mixed and not canon (their bytes are no longer one
//   contiguous run of one text); every other node keeps its span.
// Choice: a number with a fraction or an exponent is checked (and, when it
// is not canon, written by AppendDump) by parsing that one token with
// nlohmann and dumping it: the dump's double format is nlohmann's own; a
// scalar, not the body.
#include "src/prompt/span_tree.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "src/core/json.h"

namespace toolcache::prompt_internal {

namespace {
thread_local uint64_t dump_members_work = 0;
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
}  // namespace

bool SpanTree::Read(std::string_view text, uint32_t max_depth) {
  text_ = text;
  sources_.assign(1, text);
  grafts_.clear();
  anchor_.clear();
  pos_ = 0;
  max_depth_ = max_depth;
  irregular_ = 0;
  nodes_.clear();
  if (text.size() >= kNone) return false;
  uint32_t root = kNone;
  Space();
  if (!Value(0, &root)) {
    nodes_.clear();
    return false;
  }
  Space();
  if (pos_ != text_.size()) {
    nodes_.clear();
    return false;
  }
  return true;
}

bool SpanTree::Graft(uint32_t begin, uint32_t end, std::string_view text) {
  if (nodes_.empty() || begin > end || end > sources_[0].size() ||
      sources_.size() >= 0xffff || text.size() >= kNone) {
    return false;
  }
  // Choice: strictly apart from every earlier graft (not even touching), so
  // the order of two edits at one position never matters.
  for (const GraftEdit& g : grafts_) {
    if (!(end < g.begin || begin > g.end)) return false;
  }
  // The deepest container of the text Read whose brackets hold the edit.
  std::vector<uint32_t> path;
  uint32_t p = 0;
  if (nodes_[0].kind != 'o' && nodes_[0].kind != 'a') return false;
  if (!(nodes_[0].begin < begin && end < nodes_[0].end)) return false;
  for (;;) {
    path.push_back(p);
    uint32_t into = kNone;
    for (uint32_t c = nodes_[p].first; c != kNone; c = nodes_[c].next) {
      if (nodes_[c].src == 0 &&
          (nodes_[c].kind == 'o' || nodes_[c].kind == 'a') &&
          nodes_[c].begin < begin && end < nodes_[c].end) {
        into = c;
        break;
      }
    }
    if (into == kNone) break;
    p = into;
  }
  // The children replaced: every one inside [begin, end); none may
  // straddle it, and none may be a graft's.
  uint32_t prev = kNone, first_out = kNone, last_out = kNone, after = kNone;
  uint32_t removed = 0;
  for (uint32_t c = nodes_[p].first; c != kNone; c = nodes_[c].next) {
    // The child's place in the text Read: its own span (from its name), or
    // for a grafted value the span its graft replaced.
    uint32_t cb = nodes_[c].begin, ce = nodes_[c].end;
    if (nodes_[c].src != 0) {
      const auto a = anchor_.find(c);
      if (a == anchor_.end()) return false;  // unreachable: each is anchored
      const GraftEdit& g = grafts_[a->second];
      cb = g.begin;
      ce = g.end;
    } else if (nodes_[c].key_begin != kNone) {
      cb = nodes_[c].key_begin;
    }
    if (begin == end) {
      if (cb < begin && ce > begin) return false;
      if (cb < begin) {
        prev = c;
      } else if (after == kNone) {
        after = c;
      }
    } else if (ce <= begin) {
      prev = c;
    } else if (cb >= end) {
      if (after == kNone) after = c;
    } else if (nodes_[c].begin >= begin && ce <= end && nodes_[c].src == 0) {
      if (first_out == kNone) first_out = c;
      last_out = c;
      ++removed;
    } else {
      return false;  // straddles the edit
    }
  }
  const bool object = nodes_[p].kind == 'o';
  uint32_t key_node = kNone;
  if (object) {
    // One member's value, exactly.
    if (removed != 1 || nodes_[first_out].begin != begin ||
        nodes_[first_out].end != end) {
      return false;
    }
    key_node = first_out;
  }
  const std::string_view base = sources_[0];
  // Array: the separators on either side of the edit, which the edit's
  // leading / trailing comma must complete (checked once it is read).
  size_t left = begin, right = end;
  if (!object) {
    if (removed > 0) {
      // Exactly the removed elements and the commas between them.
      if (nodes_[first_out].begin != begin || nodes_[last_out].end != end) {
        return false;
      }
      for (uint32_t c = first_out; c != last_out; c = nodes_[c].next) {
        size_t k = nodes_[c].end;
        while (k < base.size() && IsSpace(base[k])) ++k;
        if (k >= base.size() || base[k] != ',') return false;
      }
    }
    while (left > 0 && IsSpace(base[left - 1])) --left;
    while (right < base.size() && IsSpace(base[right])) ++right;
    if (left == 0 || right >= base.size()) return false;
    --left;  // on the byte before the edit
    for (const GraftEdit& g : grafts_) {
      if (g.begin <= right && g.end > left) return false;
    }
  }
  // Read the edit's values after every node so far.
  const uint16_t src = static_cast<uint16_t>(sources_.size());
  const std::string_view saved_text = text_;
  const size_t saved_pos = pos_;
  const size_t size_before = nodes_.size();
  text_ = text;
  pos_ = 0;
  std::vector<uint32_t> values;
  bool ok = true, leading = false, trailing = false;
  Space();
  if (!object && pos_ < text_.size() && text_[pos_] == ',') {
    leading = true;
    ++pos_;
    Space();
  }
  while (ok && pos_ < text_.size()) {
    uint32_t v = kNone;
    ok = Value(static_cast<uint32_t>(path.size()), &v);
    if (!ok) break;
    values.push_back(v);
    Space();
    if (pos_ < text_.size() && text_[pos_] == ',' && !object) {
      ++pos_;
      Space();
      trailing = pos_ >= text_.size();
    } else if (pos_ < text_.size()) {
      ok = false;
    }
  }
  text_ = saved_text;
  pos_ = saved_pos;
  if (!object && ok) {
    // "[" or "," before needs no leading comma, a value does; "]" or ","
    // after needs no trailing comma, a value does.
    const bool need_leading = base[left] != '[' && base[left] != ',';
    const bool need_trailing = base[right] != ']' && base[right] != ',';
    ok =
        !values.empty() && leading == need_leading && trailing == need_trailing;
  }
  if (!ok || (object && values.size() != 1)) {
    nodes_.resize(size_before);
    return false;
  }
  for (size_t i = size_before; i < nodes_.size(); ++i) {
    nodes_[i].src = src;
    nodes_[i].key_src = src;
  }
  if (object) {
    Node& v = nodes_[values[0]];
    v.key_begin = nodes_[key_node].key_begin;
    v.key_end = nodes_[key_node].key_end;
    v.key_src = nodes_[key_node].key_src;
  }
  // Link: prev -> values... -> after.
  uint32_t link = prev;
  for (uint32_t v : values) {
    if (link == kNone) {
      nodes_[p].first = v;
    } else {
      nodes_[link].next = v;
    }
    link = v;
  }
  if (link == kNone) {
    nodes_[p].first = after;
  } else {
    nodes_[link].next = after;
  }
  nodes_[p].count =
      nodes_[p].count - removed + static_cast<uint32_t>(values.size());
  for (uint32_t a : path) {
    nodes_[a].mixed = true;
    nodes_[a].canon = false;
  }
  sources_.push_back(text);
  // grafts_ in position order; anchor_ indexes it, so renumber.
  GraftEdit g{begin, end, text};
  const auto at = std::upper_bound(
      grafts_.begin(), grafts_.end(), g,
      [](const GraftEdit& x, const GraftEdit& y) { return x.begin < y.begin; });
  const uint32_t index = static_cast<uint32_t>(at - grafts_.begin());
  grafts_.insert(at, g);
  for (auto& [node, k] : anchor_) {
    if (k >= index) ++k;
  }
  for (uint32_t v : values) anchor_[v] = index;
  return true;
}

std::string SpanTree::Slice(uint32_t from, uint32_t to) const {
  std::string out;
  const std::string_view base = sources_[0];
  uint32_t at = from;
  for (const GraftEdit& g : grafts_) {
    if (g.begin < from || g.end > to) continue;
    out.append(base.substr(at, g.begin - at));
    out.append(g.text);
    at = g.end;
  }
  out.append(base.substr(at, to - at));
  return out;
}

std::string SpanTree::Bytes(uint32_t n) const {
  if (!nodes_[n].mixed) return std::string(Raw(n));
  return Slice(nodes_[n].begin, nodes_[n].end);
}

void SpanTree::Space() {
  const size_t start = pos_;
  while (pos_ < text_.size() && IsSpace(text_[pos_])) ++pos_;
  irregular_ += pos_ - start;
}

std::string SpanTree::Name(uint32_t m) const {
  std::string_view k = KeyRaw(m);
  if (k.size() < 2) return "";
  if (k.find('\\') == std::string_view::npos) {
    return std::string(k.substr(1, k.size() - 2));
  }
  std::string d;
  (void)json::Unquote(k, &d);
  return d;
}

bool SpanTree::NameIs(uint32_t m, std::string_view name) const {
  std::string_view k = KeyRaw(m);
  if (k.find('\\') == std::string_view::npos) {
    return k.size() == name.size() + 2 && k.substr(1, name.size()) == name;
  }
  return Name(m) == name;
}

bool SpanTree::TextIs(uint32_t n, std::string_view text) const {
  if (nodes_[n].kind != 's') return false;
  std::string_view r = Raw(n);
  if (r.find('\\') == std::string_view::npos) {
    return r.size() == text.size() + 2 && r.substr(1, text.size()) == text;
  }
  return Text(n) == text;
}

uint32_t SpanTree::Find(uint32_t n, std::string_view key) const {
  if (nodes_[n].kind != 'o') return kNone;
  uint32_t found = kNone;
  for (uint32_t m = nodes_[n].first; m != kNone; m = nodes_[m].next) {
    if (NameIs(m, key)) {
      found = m;
      if (!nodes_[n].dups) return found;  // the only one
    }
  }
  return found;
}

void SpanTree::DumpMembers(uint32_t n, std::vector<uint32_t>* out) const {
  out->clear();
  if (nodes_[n].kind != 'o') return;
  if (!nodes_[n].dups) {
    for (uint32_t m = nodes_[n].first; m != kNone; m = nodes_[m].next) {
      out->push_back(m);
    }
    return;
  }
  // Each decoded name -> its index in *out: one lookup per member, so a
  // large object with one repeated name costs linear work, not quadratic.
  std::unordered_map<std::string, size_t> at;
  at.reserve(nodes_[n].count);
  for (uint32_t m = nodes_[n].first; m != kNone; m = nodes_[m].next) {
    ++dump_members_work;
    auto [it, added] = at.try_emplace(Name(m), out->size());
    if (added) {
      out->push_back(m);
    } else {
      (*out)[it->second] = m;  // the last value, at the first position
    }
  }
}

uint64_t SpanTree::DumpMembersWork() { return dump_members_work; }

std::string SpanTree::Text(uint32_t n) const {
  std::string out;
  if (nodes_[n].kind == 's') {
    std::string_view r = Raw(n);
    if (r.find('\\') == std::string_view::npos) {
      out.assign(r.substr(1, r.size() - 2));
    } else {
      (void)json::Unquote(r, &out);
    }
  }
  return out;
}

void SpanTree::AppendName(uint32_t m, std::string* out) const {
  std::string_view k = KeyRaw(m);
  if (k.find('\\') == std::string_view::npos) {
    out->append(k);
  } else {
    json::AppendQuoted(Name(m), out, json::BadUtf8::kVerbatim);
  }
}

void SpanTree::AppendDump(uint32_t n, std::string* out) const {
  const std::string_view r = Raw(n);
  if (nodes_[n].canon) {
    out->append(r);
  } else if (nodes_[n].kind == 's') {
    json::AppendQuoted(Text(n), out, json::BadUtf8::kVerbatim);
  } else if (nodes_[n].kind == 'n') {
    try {
      out->append(nlohmann::ordered_json::parse(r).dump());
    } catch (const std::exception&) {
      out->append(r);  // unreachable: Read checked the grammar
    }
  } else {
    out->append(r);
  }
}

bool SpanTree::Value(uint32_t depth, uint32_t* index) {
  if (pos_ >= text_.size()) return false;
  const uint32_t me = static_cast<uint32_t>(nodes_.size());
  nodes_.push_back(Node{});
  nodes_[me].begin = static_cast<uint32_t>(pos_);
  *index = me;
  const uint64_t irregular_before = irregular_;
  const char c = text_[pos_];
  if (c == '{' || c == '[') {
    if (depth >= max_depth_) return false;
    const bool object = c == '{';
    nodes_[me].kind = object ? 'o' : 'a';
    ++pos_;
    Space();
    const char close = object ? '}' : ']';
    uint32_t prev = kNone;
    std::vector<std::string_view> keys;
    bool escaped_key = false;
    if (pos_ < text_.size() && text_[pos_] == close) {
      ++pos_;
    } else {
      for (;;) {
        uint32_t key_begin = kNone, key_end = 0;
        if (object) {
          key_begin = static_cast<uint32_t>(pos_);
          if (pos_ >= text_.size() || text_[pos_] != '"' || !String()) {
            return false;
          }
          key_end = static_cast<uint32_t>(pos_);
          keys.push_back(text_.substr(key_begin, pos_ - key_begin));
          if (keys.back().find('\\') != std::string_view::npos) {
            escaped_key = true;
          }
          Space();
          if (pos_ >= text_.size() || text_[pos_] != ':') return false;
          ++pos_;
          Space();
        }
        uint32_t child = kNone;
        if (!Value(depth + 1, &child)) return false;
        nodes_[child].key_begin = key_begin;
        nodes_[child].key_end = key_end;
        if (prev == kNone) {
          nodes_[me].first = child;
        } else {
          nodes_[prev].next = child;
        }
        prev = child;
        ++nodes_[me].count;
        Space();
        if (pos_ >= text_.size()) return false;
        if (text_[pos_] == ',') {
          ++pos_;
          Space();
          continue;
        }
        if (text_[pos_] != close) return false;
        ++pos_;
        break;
      }
    }
    if (keys.size() > 1) {
      bool dup = false;
      if (!escaped_key) {
        std::sort(keys.begin(), keys.end());
        dup = std::adjacent_find(keys.begin(), keys.end()) != keys.end();
      } else {
        std::vector<std::string> names;
        for (std::string_view k : keys) {
          std::string d;
          (void)json::Unquote(k, &d);
          names.push_back(std::move(d));
        }
        std::sort(names.begin(), names.end());
        dup = std::adjacent_find(names.begin(), names.end()) != names.end();
      }
      if (dup) {
        nodes_[me].dups = true;
        ++irregular_;
      }
    }
  } else if (c == '"') {
    nodes_[me].kind = 's';
    if (!String()) return false;
  } else if (c == '-' || (c >= '0' && c <= '9')) {
    nodes_[me].kind = 'n';
    if (!Number()) return false;
  } else if (text_.substr(pos_, 4) == "true") {
    nodes_[me].kind = 't';
    pos_ += 4;
  } else if (text_.substr(pos_, 5) == "false") {
    nodes_[me].kind = 'f';
    pos_ += 5;
  } else if (text_.substr(pos_, 4) == "null") {
    nodes_[me].kind = 'z';
    pos_ += 4;
  } else {
    return false;
  }
  nodes_[me].end = static_cast<uint32_t>(pos_);
  nodes_[me].canon = irregular_ == irregular_before;
  return true;
}

// A string literal at pos_ (on its quote): RFC 8259 escapes; an escape the
// dump would not write counts as irregular.
bool SpanTree::String() {
  ++pos_;
  const auto* s = reinterpret_cast<const unsigned char*>(text_.data());
  const size_t n = text_.size();
  auto hex = [](unsigned char h) {
    return h >= '0' && h <= '9'   ? h - '0'
           : h >= 'a' && h <= 'f' ? h - 'a' + 10
           : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                  : -1;
  };
  // The \uXXXX at p: its value, or -1.
  auto u4 = [&](size_t p) {
    if (p + 6 > n || s[p] != '\\' || s[p + 1] != 'u') return -1;
    int v = 0;
    for (size_t k = p + 2; k < p + 6; ++k) {
      const int h = hex(s[k]);
      if (h < 0) return -1;
      v = v * 16 + h;
    }
    return v;
  };
  // Bytes that need no look: printable ASCII other than '"' and '\\'.
  static constexpr auto kPlain = [] {
    std::array<bool, 256> t{};
    for (int c = 0x20; c < 0x80; ++c) t[c] = c != '"' && c != '\\';
    return t;
  }();
  while (pos_ < n) {
    while (pos_ < n && kPlain[s[pos_]]) ++pos_;
    if (pos_ >= n) break;
    const unsigned char c = s[pos_];
    if (c == '"') {
      ++pos_;
      return true;
    }
    if (c < 0x20) return false;
    if (c == '\\') {
      if (pos_ + 1 >= n) return false;
      const char e = static_cast<char>(s[pos_ + 1]);
      if (e == '"' || e == '\\' || e == 'b' || e == 'f' || e == 'n' ||
          e == 'r' || e == 't') {
        pos_ += 2;
        continue;
      }
      if (e == '/') {
        ++irregular_;
        pos_ += 2;
        continue;
      }
      const int v = u4(pos_);
      if (v < 0) return false;
      if (v >= 0xd800 && v <= 0xdbff) {
        const int low = u4(pos_ + 6);
        if (low < 0xdc00 || low > 0xdfff) return false;  // lone surrogate
        ++irregular_;
        pos_ += 12;
        continue;
      }
      if (v >= 0xdc00 && v <= 0xdfff) return false;  // lone surrogate
      // The dump writes \u00xx (lowercase) only for control bytes without
      // a short escape.
      const bool dump_form = v < 0x20 && v != 8 && v != 9 && v != 10 &&
                             v != 12 && v != 13 && s[pos_ + 2] == '0' &&
                             s[pos_ + 3] == '0' &&
                             !(s[pos_ + 4] >= 'A' && s[pos_ + 4] <= 'F') &&
                             !(s[pos_ + 5] >= 'A' && s[pos_ + 5] <= 'F');
      if (!dump_form) ++irregular_;
      pos_ += 6;
      continue;
    }
    if (c < 0x80) {
      ++pos_;
      continue;
    }
    // UTF-8 (RFC 3629): no overlong forms, no surrogates, <= U+10FFFF.
    int len = 0;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      if (c == 0xe0) lo = 0xa0;
      if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      if (c == 0xf0) lo = 0x90;
      if (c == 0xf4) hi = 0x8f;
    } else {
      return false;
    }
    if (pos_ + len > n) return false;
    if (s[pos_ + 1] < lo || s[pos_ + 1] > hi) return false;
    for (int k = 2; k < len; ++k) {
      if (s[pos_ + k] < 0x80 || s[pos_ + k] > 0xbf) return false;
    }
    pos_ += len;
  }
  return false;
}

bool SpanTree::Number() {
  const size_t start = pos_;
  const size_t n = text_.size();
  auto digits = [&] {
    const size_t d = pos_;
    while (pos_ < n && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
    return pos_ > d;
  };
  const bool negative = text_[pos_] == '-';
  if (negative) ++pos_;
  if (pos_ < n && text_[pos_] == '0') {
    ++pos_;
  } else if (!digits()) {
    return false;
  }
  bool plain = true;
  if (pos_ < n && text_[pos_] == '.') {
    ++pos_;
    if (!digits()) return false;
    plain = false;
  }
  if (pos_ < n && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    ++pos_;
    if (pos_ < n && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
    if (!digits()) return false;
    plain = false;
  }
  const std::string_view tok = text_.substr(start, pos_ - start);
  bool dump_form = false;
  if (plain) {
    // In range of int64 (negative) / uint64, not "-0": the dump writes it
    // back.
    const std::string_view mag = negative ? tok.substr(1) : tok;
    const std::string_view limit =
        negative ? "9223372036854775808" : "18446744073709551615";
    dump_form = tok != "-0" && (mag.size() < limit.size() ||
                                (mag.size() == limit.size() && mag <= limit));
  } else {
    try {
      dump_form = nlohmann::ordered_json::parse(tok).dump() == tok;
    } catch (const std::exception&) {
      dump_form = false;
    }
  }
  if (!dump_form) ++irregular_;
  return true;
}

}  // namespace toolcache::prompt_internal
