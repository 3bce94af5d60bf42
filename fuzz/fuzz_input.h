// FuzzInput: a cursor over a fuzz input that hands out bytes, small
// choices and '\xff'-separated parts (0xFF never occurs in UTF-8, so JSON
// seeds stay intact as single parts). Plain C++ so the targets also build
// without clang's FuzzedDataProvider.
//
// Thread-safety: none. Ownership: views point into the fuzz input.
//
// Example:
//   FuzzInput in(data, size);
//   const uint8_t mode = in.Byte();
//   std::vector<std::string_view> parts = in.Parts();
#ifndef TOOLCACHE_FUZZ_FUZZ_INPUT_H_
#define TOOLCACHE_FUZZ_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace toolcache::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size)
      : rest_(reinterpret_cast<const char*>(data), size) {}

  bool empty() const { return rest_.empty(); }
  std::string_view rest() const { return rest_; }

  // The next byte (0 when the input is used up).
  uint8_t Byte() {
    if (rest_.empty()) return 0;
    const uint8_t b = static_cast<uint8_t>(rest_[0]);
    rest_.remove_prefix(1);
    return b;
  }

  // The bytes up to the next '\xff' (or the end), consuming the separator.
  std::string_view Part() {
    const size_t cut = rest_.find('\xff');
    std::string_view part = rest_.substr(0, cut);
    rest_.remove_prefix(cut == std::string_view::npos ? rest_.size() : cut + 1);
    return part;
  }

  // Every remaining '\xff'-separated part.
  std::vector<std::string_view> Parts() {
    std::vector<std::string_view> parts;
    while (!rest_.empty()) parts.push_back(Part());
    return parts;
  }

 private:
  std::string_view rest_;
};

// Splits `bytes` into pieces whose sizes come from `sizes` (each byte a
// piece length, 0 meaning 1; the rest goes in one last piece), for feeding
// incremental parsers in arbitrary chunks.
inline std::vector<std::string_view> Chunks(std::string_view bytes,
                                            std::string_view sizes) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (!bytes.empty()) {
    size_t n = bytes.size();
    if (i < sizes.size()) {
      n = static_cast<uint8_t>(sizes[i++]);
      if (n == 0) n = 1;
    }
    if (n > bytes.size()) n = bytes.size();
    out.push_back(bytes.substr(0, n));
    bytes.remove_prefix(n);
  }
  return out;
}

}  // namespace toolcache::fuzz

#endif  // TOOLCACHE_FUZZ_FUZZ_INPUT_H_
