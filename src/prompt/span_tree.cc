// Invariants:
// - Read accepts a text only if nlohmann's dump of its parse is the same
//   bytes (span_tree.h lists the rules); every rejection is safe (the
//   caller uses the DOM), so the reader errs on the side of rejecting.
// - Nodes are stored in pre-order; a node's children are linked in order.
// Choice: a number with a fraction or an exponent is checked by parsing
// that one token with nlohmann and comparing its dump (the dump's double
// format is nlohmann's own; a scalar, not the body).
#include "src/prompt/span_tree.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "src/core/json.h"

namespace toolcache::prompt_internal {

bool SpanTree::Read(std::string_view text, uint32_t max_depth) {
  text_ = text;
  pos_ = 0;
  max_depth_ = max_depth;
  nodes_.clear();
  if (text.size() >= kNone) return false;
  uint32_t root = kNone;
  if (!Value(0, &root) || pos_ != text_.size()) {
    nodes_.clear();
    return false;
  }
  return true;
}

uint32_t SpanTree::Find(uint32_t n, std::string_view key) const {
  if (nodes_[n].kind != 'o') return kNone;
  for (uint32_t m = nodes_[n].first; m != kNone; m = nodes_[m].next) {
    std::string_view k = KeyRaw(m);
    if (k.size() == key.size() + 2 && k.substr(1, key.size()) == key &&
        k.find('\\') == std::string_view::npos) {
      return m;
    }
    if (k.find('\\') != std::string_view::npos) {
      std::string d;
      if (json::Unquote(k, &d) == json::Error::kOk && d == key) return m;
    }
  }
  return kNone;
}

std::string SpanTree::Text(uint32_t n) const {
  std::string out;
  if (nodes_[n].kind == 's') (void)json::Unquote(Raw(n), &out);
  return out;
}

bool SpanTree::Value(uint32_t depth, uint32_t* index) {
  if (pos_ >= text_.size()) return false;
  const uint32_t me = static_cast<uint32_t>(nodes_.size());
  nodes_.push_back(Node{});
  nodes_[me].begin = static_cast<uint32_t>(pos_);
  *index = me;
  const char c = text_[pos_];
  if (c == '{' || c == '[') {
    if (depth >= max_depth_) return false;
    const bool object = c == '{';
    nodes_[me].kind = object ? 'o' : 'a';
    ++pos_;
    const char close = object ? '}' : ']';
    uint32_t prev = kNone;
    std::vector<std::string_view> keys;
    if (pos_ < text_.size() && text_[pos_] == close) {
      ++pos_;
    } else {
      for (;;) {
        uint32_t key_begin = kNone;
        if (object) {
          key_begin = static_cast<uint32_t>(pos_);
          if (pos_ >= text_.size() || text_[pos_] != '"' || !String()) {
            return false;
          }
          keys.push_back(text_.substr(key_begin, pos_ - key_begin));
          if (pos_ >= text_.size() || text_[pos_] != ':') return false;
          ++pos_;
        }
        uint32_t child = kNone;
        if (!Value(depth + 1, &child)) return false;
        nodes_[child].key_begin = key_begin;
        if (prev == kNone) {
          nodes_[me].first = child;
        } else {
          nodes_[prev].next = child;
        }
        prev = child;
        ++nodes_[me].count;
        if (pos_ >= text_.size()) return false;
        if (text_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (text_[pos_] != close) return false;
        ++pos_;
        break;
      }
    }
    if (keys.size() > 1) {
      // Equal names have equal literals in dump form (one escape each).
      std::sort(keys.begin(), keys.end());
      if (std::adjacent_find(keys.begin(), keys.end()) != keys.end()) {
        return false;
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
  return true;
}

// A string literal at pos_ (on its quote), escaped as the dump does.
bool SpanTree::String() {
  ++pos_;
  const auto* s = reinterpret_cast<const unsigned char*>(text_.data());
  const size_t n = text_.size();
  while (pos_ < n) {
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
      // \u00xx, lowercase, only for control bytes the dump has no short
      // escape for.
      if (e != 'u' || pos_ + 6 > n || s[pos_ + 2] != '0' ||
          s[pos_ + 3] != '0') {
        return false;
      }
      auto hex = [](unsigned char h) {
        return h >= '0' && h <= '9'   ? h - '0'
               : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                      : -1;
      };
      const int hi = hex(s[pos_ + 4]), lo = hex(s[pos_ + 5]);
      if (hi < 0 || lo < 0) return false;
      const int v = hi * 16 + lo;
      if (v >= 0x20 || v == 8 || v == 9 || v == 10 || v == 12 || v == 13) {
        return false;
      }
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
  if (plain) {
    if (tok == "-0") return false;
    // In range of int64 (negative) / uint64: the dump writes it back.
    const std::string_view mag = negative ? tok.substr(1) : tok;
    const std::string_view limit =
        negative ? "9223372036854775808" : "18446744073709551615";
    return mag.size() < limit.size() ||
           (mag.size() == limit.size() && mag <= limit);
  }
  try {
    return nlohmann::ordered_json::parse(tok).dump() == tok;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace toolcache::prompt_internal
