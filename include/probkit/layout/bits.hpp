// Bit helpers usable in constexpr host code and in CUDA device code.
#pragma once
#include <cstdint>
#include <type_traits>

#include "probkit/layout/config.hpp"

namespace probkit::layout {

PROBKIT_HD_INLINE std::uint64_t rotl64(std::uint64_t x, int r) {
  return (x << r) | (x >> (64 - r));
}

// Little-endian loads assembled from bytes: constexpr, alignment-free, and
// folded into a single load by GCC/Clang/NVCC on little-endian machines.
PROBKIT_HD_INLINE std::uint64_t load_le64(const std::uint8_t* p) {
  return std::uint64_t{p[0]} | std::uint64_t{p[1]} << 8 | std::uint64_t{p[2]} << 16 |
         std::uint64_t{p[3]} << 24 | std::uint64_t{p[4]} << 32 | std::uint64_t{p[5]} << 40 |
         std::uint64_t{p[6]} << 48 | std::uint64_t{p[7]} << 56;
}

PROBKIT_HD_INLINE std::uint32_t load_le32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
         std::uint32_t{p[3]} << 24;
}

// Count trailing zeros of a non-zero 64-bit value.
PROBKIT_HD_INLINE int ctz64(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __ffsll(static_cast<long long>(x)) - 1;
#else
  if (!std::is_constant_evaluated()) return __builtin_ctzll(x);
  int n = 0;
  while ((x & 1) == 0) {
    x >>= 1;
    ++n;
  }
  return n;
#endif
}

}  // namespace probkit::layout
