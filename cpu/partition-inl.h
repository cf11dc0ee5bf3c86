// Per-target split of a chunk's hashes between two block owners (kernels.hpp:
// partition_hashes). AVX-512 only: each vector's lanes go to both sides by
// append_lanes (hash-inl.h), the register form of vpcompressq. Zen 5 guest,
// 1024 hashes in L1, medians of 2000 calls: 0.69 TSC cycles per hash against
// the scalar reference's 1.57. Highway 1.0.3's own Compress (see
// append_lanes) took 13 cycles per hash on AVX3_DL and 17-21 on AVX2 (the
// hashing of the same chunk subtracted), against 1.3-2.1 for the reference:
// other targets keep the reference.

#if defined(PROBKIT_CPU_PARTITION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PROBKIT_CPU_PARTITION_INL_H_
#undef PROBKIT_CPU_PARTITION_INL_H_
#else
#define PROBKIT_CPU_PARTITION_INL_H_
#endif

#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>

#include "hash-inl.h"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL

HWY_INLINE std::size_t partition_hashes(const std::uint64_t* HWY_RESTRICT hashes, std::size_t n,
                                        std::uint64_t split, std::uint64_t* HWY_RESTRICT below,
                                        std::uint64_t* HWY_RESTRICT above) {
  const __m512i vsplit = _mm512_set1_epi64(static_cast<long long>(split));
  std::size_t nbelow = 0, nabove = 0;
  std::size_t i = 0;
  // Each side's append starts at or before lane i, so its store ends by i + 8
  // <= n: within the room the contract gives.
  for (; i + 8 <= n; i += 8) {
    const __m512i h = _mm512_loadu_si512(hashes + i);
    const __mmask8 is_below = _mm512_cmplt_epu64_mask(_mm512_srli_epi64(h, 32), vsplit);
    nbelow = append_lanes(is_below, h, below, nbelow);
    nabove = append_lanes(static_cast<__mmask8>(~is_below), h, above, nabove);
  }
  // The last n % 8, branch-free as in the reference (scalar.cc).
  for (; i < n; ++i) {
    const std::uint64_t h = hashes[i];
    const bool up = (h >> 32) >= split;
    below[nbelow] = h;
    above[nabove] = h;
    nbelow += up ? 0 : 1;
    nabove += up ? 1 : 0;
  }
  return nabove;
}
inline constexpr auto kPartitionHashes = &partition_hashes;

#elif HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
inline constexpr std::size_t (*kPartitionHashes)(const std::uint64_t*, std::size_t, std::uint64_t,
                                                 std::uint64_t*, std::uint64_t*) = nullptr;
#endif

}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
