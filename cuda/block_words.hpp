// Internal: the per-element schedules of the Bloom kernels (cuda/bloom_kernels.cu)
// that differ from the layout functions of include/probkit/layout/bloom.hpp.
// Host-callable, so that the CPU tests (tests/cuda_test.cc, CudaLayout.*)
// check them against the layout on machines without a GPU.
#pragma once
#include <cstdint>

#include "probkit/layout/bloom.hpp"

namespace probkit::detail::cuda {

// Word w (0..15) of a 64-byte line held as four 16-byte vectors (uint4 on the
// GPU: x, y, z, w members), by selects: on the GPU a run-time index into a
// register array would put the array in local memory.
template <class V4>
PROBKIT_HD_INLINE std::uint32_t line_word(const V4& v0, const V4& v1, const V4& v2, const V4& v3, std::uint32_t w) {
  // Copies, not references: selecting among the addresses of registers would
  // put them in local memory.
  const V4 lo = (w & 4) ? v1 : v0;
  const V4 hi = (w & 4) ? v3 : v2;
  const V4 q = (w & 8) ? hi : lo;
  const std::uint32_t even = (w & 1) ? q.y : q.x;
  const std::uint32_t odd = (w & 1) ? q.w : q.z;
  return (w & 2) ? odd : even;
}

// cacheline512 contains on a line held as four 16-byte vectors: every probe's
// bit is set (layout::cacheline_test, with the words picked by line_word).
template <class V4>
PROBKIT_HD_INLINE bool line_contains(std::uint64_t h, std::uint32_t k, const V4& v0, const V4& v1, const V4& v2,
                                     const V4& v3) {
  const auto x = static_cast<std::uint32_t>(h);
  for (std::uint32_t i = 0; i < k; ++i) {
    const std::uint32_t a = layout::cacheline_probe(x, i);
    if (((line_word(v0, v1, v2, v3, a >> 5) >> (a & 31)) & 1u) == 0) return false;
  }
  return true;
}

// cacheline512 mask as eight 64-bit words: probe a (0..511) is bit a % 64 of
// word a / 64, i.e. 32-bit word a / 32 of the little-endian block. Each
// probe is ORed into the word it selects by compare and select, so the
// words stay in registers.
PROBKIT_HD_INLINE void cacheline_mask64(std::uint64_t h, std::uint32_t k,
                                        std::uint64_t (&mask)[layout::kCachelineWords / 2]) {
  const auto x = static_cast<std::uint32_t>(h);
  for (std::uint32_t i = 0; i < k; ++i) {
    const std::uint32_t a = layout::cacheline_probe(x, i);
    const std::uint64_t bit = std::uint64_t{1} << (a & 63);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (std::uint32_t w = 0; w < layout::kCachelineWords / 2; ++w) mask[w] |= (a >> 6) == w ? bit : 0;
  }
}

// parquet_sbbf: 32-bit words 2p and 2p + 1 of the key's mask as one 64-bit
// word (p = 0..3), low half first.
PROBKIT_HD_INLINE std::uint64_t sbbf_pair_bits(std::uint64_t h, std::uint32_t p) {
  return std::uint64_t{layout::sbbf_word_bit(h, 2 * p)} | std::uint64_t{layout::sbbf_word_bit(h, 2 * p + 1)} << 32;
}

}  // namespace probkit::detail::cuda
