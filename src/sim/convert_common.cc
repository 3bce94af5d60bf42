// Helpers shared by the trace reader and the converters.
//
// Invariants: CanonicalArguments returns the same text for two argument
// objects that differ only in member order or whitespace; ResultDigest is a
// pure function of the bytes; nothing here throws (SafeDump replaces invalid
// UTF-8 instead of throwing).
#include "src/sim/convert_common.h"

#include <openssl/evp.h>

#include <array>
#include <cmath>

#if __has_include("toolcache/canonical_json.h")
#include "toolcache/canonical_json.h"
#define TOOLCACHE_HAVE_CANONICAL_JSON 1
#endif

namespace toolcache::trace_internal {
namespace {

bool HasNonFinite(const nlohmann::json& v) {
  if (v.is_number_float()) return !std::isfinite(v.get<double>());
  if (v.is_structured()) {
    for (const auto& item : v) {
      if (HasNonFinite(item)) return true;
    }
  }
  return false;
}

}  // namespace

std::string SafeDump(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<std::string> CanonicalArguments(const nlohmann::json& args) {
  if (!args.is_object()) {
    return InvalidArgument("arguments must be a JSON object, got " +
                           std::string(args.type_name()));
  }
  if (HasNonFinite(args)) {
    return InvalidArgument("arguments hold a NaN or infinite number");
  }
#ifdef TOOLCACHE_HAVE_CANONICAL_JSON
  return CanonicalizeJsonValue(args);
#else
  // Interim until canonical_json.h lands: nlohmann sorts members by bytes.
  return SafeDump(args);
#endif
}

std::string ResultDigest(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), md.data(), &len, EVP_sha256(),
             nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "sha256:";
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[md[i] >> 4]);
    out.push_back(kHex[md[i] & 0xf]);
  }
  return out;
}

std::string ResultContentBytes(const nlohmann::json& content) {
  if (content.is_null()) return "";
  if (content.is_string()) return content.get<std::string>();
  if (content.is_array()) {
    std::string out;
    for (const auto& part : content) {
      if (part.is_string()) {
        out += part.get<std::string>();
      } else if (part.is_object() && part.contains("text") &&
                 part["text"].is_string()) {
        out += part["text"].get<std::string>();
      } else {
        out += SafeDump(part);
      }
    }
    return out;
  }
  return SafeDump(content);
}

}  // namespace toolcache::trace_internal
