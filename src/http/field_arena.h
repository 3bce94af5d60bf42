// Internal to src/http: where one message's header fields live. Beast's
// fields allocate one element per field line, four or five heap blocks per
// head; with a FieldArena they come from a buffer reused from message to
// message, and what does not fit goes to the heap as before. server.cc
// parses requests with it, client.cc responses (hopR).
//
// Thread-compatible (one connection or call owns an arena). Ownership: the
// arena owns its buffer; an ArenaAllocator borrows the arena, which must
// outlive every container using it (declare it before them).
//
// Example:
//   FieldArena arena_;  // before the parser
//   std::optional<bhttp::response_parser<Body, ArenaAllocator<char>>> p_;
//   p_.emplace(std::piecewise_construct, std::make_tuple(),
//              std::make_tuple(ArenaAllocator<char>(&arena_)));
#ifndef TOOLCACHE_SRC_HTTP_FIELD_ARENA_H_
#define TOOLCACHE_SRC_HTTP_FIELD_ARENA_H_

#include <cstddef>
#include <new>

namespace toolcache::http {

// A bump allocator over a fixed buffer; Deallocate of its own memory is a
// no-op until Reset (call it when the parser is rebuilt, after the previous
// one is gone).
// Choice: 2 KiB, a typical head's fields several times over.
class FieldArena {
 public:
  void* Allocate(size_t bytes, size_t align) {
    const size_t start = (used_ + align - 1) & ~(align - 1);
    if (align <= alignof(std::max_align_t) && start <= sizeof(buf_) &&
        bytes <= sizeof(buf_) - start) {
      used_ = start + bytes;
      return buf_ + start;
    }
    return ::operator new(bytes);
  }
  void Deallocate(void* p) {
    const auto* c = static_cast<const unsigned char*>(p);
    if (c >= buf_ && c < buf_ + sizeof(buf_)) return;  // freed by Reset
    ::operator delete(p);
  }
  // REQUIRES: nothing allocated from the buffer is still in use.
  void Reset() { used_ = 0; }

 private:
  alignas(std::max_align_t) unsigned char buf_[2048];
  size_t used_ = 0;
};

// A std allocator over a FieldArena (stateful; equal when the arena is).
template <class T>
struct ArenaAllocator {
  using value_type = T;
  explicit ArenaAllocator(FieldArena* a) noexcept : arena(a) {}
  template <class U>
  ArenaAllocator(const ArenaAllocator<U>& o) noexcept : arena(o.arena) {}
  T* allocate(size_t n) {
    return static_cast<T*>(arena->Allocate(n * sizeof(T), alignof(T)));
  }
  void deallocate(T* p, size_t) noexcept { arena->Deallocate(p); }
  template <class U>
  bool operator==(const ArenaAllocator<U>& o) const noexcept {
    return arena == o.arena;
  }
  template <class U>
  bool operator!=(const ArenaAllocator<U>& o) const noexcept {
    return arena != o.arena;
  }
  FieldArena* arena;
};

}  // namespace toolcache::http

#endif  // TOOLCACHE_SRC_HTTP_FIELD_ARENA_H_
