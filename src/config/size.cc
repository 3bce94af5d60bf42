// Invariants: the whole text is consumed (blanks only around the number and
// the unit); the number is plain decimal (no sign, no exponent, no hex), so
// strtod sees only digits and one point; the product is checked against
// 1.8e19 before the cast to uint64_t.
// Choice: the union of what the two former parsers accepted (the
// configuration's Bytes and the store's ParseBytes), minus blanks inside a
// unit ("64 M iB", which only the configuration took by accident).
#include "src/config/size.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

namespace toolcache::config {
namespace {

struct Unit {
  std::string_view name;
  double bytes;
};

constexpr Unit kUnits[] = {{"", 1},
                           {"b", 1},
                           {"kb", 1e3},
                           {"mb", 1e6},
                           {"gb", 1e9},
                           {"tb", 1e12},
                           {"kib", 1024.0},
                           {"mib", 1048576.0},
                           {"gib", 1073741824.0},
                           {"tib", 1099511627776.0}};

bool IsBlank(char c) { return c == ' ' || c == '\t'; }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)); }

Status Refuse(std::string_view text, std::string_view why) {
  return InvalidArgument(
      "must be a size such as 67108864, \"64MiB\" or \"1.5GB\" (units B, KB, "
      "MB, GB, TB, KiB, MiB, GiB, TiB), got '" +
      std::string(text) + "'" + (why.empty() ? "" : ": " + std::string(why)));
}

}  // namespace

Result<uint64_t> ParseSize(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && IsBlank(text[i])) ++i;
  const size_t num_begin = i;
  size_t digits = 0;
  while (i < text.size() && IsDigit(text[i])) ++i, ++digits;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && IsDigit(text[i])) ++i, ++digits;
  }
  if (digits == 0) return Refuse(text, "no number");
  const std::string num(text.substr(num_begin, i - num_begin));
  while (i < text.size() && IsBlank(text[i])) ++i;
  std::string unit;
  while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) {
    unit +=
        static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
    ++i;
  }
  while (i < text.size() && IsBlank(text[i])) ++i;
  if (i != text.size()) return Refuse(text, "unexpected text after the unit");
  const Unit* u = nullptr;
  for (const Unit& k : kUnits) {
    if (k.name == unit) u = &k;
  }
  if (u == nullptr) return Refuse(text, "unknown unit '" + unit + "'");
  const double bytes = std::strtod(num.c_str(), nullptr) * u->bytes;
  if (!(bytes <= 1.8e19)) return Refuse(text, "too large");
  return static_cast<uint64_t>(std::llround(bytes));
}

}  // namespace toolcache::config
