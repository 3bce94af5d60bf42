// Sealed values: a byte string put into a Store with a check, for callers
// that store their values verbatim (the LLM tool loop's conversation state,
// offloaded results and their previews). A shared store is written by other
// processes, other versions and other machines, and a disk or a bad writer
// can damage a value; a value that does not unseal is never used.
//
// Layout: "TCS1", the CRC-32 (zlib's polynomial) of the payload as 4 bytes
// little-endian, then the payload. The tool cache's own records keep their
// richer layout (src/cache/shared_results.cc).
//
// Thread-safety: pure functions.
//
// Example:
//   Status st = store->Put(k, SealValue(text), ttl);
//   ...
//   std::optional<std::string_view> text = UnsealValue(*(*got)[0]->bytes);
//   if (!text) { /* damaged or foreign: treat as absent, say so */ }
#ifndef TOOLCACHE_SRC_STORE_SEALED_H_
#define TOOLCACHE_SRC_STORE_SEALED_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace toolcache {

// The CRC-32 of `bytes` (zlib's polynomial), any length. Also the check of
// the tool cache's records (src/cache/shared_results.cc).
uint32_t Crc32(std::string_view bytes);

// `payload` sealed: 8 bytes longer.
std::string SealValue(std::string_view payload);

// The payload of a sealed value (a view into `value`), or nullopt when
// `value` is not one: too short, another magic, or a CRC that does not
// match (a changed, cut or lengthened payload).
std::optional<std::string_view> UnsealValue(std::string_view value);

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_STORE_SEALED_H_
