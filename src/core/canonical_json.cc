// RFC 8785 canonical JSON: a strict single-pass parser that writes the
// canonical form as it goes, and the same serializer over nlohmann::json.
//
// Invariants of the text path (Parser):
//   - pos_ only moves forward; every byte of the input is looked at once by the
//     tokenizer (object members are later moved as opaque byte ranges).
//   - out_ always holds the canonical form of everything parsed so far, except
//     that the members of the innermost open objects are in input order; when
//     an object closes, its members are re-ordered (only if they were not
//     already sorted) and dropped members are removed.
//   - a canonical value never contains a raw byte that the input did not
//     validate: strings are valid UTF-8, numbers are finite doubles.
//   - the first failure wins: error_ is set once, then every function returns
//     false up the stack without touching out_ again.
//   - a number is written as AppendEs6Number writes it, except under
//     NumberForm::kExactIntegers for an integer that text would not denote
//     exactly (ExactIntegerText); such a literal has more than 15
//     significant digits, so shorter literals skip the check entirely and
//     ordinary documents produce exactly the RFC 8785 bytes.
#include "toolcache/canonical_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <numeric>
#include <system_error>
#include <utility>

#include "src/core/canonical_json_internal.h"

namespace toolcache {
namespace jcs {

void AppendEs6Number(double d, std::string* out) {
  if (d == 0) {  // +0 and -0
    out->push_back('0');
    return;
  }
  if (d < 0) {
    out->push_back('-');
    d = -d;
  }
  // Shortest round-trip digits, closest to d: exactly the digits and
  // exponent ECMAScript's Number::toString asks for (k and n of 7.1.12.1).
  char buf[40];
  std::to_chars_result r =
      std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  const char* p = buf;
  char digits[24];
  int k = 0;
  digits[k++] = *p++;
  if (*p == '.') {
    ++p;
    while (*p != 'e') digits[k++] = *p++;
  }
  ++p;  // 'e'
  const bool negative_exp = *p == '-';
  ++p;  // sign
  int e = 0;
  while (p < r.ptr) e = e * 10 + (*p++ - '0');
  if (negative_exp) e = -e;
  const int n = e + 1;  // value = 0.digits * 10^n
  if (k <= n && n <= 21) {
    out->append(digits, k);
    out->append(static_cast<size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out->append(digits, n);
    out->push_back('.');
    out->append(digits + n, k - n);
  } else if (-6 < n && n <= 0) {
    out->append("0.");
    out->append(static_cast<size_t>(-n), '0');
    out->append(digits, k);
  } else {
    out->push_back(digits[0]);
    if (k > 1) {
      out->push_back('.');
      out->append(digits + 1, k - 1);
    }
    out->push_back('e');
    const int x = n - 1;
    out->push_back(x < 0 ? '-' : '+');
    char ebuf[8];
    std::to_chars_result er =
        std::to_chars(ebuf, ebuf + sizeof(ebuf), x < 0 ? -x : x);
    out->append(ebuf, er.ptr);
  }
}

void AppendJcsString(std::string_view utf8, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t run = 0;  // start of the pending verbatim run
  for (size_t i = 0; i < utf8.size(); ++i) {
    const auto c = static_cast<unsigned char>(utf8[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out->append(utf8.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\f':
        out->append("\\f");
        break;
      case '\r':
        out->append("\\r");
        break;
      default: {
        const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
        out->append(esc, 6);
      }
    }
  }
  out->append(utf8.data() + run, utf8.size() - run);
  out->push_back('"');
}

namespace {

// Decodes the code point at s[*i] (valid UTF-8) and advances *i.
uint32_t DecodeUtf8(std::string_view s, size_t* i) {
  const auto b0 = static_cast<unsigned char>(s[*i]);
  if (b0 < 0x80) {
    *i += 1;
    return b0;
  }
  auto cont = [&](size_t j) {
    return static_cast<uint32_t>(static_cast<unsigned char>(s[*i + j]) & 0x3F);
  };
  uint32_t cp;
  if (b0 < 0xE0) {
    cp = ((b0 & 0x1Fu) << 6) | cont(1);
    *i += 2;
  } else if (b0 < 0xF0) {
    cp = ((b0 & 0x0Fu) << 12) | (cont(1) << 6) | cont(2);
    *i += 3;
  } else {
    cp = ((b0 & 0x07u) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3);
    *i += 4;
  }
  return cp;
}

// Maps a code point to a value whose order is the UTF-16 code-unit order:
// U+0000..U+D7FF < U+10000..U+10FFFF (high surrogates D800..DBFF) <
// U+E000..U+FFFF.
uint32_t Utf16Rank(uint32_t cp) {
  if (cp < 0xD800) return cp;
  if (cp >= 0x10000) return 0xD800 + (cp - 0x10000);
  return cp + 0x110000;
}

}  // namespace

bool Utf16Less(std::string_view a, std::string_view b) {
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const auto ca = static_cast<unsigned char>(a[i]);
    const auto cb = static_cast<unsigned char>(b[j]);
    if (ca < 0x80 && cb < 0x80) {  // ASCII fast path
      if (ca != cb) return ca < cb;
      ++i;
      ++j;
      continue;
    }
    const uint32_t ra = Utf16Rank(DecodeUtf8(a, &i));
    const uint32_t rb = Utf16Rank(DecodeUtf8(b, &j));
    if (ra != rb) return ra < rb;
  }
  return i == a.size() && j < b.size();
}

size_t Utf8SequenceLength(std::string_view s, size_t pos, const char** problem,
                          size_t* subpart) {
  const auto b0 = static_cast<unsigned char>(s[pos]);
  if (b0 < 0x80) return 1;
  // Every failure below is at byte j of the sequence: bytes 0..j-1 form its
  // maximal ill-formed subpart.
  if (subpart != nullptr) *subpart = 1;
  auto at = [&](size_t j) -> int {
    return pos + j < s.size() ? static_cast<unsigned char>(s[pos + j]) : -1;
  };
  auto in = [](int b, int lo, int hi) { return b >= lo && b <= hi; };
  if (b0 < 0xC0) {
    *problem = "invalid UTF-8: unexpected continuation byte";
    return 0;
  }
  if (b0 < 0xC2) {
    *problem = "invalid UTF-8: overlong 2-byte encoding";
    return 0;
  }
  if (b0 > 0xF4) {
    *problem =
        "invalid UTF-8: byte can never start a sequence (code point above "
        "U+10FFFF)";
    return 0;
  }
  int len;
  int lo = 0x80;
  int hi = 0xBF;
  if (b0 < 0xE0) {
    len = 2;
  } else if (b0 < 0xF0) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  }
  const int b1 = at(1);
  if (b1 < 0) {
    *problem = "invalid UTF-8: truncated multi-byte sequence";
    return 0;
  }
  if (!in(b1, lo, hi)) {
    if (in(b1, 0x80, 0xBF)) {
      if (b0 == 0xED) {
        *problem = "invalid UTF-8: encoded surrogate (U+D800..U+DFFF)";
      } else if (b0 == 0xF4) {
        *problem = "invalid UTF-8: code point above U+10FFFF";
      } else {
        *problem = "invalid UTF-8: overlong encoding";
      }
    } else {
      *problem = "invalid UTF-8: missing continuation byte";
    }
    return 0;
  }
  for (int j = 2; j < len; ++j) {
    if (subpart != nullptr) *subpart = static_cast<size_t>(j);
    const int b = at(static_cast<size_t>(j));
    if (b < 0) {
      *problem = "invalid UTF-8: truncated multi-byte sequence";
      return 0;
    }
    if (!in(b, 0x80, 0xBF)) {
      *problem = "invalid UTF-8: missing continuation byte";
      return 0;
    }
  }
  return static_cast<size_t>(len);
}

size_t FindInvalidUtf8(std::string_view s, const char** problem) {
  size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t len = Utf8SequenceLength(s, i, problem);
    if (len == 0) return i;
    i += len;
  }
  return s.size();
}

DecimalParts ParseDecimal(std::string_view number) {
  DecimalParts d;
  size_t i = 0;
  if (i < number.size() && number[i] == '-') {
    d.negative = true;
    ++i;
  }
  int64_t fraction_digits = 0;
  bool in_fraction = false;
  for (; i < number.size(); ++i) {
    const char c = number[i];
    if (c == '.') {
      in_fraction = true;
    } else if (c >= '0' && c <= '9') {
      if (!(d.digits.empty() && c == '0')) d.digits.push_back(c);
      if (in_fraction) ++fraction_digits;
    } else {
      break;  // 'e' / 'E'
    }
  }
  int64_t exp10 = 0;
  if (i < number.size()) {
    ++i;  // 'e'
    bool negative_exp = false;
    if (i < number.size() && (number[i] == '+' || number[i] == '-')) {
      negative_exp = number[i++] == '-';
    }
    constexpr int64_t kCap = int64_t{1} << 40;
    for (; i < number.size(); ++i) {
      exp10 = std::min<int64_t>(exp10 * 10 + (number[i] - '0'), kCap);
    }
    if (negative_exp) exp10 = -exp10;
  }
  d.exponent = exp10 - fraction_digits;
  size_t keep = d.digits.size();
  while (keep > 0 && d.digits[keep - 1] == '0') --keep;
  d.exponent += static_cast<int64_t>(d.digits.size() - keep);
  d.digits.resize(keep);
  if (d.digits.empty()) {
    d.negative = false;
    d.exponent = 0;
  }
  return d;
}

bool ExactIntegerText(std::string_view literal, std::string_view es6,
                      std::string* exact) {
  DecimalParts lit = ParseDecimal(literal);
  // Zero and non-integers keep the double; up to 15 significant digits a
  // double round-trips the decimal (DBL_DIG), so ECMAScript's shortest
  // digits are exactly these.
  if (lit.digits.empty() || lit.exponent < 0 || lit.digits.size() <= 15) {
    return false;
  }
  const DecimalParts shown = ParseDecimal(es6);
  if (shown.negative == lit.negative && shown.digits == lit.digits &&
      shown.exponent == lit.exponent) {
    return false;
  }
  // A finite double is below 2^1024 (309 digits): the string stays small.
  if (static_cast<int64_t>(lit.digits.size()) + lit.exponent > 400) {
    return false;
  }
  exact->clear();
  if (lit.negative) exact->push_back('-');
  exact->append(lit.digits);
  exact->append(static_cast<size_t>(lit.exponent), '0');
  return true;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace jcs

namespace {

using jcs::AppendEs6Number;
using jcs::AppendJcsString;
using jcs::AppendUtf8;
using jcs::Utf16Less;

bool IsDroppedTopLevelMember(std::string_view name,
                             const CanonicalOptions& options) {
  if (options.drop_meta && name == "_meta") return true;
  return std::find(options.ignore_fields.begin(), options.ignore_fields.end(),
                   name) != options.ignore_fields.end();
}

// A printable description of byte `c` for error messages.
std::string DescribeByte(unsigned char c) {
  if (c >= 0x21 && c < 0x7F) return fmt::format("'{}'", static_cast<char>(c));
  return fmt::format("byte 0x{:02X}", c);
}

std::string Truncated(std::string_view s) {
  constexpr size_t kMax = 40;
  if (s.size() <= kMax) return std::string(s);
  // Do not cut a UTF-8 sequence in half.
  size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + "...";
}

// Documents parsed on this thread (ArgumentParsesOnThisThread).
thread_local uint64_t parses_on_this_thread = 0;

class Parser {
 public:
  // `report`, when given, receives the JSON Pointers of the integers
  // kExactIntegers writes differently from RFC 8785. `top`, when given,
  // receives the top-level members of an object document, in input order.
  Parser(std::string_view in, const CanonicalOptions& options,
         std::vector<std::string>* report = nullptr,
         std::vector<ArgumentMember>* top = nullptr)
      : in_(in),
        options_(options),
        exact_(options.numbers == NumberForm::kExactIntegers),
        report_(report),
        top_(top) {}

  Result<std::string> Run() {
    ++parses_on_this_thread;
    if (options_.max_bytes != 0 && in_.size() > options_.max_bytes) {
      return ResourceExhausted(fmt::format(
          "JSON input is {} bytes, larger than the limit of {} bytes",
          in_.size(), options_.max_bytes));
    }
    if (in_.size() >= 3 && in_.substr(0, 3) == "\xEF\xBB\xBF") {
      // Choice: a UTF-8 byte order mark is rejected rather than skipped
      // (RFC 8259 8.1 forbids sending one; silently skipping would let two
      // different byte strings share a key without the caller knowing).
      Fail(0, "byte order mark (U+FEFF) before the JSON value is not allowed");
      return std::move(error_);
    }
    out_.reserve(in_.size());
    SkipWhitespace();
    if (pos_ == in_.size()) {
      Fail(pos_, in_.empty() ? "empty input: expected a JSON value"
                             : "only whitespace: expected a JSON value");
      return std::move(error_);
    }
    if (!ParseValue(0)) return std::move(error_);
    SkipWhitespace();
    if (pos_ != in_.size()) {
      Fail(pos_, fmt::format("unexpected {} after the JSON value (trailing "
                             "garbage)",
                             DescribeByte(Byte(pos_))));
      return std::move(error_);
    }
    return std::move(out_);
  }

 private:
  unsigned char Byte(size_t i) const {
    return static_cast<unsigned char>(in_[i]);
  }
  bool AtEnd() const { return pos_ >= in_.size(); }
  int Peek() const { return AtEnd() ? -1 : Byte(pos_); }

  bool Fail(size_t offset, std::string_view problem,
            StatusCode code = StatusCode::kInvalidArgument) {
    if (!error_.ok()) return false;
    size_t line = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < offset && i < in_.size(); ++i) {
      if (in_[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    // Choice: columns count bytes (1-based); byte offsets are 0-based.
    error_ =
        Status(code, fmt::format("line {}, column {} (byte {}): {}", line,
                                 offset - line_start + 1, offset, problem));
    return false;
  }

  void SkipWhitespace() {
    while (pos_ < in_.size()) {
      const char c = in_[pos_];
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return;
      ++pos_;
    }
  }

  bool ParseValue(int32_t depth) {
    const int c = Peek();
    switch (c) {
      case '{':
        return ParseObject(depth);
      case '[':
        return ParseArray(depth);
      case '"':
        if (!ParseString(&scratch_)) return false;
        AppendJcsString(scratch_, &out_);
        return true;
      case 't':
        return ParseLiteral("true");
      case 'f':
        return ParseLiteral("false");
      case 'n':
        return ParseLiteral("null");
      case -1:
        return Fail(pos_, "unexpected end of input: expected a JSON value");
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return ParseNumber();
        if (c == 'N' || c == 'I') {
          return Fail(
              pos_, "NaN and Infinity are not valid JSON numbers (RFC 8259 6)");
        }
        return Fail(pos_,
                    fmt::format("unexpected {}: expected a JSON value",
                                DescribeByte(static_cast<unsigned char>(c))));
    }
  }

  bool ParseLiteral(std::string_view word) {
    if (in_.substr(pos_, word.size()) != word) {
      return Fail(pos_, fmt::format("invalid literal: expected '{}'", word));
    }
    pos_ += word.size();
    out_.append(word);
    return true;
  }

  bool EnterContainer(int32_t depth) {
    if (depth + 1 > options_.max_depth) {
      return Fail(pos_,
                  fmt::format("nesting depth exceeds the limit of {} levels",
                              options_.max_depth),
                  StatusCode::kResourceExhausted);
    }
    return true;
  }

  bool ParseArray(int32_t depth) {
    if (!EnterContainer(depth)) return false;
    ++pos_;  // '['
    out_.push_back('[');
    SkipWhitespace();
    if (Peek() == ']') {
      ++pos_;
      out_.push_back(']');
      return true;
    }
    for (size_t index = 0;; ++index) {
      SkipWhitespace();
      if (report_ != nullptr) path_.push_back(std::to_string(index));
      if (!ParseValue(depth + 1)) return false;
      if (report_ != nullptr) path_.pop_back();
      SkipWhitespace();
      const int c = Peek();
      if (c == ',') {
        ++pos_;
        out_.push_back(',');
        continue;
      }
      if (c == ']') {
        ++pos_;
        out_.push_back(']');
        return true;
      }
      if (c == -1) return Fail(pos_, "unexpected end of input: unclosed array");
      return Fail(pos_,
                  fmt::format("unexpected {}: expected ',' or ']' in array",
                              DescribeByte(static_cast<unsigned char>(c))));
    }
  }

  struct Member {
    std::string name;    // unescaped UTF-8
    size_t name_offset;  // input offset of the name's opening quote
    size_t begin;        // out_ range of `"name":value`
    size_t value_begin;  // out_ offset of the value
    size_t end;
    bool dropped;
  };

  bool ParseObject(int32_t depth) {
    if (!EnterContainer(depth)) return false;
    const size_t object_begin = out_.size();
    ++pos_;  // '{'
    out_.push_back('{');
    SkipWhitespace();
    if (Peek() == '}') {
      ++pos_;
      out_.push_back('}');
      return true;
    }
    std::vector<Member> members;
    bool in_order = true;  // sorted strictly ascending, nothing dropped
    while (true) {
      SkipWhitespace();
      if (Peek() != '"') {
        if (AtEnd())
          return Fail(pos_, "unexpected end of input: unclosed object");
        return Fail(pos_, fmt::format("unexpected {}: expected a string member "
                                      "name in object",
                                      DescribeByte(Byte(pos_))));
      }
      Member m;
      m.name_offset = pos_;
      if (!ParseString(&m.name)) return false;
      SkipWhitespace();
      if (Peek() != ':') {
        if (AtEnd())
          return Fail(pos_, "unexpected end of input: unclosed object");
        return Fail(pos_,
                    fmt::format("unexpected {}: expected ':' after member "
                                "name",
                                DescribeByte(Byte(pos_))));
      }
      ++pos_;
      SkipWhitespace();
      if (!members.empty()) out_.push_back(',');
      m.begin = out_.size();
      AppendJcsString(m.name, &out_);
      out_.push_back(':');
      m.value_begin = out_.size();
      // Choice: dropped members are validated like the rest (strictness).
      m.dropped = depth == 0 && IsDroppedTopLevelMember(m.name, options_);
      if (report_ != nullptr) {
        path_.push_back(m.name);
        if (depth == 0) in_dropped_ = m.dropped;
      }
      if (!ParseValue(depth + 1)) return false;
      if (report_ != nullptr) path_.pop_back();
      m.end = out_.size();
      if (m.dropped ||
          (!members.empty() && !Utf16Less(members.back().name, m.name))) {
        in_order = false;
      }
      members.push_back(std::move(m));
      SkipWhitespace();
      const int c = Peek();
      if (c == ',') {
        ++pos_;
        continue;
      }
      if (c == '}') {
        ++pos_;
        break;
      }
      if (c == -1)
        return Fail(pos_, "unexpected end of input: unclosed object");
      return Fail(pos_,
                  fmt::format("unexpected {}: expected ',' or '}}' in "
                              "object",
                              DescribeByte(static_cast<unsigned char>(c))));
    }
    if (in_order) {
      out_.push_back('}');
      if (depth == 0 && top_ != nullptr) {
        for (Member& m : members) {
          top_->push_back({.name = std::move(m.name),
                           .value_offset = m.value_begin,
                           .value_size = m.end - m.value_begin});
        }
      }
      return true;
    }
    std::vector<uint32_t> order(members.size());
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      if (members[a].name == members[b].name) return a < b;
      return Utf16Less(members[a].name, members[b].name);
    });
    for (size_t i = 1; i < order.size(); ++i) {
      const Member& prev = members[order[i - 1]];
      const Member& cur = members[order[i]];
      if (prev.name == cur.name) {
        std::string shown;
        AppendJcsString(cur.name, &shown);
        // Choice: a duplicate is reported at its later occurrence.
        return Fail(
            std::max(prev.name_offset, cur.name_offset),
            fmt::format("duplicate object member name {}", Truncated(shown)));
      }
    }
    // The top-level members, in input order: where each value lands in the
    // sorted output (the top-level object starts out_), or a dropped
    // member's canonical value.
    const bool record = depth == 0 && top_ != nullptr;
    if (record) top_->resize(members.size());
    std::string sorted;
    sorted.reserve(out_.size() - object_begin + 1);
    sorted.push_back('{');
    bool first = true;
    for (uint32_t idx : order) {
      const Member& m = members[idx];
      if (m.dropped) {
        if (record) {
          (*top_)[idx].dropped = true;
          (*top_)[idx].dropped_value =
              out_.substr(m.value_begin, m.end - m.value_begin);
        }
        continue;
      }
      if (!first) sorted.push_back(',');
      first = false;
      if (record) {
        (*top_)[idx].value_offset = sorted.size() + (m.value_begin - m.begin);
        (*top_)[idx].value_size = m.end - m.value_begin;
      }
      sorted.append(out_, m.begin, m.end - m.begin);
    }
    sorted.push_back('}');
    out_.resize(object_begin);
    out_.append(sorted);
    if (record) {
      for (size_t i = 0; i < members.size(); ++i) {
        (*top_)[i].name = std::move(members[i].name);
      }
    }
    return true;
  }

  // Reads 4 hex digits at pos_; returns -1 if they are not all hex.
  int ReadHex4() {
    if (in_.size() - pos_ < 4) return -1;
    int v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = in_[pos_ + static_cast<size_t>(i)];
      int d;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        d = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        d = c - 'A' + 10;
      } else {
        return -1;
      }
      v = v * 16 + d;
    }
    pos_ += 4;
    return v;
  }

  // REQUIRES: Peek() == '"'. Leaves the unescaped UTF-8 in *s.
  bool ParseString(std::string* s) {
    const size_t open = pos_;
    ++pos_;
    s->clear();
    while (true) {
      // Copy the longest run of bytes that need no attention.
      const size_t run = pos_;
      while (pos_ < in_.size()) {
        const unsigned char c = Byte(pos_);
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
        ++pos_;
      }
      s->append(in_.data() + run, pos_ - run);
      if (AtEnd()) {
        return Fail(open, "unterminated string (missing closing '\"')");
      }
      const unsigned char c = Byte(pos_);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) {
        return Fail(pos_,
                    fmt::format("raw control character U+{:04X} in string "
                                "(must be escaped)",
                                c));
      }
      if (c >= 0x80) {
        const char* problem = "";
        const size_t len = jcs::Utf8SequenceLength(in_, pos_, &problem);
        if (len == 0) return Fail(pos_, problem);
        s->append(in_.data() + pos_, len);
        pos_ += len;
        continue;
      }
      // Backslash escape.
      const size_t esc = pos_;
      ++pos_;
      if (AtEnd())
        return Fail(open, "unterminated string (missing closing '\"')");
      const char e = in_[pos_++];
      switch (e) {
        case '"':
          s->push_back('"');
          break;
        case '\\':
          s->push_back('\\');
          break;
        case '/':
          s->push_back('/');
          break;
        case 'b':
          s->push_back('\b');
          break;
        case 'f':
          s->push_back('\f');
          break;
        case 'n':
          s->push_back('\n');
          break;
        case 'r':
          s->push_back('\r');
          break;
        case 't':
          s->push_back('\t');
          break;
        case 'u': {
          const int u = ReadHex4();
          if (u < 0) {
            return Fail(esc, "invalid \\u escape: expected 4 hex digits");
          }
          uint32_t cp = static_cast<uint32_t>(u);
          if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return Fail(esc, fmt::format("lone low surrogate \\u{:04X} (not "
                                         "preceded by a high surrogate)",
                                         cp));
          }
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            int lo = -1;
            if (in_.substr(pos_, 2) == "\\u") {
              pos_ += 2;
              lo = ReadHex4();
              if (lo < 0) {
                return Fail(pos_ - 2,
                            "invalid \\u escape: expected 4 hex digits");
              }
            }
            if (lo < 0xDC00 || lo > 0xDFFF) {
              return Fail(esc, fmt::format("unpaired high surrogate \\u{:04X} "
                                           "(must be followed by a \\uDC00-"
                                           "\\uDFFF escape)",
                                           cp));
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) +
                 (static_cast<uint32_t>(lo) - 0xDC00);
          }
          AppendUtf8(cp, s);
          break;
        }
        default:
          return Fail(esc,
                      fmt::format("invalid escape: backslash followed by {} "
                                  "in string",
                                  DescribeByte(static_cast<unsigned char>(e))));
      }
    }
  }

  bool ReadDigits() {
    const size_t start = pos_;
    while (pos_ < in_.size() && in_[pos_] >= '0' && in_[pos_] <= '9') ++pos_;
    return pos_ > start;
  }

  bool ParseNumber() {
    const size_t start = pos_;
    if (in_[pos_] == '-') {
      ++pos_;
      if (Peek() == 'I') {
        return Fail(start,
                    "NaN and Infinity are not valid JSON numbers (RFC 8259 6)");
      }
    }
    const size_t int_begin = pos_;
    if (Peek() == '0') {
      ++pos_;
      if (Peek() >= '0' && Peek() <= '9') {
        return Fail(start, "leading zeros are not allowed in numbers");
      }
    } else if (!ReadDigits()) {
      return Fail(pos_, "invalid number: expected a digit");
    }
    const size_t int_end = pos_;
    size_t frac_begin = pos_;
    size_t frac_end = pos_;
    if (Peek() == '.') {
      ++pos_;
      frac_begin = pos_;
      if (!ReadDigits()) {
        return Fail(pos_, "invalid number: expected a digit after '.'");
      }
      frac_end = pos_;
    }
    if (Peek() == 'e' || Peek() == 'E') {
      ++pos_;
      if (Peek() == '+' || Peek() == '-') ++pos_;
      if (!ReadDigits()) {
        return Fail(pos_, "invalid number: expected a digit in the exponent");
      }
    }
    // Choice: a plain integer of at most 15 digits (ids, counts, indexes:
    // most numbers in tool arguments) is its own ECMAScript form -- a
    // double holds it exactly and prints it without exponent -- so it is
    // copied rather than converted and printed back ("-0" is "0").
    if (pos_ == int_end && int_end - int_begin <= 15) {
      if (int_end - int_begin == 1 && in_[int_begin] == '0') {
        out_.push_back('0');
      } else {
        out_.append(in_.substr(start, pos_ - start));
      }
      return true;
    }
    double v = 0;
    const std::from_chars_result r =
        std::from_chars(in_.data() + start, in_.data() + pos_, v);
    if (r.ec == std::errc::result_out_of_range) {
      // Choice: underflow -> 0 (as JSON.parse), overflow -> error (I-JSON).
      // Overflow is an error (I-JSON: the value is not a finite double);
      // underflow rounds to zero like every IEEE-754 parser.
      if (MagnitudeExponent(int_begin, int_end, frac_begin, frac_end) > 0) {
        return Fail(start,
                    fmt::format("number {} is out of the range of an "
                                "IEEE-754 double (I-JSON)",
                                Truncated(in_.substr(start, pos_ - start))));
      }
      v = 0;
    } else if (r.ec != std::errc() || r.ptr != in_.data() + pos_ ||
               !std::isfinite(v)) {
      return Fail(start, "invalid number");
    }
    const size_t written = out_.size();
    AppendEs6Number(v, &out_);
    // Only a literal of more than 15 significant digits can be an integer a
    // double does not hold (ExactIntegerText): shorter ones skip the check.
    if ((exact_ || report_ != nullptr) &&
        (int_end - int_begin) + (frac_end - frac_begin) > 15) {
      std::string exact;
      if (jcs::ExactIntegerText(in_.substr(start, pos_ - start),
                                std::string_view(out_).substr(written),
                                &exact)) {
        if (report_ != nullptr && !in_dropped_) report_->push_back(Pointer());
        if (exact_) {
          out_.resize(written);
          out_.append(exact);
        }
      }
    }
    return true;
  }

  // RFC 6901 pointer of the value being parsed.
  std::string Pointer() const {
    std::string p;
    for (const std::string& seg : path_) {
      p += '/';
      for (char c : seg) {
        if (c == '~') {
          p += "~0";
        } else if (c == '/') {
          p += "~1";
        } else {
          p += c;
        }
      }
    }
    return p;
  }

  // Decimal exponent of the leading significant digit of the number whose
  // integer digits are [ib, ie), fraction digits [fb, fe) and exponent
  // follows fe (or ie); saturates. Only its sign is used.
  int64_t MagnitudeExponent(size_t ib, size_t ie, size_t fb, size_t fe) const {
    int64_t exp10 = 0;
    size_t i = (fe > fb) ? fe : ie;
    if (i < pos_ && (in_[i] == 'e' || in_[i] == 'E')) {
      ++i;
      bool neg = false;
      if (in_[i] == '+' || in_[i] == '-') neg = in_[i++] == '-';
      for (; i < pos_; ++i) {
        exp10 =
            std::min<int64_t>(exp10 * 10 + (in_[i] - '0'), int64_t{1} << 40);
      }
      if (neg) exp10 = -exp10;
    }
    size_t lead = ib;
    while (lead < ie && in_[lead] == '0') ++lead;
    if (lead < ie) return exp10 + static_cast<int64_t>(ie - lead) - 1;
    size_t f = fb;
    while (f < fe && in_[f] == '0') ++f;
    return exp10 - static_cast<int64_t>(f - fb) - 1;
  }

  std::string_view in_;
  const CanonicalOptions& options_;
  const bool exact_;  // NumberForm::kExactIntegers
  std::vector<std::string>* report_;
  std::vector<ArgumentMember>* top_;
  std::vector<std::string> path_;  // only maintained with report_
  bool in_dropped_ = false;        // inside a dropped top-level member
  size_t pos_ = 0;
  std::string out_;
  std::string scratch_;
  Status error_;
};

// Serializes an nlohmann document. On failure, path_ holds the JSON Pointer
// segments from the failing value up to the root (reversed).
class ValueWriter {
 public:
  explicit ValueWriter(const CanonicalOptions& options) : options_(options) {}

  Result<std::string> Run(const nlohmann::json& value) {
    std::string out;
    if (!Write(value, 0, &out)) {
      std::string pointer;
      for (auto it = path_.rbegin(); it != path_.rend(); ++it) {
        pointer += '/';
        pointer += *it;
      }
      return Status(code_, fmt::format("at JSON pointer \"{}\": {}",
                                       Truncated(pointer), problem_));
    }
    if (options_.max_bytes != 0 && out.size() > options_.max_bytes) {
      return ResourceExhausted(fmt::format(
          "canonical JSON is {} bytes, larger than the limit of {} bytes",
          out.size(), options_.max_bytes));
    }
    return out;
  }

 private:
  bool Fail(std::string problem,
            StatusCode code = StatusCode::kInvalidArgument) {
    problem_ = std::move(problem);
    code_ = code;
    return false;
  }

  static std::string PointerSegment(std::string_view name) {
    std::string seg;
    for (char c : name) {
      if (c == '~') {
        seg += "~0";
      } else if (c == '/') {
        seg += "~1";
      } else {
        seg += c;
      }
    }
    return seg;
  }

  bool CheckUtf8(std::string_view s, std::string_view what) {
    const char* problem = "";
    const size_t bad = jcs::FindInvalidUtf8(s, &problem);
    if (bad == s.size()) return true;
    return Fail(fmt::format("{} at byte {}: {}", what, bad, problem));
  }

  bool Write(const nlohmann::json& v, int32_t depth, std::string* out) {
    using Type = nlohmann::json::value_t;
    switch (v.type()) {
      case Type::null:
        out->append("null");
        return true;
      case Type::boolean:
        out->append(v.get<bool>() ? "true" : "false");
        return true;
      case Type::number_integer:
        AppendInteger(v.get<int64_t>(), out);
        return true;
      case Type::number_unsigned:
        AppendInteger(v.get<uint64_t>(), out);
        return true;
      case Type::number_float: {
        const double d = v.get<double>();
        if (!std::isfinite(d)) {
          return Fail("NaN and Infinity are not valid JSON numbers");
        }
        if (options_.numbers == NumberForm::kExactIntegers &&
            std::fabs(d) >= 9007199254740992.0 && std::floor(d) == d) {
          // Choice: refuse rather than guess. nlohmann keeps integer
          // literals up to 2^64 exact but stores 9007199254740993.0 or
          // 18446744073709551617 as a rounded double: the digits a server
          // would see are gone, and a key from them could equate two calls.
          return Fail(fmt::format(
              "the integer {} was stored as a double by the JSON parser and "
              "may have lost digits (beyond 2^53); build the key from the "
              "raw text instead",
              nlohmann::json(d).dump()));
        }
        AppendEs6Number(d, out);
        return true;
      }
      case Type::string: {
        const auto& s = v.get_ref<const std::string&>();
        if (!CheckUtf8(s, "string")) return false;
        AppendJcsString(s, out);
        return true;
      }
      case Type::array: {
        if (depth + 1 > options_.max_depth) return DepthExceeded();
        out->push_back('[');
        size_t i = 0;
        for (const nlohmann::json& e : v) {
          if (i != 0) out->push_back(',');
          if (!Write(e, depth + 1, out)) {
            path_.push_back(std::to_string(i));
            return false;
          }
          ++i;
        }
        out->push_back(']');
        return true;
      }
      case Type::object: {
        if (depth + 1 > options_.max_depth) return DepthExceeded();
        using Item = std::pair<const std::string*, const nlohmann::json*>;
        std::vector<Item> items;
        items.reserve(v.size());
        for (auto it = v.begin(); it != v.end(); ++it) {
          if (!CheckUtf8(it.key(), "member name")) {
            path_.push_back(PointerSegment(it.key()));
            return false;
          }
          if (depth == 0 && IsDroppedTopLevelMember(it.key(), options_)) {
            continue;
          }
          items.emplace_back(&it.key(), &it.value());
        }
        std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
          return Utf16Less(*a.first, *b.first);
        });
        out->push_back('{');
        bool first = true;
        for (const Item& item : items) {
          if (!first) out->push_back(',');
          first = false;
          AppendJcsString(*item.first, out);
          out->push_back(':');
          if (!Write(*item.second, depth + 1, out)) {
            path_.push_back(PointerSegment(*item.first));
            return false;
          }
        }
        out->push_back('}');
        return true;
      }
      case Type::binary:
        return Fail("binary values have no JSON form");
      case Type::discarded:
        return Fail("discarded value (from a failed or filtered parse)");
    }
    return Fail("unknown value type");
  }

  // An int64/uint64 value: RFC 8785 writes its double; kExactIntegers its
  // exact digits when that double's text would not denote it.
  template <typename Int>
  void AppendInteger(Int i, std::string* out) {
    const size_t written = out->size();
    AppendEs6Number(static_cast<double>(i), out);
    if (options_.numbers != NumberForm::kExactIntegers) return;
    const std::string literal = std::to_string(i);
    std::string exact;
    if (jcs::ExactIntegerText(literal, std::string_view(*out).substr(written),
                              &exact)) {
      out->resize(written);
      out->append(exact);
    }
  }

  bool DepthExceeded() {
    return Fail(fmt::format("nesting depth exceeds the limit of {} levels",
                            options_.max_depth),
                StatusCode::kResourceExhausted);
  }

  const CanonicalOptions& options_;
  std::vector<std::string> path_;
  std::string problem_;
  StatusCode code_ = StatusCode::kInvalidArgument;
};

}  // namespace

Result<std::string> CanonicalizeJson(std::string_view json,
                                     const CanonicalOptions& options) {
  return Parser(json, options).Run();
}

namespace jcs {

Result<std::string> CanonicalizeWithMembers(
    std::string_view json, const CanonicalOptions& options,
    std::vector<ArgumentMember>* members) {
  return Parser(json, options, nullptr, members).Run();
}

}  // namespace jcs

std::string_view CanonicalArguments::Value(const ArgumentMember& m) const {
  if (m.dropped) return m.dropped_value;
  return std::string_view(canonical).substr(m.value_offset, m.value_size);
}

std::string DecodeCanonicalString(std::string_view literal) {
  std::string out;
  if (literal.size() < 2) return out;
  literal = literal.substr(1, literal.size() - 2);
  out.reserve(literal.size());
  for (size_t i = 0; i < literal.size(); ++i) {
    if (literal[i] != '\\' || i + 1 >= literal.size()) {
      out.push_back(literal[i]);
      continue;
    }
    switch (literal[++i]) {
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u': {  // \u00xx: a control character (AppendJcsString)
        unsigned v = 0;
        for (size_t k = i + 1; k < i + 5 && k < literal.size(); ++k) {
          const char c = literal[k];
          v = v * 16 +
              static_cast<unsigned>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
        }
        out.push_back(static_cast<char>(v));
        i += 4;
        break;
      }
      default:  // '"' and '\\'
        out.push_back(literal[i]);
    }
  }
  return out;
}

uint64_t ArgumentParsesOnThisThread() { return parses_on_this_thread; }

void CountArgumentParse() { ++parses_on_this_thread; }

Result<std::string> CanonicalizeJsonValue(const nlohmann::json& value,
                                          const CanonicalOptions& options) {
  return ValueWriter(options).Run(value);
}

Result<std::vector<std::string>> FindInexactIntegers(
    std::string_view json, const CanonicalOptions& options) {
  std::vector<std::string> found;
  CanonicalOptions rfc = options;
  rfc.numbers = NumberForm::kRfc8785;
  Result<std::string> parsed = Parser(json, rfc, &found).Run();
  if (!parsed.ok()) return parsed.status();
  return found;
}

}  // namespace toolcache
