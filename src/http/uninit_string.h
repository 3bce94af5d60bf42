// ResizeForOverwrite: grows a std::string to `n` bytes without writing the
// new bytes, for a caller that overwrites every one of them before reading
// any (the server's body read: the kernel writes them).
//
// Thread-safety: a free function over the caller's string; none of its own.
//
// Example:
//   std::string body;
//   body.reserve(length + kBodyPadding);
//   ResizeForOverwrite(&body, length);       // size() == length, bytes unset
//   read_exactly(socket, body.data(), length);
//
// Choice: C++20 has no resize_and_overwrite (C++23; libstdc++ 12 declares
// it only in C++23 mode) and std::string::resize writes a zero into every
// new byte (~205,000 instructions per 200 KB body under callgrind, the
// largest per-byte cost of the LLM proxy after the parse). With libstdc++'s
// new ABI the string's private _M_set_length (set the length, write the
// terminator; the caller has reserved) is named through an explicit
// instantiation, which the language lets name private members
// ([temp.spec.general]/6, the technique of folly's UninitializedMemoryHacks);
// any other library, or the standard member when it is there, takes the
// portable path.
#ifndef TOOLCACHE_SRC_HTTP_UNINIT_STRING_H_
#define TOOLCACHE_SRC_HTTP_UNINIT_STRING_H_

#include <cstddef>
#include <string>

namespace toolcache::http {

// Sets s->size() to n. Bytes [old size, n) are unspecified until the caller
// writes them; the caller must write them all before reading any. Bytes
// below the old size are kept.
void ResizeForOverwrite(std::string* s, size_t n);

}  // namespace toolcache::http

#endif  // TOOLCACHE_SRC_HTTP_UNINIT_STRING_H_
