// Invariants:
// - The scanner never allocates on the validation path and never reads past
//   the end of its input; every position it returns is inside the text.
// - Nesting is bounded by kMaxDepth so hostile input cannot exhaust the stack.
// - A span recorded for a member covers exactly the value's bytes (no
//   surrounding whitespace), so the proxy can splice it verbatim.
// - Every byte >= 0x80 the scanner accepts is part of a well-formed UTF-8
//   sequence inside a string (outside strings such bytes are grammar errors).
// - IdSniffer never looks at a byte twice and keeps at most kMaxIdBytes of
//   the id and 16 bytes of a member name, whatever it is fed.
#include "src/mcp/json_scan.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "src/core/canonical_json_internal.h"

namespace toolcache::mcp {
namespace {

// Choice: 512 levels; JSON-RPC messages are shallow and tool results rarely
// nest beyond 20, while 512 recursive frames stay far below the stack limit.
constexpr int kMaxDepth = 512;

// The UTF-8 sequence at text[i] (text[i] >= 0x80): its length when it is
// well-formed (Unicode Table 3-7), else 0; `*subpart` gets the length of its
// maximal ill-formed subpart (>= 1), for replacement.
size_t Utf8At(std::string_view text, size_t i, size_t* subpart) {
  const char* problem = nullptr;
  return jcs::Utf8SequenceLength(text, i, &problem, subpart);
}

class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  void SkipWs() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      ++pos_;
    }
  }

  bool Fail(const char* what) {
    if (error_.empty()) error_ = "byte " + std::to_string(pos_) + ": " + what;
    return false;
  }

  bool String() {
    if (pos_ >= text_.size() || text_[pos_] != '"')
      return Fail("expected '\"'");
    ++pos_;
    while (pos_ < text_.size()) {
      unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) return Fail("control character in string");
      if (c >= 0x80) {
        size_t subpart = 0;
        const size_t n = Utf8At(text_, pos_, &subpart);
        if (n == 0) return Fail("invalid UTF-8 in string");
        pos_ += n;
        continue;
      }
      if (c == '\\') {
        ++pos_;
        if (pos_ >= text_.size()) break;
        char e = text_[pos_];
        if (e == 'u') {
          for (int i = 1; i <= 4; ++i) {
            if (pos_ + i >= text_.size() ||
                !std::isxdigit(static_cast<unsigned char>(text_[pos_ + i]))) {
              return Fail("bad \\u escape");
            }
          }
          pos_ += 5;
          continue;
        }
        if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' &&
            e != 'n' && e != 'r' && e != 't') {
          return Fail("bad escape in string");
        }
      }
      ++pos_;
    }
    return Fail("unterminated string");
  }

  bool Digits() {
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      ++pos_;
    }
    return pos_ > start;
  }

  bool Number() {
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '0') {
      ++pos_;
    } else if (!Digits()) {
      return Fail("bad number");
    }
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      if (!Digits()) return Fail("bad number fraction");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) {
        ++pos_;
      }
      if (!Digits()) return Fail("bad number exponent");
    }
    return true;
  }

  bool Literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return Fail("invalid literal");
    pos_ += word.size();
    return true;
  }

  // Validates one value; for the top-level object also records members.
  bool Value(int depth, RawMessage* top) {
    if (depth > kMaxDepth) return Fail("nesting too deep");
    SkipWs();
    if (pos_ >= text_.size()) return Fail("unexpected end of input");
    char c = text_[pos_];
    switch (c) {
      case '{':
        return Object(depth, top);
      case '[': {
        ++pos_;
        SkipWs();
        if (pos_ < text_.size() && text_[pos_] == ']') {
          ++pos_;
          return true;
        }
        while (true) {
          if (!Value(depth + 1, nullptr)) return false;
          SkipWs();
          if (pos_ >= text_.size()) return Fail("unterminated array");
          if (text_[pos_] == ',') {
            ++pos_;
            continue;
          }
          if (text_[pos_] == ']') {
            ++pos_;
            return true;
          }
          return Fail("expected ',' or ']'");
        }
      }
      case '"':
        return String();
      case 't':
        return Literal("true");
      case 'f':
        return Literal("false");
      case 'n':
        return Literal("null");
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return Number();
        return Fail("unexpected character");
    }
  }

  bool Object(int depth, RawMessage* top) {
    ++pos_;  // '{'
    SkipWs();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return true;
    }
    while (true) {
      SkipWs();
      size_t name_start = pos_;
      if (!String()) return false;
      std::string_view name = text_.substr(name_start, pos_ - name_start);
      SkipWs();
      if (pos_ >= text_.size() || text_[pos_] != ':')
        return Fail("expected ':'");
      ++pos_;
      SkipWs();
      size_t value_start = pos_;
      if (!Value(depth + 1, nullptr)) return false;
      if (top != nullptr) {
        Record(top, name, text_.substr(value_start, pos_ - value_start));
      }
      SkipWs();
      if (pos_ >= text_.size()) return Fail("unterminated object");
      if (text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (text_[pos_] == '}') {
        ++pos_;
        return true;
      }
      return Fail("expected ',' or '}'");
    }
  }

  static void Record(RawMessage* m, std::string_view raw_name,
                     std::string_view value) {
    std::string decoded;
    std::string_view name = raw_name.substr(1, raw_name.size() - 2);
    if (name.find('\\') != std::string_view::npos) {
      decoded = DecodeString(raw_name);
      name = decoded;
    }
    if (name == "jsonrpc") {
      m->jsonrpc = value;
    } else if (name == "id") {
      m->id = value;
    } else if (name == "method") {
      m->method = value;
    } else if (name == "params") {
      m->params = value;
    } else if (name == "result") {
      m->result = value;
    } else if (name == "error") {
      m->error = value;
    } else {
      m->other_members = true;
    }
  }

  size_t pos() const { return pos_; }
  size_t size() const { return text_.size(); }
  const std::string& error() const { return error_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

// Walks the members of a validated object without re-validating values.
size_t SkipValidated(std::string_view t, size_t pos) {
  int depth = 0;
  bool in_string = false;
  for (; pos < t.size(); ++pos) {
    char c = t[pos];
    if (in_string) {
      if (c == '\\') {
        ++pos;
      } else if (c == '"') {
        in_string = false;
        if (depth == 0) return pos + 1;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '{':
      case '[':
        ++depth;
        break;
      case '}':
      case ']':
        if (depth == 0) return pos;  // end of the enclosing container
        --depth;
        if (depth == 0) return pos + 1;
        break;
      case ',':
        if (depth == 0) return pos;
        break;
      default:
        break;
    }
  }
  return pos;
}

size_t SkipWsAt(std::string_view t, size_t pos) {
  while (pos < t.size() && (t[pos] == ' ' || t[pos] == '\t' || t[pos] == '\n' ||
                            t[pos] == '\r')) {
    ++pos;
  }
  return pos;
}

// Trims trailing whitespace of a scalar span found by SkipValidated.
std::string_view TrimRight(std::string_view v) {
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t' ||
                        v.back() == '\n' || v.back() == '\r')) {
    v.remove_suffix(1);
  }
  return v;
}

}  // namespace

MessageKind RawMessage::kind() const {
  if (!is_object) return MessageKind::kOther;
  if (!method.empty()) {
    return id.empty() ? MessageKind::kNotification : MessageKind::kRequest;
  }
  if (!id.empty() && (!result.empty() || !error.empty())) {
    return MessageKind::kResponse;
  }
  return MessageKind::kOther;
}

Result<RawMessage> ScanMessage(std::string_view line) {
  Scanner s(line);
  RawMessage m;
  s.SkipWs();
  bool object = s.pos() < s.size() && line[s.pos()] == '{';
  if (!s.Value(0, object ? &m : nullptr)) return InvalidArgument(s.error());
  s.SkipWs();
  if (s.pos() != s.size()) {
    return InvalidArgument("byte " + std::to_string(s.pos()) +
                           ": trailing characters after the JSON value");
  }
  m.is_object = object;
  if (!m.method.empty()) {
    if (m.method.front() != '"') {
      m.method = {};  // a non-string method: not a JSON-RPC request
    } else {
      m.method_name = DecodeString(m.method);
    }
  }
  return m;
}

bool ForEachMember(std::string_view object,
                   const std::function<void(const std::string& name,
                                            std::string_view value)>& f) {
  size_t pos = SkipWsAt(object, 0);
  if (pos >= object.size() || object[pos] != '{') return false;
  ++pos;
  while (true) {
    pos = SkipWsAt(object, pos);
    if (pos >= object.size() || object[pos] == '}') return true;
    size_t name_start = pos;
    pos = SkipValidated(object, pos);  // the name string
    std::string name =
        DecodeString(object.substr(name_start, pos - name_start));
    pos = SkipWsAt(object, pos);
    ++pos;  // ':'
    pos = SkipWsAt(object, pos);
    size_t value_start = pos;
    pos = SkipValidated(object, pos);
    f(name, TrimRight(object.substr(value_start, pos - value_start)));
    pos = SkipWsAt(object, pos);
    if (pos < object.size() && object[pos] == ',') ++pos;
  }
}

std::string_view FindMember(std::string_view object, std::string_view name) {
  std::string_view found;
  ForEachMember(object, [&](const std::string& n, std::string_view v) {
    if (n == name) found = v;
  });
  return found;
}

bool IsValidUtf8(std::string_view text) {
  const char* problem = nullptr;
  return jcs::FindInvalidUtf8(text, &problem) == text.size();
}

std::string RepairUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  size_t i = 0;
  while (i < text.size()) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      out.push_back(text[i++]);
      continue;
    }
    size_t subpart = 0;
    const size_t n = Utf8At(text, i, &subpart);
    if (n > 0) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
      i += subpart;
    }
  }
  return out;
}

void IdSniffer::Feed(std::string_view bytes) {
  // Choice: member names longer than this are not JSON-RPC's; 16 bytes.
  constexpr size_t kMaxKeyBytes = 16;
  for (const char ch : bytes) {
    if (done_) return;
    if (capturing_id_) {
      const bool ends = !in_string_ && depth_ == 1 && (ch == ',' || ch == '}');
      if (ends) {
        capturing_id_ = false;
      } else if (id_.size() < kMaxIdBytes) {
        id_.push_back(ch);
      } else {
        id_too_long_ = true;
      }
    }
    if (in_string_) {
      if (escape_) {
        escape_ = false;
      } else if (ch == '\\') {
        escape_ = true;
      } else if (ch == '"') {
        in_string_ = false;
        if (capturing_key_) {
          capturing_key_ = false;
          phase_ = Phase::kColon;
        }
        continue;
      }
      if (capturing_key_) {
        if (key_.size() < kMaxKeyBytes) {
          key_.push_back(ch);
        } else {
          key_too_long_ = true;
        }
      }
      continue;
    }
    switch (ch) {
      case '"':
        in_string_ = true;
        if (depth_ == 1 && phase_ == Phase::kKey) {
          capturing_key_ = true;
          key_too_long_ = false;
          key_.clear();
        }
        break;
      case '{':
      case '[':
        if (!started_) {
          started_ = true;
          if (ch != '{') {
            done_ = true;
            return;
          }
          is_object_ = true;
          depth_ = 1;
          phase_ = Phase::kKey;
        } else {
          ++depth_;
        }
        break;
      case '}':
      case ']':
        if (depth_ > 0) --depth_;
        if (depth_ == 0) done_ = true;
        break;
      case ':':
        if (depth_ == 1 && phase_ == Phase::kColon) {
          phase_ = Phase::kValue;
          const std::string_view key =
              key_too_long_ ? std::string_view() : std::string_view(key_);
          if (key == "id") {
            has_id_ = true;
            capturing_id_ = true;
            id_too_long_ = false;
            id_.clear();
          } else if (key == "method") {
            has_method_ = true;
          } else if (key == "result") {
            has_result_ = true;
          } else if (key == "error") {
            has_error_ = true;
          }
        }
        break;
      case ',':
        if (depth_ == 1) phase_ = Phase::kKey;
        break;
      case ' ':
      case '\t':
      case '\r':
      case '\n':
        break;
      default:
        if (!started_) done_ = true;  // not an object
        break;
    }
  }
}

std::string IdSniffer::id() const {
  if (!has_id_ || id_too_long_ || capturing_id_) return {};
  size_t b = SkipWsAt(id_, 0);
  std::string_view v(id_);
  v = TrimRight(v.substr(b));
  if (v.empty() || !(v.front() == '"' || v.front() == '-' ||
                     (v.front() >= '0' && v.front() <= '9'))) {
    return {};
  }
  if (!ScanMessage(v).ok()) return {};
  return std::string(v);
}

std::string DecodeString(std::string_view literal) {
  if (literal.size() < 2 || literal.front() != '"') return {};
  std::string_view body = literal.substr(1, literal.size() - 2);
  if (body.find('\\') == std::string_view::npos) return std::string(body);
  nlohmann::json j = nlohmann::json::parse(literal, nullptr, false);
  if (!j.is_string()) return {};
  return j.get<std::string>();
}

std::string NormalizeId(std::string_view raw_id) {
  if (raw_id.empty()) return {};
  if (raw_id.front() == '"') {
    if (raw_id.find('\\') == std::string_view::npos) return std::string(raw_id);
    nlohmann::json j = nlohmann::json::parse(raw_id, nullptr, false);
    return j.is_discarded() ? std::string(raw_id) : j.dump();
  }
  nlohmann::json j = nlohmann::json::parse(raw_id, nullptr, false);
  if (j.is_discarded()) return std::string(raw_id);
  if (j.is_number()) {
    // Choice: numbers compare as the double they parse to, the coarsest
    // reading any peer applies: 1.0 matches 1, and a JavaScript server's
    // echo 9007199254740992 of 9007199254740993 matches its request (the
    // session keeps such look-alikes from being in flight together).
    const double d = j.get<double>();
    if (!std::isfinite(d)) return std::string(raw_id);
    std::string out;
    jcs::AppendEs6Number(d, &out);
    return out;
  }
  return j.dump();
}

IdKind ClassifyId(std::string_view raw_id) {
  if (raw_id.empty()) return IdKind::kOther;
  const char c = raw_id.front();
  if (c == '"') return IdKind::kString;
  if (c == 'n') return IdKind::kNull;
  if (c != '-' && (c < '0' || c > '9')) return IdKind::kOther;
  std::string_view digits = raw_id;
  if (digits.front() == '-') digits.remove_prefix(1);
  if (digits.empty() || digits.size() > 16) return IdKind::kOtherNumber;
  uint64_t v = 0;
  for (char d : digits) {
    if (d < '0' || d > '9') return IdKind::kOtherNumber;  // '.', 'e'
    v = v * 10 + static_cast<uint64_t>(d - '0');
  }
  // Number.MAX_SAFE_INTEGER: every parser, a double included, reads it
  // exactly and echoes the same digits.
  constexpr uint64_t kMaxSafe = (uint64_t{1} << 53) - 1;
  return v <= kMaxSafe ? IdKind::kSafeInteger : IdKind::kOtherNumber;
}

}  // namespace toolcache::mcp
