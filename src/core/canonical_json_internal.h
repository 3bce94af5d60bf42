// Building blocks of the RFC 8785 serializer, shared by the text path, the
// nlohmann path, the tests and the benchmark. Internal to core.
//
// Thread-safety: pure functions.
//
// Example:
//   std::string out;
//   AppendEs6Number(1e21, &out);  // "1e+21"
//   AppendJcsString("a\"b", &out);  // "\"a\\\"b\""
#ifndef TOOLCACHE_SRC_CORE_CANONICAL_JSON_INTERNAL_H_
#define TOOLCACHE_SRC_CORE_CANONICAL_JSON_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "toolcache/canonical_json.h"

namespace toolcache::jcs {

// CanonicalizeJson that also lists, when the document is an object, its
// top-level members in input order into *members (CanonicalArguments).
Result<std::string> CanonicalizeWithMembers(
    std::string_view json, const CanonicalOptions& options,
    std::vector<ArgumentMember>* members);

// Appends ECMAScript Number.prototype.toString(d) (ES2015 7.1.12.1): the
// shortest round-trip digits, plain notation for 1e-7 <= |d| < 1e21, else
// exponent notation "de+x"/"d.ddde-x"; -0 gives "0". REQUIRES: d is finite.
void AppendEs6Number(double d, std::string* out);

// Appends `utf8` as an RFC 8785 string literal (section 3.2.2.2): quotes;
// \" and \\; \b \t \n \f \r; other U+0000..U+001F as \u00xx (lowercase hex);
// everything else (including U+007F and non-ASCII) verbatim.
// REQUIRES: `utf8` is valid UTF-8.
void AppendJcsString(std::string_view utf8, std::string* out);

// Appends the UTF-8 encoding of code point `cp`. REQUIRES: cp <= 0x10FFFF
// and cp is not a surrogate.
void AppendUtf8(uint32_t cp, std::string* out);

// True iff `a` sorts before `b` when both are compared as sequences of UTF-16
// code units (RFC 8785 section 3.2.3). REQUIRES: both valid UTF-8.
bool Utf16Less(std::string_view a, std::string_view b);

// Length (1-4) of the well-formed UTF-8 sequence starting at s[pos]
// (Unicode table 3-7), or 0 if it is ill-formed; then *problem names why
// and, when `subpart` is given, *subpart is the length (>= 1) of the
// maximal ill-formed subpart there (what one U+FFFD replaces).
// REQUIRES: pos < s.size().
size_t Utf8SequenceLength(std::string_view s, size_t pos, const char** problem,
                          size_t* subpart = nullptr);

// Offset of the first ill-formed UTF-8 byte of `s`, or s.size() if none;
// *problem is set as for Utf8SequenceLength.
size_t FindInvalidUtf8(std::string_view s, const char** problem);

// The exact decimal value of a JSON number text (RFC 8259 grammar, or what
// AppendEs6Number writes): its sign, its significant digits without leading
// or trailing zeros, and the power of ten of the last of them. Zero has no
// digits (and is not negative). The exponent saturates at +-2^40.
struct DecimalParts {
  bool negative = false;
  std::string digits;
  int64_t exponent = 0;
};
DecimalParts ParseDecimal(std::string_view number);

// NumberForm::kExactIntegers for one number: when the exact value of the
// JSON number text `literal` is an integer that `es6` (AppendEs6Number of
// the double it parses to) does not denote exactly, sets *exact to that
// integer's plain decimal digits ("-" first when negative) and returns true;
// otherwise returns false and leaves *exact alone.
// REQUIRES: `literal` is a valid JSON number of a finite double.
bool ExactIntegerText(std::string_view literal, std::string_view es6,
                      std::string* exact);

}  // namespace toolcache::jcs

#endif  // TOOLCACHE_SRC_CORE_CANONICAL_JSON_INTERNAL_H_
