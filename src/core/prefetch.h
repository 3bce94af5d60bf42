// PrefetchRead: a cache hint to read an address soon, for loops that know
// their next random accesses (the trace reader's key table, the replay's
// cache index).
//
// Why not plain __builtin_prefetch: GCC 12 at -O2 deletes some of those
// calls (e.g. when the address comes from a load, or sits under a branch),
// silently. On x86 this is inline assembly, which the compiler keeps;
// elsewhere the builtin.
//
// Thread-safety: a pure hint; never faults, never changes memory.
//
// Example:
//   for (size_t i = 0; i < n; ++i) {
//     if (i + 8 < n) PrefetchRead(&table[hash[i + 8] & mask]);
//     Use(table[hash[i] & mask]);
//   }
#ifndef TOOLCACHE_SRC_CORE_PREFETCH_H_
#define TOOLCACHE_SRC_CORE_PREFETCH_H_

namespace toolcache {

inline void PrefetchRead(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

}  // namespace toolcache

#endif  // TOOLCACHE_SRC_CORE_PREFETCH_H_
