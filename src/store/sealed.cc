#include "src/store/sealed.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>

namespace toolcache {
namespace {

constexpr std::string_view kMagic = "TCS1";
constexpr size_t kHeader = 8;

}  // namespace

uint32_t Crc32(std::string_view s) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths: feed gigabyte pieces.
  while (!s.empty()) {
    const size_t n = std::min<size_t>(s.size(), 1u << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(s.data()),
                static_cast<uInt>(n));
    s.remove_prefix(n);
  }
  return static_cast<uint32_t>(crc);
}

std::string SealValue(std::string_view payload) {
  std::string out;
  out.reserve(kHeader + payload.size());
  out.append(kMagic);
  const uint32_t crc = Crc32(payload);
  for (int i = 0; i < 4; ++i) out += static_cast<char>((crc >> (8 * i)) & 0xff);
  out.append(payload);
  return out;
}

std::optional<std::string_view> UnsealValue(std::string_view value) {
  if (value.size() < kHeader || value.substr(0, 4) != kMagic) {
    return std::nullopt;
  }
  uint32_t crc = 0;
  for (int i = 3; i >= 0; --i) {
    crc = (crc << 8) | static_cast<uint8_t>(value[4 + i]);
  }
  std::string_view payload = value.substr(kHeader);
  if (Crc32(payload) != crc) return std::nullopt;
  return payload;
}

}  // namespace toolcache
