// One size-with-units grammar for every byte count a user writes: the
// configuration's capacityBytes / proxy.maxBodyBytes and a store's
// max_bytes parameter.
//
// Grammar (case-insensitive; blanks allowed around the number and unit):
//   size   := number [unit]
//   number := digits ["." digits] | "." digits
//   unit   := B | KB | MB | GB | TB        (powers of 1000)
//           | KiB | MiB | GiB | TiB        (powers of 1024)
// A fractional result is rounded to the nearest byte ("1.5KiB" = 1536).
// Refused, with the reason: an empty text, a sign, an exponent, an unknown
// unit, blanks inside the number or unit, more than 1.8e19 bytes.
//
// Thread-safety: a pure function.
//
// Example:
//   Result<uint64_t> b = config::ParseSize("64MiB");  // 67108864
//   if (!b.ok()) return b.status();  // "... must be a size such as ..."
#pragma once

#include <cstdint>
#include <string_view>

#include "toolcache/status.h"

namespace toolcache::config {

// The size `text` names in bytes, or InvalidArgument naming `text` and the
// accepted forms.
[[nodiscard]] Result<uint64_t> ParseSize(std::string_view text);

}  // namespace toolcache::config
