// Invariants:
// - ResizeForOverwrite leaves size() == n, the bytes below the old size as
//   they were, a terminator at [n], and capacity() as reserved when n fits.
// Choice: the explicit instantiation that names _M_set_length lives in this
// one file (an explicit instantiation definition may appear once in a
// program), and the function is out of line: one call per request body.
#include "src/http/uninit_string.h"

namespace toolcache::http {

#if !defined(__cpp_lib_string_resize_and_overwrite) && defined(__GLIBCXX__) && \
    _GLIBCXX_USE_CXX11_ABI
namespace {
using SetLength = void (std::string::*)(std::string::size_type);
SetLength StringSetLength();
template <SetLength kMember>
struct SetLengthThief {
  friend SetLength StringSetLength() { return kMember; }
};
template struct SetLengthThief<&std::string::_M_set_length>;
}  // namespace
#endif

void ResizeForOverwrite(std::string* s, size_t n) {
#if defined(__cpp_lib_string_resize_and_overwrite)
  s->resize_and_overwrite(n, [](char*, size_t m) { return m; });
#elif defined(__GLIBCXX__) && _GLIBCXX_USE_CXX11_ABI
  if (n <= s->size()) {
    s->resize(n);
    return;
  }
  if (s->capacity() < n) s->reserve(n);
  (s->*StringSetLength())(n);
#else
  s->resize(n);
#endif
}

}  // namespace toolcache::http
