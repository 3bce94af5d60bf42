// Invariants:
// - Every Span points inside the body it was parsed from and covers exactly
//   a JSON value's bytes (no surrounding whitespace).
// - The body is read once by simdjson (stage 1 validates UTF-8 and the
//   structure of the whole document); values the adapters do not need are
//   skipped, never decoded.
// - Only strings the engine needs (ids, names, arguments) are copied.
// - Stage 1 does not check what skipped values contain (a string's escapes,
//   a number's digits): a tool result's content, kept as raw bytes and
//   stored as the tool's result, is validated whole (ValidResultContent)
//   before a request is accepted (found by fuzz/llm_wire: "\l" in a result
//   string).
// - This is the only translation unit that includes simdjson.h.
// Choice: simdjson On Demand: its stage 1 runs at GB/s, and raw_json() on
// objects and arrays returns the original bytes, which is what spans need.
#include "src/llm/wire.h"

#include <simdjson.h>

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define TOOLCACHE_WIRE_AVX2_GATHER 1
#endif

#include "src/core/json.h"

namespace toolcache::llm {
namespace {

namespace sj = simdjson::ondemand;
using simdjson::error_code;

// s == lit with the length known at compile time: the compare is a few
// inlined loads (operator== called memcmp: ~12,000 instructions of the 200
// KB bench request's member-name tests, callgrind, parseG).
template <size_t N>
inline bool Eq(std::string_view s, const char (&lit)[N]) {
  return s.size() == N - 1 && __builtin_memcmp(s.data(), lit, N - 1) == 0;
}

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' ||
                        s.back() == '\r' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

// The raw bytes of any value (consumes it); false on a malformed value.
bool RawValue(sj::value& v, std::string_view* raw) {
  sj::json_type t;
  if (v.type().get(t)) return false;
  if (t == sj::json_type::object) {
    sj::object o;
    if (v.get_object().get(o) || o.raw_json().get(*raw)) return false;
  } else if (t == sj::json_type::array) {
    sj::array a;
    if (v.get_array().get(a) || a.raw_json().get(*raw)) return false;
  } else {
    *raw = v.raw_json_token();
  }
  *raw = TrimRight(*raw);
  return true;
}

// Wraps a custom (freeform) tool call's raw `input` string literal as the
// arguments object {"input":<literal>}, so every call has object arguments.
std::string InputArguments(std::string_view literal) {
  std::string a;
  a.reserve(literal.size() + 10);
  a += "{\"input\":";
  a += literal;
  a += "}";
  return a;
}

// True when `text` is exactly one well-formed JSON value (full validation,
// escapes and numbers included: simdjson's DOM parser).
bool ValidJson(std::string_view text) {
  thread_local simdjson::dom::parser parser;
  const simdjson::padded_string copy(text);
  simdjson::dom::element element;
  return parser.parse(copy).get(element) == simdjson::SUCCESS;
}

// ValidJson for a tool result's content, with a fast path for the common
// case, a string: stage 1 of the request's parse has already checked its
// UTF-8, its unescaped control characters and where it ends, so what is
// left to check is its escapes. Escapes other than \u are checked here;
// a string with a \u escape (surrogate pairing) and every other value go
// through ValidJson. Choice (issue 32, 200 KB request): ValidJson copied
// each result and ran simdjson's stage 1 and 2 over it again, ~450,000 of
// the 1.88 million instructions of a 200 KB request in the proxy.
// REQUIRES: `raw` is one token as stage 1 delimited it.
bool ValidResultContent(std::string_view raw) {
  if (raw.size() < 2 || raw.front() != '"' || raw.back() != '"') {
    return ValidJson(raw);
  }
  const std::string_view in = raw.substr(1, raw.size() - 2);
  size_t i = 0;
  while (true) {
    const void* hit = std::memchr(in.data() + i, '\\', in.size() - i);
    if (hit == nullptr) return true;
    i = static_cast<size_t>(static_cast<const char*>(hit) - in.data()) + 1;
    if (i >= in.size()) return false;  // the escape ends the token
    switch (in[i]) {
      case '"':
      case '\\':
      case '/':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't':
        ++i;
        break;
      case 'u':
        return ValidJson(raw);
      default:
        return false;
    }
  }
}

sj::parser& ThreadParser(uint32_t depth) {
  thread_local sj::parser parser;
  thread_local uint32_t allocated_depth = 0;
  if (allocated_depth != depth) {
    // Capacity grows on demand in iterate(); only the depth is fixed here.
    if (parser.allocate(1 << 16, depth) == simdjson::SUCCESS) {
      allocated_depth = depth;
    }
  }
  return parser;
}

// simdjson keeps a document's stage-1 structural indexes protected; these
// using-declarations name them (read only, nothing copied or moved).
struct DocumentTokens : sj::document {
  using sj::document::iter;
};
struct IteratorTokens : sj::json_iterator {
  using sj::json_iterator::end_position;
};

#if defined(TOOLCACHE_WIRE_AVX2_GATHER)
// StructuralsTooDeep's loop over [*p, end), eight indexes per step: one
// AVX2 gather loads the byte at each index (as the low byte of a 32-bit
// load: up to 3 bytes past the last structural, inside the document or
// its SIMDJSON_PADDING), two compares give the openers and closers. A step
// with only openers (or only closers) moves the depth by their count; a
// step with both goes through them in order with the scalar rule.
// Choice (session 15): the scalar loop loaded and tested each of the ~7,800
// structurals of the 200 KB bench request one by one (~56,000
// instructions); the gathered steps cost ~1/4 of that (callgrind,
// docs/PROXY.md). REQUIRES: every index < 2^31 (the gather's offsets are
// signed); the caller checks the body's size.
__attribute__((target("avx2"))) bool GatheredTooDeep(const char* buf,
                                                     const uint32_t** pp,
                                                     const uint32_t* end,
                                                     uint32_t* depth_io,
                                                     uint32_t max_depth) {
  const uint32_t* p = *pp;
  uint32_t depth = *depth_io;
  const __m256i open = _mm256_set1_epi32('{');   // '[' | 0x20 == '{'
  const __m256i close = _mm256_set1_epi32('}');  // ']' | 0x20 == '}'
  for (; end - p >= 8; p += 8) {
    const __m256i idx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i bytes = _mm256_or_si256(
        _mm256_and_si256(
            _mm256_i32gather_epi32(reinterpret_cast<const int*>(buf), idx, 1),
            _mm256_set1_epi32(0xff)),
        _mm256_set1_epi32(0x20));
    const unsigned opens = static_cast<unsigned>(_mm256_movemask_ps(
        _mm256_castsi256_ps(_mm256_cmpeq_epi32(bytes, open))));
    const unsigned closes = static_cast<unsigned>(_mm256_movemask_ps(
        _mm256_castsi256_ps(_mm256_cmpeq_epi32(bytes, close))));
    if ((opens | closes) == 0) continue;
    if (closes == 0) {
      depth += static_cast<uint32_t>(__builtin_popcount(opens));
      if (depth > max_depth) return true;
      continue;
    }
    if (opens == 0) {
      const uint32_t n = static_cast<uint32_t>(__builtin_popcount(closes));
      depth = depth > n ? depth - n : 0;
      continue;
    }
    for (unsigned bits = opens | closes; bits != 0; bits &= bits - 1) {
      if (opens & bits & (0u - bits)) {
        if (++depth > max_depth) return true;
      } else if (depth > 0) {
        --depth;
      }
    }
  }
  *pp = p;
  *depth_io = depth;
  return false;
}
#endif

// True if the brackets of `buf` nest deeper than `max_depth`, counted over
// the structural indexes stage 1 found (every bracket outside a string is
// one of them, none inside is), with json::CheckLimits's rule: an opener
// past the limit refuses, a closer at depth 0 is ignored.
// Choice (parseG): the depth pre-check reads the structurals stage 1 has
// already written instead of making a second pass over the body:
// json::CheckLimits cost ~118,500 instructions of a 200 KB request, this
// loop visits ~8,000 indexes (callgrind, docs/PROXY.md).
bool StructuralsTooDeep(const sj::document& doc, const char* buf, size_t size,
                        uint32_t max_depth) {
  const sj::json_iterator& it = doc.*(&DocumentTokens::iter);
  const uint32_t* p = it.root_position();
  const uint32_t* const end = (it.*(&IteratorTokens::end_position))();
  uint32_t depth = 0;
#if defined(TOOLCACHE_WIRE_AVX2_GATHER)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2 && size < (uint32_t{1} << 31) &&
      GatheredTooDeep(buf, &p, end, &depth, max_depth)) {
    return true;
  }
#else
  (void)size;
#endif
  // False when `c` is no bracket; true for the four brackets and for the
  // bytes 'Y' '_' 'y' 0x7f (scalar starts of bad JSON), told apart below.
  auto maybe_bracket = [buf](uint32_t i) {
    return (static_cast<uint8_t>(buf[i]) | 0x26) == 0x7f;
  };
  auto step = [&](uint32_t i) {
    const char c = buf[i];
    if (c == '[' || c == '{') return ++depth > max_depth;
    if ((c == ']' || c == '}') && depth > 0) --depth;
    return false;
  };
  // Choice: four structurals per test (most are quotes, colons, commas
  // and scalars): one branch per group instead of two per structural.
  for (; end - p >= 4; p += 4) {
    if (!(maybe_bracket(p[0]) | maybe_bracket(p[1]) | maybe_bracket(p[2]) |
          maybe_bracket(p[3]))) {
      continue;
    }
    if (step(p[0]) || step(p[1]) || step(p[2]) || step(p[3])) return true;
  }
  for (; p < end; ++p) {
    if (step(*p)) return true;
  }
  return false;
}

// Reads values of one body and turns views into spans.
class Reader {
 public:
  explicit Reader(std::string_view body) : body_(body) {}

  Span SpanOf(std::string_view raw) const {
    raw = TrimRight(raw);
    Span s;
    s.begin = static_cast<uint32_t>(raw.data() - body_.data());
    s.end = static_cast<uint32_t>(s.begin + raw.size());
    return s;
  }

  // The raw bytes of any value (consumes it).
  error_code Raw(sj::value& v, Span* out) {
    sj::json_type t;
    if (auto e = v.type().get(t)) return e;
    std::string_view raw;
    if (t == sj::json_type::object) {
      sj::object o;
      if (auto e = v.get_object().get(o)) return e;
      if (auto e = o.raw_json().get(raw)) return e;
    } else if (t == sj::json_type::array) {
      sj::array a;
      if (auto e = v.get_array().get(a)) return e;
      if (auto e = a.raw_json().get(raw)) return e;
    } else {
      raw = v.raw_json_token();
      if (auto e = ConsumeScalar(v, t)) return e;
    }
    *out = SpanOf(raw);
    return simdjson::SUCCESS;
  }

  // Consumes a scalar the walk only peeked at. On Demand skips a value left
  // unconsumed, and that skip does not check what follows it: a message's
  // "content":"go" as an object's last member followed by ':"x"' and ']'
  // for '}' was forwarded (with a 400 from the upstream, not from us).
  // Strings are consumed without decoding; a number is parsed (which also
  // refuses '6x4', '01', '1.'), true/false/null are checked whole.
  static error_code ConsumeScalar(sj::value& v, sj::json_type t) {
    switch (t) {
      case sj::json_type::string: {
        sj::raw_json_string ignored;
        return v.get_raw_json_string().get(ignored);
      }
      case sj::json_type::number: {
        sj::number ignored;
        return v.get_number().get(ignored);
      }
      case sj::json_type::boolean: {
        bool ignored;
        return v.get_bool().get(ignored);
      }
      case sj::json_type::null: {
        bool is_null = false;
        if (auto e = v.is_null().get(is_null)) return e;
        return is_null ? simdjson::SUCCESS : simdjson::N_ATOM_ERROR;
      }
      default:
        return simdjson::INCORRECT_TYPE;
    }
  }

  // llmhop: an object or array whose members the caller iterates whole
  // gets its span from where it starts (Open) and where the iteration left
  // the document (Close, after the last member), instead of raw_json(),
  // which skipped the value to find its end and then rewound: nested as
  // messages > message > content > block, every byte was walked up to five
  // times (~210,000 instructions of a 200 KB request, callgrind).
  // REQUIRES (Close): the value was iterated to its end, and it is not the
  // document's last value.
  error_code OpenObject(sj::value& v, sj::object* o, Span* span) {
    span->begin = Offset(v.raw_json_token().data());
    return v.get_object().get(*o);
  }
  error_code OpenArray(sj::value& v, sj::array* a, Span* span) {
    span->begin = Offset(v.raw_json_token().data());
    return v.get_array().get(*a);
  }
  [[gnu::always_inline]] error_code Close(Span* span) const {
    // Choice (session 15): the value's last byte is the structural before
    // the current one when that is a bracket (between a bracket and the
    // next structural stage 1 leaves only whitespace, which TrimRight
    // strips below): one index read instead of current_location() and a
    // trim (~500 closes of the 200 KB bench request), with the same checks.
    // Any other case (an error state, the document's end, no bracket
    // there) goes the old way.
    const sj::json_iterator& it = doc_->*(&DocumentTokens::iter);
    const uint32_t* const pos = it.position();
    if (it.is_alive() && pos != (it.*(&IteratorTokens::end_position))() &&
        pos != it.root_position()) {
      const uint32_t last = pos[-1];
      const char c = body_.data()[last];
      if ((c == '}' || c == ']') && last > span->begin) {
        if ((c == '}') != (body_.data()[span->begin] == '{')) {
          return simdjson::TAPE_ERROR;
        }
        span->end = last + 1;
        return simdjson::SUCCESS;
      }
    }
    return CloseAtLocation(span);
  }
  [[gnu::noinline]] error_code CloseAtLocation(Span* span) const {
    const char* at = nullptr;
    if (auto e = doc_->current_location().get(at)) return e;
    std::string_view value =
        TrimRight(body_.substr(span->begin, Offset(at) - span->begin));
    // What iteration left must end the value it began with.
    if (value.size() < 2 || (value.back() != '}' && value.back() != ']') ||
        (value.back() == '}') != (value.front() == '{')) {
      return simdjson::TAPE_ERROR;
    }
    span->end = static_cast<uint32_t>(span->begin + value.size());
    return simdjson::SUCCESS;
  }
  void SetDocument(sj::document* doc) { doc_ = doc; }

  // An object's span, leaving the object ready to iterate.
  error_code Object(sj::value& v, sj::object* o, Span* span) {
    if (auto e = v.get_object().get(*o)) return e;
    std::string_view raw;
    if (auto e = o->raw_json().get(raw)) return e;
    *span = SpanOf(raw);
    bool ignored;
    return o->reset().get(ignored);
  }

  error_code Array(sj::value& v, sj::array* a, Span* span) {
    if (auto e = v.get_array().get(*a)) return e;
    std::string_view raw;
    if (auto e = a->raw_json().get(raw)) return e;
    *span = SpanOf(raw);
    bool ignored;
    return a->reset().get(ignored);
  }

  std::string_view body() const { return body_; }

 private:
  uint32_t Offset(const char* p) const {
    return static_cast<uint32_t>(p - body_.data());
  }

  std::string_view body_;
  sj::document* doc_ = nullptr;
};

// A failure with the field it concerns.
struct Failure {
  std::string where;
  error_code code = simdjson::SUCCESS;
};

#define TC_TRY(expr, what)                     \
  do {                                         \
    if (auto tc_e = (expr)) {                  \
      return Failure{std::string(what), tc_e}; \
    }                                          \
  } while (0)

// A string value's text. parseF (issue 32): a string without a backslash
// is its bytes between the quotes, a view into the body: stage 1 has
// checked its UTF-8, its control characters and where it ends, and with no
// escape there is nothing left that get_string() would decode or refuse.
// Only a string with an escape, or a value that is not a string (for the
// same error), goes through get_string() (decoded into the parser's string
// buffer, valid until the next parse on this thread). get_string() copied
// every id, name, role and type into that buffer first (~80,000 of a 200 KB
// request's instructions, callgrind).
//
// HasBackslash reads up to 15 bytes past the token's end: every document
// simdjson reads has SIMDJSON_PADDING (64) readable bytes after it.
// Choice (parseG): ids, names, roles and types are 4-40 bytes; one to
// three 16-byte SSE2 compares cost less than a memchr call per string
// (~586 strings of the 200 KB bench request, ~30 instructions each in
// __memchr_avx2 plus the call); longer strings still go to memchr.
bool HasBackslash(std::string_view s) {
#if defined(__SSE2__)
  if (s.size() <= 48) {
    const __m128i backslash = _mm_set1_epi8('\\');
    const char* p = s.data();
    size_t n = s.size();
    while (true) {
      const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(
          _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)),
                         backslash)));
      if (n <= 16) return (mask & ((1u << n) - 1)) != 0;
      if (mask != 0) return true;
      p += 16;
      n -= 16;
    }
  }
#endif
  return std::memchr(s.data(), '\\', s.size()) != nullptr;
}

// The decoding path of StringView, out of line: inlined, its code made
// every call save and restore the registers it needs (session 15).
[[gnu::noinline]] error_code DecodedString(sj::value& v,
                                           std::string_view* out) {
  return v.get_string().get(*out);
}

error_code StringView(sj::value& v, std::string_view* out) {
  std::string_view tok = v.raw_json_token();
  if (!tok.empty() && tok.front() == '"') {
    tok = TrimRight(tok);
    if (tok.size() >= 2 && tok.back() == '"' &&
        !HasBackslash(tok.substr(1, tok.size() - 2))) {
      // Consumed as get_string() would (without decoding): a value left
      // unconsumed is skipped, and the skip checks less of what follows
      // it (found by the differential test: "a":"b":"c" was accepted).
      sj::raw_json_string ignored;
      if (auto e = v.get_raw_json_string().get(ignored)) return e;
      *out = tok.substr(1, tok.size() - 2);
      return simdjson::SUCCESS;
    }
  }
  return DecodedString(v, out);
}

// Reads a string value into `out`.
error_code String(sj::value& v, std::string* out) {
  std::string_view s;
  if (auto e = StringView(v, &s)) return e;
  out->assign(s);
  return simdjson::SUCCESS;
}

// A view of `s` that outlives the parse (ParsedRequest's views): `s` itself
// when its bytes lie in `body` (the body's bytes stay while the parse is
// used), else a copy kept in out->owned (a decoded string in the parser's
// buffer, valid only until the next parse on this thread).
std::string_view KeepString(ParsedRequest* out, std::string s) {
  if (!out->owned) out->owned = std::make_shared<RequestText>();
  return out->owned->values.emplace_back(std::move(s));
}

std::string_view Keep(ParsedRequest* out, std::string_view body,
                      std::string_view s) {
  if (s.empty()) return {};
  const auto at = reinterpret_cast<uintptr_t>(s.data());
  const auto begin = reinterpret_cast<uintptr_t>(body.data());
  if (at >= begin && at - begin <= body.size() &&
      s.size() <= body.size() - (at - begin)) {
    return s;
  }
  return KeepString(out, std::string(s));
}

// Reads a string value as a view that outlives the parse (Keep).
error_code Text(Reader& r, sj::value& v, ParsedRequest* out,
                std::string_view* s) {
  if (auto e = StringView(v, s)) return e;
  *s = Keep(out, r.body(), *s);
  return simdjson::SUCCESS;
}

// True when a tool output in OpenAI form (which has no error flag) is an
// MCP CallToolResult serialized as text with "isError": true.
bool LooksLikeErrorResult(std::string_view body, Span content) {
  std::string_view raw = content.In(body);
  if (raw.size() < 4 || raw[0] != '"' || raw[1] != '{') return false;
  if (raw.find("isError") == std::string_view::npos &&
      raw.find("is_error") == std::string_view::npos) {
    return false;
  }
  std::string text;
  if (!DecodeJsonString(raw, &text)) return false;
  simdjson::padded_string padded(text);
  sj::parser p;
  sj::document doc;
  if (p.iterate(padded).get(doc)) return false;
  sj::object o;
  if (doc.get_object().get(o)) return false;
  for (auto field : o) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    if (Eq(key, "isError") || Eq(key, "is_error")) {
      bool b = false;
      if (!field.value().get_bool().get(b) && b) return true;
    }
  }
  return false;
}

// ------------------------------------------------------------- Anthropic

// One content block; tool_use / tool_result blocks are appended to
// out->tool_uses / out->tool_results (AnthropicMessage keeps those that fit
// the message's role).
std::optional<Failure> AnthropicBlock(Reader& r, sj::value& v, uint32_t index,
                                      ParsedRequest* out) {
  sj::object o;
  Span span;
  TC_TRY(r.OpenObject(v, &o, &span), "messages[].content[]");
  // Views into the body (or the parser's string buffer, for escaped
  // strings): valid for the whole parse.
  std::string_view type, id, name;
  Span input, content;
  bool is_error = false;
  for (auto field : o) {
    std::string_view key;
    TC_TRY(field.unescaped_key().get(key), "content block key");
    sj::value fv;
    TC_TRY(field.value().get(fv), "content block value");
    if (Eq(key, "type")) {
      TC_TRY(StringView(fv, &type), "content block 'type'");
    } else if (Eq(key, "id")) {
      TC_TRY(StringView(fv, &id), "tool_use 'id'");
    } else if (Eq(key, "tool_use_id")) {
      TC_TRY(StringView(fv, &id), "tool_result 'tool_use_id'");
    } else if (Eq(key, "name")) {
      TC_TRY(StringView(fv, &name), "tool_use 'name'");
    } else if (Eq(key, "input")) {
      TC_TRY(r.Raw(fv, &input), "tool_use 'input'");
    } else if (Eq(key, "content")) {
      TC_TRY(r.Raw(fv, &content), "tool_result 'content'");
    } else if (Eq(key, "is_error")) {
      sj::json_type t;
      TC_TRY(fv.type().get(t), "tool_result 'is_error'");
      if (t != sj::json_type::null) {
        TC_TRY(fv.get_bool().get(is_error), "tool_result 'is_error'");
      }
    }
  }
  TC_TRY(r.Close(&span), "messages[].content[]");
  if (Eq(type, "tool_use")) {
    RequestToolUse& u = out->tool_uses.emplace_back();
    u.id = Keep(out, r.body(), id);
    u.name = Keep(out, r.body(), name);
    if (input.empty()) {
      u.arguments = "{}";
    } else {
      u.arguments = input.In(r.body());
    }
    u.span = span;
    u.message = index;
  } else if (Eq(type, "tool_result")) {
    ToolResult& t = out->tool_results.emplace_back();
    t.id = Keep(out, r.body(), id);
    t.span = span;
    t.content = content;
    t.is_error = is_error;
    t.message = index;
  }
  return std::nullopt;
}

std::optional<Failure> AnthropicMessage(Reader& r, sj::value& v,
                                        ParsedRequest* out) {
  Message& m = out->message_list.emplace_back();
  sj::object o;
  TC_TRY(r.OpenObject(v, &o, &m.span), "messages[]");
  const uint32_t index = static_cast<uint32_t>(out->message_list.size() - 1);
  // parseF: this message's blocks are appended to the request's lists
  // directly (no vectors per message); [first_use, end) and
  // [first_result, end) are this message's.
  const size_t first_use = out->tool_uses.size();
  const size_t first_result = out->tool_results.size();
  for (auto field : o) {
    std::string_view key;
    TC_TRY(field.unescaped_key().get(key), "message key");
    sj::value fv;
    TC_TRY(field.value().get(fv), "message value");
    if (Eq(key, "role")) {
      TC_TRY(Text(r, fv, out, &m.role), "messages[].role");
    } else if (Eq(key, "content")) {
      // A repeated member: the last wins, as the provider reads it (the
      // blocks of an earlier one are not the turn's; review finding).
      out->tool_uses.resize(first_use);
      out->tool_results.resize(first_result);
      sj::json_type t;
      TC_TRY(fv.type().get(t), "messages[].content");
      if (t != sj::json_type::array) {
        TC_TRY(r.Raw(fv, &m.content), "messages[].content");
        continue;
      }
      sj::array a;
      TC_TRY(r.OpenArray(fv, &a, &m.content), "messages[].content");
      for (auto item : a) {
        sj::value bv;
        TC_TRY(item.get(bv), "messages[].content[]");
        if (auto f = AnthropicBlock(r, bv, index, out)) return f;
      }
      TC_TRY(r.Close(&m.content), "messages[].content");
    }
  }
  TC_TRY(r.Close(&m.span), "messages[]");
  // Choice: tool_use counts only in assistant turns and tool_result only in
  // user turns, as the API requires; misplaced blocks are not pairs.
  const std::string_view role = m.role;
  if (role != "assistant") out->tool_uses.resize(first_use);
  if (role != "user") out->tool_results.resize(first_result);
  return std::nullopt;
}

// ------------------------------------------------------------ Chat / Resp

std::optional<Failure> ChatToolCalls(Reader& r, sj::value& v, uint32_t index,
                                     ParsedRequest* out) {
  sj::array a;
  TC_TRY(v.get_array().get(a), "messages[].tool_calls");
  for (auto item : a) {
    sj::object o;
    Span span;
    sj::value iv;
    TC_TRY(item.get(iv), "tool_calls[]");
    TC_TRY(r.Object(iv, &o, &span), "tool_calls[]");
    RequestToolUse u;
    u.span = span;
    u.message = index;
    for (auto field : o) {
      std::string_view key;
      TC_TRY(field.unescaped_key().get(key), "tool_calls[] key");
      sj::value fv;
      TC_TRY(field.value().get(fv), "tool_calls[] value");
      if (Eq(key, "id")) {
        TC_TRY(Text(r, fv, out, &u.id), "tool_calls[].id");
      } else if (Eq(key, "custom")) {
        // A custom (freeform) tool call: {"name", "input": string}.
        sj::object co;
        TC_TRY(fv.get_object().get(co), "tool_calls[].custom");
        for (auto cf : co) {
          std::string_view ck;
          TC_TRY(cf.unescaped_key().get(ck), "custom key");
          sj::value cval;
          TC_TRY(cf.value().get(cval), "custom value");
          if (Eq(ck, "name")) {
            TC_TRY(Text(r, cval, out, &u.name), "tool_calls[].custom.name");
          } else if (Eq(ck, "input")) {
            Span in;
            TC_TRY(r.Raw(cval, &in), "tool_calls[].custom.input");
            u.arguments = KeepString(out, InputArguments(in.In(r.body())));
            u.function = false;
          }
        }
      } else if (Eq(key, "function")) {
        sj::object fo;
        TC_TRY(fv.get_object().get(fo), "tool_calls[].function");
        for (auto ff : fo) {
          std::string_view fk;
          TC_TRY(ff.unescaped_key().get(fk), "function key");
          sj::value fval;
          TC_TRY(ff.value().get(fval), "function value");
          if (Eq(fk, "name")) {
            TC_TRY(Text(r, fval, out, &u.name), "tool_calls[].function.name");
          } else if (Eq(fk, "arguments")) {
            TC_TRY(Text(r, fval, out, &u.arguments),
                   "tool_calls[].function.arguments");
          }
        }
      }
    }
    if (u.arguments.empty()) u.arguments = "{}";
    out->tool_uses.push_back(std::move(u));
  }
  return std::nullopt;
}

// One Chat Completions message or one Responses input item.
std::optional<Failure> OpenAiMessage(Reader& r, sj::value& v,
                                     ParsedRequest* out) {
  Message m;
  sj::object o;
  TC_TRY(r.OpenObject(v, &o, &m.span), "messages[]");
  const uint32_t index = static_cast<uint32_t>(out->message_list.size());
  // Views (see AnthropicBlock).
  std::string_view call_id, name, name_space, arguments;
  Span output, input, action;
  for (auto field : o) {
    std::string_view key;
    TC_TRY(field.unescaped_key().get(key), "message key");
    sj::value fv;
    TC_TRY(field.value().get(fv), "message value");
    if (Eq(key, "role")) {
      TC_TRY(Text(r, fv, out, &m.role), "messages[].role");
    } else if (Eq(key, "type")) {
      TC_TRY(Text(r, fv, out, &m.type), "input[].type");
    } else if (Eq(key, "content")) {
      TC_TRY(r.Raw(fv, &m.content), "messages[].content");
    } else if (Eq(key, "tool_call_id")) {
      TC_TRY(StringView(fv, &call_id), "messages[].tool_call_id");
    } else if (Eq(key, "call_id")) {
      TC_TRY(StringView(fv, &call_id), "input[].call_id");
    } else if (Eq(key, "name")) {
      TC_TRY(StringView(fv, &name), "input[].name");
    } else if (Eq(key, "namespace") && out->api == Api::kOpenAiResponses) {
      TC_TRY(StringView(fv, &name_space), "input[].namespace");
    } else if (Eq(key, "arguments")) {
      TC_TRY(StringView(fv, &arguments), "input[].arguments");
    } else if (Eq(key, "output")) {
      TC_TRY(r.Raw(fv, &output), "input[].output");
    } else if (Eq(key, "input") && out->api == Api::kOpenAiResponses) {
      TC_TRY(r.Raw(fv, &input), "input[].input");
    } else if ((Eq(key, "action") || Eq(key, "operation")) &&
               out->api == Api::kOpenAiResponses) {
      TC_TRY(r.Raw(fv, &action), "input[].action");
    } else if (Eq(key, "tool_calls") && out->api == Api::kOpenAiChat) {
      sj::json_type t;
      TC_TRY(fv.type().get(t), "messages[].tool_calls");
      if (t == sj::json_type::array) {
        if (auto f = ChatToolCalls(r, fv, index, out)) return f;
      }
    }
  }
  TC_TRY(r.Close(&m.span), "messages[]");
  if (out->api == Api::kOpenAiChat && Eq(m.role, "tool")) {
    ToolResult t;
    t.id = Keep(out, r.body(), call_id);
    t.span = m.span;
    t.content = m.content;
    t.is_error = LooksLikeErrorResult(r.body(), m.content);
    t.message = index;
    out->tool_results.push_back(std::move(t));
  } else if (out->api == Api::kOpenAiResponses) {
    const ItemKind kind = ResponsesItemKind(m.type);
    if (kind == ItemKind::kClientCall) {
      RequestToolUse u;
      u.id = Keep(out, r.body(), call_id);
      if (name_space.empty()) {
        // CallItemName's answer is a part of the name or the type.
        std::string_view n = name;
        if (n.empty()) {
          n = m.type;
          if (n.ends_with("_call")) n.remove_suffix(5);
        }
        u.name = Keep(out, r.body(), n);
      } else {
        u.name = KeepString(out, CallItemName(m.type, name, name_space));
      }
      u.function = Eq(m.type, "function_call");
      if (!arguments.empty()) {
        u.arguments = Keep(out, r.body(), arguments);
      } else if (!input.empty()) {
        u.arguments = KeepString(out, InputArguments(input.In(r.body())));
      } else if (!action.empty()) {
        u.arguments = action.In(r.body());
      } else {
        u.arguments = "{}";
      }
      u.span = m.span;
      u.message = index;
      out->tool_uses.push_back(std::move(u));
    } else if (kind == ItemKind::kClientOutput) {
      ToolResult t;
      t.id = Keep(out, r.body(), call_id);
      t.span = m.span;
      t.content = output;
      t.is_error = LooksLikeErrorResult(r.body(), output);
      t.message = index;
      out->tool_results.push_back(std::move(t));
    }
  }
  out->message_list.push_back(std::move(m));
  return std::nullopt;
}

std::optional<Failure> ToolDefs(Reader& r, sj::value& v, Api api,
                                ParsedRequest* out) {
  sj::array a;
  TC_TRY(r.Array(v, &a, &out->tools), "tools");
  for (auto item : a) {
    sj::value iv;
    TC_TRY(item.get(iv), "tools[]");
    sj::object o;
    ToolDef d;
    TC_TRY(r.Object(iv, &o, &d.span), "tools[]");
    for (auto field : o) {
      std::string_view key;
      TC_TRY(field.unescaped_key().get(key), "tools[] key");
      sj::value fv;
      TC_TRY(field.value().get(fv), "tools[] value");
      if (Eq(key, "name")) {
        TC_TRY(String(fv, &d.name), "tools[].name");
      } else if (Eq(key, "description")) {
        TC_TRY(r.Raw(fv, &d.description), "tools[].description");
      } else if (Eq(key, "input_schema") || Eq(key, "parameters")) {
        TC_TRY(r.Raw(fv, &d.schema), "tools[].input_schema");
      } else if (Eq(key, "function") && api == Api::kOpenAiChat) {
        sj::object fo;
        TC_TRY(fv.get_object().get(fo), "tools[].function");
        for (auto ff : fo) {
          std::string_view fk;
          TC_TRY(ff.unescaped_key().get(fk), "function key");
          sj::value fval;
          TC_TRY(ff.value().get(fval), "function value");
          if (Eq(fk, "name")) {
            TC_TRY(String(fval, &d.name), "tools[].function.name");
          } else if (Eq(fk, "description")) {
            TC_TRY(r.Raw(fval, &d.description), "tools[].function.description");
          } else if (Eq(fk, "parameters")) {
            TC_TRY(r.Raw(fval, &d.schema), "tools[].function.parameters");
          }
        }
      }
    }
    out->tool_defs.push_back(std::move(d));
  }
  return std::nullopt;
}

std::optional<Failure> Messages(Reader& r, sj::value& v, ParsedRequest* out) {
  sj::json_type t;
  TC_TRY(v.type().get(t), "messages");
  if (t == sj::json_type::string && out->api == Api::kOpenAiResponses) {
    // Responses: `input` may be a plain string (one user message).
    TC_TRY(r.Raw(v, &out->messages), "input");
    return std::nullopt;
  }
  if (t != sj::json_type::array) {
    return Failure{out->api == Api::kOpenAiResponses ? "input" : "messages",
                   simdjson::INCORRECT_TYPE};
  }
  sj::array a;
  TC_TRY(r.OpenArray(v, &a, &out->messages), "messages");
  // parseF: room for the lists up front (a message takes at least ~30
  // bytes; one per 512 bytes, at most 4,096, covers real requests, whose
  // messages average several KB): growing by doubling moved every message,
  // call and result ~log2(n) times (~45,000 instructions of the 200 KB
  // request). Reserved memory is not touched until used.
  const size_t guess =
      std::min<size_t>(16 + r.body().size() / 512, size_t{4096});
  out->message_list.reserve(guess);
  out->tool_uses.reserve(guess / 2);
  out->tool_results.reserve(guess / 2);
  for (auto item : a) {
    sj::value iv;
    TC_TRY(item.get(iv), "messages[]");
    std::optional<Failure> f = out->api == Api::kAnthropicMessages
                                   ? AnthropicMessage(r, iv, out)
                                   : OpenAiMessage(r, iv, out);
    if (f) return f;
  }
  TC_TRY(r.Close(&out->messages), "messages");
  return std::nullopt;
}

std::optional<Failure> Top(Reader& r, sj::document& doc, ParsedRequest* out) {
  sj::object root;
  TC_TRY(doc.get_object().get(root), "request body");
  for (auto field : root) {
    std::string_view key;
    TC_TRY(field.unescaped_key().get(key), "key");
    sj::value v;
    TC_TRY(field.value().get(v), "value");
    if (Eq(key, "model")) {
      out->model_span = r.SpanOf(v.raw_json_token());
      TC_TRY(String(v, &out->model), "model");
    } else if (Eq(key, "messages") ||
               (Eq(key, "input") && out->api == Api::kOpenAiResponses)) {
      out->message_list.clear();
      out->tool_uses.clear();
      out->tool_results.clear();
      if (auto f = Messages(r, v, out)) return f;
    } else if (Eq(key, "tools")) {
      out->tool_defs.clear();
      sj::json_type t;
      TC_TRY(v.type().get(t), "tools");
      if (t == sj::json_type::null) continue;
      if (auto f = ToolDefs(r, v, out->api, out)) return f;
    } else if (Eq(key, "system") || Eq(key, "instructions")) {
      TC_TRY(r.Raw(v, &out->system), key);
    } else if (Eq(key, "tool_choice")) {
      TC_TRY(r.Raw(v, &out->tool_choice), "tool_choice");
    } else if (Eq(key, "thinking") || Eq(key, "reasoning")) {
      TC_TRY(r.Raw(v, &out->thinking), key);
    } else if (Eq(key, "stream")) {
      sj::json_type t;
      TC_TRY(v.type().get(t), "stream");
      if (t != sj::json_type::null) {
        TC_TRY(v.get_bool().get(out->stream), "stream");
      }
    } else if (Eq(key, "previous_response_id")) {
      sj::json_type t;
      TC_TRY(v.type().get(t), "previous_response_id");
      if (t != sj::json_type::null) {
        TC_TRY(String(v, &out->previous_response_id), "previous_response_id");
      }
    } else if (Eq(key, "conversation") && out->api == Api::kOpenAiResponses) {
      sj::json_type t;
      TC_TRY(v.type().get(t), "conversation");
      out->conversation = t != sj::json_type::null;
    }
  }
  return std::nullopt;
}

std::string Describe(const Failure& f) {
  std::string what = simdjson::error_message(f.code);
  if (f.code == simdjson::DEPTH_ERROR) what = "nested too deeply (depth limit)";
  if (f.code == simdjson::INCORRECT_TYPE) what = "has the wrong type";
  return f.where + ": " + what;
}

}  // namespace

std::string_view ApiName(Api api) {
  switch (api) {
    case Api::kAnthropicMessages:
      return "anthropic_messages";
    case Api::kOpenAiChat:
      return "openai_chat";
    case Api::kOpenAiResponses:
      return "openai_responses";
  }
  return "unknown";
}

namespace {
thread_local uint64_t request_parses = 0;
}  // namespace

uint64_t RequestParseCount() { return request_parses; }

Result<ParsedRequest> ParseRequest(Api api, const std::string& body,
                                   const ParseLimits& limits) {
  ++request_parses;
  ParsedRequest out;
  out.api = api;
  if (body.size() >= UINT32_MAX) {
    return InvalidArgument("request body: larger than 4 GiB");
  }
  const std::string* src = &body;
  if (body.capacity() < body.size() + simdjson::SIMDJSON_PADDING) {
    // Kept with the result: its views may point into the copy.
    out.owned = std::make_shared<RequestText>();
    std::string& padded_copy = out.owned->body;
    padded_copy.reserve(body.size() + simdjson::SIMDJSON_PADDING);
    padded_copy = body;
    src = &padded_copy;
  }
  out.text_base = src->data();
  simdjson::padded_string_view view(src->data(), src->size(), src->capacity());
  // simdjson On Demand checks depth only where it iterates, not in values
  // it skips: the brackets are counted first, over stage 1's structurals.
  // A body refused for any other reason is also run through the old
  // byte-level pre-check (json::CheckLimits), so that a body it found too
  // deep is still refused with the depth message, whatever else is wrong.
  auto too_deep = [&] {
    return InvalidArgument(
        "request body: nested deeper than the depth limit "
        "of " +
        std::to_string(limits.max_depth));
  };
  auto refuse = [&](std::string message) {
    if (json::CheckLimits(*src, {.max_depth = limits.max_depth}) ==
        json::Error::kTooDeep) {
      return too_deep();
    }
    return InvalidArgument(std::move(message));
  };
  sj::parser& parser = ThreadParser(limits.max_depth);
  sj::document doc;
  if (auto e = parser.iterate(view).get(doc)) {
    return refuse(Describe({"request body", e}));
  }
  if (StructuralsTooDeep(doc, src->data(), src->size(), limits.max_depth)) {
    return too_deep();
  }
  Reader r(*src);
  r.SetDocument(&doc);
  if (std::optional<Failure> f = Top(r, doc, &out)) {
    return refuse(Describe(*f));
  }
  // Trailing content after the object.
  const char* rest = nullptr;
  if (doc.current_location().get(rest) == simdjson::SUCCESS) {
    return refuse("request body: trailing content after the JSON value");
  }
  for (const ToolResult& t : out.tool_results) {
    if (!t.content.empty() && !ValidResultContent(t.content.In(*src))) {
      return refuse("tool result " + std::string(t.id) +
                    ": content is not valid JSON");
    }
  }
  // The last assistant message (or client call item), looked for from the
  // end: the newest turn is a few messages long, the history hundreds.
  uint32_t turn = static_cast<uint32_t>(out.message_list.size());
  for (; turn > 0; --turn) {
    const Message& m = out.message_list[turn - 1];
    if (Eq(m.role, "assistant") ||
        ResponsesItemKind(m.type) == ItemKind::kClientCall) {
      break;
    }
  }
  out.turn_begin = turn;
  // (When the body was copied, spans index the copy, which has the same
  // bytes at the same offsets, and views point into it: out.owned->body.)
  return out;
}

void RebaseViews(ParsedRequest* request, std::string_view body) {
  const char* from = request->text_base;
  if (from == nullptr || from == body.data()) return;
  if (request->owned && from == request->owned->body.data()) return;
  const auto begin = reinterpret_cast<uintptr_t>(from);
  auto move = [&](std::string_view& v) {
    const auto at = reinterpret_cast<uintptr_t>(v.data());
    if (v.empty() || at < begin || at - begin > body.size()) return;
    v = std::string_view(body.data() + (at - begin), v.size());
  };
  for (Message& m : request->message_list) {
    move(m.role);
    move(m.type);
  }
  for (RequestToolUse& u : request->tool_uses) {
    move(u.id);
    move(u.name);
    move(u.arguments);
  }
  for (ToolResult& t : request->tool_results) move(t.id);
  request->text_base = body.data();
}

// ------------------------------------------------------------ responses

namespace {

void ReadUsage(sj::object& o, Usage* u) {
  for (auto field : o) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return;
    sj::value v;
    if (field.value().get(v)) return;
    int64_t n = 0;
    if (Eq(key, "input_tokens") || Eq(key, "prompt_tokens")) {
      if (!v.get_int64().get(n)) u->input_tokens = n;
    } else if (Eq(key, "output_tokens") || Eq(key, "completion_tokens")) {
      if (!v.get_int64().get(n)) u->output_tokens = n;
    } else if (Eq(key, "cache_read_input_tokens")) {
      if (!v.get_int64().get(n)) u->cache_read_tokens = n;
    } else if (Eq(key, "cache_creation_input_tokens")) {
      if (!v.get_int64().get(n)) u->cache_creation_tokens = n;
    } else if (Eq(key, "prompt_tokens_details") ||
               Eq(key, "input_tokens_details")) {
      sj::object d;
      if (v.get_object().get(d)) continue;
      for (auto df : d) {
        std::string_view dk;
        if (df.unescaped_key().get(dk)) break;
        if (Eq(dk, "cached_tokens")) {
          if (!df.value().get_int64().get(n)) u->cache_read_tokens = n;
        }
      }
    }
  }
}

// A Responses function_call item, or an Anthropic tool_use block, or a Chat
// tool_call object (`kind` selects the member names).
enum class CallShape { kAnthropic, kChat, kResponses };

// `name_space`: a Responses item's `namespace` (nullptr: not read).
bool ReadCall(sj::object& o, CallShape shape, ToolUse* u, std::string* type,
              std::string* name_space = nullptr) {
  std::string_view raw_input;
  for (auto field : o) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    sj::value v;
    if (field.value().get(v)) return false;
    if (Eq(key, "type")) {
      if (String(v, type)) return false;
    } else if (Eq(key, "id") && shape != CallShape::kResponses) {
      if (String(v, &u->id)) return false;
    } else if (Eq(key, "call_id") && shape == CallShape::kResponses) {
      if (String(v, &u->id)) return false;
    } else if (Eq(key, "name")) {
      if (String(v, &u->name)) return false;
    } else if (Eq(key, "namespace") && name_space != nullptr) {
      if (String(v, name_space)) return false;
    } else if (Eq(key, "input") && shape == CallShape::kAnthropic) {
      sj::object in;
      if (v.get_object().get(in)) return false;
      if (in.raw_json().get(raw_input)) return false;
      u->arguments = std::string(TrimRight(raw_input));
    } else if (Eq(key, "arguments")) {
      if (String(v, &u->arguments)) return false;
    } else if (Eq(key, "input") && shape == CallShape::kResponses) {
      // A custom tool call's freeform input (a string).
      std::string_view tok;
      if (!RawValue(v, &tok)) return false;
      u->arguments = InputArguments(tok);
    } else if ((Eq(key, "action") || Eq(key, "operation")) &&
               shape == CallShape::kResponses && u->arguments.empty()) {
      std::string_view tok;
      if (!RawValue(v, &tok)) return false;
      u->arguments = std::string(tok);
    } else if (Eq(key, "custom") && shape == CallShape::kChat) {
      u->function = false;
      sj::object f;
      if (v.get_object().get(f)) return false;
      std::string ignored;
      if (!ReadCall(f, CallShape::kResponses, u, &ignored)) return false;
    } else if (Eq(key, "function") && shape == CallShape::kChat) {
      sj::object f;
      if (v.get_object().get(f)) return false;
      std::string ignored;
      if (!ReadCall(f, CallShape::kResponses, u, &ignored)) return false;
    }
  }
  if (u->arguments.empty()) u->arguments = "{}";
  return true;
}

std::optional<std::string> ResponseTop(Api api, sj::document& doc,
                                       ParsedResponse* out) {
  sj::object root;
  if (doc.get_object().get(root)) return "response body is not an object";
  for (auto field : root) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return "bad key";
    sj::value v;
    if (field.value().get(v)) return "bad value";
    if (Eq(key, "usage")) {
      sj::object u;
      if (!v.get_object().get(u)) ReadUsage(u, &out->usage);
    } else if (Eq(key, "stop_reason") || Eq(key, "status")) {
      (void)String(v, &out->stop_reason);
    } else if ((Eq(key, "content") && api == Api::kAnthropicMessages) ||
               (Eq(key, "output") && api == Api::kOpenAiResponses)) {
      sj::array a;
      if (v.get_array().get(a)) return std::string(key) + " is not an array";
      for (auto item : a) {
        sj::object o;
        if (item.get_object().get(o)) return "content block is not an object";
        ToolUse u;
        std::string type, name_space;
        if (!ReadCall(o,
                      api == Api::kAnthropicMessages ? CallShape::kAnthropic
                                                     : CallShape::kResponses,
                      &u, &type,
                      api == Api::kOpenAiResponses ? &name_space : nullptr)) {
          return "malformed content block";
        }
        if (Eq(type, "tool_use") ||
            (api == Api::kOpenAiResponses &&
             ResponsesItemKind(type) == ItemKind::kClientCall)) {
          u.name = CallItemName(type, u.name, name_space);
          if (type != "tool_use") u.function = Eq(type, "function_call");
          out->tool_uses.push_back(std::move(u));
        }
      }
    } else if (Eq(key, "choices") && api == Api::kOpenAiChat) {
      sj::array a;
      if (v.get_array().get(a)) return "choices is not an array";
      uint32_t position = 0;
      for (auto item : a) {
        sj::object choice;
        if (item.get_object().get(choice)) return "choice is not an object";
        // Every choice is observed (n > 1 are alternatives; the client may
        // continue with any of them). Its "index" names it, else position.
        const uint32_t first_call =
            static_cast<uint32_t>(out->tool_uses.size());
        int64_t cindex = position;
        const bool first = position++ == 0;
        out->choices = position;
        for (auto cf : choice) {
          std::string_view ck;
          if (cf.unescaped_key().get(ck)) return "bad key";
          sj::value cv;
          if (cf.value().get(cv)) return "bad value";
          if (Eq(ck, "index")) {
            if (cv.get_int64().get(cindex) || cindex < 0 ||
                cindex >= (int64_t{1} << 31)) {
              return "bad choice index";
            }
            continue;
          }
          if (Eq(ck, "finish_reason")) {
            if (first) (void)String(cv, &out->stop_reason);
            continue;
          }
          if (Eq(ck, "message")) {
            sj::object msg;
            if (cv.get_object().get(msg)) return "message is not an object";
            for (auto mf : msg) {
              std::string_view mk;
              if (mf.unescaped_key().get(mk)) return "bad key";
              if (mk != "tool_calls") continue;
              sj::array calls;
              if (mf.value().get_array().get(calls)) continue;  // null
              for (auto c : calls) {
                sj::object co;
                if (c.get_object().get(co)) return "tool_call not an object";
                ToolUse u;
                std::string type;
                if (!ReadCall(co, CallShape::kChat, &u, &type)) {
                  return "malformed tool_call";
                }
                out->tool_uses.push_back(std::move(u));
              }
            }
          }
        }
        for (size_t i = first_call; i < out->tool_uses.size(); ++i) {
          out->tool_uses[i].choice = static_cast<uint32_t>(cindex);
        }
      }
    }
  }
  return std::nullopt;
}

// Parses small JSON texts (one stream event) with a per-thread parser.
template <class F>
bool WithDoc(std::string_view data, F&& f) {
  thread_local sj::parser parser;
  thread_local std::string buf;
  buf.assign(data);
  buf.reserve(data.size() + simdjson::SIMDJSON_PADDING);
  simdjson::padded_string_view view(buf.data(), buf.size(), buf.capacity());
  sj::document doc;
  if (parser.iterate(view).get(doc)) return false;
  return f(doc);
}

}  // namespace

Result<ParsedResponse> ParseResponse(Api api, std::string_view body) {
  ParsedResponse out;
  std::optional<std::string> err;
  const bool ok = WithDoc(body, [&](sj::document& doc) {
    err = ResponseTop(api, doc, &out);
    return !err.has_value();
  });
  if (!ok) {
    return InvalidArgument("response body: " +
                           (err ? *err : std::string("not valid JSON")));
  }
  return out;
}

// --------------------------------------------------------------- streams

void StreamReader::Fail(std::string why) {
  if (failed_) return;
  failed_ = true;
  failure_ = std::move(why);
}

void StreamReader::OnEvent(std::string_view event, std::string_view data) {
  ++events_;
  if (complete_ || failed_) return;
  switch (api_) {
    case Api::kAnthropicMessages:
      Anthropic(event, data);
      break;
    case Api::kOpenAiChat:
      Chat(data);
      break;
    case Api::kOpenAiResponses:
      Responses(event, data);
      break;
  }
}

void StreamReader::Anthropic(std::string_view event, std::string_view data) {
  if (Eq(event, "ping")) return;
  if (Eq(event, "error")) return Fail("error event: " + std::string(data));
  if (Eq(event, "message_stop")) {
    complete_ = true;
    return;
  }
  // Choice: a content_block_delta without "partial_json" (a text, thinking,
  // signature or citations delta: most of a stream's events) carries
  // nothing this reader collects, so it is not parsed; such a delta is
  // relayed unvalidated (it was parsed only to be ignored: ~1,000
  // instructions each, callgrind).
  if (Eq(event, "content_block_delta") &&
      data.find("partial_json") == std::string_view::npos) {
    return;
  }
  // llmsse: likewise a content_block_stop while no tool_use block is open
  // closes nothing collected (~1,200 instructions per text block).
  if (Eq(event, "content_block_stop") &&
      std::none_of(open_.begin(), open_.end(),
                   [](const auto& o) { return o.second.tool; })) {
    return;
  }
  // llmhop: a content_block_start that does not mention "tool_use" opens a
  // text, thinking or other block, which this reader does not collect
  // (a tool_use start names its type; server_tool_use and mcp_tool_use
  // contain the word too and are still parsed). Not parsed (~1,600
  // instructions per 2 KB streamed response, callgrind). Data with a
  // backslash is parsed: an escape may spell the type ("tool\u005fuse",
  // review finding); a text block's start rarely holds one.
  if (Eq(event, "content_block_start") &&
      data.find("tool_use") == std::string_view::npos &&
      data.find('\\') == std::string_view::npos) {
    return;
  }
  const bool ok = WithDoc(data, [&](sj::document& doc) {
    sj::object root;
    if (doc.get_object().get(root)) return false;
    int64_t index = -1;
    std::string type;
    for (auto field : root) {
      std::string_view key;
      if (field.unescaped_key().get(key)) return false;
      sj::value v;
      if (field.value().get(v)) return false;
      if (Eq(key, "type")) {
        if (String(v, &type)) return false;
      } else if (Eq(key, "index")) {
        if (v.get_int64().get(index)) return false;
      } else if (Eq(key, "content_block")) {
        sj::object block;
        if (v.get_object().get(block)) return false;
        Partial p;
        ToolUse u;
        std::string btype;
        if (!ReadCall(block, CallShape::kAnthropic, &u, &btype)) return false;
        p.tool = Eq(btype, "tool_use");
        p.id = std::move(u.id);
        p.name = std::move(u.name);
        // The start carries input {} (or a whole input): deltas follow.
        p.arguments = Eq(u.arguments, "{}") ? "" : u.arguments;
        open_[index] = std::move(p);
      } else if (Eq(key, "delta")) {
        sj::object delta;
        if (v.get_object().get(delta)) return false;
        for (auto df : delta) {
          std::string_view dk;
          if (df.unescaped_key().get(dk)) return false;
          if (Eq(dk, "partial_json")) {
            std::string_view piece;
            if (df.value().get_string().get(piece)) return false;
            auto it = open_.find(index);
            if (it != open_.end()) it->second.arguments.append(piece);
          } else if (Eq(dk, "stop_reason")) {
            // message_delta; nothing to collect.
          }
        }
      } else if (Eq(key, "usage") || Eq(key, "message")) {
        sj::object o;
        if (v.get_object().get(o)) continue;
        if (Eq(key, "usage")) {
          ReadUsage(o, &usage_);
        } else {
          for (auto mf : o) {
            std::string_view mk;
            if (mf.unescaped_key().get(mk)) return false;
            if (mk != "usage") continue;
            sj::object u;
            if (!mf.value().get_object().get(u)) ReadUsage(u, &usage_);
          }
        }
      }
    }
    if (Eq(type, "content_block_stop")) {
      auto it = open_.find(index);
      if (it != open_.end()) {
        if (it->second.tool) {
          ToolUse u;
          u.id = std::move(it->second.id);
          u.name = std::move(it->second.name);
          u.arguments = it->second.arguments.empty()
                            ? "{}"
                            : std::move(it->second.arguments);
          done_.push_back(std::move(u));
        }
        open_.erase(it);
      }
    }
    return true;
  });
  if (!ok) Fail("unreadable " + std::string(event) + " event");
}

void StreamReader::Chat(std::string_view data) {
  if (Eq(data, "[DONE]")) {
    for (auto& [i, p] : open_) {
      ToolUse u;
      u.choice = static_cast<uint32_t>(i >> 32);
      u.id = std::move(p.id);
      u.name = std::move(p.name);
      if (p.custom) {
        u.function = false;
        u.arguments = InputArguments(json::Quote(p.arguments));
      } else {
        u.arguments = p.arguments.empty() ? "{}" : std::move(p.arguments);
      }
      done_.push_back(std::move(u));
    }
    open_.clear();
    complete_ = true;
    return;
  }
  const bool ok = WithDoc(data, [&](sj::document& doc) {
    sj::object root;
    if (doc.get_object().get(root)) return false;
    for (auto field : root) {
      std::string_view key;
      if (field.unescaped_key().get(key)) return false;
      sj::value v;
      if (field.value().get(v)) return false;
      if (Eq(key, "error")) {
        Fail("error chunk");
        return true;
      }
      if (Eq(key, "usage")) {
        sj::object u;
        if (!v.get_object().get(u)) ReadUsage(u, &usage_);
        continue;
      }
      if (key != "choices") continue;
      sj::array choices;
      if (v.get_array().get(choices)) return false;
      for (auto c : choices) {
        sj::object choice;
        if (c.get_object().get(choice)) return false;
        int64_t cindex = 0;
        for (auto cf : choice) {
          std::string_view ck;
          if (cf.unescaped_key().get(ck)) return false;
          sj::value cv;
          if (cf.value().get(cv)) return false;
          if (Eq(ck, "index")) {
            if (cv.get_int64().get(cindex) || cindex < 0 ||
                cindex >= (int64_t{1} << 31)) {
              return false;
            }
            choices_ = std::max(choices_, static_cast<uint32_t>(cindex + 1));
          } else if (Eq(ck, "delta")) {
            sj::object delta;
            if (cv.get_object().get(delta)) return false;
            for (auto df : delta) {
              std::string_view dk;
              if (df.unescaped_key().get(dk)) return false;
              if (dk != "tool_calls") continue;
              sj::array calls;
              if (df.value().get_array().get(calls)) continue;
              for (auto call : calls) {
                sj::object co;
                if (call.get_object().get(co)) return false;
                int64_t tindex = 0;
                std::string id, name, args;
                bool has_args = false, custom = false;
                for (auto tf : co) {
                  std::string_view tk;
                  if (tf.unescaped_key().get(tk)) return false;
                  sj::value tv;
                  if (tf.value().get(tv)) return false;
                  if (Eq(tk, "index")) {
                    if (tv.get_int64().get(tindex)) return false;
                  } else if (Eq(tk, "id")) {
                    (void)String(tv, &id);
                  } else if (Eq(tk, "function") || Eq(tk, "custom")) {
                    custom = Eq(tk, "custom");
                    sj::object fo;
                    if (tv.get_object().get(fo)) return false;
                    for (auto ff : fo) {
                      std::string_view fk;
                      if (ff.unescaped_key().get(fk)) return false;
                      sj::value fv;
                      if (ff.value().get(fv)) return false;
                      if (Eq(fk, "name")) {
                        (void)String(fv, &name);
                      } else if (Eq(fk, "arguments") || Eq(fk, "input")) {
                        if (!String(fv, &args)) has_args = true;
                      }
                    }
                  }
                }
                if (tindex < 0 || tindex >= (int64_t{1} << 32)) return false;
                Partial& p = open_[(cindex << 32) | tindex];
                p.tool = true;
                if (custom) p.custom = true;
                if (!id.empty()) p.id = id;
                if (!name.empty()) p.name += name;
                if (has_args) p.arguments += args;
              }
            }
          }
        }
      }
    }
    return true;
  });
  if (!ok) Fail("unreadable chunk");
}

void StreamReader::Responses(std::string_view event, std::string_view data) {
  std::string type(event);
  const bool ok = WithDoc(data, [&](sj::document& doc) {
    sj::object root;
    if (doc.get_object().get(root)) return false;
    for (auto field : root) {
      std::string_view key;
      if (field.unescaped_key().get(key)) return false;
      sj::value v;
      if (field.value().get(v)) return false;
      if (Eq(key, "type")) {
        std::string t;
        if (!String(v, &t)) type = t;
      } else if (Eq(key, "item") && Eq(type, "response.output_item.done")) {
        sj::object item;
        if (v.get_object().get(item)) return false;
        ToolUse u;
        std::string itype, name_space;
        if (!ReadCall(item, CallShape::kResponses, &u, &itype, &name_space)) {
          return false;
        }
        if (ResponsesItemKind(itype) == ItemKind::kClientCall) {
          u.name = CallItemName(itype, u.name, name_space);
          u.function = Eq(itype, "function_call");
          done_.push_back(std::move(u));
        }
      } else if (Eq(key, "response")) {
        sj::object resp;
        if (v.get_object().get(resp)) continue;
        for (auto rf : resp) {
          std::string_view rk;
          if (rf.unescaped_key().get(rk)) return false;
          if (rk != "usage") continue;
          sj::object u;
          if (!rf.value().get_object().get(u)) ReadUsage(u, &usage_);
        }
      }
    }
    return true;
  });
  if (!ok) return Fail("unreadable " + type + " event");
  if (Eq(type, "response.completed") || Eq(type, "response.incomplete")) {
    complete_ = true;
  } else if (Eq(type, "response.failed") || Eq(type, "error")) {
    Fail(type);
  }
}

// ----------------------------------------------------------- utilities

ItemKind ResponsesItemKind(std::string_view type) {
  // Items the provider runs itself and answers in the same item (web
  // search, file search, code interpreter, image generation, remote MCP,
  // tool search): no client result follows, nothing of the client changes.
  static constexpr std::string_view kProviderRun[] = {"web_search_call",
                                                      "file_search_call",
                                                      "code_interpreter_call",
                                                      "image_generation_call",
                                                      "mcp_call",
                                                      "tool_search_call",
                                                      "mcp_list_tools",
                                                      "mcp_approval_request"};
  for (std::string_view p : kProviderRun) {
    if (type == p) return ItemKind::kOther;
  }
  constexpr std::string_view kCall = "_call", kOutput = "_call_output";
  if (type.size() > kOutput.size() && type.ends_with(kOutput)) {
    return ItemKind::kClientOutput;
  }
  if (type.size() > kCall.size() && type.ends_with(kCall)) {
    return ItemKind::kClientCall;
  }
  return ItemKind::kOther;
}

std::string CallItemName(std::string_view type, std::string_view name,
                         std::string_view name_space) {
  if (!name.empty() && !name_space.empty()) {
    std::string qualified(name_space);
    qualified += "__";
    qualified += name;
    return qualified;
  }
  if (!name.empty()) return std::string(name);
  if (type.ends_with("_call")) type.remove_suffix(5);
  return std::string(type);
}

namespace {

// Copies the JSON value at t[*pos] (leading whitespace skipped) to *out
// with every object member named `cache_control` (after unescaping)
// dropped, at any depth; *pos ends after the value. Whitespace between
// tokens is not copied. False when the text is not well-formed where it
// was read (the caller then keeps the original bytes).
// REQUIRES: depth <= the request parser's max depth (the content was
// validated whole, ValidResultContent).
bool CopyWithoutCacheControl(std::string_view t, size_t* pos, std::string* out,
                             bool* removed) {
  auto skip_ws = [&] {
    while (*pos < t.size() && (t[*pos] == ' ' || t[*pos] == '\t' ||
                               t[*pos] == '\n' || t[*pos] == '\r')) {
      ++*pos;
    }
  };
  // The bytes of the string literal at *pos, quotes included.
  auto string_at = [&](std::string_view* lit) {
    if (*pos >= t.size() || t[*pos] != '"') return false;
    size_t i = *pos + 1;
    while (i < t.size() && t[i] != '"') i += t[i] == '\\' ? 2 : 1;
    if (i >= t.size()) return false;
    *lit = t.substr(*pos, i + 1 - *pos);
    *pos = i + 1;
    return true;
  };
  skip_ws();
  if (*pos >= t.size()) return false;
  const char c = t[*pos];
  if (c == '"') {
    std::string_view lit;
    if (!string_at(&lit)) return false;
    out->append(lit);
    return true;
  }
  if (c == '{' || c == '[') {
    const char close = c == '{' ? '}' : ']';
    out->push_back(c);
    ++*pos;
    bool first = true;
    for (;;) {
      skip_ws();
      if (*pos >= t.size()) return false;
      if (t[*pos] == close) break;
      if (c == '{') {
        std::string_view key;
        if (!string_at(&key)) return false;
        skip_ws();
        if (*pos >= t.size() || t[*pos] != ':') return false;
        ++*pos;
        std::string name;
        const bool drop = key.find('\\') == std::string_view::npos
                              ? key == "\"cache_control\""
                              : json::Unquote(key, &name) == json::Error::kOk &&
                                    name == "cache_control";
        if (drop) {
          std::string discarded;
          if (!CopyWithoutCacheControl(t, pos, &discarded, removed)) {
            return false;
          }
          *removed = true;
        } else {
          if (!first) out->push_back(',');
          out->append(key);
          out->push_back(':');
          if (!CopyWithoutCacheControl(t, pos, out, removed)) return false;
          first = false;
        }
      } else {
        if (!first) out->push_back(',');
        if (!CopyWithoutCacheControl(t, pos, out, removed)) return false;
        first = false;
      }
      skip_ws();
      if (*pos < t.size() && t[*pos] == ',') ++*pos;
    }
    out->push_back(close);
    ++*pos;
    return true;
  }
  // A number, true, false or null.
  const size_t end = std::min(t.find_first_of(",]} \t\n\r", *pos), t.size());
  if (end == *pos) return false;
  out->append(t.substr(*pos, end - *pos));
  *pos = end;
  return true;
}

}  // namespace

std::string WithoutCacheControl(std::string_view content) {
  // Fast path: no member can be named cache_control (an escaped spelling
  // needs a backslash-u).
  if (content.find("cache_control") == std::string_view::npos &&
      content.find("\\u") == std::string_view::npos) {
    return std::string(content);
  }
  std::string out;
  out.reserve(content.size());
  size_t pos = 0;
  bool removed = false;
  if (!CopyWithoutCacheControl(content, &pos, &out, &removed) || !removed) {
    return std::string(content);
  }
  return out;
}

std::string NormalizedResult(std::string_view body, const ToolResult& r) {
  std::string_view raw = r.content.In(body);
  std::string out;
  if (raw.empty() || Eq(raw, "null")) return "{\"content\":[]}";
  // Session 19 (attackK finding 5): a client's prompt-cache breakpoints
  // inside the result's blocks are its request's, not the tool's result:
  // served back in a hidden round they exceeded the provider's four (400).
  std::string stripped;
  if (raw[0] == '{' || raw[0] == '[') {
    stripped = WithoutCacheControl(raw);
    raw = stripped;
  }
  if (raw[0] == '{') {  // one output object (computer_call_output)
    out.reserve(raw.size() + 14);
    out += "{\"content\":[";
    out += raw;
    out += "]}";
    return out;
  }
  if (raw[0] == '"') {
    out.reserve(raw.size() + 40);
    out += "{\"content\":[{\"type\":\"text\",\"text\":";
    out += raw;
    out += "}]}";
  } else {
    out.reserve(raw.size() + 13);
    out += "{\"content\":";
    out += raw;
    out += "}";
  }
  return out;
}

bool DecodeJsonString(std::string_view lit, std::string* out) {
  return json::Unquote(lit, out) == json::Error::kOk;
}

}  // namespace toolcache::llm
