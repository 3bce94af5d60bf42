// Invariants:
// - ScanValue never reads past text.size() and never recurses: nesting is
//   a counter, so a hostile depth costs no stack.
// - AppendQuoted writes valid UTF-8 under BadUtf8::kReplace whatever the
//   input; under kVerbatim it writes the input's bytes between escapes.
// Choice: UTF-8 validation, string escaping and the ES6 number writer are
// the RFC 8785 serializer's (canonical_json_internal.h), not second copies.
#include "src/core/json.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <charconv>
#include <cmath>
#include <cstring>

#include "src/core/canonical_json_internal.h"

namespace toolcache::json {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads 4 hex digits at s[i]; -1 when absent.
int32_t Hex4(std::string_view s, size_t i) {
  if (i + 4 > s.size()) return -1;
  int32_t v = 0;
  for (size_t k = i; k < i + 4; ++k) {
    const int h = Hex(s[k]);
    if (h < 0) return -1;
    v = (v << 4) | h;
  }
  return v;
}

// A string starting at s[*i] == '"': validates it and moves *i past it
// (on an error, to the offending byte).
Error ScanString(std::string_view s, size_t* i) {
  size_t p = *i + 1;
  auto fail = [&](Error e) {
    *i = p;
    return e;
  };
  while (p < s.size()) {
    const auto c = static_cast<unsigned char>(s[p]);
    if (c == '"') {
      *i = p + 1;
      return Error::kOk;
    }
    if (c < 0x20) return fail(Error::kControlCharacter);
    if (c == '\\') {
      if (p + 1 >= s.size()) return fail(Error::kUnterminated);
      const char e = s[p + 1];
      if (e == 'u') {
        if (Hex4(s, p + 2) < 0) return fail(Error::kBadEscape);
        p += 6;
      } else if (std::strchr("\"\\/bfnrt", e) != nullptr && e != '\0') {
        p += 2;
      } else {
        return fail(Error::kBadEscape);
      }
      continue;
    }
    if (c < 0x80) {
      ++p;
      continue;
    }
    const char* problem = nullptr;
    const size_t n = jcs::Utf8SequenceLength(s, p, &problem);
    if (n == 0) return fail(Error::kBadUtf8);
    p += n;
  }
  return fail(Error::kUnterminated);
}

// A number at s[*i]: RFC 8259 section 6 grammar (on an error, *i is the
// offending byte).
Error ScanNumber(std::string_view s, size_t* i) {
  size_t p = *i;
  auto fail = [&] {
    *i = p;
    return Error::kBadNumber;
  };
  auto digit = [&](size_t k) {
    return k < s.size() && s[k] >= '0' && s[k] <= '9';
  };
  if (p < s.size() && s[p] == '-') ++p;
  if (!digit(p)) return fail();
  if (s[p] == '0') {
    ++p;
  } else {
    while (digit(p)) ++p;
  }
  if (p < s.size() && s[p] == '.') {
    ++p;
    if (!digit(p)) return fail();
    while (digit(p)) ++p;
  }
  if (p < s.size() && (s[p] == 'e' || s[p] == 'E')) {
    ++p;
    if (p < s.size() && (s[p] == '+' || s[p] == '-')) ++p;
    if (!digit(p)) return fail();
    while (digit(p)) ++p;
  }
  *i = p;
  return Error::kOk;
}

}  // namespace

std::string_view ErrorName(Error e) {
  switch (e) {
    case Error::kOk:
      return "ok";
    case Error::kTooDeep:
      return "too_deep";
    case Error::kTooLarge:
      return "too_large";
    case Error::kUnterminated:
      return "unterminated";
    case Error::kBadEscape:
      return "bad_escape";
    case Error::kControlCharacter:
      return "control_character";
    case Error::kBadUtf8:
      return "bad_utf8";
    case Error::kBadNumber:
      return "bad_number";
    case Error::kSyntax:
      return "syntax";
    case Error::kTrailing:
      return "trailing";
  }
  return "unknown";
}

// Choice (sse200): a string's closing quote is looked for in its first
// 16 bytes with one SSE2 compare (every x86-64) before memchr is called:
// most strings of an LLM request are a few bytes, and a memchr call per
// string cost more than the search (callgrind, 200 KB bench request:
// 1,760 strings). The byte loop between strings is kept: JSON's gaps
// between strings are one to four bytes, shorter than a block (a 16-byte
// block scan there counted more instructions, not fewer). The verdict is
// the byte loop's (JsonScan.CheckLimitsAgreesWithTheByteLoop).
Error CheckLimits(std::string_view text, const Limits& limits) {
  if (text.size() > limits.max_bytes) return Error::kTooLarge;
  const char* p = text.data();
  const char* end = p + text.size();
  uint32_t depth = 0;
  while (p < end) {
    const char c = *p;
    if (c == '"') {
      ++p;
      while (true) {
        const char* q = nullptr;
#if defined(__SSE2__)
        if (end - p >= 16) {
          const int mask = _mm_movemask_epi8(_mm_cmpeq_epi8(
              _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)),
              _mm_set1_epi8('"')));
          if (mask != 0) {
            q = p + __builtin_ctz(static_cast<unsigned>(mask));
          } else {
            q = static_cast<const char*>(
                std::memchr(p + 16, '"', static_cast<size_t>(end - p - 16)));
            if (q == nullptr) return Error::kOk;  // unterminated
          }
        }
#endif
        if (q == nullptr) {
          q = static_cast<const char*>(
              std::memchr(p, '"', static_cast<size_t>(end - p)));
        }
        if (q == nullptr) return Error::kOk;  // unterminated: the parser says
        size_t backslashes = 0;
        for (const char* b = q; b > p && b[-1] == '\\'; --b) ++backslashes;
        p = q + 1;
        if (backslashes % 2 == 0) break;
      }
      continue;
    }
    if (c == '[' || c == '{') {
      if (++depth > limits.max_depth) return Error::kTooDeep;
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    }
    ++p;
  }
  return Error::kOk;
}

Error ScanValue(std::string_view s, size_t pos, const Limits& limits,
                Span* value, size_t* error_at) {
  if (s.size() > limits.max_bytes || s.size() >= UINT32_MAX) {
    if (error_at != nullptr) *error_at = 0;
    return Error::kTooLarge;
  }
  // One stack of container kinds as a bit string would cap depth at 64;
  // a std::string of '{' / '[' holds any depth the limit allows.
  std::string stack;
  size_t p = pos;
  auto fail = [&](Error e) {
    if (error_at != nullptr) *error_at = p;
    return e;
  };
  auto skip_ws = [&] {
    while (p < s.size() && IsSpace(s[p])) ++p;
  };
  skip_ws();
  const size_t begin = p;
  // Choice: a lone string or number (most members of a JSON-RPC message,
  // and every member name the MCP scanner asks about) is scanned without
  // the container loop below: the same checks, and a small tools/call
  // line scans in 3,235 instructions instead of 3,419 (callgrind; the MCP
  // scanner's own recursive copy took 3,280).
  if (p < s.size() &&
      (s[p] == '"' || s[p] == '-' || (s[p] >= '0' && s[p] <= '9'))) {
    if (Error e = s[p] == '"' ? ScanString(s, &p) : ScanNumber(s, &p);
        e != Error::kOk) {
      return fail(e);
    }
    value->begin = static_cast<uint32_t>(begin);
    value->end = static_cast<uint32_t>(p);
    return Error::kOk;
  }
  // State: expecting a value (after '[', ',', ':' or at the start), or,
  // inside a container, expecting ',' or its close.
  bool want_value = true;
  while (true) {
    skip_ws();
    if (p >= s.size()) return fail(Error::kUnterminated);
    if (want_value) {
      const char c = s[p];
      if (c == '{' || c == '[') {
        if (stack.size() >= limits.max_depth) return fail(Error::kTooDeep);
        stack.push_back(c);
        ++p;
        skip_ws();
        if (p >= s.size()) return fail(Error::kUnterminated);
        if ((c == '{' && s[p] == '}') || (c == '[' && s[p] == ']')) {
          stack.pop_back();
          ++p;
          want_value = false;
        } else if (c == '{') {
          if (s[p] != '"') return fail(Error::kSyntax);
          if (Error e = ScanString(s, &p); e != Error::kOk) return fail(e);
          skip_ws();
          if (p >= s.size()) return fail(Error::kUnterminated);
          if (s[p] != ':') return fail(Error::kSyntax);
          ++p;
          continue;  // want_value stays true
        } else {
          continue;  // '[' then a value
        }
      } else if (c == '"') {
        if (Error e = ScanString(s, &p); e != Error::kOk) return fail(e);
        want_value = false;
      } else if (c == '-' || (c >= '0' && c <= '9')) {
        if (Error e = ScanNumber(s, &p); e != Error::kOk) return fail(e);
        want_value = false;
      } else if (s.substr(p, 4) == "true" || s.substr(p, 4) == "null") {
        p += 4;
        want_value = false;
      } else if (s.substr(p, 5) == "false") {
        p += 5;
        want_value = false;
      } else {
        return fail(Error::kSyntax);
      }
    } else {
      if (stack.empty()) break;
      const char c = s[p];
      const char open = stack.back();
      if (c == ',') {
        ++p;
        want_value = true;
        if (open == '{') {
          skip_ws();
          if (p >= s.size()) return fail(Error::kUnterminated);
          if (s[p] != '"') return fail(Error::kSyntax);
          if (Error e = ScanString(s, &p); e != Error::kOk) return fail(e);
          skip_ws();
          if (p >= s.size()) return fail(Error::kUnterminated);
          if (s[p] != ':') return fail(Error::kSyntax);
          ++p;
        }
      } else if ((c == '}' && open == '{') || (c == ']' && open == '[')) {
        stack.pop_back();
        ++p;
      } else {
        return fail(Error::kSyntax);
      }
    }
    if (!want_value && stack.empty()) break;
  }
  value->begin = static_cast<uint32_t>(begin);
  value->end = static_cast<uint32_t>(p);
  return fail(Error::kOk);
}

Error Validate(std::string_view text, const Limits& limits) {
  Span v;
  if (Error e = ScanValue(text, 0, limits, &v); e != Error::kOk) return e;
  for (size_t p = v.end; p < text.size(); ++p) {
    if (!IsSpace(text[p])) return Error::kTrailing;
  }
  return Error::kOk;
}

void AppendQuoted(std::string_view s, std::string* out, BadUtf8 bad) {
  const char* problem = nullptr;
  if (bad == BadUtf8::kVerbatim ||
      jcs::FindInvalidUtf8(s, &problem) == s.size()) {
    jcs::AppendJcsString(s, out);
    return;
  }
  // Choice: ill-formed input (rare) is repaired into a copy first, each
  // maximal ill-formed subpart as one U+FFFD, so the escaping is the
  // serializer's one loop (AppendJcsString) and not a second copy of it.
  std::string repaired;
  repaired.reserve(s.size() + 2);
  size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      repaired.push_back(s[i++]);
      continue;
    }
    size_t subpart = 1;
    const size_t n = jcs::Utf8SequenceLength(s, i, &problem, &subpart);
    if (n > 0) {
      repaired.append(s.data() + i, n);
      i += n;
    } else {
      repaired.append("\xEF\xBF\xBD");  // U+FFFD
      i += subpart;
    }
  }
  jcs::AppendJcsString(repaired, out);
}

std::string Quote(std::string_view text, BadUtf8 bad) {
  std::string out;
  AppendQuoted(text, &out, bad);
  return out;
}

Error Unquote(std::string_view lit, std::string* out) {
  out->clear();
  if (lit.size() < 2 || lit.front() != '"' || lit.back() != '"') {
    return Error::kSyntax;
  }
  const std::string_view in = lit.substr(1, lit.size() - 2);
  out->reserve(in.size());
  size_t run = 0;
  for (size_t i = 0; i < in.size();) {
    const auto c = static_cast<unsigned char>(in[i]);
    if (c == '"') return Error::kUnterminated;
    if (c < 0x20) return Error::kControlCharacter;
    if (c != '\\') {
      ++i;
      continue;
    }
    out->append(in.data() + run, i - run);
    if (i + 1 >= in.size()) return Error::kUnterminated;
    const char e = in[i + 1];
    i += 2;
    switch (e) {
      case '"':
        out->push_back('"');
        break;
      case '\\':
        out->push_back('\\');
        break;
      case '/':
        out->push_back('/');
        break;
      case 'b':
        out->push_back('\b');
        break;
      case 'f':
        out->push_back('\f');
        break;
      case 'n':
        out->push_back('\n');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'u': {
        int32_t cp = Hex4(in, i);
        if (cp < 0) return Error::kBadEscape;
        i += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF && i + 6 <= in.size() &&
            in[i] == '\\' && in[i + 1] == 'u') {
          const int32_t lo = Hex4(in, i + 2);
          if (lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            i += 6;
          }
        }
        if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;  // lone surrogate
        jcs::AppendUtf8(static_cast<uint32_t>(cp), out);
        break;
      }
      default:
        return Error::kBadEscape;
    }
    run = i;
  }
  out->append(in.data() + run, in.size() - run);
  return Error::kOk;
}

void AppendInt(int64_t v, std::string* out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, r.ptr);
}

void AppendUint(uint64_t v, std::string* out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, r.ptr);
}

void AppendDouble(double v, std::string* out) {
  if (!std::isfinite(v)) {
    out->append("null");
    return;
  }
  jcs::AppendEs6Number(v, out);
}

Error ParseInt(std::string_view text, int64_t* v) {
  size_t end = 0;
  if (ScanNumber(text, &end) != Error::kOk || end != text.size()) {
    return Error::kBadNumber;
  }
  const auto r = std::from_chars(text.data(), text.data() + text.size(), *v);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) {
    return Error::kBadNumber;  // a fraction, an exponent, or out of range
  }
  return Error::kOk;
}

}  // namespace toolcache::json
