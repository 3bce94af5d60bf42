// Invariants:
// - Validation is the core toolkit's (json::ScanValue: one grammar, one
//   UTF-8 check, one depth limit); this file only walks the top-level
//   object's members and records the JSON-RPC ones. Nothing recurses, so
//   a hostile depth costs no stack; nesting is bounded at kLimits.
// - The scanner never reads past the end of its input; every position it
//   returns is inside the text.
// - A span recorded for a member covers exactly the value's bytes (no
//   surrounding whitespace), so the proxy can splice it verbatim.
// - Every byte >= 0x80 the scanner accepts is part of a well-formed UTF-8
//   sequence inside a string (outside strings such bytes are grammar errors).
// - IdSniffer never looks at a byte twice and keeps at most kMaxIdBytes of
//   the id and 16 bytes of a member name, whatever it is fed.
#include "src/mcp/json_scan.h"

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "src/core/canonical_json_internal.h"
#include "src/core/json.h"

namespace toolcache::mcp {
namespace {

// Choice: 512 levels (the toolkit's default, core/json.h); JSON-RPC
// messages are shallow and tool results rarely nest beyond 20.
constexpr json::Limits kLimits{.max_depth = 512, .max_bytes = UINT32_MAX - 1};
// A top-level object's member values sit one level down.
constexpr json::Limits kMemberLimits{.max_depth = kLimits.max_depth - 1,
                                     .max_bytes = kLimits.max_bytes};

// The UTF-8 sequence at text[i] (text[i] >= 0x80): its length when it is
// well-formed (Unicode Table 3-7), else 0; `*subpart` gets the length of its
// maximal ill-formed subpart (>= 1), for replacement.
size_t Utf8At(std::string_view text, size_t i, size_t* subpart) {
  const char* problem = nullptr;
  return jcs::Utf8SequenceLength(text, i, &problem, subpart);
}

bool IsWs(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t SkipWsAt(std::string_view t, size_t pos) {
  while (pos < t.size() && IsWs(t[pos])) ++pos;
  return pos;
}

// The client-facing text of a scan error ("byte N: <problem>").
Status ScanError(size_t at, json::Error e) {
  const char* what = "unexpected character";
  switch (e) {
    case json::Error::kTooDeep:
      what = "nesting too deep";
      break;
    case json::Error::kTooLarge:
      what = "message too large";
      break;
    case json::Error::kUnterminated:
      what = "unexpected end of input";
      break;
    case json::Error::kBadEscape:
      what = "bad escape in string";
      break;
    case json::Error::kControlCharacter:
      what = "control character in string";
      break;
    case json::Error::kBadUtf8:
      what = "invalid UTF-8 in string";
      break;
    case json::Error::kBadNumber:
      what = "bad number";
      break;
    case json::Error::kTrailing:
      what = "trailing characters after the JSON value";
      break;
    case json::Error::kOk:
    case json::Error::kSyntax:
      break;
  }
  return InvalidArgument("byte " + std::to_string(at) + ": " + what);
}

void Record(RawMessage* m, std::string_view raw_name, std::string_view value) {
  std::string decoded;
  std::string_view name = raw_name.substr(1, raw_name.size() - 2);
  if (name.find('\\') != std::string_view::npos) {
    decoded = DecodeString(raw_name);
    name = decoded;
  }
  // A member seen before (a present value is never an empty span).
  auto set = [m](std::string_view* member, std::string_view v) {
    if (!member->empty()) m->duplicate_member = true;
    *member = v;
  };
  if (name == "jsonrpc") {
    set(&m->jsonrpc, value);
  } else if (name == "id") {
    set(&m->id, value);
  } else if (name == "method") {
    set(&m->method, value);
  } else if (name == "params") {
    set(&m->params, value);
  } else if (name == "result") {
    set(&m->result, value);
  } else if (name == "error") {
    set(&m->error, value);
  } else {
    m->other_members = true;
  }
}

// The top-level object at t[*p] == '{': each name and value validated by
// the toolkit's ScanValue, the JSON-RPC members recorded; *p moves past
// it, or to the offending byte on an error.
json::Error ScanTopObject(std::string_view t, size_t* p, RawMessage* m) {
  size_t i = SkipWsAt(t, *p + 1);
  auto fail = [&](json::Error e) {
    *p = i;
    return e;
  };
  if (i < t.size() && t[i] == '}') {
    *p = i + 1;
    return json::Error::kOk;
  }
  while (true) {
    i = SkipWsAt(t, i);
    if (i >= t.size()) return fail(json::Error::kUnterminated);
    if (t[i] != '"') return fail(json::Error::kSyntax);
    json::Span name, value;
    size_t at = 0;
    if (json::Error e = json::ScanValue(t, i, kMemberLimits, &name, &at);
        e != json::Error::kOk) {
      *p = at;
      return e;
    }
    i = SkipWsAt(t, name.end);
    if (i >= t.size()) return fail(json::Error::kUnterminated);
    if (t[i] != ':') return fail(json::Error::kSyntax);
    if (json::Error e = json::ScanValue(t, i + 1, kMemberLimits, &value, &at);
        e != json::Error::kOk) {
      *p = at;
      return e;
    }
    Record(m, name.In(t), value.In(t));
    i = SkipWsAt(t, value.end);
    if (i >= t.size()) return fail(json::Error::kUnterminated);
    if (t[i] == ',') {
      ++i;
      continue;
    }
    if (t[i] != '}') return fail(json::Error::kSyntax);
    *p = i + 1;
    return json::Error::kOk;
  }
}

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
  RawMessage m;
  size_t p = SkipWsAt(line, 0);
  const bool object = p < line.size() && line[p] == '{';
  if (object) {
    if (json::Error e = ScanTopObject(line, &p, &m); e != json::Error::kOk) {
      return ScanError(p, e);
    }
  } else {
    json::Span v;
    size_t at = 0;
    if (json::Error e = json::ScanValue(line, p, kLimits, &v, &at);
        e != json::Error::kOk) {
      return ScanError(at, e);
    }
    p = v.end;
  }
  p = SkipWsAt(line, p);
  if (p != line.size()) return ScanError(p, json::Error::kTrailing);
  if (m.duplicate_member) {
    // Which one counts is the reader's choice (JSON.parse keeps the last,
    // many strict parsers the first or refuse): a line whose id, method or
    // params two readers may read differently is refused, so the id the
    // proxy rewrites is the one every peer reads (revU: a pooled child
    // answered under the first "id" while the proxy rewrote the last).
    return InvalidArgument(
        "a JSON-RPC member (jsonrpc, id, method, params, result or error) "
        "appears twice");
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

// Choice: not json::Unquote, which decodes a lone surrogate escape to
// U+FFFD; here a member name, tool name or method decodes exactly or not at
// all, so "a\ud800" and "a\udbff" cannot become one name.
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
