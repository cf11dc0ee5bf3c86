// Bulk kernels read their keys (or pre-hashed keys) front to back, usually
// from memory far larger than the caches. The hardware prefetcher alone keeps
// too few of those lines in flight on the machines measured (a vectorised
// XXH64 streaming u64 keys ran at half its in-cache speed): the kernels ask for
// the line this far ahead themselves, once per 64 bytes consumed.
#pragma once
#include <hwy/cache_control.h>

#include <cstddef>
#include <cstdint>

namespace probkit::cpu {

// 32 lines ahead: 512 to 4096 bytes measured within 15% of each other; no
// prefetch was 1.2-1.5x slower with keys in DRAM.
inline constexpr std::size_t kStreamAheadBytes = 2048;

// Prefetches p + extra_bytes + kStreamAheadBytes. The address is formed as an
// integer: it may lie past the end of the array (a prefetch of it is
// harmless), where pointer arithmetic would not be; so p itself must be
// within the array or one past it, and anything further goes in extra_bytes.
// Always inlined: where GCC 12 did not inline it early it dropped the call,
// prefetch and all (objdump of cpu/simd.cc.o: none in the generic contains
// loop, the AVX2 contains kernel or part of AVX-512 string hashing).
HWY_INLINE void prefetch_stream(const void* p, std::size_t extra_bytes = 0) {
  hwy::Prefetch(reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(p) + extra_bytes +
                                              kStreamAheadBytes));
}

}  // namespace probkit::cpu
